"""The vector store: one Chroma collection per (embedding model, dimension), cosine space.

Keying collections by model id and dimension means switching models never mixes vectors: the new
model simply gets a new, empty collection. How Chroma is reached (embedded, a server, one library's
namespace on a shared server) is chroma_client.py's business.
"""

from __future__ import annotations

import functools
import logging
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from desktop_app.core.library import diskspace, reasons
from desktop_app.core.library.chroma_client import LibraryClient, StoreError, refresh_embedded
from desktop_app.core.library.damage import StoreDamaged, damage_of
from desktop_app.core.library.documents import Chunk, Hit
from desktop_app.core.library.seals import Sealer
from desktop_app.core.messages import message

log = logging.getLogger(__name__)

# Chunks per upsert call. Chroma costs less per chunk in larger calls (embedded, 13k-chunk
# collection: 1.6 ms a chunk in 256-chunk calls, 2.7 ms in 32-chunk calls), but its embedded Rust
# core holds the GIL for a whole call: a window sharing the process gets the small slices.
UPSERT_SLICE = 256
UPSERT_SLICE_INTERACTIVE = 32


# -- libraries --------------------------------------------------------------------------------------


def _meta(chunk: Chunk) -> dict[str, Any]:
    # Chroma metadata values cannot be None or lists: page -1 means "no page".
    return {
        "doc_id": chunk.doc_id,
        "source": chunk.source,
        "page": chunk.page if chunk.page is not None else -1,
        "heading_path": " > ".join(chunk.heading_path),
        "chunk_index": chunk.chunk_index,
        "total_chunks": chunk.total_chunks,
        "char_start": chunk.char_start,
        "char_end": chunk.char_end,
        "section_index": chunk.section_index,
        "scope": chunk.scope,
        "lang": chunk.lang,
        "ocr": chunk.ocr,
    }


def hit_from(chunk_id: str, text: str, meta: dict[str, Any], distance: float | None = None) -> Hit:
    page = int(meta.get("page", -1))
    heading = str(meta.get("heading_path", "") or "")
    vector_score = None if distance is None else float(1.0 - distance)
    return Hit(
        chunk_id=chunk_id,
        doc_id=str(meta.get("doc_id", "")),
        text=text or "",
        source=str(meta.get("source", "")),
        page=page if page >= 0 else None,
        chunk_index=int(meta.get("chunk_index", 0)),
        total_chunks=int(meta.get("total_chunks", 0)),
        score=vector_score if vector_score is not None else 0.0,
        vector_score=vector_score,
        heading_path=heading.split(" > ") if heading else [],
        scope=str(meta.get("scope", "shared")),
        lang=str(meta.get("lang", "") or ""),
        ocr=bool(meta.get("ocr", False)),
    )


def _unreachable(exc: BaseException) -> bool:
    """A connection-level failure (server down, reset), as opposed to a usage error."""
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True
    try:
        import httpx

        return isinstance(exc, httpx.TransportError)
    except ImportError:
        return False


# A read that includes vectors another process wrote after this one loaded the embedded index fails
# with Chroma's "InternalError: ... Error finding id" until the client is refreshed (refresh_embedded;
# two `kdesk add` and a `kdesk search` in tests/reliability/test_concurrent_writers.py). Refreshed and
# tried again after each delay: the other process may still be writing the files the refresh reads.
_READ_RETRIES = (0.0, 0.3, 0.9)


def _transient(exc: BaseException) -> bool:
    return type(exc).__name__ == "InternalError" and "Error finding id" in str(exc)


def _vanished(exc: BaseException) -> bool:
    """The collection this store holds was deleted (by another client of a shared server)."""
    return type(exc).__name__ == "NotFoundError" and "does not exist" in str(exc)


