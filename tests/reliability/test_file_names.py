"""File names that are not UTF-8 (Latin-1 archives, old Samba shares) through the real `kdesk`:
indexed, listed, searched, cited and removed, shown with U+FFFD, flagged in --json; a sync never
stops on them and `reindex` never empties the index for them (names.py has the escaping)."""

from __future__ import annotations

import os
from pathlib import Path

from desktop_app.core.config import Config
from desktop_app.core.library.knowledge import KnowledgeBase
from desktop_app.core.library.names import escape_name

LATIN1 = b"\xe9t\xe9_notes.txt"  # "été_notes.txt" in Latin-1
SHOWN = "\ufffdt\ufffd_notes.txt"
ESCAPED = "\u241bE9t\u241bE9_notes.txt"


def _write_raw(folder: Path, raw: bytes, text: str) -> None:
    with open(os.path.join(os.fsencode(folder), raw), "w", encoding="utf-8") as f:
        f.write(text)


def _docs(kd) -> dict[str, dict]:
    res = kd.run("list", "--json", timeout=120)
    assert res.rc == 0, res.stderr
    return {d["name"]: d for d in res.json()["documents"]}


def test_a_name_that_is_not_utf8_is_indexed_listed_searched_and_removed(kdesk_factory):
    kd = kdesk_factory()
    knowledge = kd.data_dir / "knowledge"
    knowledge.mkdir()
    _write_raw(knowledge, LATIN1, "The kakapo eats seeds and fruit at night.")
    (knowledge / "good.txt").write_text("Macaws fly over the forest canopy.", encoding="utf-8")

    res = kd.run("sync", "--json", timeout=120)
    assert res.rc == 0, res.stderr
    report = res.json()
    assert sorted(report["added"]) == sorted(["good.txt", SHOWN]) and report["not_utf8"] == [ESCAPED]
    docs = _docs(kd)
    assert docs[SHOWN]["status"] == "indexed" and docs[SHOWN]["chunks"] == 1
    assert docs[SHOWN]["name_utf8"] is False and docs[SHOWN]["name_escaped"] == ESCAPED
    assert docs["good.txt"]["name_utf8"] is True and "name_escaped" not in docs["good.txt"]
    plain = kd.run("list", timeout=120)
    assert SHOWN in plain.stdout

    hits = kd.run("search", "kakapo seeds night", "--json", timeout=120).json()["hits"]
    assert hits[0]["source"] == SHOWN and hits[0]["source_utf8"] is False
    assert hits[0]["source_escaped"] == ESCAPED and "kakapo" in hits[0]["text"]

    again = kd.run("sync", "--json", timeout=120).json()  # every later sync works too
    assert sorted(again["unchanged"]) == sorted(["good.txt", SHOWN]) and not again["failed"]

    gone = kd.run("remove", SHOWN, "--json", timeout=120)  # the name as `list` shows it
    assert gone.rc == 0, gone.stderr
    assert gone.json() == {"removed": [SHOWN], "not_found": []}
    assert os.listdir(os.fsencode(knowledge)) == [b"good.txt"]
    assert set(_docs(kd)) == {"good.txt"}


def test_reindex_keeps_a_name_that_is_not_utf8(kdesk_factory):
    kd = kdesk_factory()
    knowledge = kd.data_dir / "knowledge"
    knowledge.mkdir()
    _write_raw(knowledge, LATIN1, "The kea opens bins in the alpine car park.")
    assert kd.run("sync", timeout=120).rc == 0
    res = kd.run("reindex", "--json", timeout=120)
    assert res.rc == 0, res.stderr
    assert res.json()["added"] == [SHOWN]
    assert _docs(kd)[SHOWN]["status"] == "indexed"
    assert kd.run("search", "kea alpine", "--json", timeout=120).json()["hits"][0]["source"] == SHOWN


def test_a_real_name_that_looks_escaped_is_another_document(kdesk_factory):
    kd = kdesk_factory()
    knowledge = kd.data_dir / "knowledge"
    knowledge.mkdir()
    _write_raw(knowledge, b"\xe9.txt", "Latin-1 named file about lorikeets.")
    (knowledge / "\u241bE9.txt").write_text("UTF-8 named file about cockatoos.", encoding="utf-8")
    assert kd.run("sync", timeout=120).rc == 0
    docs = _docs(kd)
    assert set(docs) == {"\ufffd.txt", "\u241bE9.txt"}
    assert docs["\ufffd.txt"]["doc_id"] != docs["\u241bE9.txt"]["doc_id"]
    assert docs["\u241bE9.txt"]["name_utf8"] is True

    # Typed as its own name, the real file is meant: the other one stays.
    res = kd.run("remove", "\u241bE9.txt", "--json", timeout=120)
    assert res.rc == 0 and res.json()["removed"] == ["\u241bE9.txt"]
    assert os.listdir(os.fsencode(knowledge)) == [b"\xe9.txt"]
    hits = kd.run("search", "lorikeets", "--json", timeout=120).json()["hits"]
    assert [h["source"] for h in hits] == ["\ufffd.txt"]


def test_add_copies_and_indexes_a_folder_of_names_that_are_not_utf8(kdesk_factory, tmp_path):
    kd = kdesk_factory()
    src = tmp_path / "archive"
    src.mkdir()
    for i in range(10):  # the issue's `add` stopped after copying 7
        _write_raw(src, b"f\xe9%d.txt" % i, f"Parrot number {i} lives in the forest.")
    res = kd.run("add", str(src), "--json", timeout=120)
    assert res.rc == 0, res.stderr
    report = res.json()
    assert len(report["added"]) == 10 and not report["failed"]
    assert len(report["not_utf8"]) == 10
    assert all(d["status"] == "indexed" for d in _docs(kd).values())
    res = kd.run("remove", "archive/f*", "--json", timeout=120)  # a glob over the shown names
    assert res.rc == 0 and len(res.json()["removed"]) == 10


def test_a_citation_of_a_name_that_is_not_utf8_is_saved_and_reopened(tmp_path, minilm):
    from desktop_app.core.ask.chat_export import to_markdown
    from desktop_app.core.ask.conversation import Conversation
    from desktop_app.core.ask.conversation_store import ConversationStore
    from desktop_app.core.events import Answer, Citation, RouteDecided

    kb = KnowledgeBase(tmp_path / "data", config=Config(), embedder=minilm)
    _write_raw(kb.knowledge_dir, LATIN1, "The kakapo is a flightless parrot of New Zealand.")
    kb.sync()
    hit = kb.search("flightless parrot")[0]
    kb.close()
    assert hit.source == ESCAPED == escape_name(os.fsdecode(LATIN1))
    store = ConversationStore(tmp_path / "data" / "conversations.sqlite3", kb.knowledge_dir)
    conv = Conversation()

    def asked():
        yield RouteDecided(True, "kakapo?", False, "heuristic")
        conv.add_turn("kakapo?", "A parrot [1].")
        yield Answer("A parrot [1].", [Citation(1, hit.source, None, hit.chunk_id, hit.text)], by="extractive")

    list(store.record(conv, asked(), question="kakapo?"))
    chat = store.load(conv.id)
    cited = chat.messages[0].citations[0]
    assert cited.source == ESCAPED and not cited.gone  # the file is found by its stored name
    markdown = to_markdown(chat, kb.knowledge_dir)
    assert SHOWN in markdown and "%E9t%E9_notes.txt" in markdown  # shown, and linked to its bytes
