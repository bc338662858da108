"""Choosing another embedding model never leaves the user without search: the new model's index
fills a batch at a time while the one in use answers, resumes after a restart or a kill without
embedding a finished document again, takes in what is added meanwhile, and takes over only once
complete (library/switching.py)."""

from __future__ import annotations

import signal
import sqlite3
import time
from pathlib import Path

import pytest

from desktop_app.core.config import Config, load_config
from desktop_app.core.library import switching
from desktop_app.core.library.knowledge import KnowledgeBase

ANIMALS = ["kea", "kakapo", "galah", "tui", "weka", "takahe", "moa", "pukeko", "kiwi", "kaka"]


class Renamed:
    """The same vectors as another embedder under another model name (so another index), counting."""

    def __init__(self, inner, name: str = "other-model") -> None:
        self.inner, self.name = inner, name
        self.texts: list[str] = []

    dim = property(lambda self: self.inner.dim)
    max_chars = property(lambda self: self.inner.max_chars)

    def embed_documents(self, texts):
        self.texts += texts
        return self.inner.embed_documents(texts)

    def embed_queries(self, texts):
        return self.inner.embed_queries(texts)


def _library(tmp_path: Path, embedder) -> KnowledgeBase:
    kb = KnowledgeBase(tmp_path / "data", config=Config(), embedder=embedder)
    for animal in ANIMALS:
        (kb.knowledge_dir / f"{animal}.md").write_text(
            f"# {animal}\nThe {animal} is a bird of Aotearoa, noted here as {animal}.\n", encoding="utf-8"
        )
    kb.sync()
    return kb


def _config_model(kb: KnowledgeBase) -> str:
    path = kb.data_dir / "config.toml"
    return load_config(path).embedding.model if path.exists() else "default"


def _new_index(kb: KnowledgeBase, embedder: Renamed) -> KnowledgeBase:
    return KnowledgeBase(kb.data_dir, config=load_config(kb.data_dir / "config.toml"), embedder=embedder)


def test_search_answers_from_the_old_index_until_the_new_one_is_complete(tmp_path, minilm):
    kb = _library(tmp_path, minilm)
    new = Renamed(minilm)
    assert switching.start(kb, new.name) is not None
    seen = []

    def searched(state: switching.FillProgress) -> None:
        hits = kb.search("takahe bird")
        seen.append((state.done, hits[0].source, _config_model(kb), kb.embedder_name))
        assert switching.progress(kb).done == state.done  # the persisted progress agrees

    assert switching.fill(kb, embedder=new, on_batch=searched, batch_seconds=0.0)
    assert len(seen) == len(ANIMALS)  # one document a batch: searched after each
    assert {s[1:] for s in seen} == {("takahe.md", "default", minilm.name)}  # the old model answered
    assert _config_model(kb) == new.name and switching.read_switch(kb.index_dir) is None  # then took over
    after = _new_index(kb, new)
    assert after.embedder_name == new.name and after.search("takahe bird")[0].source == "takahe.md"
    assert sorted(new.texts) == sorted(set(new.texts)) and len(new.texts) == len(ANIMALS)


def test_pause_stops_the_fill_and_a_second_fill_resumes_without_embedding_twice(tmp_path, minilm):
    kb = _library(tmp_path, minilm)
    new = Renamed(minilm)
    switching.start(kb, new.name)
    first = []

    def pause_after_three(state: switching.FillProgress) -> None:
        first.append(state.done)
        if state.done == 3:
            switching.set_paused(kb, True)  # as `kdesk models pause` or the window's button

    assert not switching.fill(kb, embedder=new, on_batch=pause_after_three, batch_seconds=0.0)
    state = switching.progress(kb)
    assert first == [1, 2, 3] and (state.done, state.total, state.paused) == (3, len(ANIMALS), True)
    assert "paused at 3/10" in str(state.status())
    assert _config_model(kb) == "default"  # no takeover while incomplete
    assert kb.search("galah bird")[0].source == "galah.md"
    embedded = list(new.texts)
    assert switching.fill(kb, embedder=new, batch_seconds=0.0)  # resumes
    assert not set(embedded) & set(new.texts[len(embedded) :])  # nothing embedded twice
    assert len(new.texts) == len(ANIMALS)


