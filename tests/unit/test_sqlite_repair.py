"""sqlite_repair on really damaged files: truncated, emptied, overwritten at an offset or on chosen
pages, not SQLite at all. Which rows survive a damaged page is read from the page itself (its cells'
rowids), not from the code under test."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import time
from contextlib import closing
from pathlib import Path

import pytest

from desktop_app.core import sqlite_repair
from desktop_app.core.sqlite_repair import damage, salvage, set_aside

ROWS = 2000
PAGE = 4096
SCHEMA = "CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, body TEXT)"
COLUMNS = ("id", "name", "body")


def _make(path: Path, rows: int = ROWS) -> None:
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute(SCHEMA)
        db.executemany(
            "INSERT INTO t (name, body) VALUES (?, ?)", [(f"row {i}", "x" * 150) for i in range(rows)]
        )
        db.commit()


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pristine") / "store.sqlite3"
    _make(path)
    return path


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


def _leaf_rowids(data: bytes, page: int) -> list[int]:
    """The rowids on table-leaf page ``page`` (1-based) of a file's bytes: its cells, read by hand."""
    base = (page - 1) * PAGE
    head = base + (100 if page == 1 else 0)
    assert data[head] == 0x0D, "not a table leaf"
    cells = int.from_bytes(data[head + 3 : head + 5], "big")
    out = []
    for i in range(cells):
        ptr = int.from_bytes(data[head + 8 + 2 * i : head + 10 + 2 * i], "big")
        _, at = _varint(data, base + ptr)  # the payload's size, then the rowid
        out.append(_varint(data, at)[0])
    return out


