"""`kdesk bench scale`: how indexing speed, query latency, memory and disk grow with the library.

One corpus mixes English and Chinese: SciFact abstracts, CMRC 2018 paragraphs and the CMU
Wikipedia QA articles (``qa.jsonl`` + ``storage/``), deterministically shuffled so that every
prefix holds all three. Asked for more documents than exist, it goes round again with distinct ids
and file names (the same text: the report says how many documents are such repeats).

One knowledge base grows step by step (1k, then 5k, then 20k documents by default): each step
writes the next documents as Markdown files (``retrieval.markdown``; not timed) and runs the app's
``KnowledgeBase.sync`` (timed), with Chroma where the desktop app runs it (a child process). At
each size it records the step's documents/s, chunks, query latency p50/p95 of the app's own
``Retriever.search`` (one query at a time, embedding included, after a warm-up) for keyword-only,
dense-only and fused retrieval (the dense side as the app would answer it at that size: exact in
memory, or Chroma's HNSW above ``retrieval.exact_dense_mb``) plus dense and fused forced onto HNSW
(the slope beyond the handover), over a fixed sample of real queries of the three sets; RSS (now
and peak) of this process and of Chroma's child; the data folder's size by part. The handover from
exact to HNSW is computed from the measured chunks per document and the embedder's dimension
(``KnowledgeBase._fit_dense``: chunks x dim x 4 bytes > exact_dense_mb).

``extrapolate`` turns the measured slopes into figures for 100k and 1M documents; ``plot_scale``
draws the curves. Both read the JSON result, so a saved run can be re-plotted.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from desktop_app.core.config import Config
from desktop_app.core.models.embeddings.base import Embedder
from kdesk_lab.index import (
    chroma_place,
    load_average,
    peak_rss_mb,
    rss_mb,
    warm_keyword_tokenizer,
)
from kdesk_lab.retrieval import (
    HNSW,
    MODES,
    _timed_calls,
    file_name,
    load_beir,
    make_bench_embedder,
    markdown,
    percentile,
)

DEFAULT_SIZES = (1000, 5000, 20000)
# Keyword-only, dense-only and fused as the app answers them; then dense and fused on HNSW.
SCALE_MODES = ("keyword", "dense", "fused", "dense" + HNSW, "fused" + HNSW)
TARGETS = (100_000, 1_000_000)
# Where the data folder's bytes go (relative to the data folder; "*" = the chunk collection).
DISK_PARTS = {
    "chroma": "index/chroma",
    "dense": "index/*/dense",
    "keyword": "index/*/bm25",
    "manifest": "index/*/manifest.sqlite3*",
    "documents": "knowledge",
}
MB = 1e6


def shared_sources() -> list[Path]:
    """SciFact, CMRC 2018 dev and the CMU Wikipedia QA articles in the shared data folder
    (``../shared/data`` beside the repository), read in place."""
    root = Path(__file__).resolve().parents[3] / "shared" / "data"
    return [root / "retrieval" / "scifact", root / "retrieval" / "cmrc2018_dev", root / "qa" / "cmu_wikiqa"]


# ------------------------------------------------------------------------------------ the corpus
@dataclass
class Source:
    name: str
    docs: list[tuple[str, str, str]]  # (id, title, text)
    queries: list[str]


def load_source(folder: Path) -> Source:
    """A BEIR folder (corpus.jsonl, queries.jsonl, qrels/) or a QA folder (qa.jsonl with
    ``question`` lines, its articles in storage/: title on the first line, text after)."""
    folder = Path(folder)
    name = folder.name
    if (folder / "corpus.jsonl").exists():
        data = load_beir(folder)
        docs = [(f"{name}-{did}", title, text) for did, (title, text) in data.corpus.items()]
        return Source(name, docs, list(dict.fromkeys(data.queries.values())))
    if (folder / "qa.jsonl").exists() and (folder / "storage").is_dir():
        questions = []
        with open(folder / "qa.jsonl", encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    questions.append(str(json.loads(line).get("question") or "").strip())
        docs, seen = [], set()
        for path in sorted((folder / "storage").iterdir()):
            if not path.is_file():
                continue
            raw = path.read_text(encoding="utf-8", errors="replace").strip()
            title, _, text = raw.partition("\n")
            digest = hashlib.sha1(raw.encode("utf-8")).hexdigest()
            if text.strip() and digest not in seen:  # the same article is stored under several names
                seen.add(digest)
                docs.append(
                    (f"{name}-{path.name.split('.')[0]}", title.replace("_", " ").strip(), text.strip())
                )
        return Source(name, docs, list(dict.fromkeys(q for q in questions if q)))
    raise ValueError(f"{folder}: neither a BEIR folder (corpus.jsonl) nor a QA folder (qa.jsonl + storage/)")


def mixed_corpus(sources: Sequence[Source], seed: int = 0) -> list[tuple[str, str, str]]:
    """Every source's documents, shuffled together (the same order on every run)."""
    docs = [d for s in sources for d in s.docs]
    random.Random(seed).shuffle(docs)
    return docs