def test_documents_asked_about_first_are_embedded_first(tmp_path, minilm):
    kb = _library(tmp_path, minilm)
    new = Renamed(minilm)
    switching.start(kb, new.name)
    assert switching.fill(kb, embedder=new, first=lambda: ["weka.md", "moa.md"], batch_seconds=0.0)
    assert "weka" in new.texts[0] and "moa" in new.texts[1]


def test_an_add_during_the_fill_is_searchable_at_once_and_lands_in_the_new_index(tmp_path, minilm):
    kb = _library(tmp_path, minilm)
    new = Renamed(minilm)
    switching.start(kb, new.name)
    src = tmp_path / "kokako.md"
    src.write_text("# Kokako\nThe kokako is a blue-wattled crow of the forest.\n", encoding="utf-8")
    answers = []

    def add_once(state: switching.FillProgress) -> None:
        if state.done == 2:
            kb.add([src])  # the writer lock is free between batches
            answers.append(kb.search("blue-wattled crow")[0].source)

    assert switching.fill(kb, embedder=new, on_batch=add_once, batch_seconds=0.0)
    assert answers == ["kokako.md"]  # the old index had it at once
    after = _new_index(kb, new)
    assert {d.name for d in after.list_documents()} == {f"{a}.md" for a in ANIMALS} | {"kokako.md"}
    assert after.search("blue-wattled crow")[0].source == "kokako.md"


def test_a_file_that_cannot_be_read_does_not_stop_the_fill(tmp_path, minilm, monkeypatch):
    from desktop_app.core.library import sync

    kb = _library(tmp_path, minilm)
    (kb.knowledge_dir / "locked.md").write_text("# Locked\nNobody reads this.\n", encoding="utf-8")
    kb.sync()
    hashed = sync.sha256_file

    def denied(path, *args, **kwargs):  # chmod 000 as a user (the tests may run as root)
        if path.name == "locked.md":
            raise PermissionError(13, "Permission denied")
        return hashed(path, *args, **kwargs)

    monkeypatch.setattr(sync, "sha256_file", denied)
    new = Renamed(minilm)
    switching.start(kb, new.name)
    assert switching.fill(kb, embedder=new, batch_seconds=0.0)  # tried once, then the takeover
    assert _config_model(kb) == new.name and len(new.texts) == len(ANIMALS)
    assert {d.name: d.status for d in _new_index(kb, new).list_documents()}["locked.md"] == "failed"


def test_choosing_the_model_in_use_withdraws_the_switch(tmp_path, minilm):
    kb = _library(tmp_path, minilm)
    switching.start(kb, "other-model")
    assert switching.progress(kb).model == "other-model"
    assert switching.start(kb, minilm.name) is None
    assert switching.progress(kb) is None


# -- a real `kdesk` process killed halfway, then interrupted, then run to the end ---------------------
def _target_done(index: Path, model: str) -> set[str]:
    """The documents the new model's manifest records as indexed (read as a reader, after a kill)."""
    dirs = [p for p in index.iterdir() if p.is_dir() and model in p.name]
    if not dirs or not (dirs[0] / "manifest.sqlite3").exists():
        return set()
    try:
        with sqlite3.connect(dirs[0] / "manifest.sqlite3") as db:
            return {r[0] for r in db.execute("SELECT name FROM documents WHERE status = 'indexed'")}
    except sqlite3.OperationalError:  # made a moment ago, its table not yet
        return set()


def _texts_for(server, model: str, since: int = 0) -> list[str]:
    return [t for r in server.script.requests[since:] if r.get("model") == model for t in r["input"]]


