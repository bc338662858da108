"""Damaged SQLite files of the data folder: tell, set aside, salvage.

The app's own SQLite files (``conversations.sqlite3``, each index's ``manifest.sqlite3``) can be
damaged by a disk, a copy cut short or another program. ``damage`` says whether one can be trusted
without changing it; ``set_aside`` renames it (with its ``-wal``, ``-shm`` and ``-journal``) beside
itself, never deleting anything; ``salvage`` copies what can still be read of one table into a new
file. Reading a damaged file always happens on a temporary copy, so the file set aside stays exactly
as it was found.

``salvage`` uses the ``sqlite3`` command-line tool's ``.recover`` where it is installed and works (it
reads every page, so rows past a damaged page are found). Not every build has it working: Debian 12's
3.40.1 lacks the ``sqlite_dbpage`` table ``.recover`` reads, and fails with "SQL logic error". Then,
or where the tool is missing, rows are read through Python's ``sqlite3``: forward in rowid order,
seeking past a damaged page (a rowid probe that doubles until it lands on a readable page, then
narrows back), and backward from the end, with a time budget, so a damaged file never hangs it; with
``writable_schema`` on, so a file cut short opens with the pages it still has.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from datetime import datetime
from pathlib import Path

log = logging.getLogger(__name__)

SIDECARS = ("-wal", "-shm", "-journal")  # SQLite's files beside a database, named after it
# Result codes that mean the file itself is bad; busy, locked, cannot open or I/O errors do not.
_SQLITE_CORRUPT, _SQLITE_NOTADB = 11, 26
CLI_TIMEOUT_S = 120.0  # the sqlite3 tool's .recover of one file
PYTHON_BUDGET_S = 60.0  # the row-by-row read of one file's tables
_BATCH = 500
_MIN_ROWID, _MAX_ROWID = -(2**63), 2**63 - 1


def damage(path: Path) -> str | None:
    """Why the SQLite file at ``path`` cannot be trusted (it does not open as SQLite, or PRAGMA quick_check
    reports a problem: the first line of its report), or None when it is sound. A missing file is None.
    Never creates or changes the file (no -wal/-shm left behind).

    A zero-length file is an empty database to SQLite: sound. An error that says nothing about the
    file's content (locked, busy, no permission, an I/O error) is None too: the caller's own open
    reports it, and a file another process holds is never set aside for it. A ``-wal`` a crash left
    beside the file is checkpointed into it on close, as any opening of the store would."""
    path = Path(path)
    if not path.exists():
        return None
    if not path.is_file():
        return "not a regular file"
    try:
        # Read-write, not mode=ro: a read-only connection to a WAL file leaves -wal and -shm behind;
        # this one removes them on close. A database that only reads never writes its pages.
        with closing(sqlite3.connect(path, timeout=10)) as db:
            row = db.execute("PRAGMA quick_check(1)").fetchone()
    except sqlite3.DatabaseError as exc:
        if is_corruption(exc):
            return str(exc)
        log.warning("cannot check %s: %s", path, exc)
        return None
    report = str(row[0]) if row else "no answer from quick_check"
    if report == "ok":
        return None
    # Its first line may be a header ("*** in database main ***"); the next says what is wrong.
    lines = [line for line in report.splitlines() if line.strip() and not line.startswith("*** ")]
    return lines[0] if lines else report


def is_corruption(exc: BaseException) -> bool:
    """Does this error say the file itself is bad (SQLITE_CORRUPT, SQLITE_NOTADB), not that it is
    busy, locked, unreachable or the disk failing?"""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:  # Python < 3.11: only the text tells
        return any(s in str(exc) for s in ("malformed", "not a database", "corrupt"))
    return code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)


def set_aside(path: Path) -> Path:
    """Rename ``path`` (and its -wal, -shm, -journal beside it) to ``<name>.damaged-YYYYMMDD-HHMMSS`` in
    the same folder (a counter added on a clash), never deleting anything; returns the new path.

    The side files keep SQLite's naming (``<new name>-wal``), so the file set aside opens with them.
    They move first: a ``-wal`` left behind would be replayed into the new file made at ``path``."""
    path = Path(path)
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")  # local time: the user reads it
    n = 1
    while True:
        target = path.with_name(f"{path.name}.damaged-{stamp}" + (f"-{n}" if n > 1 else ""))
        if not any(Path(f"{target}{s}").exists() for s in ("", *SIDECARS)):
            break
        n += 1
    moved: list[tuple[Path, Path]] = []
    try:
        for suffix in (*SIDECARS, ""):
            src = Path(f"{path}{suffix}")
            if src.exists():
                dst = Path(f"{target}{suffix}")
                src.rename(dst)
                moved.append((src, dst))
    except OSError:
        for src, dst in reversed(moved):  # all or nothing: a WAL parted from its file loses data
            try:
                dst.rename(src)
            except OSError:
                log.error("could not move %s back to %s", dst, src)
        raise
    return target


def salvage(damaged: Path, into: sqlite3.Connection, table: str, columns: Sequence[str]) -> int:
    """Copy every row of ``table`` (those ``columns``) that can still be read from the damaged file
    into the same table of ``into`` (INSERT OR IGNORE), skipping what cannot be read: through the
    sqlite3 command-line tool's ``.recover`` where it is installed (into a temporary database, then
    copied), else row by row through Python's sqlite3. Returns how many rows were copied.

    Only the columns the damaged table has are copied (a file of an older format lacks some; they
    get their defaults). A row that ``into`` refuses (a constraint such as a foreign key) is
    skipped. The rows go in the caller's open transaction, else in one of salvage's own, committed.
    The damaged file is read from a temporary copy: nothing beside it is created or changed."""
    return salvage_tables(damaged, into, {table: columns})[table]


def salvage_tables(
    damaged: Path, into: sqlite3.Connection, tables: Mapping[str, Sequence[str]]
) -> dict[str, int]:
    """``salvage`` of several tables (in this order: parents first) from one copy and one
    ``.recover`` of the damaged file; how many rows each got."""
    damaged = Path(damaged)
    copied = dict.fromkeys(tables, 0)
    if not damaged.is_file():
        return copied
    with tempfile.TemporaryDirectory(prefix="kdesk-salvage-") as tmp:
        copy = Path(tmp) / "damaged.sqlite3"
        shutil.copyfile(damaged, copy)
        if Path(f"{damaged}-wal").is_file():  # committed transactions not yet checkpointed
            shutil.copyfile(f"{damaged}-wal", f"{copy}-wal")
        recovered = _recover_cli(copy, Path(tmp) / "recovered.sqlite3")
        deadline = time.monotonic() + PYTHON_BUDGET_S
        for table, columns in tables.items():
            if recovered is not None and _has_table(recovered, table):
                rows = _rows_recovered(recovered, table, columns)
            else:  # no tool, a tool whose .recover fails, or it found no such table
                rows = _rows_python(copy, table, columns, deadline)
            copied[table] = _insert(into, table, rows)
    return copied


def header_user_version(path: Path) -> int | None:
    """The ``PRAGMA user_version`` a SQLite file's header records, read from its bytes (a damaged
    file's header usually survives); None when the file does not start as SQLite."""
    try:
        with open(path, "rb") as f:
            head = f.read(100)
    except OSError:
        return None
    if len(head) < 64 or not head.startswith(b"SQLite format 3\x00"):
        return None
    return int.from_bytes(head[60:64], "big", signed=True)


