"""Damage to the library's derived files (everything under <data-dir>/index): recognised, named,
set aside and rebuilt from what is intact, never a dead end.

Everything in index/ can be made again from the knowledge folder, so a damaged file is never
repaired in place and never deleted: it is renamed beside itself (``<name>.damaged-<time>``, by
``sqlite_repair.set_aside``) for the user or a bug report, and a new one is built. The user is told
which file, where it went and what is rebuilt (a catalogue message, logged and handed to the
knowledge base's ``notices``).

- The manifest: rows that can still be read are copied into a new one (``sqlite_repair.salvage``);
  documents that only the vector store still knows get a pending row from their chunks' metadata,
  so search keeps finding them until the next sync has indexed them again.
- The index pointer (``<collection>.current``): one that names no build here falls back to the
  newest complete build (``COMPLETE`` marks one), never to an empty library (knowledge.py).
- The vector store (``index/chroma``): SQLite's "malformed"/"not a database" raised by Chroma
  becomes ``StoreDamaged``; a writer sets the folder aside and re-embeds (knowledge.py).
- The keyword and dense indexes were already rebuilt from the vector store when unreadable; their
  damaged files are now set aside and named too (bm25.py, dense.py).
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from desktop_app.core.library import reasons
from desktop_app.core.messages import UserError

COMPLETE = "complete"  # in a build's folder: written once a `reindex` finished it, before the switch

# SQLite's words for a file that is not (or no longer) a database, as Chroma passes them on.
_DAMAGE = re.compile(
    r"disk image is malformed|file is not a database|file is encrypted|database corruption", re.I
)


class StoreDamaged(UserError):
    """The embedded vector store's files are damaged (``path``: its SQLite file)."""

    def __init__(self, path: Path, why: str) -> None:
        self.path, self.why = path, why
        super().__init__(reasons.STORE_DAMAGED_ERROR, path=str(path), why=why)


def damage_of(exc: BaseException) -> str | None:
    """What SQLite said if ``exc`` says a database file is damaged (None: another failure: a lock,
    a full disk, a closed connection are not damage)."""
    if isinstance(exc, StoreDamaged):
        return exc.why
    text = str(exc)
    if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
        return text or type(exc).__name__
    match = _DAMAGE.search(text)
    return _short(text) if match else None


def _short(text: str) -> str:
    """Chroma's wording without its prefix ("error returned from database: (code: 11) ...")."""
    return re.sub(r"^.*?\(code: \d+\)\s*", "", text).strip() or text
