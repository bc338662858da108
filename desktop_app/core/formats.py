"""Format versions of the data folder's stores, and the check that refuses a newer one.

A store that records its format version (``conversations.sqlite3`` and each index's
``manifest.sqlite3``, in ``PRAGMA user_version``) is opened only when this build reads that version.
An older Knowledge Desk opening a folder that a newer one migrated stops with ``FormatTooNew``, which
says which version it needs, before it writes anything: never a migration downwards, never an
overwrite. Derived caches with a version of their own (the BM25 tokenizer, the dense matrix, the
gallery's feature version) are rebuilt instead: ``knowledge/`` gives back everything they hold.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from desktop_app.core.messages import UserError, define

# -- data folder format versions (issue 35, "an older version says which version it needs")
# One message per store, written out (its name is no parameter: a bare word in the catalogue would
# translate a file of that name wherever the window renders a core text; an extractor finds literals).
STORE_CONVERSATIONS = define(
    "format_too_new_conversations",
    "This data folder was written by a newer Knowledge Desk (conversations format {found}; this version"
    " reads up to {supported}). Update Knowledge Desk to open it: {path}",
)
STORE_MANIFEST = define(
    "format_too_new_manifest",
    "This data folder was written by a newer Knowledge Desk (index manifest format {found}; this version"
    " reads up to {supported}). Update Knowledge Desk to open it: {path}",
)
FORMAT_UNKNOWN = define(
    "format_unknown",
    "This data folder was written by a newer Knowledge Desk: {path} is in a form this version does not"
    " read. Update Knowledge Desk to open it.",
)


class FormatTooNew(UserError):
    """A store's format version is newer than this build reads (``str()``: what to do about it)."""

    def __init__(self, store: str, found: int, supported: int, path: Path | str) -> None:
        """``store``: its message code (STORE_CONVERSATIONS, STORE_MANIFEST)."""
        self.found, self.supported, self.path = found, supported, Path(path)
        super().__init__(store, found=found, supported=supported, path=str(path))


class FormatUnknown(UserError):
    """A file only Knowledge Desk writes holds what this build never writes: a newer build's form."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        super().__init__(FORMAT_UNKNOWN, path=str(path))


def check_readable(store: str, found: int, supported: int, path: Path | str) -> None:
    """Raise FormatTooNew when ``found`` (the version a file records) is newer than ``supported``."""
    if found > supported:
        raise FormatTooNew(store, found, supported, path)


def user_version(db: sqlite3.Connection) -> int:
    """``PRAGMA user_version`` of an open database (0 when never set); reads, never writes."""
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def check_sqlite_file(store: str, path: Path, supported: int) -> None:
    """Check an existing SQLite store's version without creating or changing anything (a missing
    file is fine: it will be made in this build's format)."""
    if not path.is_file():
        return
    try:
        # Not mode=ro: a read-only connection to a WAL file leaves its -wal and -shm files behind.
        with closing(sqlite3.connect(path, timeout=10)) as db:
            found = user_version(db)
    except sqlite3.Error:  # not readable as SQLite: the store itself says so when it opens the file
        return
    check_readable(store, found, supported, path)