@contextmanager
def exclusive(folder: Path, timeout: float = 300.0) -> Iterator[None]:
    """Hold an exclusive lock on ``folder`` itself (no lock file is left in it) while repairing a
    file there: two processes (the window and a ``kdesk`` command) finding the same damage set it
    aside once. Other threads of this process wait too. No lock where the system has no ``flock``
    (Windows): there a file in use cannot be renamed anyway."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        stop = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() > stop:
                    raise TimeoutError(f"another process is repairing a file in {folder}") from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------- reading
def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")  # a damaged text still gives what it can


def _open(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=1)
    db.text_factory = _text
    return db


def _recover_cli(copy: Path, out: Path) -> Path | None:
    """``sqlite3 COPY .recover | sqlite3 OUT``; the file made, or None where the tool is missing or
    its .recover fails (then the caller reads row by row)."""
    exe = shutil.which("sqlite3")
    if exe is None:
        return None
    try:
        with (
            subprocess.Popen(
                [exe, str(copy), ".recover"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            ) as dump,
            subprocess.Popen(
                [exe, str(out)], stdin=dump.stdout, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            ) as load,
        ):
            assert dump.stdout is not None
            dump.stdout.close()  # the loader holds the pipe now: the dumper sees it close
            try:
                _, err = dump.communicate(timeout=CLI_TIMEOUT_S)
                load.wait(timeout=CLI_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                dump.kill()
                load.kill()
                log.warning(
                    "sqlite3 .recover of %s took over %.0f s: reading row by row", copy, CLI_TIMEOUT_S
                )
                return None
    except OSError as exc:
        log.warning("sqlite3 .recover could not run (%s): reading row by row", exc)
        return None
    if dump.returncode != 0:
        # Debian 12's sqlite3 3.40.1: "sql error: SQL logic error (1)" (no sqlite_dbpage in its build).
        # What it wrote still counts (the caller checks the table is there); the loader's own exit
        # status does not: one statement of the script failing (a duplicate row) makes it 1.
        log.info("sqlite3 .recover: %s", _text(err or b"").strip())
    return out if out.is_file() else None


def _has_table(path: Path, table: str) -> bool:
    try:
        with closing(_open(path)) as db:
            sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
            return db.execute(sql, (table,)).fetchone() is not None
    except sqlite3.Error:
        return False


def _columns(db: sqlite3.Connection, table: str, wanted: Sequence[str]) -> list[str]:
    try:
        have = {str(r[1]) for r in db.execute("SELECT * FROM pragma_table_info(?)", (table,))}
    except sqlite3.DatabaseError:
        return []
    return [c for c in wanted if c in have]


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _rows_recovered(path: Path, table: str, columns: Sequence[str]) -> Iterator[tuple[list[str], tuple]]:
    with closing(_open(path)) as db:
        cols = _columns(db, table, columns)
        if not cols:
            return
        try:
            for row in db.execute(f"SELECT {', '.join(map(_quoted, cols))} FROM {_quoted(table)}"):
                yield cols, tuple(row)
        except sqlite3.DatabaseError as exc:  # .recover writes a sound file; still, never raise
            log.warning("reading the recovered %s stopped: %s", table, exc)


def _rows_python(
    path: Path, table: str, columns: Sequence[str], deadline: float
) -> Iterator[tuple[list[str], tuple]]:
    """Every row of ``table`` SQLite can still decode, each once, until ``deadline``."""
    try:
        db = _open(path)
    except sqlite3.Error:
        return
    with closing(db):
        db.set_progress_handler(lambda: int(time.monotonic() > deadline), 1000)  # aborts a stuck read
        try:
            # Relaxes the checks made when the file opens: a file shorter than its header says (cut
            # short by a copy or a full disk) then opens with the pages it has, instead of failing
            # whole with "malformed". Harmless here: this connection reads a temporary copy.
            db.execute("PRAGMA writable_schema = ON")
        except sqlite3.Error:
            pass  # a build that refuses it (SQLITE_DBCONFIG_DEFENSIVE): the checks stay
        cols = _columns(db, table, columns)
        if not cols:
            return
        select = f"SELECT rowid, {', '.join(map(_quoted, cols))} FROM {_quoted(table)}"
        seen: set[int] = set()
        try:
            db.execute(f"SELECT rowid FROM {_quoted(table)} LIMIT 0")
        except sqlite3.DatabaseError:  # a WITHOUT ROWID table: what one scan reads
            try:
                for row in db.execute(f"SELECT {', '.join(map(_quoted, cols))} FROM {_quoted(table)}"):
                    yield cols, tuple(row)
            except _READ_ERRORS:
                pass
            return
        # Forward, seeking past each damaged page; then back from the end to meet it (what a seek
        # could not reach within the budget).
        for ascending in (True, False):
            for row in _walk(db, select, ascending, deadline, seen):
                yield cols, tuple(row[1:])


_READ_ERRORS = (sqlite3.DatabaseError, ValueError, OverflowError, MemoryError)


def _walk(
    db: sqlite3.Connection, select: str, ascending: bool, deadline: float, seen: set[int]
) -> Iterator[sqlite3.Row]:
    """The rows in rowid order (or from the end back), each once, stopping at one already ``seen``.
    Where a page cannot be read: one row at a time up to it, then (forward) on from the first
    rowid past it that reads."""
    op, order, step = (">=", "", 1) if ascending else ("<=", " DESC", -1)
    at: int | None = _MIN_ROWID if ascending else _MAX_ROWID
    while at is not None and time.monotonic() < deadline:
        last: int | None = None
        try:
            for row in db.execute(f"{select} WHERE rowid {op} ? ORDER BY rowid{order}", (at,)):
                if row[0] in seen:
                    return
                last = row[0]
                seen.add(last)
                yield row
            return
        except _READ_ERRORS:
            pass
        # The cursor reads a row ahead of the one it returns, so the row before the damage has not
        # come yet: read one row per query (LIMIT 1 never steps past its row) up to the damage.
        at = at if last is None else last + step
        while _MIN_ROWID <= at <= _MAX_ROWID and time.monotonic() < deadline:
            try:
                rows = db.execute(
                    f"{select} WHERE rowid {op} ? ORDER BY rowid{order} LIMIT 1", (at,)
                ).fetchall()
            except _READ_ERRORS:
                break
            if not rows or rows[0][0] in seen:
                return
            seen.add(rows[0][0])
            yield rows[0]
            at = rows[0][0] + step
        at = _next_readable(db, select, at, deadline) if ascending else None


def _next_readable(db: sqlite3.Connection, select: str, bad: int, deadline: float) -> int | None:
    """The smallest rowid past ``bad`` (a seek that fails) where a seek reads: probes that double
    until one lands past the damaged page, then narrow back so no readable row is skipped."""

    def reads(at: int) -> bool:
        try:
            db.execute(f"{select} WHERE rowid >= ? ORDER BY rowid LIMIT 1", (at,)).fetchall()
            return True
        except _READ_ERRORS:
            return False

    step = 1
    while True:
        if time.monotonic() > deadline or bad + step > _MAX_ROWID:
            return None
        if reads(bad + step):
            good = bad + step
            break
        bad, step = bad + step, step * 2
    while good - bad > 1 and time.monotonic() < deadline:
        mid = (good + bad) // 2
        if reads(mid):
            good = mid
        else:
            bad = mid
    return good


# ---------------------------------------------------------------------------- writing
def _insert(into: sqlite3.Connection, table: str, rows: Iterator[tuple[list[str], tuple]]) -> int:
    own = not into.in_transaction
    if own:
        into.execute("BEGIN")
    copied = 0
    try:
        batch: list[tuple] = []
        sql: str | None = None
        for cols, row in rows:
            if sql is None:
                marks = ", ".join("?" * len(cols))
                sql = f"INSERT OR IGNORE INTO {_quoted(table)} ({', '.join(map(_quoted, cols))}) VALUES ({marks})"
            batch.append(row)
            if len(batch) >= _BATCH:
                copied += _insert_batch(into, sql, batch)
                batch = []
        if sql is not None and batch:
            copied += _insert_batch(into, sql, batch)
    except BaseException:
        if own:
            into.rollback()
        raise
    if own:
        into.commit()
    return copied


def _insert_batch(into: sqlite3.Connection, sql: str, batch: list[tuple]) -> int:
    try:
        with _savepoint(into):
            return max(0, into.executemany(sql, batch).rowcount)
    except (sqlite3.IntegrityError, sqlite3.InterfaceError, OverflowError):
        pass  # one row refused (OR IGNORE does not cover a foreign key): row by row, skipping it
    copied = 0
    for row in batch:
        try:
            copied += max(0, into.execute(sql, row).rowcount)
        except (sqlite3.IntegrityError, sqlite3.InterfaceError, OverflowError):
            continue
    return copied


class _savepoint:
    """A savepoint: a failed batch leaves nothing of itself in the transaction."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("SAVEPOINT salvage")

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is not None:
            self.db.execute("ROLLBACK TO salvage")
        self.db.execute("RELEASE salvage")