def _guarded(method):
    """Turn connection failures into a StoreError that names the server, for every store call;
    a read that met vectors another process wrote is tried again on a refreshed client."""
    reads = method.__name__ not in ("upsert", "delete_docs")

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        delays = list(_READ_RETRIES) if reads else []
        reopened = False
        while True:
            try:
                return method(self, *args, **kwargs)
            except StoreError:
                raise
            except Exception as exc:
                # SQLite's "malformed" under Chroma: said as damage (a writer sets the store aside)
                why = damage_of(exc) if self.damaged_file is not None else None
                if why is not None:
                    raise StoreDamaged(self.damaged_file, why) from exc
                if delays and _transient(exc):
                    time.sleep(delays.pop(0))
                    refresh_embedded(self.client)
                    continue
                if not reopened and _vanished(exc):  # made again, empty: the next sync refills it
                    reopened = True
                    self._open()
                    continue
                if reads and self.applied is not None and hasattr(self.applied, method.__name__):
                    if diskspace.is_disk_full(exc, self.applied.path.parent):
                        self.on_disk_full(exc)
                        return getattr(self.applied, method.__name__)(self, *args, **kwargs)
                if _unreachable(exc):
                    raise StoreError(
                        message(reasons.STORE_UNREACHABLE, location=self.location, error=exc)
                    ) from exc
                if isinstance(self.client, LibraryClient):
                    self.client.check_access()  # a token revoked while the app runs: say so, not the proxy's page
                raise

    return wrapper


