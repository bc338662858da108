from __future__ import annotations

from desktop_app.core.library.manifest import FAILED, INDEXED, Entry, Manifest
from desktop_app.core.library.scopes import scope_of


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
