"""Exact dense search: every chunk vector of a collection in one float32 matrix.

A desktop knowledge base holds thousands to a few hundred thousand chunks; one matrix product over
all of them (SciFact, 13k x 384: ~1 ms) is faster than a Chroma HNSW query and exact. It also gives
the cosine of *every* chunk, so keyword-only candidates need no second read of stored vectors and a
document's dense score is really its best chunk's. Measured on SciFact: query p95 and nDCG@10 in
docs/retrieval-benchmarks.md. Chroma stays the source of truth; this is derived state beside the
keyword index, rebuilt from Chroma's stored vectors whenever it is missing, stale or was not
flushed (``dirty`` marker), never by re-embedding.

Files in ``directory``: ``vectors.npy`` (n x dim float32, unit length), ``rows.json`` (chunk id,
doc id, scope per row, plus the dimension), ``dirty`` (present from the first unflushed change).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from desktop_app.core.library.datafolder import file_stamp, write_whole
from desktop_app.core.sqlite_repair import set_aside

log = logging.getLogger(__name__)

FORMAT = 1


class DenseIndex:
    """Chunk vectors in memory, exact cosine search; writers hold the KnowledgeBase lock.

    ``read_only``: this process does not hold the data folder's writer lock, so it may rebuild its
    copy in memory but never writes the files (another process may be writing them)."""

    def __init__(self, directory: Path, dim: int, *, read_only: bool = False) -> None:
        self.directory = Path(directory)
        self.dim = int(dim)
        self.read_only = read_only
        self._lock = threading.RLock()
        self._mat = np.zeros((0, self.dim), dtype=np.float32)
        self._ids: list[str] = []
        self._docs: list[str] = []
        self._scopes: list[str] = []
        self._pending: list[np.ndarray] = []  # vectors of rows appended since the last compaction
        self._dead: set[int] = set()  # rows of deleted chunks, dropped at the next compaction
        self._index: dict[str, int] | None = None  # chunk id -> row
        self._doc_rows: dict[str, list[int]] | None = None
        self._masks: dict[frozenset[str], np.ndarray] = {}
        self._dirty = False
        # True when what is on disk cannot be trusted (missing, unreadable, or an unflushed change
        # was lost in a crash): the KnowledgeBase then rebuilds the index from the vector store.
        self.needs_rebuild = False
        self.damage: tuple[str, Path] | None = None  # why its files were set aside, and where to
        self._load()

    # -- persistence -------------------------------------------------------------------------
    @property
    def _vec_path(self) -> Path:
        return self.directory / "vectors.npy"

    @property
    def _rows_path(self) -> Path:
        return self.directory / "rows.json"

    @property
    def _dirty_path(self) -> Path:
        return self.directory / "dirty"

    def _load(self) -> None:
        self._seen = file_stamp(self._rows_path)  # before reading: a later replace is noticed
        if self._dirty_path.exists() or not self._rows_path.exists():
            self.needs_rebuild = True
            return
        try:
            rows = json.loads(self._rows_path.read_text(encoding="utf-8"))
            if rows.get("format") != FORMAT or int(rows.get("dim", -1)) != self.dim:
                log.info("%s: written by another version or for another dimension: rebuilt", self.directory)
                self.needs_rebuild = True
                return
            mat = np.load(self._vec_path, allow_pickle=False)
            ids, docs, scopes = rows["ids"], rows["docs"], rows["scopes"]
            if (
                mat.dtype != np.float32
                or mat.shape != (len(ids), self.dim)
                or not (len(ids) == len(docs) == len(scopes))
            ):
                raise ValueError(f"shape {mat.shape} does not match {len(ids)} rows")
        except Exception as exc:  # whatever numpy or json make of damaged bytes (even a SyntaxError)
            self.needs_rebuild = True
            if self.read_only:  # a reader's copy is rebuilt in memory; a writer sets the files aside
                log.info("%s: dense index unreadable (%s); it is rebuilt", self.directory, exc)
                return
            with contextlib.suppress(OSError):
                self.damage = (str(exc) or type(exc).__name__, set_aside(self.directory))
            return
        self._mat, self._ids, self._docs, self._scopes = mat, list(ids), list(docs), list(scopes)

    def flush(self) -> None:
        """Persist atomically; a no-op when nothing changed since the last flush."""
        with self._lock:
            if not self._dirty or self.read_only:
                return
            self._compact()
            self.directory.mkdir(parents=True, exist_ok=True)
            write_whole(
                self._vec_path,
                self._vec_path.with_name(f"vectors.tmp{os.getpid()}.npy"),
                lambda fh: np.save(fh, self._mat, allow_pickle=False),
                binary=True,
            )
            rows = {
                "format": FORMAT,
                "dim": self.dim,
                "ids": self._ids,
                "docs": self._docs,
                "scopes": self._scopes,
            }
            tmp = self._rows_path.with_name(f"rows.json.tmp{os.getpid()}")
            tmp.write_text(json.dumps(rows, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
            os.replace(tmp, self._rows_path)  # written last: its stamp marks a complete flush
            self._seen = file_stamp(self._rows_path)
            self._dirty_path.unlink(missing_ok=True)
            self._dirty = False
            self.needs_rebuild = False

    def _changed(self) -> None:
        if not self._dirty:
            if not self.read_only:
                self.directory.mkdir(parents=True, exist_ok=True)
                self._dirty_path.touch()  # a crash before flush() leaves it: rebuild on next open
            self._dirty = True
        self._index = None
        self._masks = {}

    def set_writer(self, writer: bool) -> None:
        """This process took (True) or gave up (False) the data folder's writer lock."""
        with self._lock:
            self.read_only = not writer
            if writer and self._dirty:  # a copy rebuilt in memory while read-only: flushed soon
                self.directory.mkdir(parents=True, exist_ok=True)
                self._dirty_path.touch()

    def reload_if_changed(self) -> bool:
        """Take what another process flushed since this one last read or wrote the files.
        Unflushed changes of a writer are never dropped; a half-written or damaged state on disk
        (another writer mid-flush) leaves the copy in memory as it is. True if reloaded."""
        with self._lock:
            if (self._dirty and not self.read_only) or file_stamp(self._rows_path) == self._seen:
                return False
            fresh = DenseIndex(self.directory, self.dim, read_only=True)
            if fresh.needs_rebuild:
                return False
            for name, value in vars(fresh).items():
                if name not in ("_lock", "read_only"):
                    setattr(self, name, value)
            return True

    # -- updates -----------------------------------------------------------------------------
    # Writes only append rows or mark them dead (a re-index touches many documents one by one);
    # the matrix is rebuilt once, by the next search or flush (``_compact``).
    def clear(self) -> None:
        with self._lock:
            self._mat = np.zeros((0, self.dim), dtype=np.float32)
            self._ids, self._docs, self._scopes = [], [], []
            self._pending, self._dead = [], set()
            self._doc_rows = {}
            self._changed()

    def upsert(
        self, ids: Sequence[str], doc_ids: Sequence[str], scopes: Sequence[str], vectors: np.ndarray
    ) -> None:
        """Add chunk vectors, replacing every previously held chunk of their documents."""
        if not len(ids):
            return
        vecs = np.asarray(vectors, dtype=np.float32).reshape(len(ids), self.dim)
        with self._lock:
            self._delete(set(doc_ids))
            rows = self._rows_of()
            for cid, doc, scope in zip(ids, doc_ids, scopes):
                rows.setdefault(doc, []).append(len(self._ids))
                self._ids.append(cid)
                self._docs.append(doc)
                self._scopes.append(scope)
            self._pending.append(vecs)
            self._changed()

    def delete_docs(self, doc_ids: Iterable[str]) -> None:
        with self._lock:
            if self._delete(set(doc_ids)):
                self._changed()

    def _delete(self, doc_ids: set[str]) -> bool:
        rows = self._rows_of()
        gone = [r for d in doc_ids for r in rows.pop(d, ())]
        self._dead.update(gone)
        return bool(gone)

    def _compact(self) -> None:
        """Fold appended vectors in and drop deleted rows (one copy of the matrix)."""
        if not self._pending and not self._dead:
            return
        mat = np.concatenate([self._mat, *self._pending]) if self._pending else self._mat
        if self._dead:
            keep = np.array([r for r in range(len(self._ids)) if r not in self._dead], dtype=np.int64)
            mat = mat[keep]
            self._ids = [self._ids[r] for r in keep]
            self._docs = [self._docs[r] for r in keep]
            self._scopes = [self._scopes[r] for r in keep]
            self._doc_rows = None
        self._mat = np.ascontiguousarray(mat, dtype=np.float32)
        self._pending, self._dead = [], set()
        self._index = None
        self._masks = {}

    # -- reading -----------------------------------------------------------------------------
    def _rows_of(self) -> dict[str, list[int]]:
        if self._doc_rows is None:
            rows: dict[str, list[int]] = {}
            for r, d in enumerate(self._docs):
                rows.setdefault(d, []).append(r)
            self._doc_rows = rows
        return self._doc_rows

    def __len__(self) -> int:
        with self._lock:
            self._compact()
            return len(self._ids)

    @property
    def nbytes(self) -> int:
        return len(self) * self.dim * 4

    def doc_ids(self) -> set[str]:
        with self._lock:
            self._compact()
            return set(self._rows_of())

    def vectors_of(self, chunk_ids: Iterable[str]) -> dict[str, np.ndarray]:
        """The held vectors of these chunks (unknown ids are left out)."""
        with self._lock:
            self._compact()
            if self._index is None:
                self._index = {cid: r for r, cid in enumerate(self._ids)}
            rows = {cid: self._index.get(cid) for cid in chunk_ids}
            return {cid: self._mat[r] for cid, r in rows.items() if r is not None}

    def scores(self, queries: np.ndarray, scopes: set[str] | None = None) -> DenseScores:
        """Cosine of every chunk for each query (rows outside ``scopes`` get -inf)."""
        q = np.asarray(queries, dtype=np.float32).reshape(-1, self.dim)
        with self._lock:
            self._compact()
            if self._index is None:
                self._index = {cid: r for r, cid in enumerate(self._ids)}
            sims = q @ self._mat.T  # (queries, chunks)
            if scopes is not None:
                mask = self._mask(frozenset(scopes))
                if not mask.all():
                    sims[:, ~mask] = -np.inf
            return DenseScores(sims, self._ids, self._docs, self._index, self._rows_of())

    def _mask(self, scopes: frozenset[str]) -> np.ndarray:
        mask = self._masks.get(scopes)
        if mask is None:
            mask = np.fromiter((s in scopes for s in self._scopes), dtype=bool, count=len(self._scopes))
            self._masks[scopes] = mask
        return mask


