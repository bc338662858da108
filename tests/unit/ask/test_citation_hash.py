"""A citation keeps its file's sha256 from answer time: stamped from the manifest, saved with the
conversation (an old conversations file is migrated and still opens), and compared with the file
now to tell that it has changed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from desktop_app.core.ask.citations import changed_since_answer, current_sha256, stamp_hashes
from desktop_app.core.ask.conversation import Conversation
from desktop_app.core.ask.conversation_store import SCHEMA_VERSION, ConversationStore
from desktop_app.core.events import Answer, Citation
from desktop_app.core.library.manifest import Entry
from desktop_app.core.paths import sha256_file

# The citations table as version 1 wrote it (no sha256 column), with one saved answer.
V1 = """
CREATE TABLE conversations (id TEXT PRIMARY KEY, title TEXT NOT NULL, scope TEXT, last_subject TEXT,
    last_query TEXT, created TEXT NOT NULL, updated TEXT NOT NULL);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, conversation_id TEXT NOT NULL
    REFERENCES conversations(id) ON DELETE CASCADE, kind TEXT NOT NULL, question TEXT NOT NULL,
    answer TEXT NOT NULL, answer_by TEXT NOT NULL, refused INTEGER NOT NULL DEFAULT 0, route TEXT,
    image TEXT, card TEXT, turn TEXT, warnings TEXT NOT NULL DEFAULT '[]', created TEXT NOT NULL);
CREATE TABLE citations (message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    role TEXT NOT NULL, ord INTEGER NOT NULL, n INTEGER NOT NULL, source TEXT NOT NULL, page INTEGER,
    chunk_id TEXT NOT NULL, text TEXT NOT NULL, PRIMARY KEY (message_id, role, ord));
INSERT INTO conversations VALUES ('old1', 'Old chat', NULL, NULL, NULL, '2025-01-01', '2025-01-01');
INSERT INTO messages VALUES (1, 'old1', 'ask', 'Who?', 'Booth [1].', 'llm', 0, NULL, NULL, NULL,
    NULL, '[]', '2025-01-01');
INSERT INTO citations VALUES (1, 'cited', 0, 1, 'war.pdf', 3, 'w-chunk-2', 'Booth shot him.');
PRAGMA user_version = 1;
"""


def _entry(path: Path, name: str) -> Entry:
    st = path.stat()
    return Entry(
        name, "d1", sha256_file(path), st.st_size, st.st_mtime_ns, 1, "indexed", None, None, "text", "shared"
    )


def test_stamp_hashes_sets_each_citation_and_related_from_the_manifest() -> None:
    answer = Answer(
        "x [1][2]",
        [Citation(1, "a.pdf", 1, "a-0", "A"), Citation(2, "gone.md", None, "g-0", "G")],
        related=[Citation(1, "a.pdf", 2, "a-1", "B")],
    )
    asked: list[str] = []

    def sha_of(source: str) -> str | None:
        asked.append(source)
        return "ab" * 32 if source == "a.pdf" else None

    stamp_hashes(answer, sha_of)
    assert [c.sha256 for c in answer.citations] == ["ab" * 32, ""]
    assert answer.related[0].sha256 == "ab" * 32
    assert asked == ["a.pdf", "gone.md"]  # once per file


def test_a_changed_file_is_told_apart_from_an_unchanged_or_removed_one(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("Kakapo eat rimu fruit.", encoding="utf-8")
    entry = _entry(path, "notes.md")
    cite = Citation(1, "notes.md", None, "n-0", "Kakapo eat rimu fruit.", sha256=entry.sha256)
    assert current_sha256(path, entry) == entry.sha256
    assert not changed_since_answer(cite.sha256, path, entry)
    # Edited on disk, not synced yet: the manifest still has the old hash; the file is read.
    path.write_text("Kakapo eat rimu fruit and seeds.", encoding="utf-8")
    assert changed_since_answer(cite.sha256, path, entry)
    # Synced: the manifest has the new hash.
    assert changed_since_answer(cite.sha256, path, _entry(path, "notes.md"))
    # No hash kept (saved before version 2): nothing is claimed.
    assert not changed_since_answer("", path, entry)
    path.unlink()  # a removed file is shown as removed, not as changed
    assert current_sha256(path, entry) is None and not changed_since_answer(cite.sha256, path, entry)


def test_the_hash_is_saved_and_an_old_conversations_file_still_opens(tmp_path: Path) -> None:
    knowledge = tmp_path / "knowledge"
    knowledge.mkdir()
    (knowledge / "war.pdf").write_bytes(b"%PDF stand-in")
    db_path = tmp_path / "conversations.sqlite3"
    with sqlite3.connect(db_path) as db:
        db.executescript(V1)

    store = ConversationStore(db_path, knowledge)
    old = store.load("old1")
    assert old is not None and [m.answer for m in old.messages] == ["Booth [1]."]
    [cite] = old.messages[0].citations
    assert (cite.source, cite.page, cite.text, cite.sha256) == ("war.pdf", 3, "Booth shot him.", "")
    assert old.messages[0].answer_event().citations[0].sha256 == ""
    with sqlite3.connect(db_path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION

    # A new answer keeps its hash through a round trip, beside the old one.
    conv = Conversation(id="old1")
    sha = "cd" * 32
    answer = Answer("Booth [1].", [Citation(1, "war.pdf", 3, "w-chunk-2", "Booth shot him.", sha)])
    list(store.record(conv, iter([answer]), question="Who again?"))
    again = ConversationStore(db_path, knowledge).load("old1")  # a fresh store: migration is idempotent
    assert again is not None
    assert [m.citations[0].sha256 for m in again.messages] == ["", sha]
    assert again.messages[1].answer_event().citations[0] == answer.citations[0]