def _leaves(data: bytes) -> list[int]:
    return [p for p in range(2, len(data) // PAGE + 1) if data[(p - 1) * PAGE] == 0x0D]


def _damage(path: Path, how: str) -> set[int]:
    """Damage the file; returns the rowids of ``t`` that must survive it."""
    data = path.read_bytes()
    every = set(range(1, ROWS + 1))
    if how == "truncate-1000":
        os.truncate(path, 1000)
        return set()
    if how == "truncate-half":  # the pages past the cut are gone, the ones before it intact
        cut = len(data) // PAGE // 2
        os.truncate(path, cut * PAGE)
        kept = {r for page in _leaves(data) if page <= cut for r in _leaf_rowids(data, page)}
        assert 0 < len(kept) < ROWS
        return kept
    if how == "zero-length":
        os.truncate(path, 0)
        return set()
    if how == "random-at-100":  # the schema page and the next: the table cannot be found
        with open(path, "r+b") as f:
            f.seek(100)
            f.write(os.urandom(6 * 1024))
        return set()
    if how == "not-sqlite":
        path.write_bytes(b"name,body\nnot,a database\n" * 200)
        return set()
    leaves = _leaves(data)
    pages = {
        "one-page": [leaves[len(leaves) // 2]],
        "three-pages": [leaves[1], leaves[len(leaves) // 2], leaves[-2]],
    }[how]
    lost: set[int] = set()
    with open(path, "r+b") as f:
        for page in pages:
            lost |= set(_leaf_rowids(data, page))
            f.seek((page - 1) * PAGE)
            f.write(os.urandom(PAGE))
    assert 0 < len(lost) < ROWS // 10
    return every - lost


KINDS = [
    "truncate-1000",
    "truncate-half",
    "zero-length",
    "random-at-100",
    "not-sqlite",
    "one-page",
    "three-pages",
]


def _listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


# ---------------------------------------------------------------------------- damage
def test_damage_sound_missing_and_empty(tmp_path: Path, pristine: Path) -> None:
    sound = tmp_path / "sound.sqlite3"
    shutil.copyfile(pristine, sound)
    assert damage(sound) is None
    assert damage(tmp_path / "missing.sqlite3") is None
    assert not (tmp_path / "missing.sqlite3").exists()
    (tmp_path / "empty.sqlite3").write_bytes(b"")
    assert damage(tmp_path / "empty.sqlite3") is None  # SQLite's empty database
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.sqlite3", "sound.sqlite3"]


@pytest.mark.parametrize("how", [k for k in KINDS if k != "zero-length"])
def test_damage_names_the_problem_and_changes_nothing(tmp_path: Path, pristine: Path, how: str) -> None:
    path = tmp_path / "store.sqlite3"
    shutil.copyfile(pristine, path)
    _damage(path, how)
    before = _listing(tmp_path)
    reason = damage(path)
    assert reason, how
    assert not reason.startswith("***")
    if how == "not-sqlite":
        assert reason == "file is not a database"
    if how in ("one-page", "three-pages"):
        assert re.search(r"Page \d+|malformed", reason), reason
    assert _listing(tmp_path) == before  # same files, same bytes: no -wal, no -shm


def test_damage_of_a_file_in_use_is_not_damage(tmp_path: Path, pristine: Path) -> None:
    path = tmp_path / "store.sqlite3"
    shutil.copyfile(pristine, path)
    with closing(sqlite3.connect(path, isolation_level=None)) as writer:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("INSERT INTO t (name) VALUES ('pending')")
        assert damage(path) is None  # WAL: the check reads beside the writer
        writer.execute("COMMIT")


# ---------------------------------------------------------------------------- set_aside
def test_set_aside_moves_the_file_and_its_side_files(tmp_path: Path) -> None:
    path = tmp_path / "conversations.sqlite3"
    contents = {"": b"main", "-wal": b"wal", "-shm": b"shm", "-journal": b"journal"}
    for suffix, data in contents.items():
        Path(f"{path}{suffix}").write_bytes(data)
    (tmp_path / "other.txt").write_text("keep")
    aside = set_aside(path)
    assert re.fullmatch(r"conversations\.sqlite3\.damaged-\d{8}-\d{6}", aside.name), aside.name
    assert aside.parent == tmp_path
    for suffix, data in contents.items():
        assert not Path(f"{path}{suffix}").exists()
        assert Path(f"{aside}{suffix}").read_bytes() == data
    assert (tmp_path / "other.txt").read_text() == "keep"


def test_set_aside_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    names = []
    for i in range(3):  # within one second: the same stamp, so a counter
        path.write_bytes(f"copy {i}".encode())
        names.append(set_aside(path))
    assert len(set(names)) == 3
    assert [p.read_bytes() for p in names] == [b"copy 0", b"copy 1", b"copy 2"]
    assert names[1].name.endswith("-2") or names[1].name[-6:] != names[0].name[-6:]


# ---------------------------------------------------------------------------- salvage
def _target() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute(SCHEMA)
    return db


def _ids(db: sqlite3.Connection) -> set[int]:
    return {r[0] for r in db.execute("SELECT id FROM t")}


@pytest.fixture
def no_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    real = shutil.which
    monkeypatch.setattr(
        sqlite_repair.shutil, "which", lambda name, *a, **k: None if name == "sqlite3" else real(name)
    )


def _working_recover() -> str | None:
    """The installed sqlite3 tool, where its .recover works (Debian 12's 3.40.1 fails: no sqlite_dbpage)."""
    exe = shutil.which("sqlite3")
    if exe is None:
        return None
    done = subprocess.run([exe, ":memory:", ".recover"], capture_output=True, timeout=30)
    return exe if done.returncode == 0 and b"COMMIT" in done.stdout else None


@pytest.mark.parametrize("how", KINDS)
def test_salvage_row_by_row(tmp_path: Path, pristine: Path, how: str, no_cli: None) -> None:
    path = tmp_path / "store.sqlite3"
    shutil.copyfile(pristine, path)
    survivors = _damage(path, how)
    before = _listing(tmp_path)
    into = _target()
    start = time.monotonic()
    copied = salvage(path, into, "t", COLUMNS)
    assert time.monotonic() - start < 5
    assert copied == len(survivors)
    assert _ids(into) == survivors  # every row of an intact page, none twice
    if survivors:
        assert into.execute("SELECT name, body FROM t WHERE id = ?", (max(survivors),)).fetchone() == (
            f"row {max(survivors) - 1}",
            "x" * 150,
        )
    assert not into.in_transaction  # its own transaction, committed
    assert _listing(tmp_path) == before  # read from a copy: nothing beside it made or changed


@pytest.mark.parametrize("how", KINDS)
def test_salvage_with_the_installed_tool(tmp_path: Path, pristine: Path, how: str) -> None:
    """Whatever sqlite3 tool is installed (or none): .recover where it works, else the fallback;
    every row of an intact page is copied either way."""
    path = tmp_path / "store.sqlite3"
    shutil.copyfile(pristine, path)
    survivors = _damage(path, how)
    before = _listing(tmp_path)
    into = _target()
    copied = salvage(path, into, "t", COLUMNS)
    assert copied == len(survivors)
    assert _ids(into) == survivors
    assert _listing(tmp_path) == before


@pytest.mark.skipif(_working_recover() is None, reason="no sqlite3 tool with a working .recover here")
def test_salvage_uses_recover_when_it_works(
    tmp_path: Path, pristine: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.sqlite3"
    shutil.copyfile(pristine, path)
    survivors = _damage(path, "three-pages")
    calls: list[int] = []
    python = sqlite_repair._rows_python
    monkeypatch.setattr(sqlite_repair, "_rows_python", lambda *a: calls.append(1) or python(*a))
    into = _target()
    assert salvage(path, into, "t", COLUMNS) == len(survivors)
    assert _ids(into) == survivors
    assert calls == []  # the tool read it


def test_salvage_falls_back_when_the_tool_fails(
    tmp_path: Path, pristine: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sqlite3 whose .recover fails (as Debian 12's does) reads row by row all the same."""
    fake = tmp_path / "bin" / "sqlite3"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'sql error: SQL logic error (1)' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(sqlite_repair.shutil, "which", lambda name, *a, **k: str(fake))
    path = tmp_path / "store.sqlite3"
    shutil.copyfile(pristine, path)
    survivors = _damage(path, "one-page")
    into = _target()
    assert salvage(path, into, "t", COLUMNS) == len(survivors)


def test_salvage_reads_the_wal_and_keeps_the_callers_transaction(
    tmp_path: Path, pristine: Path, no_cli: None
) -> None:
    path = tmp_path / "live.sqlite3"
    shutil.copyfile(pristine, path)
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA wal_autocheckpoint = 0")
        db.executemany("INSERT INTO t (name) VALUES (?)", [(f"late {i}",) for i in range(5)])
        db.commit()
        copy = tmp_path / "copy.sqlite3"  # the file and its -wal as a crash leaves them
        shutil.copyfile(path, copy)
        shutil.copyfile(f"{path}-wal", f"{copy}-wal")
    into = _target()
    into.execute("INSERT INTO t (id, name) VALUES (1, 'already here')")  # opens the caller's transaction
    assert into.in_transaction
    assert salvage(copy, into, "t", COLUMNS) == ROWS + 5 - 1  # id 1 ignored, not replaced
    assert into.in_transaction  # left to the caller
    assert into.execute("SELECT name FROM t WHERE id = 1").fetchone() == ("already here",)
    assert into.execute("SELECT COUNT(*) FROM t WHERE name LIKE 'late %'").fetchone() == (5,)


def test_salvage_copies_the_columns_an_older_file_has(tmp_path: Path, no_cli: None) -> None:
    old = tmp_path / "old.sqlite3"
    with closing(sqlite3.connect(old)) as db:
        db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        db.executemany("INSERT INTO t VALUES (?, ?)", [(i, f"n{i}") for i in range(1, 11)])
        db.commit()
    into = _target()
    assert salvage(old, into, "t", COLUMNS) == 10
    assert into.execute("SELECT body FROM t WHERE id = 3").fetchone() == (None,)
    assert salvage(old, into, "missing_table", COLUMNS) == 0


def test_salvage_skips_rows_the_new_file_refuses(tmp_path: Path, pristine: Path, no_cli: None) -> None:
    """A foreign key OR IGNORE does not cover: that row is skipped, the others are copied."""
    into = sqlite3.connect(":memory:")
    into.execute("PRAGMA foreign_keys = ON")
    into.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
    into.execute("INSERT INTO parent VALUES (1)")
    into.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT REFERENCES parent(id), body TEXT)")
    into.commit()
    src = tmp_path / "src.sqlite3"
    with closing(sqlite3.connect(src)) as db:
        db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, body TEXT)")
        db.executemany("INSERT INTO t VALUES (?, ?, ?)", [(1, 1, "a"), (2, 99, "orphan"), (3, 1, "c")])
        db.commit()
    assert salvage(src, into, "t", COLUMNS) == 2
    assert _ids(into) == {1, 3}


def test_salvage_stops_within_its_budget(
    tmp_path: Path, pristine: Path, no_cli: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every other leaf damaged: many gaps to seek past, and a budget that ends the reading."""
    path = tmp_path / "store.sqlite3"
    shutil.copyfile(pristine, path)
    data = path.read_bytes()
    with open(path, "r+b") as f:
        for page in _leaves(data)[::2]:
            f.seek((page - 1) * PAGE)
            f.write(os.urandom(PAGE))
    into = _target()
    copied = salvage(path, into, "t", COLUMNS)
    assert ROWS // 3 < copied < ROWS * 2 // 3
    monkeypatch.setattr(sqlite_repair, "PYTHON_BUDGET_S", 0.0)
    start = time.monotonic()
    salvage(path, _target(), "t", COLUMNS)
    assert time.monotonic() - start < 2


def test_exclusive_serialises_repairs_and_leaves_no_file(tmp_path: Path) -> None:
    import threading

    order: list[str] = []
    inside = threading.Event()

    def first() -> None:
        with sqlite_repair.exclusive(tmp_path):
            inside.set()
            time.sleep(0.3)
            order.append("first out")

    worker = threading.Thread(target=first)
    worker.start()
    inside.wait(5)
    with sqlite_repair.exclusive(tmp_path):  # another open of the folder: waits for the first
        order.append("second in")
    worker.join()
    assert order == ["first out", "second in"]
    assert list(tmp_path.iterdir()) == []
