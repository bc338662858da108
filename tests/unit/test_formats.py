"""A data folder written by a newer Knowledge Desk is refused, saying which version it needs, and
nothing in it is written (core/formats.py): conversations and index manifests from "the future"."""

from __future__ import annotations

import hashlib
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from desktop_app.cli.main import main
from desktop_app.core.ask.conversation_store import FILE_NAME, SCHEMA_VERSION, ConversationStore
from desktop_app.core.desk import Desk
from desktop_app.core.formats import FormatTooNew
from desktop_app.core.library.manifest import MANIFEST_VERSION, Entry, Manifest


def _set_version(path: Path, version: int) -> None:
    with closing(sqlite3.connect(path)) as db:
        db.execute(f"PRAGMA user_version = {version}")
        db.commit()


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` and its hash: what 'nothing was written' compares."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _future_conversations(data: Path) -> Path:
    store = ConversationStore(data / FILE_NAME, data / "knowledge")
    store.create("a trip")
    path = data / FILE_NAME
    _set_version(path, SCHEMA_VERSION + 5)
    return path


def _future_manifest(data: Path) -> Path:
    path = data / "index" / "chunks__default__384" / "manifest.sqlite3"
    manifest = Manifest(path)
    manifest.put(Entry("a.md", "d1", "0" * 64, 3, 1, 1, "indexed", None, None, "text", "shared"))
    manifest.close()
    _set_version(path, MANIFEST_VERSION + 1)
    return path


def test_conversations_from_a_newer_version_are_refused_with_the_version_needed(tmp_path):
    path = _future_conversations(tmp_path)
    before = _snapshot(tmp_path)
    with pytest.raises(FormatTooNew) as raised:
        Desk(tmp_path)
    assert str(raised.value) == (
        f"This data folder was written by a newer Knowledge Desk (conversations format {SCHEMA_VERSION + 5};"
        f" this version reads up to {SCHEMA_VERSION}). Update Knowledge Desk to open it: {path}"
    )
    assert _snapshot(tmp_path) == before  # nothing written, no -wal or -shm left behind


def test_the_conversation_store_itself_refuses_a_newer_file_before_writing(tmp_path):
    _future_conversations(tmp_path)
    before = _snapshot(tmp_path)
    store = ConversationStore(tmp_path / FILE_NAME, tmp_path / "knowledge")
    with pytest.raises(FormatTooNew, match=r"conversations format \d+; this version reads up to"):
        store.list_chats()
    with pytest.raises(FormatTooNew):
        store.create("another")
    assert _snapshot(tmp_path) == before


def test_an_index_manifest_from_a_newer_version_is_refused(tmp_path):
    path = _future_manifest(tmp_path)
    before = _snapshot(tmp_path)
    with pytest.raises(FormatTooNew, match=r"\(index manifest format 2; this version reads up to 1\)"):
        Desk(tmp_path)
    with pytest.raises(FormatTooNew):
        Manifest(path)
    assert _snapshot(tmp_path) == before


def test_stores_of_this_version_and_older_still_open(tmp_path):
    path = _future_manifest(tmp_path)
    _set_version(path, 0)  # the manifests every version so far wrote
    conversations = _future_conversations(tmp_path)
    _set_version(conversations, 1)  # before citations.sha256: migrated upwards as before
    desk = Desk(tmp_path)
    assert [c.title for c in desk.conversations.list_chats()] == ["a trip"]
    with closing(sqlite3.connect(conversations)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert list(Manifest(path).all()) == ["a.md"]


def test_kdesk_says_which_version_it_needs_and_exits_1(tmp_path, capsys):
    _future_conversations(tmp_path)
    before = _snapshot(tmp_path)
    assert main(["--data-dir", str(tmp_path), "chats", "list"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: This data folder was written by a newer Knowledge Desk (conversations")
    assert "Traceback" not in err and "FormatTooNew" not in err
    assert _snapshot(tmp_path) == before


def test_a_build_pointer_in_a_form_this_version_never_writes_is_refused(tmp_path, minilm):
    from desktop_app.core.config import Config
    from desktop_app.core.formats import FormatUnknown
    from desktop_app.core.library.knowledge import KnowledgeBase

    kb = KnowledgeBase(tmp_path, config=Config(), embedder=minilm)
    (kb.knowledge_dir / "kea.md").parent.mkdir(parents=True, exist_ok=True)
    (kb.knowledge_dir / "kea.md").write_text("# Kea\nAn alpine parrot.\n", encoding="utf-8")
    pointer = kb._generation_pointer
    newer_build = kb.index_dir / f"{pointer.stem}__r0123456789ab"
    newer_build.mkdir(parents=True)
    pointer.write_text('{"build": "r0123456789ab", "format": 2}\n', encoding="ascii")
    before = _snapshot(tmp_path)
    with pytest.raises(FormatUnknown) as raised:
        kb.sync()  # a writer: it would have dropped the newer app's build as stale
    assert str(raised.value) == (
        f"This data folder was written by a newer Knowledge Desk: {pointer} is in a form this version"
        " does not read. Update Knowledge Desk to open it."
    )
    after = _snapshot(tmp_path)
    after.pop("index/writer.lock")  # who holds the writer lock, not data
    assert newer_build.is_dir() and after == before
    kb.close()