class DenseScores:
    """The similarities of one search, with the lookups a retriever needs. Safe against writes
    made meanwhile by another thread: those only append rows past ``sims`` or replace the lists."""

    def __init__(
        self,
        sims: np.ndarray,
        ids: list[str],
        docs: list[str],
        index: dict[str, int],
        doc_rows: dict[str, list[int]],
    ) -> None:
        self.sims = sims
        self.ids = ids
        self.docs = docs
        self.index = index
        self.doc_rows = doc_rows

    def top(self, qi: int, k: int) -> list[tuple[str, float]]:
        """The k most similar visible chunks of query ``qi``, best first."""
        row = self.sims[qi]
        k = min(k, int(np.isfinite(row).sum()))
        if k <= 0:
            return []
        part = np.argpartition(-row, k - 1)[:k] if k < len(row) else np.arange(len(row))
        part = part[np.argsort(-row[part], kind="stable")]
        return [(self.ids[r], float(row[r])) for r in part]

    def of(self, qi: int, chunk_id: str) -> float | None:
        r = self.index.get(chunk_id)
        if r is None or not np.isfinite(self.sims[qi, r]):
            return None
        return float(self.sims[qi, r])

    def best_of_doc(self, qi: int, doc_id: str) -> tuple[str, float] | None:
        """The document's most similar chunk and its cosine."""
        width = self.sims.shape[1]
        rows = [r for r in self.doc_rows.get(doc_id, ()) if r < width]
        if not rows:
            return None
        vals = self.sims[qi, rows]
        j = int(np.argmax(vals))
        if not np.isfinite(vals[j]):
            return None
        return self.ids[rows[j]], float(vals[j])
