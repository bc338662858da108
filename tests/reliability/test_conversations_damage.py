"""A damaged ``conversations.sqlite3``: the real `kdesk` names it, sets it aside with its bytes as
found, keeps every conversation that can still be read in a new store, and new conversations work.

The store is seeded through ConversationStore (conversations with answers and citations, and empty
ones), then damaged on disk: truncated, emptied, overwritten at an offset or on one page of a chosen
table, deleted. What must survive is read from the damaged page itself (its cells' rowids, found by
walking the table's b-tree by hand), not from the code under test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from desktop_app.core import sqlite_repair
from desktop_app.core.ask import conversation_store
from desktop_app.core.ask.conversation import Conversation
from desktop_app.core.ask.conversation_store import (
    FILE_NAME,
    ConversationStore,
    StoreDamaged,
    StoredCitation,
    StoredMessage,
)
from desktop_app.core.formats import FormatTooNew

PAGE = 4096
WITH_MESSAGES, EMPTY, TURNS = 40, 40, 3
REPAIRED = re.compile(
    r"The conversation store (\S+) was damaged: it was set aside as (\S+); (\d+) conversations? (?:was|were) kept in a new store\."
)


def _seed(path: Path) -> dict[str, list[str]]:
    """The store with conversations (3 turns each, citations) and empty ones; their ids."""
    store = ConversationStore(path, path.parent / "knowledge")
    ids: dict[str, list[str]] = {"with": [], "empty": []}
    for i in range(WITH_MESSAGES + EMPTY):
        if i % 2:  # interleaved, so every page of the table holds both kinds
            ids["empty"].append(store.create(f"empty chat {i}").id)
            continue
        conv = Conversation()
        for turn in range(TURNS):
            cites = [
                StoredCitation(n, f"notes/birds-{i}.md", n, f"chunk-{i}-{n}", "passage " * 20) for n in (1, 2)
            ]
            message = StoredMessage(
                "ask", f"chat {i} question {turn} about kea parrots", "An answer. " * 25, citations=cites
            )
            store.append(conv, message)
        ids["with"].append(conv.id)
    assert len(ids["with"]) == WITH_MESSAGES and len(ids["empty"]) == EMPTY
    return ids


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    path = tmp_path_factory.mktemp("seed") / FILE_NAME
    ids = _seed(path)
    assert not Path(f"{path}-wal").exists()  # checkpointed: the file alone holds everything
    return path, ids


def _leaves(data: bytes, page: int, last: int | None = None) -> list[int]:
    """The leaf pages of the table b-tree rooted at ``page``, read from the file's bytes; with
    ``last``, those reached through pages up to ``last`` only (a file cut after it)."""
    if last is not None and page > last:
        return []
    base = (page - 1) * PAGE
    head = base + (100 if page == 1 else 0)
    if data[head] == 0x0D:
        return [page]
    assert data[head] == 0x05, f"page {page} is no table page"
    cells = int.from_bytes(data[head + 3 : head + 5], "big")
    children = []
    for i in range(cells):
        ptr = int.from_bytes(data[head + 12 + 2 * i : head + 14 + 2 * i], "big")
        children.append(int.from_bytes(data[base + ptr : base + ptr + 4], "big"))
    children.append(int.from_bytes(data[head + 8 : head + 12], "big"))  # the right-most child
    return [leaf for child in children for leaf in _leaves(data, child, last)]


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = 0
    for i in range(9):
        byte = data[at + i]
        if i == 8:
            return (value << 8) | byte, at + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    raise AssertionError("unreachable")


def _rowids(data: bytes, page: int) -> set[int]:
    base = (page - 1) * PAGE
    cells = int.from_bytes(data[base + 3 : base + 5], "big")
    out = set()
    for i in range(cells):
        ptr = int.from_bytes(data[base + 8 + 2 * i : base + 10 + 2 * i], "big")
        _, at = _varint(data, base + ptr)
        out.add(_varint(data, at)[0])
    return out


def _root(path: Path, table: str) -> int:
    with closing(sqlite3.connect(path)) as db:
        return db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]


def _reachable(path: Path, table: str, last: int) -> set[int]:
    """The rowids of ``table`` in ``path`` that a cut after page ``last`` leaves readable."""
    data = path.read_bytes()
    return {r for leaf in _leaves(data, _root(path, table), last) for r in _rowids(data, leaf)}


def _wreck_page_of(path: Path, table: str) -> set[int]:
    """Overwrite the middle leaf page of ``table`` with random bytes; the rowids it held."""
    data = path.read_bytes()
    leaves = _leaves(data, _root(path, table))
    assert len(leaves) >= 3, leaves
    page = leaves[len(leaves) // 2]
    with open(path, "r+b") as f:
        f.seek((page - 1) * PAGE)
        f.write(os.urandom(PAGE))
    return _rowids(data, page)


def _rows(path: Path, sql: str) -> list[tuple]:
    with closing(sqlite3.connect(path)) as db:
        return db.execute(sql).fetchall()


def _repaired(stderr: str) -> tuple[Path, Path, int]:
    found = REPAIRED.findall(stderr)
    assert len(found) == 1, stderr  # said once
    path, aside, kept = found[0]
    return Path(path), Path(aside), int(kept)


def _damaged_data_dir(kdesk_factory, seeded, how: str):
    """A data folder whose store is damaged by ``how``; (kdesk, store path, damaged bytes, lost rowids)."""
    kd = kdesk_factory()
    store = kd.data_dir / FILE_NAME
    shutil.copyfile(seeded[0], store)
    lost: set[int] = set()
    if how == "truncate-1000":
        os.truncate(store, 1000)
    elif how == "truncate-half":
        os.truncate(store, store.stat().st_size // PAGE // 2 * PAGE)
    elif how == "random-at-100":
        with open(store, "r+b") as f:
            f.seek(100)
            f.write(os.urandom(6 * 1024))
    elif how in ("conversations-page", "messages-page"):
        lost = _wreck_page_of(store, how.split("-")[0])
    elif how == "zero-length":
        os.truncate(store, 0)
    elif how == "deleted":
        store.unlink()
    return kd, store, store.read_bytes() if store.exists() else b"", lost


@pytest.mark.parametrize("how", ["random-at-100", "truncate-half", "conversations-page", "messages-page"])
def test_damaged_store_is_set_aside_and_what_can_be_read_is_kept(kdesk_factory, seeded, how: str) -> None:
    kd, store, damaged, lost = _damaged_data_dir(kdesk_factory, seeded, how)
    pristine, ids = seeded
    res = kd.run("chats", "list", "--json", timeout=120)
    assert res.rc == 0, res.stderr
    assert "Traceback" not in res.stderr and "DatabaseError" not in res.stderr
    named, aside, kept = _repaired(res.stderr)
    assert named == store
    assert aside.parent == store.parent and aside.name.startswith(f"{FILE_NAME}.damaged-")
    assert aside.read_bytes() == damaged  # set aside as it was found, never deleted
    chats = res.json()["chats"]
    assert len(chats) == kept

    every = ids["with"] + ids["empty"]
    if how == "random-at-100":  # the schema page is gone: no table can be found
        assert kept == 0
        return
    by_rowid = dict(_rows(pristine, "SELECT rowid, id FROM conversations"))
    messages = {c["id"]: c["messages"] for c in chats}
    if how == "truncate-half":  # what the pages before the cut still reach
        cut = len(damaged) // PAGE
        rows, msgs = _reachable(pristine, "conversations", cut), _reachable(pristine, "messages", cut)
        owner = dict(_rows(pristine, "SELECT id, conversation_id FROM messages"))
        expected = {by_rowid[r] for r in rows} | {owner[m] for m in msgs}
        assert set(messages) == expected and kept == len(expected)
        assert 0 < sum(messages.values()) == len(msgs) < WITH_MESSAGES * TURNS
    elif how == "conversations-page":
        gone = {by_rowid[r] for r in lost}
        # A lost row of a conversation with messages is made again from them; an empty one is gone.
        assert set(messages) == set(every) - (gone & set(ids["empty"]))
        assert kept == len(every) - len(gone & set(ids["empty"]))
        assert all(messages[c] == TURNS for c in ids["with"])
        # Titled by its first question, as it was when that question made it.
        assert {c["id"]: c["title"] for c in chats} == {
            conv_id: title
            for conv_id, title in _rows(pristine, "SELECT id, title FROM conversations")
            if conv_id in messages
        }
        assert gone & set(ids["with"]) and gone & set(ids["empty"])  # the page held both kinds
    else:
        assert set(messages) == set(every)
        assert sum(messages.values()) == WITH_MESSAGES * TURNS - len(lost)
        assert _rows(
            store, "SELECT COUNT(*) FROM citations WHERE message_id NOT IN (SELECT id FROM messages)"
        ) == [(0,)]
        left = {r[0] for r in _rows(store, "SELECT id FROM messages")}
        assert left == {r[0] for r in _rows(pristine, "SELECT id FROM messages")} - lost
        # Every conversation opens, and a new one is saved (ids continue past the kept ones).
        opened = ConversationStore(store, kd.data_dir / "knowledge")
        assert all(opened.load(c) is not None for c in every)
        res = kd.run("ask", "--chat", "after the damage", "What do kea eat?", timeout=120)
        assert res.rc == 0, res.stderr
        assert "damaged" not in res.stderr  # the new store is sound: nothing more to say
        assert opened.find("after the damage") is not None


def test_truncated_store_then_a_new_conversation(kdesk_factory, seeded) -> None:
    """The issue's case: `truncate -s 1000`, then `kdesk ask --chat` (it used to exit 1 with
    "DatabaseError: database disk image is malformed", naming no file)."""
    kd, store, damaged, _ = _damaged_data_dir(kdesk_factory, seeded, "truncate-1000")
    res = kd.run("ask", "--chat", "trip", "Who was Abraham Lincoln?", timeout=120)
    assert res.rc == 0, res.stderr
    named, aside, kept = _repaired(res.stderr)
    assert (named, kept) == (store, 0)
    assert aside.read_bytes() == damaged and len(damaged) == 1000
    res = kd.run("chats", "list", "--json", timeout=120)
    assert res.rc == 0, res.stderr
    assert "damaged" not in res.stderr
    assert [c["title"] for c in res.json()["chats"]] == ["trip"]


@pytest.mark.parametrize("how", ["zero-length", "deleted"])
def test_empty_or_missing_store_is_a_new_store(kdesk_factory, seeded, how: str) -> None:
    kd, store, _, _ = _damaged_data_dir(kdesk_factory, seeded, how)
    res = kd.run("ask", "--chat", "trip", "Who was Abraham Lincoln?", "--json", timeout=120)
    assert res.rc == 0, res.stderr
    assert "damaged" not in res.stderr
    assert json.loads(res.stdout)["chat"]["new"] is True
    assert not list(store.parent.glob(f"{FILE_NAME}.damaged-*"))  # nothing to set aside
    titles = [r[0] for r in _rows(store, "SELECT title FROM conversations")]
    assert titles == ["trip"]


# ---------------------------------------------------------------------------- in the running app
def test_damage_found_while_running_is_repaired_and_the_call_goes_on(tmp_path: Path, seeded) -> None:
    pristine, ids = seeded
    path = tmp_path / FILE_NAME
    shutil.copyfile(pristine, path)
    told: list[str] = []
    store = ConversationStore(path, tmp_path / "knowledge", on_repaired=lambda m: told.append(str(m)))
    assert len(store.list_chats()) == WITH_MESSAGES + EMPTY  # opened and checked: sound
    lost = _wreck_page_of(path, "messages")  # damaged under the running app
    before = path.read_bytes()
    loaded = [store.load(c) for c in ids["with"]]  # a read meets the damage: repaired, read again
    assert all(chat is not None for chat in loaded)
    assert sum(len(chat.messages) for chat in loaded if chat) == WITH_MESSAGES * TURNS - len(lost)
    assert len(told) == 1
    named, aside, kept = _repaired(told[0])
    assert named == path and aside.read_bytes() == before and kept == WITH_MESSAGES + EMPTY
    conv = Conversation()
    assert store.append(conv, StoredMessage("ask", "a new question", "an answer")) > 0
    assert store.find(conv.id) is not None


def test_a_store_too_large_for_quick_check_is_repaired_when_a_read_meets_the_damage(
    tmp_path: Path, seeded, monkeypatch
) -> None:
    pristine, ids = seeded
    monkeypatch.setattr(conversation_store, "QUICK_CHECK_MAX_BYTES", 0)
    path = tmp_path / FILE_NAME
    shutil.copyfile(pristine, path)
    lost = _wreck_page_of(path, "messages")
    told: list[str] = []
    store = ConversationStore(path, tmp_path / "knowledge", on_repaired=lambda m: told.append(str(m)))
    assert len(store.list_chats()) == WITH_MESSAGES + EMPTY  # counted from an index: no damage met
    loaded = [store.load(c) for c in ids["with"]]
    assert sum(len(chat.messages) for chat in loaded if chat) == WITH_MESSAGES * TURNS - len(lost)
    assert len(told) == 1 and _repaired(told[0])[0] == path


def test_a_store_that_cannot_be_repaired_is_a_clear_error(tmp_path: Path, seeded, monkeypatch) -> None:
    """Set aside fails (a read-only folder, a file held open on Windows): every call says which
    file is damaged, and nothing is deleted."""
    path = tmp_path / FILE_NAME
    shutil.copyfile(seeded[0], path)
    os.truncate(path, 1000)

    def refuse(p: Path) -> Path:
        raise PermissionError(13, "Permission denied", str(p))

    monkeypatch.setattr(sqlite_repair, "set_aside", refuse)
    store = ConversationStore(path, tmp_path / "knowledge")
    with pytest.raises(StoreDamaged) as caught:
        store.list_chats()
    assert str(path) in str(caught.value) and "could not be repaired" in str(caught.value)
    assert path.stat().st_size == 1000
    assert sorted(p.name for p in tmp_path.iterdir()) == [FILE_NAME]  # nothing made beside it either


def test_a_newer_versions_store_is_not_damage(tmp_path: Path, seeded) -> None:
    """A damaged file whose header records a newer format is refused (FormatTooNew), never rewritten
    in this version's format; a sound newer one is refused as before."""
    path = tmp_path / FILE_NAME
    shutil.copyfile(seeded[0], path)
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA user_version = 99")
    sound = path.read_bytes()
    with pytest.raises(FormatTooNew):
        ConversationStore(path, tmp_path).list_chats()
    assert path.read_bytes() == sound
    _wreck_page_of(path, "messages")
    damaged = path.read_bytes()
    with pytest.raises(FormatTooNew):
        ConversationStore(path, tmp_path).list_chats()
    assert path.read_bytes() == damaged
    assert not list(tmp_path.glob(f"{FILE_NAME}.damaged-*"))