class ChromaStore:
    """One Chroma collection of chunks. With a ``sealer`` (seals.py) every chunk written carries
    a keyed hash, and every chunk read back (search hits, a document's chunks, vectors for the dense
    index) is checked: one that is not what this library wrote is left out and its id handed to
    ``on_foreign``."""

    def __init__(
        self,
        client,
        name: str,
        location: str = "the local index",
        *,
        upsert_slice: int = UPSERT_SLICE,
        sealer: Sealer | None = None,
        damaged_file: Path | None = None,
        chroma_sqlite: Path | None = None,
    ) -> None:
        self.client = client
        self.name = name
        self.location = location
        self.upsert_slice = max(1, upsert_slice)
        self.sealer = sealer
        # The embedded store's SQLite file (None on a server): its damage raises StoreDamaged.
        self.damaged_file = damaged_file
        # Chunks without a seal pass until the collection is sealed (written by an older release).
        self.strict = False
        self.on_foreign: Callable[[list[str]], None] = lambda chunk_ids: None
        # The embedded index's sqlite file: read directly when the disk is full (LastApplied).
        self.applied = LastApplied(chroma_sqlite, name) if chroma_sqlite is not None else None
        self.on_disk_full: Callable[[BaseException], None] = lambda exc: None
        self._open()
        try:
            self.max_batch = int(client.get_max_batch_size())
        except Exception:
            self.max_batch = 1000

    def _open(self) -> None:
        try:
            self.collection = self.client.get_or_create_collection(
                self.name,
                metadata={"hnsw:space": "cosine", "hnsw:search_ef": 128, "hnsw:construction_ef": 128},
                embedding_function=None,
            )
        except Exception as exc:
            why = damage_of(exc) if self.damaged_file is not None else None
            if why is not None:
                raise StoreDamaged(self.damaged_file, why) from exc
            if self.applied is not None and diskspace.is_disk_full(exc, self.applied.path.parent):
                self.collection = Unavailable(exc)  # reads answer from LastApplied; writes raise it
                return
            raise StoreError(message(reasons.STORE_COLLECTION, name=self.name, error=exc)) from exc

    @property
    def unavailable(self) -> bool:
        """Chroma could not be opened for the full disk: reads come from LastApplied (open again later)."""
        return isinstance(self.collection, Unavailable) or isinstance(self.client, Unavailable)

    # -- seals ---------------------------------------------------------------------------------
    @property
    def _seal_include(self) -> list[str]:
        return ["embeddings"] if self.sealer is not None else []

    def genuine(self, chunk_id: str, text: Any, meta: dict[str, Any] | None, vector: Any) -> bool:
        """Whether a chunk read back is this library's own (always, without a sealer)."""
        if self.sealer is None:
            return True
        if not self.strict and not self.sealer.sealed(meta):
            return True
        return self.sealer.check(chunk_id, text, meta, vector)

    def _sort(self, got: dict[str, Any]) -> tuple[list[int], list[int]]:
        """Positions of the genuine and of the other chunks of a ``get``/``query`` answer."""
        ids = got["ids"]
        if self.sealer is None:
            return list(range(len(ids))), []
        docs, metas, embs = got.get("documents"), got.get("metadatas"), got.get("embeddings")
        keep: list[int] = []
        other: list[int] = []
        for i, cid in enumerate(ids):
            vec = embs[i] if embs is not None else None
            genuine = self.genuine(
                cid, docs[i] if docs is not None else None, metas[i] if metas else None, vec
            )
            (keep if genuine else other).append(i)
        return keep, other

    def _keep(self, got: dict[str, Any]) -> list[int]:
        """Positions of the genuine chunks of a ``get``/``query`` answer; the others are reported."""
        keep, other = self._sort(got)
        if other:
            self.on_foreign([got["ids"][i] for i in other])
        return keep

    @_guarded
    def count(self) -> int:
        return self.collection.count()

    @_guarded
    def upsert(self, chunks: Sequence[Chunk], embeddings: np.ndarray) -> None:
        step = min(self.max_batch, self.upsert_slice)
        for start in range(0, len(chunks), step):
            part = chunks[start : start + step]
            ids = [c.id for c in part]
            vecs = np.asarray(embeddings[start : start + len(part)], dtype=np.float32)
            texts = [c.text for c in part]
            metas = [_meta(c) for c in part]
            if self.sealer is not None:  # last: the seal covers exactly what is sent
                metas = [self.sealer.seal(*row) for row in zip(ids, texts, metas, vecs)]
            self.collection.upsert(ids=ids, embeddings=vecs, documents=texts, metadatas=metas)

    @_guarded
    def delete_docs(self, doc_ids: Iterable[str]) -> None:
        ids = sorted(set(doc_ids))
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            self.collection.delete(where={"doc_id": {"$in": part}} if len(part) > 1 else {"doc_id": part[0]})

    @_guarded
    def delete_ids(self, chunk_ids: Sequence[str]) -> None:
        for start in range(0, len(chunk_ids), 500):
            self.collection.delete(ids=list(chunk_ids[start : start + 500]))

    def _metadatas(self, page: int = 5000) -> Iterator[tuple[str, dict[str, Any] | None]]:
        """(id, metadata) of every chunk, paging through the metadata only (callers are guarded)."""
        offset = 0
        while True:
            got = self.collection.get(include=["metadatas"], limit=page, offset=offset)
            metas = got.get("metadatas") or []
            yield from zip(got["ids"], metas)
            if len(metas) < page:
                return
            offset += page

    @_guarded
    def doc_counts(self) -> tuple[Counter[str], list[str]]:
        """Chunks per doc_id, and the ids of chunks without one."""
        found: Counter[str] = Counter()
        undocumented: list[str] = []
        for cid, meta in self._metadatas():
            doc = str((meta or {}).get("doc_id", "") or "")
            if doc:
                found[doc] += 1
            else:
                undocumented.append(cid)
        return found, undocumented

    @_guarded
    def documents(self) -> dict[str, tuple[str, str, int]]:
        """Each stored document: its file's name, scope and chunk count, read from the chunks'
        metadata (what rebuilds the rows of a lost manifest)."""
        found: dict[str, tuple[str, str, int]] = {}
        for _, meta in self._metadatas():
            doc = str((meta or {}).get("doc_id", "") or "")
            if doc:
                source, scope, n = found.get(doc, (str(meta.get("source", "")), str(meta.get("scope", "shared")), 0))
                found[doc] = (source, scope, n + 1)
        return found

    @_guarded
    def page(self, offset: int, limit: int) -> list[tuple[str, Any, dict[str, Any], Any]]:
        """(id, text, metadata, vector) of ``limit`` chunks from ``offset`` in the store's order."""
        got = self.collection.get(
            include=["documents", "metadatas", "embeddings"], limit=limit, offset=offset
        )
        embs = got.get("embeddings")
        return [
            (cid, got["documents"][i], got["metadatas"][i] or {}, embs[i] if embs is not None else None)
            for i, cid in enumerate(got["ids"])
        ]

    @_guarded
    def update_metadatas(self, chunk_ids: Sequence[str], metadatas: Sequence[dict[str, Any]]) -> None:
        for start in range(0, len(chunk_ids), 500):
            self.collection.update(
                ids=list(chunk_ids[start : start + 500]), metadatas=list(metadatas[start : start + 500])
            )

    @_guarded
    def doc_ids(self) -> set[str]:
        """Every doc_id with at least one stored chunk (pages through the collection)."""
        return {str(m.get("doc_id", "")) for _, m in self._metadatas() if m}

    @_guarded
    def chunks_of(self, doc_ids: Sequence[str]) -> list[Hit]:
        if not doc_ids:
            return []
        where = {"doc_id": {"$in": list(doc_ids)}} if len(doc_ids) > 1 else {"doc_id": doc_ids[0]}
        got = self.collection.get(where=where, include=["documents", "metadatas", *self._seal_include])
        ids, docs, metas = got["ids"], got["documents"], got["metadatas"]
        hits = [hit_from(ids[i], docs[i], metas[i]) for i in self._keep(got)]
        hits.sort(key=lambda h: (h.doc_id, h.chunk_index))
        return hits

    @_guarded
    def get(self, chunk_ids: Sequence[str], vectors: dict[str, np.ndarray] | None = None) -> list[Hit]:
        """Chunks by id. ``vectors``: the vectors search ranked them by (the dense index's own copy),
        checked against the seals instead of reading Chroma's; a chunk that fails with them is
        checked again with Chroma's vector (the copy may be a moment behind another process)."""
        if not chunk_ids:
            return []
        local = self.sealer is not None and vectors is not None and all(c in vectors for c in chunk_ids)
        include = ["documents", "metadatas"] + ([] if local else self._seal_include)
        got = self.collection.get(ids=list(chunk_ids), include=include)
        if local:
            got["embeddings"] = [vectors[c] for c in got["ids"]]
            keep, other = self._sort(got)
            hits = [hit_from(got["ids"][i], got["documents"][i], got["metadatas"][i]) for i in keep]
            return hits + self.get([got["ids"][i] for i in other]) if other else hits
        ids, docs, metas = got["ids"], got["documents"], got["metadatas"]
        return [hit_from(ids[i], docs[i], metas[i]) for i in self._keep(got)]

    @_guarded
    def query_ids(
        self, embeddings: np.ndarray, k: int, where: dict[str, Any] | None = None
    ) -> list[list[tuple[str, float]]]:
        """(chunk id, cosine similarity) of the nearest chunks for each query vector, best first.

        Ids and distances only: reading documents and metadata is what makes a Chroma query slow
        (SciFact, 13k chunks: 1.2 ms without them, 4-6 ms with), so callers fetch text (``get``)
        only for the hits they keep.
        """
        res = self._query(embeddings, k, where, ["distances"])
        if res is None:
            return [[] for _ in range(len(embeddings))]
        return [
            [(i, float(1.0 - d)) for i, d in zip(ids, dists)]
            for ids, dists in zip(res["ids"], res["distances"])
        ]

    def _query(self, embeddings: np.ndarray, k: int, where: dict[str, Any] | None, include: list[str]):
        """Chroma's answer for the query vectors, or None when there is nothing to search."""
        n = self.count()
        if n == 0 or len(embeddings) == 0:
            return None
        return self.collection.query(
            query_embeddings=np.asarray(embeddings, dtype=np.float32),
            n_results=min(k, n),
            where=where,
            include=include,
        )

    @_guarded
    def vectors(self, chunk_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors by chunk id (unknown ids are left out)."""
        if not chunk_ids:
            return {}
        got = self.collection.get(ids=list(chunk_ids), include=["embeddings"])
        embs = got.get("embeddings")
        if embs is None:
            return {}
        return {i: np.asarray(e, dtype=np.float32) for i, e in zip(got["ids"], embs)}

    @_guarded
    def records(
        self, doc_ids: Sequence[str] | None = None, page: int = 2000
    ) -> list[tuple[str, str, str, np.ndarray]]:
        """(chunk id, doc id, scope, vector) of every stored chunk, or of some documents' chunks."""
        out: list[tuple[str, str, str, np.ndarray]] = []

        include = ["embeddings", "metadatas"] + (["documents"] if self.sealer is not None else [])

        def take(got) -> int:
            embs = got.get("embeddings")
            metas = got.get("metadatas") or []
            if embs is None:
                return 0
            for i in self._keep(got):  # a forged vector never reaches the dense index
                meta = metas[i] or {}
                out.append(
                    (got["ids"][i], str(meta.get("doc_id", "")), str(meta.get("scope", "shared")), embs[i])
                )
            return len(got["ids"])

        if doc_ids is not None:
            ids = list(doc_ids)
            for start in range(0, len(ids), 200):
                part = ids[start : start + 200]
                where = {"doc_id": {"$in": part}} if len(part) > 1 else {"doc_id": part[0]}
                take(self.collection.get(where=where, include=include))
            return out
        offset = 0
        while True:
            n = take(self.collection.get(include=include, limit=page, offset=offset))
            if n < page:
                return out
            offset += page

    @_guarded
    def query(self, embeddings: np.ndarray, k: int, where: dict[str, Any] | None = None) -> list[list[Hit]]:
        """Nearest chunks for each query vector, best first."""
        res = self._query(embeddings, k, where, ["documents", "metadatas", "distances", *self._seal_include])
        if res is None:
            return [[] for _ in range(len(embeddings))]
        out: list[list[Hit]] = []
        for q, (ids, docs, metas, dists) in enumerate(
            zip(res["ids"], res["documents"], res["metadatas"], res["distances"])
        ):
            embs = res["embeddings"][q] if self.sealer is not None else None
            got = {"ids": ids, "documents": docs, "metadatas": metas, "embeddings": embs}
            out.append([hit_from(ids[i], docs[i], metas[i], dists[i]) for i in self._keep(got)])
        return out


class Unavailable:
    """Stands for a Chroma client or collection that could not be opened for the full disk (with
    nothing free, even opening the embedded client writes): every call raises that error."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def __getattr__(self, name: str) -> Callable[..., Any]:
        def fail(*args: Any, **kwargs: Any) -> Any:
            raise self.exc

        return fail


class LastApplied:
    """The chunks as Chroma last applied them, read from its sqlite file read-only: what search
    answers from while the disk is full. Chroma itself then answers nothing (a read first applies its
    log, which needs room: "Error sending backfill request to compactor"; with under ~32 KB free,
    "database or disk is full"), but its metadata segment holds every chunk indexed before, text and
    metadata; the vectors are the dense index's (dense.py), so search still ranks and checks seals.
    Only the reads search needs are here; the schema is chromadb 1.x's (``segments``, ``embeddings``,
    ``embedding_metadata``)."""

    DOCUMENT = "chroma:document"

    def __init__(self, path: Path, collection: str) -> None:
        self.path = Path(path)
        self.collection = collection

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=5)

    def _rows(self, where: str, params: Sequence[Any]) -> dict[str, tuple[str, dict[str, Any]]]:
        conn = self._connect()
        try:
            segment = conn.execute(
                "SELECT s.id FROM segments s JOIN collections c ON s.collection = c.id "
                "WHERE c.name = ? AND s.scope = 'METADATA'",
                (self.collection,),
            ).fetchone()
            if segment is None:
                return {}
            got: dict[str, tuple[str, dict[str, Any]]] = {}
            for cid, key, text, number, real, flag in conn.execute(
                "SELECT e.embedding_id, m.key, m.string_value, m.int_value, m.float_value, m.bool_value "
                "FROM embeddings e JOIN embedding_metadata m ON m.id = e.id "
                f"WHERE e.segment_id = ? AND {where}",
                (segment[0], *params),
            ):
                doc, meta = got.setdefault(cid, ("", {}))
                if key == self.DOCUMENT:
                    got[cid] = (text or "", meta)
                elif flag is not None:
                    meta[key] = bool(flag)
                elif number is not None:
                    meta[key] = int(number)
                elif real is not None:
                    meta[key] = float(real)
                else:
                    meta[key] = text
            return got
        finally:
            conn.close()

    def count(self, store: ChromaStore) -> int:
        conn = self._connect()
        try:
            row = conn.execute(
                "SELECT count(*) FROM embeddings e JOIN segments s ON e.segment_id = s.id "
                "JOIN collections c ON s.collection = c.id WHERE c.name = ? AND s.scope = 'METADATA'",
                (self.collection,),
            ).fetchone()
            return int(row[0])
        finally:
            conn.close()

    def get(
        self, store: ChromaStore, chunk_ids: Sequence[str], vectors: dict[str, np.ndarray] | None = None
    ) -> list[Hit]:
        """Chunks by id; with a sealer, only those whose seal holds with ``vectors`` (search's own,
        from the dense index): the others are left out, and not reported (nothing is written now)."""
        hits: list[Hit] = []
        ids = list(chunk_ids)
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            rows = self._rows(f"e.embedding_id IN ({','.join('?' * len(part))})", part)
            for cid in part:
                if cid not in rows:
                    continue
                text, meta = rows[cid]
                vector = (vectors or {}).get(cid)
                if store.sealer is not None and not (
                    vector is not None and store.genuine(cid, text, meta, vector)
                ):
                    log.warning("chunk %s left out: its seal cannot be checked while the disk is full", cid)
                    continue
                hits.append(hit_from(cid, text, meta))
        return hits
