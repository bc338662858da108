"""The manifest: which file is indexed, with which content hash, how many chunks, and its status.

SQLite gives atomic, incremental writes: every state change is one committed transaction, so a
crash leaves either the old row or the new one. A row is written as "pending" *before* any chunk
of its document reaches the vector store and becomes "indexed" only after all of them are stored,
so a document marked indexed never has missing chunks.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from contextlib import closing
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from desktop_app.core.formats import (
    STORE_MANIFEST,
    FormatTooNew,
    check_readable,
    check_sqlite_file,
    user_version,
)
from desktop_app.core.library.datafolder import place_once
from desktop_app.core.library.documents import DocumentInfo
from desktop_app.core.messages import Text, dump, from_english, load

INDEXED, FAILED, PENDING = "indexed", "failed", "pending"


@dataclass
class Entry:
    name: str
    doc_id: str
    sha256: str
    size: int
    mtime_ns: int
    chunks: int
    status: str
    error: Text | None  # why it failed: a catalogue message, rendered by the reader
    indexed_at: str | None
    kind: str
    scope: str

    def info(self) -> DocumentInfo:
        return DocumentInfo(
            name=self.name,
            doc_id=self.doc_id,
            sha256=self.sha256,
            size=self.size,
            chunks=self.chunks,
            status=self.status,
            error=self.error,
            indexed_at=self.indexed_at,
            kind=self.kind,
            scope=self.scope,
        )


_COLUMNS = "name, doc_id, sha256, size, mtime_ns, chunks, status, error, indexed_at, kind, scope"


# PRAGMA user_version. 0 (never set): the error column holds English, migrated once on opening;
# 1: it holds a message's {code, params} as JSON (dump/load). Raise it for any change an older build
# would misread here or elsewhere in index/<collection>/ (seals, integrity.json): it stops at this check.
MANIFEST_VERSION = 1


def check_format(path: Path) -> None:
    """Raise FormatTooNew when the manifest at ``path`` is newer than this build reads."""
    check_sqlite_file(STORE_MANIFEST, path, MANIFEST_VERSION)


class Manifest:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        try:  # a newer app's manifest: refused before anything below writes to it (formats.py)
            check_readable(STORE_MANIFEST, user_version(self._db), MANIFEST_VERSION, path)
        except FormatTooNew:
            self._db.close()
            raise
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS documents ("
            " name TEXT PRIMARY KEY, doc_id TEXT NOT NULL, sha256 TEXT NOT NULL, size INTEGER NOT NULL,"
            " mtime_ns INTEGER NOT NULL, chunks INTEGER NOT NULL, status TEXT NOT NULL, error TEXT,"
            " indexed_at TEXT, kind TEXT NOT NULL, scope TEXT NOT NULL)"
        )
        if self._db.execute("PRAGMA user_version").fetchone()[0] < MANIFEST_VERSION:
            self._migrate()

    def _migrate(self) -> None:
        """Version 1: the English reasons older versions stored become their {code, params},
        parsed back once here (a text that is no message is kept as a text)."""
        self._db.execute("BEGIN IMMEDIATE")  # two processes opening an old file migrate it once
        try:
            if self._db.execute("PRAGMA user_version").fetchone()[0] < 1:
                rows = self._db.execute("SELECT name, error FROM documents WHERE error IS NOT NULL").fetchall()
                self._db.executemany(
                    "UPDATE documents SET error=? WHERE name=?",
                    [(dump(from_english(error)), name) for name, error in rows],
                )
            self._db.execute(f"PRAGMA user_version = {MANIFEST_VERSION}")
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def all(self) -> dict[str, Entry]:
        with self._lock:
            rows = self._db.execute(f"SELECT {_COLUMNS} FROM documents ORDER BY name").fetchall()
        return {r[0]: _entry(r) for r in rows}

    def get(self, name: str) -> Entry | None:
        with self._lock:
            r = self._db.execute(f"SELECT {_COLUMNS} FROM documents WHERE name=?", (name,)).fetchone()
        return _entry(r) if r else None

    def scopes(self) -> set[str]:
        """Every scope with a row (pending and failed included, so it covers every stored chunk)."""
        with self._lock:
            return {r[0] for r in self._db.execute("SELECT DISTINCT scope FROM documents")}

    def put(self, entry: Entry) -> None:
        self.put_many([entry])

    def put_many(self, entries: list[Entry]) -> None:
        """Write rows in one transaction (all or none)."""
        if not entries:
            return
        with self._lock:
            self._db.execute("BEGIN")
            try:
                self._db.executemany(
                    f"INSERT OR REPLACE INTO documents ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    [
                        (
                            e.name,
                            e.doc_id,
                            e.sha256,
                            e.size,
                            e.mtime_ns,
                            e.chunks,
                            e.status,
                            dump(e.error),
                            e.indexed_at,
                            e.kind,
                            e.scope,
                        )
                        for e in entries
                    ],
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def salvage(self, damaged: Path) -> int:
        """Copy the rows that can still be read from a damaged manifest; returns how many."""
        from desktop_app.core.sqlite_repair import salvage

        with self._lock:
            return salvage(damaged, self._db, "documents", _COLUMNS.split(", "))

    def delete(self, names: list[str]) -> None:
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany("DELETE FROM documents WHERE name=?", [(n,) for n in names])
            self._db.execute("COMMIT")


def _entry(row: tuple) -> Entry:
    return Entry(*row[:7], load(row[7]), *row[8:])


def adopt_as_pending(legacy: Path, path: Path) -> int:
    """Make ``path`` a manifest listing every document of the one at ``legacy`` as pending (the next
    sync indexes them again). Written aside and put in place whole, unless another process was
    first: a crash never leaves half a list, and a manifest in use is never replaced. Returns how
    many rows it adopted (0: none, or another process was first)."""
    if not legacy.exists():
        return 0
    old = Manifest(legacy)
    rows = [replace(e, status=PENDING, chunks=0, error=None, indexed_at=None) for e in old.all().values()]
    old.close()
    if not rows:
        return 0
    tmp = path.with_name(f"{path.name}.adopting{os.getpid()}")
    new = Manifest(tmp)
    new.put_many(rows)
    new.close()
    return len(rows) if place_once(tmp, path) else 0


def lacks_table(path: Path) -> str | None:
    """Why a manifest file that opens is still not one: it has no documents table (None: it has)."""
    try:
        with closing(sqlite3.connect(path, timeout=10)) as db:
            found = db.execute(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='documents'"
            ).fetchone()
    except sqlite3.Error as exc:
        return str(exc)
    return None if found else "no documents table"


def indexed_rows(path: Path) -> int:
    """How many documents a build's manifest lists as indexed (0 when it cannot be read)."""
    if not path.is_file():  # (connecting would make one)
        return 0
    try:
        with closing(sqlite3.connect(path, timeout=10)) as db:
            return int(db.execute("SELECT count(*) FROM documents WHERE status=?", (INDEXED,)).fetchone()[0])
    except sqlite3.Error:
        return 0


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
