"""Two-stage retrieval over the knowledge base's chunks.

Coarse: the dense top ``coarse_k`` (Chroma, cosine) and the BM25 top ``coarse_k`` are fused by
weighted reciprocal rank fusion, ``w_dense / (k + rank_dense) + w_kw / (k + rank_kw)`` with
k = 60. Rank fusion needs no score calibration, and on the measured sets equal weights beat
Qanot's 0.7/0.3 (docs/retrieval-benchmarks.md). Every candidate carries both raw scores: the
cosine similarity of keyword-only candidates is computed from their stored vectors, the BM25
score of dense-only candidates from the keyword index, so the optional ``vector_threshold``
floor applies to all of them alike.

Fine: an optional cross-encoder rescoring the fused candidates (rerank.py); then ``top_k``.
``score`` is the rerank score when that stage ran, else the fused score.

Several queries (the image flow's feature queries) share one batched embedding call and one
Chroma query; their hits are merged by chunk, keeping each chunk's best-scoring hit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from desktop_app.core.config import RetrievalConfig
from desktop_app.core.documents import Hit

if TYPE_CHECKING:
    from desktop_app.core.embeddings.base import Embedder
    from desktop_app.core.index.bm25 import KeywordIndex
    from desktop_app.core.rerank import Reranker


_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]")
# Embedding models trained on English only: their vectors for Chinese text are noise.
ENGLISH_ONLY_MODELS = (
    "all-minilm",
    "all-mpnet",
    "paraphrase-minilm",
    "msmarco-",
    "-en-",
    "bge-small-en",
    "bge-base-en",
)


def is_multilingual(embedder) -> bool:
    """The embedder's own ``multilingual`` flag, else a guess from its name."""
    flag = getattr(embedder, "multilingual", None)
    if flag is not None:
        return bool(flag)
    name = str(getattr(embedder, "name", "")).lower()
    return not any(tag in name for tag in ENGLISH_ONLY_MODELS)


def cjk_share(text: str) -> float:
    """Fraction of a text's non-space characters that are Chinese, Japanese or Korean."""
    chars = [c for c in text if not c.isspace()]
    return sum(1 for c in chars if _CJK.match(c)) / len(chars) if chars else 0.0


def visible_scopes(scope: str | None) -> set[str]:
    """Shared chunks are visible everywhere; an assistant's own scope only to that assistant."""
    return {"shared"} if not scope or scope == "shared" else {"shared", scope}


def _chroma_where(scopes: set[str]) -> dict[str, Any]:
    return {"scope": next(iter(scopes))} if len(scopes) == 1 else {"scope": {"$in": sorted(scopes)}}


