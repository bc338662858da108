"""A full disk: known before a batch writes where it can be, and said in words in any case.

Chroma's embedded core writes each upsert to its log (a table in ``chroma.sqlite3``), then applies
the log to its metadata segment and HNSW files. When the disk fills between the two, the log holds
records it cannot apply, and every later read first tries to apply them ("Error sending backfill
request to compactor"): search stops until space is freed. So the sync checks the free space before
each slice it stores (``ensure_room``) and stops cleanly, the files not reached left pending, while
Chroma still has room to apply what it was given and to answer. Figures in docs/reliability.md.
"""

from __future__ import annotations

import errno
import shutil
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path

from desktop_app.core.library import reasons
from desktop_app.core.messages import UserError

MB = 1_000_000

# Bytes one chunk costs on disk, for ``text`` bytes of text and vectors of ``dim`` floats, measured on
# tmpfs (docs/reliability.md): Chroma's sqlite (log, metadata, its index of every string value and
# the full-text index: ~1.4 KB + 7.8 x the text, 14 KB a chunk of ~900 bytes added to a small
# library) and HNSW files (dim x 4 + ~240), the keyword index (~0.1 KB + 0.9 x the text), the dense
# index (dim x 4 + ~80). Rounded up.
CHROMA_FIXED, CHROMA_PER_TEXT_BYTE = 2048, 12
KEYWORD_FIXED, KEYWORD_PER_TEXT_BYTE = 128, 1.2
# Chroma's rollback journal while it applies a slice, and its reads (a read with less than ~32 KB
# free fails with "database or disk is full"): measured under 1.1 MB for a 100-chunk note.
CHROMA_RESERVE = 2 * MB
# A Chroma error while this little is free is taken for the full disk (with more free, it is not).
NEARLY_FULL = 64 * MB

_FULL_TEXTS = ("database or disk is full", "no space left on device", "disk quota exceeded")
# What Chroma says when it cannot apply its log (the cause, a full disk, is not in its text).
_CHROMA_STUCK = ("failed to apply logs", "error in compaction", "backfill request to compactor")


class DiskFull(UserError):
    """The disk holding the data folder has too little room for the next write."""

    def __init__(self, folder: Path | str, free: int, needed: int) -> None:
        self.folder, self.free, self.needed = Path(folder), free, needed
        super().__init__(
            reasons.DISK_FULL, folder=str(folder), free_mb=_mb(free), needed_mb=_mb(max(needed, free + 1))
        )


def _mb(n: int) -> str:
    return f"{n / MB:.1f}"


def free_bytes(path: Path) -> int:
    """Free bytes (for an unprivileged writer) on the disk holding ``path`` (or its nearest parent)."""
    path = Path(path)
    for folder in (path, *path.parents):
        try:
            return shutil.disk_usage(folder).free
        except OSError:
            continue
    return 0


def chunk_bytes(text_bytes: int, dim: int, *, local_chroma: bool = True) -> int:
    """What one chunk of ``text_bytes`` bytes will take on disk once stored everywhere."""
    n = KEYWORD_FIXED + KEYWORD_PER_TEXT_BYTE * text_bytes + dim * 4 + 128  # keyword + dense index
    if local_chroma:
        n += CHROMA_FIXED + CHROMA_PER_TEXT_BYTE * text_bytes + 2 * (dim * 4 + 256)
    return int(n)


def texts_bytes(texts: Iterable[str], dim: int, *, local_chroma: bool = True) -> int:
    return sum(chunk_bytes(len(t.encode("utf-8", "replace")), dim, local_chroma=local_chroma) for t in texts)


def reserve_bytes(collection_dir: Path, *, local_chroma: bool = True) -> int:
    """Room kept free beyond the chunks themselves: the keyword and dense indexes are rewritten whole
    (a new file beside the old, then a rename), and Chroma must be able to apply and answer."""
    rewritten = 0
    for name in ("bm25/bm25.json", "dense/vectors.npy", "dense/rows.json", "manifest.sqlite3"):
        try:
            rewritten += (Path(collection_dir) / name).stat().st_size
        except OSError:
            pass
    return rewritten + (CHROMA_RESERVE if local_chroma else MB)


def ensure_room(folder: Path, needed: int, *, report_needed: Callable[[], int] | None = None) -> None:
    """Raise ``DiskFull`` unless the disk holding ``folder`` has ``needed`` bytes free; the message
    says ``report_needed()`` (what the rest of the work needs, counted only then) when given."""
    free = free_bytes(folder)
    if free < needed:
        raise DiskFull(folder, free, max(needed, report_needed() if report_needed else 0))


def is_disk_full(exc: BaseException, folder: Path) -> bool:
    """Whether ``exc`` (or what caused it) is the disk running out of room: ENOSPC or a quota, SQLite's
    "database or disk is full", or Chroma unable to apply its log while the disk is nearly full."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, DiskFull):
            return True
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        text = str(exc).lower()
        if isinstance(exc, (sqlite3.Error, OSError)) or type(exc).__name__ == "InternalError":
            if any(t in text for t in _FULL_TEXTS):
                return True
            if any(t in text for t in _CHROMA_STUCK) and free_bytes(folder) < NEARLY_FULL:
                return True
            # SQLite in WAL mode (the manifest) cannot map its -shm file with a few KB free.
            if "disk i/o error" in text and free_bytes(folder) < MB:
                return True
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return False


def as_disk_full(exc: BaseException, folder: Path, needed: int = 0) -> DiskFull | None:
    """``exc`` as the full disk it is (``needed``: bytes the work needs, the reserve at least), or None."""
    if isinstance(exc, DiskFull):
        return exc
    if not is_disk_full(exc, folder):
        return None
    free = free_bytes(folder)
    return DiskFull(folder, free, max(needed, free + CHROMA_RESERVE))