def corpus_prefix(unique: Sequence[tuple[str, str, str]], n: int) -> list[tuple[str, str, str]]:
    """The first ``n`` documents, going round again past the end with ids ``<id>~2``, ``<id>~3``..."""
    out = []
    for i in range(n):
        did, title, text = unique[i % len(unique)]
        copy = i // len(unique)
        out.append((did if copy == 0 else f"{did}~{copy + 1}", title, text))
    return out


def query_sample(sources: Sequence[Source], n: int, seed: int = 0) -> list[str]:
    """About ``n`` real queries, an even share from each source (fewer if a source has fewer)."""
    rng = random.Random(seed)
    share, extra = divmod(n, max(1, len(sources)))
    out: list[str] = []
    for i, s in enumerate(sources):
        k = min(len(s.queries), share + (1 if i < extra else 0))
        out += rng.sample(s.queries, k)
    return out


# ------------------------------------------------------------------------------------ results
@dataclass
class QueryTimes:
    p50_ms: float
    p95_ms: float
    mean_ms: float


@dataclass
class ScaleStep:
    documents: int  # in the knowledge base after this step
    repeats: int  # of them, documents repeating an earlier one's text under another id
    added: int  # indexed by this step's sync
    seconds: float
    docs_per_s: float | None  # None: nothing was indexed (a kept work dir already had them)
    chunks: int
    chunks_added: int
    chunks_per_doc: float
    encoder_share: float | None
    dense_search: str  # "exact" (in memory) or "hnsw": what the app's dense side uses at this size
    queries: dict[str, QueryTimes]
    rss_mb: float | None
    rss_peak_mb: float | None
    chroma_rss_mb: float | None
    chroma_rss_peak_mb: float | None
    disk_mb: dict[str, float]  # part -> MB; "total" is the whole data folder
    load: list[float] = field(default_factory=list)


@dataclass
class ScaleResult:
    embedder: str
    dim: int
    exact_dense_mb: float
    handover_chunks: int  # the exact in-memory dense search hands over to HNSW above this many chunks
    handover_docs: int  # ... at the last step's chunks per document
    sources: dict[str, int]  # source -> its unique documents
    unique_docs: int
    queries: int
    queries_by_source: dict[str, int]
    chroma: str
    work_dir: str | None
    steps: list[ScaleStep] = field(default_factory=list)
    extrapolation: dict = field(default_factory=dict)
    load_start: list[float] = field(default_factory=list)
    load_end: list[float] = field(default_factory=list)
    machine_mb: float | None = None  # the machine's memory (MemTotal): where RSS stops fitting
    cores: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)