@pytest.mark.slow
def test_a_killed_switch_resumes_where_it_stopped_and_search_answers_throughout(
    kdesk_cls, embeddings_server, tmp_path
):
    kd = kdesk_cls(tmp_path / "data", embeddings_server.url)  # embedding.model = "openai:hash"
    knowledge = kd.data_dir / "knowledge"
    knowledge.mkdir()
    for i in range(12):
        (knowledge / f"doc{i:02d}.md").write_text(
            f"# Doc {i}\n\nmarker{i:02d} parrot macaw\n", encoding="utf-8"
        )
    (knowledge / "owl.md").write_text("# Owl\nThe morepork is a small brown owl.\n", encoding="utf-8")
    assert kd.run("sync", timeout=300).rc == 0
    index = kd.data_dir / "index"

    def owl_found() -> bool:
        found = kd.run("search", "morepork owl", "--json", timeout=300)
        return found.rc == 0 and found.json()["hits"][0]["source"] == "owl.md"

    embeddings_server.script.delay = 0.4  # every encoder call of the new model takes 0.4 s
    proc = kd.popen("models", "use", "openai:hash2")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(_target_done(index, "hash2")) < 4:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, "the fill ended before it was killed"
    done_at_kill = _target_done(index, "hash2")
    assert 4 <= len(done_at_kill) < 13
    assert 'model = "openai:hash"' in (kd.data_dir / "config.toml").read_text()  # no takeover
    assert owl_found()  # the old index answers
    status = kd.run("models", "--json", timeout=300).json()["embedding"]["switch"]
    assert status["done"] == len(done_at_kill) and status["total"] == 13

    sent = len(embeddings_server.script.requests)
    proc = kd.popen("reindex", "-v")  # continues; SIGTERM stops it after the step in flight
    while time.monotonic() < deadline and len(_target_done(index, "hash2")) <= len(done_at_kill):
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "run `kdesk reindex` to continue" in err
    assert owl_found()
    paused = kd.run("models", "pause", timeout=300)
    assert paused.rc == 0 and "searching with openai:hash@" in paused.stdout and "paused at" in paused.stdout

    finished = kd.run("reindex", timeout=300)
    assert finished.rc == 0 and "now answers searches (13 documents)" in finished.stdout
    assert 'model = "openai:hash2"' in (kd.data_dir / "config.toml").read_text()
    again = _texts_for(embeddings_server, "hash2", since=sent)
    assert not {f"marker{n[3:5]}" for n in done_at_kill if n.startswith("doc")} & {
        w for t in again for w in t.split() if w.startswith("marker")
    }  # no document finished before the kill was embedded again
    assert owl_found()
    assert kd.run("models", "--json", timeout=300).json()["embedding"]["switch"] is None


def test_the_desk_embeds_documents_opened_or_cited_lately_first(embeddings_server, tmp_path):
    from desktop_app.core.ask.conversation import Conversation
    from desktop_app.core.ask.conversation_store import StoredCitation, StoredMessage
    from desktop_app.core.desk import Desk

    config = Config()
    config.embedding.model, config.embedding.url = "openai:hash", embeddings_server.url
    with Desk(tmp_path / "data", config) as desk:
        for i in range(6):
            (desk.knowledge_dir / f"doc{i}.md").parent.mkdir(parents=True, exist_ok=True)
            (desk.knowledge_dir / f"doc{i}.md").write_text(
                f"# Doc {i}\n\nmarker{i} parrot\n", encoding="utf-8"
            )
        desk.kb.sync()
        cited = StoredMessage(
            "ask", "which parrot?", "this one [1]", citations=[StoredCitation(1, "doc4.md", None)]
        )
        desk.conversations.append(Conversation(), cited)
        assert desk.choose_embedder("openai:hash2")
        desk.note_opened("doc2.md")  # the viewer
        sent = len(embeddings_server.script.requests)
        assert desk.fill_switch() is not None
        assert desk.config.embedding.model == "openai:hash2" and desk.kb.embedder_name.startswith(
            "openai:hash2"
        )
    order = [
        w
        for t in _texts_for(embeddings_server, "hash2", since=sent)
        for w in t.split()
        if w.startswith("marker")
    ]
    assert order[:2] == ["marker2", "marker4"] and sorted(order) == [f"marker{i}" for i in range(6)]
