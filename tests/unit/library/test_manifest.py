from __future__ import annotations

import sqlite3

from desktop_app.core.library import reasons
from desktop_app.core.library.manifest import FAILED, INDEXED, MANIFEST_VERSION, Entry, Manifest
from desktop_app.core.library.scopes import scope_of
from desktop_app.core.messages import message


def _entry(name: str, status: str = INDEXED, chunks: int = 3) -> Entry:
    return Entry(name, f"id-{name}", "0" * 64, 10, 1, chunks, status, None, None, "text", "shared")


def test_manifest_persists_rows_across_reopen(tmp_path):
    m = Manifest(tmp_path / "m.sqlite3")
    m.put_many([_entry("a.md"), _entry("b.pdf", FAILED, 0)])
    m.close()
    m2 = Manifest(tmp_path / "m.sqlite3")
    rows = m2.all()
    assert set(rows) == {"a.md", "b.pdf"}
    assert rows["b.pdf"].status == FAILED and rows["a.md"].chunks == 3
    assert rows["a.md"].info().to_dict()["name"] == "a.md"


def test_manifest_put_many_is_all_or_nothing(tmp_path):
    m = Manifest(tmp_path / "m.sqlite3")
    bad = _entry("x.md")
    bad.size = None  # type: ignore[assignment]  # violates NOT NULL
    try:
        m.put_many([_entry("ok.md"), bad])
    except Exception:
        pass
    assert m.all() == {}


def test_manifest_delete(tmp_path):
    m = Manifest(tmp_path / "m.sqlite3")
    m.put_many([_entry("a"), _entry("b")])
    m.delete(["a"])
    assert list(m.all()) == ["b"]


def test_scope_comes_from_the_at_folder():
    assert scope_of("@alice/notes.md") == "alice"
    assert scope_of("@alice") == "shared"  # a file named like that is not a folder
    assert scope_of("papers/a.pdf") == "shared"


def test_a_reason_is_stored_as_its_code_and_parameters_and_read_back_as_a_message(tmp_path):
    m = Manifest(tmp_path / "m.sqlite3")
    why = message(reasons.CANNOT_READ, reason="Permission denied")
    m.put(Entry("a.md", "id-a", "", 0, 0, 0, FAILED, why, None, "text", "shared"))
    assert m.get("a.md").error == why
    stored = m._db.execute("SELECT error FROM documents").fetchone()[0]
    assert '"code": "doc.cannot_read"' in stored and '"text": "cannot read: Permission denied"' in stored
    assert m.get("a.md").info().to_dict()["error"] == "cannot read: Permission denied"  # JSON: English


def test_an_older_manifest_has_its_english_reasons_turned_into_messages_once(tmp_path):
    """Version 0 stored the English text; opening it converts each reason (nested ones included);
    a text that is no message stays a text."""
    path = tmp_path / "m.sqlite3"
    Manifest(path).close()
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 0")
        for name, error in (
            ("a.pdf", "no text layer: scanned pages need OCR (3 pages)"),
            ("b.md", "some library's own words"),
        ):
            db.execute(
                "INSERT INTO documents VALUES (?, ?, '', 0, 0, 0, 'failed', ?, NULL, 'text', 'shared')",
                (name, f"id-{name}", error),
            )
    m = Manifest(path)
    assert m.get("a.pdf").error == message(reasons.PDF_NEEDS_OCR, count="3")
    assert m.get("b.md").error == "some library's own words"
    assert m._db.execute("PRAGMA user_version").fetchone()[0] == MANIFEST_VERSION