# ------------------------------------------------------------------------------------ measuring
def machine_memory_mb() -> float | None:
    """The machine's memory (MemTotal of /proc/meminfo) in MB; None where there is none."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) * 1024 / MB, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def disk_usage(data_dir: Path) -> dict[str, float]:
    """MB under the data folder by part (DISK_PARTS), "other" for the rest, "total" for all."""
    data_dir = Path(data_dir)
    sizes: dict[str, float] = {}
    counted: set[Path] = set()
    for part, pattern in DISK_PARTS.items():
        total = 0
        for top in data_dir.glob(pattern):
            for f in [top] if top.is_file() else top.rglob("*"):
                if f.is_file() and f not in counted:
                    counted.add(f)
                    total += f.stat().st_size
        sizes[part] = round(total / MB, 3)
    everything = {f: f.stat().st_size for f in data_dir.rglob("*") if f.is_file()}
    sizes["other"] = round(sum(v for f, v in everything.items() if f not in counted) / MB, 3)
    sizes["total"] = round(sum(everything.values()) / MB, 3)
    return sizes


def handover(exact_dense_mb: float, dim: int, chunks_per_doc: float) -> tuple[int, int]:
    """(chunks, documents) above which Chroma's HNSW index replaces the exact dense search."""
    chunks = int(exact_dense_mb * MB // (dim * 4)) if exact_dense_mb > 0 else 0
    return chunks, int(chunks / chunks_per_doc) if chunks_per_doc > 0 else 0


def time_queries(
    kb, embedder, config: Config, queries: Sequence[str], modes: Sequence[str]
) -> dict[str, QueryTimes]:
    """p50/p95 of ``Retriever.search`` per mode (MODES), one query at a time, after a warm-up."""
    from desktop_app.core.library.retrieval import Retriever

    out: dict[str, QueryTimes] = {}
    for mode in modes:
        use_dense, use_keyword, *_ = MODES[mode]
        on_hnsw = mode.endswith(HNSW)
        retriever = Retriever(
            kb.store,
            kb.keyword,
            embedder,
            config.retrieval,
            use_dense=use_dense,
            use_keyword=use_keyword,
            stored_scopes=kb.manifest.scopes,
            dense=None if on_hnsw else kb.dense,
        )
        top_k = config.retrieval.top_k
        retriever.search(queries[0], top_k=top_k)  # warm-up
        times = []
        for q in queries:
            t0 = time.perf_counter()
            retriever.search(q, top_k=top_k)
            times.append((time.perf_counter() - t0) * 1000)
        out[mode] = QueryTimes(
            round(percentile(times, 50), 1),
            round(percentile(times, 95), 1),
            round(statistics.fmean(times), 1),
        )
    return out


def run_scale_bench(
    sizes: Sequence[int] = DEFAULT_SIZES,
    *,
    sources: Sequence[Path] | None = None,
    config: Config | None = None,
    embedder: Embedder | None = None,
    embedder_name: str = "default",
    work_dir: Path | None = None,
    n_queries: int = 200,
    modes: Sequence[str] = SCALE_MODES,
    log: Callable[[str], None] = lambda m: print(m, file=sys.stderr),
) -> ScaleResult:
    """Grow one knowledge base to each of ``sizes`` documents in turn and measure it at each."""
    from desktop_app.core.desk import Desk

    sizes = sorted({int(s) for s in sizes if int(s) > 0})
    if not sizes:
        raise ValueError("no size to index")
    load_start = load_average()
    config = config or Config()
    loaded = [load_source(p) for p in (sources or shared_sources())]
    unique = mixed_corpus(loaded)
    if not unique:
        raise ValueError("the sources hold no documents")
    queries = query_sample(loaded, n_queries)
    if not queries:
        raise ValueError("the sources hold no queries")
    docs = corpus_prefix(unique, sizes[-1])

    tmp = None
    if work_dir is None:
        tmp = work_dir = Path(tempfile.mkdtemp(prefix="kdesk-bench-scale-"))
    work_dir = Path(work_dir)
    desk = None
    try:
        emb = embedder or make_bench_embedder(embedder_name, config, work_dir)
        desk = Desk(work_dir, config, embedder=emb, own_process=config.index.chroma_own_process)
        kb = desk.kb
        emb.embed_documents([text for _, _, text in unique[:8]])  # loads the model
        kb.store  # noqa: B018 - opens Chroma (starts its child process)
        warm_keyword_tokenizer()
        pid, chroma = chroma_place(kb)
        dim = int(emb.dim)
        result = ScaleResult(
            embedder=emb.name,
            dim=dim,
            exact_dense_mb=config.retrieval.exact_dense_mb,
            handover_chunks=0,
            handover_docs=0,
            sources={s.name: len(s.docs) for s in loaded},
            unique_docs=len(unique),
            queries=len(queries),
            queries_by_source={s.name: len(set(queries) & set(s.queries)) for s in loaded},
            chroma=chroma,
            work_dir=None if tmp is not None else str(work_dir),
            load_start=load_start,
            machine_mb=machine_memory_mb(),
            cores=os.cpu_count(),
        )
        used: set[str] = set()
        done, chunks_before = 0, kb.store.count()
        for size in sizes:
            # The user's documents, written before the clock (a kept work dir keeps its own).
            for did, title, text in docs[done:size]:
                path = kb.knowledge_dir / file_name(did, used)
                if not path.exists():
                    path.write_text(markdown(title, text), encoding="utf-8")
            done = size
            log(f"indexing up to {size} documents ...")
            t0 = time.perf_counter()
            with _timed_calls(emb, "embed_documents") as enc:
                report = kb.sync()
            seconds = time.perf_counter() - t0
            added = len(report.added) + len(report.updated)
            chunks = kb.store.count()
            step_load = load_average()
            log(f"{size} documents, {chunks} chunks; timing {len(queries)} queries x {len(modes)} modes ...")
            timings = time_queries(kb, emb, config, queries, modes)
            step = ScaleStep(
                documents=size,
                repeats=max(0, size - len(unique)),
                added=added,
                seconds=round(seconds, 2),
                docs_per_s=round(added / seconds, 2) if added and seconds > 0 else None,
                chunks=chunks,
                chunks_added=chunks - chunks_before,
                chunks_per_doc=round(chunks / size, 3),
                encoder_share=round(enc.seconds / seconds, 3) if added and seconds > 0 else None,
                dense_search="exact" if kb.opened_dense is not None else "hnsw",
                queries=timings,
                rss_mb=rss_mb(),
                rss_peak_mb=peak_rss_mb(),
                chroma_rss_mb=rss_mb(pid) if pid else None,
                chroma_rss_peak_mb=peak_rss_mb(pid) if pid else None,
                disk_mb=disk_usage(work_dir),
                load=step_load,
            )
            chunks_before = chunks
            result.steps.append(step)
            log(format_step(asdict(step)))
        result.handover_chunks, result.handover_docs = handover(
            result.exact_dense_mb, dim, result.steps[-1].chunks_per_doc
        )
    finally:
        if desk is not None:
            desk.close()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    result.load_end = load_average()
    result.extrapolation = extrapolate(result.to_dict())
    return result


# ------------------------------------------------------------------------------------ fitting
def fit(xs: Sequence[float], ys: Sequence[float], kind: str = "linear") -> tuple[float, float]:
    """Least squares ``y = a + b*x`` (``kind="log"``: ``y = a + b*ln x``); one point: a flat line."""
    pts = [(math.log(x) if kind == "log" else x, y) for x, y in zip(xs, ys) if y is not None and x > 0]
    if not pts:
        return 0.0, 0.0
    mx = statistics.fmean(p[0] for p in pts)
    my = statistics.fmean(p[1] for p in pts)
    var = sum((p[0] - mx) ** 2 for p in pts)
    b = sum((p[0] - mx) * (p[1] - my) for p in pts) / var if var > 0 else 0.0
    return my - b * mx, b


def at(line: tuple[float, float], x: float, kind: str = "linear") -> float:
    a, b = line
    return a + b * (math.log(x) if kind == "log" else x)


def growing(line: tuple[float, float], xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """A fitted line that may not shrink with more documents (noise can tilt it down): flat then."""
    if line[1] >= 0:
        return line
    vals = [y for y in ys if y is not None]
    return (statistics.fmean(vals) if vals else 0.0), 0.0


# How each figure grows with the number of documents (the plots draw the same fits).
QUERY_FIT = {mode: ("log" if mode.endswith(HNSW) else "linear") for mode in MODES}


def index_time_fit(result: dict) -> tuple[float, float]:
    """Seconds per document of each step against the documents in the index halfway through it."""
    xs, ys, before = [], [], 0
    for s in result["steps"]:
        if s["docs_per_s"]:
            xs.append((before + s["documents"]) / 2)
            ys.append(1 / s["docs_per_s"])
        before = s["documents"]
    return growing(fit(xs, ys), xs, ys)


# A query slower than this no longer feels immediate: where the product stops being interactive.
INTERACTIVE_MS = 100.0


def _series(steps: Sequence[dict]) -> dict[str, tuple[list, str]]:
    """Each figure that grows with the documents: its value per step and how it is fitted."""
    out: dict[str, tuple[list, str]] = {
        "rss_peak_mb": ([s["rss_peak_mb"] for s in steps], "linear"),
        "chroma_rss_peak_mb": ([s["chroma_rss_peak_mb"] for s in steps], "linear"),
        "disk_mb": ([s["disk_mb"]["total"] for s in steps], "linear"),
    }
    for mode in steps[-1]["queries"]:
        ys = [s["queries"].get(mode, {}).get("p95_ms") for s in steps]
        out[f"{mode}_p95_ms"] = (ys, QUERY_FIT.get(mode, "linear"))
    return out


def _crossing(line: tuple[float, float], kind: str, y: float, lo: float, hi: float) -> float | None:
    """The fewest documents in [lo, hi] at which a non-decreasing fitted line reaches ``y``."""
    if at(line, lo, kind) >= y:
        return lo
    a, b = line
    if b <= 0:
        return None
    x = (y - a) / b
    if kind == "log":
        x = math.exp(min(x, 700.0))
    return x if x <= hi else None


def extrapolate(result: dict, targets: Sequence[int] = TARGETS) -> dict:
    """Figures at ``targets`` documents from the fits over all measured sizes (see format_scale),
    the slope of each figure between consecutive sizes and of its fit, and the sizes at which a query
    passes INTERACTIVE_MS and the resident memory passes the machine's."""
    steps = result["steps"]
    if not steps:
        return {}
    n = [s["documents"] for s in steps]
    a, b = index_time_fit(result)
    rates = [s["docs_per_s"] for s in steps if s["docs_per_s"]]
    last_rate = rates[-1] if rates else None
    chunks_per_doc = steps[-1]["chunks_per_doc"]
    series = _series(steps)
    fits = {
        key: (growing(fit(n, ys, kind), n, ys), kind)
        for key, (ys, kind) in series.items()
        if all(y is not None for y in ys)
    }
    segments = []
    for i in range(1, len(steps)):
        per = (n[i] - n[i - 1]) / 1000
        seg: dict = {"from": n[i - 1], "to": n[i]}
        for key, (ys, _) in series.items():
            both = ys[i] is not None and ys[i - 1] is not None
            seg[key] = round((ys[i] - ys[i - 1]) / per, 3) if both else None
        segments.append(seg)
    out: dict = {
        "index_seconds_per_doc": {"a": a, "b": b},
        "note": "least-squares fits over all measured sizes, linear in the number of documents "
        "(query p95 on HNSW: in its logarithm); a slope measured below 0 is taken as flat",
        "slopes": {
            "per_1000_docs": segments,
            # The fits' slopes: per 1000 documents, or (fitted in log documents) per doubling.
            "fit": {
                key: {
                    "per_doubling" if kind == "log" else "per_1000_docs": round(
                        line[1] * (math.log(2) if kind == "log" else 1000), 3
                    )
                }
                for key, (line, kind) in fits.items()
            },
        },
        "targets": {},
    }
    handover_docs = result["handover_docs"]

    def app_line(mode: str, x: float) -> float | None:
        """The p95 the app would show at ``x`` documents: exact until the handover, HNSW after."""
        uses_hnsw = mode != "keyword" and (handover_docs <= 0 or x > handover_docs)
        key = f"{mode}{HNSW if uses_hnsw else ''}_p95_ms"
        return round(at(fits[key][0], x, fits[key][1]), 1) if key in fits else None

    for target in targets:
        uses_hnsw = handover_docs <= 0 or target > handover_docs
        row: dict = {
            "documents": target,
            "chunks": int(target * chunks_per_doc),
            "dense_search": "hnsw" if uses_hnsw else "exact",
            # Integral of the per-document time from 0 to the target.
            "index_hours": round((a * target + b * target * target / 2) / 3600, 2),
            "index_hours_at_last_rate": round(target / last_rate / 3600, 2) if last_rate else None,
        }
        for key, (line, kind) in fits.items():
            row[key] = round(at(line, target, kind), 1)
        # What the app would answer with at that size.
        for mode in ("dense", "fused"):
            if (value := app_line(mode, target)) is not None:
                row[f"app_{mode}_p95_ms"] = value
        out["targets"][str(target)] = row

    limits: dict = {"interactive_ms": INTERACTIVE_MS}
    for mode in ("keyword", "dense", "fused"):
        exact, hnsw = fits.get(f"{mode}_p95_ms"), fits.get(f"{mode}{HNSW}_p95_ms")
        if exact is None:
            continue
        if mode == "keyword":
            x = _crossing(exact[0], exact[1], INTERACTIVE_MS, n[0], math.inf)
        else:
            x = None
            if handover_docs > 0:
                x = _crossing(exact[0], exact[1], INTERACTIVE_MS, n[0], handover_docs)
            if x is None and hnsw is not None:
                x = _crossing(hnsw[0], hnsw[1], INTERACTIVE_MS, max(n[0], handover_docs), math.inf)
        limits[f"{mode}_p95_docs"] = None if x is None else int(x)
    machine = result.get("machine_mb") or machine_memory_mb()
    limits["machine_mb"] = machine
    if machine and "rss_peak_mb" in fits and "chroma_rss_peak_mb" in fits:
        (a1, b1), (a2, b2) = fits["rss_peak_mb"][0], fits["chroma_rss_peak_mb"][0]
        # Both processes' peaks together (past the handover the vectors move from this process's
        # memory into Chroma's HNSW index: about a wash, so one line is drawn on).
        x = _crossing((a1 + a2, b1 + b2), "linear", machine, n[0], math.inf)
        limits["memory_docs"] = None if x is None else int(x)
    out["limits"] = limits
    return out


# ------------------------------------------------------------------------------------ reporting
def _num(value, fmt: str = ".0f", none: str = "n/a") -> str:
    return none if value is None else format(value, fmt)


def format_step(s: dict) -> str:
    q = "  ".join(f"{m} {t['p50_ms']:.0f}/{t['p95_ms']:.0f}" for m, t in s["queries"].items())
    disk = ", ".join(f"{k} {v:.1f}" for k, v in s["disk_mb"].items())
    return (
        f"{s['documents']:>7} docs ({s['repeats']} repeats): +{s['added']} in {s['seconds']:.1f} s = "
        f"{_num(s['docs_per_s'], '.1f')} docs/s, encoder share {_num(s['encoder_share'], '.2f')}; "
        f"{s['chunks']} chunks ({s['chunks_per_doc']:.2f}/doc); dense search {s['dense_search']}\n"
        f"         query p50/p95 ms: {q}\n"
        f"         RSS MB now/peak: process {_num(s['rss_mb'])}/{_num(s['rss_peak_mb'])}, "
        f"Chroma child {_num(s['chroma_rss_mb'])}/{_num(s['chroma_rss_peak_mb'])}; load {s['load']}\n"
        f"         disk MB: {disk}"
    )


def format_scale(r: dict) -> str:
    sources = ", ".join(f"{k} {v}" for k, v in r["sources"].items())
    qs = ", ".join(f"{k} {v}" for k, v in r["queries_by_source"].items())
    lines = [
        f"corpus: {r['unique_docs']} unique documents ({sources}), shuffled; beyond that, repeats "
        "under other ids",
        f"embedder {r['embedder']} ({r['dim']}-d), Chroma {r['chroma']}, {r['queries']} queries ({qs}), "
        "timed one at a time as Retriever.search (embedding included, no reranker)",
        f"load average (1/5/15 min): start {r['load_start']}, end {r['load_end']}",
        f"exact in-memory dense search up to {r['exact_dense_mb']:g} MB of vectors = "
        f"{r['handover_chunks']} chunks = ~{r['handover_docs']} documents at "
        f"{r['steps'][-1]['chunks_per_doc']:.2f} chunks/doc; Chroma's HNSW index above",
        "",
    ]
    lines += [format_step(s) for s in r["steps"]]
    ex = r.get("extrapolation") or {}
    if ex.get("targets"):
        a, b = ex["index_seconds_per_doc"]["a"], ex["index_seconds_per_doc"]["b"]
        lines += [
            "",
            f"extrapolation ({ex['note']}; indexing a document takes {a * 1000:.1f} ms + {b * 1e6:.3f} ms "
            "per 1000 documents already in the index):",
        ]
        for t in ex["targets"].values():
            q = ", ".join(
                f"{m[: -len('_p95_ms')]} {v:.0f}"
                for m, v in t.items()
                if m.endswith("_p95_ms") and v is not None
            )
            lines.append(
                f"  {t['documents']:>9,} docs ~{t['chunks']:,} chunks: index {_num(t['index_hours'], '.1f')} h "
                f"({_num(t['index_hours_at_last_rate'], '.1f')} h at the last rate); peak RSS process "
                f"{_num(t.get('rss_peak_mb'))} MB, Chroma {_num(t.get('chroma_rss_peak_mb'))} MB; disk "
                f"{_num(t.get('disk_mb'))} MB; dense search {t['dense_search']}; query p95 ms: {q}"
            )
    slopes = ex.get("slopes") or {}
    if slopes.get("per_1000_docs"):
        lines += ["", "measured slopes per 1000 documents (between consecutive sizes; then the fit's):"]
        for seg in slopes["per_1000_docs"]:
            lines.append(f"  {seg['from']:>7,} -> {seg['to']:,}: " + _slopes_text(seg))
        fitted = {k: next(iter(v.values())) for k, v in slopes.get("fit", {}).items()}
        per_doubling = [k for k, v in slopes.get("fit", {}).items() if "per_doubling" in v]
        lines.append(
            f"  fit over all sizes: {_slopes_text(fitted)} ({', '.join(per_doubling)}: per doubling)"
        )
    lim = ex.get("limits") or {}
    if lim:
        over = ", ".join(
            f"{m} at ~{_num(lim.get(f'{m}_p95_docs'), ',', 'never on these slopes')}"
            for m in ("keyword", "dense", "fused")
            if f"{m}_p95_docs" in lim
        )
        lines.append(
            f"interactive: the app's query p95 passes {lim['interactive_ms']:g} ms: {over} documents; "
            f"peak RSS of both processes passes the machine's {_num(lim.get('machine_mb'))} MB at "
            f"~{_num(lim.get('memory_docs'), ',', 'n/a')} documents"
        )
    return "\n".join(lines)


def _slopes_text(values: dict) -> str:
    names = {"rss_peak_mb": "RSS", "chroma_rss_peak_mb": "Chroma RSS", "disk_mb": "disk"}
    parts = [
        f"{names.get(k, k.removesuffix('_ms'))} {'+' if v >= 0 else ''}{v:.2f} {'MB' if k in names else 'ms'}"
        for k, v in values.items()
        if k not in ("from", "to") and v is not None
    ]
    return ", ".join(parts)


# ------------------------------------------------------------------------------------ plotting
def plot_scale(result: dict, out_dir: Path) -> list[Path]:
    """PNG curves of a result (``ScaleResult.to_dict()`` or its saved JSON) against documents (log
    axes; docs/s on a linear one): the measured points and their fit (dashed, drawn on to the largest
    target), into ``out_dir``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    steps = result["steps"]
    n = [s["documents"] for s in steps]
    far = max(TARGETS[-1], n[-1])
    grid = [n[0] * (far / n[0]) ** (i / 60) for i in range(61)]
    handover_docs = result.get("handover_docs") or 0

    def fitted(ys: list, kind: str = "linear") -> Callable[[float], float] | None:
        if any(y is None for y in ys):
            return None
        line = growing(fit(n, ys, kind), n, ys)
        return lambda x: at(line, x, kind)

    def figure(
        name: str,
        title: str,
        ylabel: str,
        series: list[tuple[str, list, Callable | None]],
        ylog: bool = True,
        limit: tuple[float, str] | None = None,
    ) -> Path:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for label, ys, curve in series:
            pts = [(x, y) for x, y in zip(n, ys) if y is not None and y > 0]  # log axes
            if not pts:
                continue
            (drawn,) = ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=label)
            if curve is not None:
                xy = [(x, curve(x)) for x in grid]
                xy = [(x, y) for x, y in xy if y is not None and y > 0]
                ax.plot(
                    [p[0] for p in xy], [p[1] for p in xy], "--", color=drawn.get_color(), alpha=0.6, lw=1
                )
        if 0 < handover_docs <= far:
            ax.axvline(handover_docs, color="grey", lw=0.8, ls=":", label="exact -> HNSW dense search")
        if limit is not None:
            ax.axhline(limit[0], color="red", lw=0.8, ls=":", label=limit[1])
        ax.set_xscale("log")
        if ylog:
            ax.set_yscale("log")
        else:
            ax.set_ylim(0, ax.get_ylim()[1] * 1.25)  # room for the legend above the curve
        ax.set_xlabel("documents in the knowledge base")
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = out_dir / f"{name}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        return path

    a, b = index_time_fit(result)
    paths = [
        figure(
            "docs_per_s",
            "indexing speed of each step (fit: seconds per document linear in documents)",
            "documents / s",
            [
                (
                    "docs/s",
                    [s["docs_per_s"] for s in steps],
                    lambda x: 1 / (a + b * x) if a + b * x > 0 else None,
                )
            ],
            ylog=False,
        )
    ]
    queries = []
    for mode in steps[-1]["queries"]:
        ys = [s["queries"].get(mode, {}).get("p95_ms") for s in steps]
        queries.append((mode, ys, fitted(ys, QUERY_FIT.get(mode, "linear"))))
    paths.append(
        figure(
            "query_p95",
            "query p95 per mode (fit: linear; on HNSW: in log documents)",
            "ms",
            queries,
            limit=(INTERACTIVE_MS, f"{INTERACTIVE_MS:g} ms: no longer interactive"),
        )
    )
    machine = result.get("machine_mb") or machine_memory_mb()
    rss = [
        ("this process", [s["rss_peak_mb"] for s in steps]),
        ("Chroma child", [s["chroma_rss_peak_mb"] for s in steps]),
    ]
    paths.append(
        figure(
            "rss",
            "peak resident memory (fit: linear)",
            "MB",
            [(k, v, fitted(v)) for k, v in rss],
            limit=(machine, f"the machine's memory ({machine / 1000:.0f} GB)") if machine else None,
        )
    )
    disk = [(k, [s["disk_mb"].get(k) for s in steps]) for k in steps[-1]["disk_mb"] if k != "other"]
    paths.append(
        figure(
            "disk", "data folder on disk by part (fit: linear)", "MB", [(k, v, fitted(v)) for k, v in disk]
        )
    )
    return paths
