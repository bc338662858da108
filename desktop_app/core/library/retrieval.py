"""Two-stage retrieval over the knowledge base's chunks.

Coarse (``fusion = "score"``, the default): evidence is fused per document, then spread over its
chunks. Candidates are the dense top ``coarse_k`` chunks plus, for each of the BM25 top
``coarse_k`` whole documents, its best chunks by BM25 and its best chunk by meaning. Dense scores
come from an exact in-memory search over every chunk vector (dense.py; Chroma's HNSW index
when the vectors outgrow ``exact_dense_mb``), so every candidate has its true cosine. A document's
dense score is its best chunk's cosine, min-max normalised over the candidate documents; its
keyword score the BM25 score of the whole document over the best candidate's; a chunk scores
``w_dense * dense(chunk) + w_kw * keyword(document) * (0.8 + 0.2 * share)``, ``share`` = the
chunk's BM25 over its document's best chunk's, so a document's best chunk carries the document's
fused score and its keyword-matching chunks come before the rest. On SciFact this lifts nDCG@10
from 0.707 / 0.717 (train / test, chunk-level RRF) to 0.742 / 0.741 (docs/retrieval-benchmarks.md):
BM25 over whole documents beats BM25's best chunk, and score fusion keeps how far ahead a
candidate is, which ranks throw away. ``fusion = "rrf"`` is the previous chunk-level weighted
reciprocal rank fusion (``w / (rrf_k + rank)``), kept for comparison. Every candidate carries both
raw scores, so the optional ``vector_threshold`` floor applies to all of them alike.

Fine: an optional cross-encoder rescoring the fused top ``rerank_k`` (rerank.py) within
``rerank_budget_ms`` (rerank_budget.py: best windows, best first, stopping at the deadline, skipped
when the fused ranking is decisive, scores cached); then ``top_k``. ``score`` is the rerank score
of a scored hit; unscored hits follow in fused order, their fused score in ``fused_score``.

Several queries (the image flow's feature queries) share one batched embedding call and one
dense search; their hits are merged by chunk, keeping each chunk's best-scoring hit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from desktop_app.core.config import RetrievalConfig
from desktop_app.core.library.documents import Hit
from desktop_app.core.library.languages import is_multilingual, reads, text_lang
from desktop_app.core.library.rerank_budget import BudgetedReranker
from desktop_app.core.library.scopes import chroma_where, visible_scopes
from desktop_app.core.messages import Text
from desktop_app.core.models import failures
from desktop_app.core.tasks import Cancelled

if TYPE_CHECKING:
    from desktop_app.core.library.bm25 import KeywordIndex
    from desktop_app.core.library.dense import DenseIndex, DenseScores
    from desktop_app.core.models.embeddings.base import Embedder
    from desktop_app.core.models.rerank import Reranker


# Keyword-only candidate documents enter with this many of their chunks (chunk BM25 order).
KEYWORD_CHUNKS_PER_DOC = 2
FUSIONS = ("score", "rrf")


def rrf(rankings: Sequence[tuple[Sequence[str], float]], k: int = 60) -> dict[str, float]:
    """Weighted reciprocal rank fusion of ranked id lists: {id: sum(w / (k + rank))}, rank from 1."""
    fused: dict[str, float] = {}
    for ids, weight in rankings:
        if weight <= 0:
            continue
        for rank, item in enumerate(ids, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    return fused


def dedup(hits: Sequence[Hit]) -> list[Hit]:
    """One hit per (document, chunk), the best-scoring one, best first."""
    best: dict[tuple[str, int, str], Hit] = {}
    for h in hits:
        key = (h.doc_id, h.chunk_index, h.chunk_id)
        if key not in best or h.score > best[key].score:
            best[key] = h
    return sorted(best.values(), key=lambda h: h.score, reverse=True)


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
        dense: DenseIndex | None = None,
        data_dir: Path | None = None,
        on_failure: Callable[[Text], None] | None = None,
    ) -> None:
        self.store = store
        # A model failing at search time is recorded there (models/failures.py) and told to
        # ``on_failure`` once; search goes on without it.
        self.data_dir = data_dir
        self.on_failure = on_failure
        self._rerank_worked = False
        # Which scopes the store holds: a Chroma query with a metadata filter is ~50x slower
        # (pre-filtered HNSW), so the filter is sent only when some stored chunk must be hidden.
        self.stored_scopes = stored_scopes
        self.keyword = keyword
        # Exact in-memory dense search (dense.py); None: Chroma's HNSW index answers.
        self.dense = dense
        self.embedder = embedder
        # Which languages the encoder reads (its chunks' language is asked per candidate).
        self._multilingual = embedder is not None and is_multilingual(embedder)
        self.config = config or RetrievalConfig()
        self.reranker = reranker
        # The rerank stage's budget, cost book and score cache (rerank_budget.py).
        self.budgeted = (
            BudgetedReranker(reranker, data_dir, getattr(reranker, "device", "cpu"))
            if reranker is not None
            else None
        )
        self.use_dense = use_dense and embedder is not None
        self.use_keyword = use_keyword and keyword is not None
        if not (self.use_dense or self.use_keyword):
            raise ValueError("retrieval needs dense or keyword search (or both)")
        if self.config.fusion not in FUSIONS:
            raise ValueError(f"unknown fusion {self.config.fusion!r}; expected one of {FUSIONS}")

    # -------------------------------------------------------------------------------- public
    def search(self, query: str, top_k: int | None = None, scope: str | None = None) -> list[Hit]:
        return self.search_many([query], top_k=top_k, scope=scope)

    def search_many(
        self, queries: Sequence[str], top_k: int | None = None, scope: str | None = None
    ) -> list[Hit]:
        """Best chunks for one or more queries, merged by chunk (best score kept), best first."""
        queries = [q.strip() for q in queries if q and q.strip()]
        top_k = top_k or self.config.top_k
        # The in-memory index knows its size; Chroma's count() is a 2-6 ms call on every search.
        if not queries or (len(self.dense) if self.dense is not None else self.store.count()) == 0:
            return []
        coarse_k = max(top_k, self.config.coarse_k)
        # Text is read for the candidates that can still be returned: top_k, or the reranker's pool.
        keep = max(top_k, self.config.rerank_k) if self.reranker is not None else top_k
        per_query = self.candidates(queries, scope=scope, coarse_k=coarse_k, keep=keep)
        if self.reranker is not None:
            # The cross-encoder scores at most the fused top rerank_k, within the budget.
            n = max(top_k, min(self.config.rerank_k, coarse_k))
            per_query = [self._rerank(q, hits[:n]) for q, hits in zip(queries, per_query)]
        return dedup([h for hits in per_query for h in hits])[:top_k]

    def candidates(
        self, queries: Sequence[str], scope: str | None, coarse_k: int, keep: int | None = None
    ) -> list[list[Hit]]:
        """The coarse stage: fused candidates of each query, best first (threshold applied).

        Works on ids and scores (an ids-only Chroma query, vectors read only for keyword-only
        chunks) and reads text and metadata for the ``keep`` best of each query only.
        """
        scopes = visible_scopes(scope)
        cfg = self.config
        keep = coarse_k if keep is None else keep
        by_doc = cfg.fusion == "score"
        vectors = None
        exact: DenseScores | None = None  # every chunk's cosine, when the dense index is in memory
        dense: list[list[tuple[str, float]]] = [[] for _ in queries]
        if self.use_dense:
            vectors = self._embed_queries(queries)
        if vectors is not None:
            hidden = self.stored_scopes is None or not self.stored_scopes() <= scopes
            if self.dense is not None:
                exact = self.dense.scores(vectors, scopes if hidden else None)
                dense = [exact.top(qi, coarse_k) for qi in range(len(queries))]
            else:
                dense = self.store.query_ids(vectors, coarse_k, where=chroma_where(scope) if hidden else None)
        # Keyword candidates: (chunk_id, chunk BM25) of the best documents' best chunks (or the
        # best chunks overall for chunk-level RRF).
        keyword: list[list[tuple[str, float]]] = [[] for _ in queries]
        if self.use_keyword:
            for qi, q in enumerate(queries):
                if by_doc:
                    for doc_id, _ in self.keyword.search_docs(q, coarse_k, scopes=scopes):
                        keyword[qi] += self.keyword.best_chunks(q, doc_id, KEYWORD_CHUNKS_PER_DOC)
                        if exact is not None:  # and its best chunk by meaning: its real dense score
                            best = exact.best_of_doc(qi, doc_id)
                            if best is not None:
                                keyword[qi].append((best[0], 0.0))
                else:
                    keyword[qi] = self.keyword.search(q, coarse_k, scopes=scopes)

        both = self.use_dense and self.use_keyword
        w_dense = cfg.dense_weight if both else 1.0
        w_kw = cfg.keyword_weight if both else 1.0
        # Chunks found by BM25 alone: their cosine from the stored vectors (one read for all queries).
        stored: dict[str, np.ndarray] = {}
        if vectors is not None and exact is None:
            known = {cid for hits in dense for cid, _ in hits}
            stored = self.store.vectors(sorted({cid for kw in keyword for cid, _ in kw} - known))
        ranked: list[list[tuple[str, float, float | None, float | None]]] = []
        for qi, query in enumerate(queries):
            vs: dict[str, float | None] = dict(dense[qi])
            for cid, _ in keyword[qi]:
                if cid not in vs:
                    if exact is not None:
                        vs[cid] = exact.of(qi, cid)
                        continue
                    vec = stored.get(cid)
                    vs[cid] = float(vec @ vectors[qi]) if vec is not None and vectors is not None else None
            # An encoder that cannot read the query ranks at random, and fusion would drag the
            # keyword ranking down (CMRC with English MiniLM: 0.99 -> 0.6): keyword ranking alone.
            wd = 0.0 if both and keyword[qi] and not reads(self._multilingual, text_lang(query)) else w_dense
            dense_ids = [cid for cid, _ in dense[qi] if self._reads(cid)]
            kw_scores: dict[str, float] = {}
            if self.use_keyword:
                # BM25 scores of every candidate chunk (0.0: no query term in the chunk).
                kw_scores = self.keyword.score_chunks(query, list(vs))
            if by_doc:
                fused = self._fuse_by_document(query, vs, kw_scores, wd, w_kw)
            else:
                kw_ids = [c for c, _ in sorted(keyword[qi], key=lambda cs: -cs[1])]
                fused = rrf([(dense_ids, wd), (kw_ids, w_kw)], k=cfg.rrf_k)
            if wd == 0.0:  # dense-only candidates still listed, after every keyword match
                for rank, cid in enumerate(dense_ids, start=1):
                    if not fused.get(cid):
                        fused[cid] = 1e-6 / rank
            rows = [
                (cid, f, vs.get(cid), kw_scores.get(cid) if self.use_keyword else None)
                for cid, f in fused.items()
                if not (
                    cfg.vector_threshold > 0 and vs.get(cid) is not None and vs[cid] < cfg.vector_threshold
                )
            ]
            rows.sort(key=lambda r: (r[1], r[3] or 0.0), reverse=True)
            ranked.append(rows[:keep])
        # Text and metadata for the kept candidates only (one read for all queries), checked against
        # their seals with the vectors they were ranked by when those are held here.
        kept = sorted({r[0] for rows in ranked for r in rows})
        held = self.dense.vectors_of(kept) if self.dense is not None else None
        hits_by_id = {h.chunk_id: h for h in self.store.get(kept, vectors=held)}
        return [
            [
                replace(
                    hits_by_id[cid],
                    vector_score=v,
                    keyword_score=k,
                    fused_score=f,
                    rerank_score=None,
                    score=f,
                )
                for cid, f, v, k in rows
                if cid in hits_by_id
            ]
            for rows in ranked
        ]

    def _embed_queries(self, queries: Sequence[str]) -> np.ndarray | None:
        """The queries' vectors; None when the embedder fails and keyword search can answer alone
        (dense search is then off for this retriever's life: the session, until settings change)."""
        try:
            return np.asarray(self.embedder.embed_queries(list(queries)), dtype=np.float32)
        except Cancelled:
            raise
        except Exception as exc:
            if not self.use_keyword:
                raise
            self.use_dense = False
            name = str(getattr(self.embedder, "name", "") or type(self.embedder).__name__)
            self._failed(failures.record("embedder", name, None, exc, None))
            return None

    def _failed(self, why: Text) -> None:
        if self.on_failure is not None:
            self.on_failure(why)

    def _reads(self, chunk_id: str) -> bool:
        """Whether the encoder can read the chunk's language: if not, its cosine gets no vote."""
        lang = self.keyword.lang_of(chunk_id) if self.keyword is not None else ""
        return reads(self._multilingual, lang)

    def _doc_of(self, chunk_id: str) -> str:
        doc = self.keyword.doc_of(chunk_id) if self.keyword is not None else None
        return doc or chunk_id.rsplit("-chunk-", 1)[0]

    def _fuse_by_document(
        self, query: str, vs: dict[str, float | None], kw_scores: dict[str, float], wd: float, wk: float
    ) -> dict[str, float]:
        """Chunk scores from document-level evidence (see the module docstring)."""
        doc_of = {cid: self._doc_of(cid) for cid in vs}
        # Chunks in a language the encoder cannot read have no cosine that means anything; a
        # document with none it can read is ranked by its keyword score at both weights.
        read = {cid: v for cid, v in vs.items() if v is not None and self._reads(cid)}
        dense_doc: dict[str, float] = {}
        if self.use_dense and wd > 0:
            for cid, v in read.items():
                dense_doc[doc_of[cid]] = max(dense_doc.get(doc_of[cid], -1.0), v)
        lo = min(dense_doc.values(), default=0.0)
        hi = max(dense_doc.values(), default=0.0)
        kw_doc: dict[str, float] = {}
        if self.use_keyword and wk > 0:
            # BM25 over its maximum, not min-max: a candidate with no query word keeps 0 instead of
            # being stretched by the weakest match (SciFact 0.740 -> 0.741 test, 0.740 -> 0.742 train).
            raw = self.keyword.score_docs(query, set(doc_of.values()))
            top = max(raw.values(), default=0.0)
            kw_doc = {doc: s / top for doc, s in raw.items()} if top > 0 else {}
        best_kw: dict[str, float] = {}
        for cid, doc in doc_of.items():
            best_kw[doc] = max(best_kw.get(doc, 0.0), kw_scores.get(cid, 0.0))
        fused: dict[str, float] = {}
        for cid, doc in doc_of.items():
            d = 0.0
            v = read.get(cid)
            if dense_doc and v is not None:
                d = (v - lo) / (hi - lo) if hi - lo > 1e-12 else 1.0
                d = min(1.0, max(0.0, d))
            top = best_kw.get(doc, 0.0)
            share = kw_scores.get(cid, 0.0) / top if top > 0 else 1.0
            w_kw = wk if doc in dense_doc or wd == 0 else wk + wd
            fused[cid] = wd * d + w_kw * kw_doc.get(doc, 0.0) * (0.8 + 0.2 * share)
        return fused

    # ----------------------------------------------------------------------------- internals
    def _rerank(self, query: str, hits: list[Hit]) -> list[Hit]:
        if not hits or getattr(self.reranker, "failure", None) is not None:
            return hits  # a reranker that failed this session: the fused ranking
        cfg = self.config
        try:
            reranked, stats = self.budgeted.rerank(
                query, hits, cfg.rerank_budget_ms, cfg.rerank_k, self._decisive_margin()
            )
        except Cancelled:
            raise
        except Exception as exc:  # e.g. a tokenizer whose ids the model's embedding table lacks
            name, path = self.reranker.name, getattr(self.reranker, "path", None)
            why = failures.record("reranker", name, path, exc, self.data_dir)
            # On the shared (cached) reranker: skipped for the rest of the session.
            self.reranker.failure = why
            self._failed(why)
            return hits
        # It scored: forget a failure an earlier session recorded.
        if not self._rerank_worked and stats.scored:
            self._rerank_worked = True
            failures.cleared(
                "reranker", self.reranker.name, getattr(self.reranker, "path", None), self.data_dir
            )
        return reranked

    def _decisive_margin(self) -> float:
        """The fused ranking's lead that skips the rerank: measured for score fusion of both sides."""
        both = self.use_dense and self.use_keyword
        return self.config.rerank_decisive_margin if both and self.config.fusion == "score" else 0.0