def rrf(rankings: Sequence[tuple[Sequence[str], float]], k: int = 60) -> dict[str, float]:
    """Weighted reciprocal rank fusion of ranked id lists: {id: sum(w / (k + rank))}, rank from 1."""
    fused: dict[str, float] = {}
    for ids, weight in rankings:
        if weight <= 0:
            continue
        for rank, item in enumerate(ids, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    return fused


@dataclass
class FileHit:
    """A document ranked by its best chunk ("top files")."""

    doc_id: str
    source: str
    score: float
    hits: list[Hit] = field(default_factory=list)  # its chunks among the hits, best first
    scope: str = "shared"

    def to_dict(self) -> dict:
        return {
            "doc_id": self.doc_id,
            "source": self.source,
            "score": self.score,
            "scope": self.scope,
            "hits": [h.to_dict() for h in self.hits],
        }


def dedup(hits: Sequence[Hit]) -> list[Hit]:
    """One hit per (document, chunk), the best-scoring one, best first."""
    best: dict[tuple[str, int, str], Hit] = {}
    for h in hits:
        key = (h.doc_id, h.chunk_index, h.chunk_id)
        if key not in best or h.score > best[key].score:
            best[key] = h
    return sorted(best.values(), key=lambda h: h.score, reverse=True)


def top_files(hits: Sequence[Hit], n: int | None = None) -> list[FileHit]:
    """Documents ranked by their best chunk hit; each lists its chunk hits best first."""
    files: dict[str, FileHit] = {}
    for h in sorted(hits, key=lambda h: h.score, reverse=True):
        f = files.get(h.doc_id)
        if f is None:
            files[h.doc_id] = FileHit(h.doc_id, h.source, h.score, [h], h.scope)
        else:
            f.hits.append(h)
    ranked = list(files.values())
    return ranked if n is None else ranked[:n]


class Retriever:
    """Dense + BM25 coarse stage, optional cross-encoder fine stage.

    ``store`` is the ChromaStore (its ``collection`` and ``query``); ``keyword`` the KeywordIndex.
    Either stage can be switched off (benchmarks compare them); the embedder is only touched when
    dense retrieval is on.
    """

    def __init__(
        self,
        store,
        keyword: KeywordIndex | None,
        embedder: Embedder | None,
        config: RetrievalConfig | None = None,
        reranker: Reranker | None = None,
        *,
        use_dense: bool = True,
        use_keyword: bool = True,
        stored_scopes: Callable[[], set[str]] | None = None,
    ) -> None:
        self.store = store
        # Which scopes the store holds: a Chroma query with a metadata filter is ~50x slower
        # (pre-filtered HNSW), so the filter is sent only when some stored chunk must be hidden.
        self.stored_scopes = stored_scopes
        self.keyword = keyword
        self.embedder = embedder
        self.config = config or RetrievalConfig()
        self.reranker = reranker
        self.use_dense = use_dense and embedder is not None
        self.use_keyword = use_keyword and keyword is not None
        if not (self.use_dense or self.use_keyword):
            raise ValueError("retrieval needs dense or keyword search (or both)")

    # -------------------------------------------------------------------------------- public
    def search(self, query: str, top_k: int | None = None, scope: str | None = None) -> list[Hit]:
        return self.search_many([query], top_k=top_k, scope=scope)

    def search_many(
        self, queries: Sequence[str], top_k: int | None = None, scope: str | None = None
    ) -> list[Hit]:
        """Best chunks for one or more queries, merged by chunk (best score kept), best first."""
        queries = [q.strip() for q in queries if q and q.strip()]
        top_k = top_k or self.config.top_k
        if not queries or self.store.count() == 0:
            return []
        per_query = self.candidates(queries, scope=scope, coarse_k=max(top_k, self.config.coarse_k))
        if self.reranker is not None:
            # The cross-encoder costs ~10-50 ms a pair on CPU: only the fused top coarse_k.
            n = max(top_k, self.config.coarse_k)
            per_query = [self._rerank(q, hits[:n]) for q, hits in zip(queries, per_query)]
        return dedup([h for hits in per_query for h in hits])[:top_k]

    def candidates(self, queries: Sequence[str], scope: str | None, coarse_k: int) -> list[list[Hit]]:
        """The coarse stage: fused candidates of each query, best first (threshold applied)."""
        scopes = visible_scopes(scope)
        cfg = self.config
        vectors = None
        dense: list[list[Hit]] = [[] for _ in queries]
        if self.use_dense:
            vectors = np.asarray(self.embedder.embed_queries(list(queries)), dtype=np.float32)
            hidden = self.stored_scopes is None or not self.stored_scopes() <= scopes
            dense = self.store.query(vectors, coarse_k, where=_chroma_where(scopes) if hidden else None)
        keyword: list[list[tuple[str, float]]] = [[] for _ in queries]
        if self.use_keyword:
            keyword = [self.keyword.search(q, coarse_k, scopes=scopes) for q in queries]

        both = self.use_dense and self.use_keyword
        w_dense = cfg.dense_weight if both else 1.0
        w_kw = cfg.keyword_weight if both else 1.0
        # An English-only encoder ranks Chinese queries at random and fusion would drag the
        # keyword ranking down (CMRC: 0.99 -> 0.6); such queries use the keyword ranking alone.
        english_only = both and not is_multilingual(self.embedder)
        out: list[list[Hit]] = []
        # Chunks found by BM25 alone: one Chroma get for all queries (text, metadata, vector).
        known = {h.chunk_id for hits in dense for h in hits}
        missing = sorted({cid for kw in keyword for cid, _ in kw} - known)
        fetched = self._fetch(missing, with_vectors=vectors is not None)
        for qi, query in enumerate(queries):
            by_id: dict[str, Hit] = {h.chunk_id: h for h in dense[qi]}
            for cid, _ in keyword[qi]:
                if cid not in by_id and cid in fetched:
                    hit, vec = fetched[cid]
                    vs = float(vec @ vectors[qi]) if vec is not None and vectors is not None else None
                    by_id[cid] = replace(hit, vector_score=vs)
            wd = 0.0 if english_only and keyword[qi] and cjk_share(query) >= 0.3 else w_dense
            dense_ids = [h.chunk_id for h in dense[qi]]
            fused = rrf([(dense_ids, wd), ([c for c, _ in keyword[qi] if c in by_id], w_kw)], k=cfg.rrf_k)
            if wd == 0.0:  # dense-only candidates still listed, after every keyword match
                for rank, cid in enumerate(dense_ids, start=1):
                    fused.setdefault(cid, 1e-6 / rank)
            kw_scores = dict(keyword[qi])
            if self.use_keyword:
                # BM25 scores for dense-only candidates too (0.0: no query term in the chunk).
                rest = [cid for cid in by_id if cid not in kw_scores]
                if rest:
                    kw_scores.update(self.keyword.score_chunks(query, rest))
            hits: list[Hit] = []
            for cid, f in fused.items():
                h = by_id[cid]
                if (
                    cfg.vector_threshold > 0
                    and h.vector_score is not None
                    and h.vector_score < cfg.vector_threshold
                ):
                    continue
                hits.append(
                    replace(
                        h,
                        keyword_score=kw_scores.get(cid) if self.use_keyword else None,
                        fused_score=f,
                        rerank_score=None,
                        score=f,
                    )
                )
            hits.sort(key=lambda h: h.score, reverse=True)
            out.append(hits)
        return out

    # ----------------------------------------------------------------------------- internals
    def _fetch(self, chunk_ids: list[str], with_vectors: bool) -> dict[str, tuple[Hit, np.ndarray | None]]:
        if not chunk_ids:
            return {}
        from desktop_app.core.index.store import hit_from

        include = ["documents", "metadatas"] + (["embeddings"] if with_vectors else [])
        got = self.store.collection.get(ids=chunk_ids, include=include)
        embs = got.get("embeddings") if with_vectors else None
        out: dict[str, tuple[Hit, np.ndarray | None]] = {}
        for i, (cid, doc, meta) in enumerate(zip(got["ids"], got["documents"], got["metadatas"])):
            vec = np.asarray(embs[i], dtype=np.float32) if embs is not None else None
            out[cid] = (hit_from(cid, doc, meta), vec)
        return out

    def _rerank(self, query: str, hits: list[Hit]) -> list[Hit]:
        if not hits:
            return hits
        scores = self.reranker.score(query, [h.text for h in hits])
        reranked = [replace(h, rerank_score=float(s), score=float(s)) for h, s in zip(hits, scores)]
        reranked.sort(key=lambda h: h.score, reverse=True)
        return reranked
