"""`kdesk bench keyword`: plain whole-document BM25 baselines to hold the app's keyword ranking against.

Each corpus entry is one BM25 document (title + text: no chunking, no embedding), indexed by
bm25s with its default k1/b under each tokenizer variant. Every variant gives English (and any
other alphabetic run) the app's analysis (lowercased, STOPWORDS_EN dropped, Snowball stemmed with
PyStemmer), so only Chinese runs differ:

- ``jieba``: jieba words (HMM on, like the app)
- ``bigram``: overlapping character bigrams (a 1-character run stays as itself)
- ``chars+bigrams``: single characters plus bigrams
- ``union``: jieba words plus bigrams
- ``app``: the app's own analysis as it is when the run starts (``bm25.tokenize`` for documents,
  ``bm25.query_terms`` for questions: name terms for Latin pieces of Chinese text, and a Chinese
  run's words and bigrams weighted to count as its words); the others weigh every term 1

Metrics: nDCG@10 and Recall@10 over the judged queries, overall and per query ``kind`` (an
optional field of queries.jsonl). Documents sharing no term with the query are not ranked, as in
the app. Speed: tokenizing + indexing the corpus in seconds, and the query p50 in ms (tokenize,
score every document, take the top 10), one query at a time after a warm-up.
"""

from __future__ import annotations

import logging
import os
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kdesk_lab.retrieval import judged_queries, load_beir, ndcg_at, recall_at

TOKENIZERS = ("jieba", "bigram", "chars+bigrams", "union", "app")
K = 10
NO_KIND = "(none)"  # queries without a kind when others have one

# Our own copy of the app's script split, so the baselines stay fixed while bm25.py changes.
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN_RE = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")
_CJK_RE = re.compile(rf"[{_CJK}]")


def _bigrams(run: str) -> list[str]:
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _jieba_words(run: str) -> list[str]:
    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba.lcut(run, HMM=True)


# How each variant splits a Chinese run of 2+ characters (a 1-character run is always itself).
_CJK_SPLITS: dict[str, Callable[[str], list[str]]] = {
    "jieba": _jieba_words,
    "bigram": _bigrams,
    "chars+bigrams": lambda run: list(run) + _bigrams(run),
    "union": lambda run: _jieba_words(run) + _bigrams(run),
}


class BaselineTokenizer:
    """The app's English analysis plus one of the Chinese splits above."""

    def __init__(self, variant: str) -> None:
        import Stemmer  # PyStemmer

        from desktop_app.core.library.text_analysis import STOPWORDS_EN

        self._split = _CJK_SPLITS[variant]
        self._stopwords = STOPWORDS_EN
        self._stemmer = Stemmer.Stemmer("english")
        self._cache: dict[str, str] = {}  # as in the app: stemming dominates English tokenizing

    def _stem(self, word: str) -> str:
        stem = self._cache.get(word)
        if stem is None:
            stem = self._cache[word] = self._stemmer.stemWord(word)
        return stem

    def __call__(self, text: str) -> list[str]:
        tokens: list[str] = []
        for match in _TOKEN_RE.finditer(text.lower()):
            run = match.group()
            if _CJK_RE.match(run):
                if len(run) == 1:
                    tokens.append(run)
                else:
                    tokens.extend(self._split(run))
            elif run not in self._stopwords:
                tokens.append(self._stem(run))
        return tokens


def make_tokenizer(name: str) -> Callable[[str], list[str]]:
    if name == "app":
        from desktop_app.core.library import bm25

        return bm25.tokenize  # looked up now: follows whatever bm25.py is at run time
    if name not in _CJK_SPLITS:
        raise ValueError(f"unknown tokenizer {name!r}; expected some of {', '.join(TOKENIZERS)}")
    return BaselineTokenizer(name)


# ------------------------------------------------------------------------------------ results
@dataclass
class KindResult:
    queries: int
    ndcg_at_10: float
    recall_at_10: float


@dataclass
class TokenizerResult:
    ndcg_at_10: float
    recall_at_10: float
    index_seconds: float  # tokenizing the corpus + building the bm25s index
    tokenize_seconds: float  # the tokenizing part of it
    query_p50_ms: float
    vocabulary: int  # distinct terms in the index
    terms_per_document: float
    kinds: dict[str, KindResult] = field(default_factory=dict)


@dataclass
class KeywordBenchResult:
    dataset: str
    split: str
    documents: int
    queries: int
    kinds: dict[str, int]  # kind -> judged queries; empty when queries carry no kind
    app_tokenizer_version: str | None  # bm25.TOKENIZER_VERSION when the run started
    load_average: list[float]  # os.getloadavg() at the start: timings depend on it
    tokenizers: dict[str, TokenizerResult] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def query_analyzer(name: str, tok: Callable[[str], list[str]]) -> Callable[[str], tuple[list[str], list[float]]]:
    """A question's terms and weights: the app's own weighting for ``app``, plain (all 1) otherwise."""
    if name == "app":
        from desktop_app.core.library import bm25

        return bm25.query_terms
    return lambda text: (terms := tok(text), [1.0] * len(terms))


def _ranked(model, doc_ids: list[str], query: tuple[list[str], list[float]]) -> list[str]:
    import numpy as np

    from desktop_app.core.library.bm25 import weighted_scores

    scores = weighted_scores(model, *query)
    if scores is None:
        return []
    candidates = np.flatnonzero(scores > 0)
    if candidates.size > K:  # keep every document tied with the 10th, then break ties exactly
        kth = np.partition(scores[candidates], -K)[-K]
        candidates = candidates[scores[candidates] >= kth]
    order = candidates[np.lexsort((candidates, -scores[candidates]))][:K]  # ties: corpus order
    return [doc_ids[i] for i in order]


def run_keyword_bench(
    beir_dir: Path,
    tokenizers: Sequence[str] = TOKENIZERS,
    split: str = "test",
    limit_queries: int | None = None,
    log: Callable[[str], None] = lambda m: print(m, file=sys.stderr),
) -> KeywordBenchResult:
    """Index the whole documents of a BEIR folder with plain bm25s under each tokenizer."""
    import bm25s

    # bm25s sets its logger to DEBUG on import: give the level back to the caller's set-up.
    logging.getLogger("bm25s").setLevel(logging.NOTSET)
    for name in tokenizers:
        if name not in TOKENIZERS:
            raise ValueError(f"unknown tokenizer {name!r}; expected some of {', '.join(TOKENIZERS)}")
    if not tokenizers:
        raise ValueError("no tokenizer to evaluate")
    data = load_beir(beir_dir, split)
    qids = judged_queries(data, beir_dir, split, limit_queries)
    kind_of = data.kinds
    by_kind: dict[str, list[str]] = {}
    if any(q in kind_of for q in qids):
        for qid in qids:
            by_kind.setdefault(kind_of.get(qid, NO_KIND), []).append(qid)

    from desktop_app.core.library import bm25 as app_bm25

    result = KeywordBenchResult(
        dataset=Path(beir_dir).name,
        split=split,
        documents=len(data.corpus),
        queries=len(qids),
        kinds={k: len(v) for k, v in sorted(by_kind.items())},
        app_tokenizer_version=getattr(app_bm25, "TOKENIZER_VERSION", None),
        load_average=[round(x, 2) for x in os.getloadavg()],
    )
    doc_ids = list(data.corpus)
    for name in dict.fromkeys(tokenizers):
        tok = make_tokenizer(name)
        tok("warm up 预热")  # jieba's dictionary loads on first use (~1 s): not part of indexing
        log(f"{name}: indexing {len(doc_ids)} documents ...")
        t0 = time.perf_counter()
        # Title and text tokenized apart, as the app's document model adds heading and text terms.
        docs = [tok(title) + tok(text) if title else tok(text) for title, text in data.corpus.values()]
        tokenize_seconds = time.perf_counter() - t0
        model = bm25s.BM25()
        model.index([d or [""] for d in docs], show_progress=False)  # "" keeps an empty doc valid
        index_seconds = time.perf_counter() - t0
        vocabulary = len({t for d in docs for t in d})
        terms_per_doc = statistics.fmean(len(d) for d in docs) if docs else 0.0
        del docs

        analyze = query_analyzer(name, tok)
        _ranked(model, doc_ids, analyze(data.queries[qids[0]]))  # warm-up
        nd: dict[str, float] = {}
        r10: dict[str, float] = {}
        times: list[float] = []
        for qid in qids:
            t0 = time.perf_counter()
            ranked = _ranked(model, doc_ids, analyze(data.queries[qid]))
            times.append((time.perf_counter() - t0) * 1000)
            nd[qid] = ndcg_at(ranked, data.qrels[qid], K)
            r10[qid] = recall_at(ranked, data.qrels[qid], K)
        kinds = {
            kind: KindResult(
                queries=len(ids),
                ndcg_at_10=round(statistics.fmean(nd[q] for q in ids), 4),
                recall_at_10=round(statistics.fmean(r10[q] for q in ids), 4),
            )
            for kind, ids in sorted(by_kind.items())
        }
        tr = result.tokenizers[name] = TokenizerResult(
            ndcg_at_10=round(statistics.fmean(nd.values()), 4),
            recall_at_10=round(statistics.fmean(r10.values()), 4),
            index_seconds=round(index_seconds, 2),
            tokenize_seconds=round(tokenize_seconds, 2),
            query_p50_ms=round(statistics.median(times), 2),
            vocabulary=vocabulary,
            terms_per_document=round(terms_per_doc, 1),
            kinds=kinds,
        )
        log(f"{name}: nDCG@10 {tr.ndcg_at_10:.4f}, indexed in {tr.index_seconds:.1f} s")
    return result


def format_keyword_result(r: KeywordBenchResult) -> str:
    """One row per tokenizer: overall nDCG@10, R@10, nDCG@10 per query kind, then the timings."""
    kinds = list(r.kinds)
    heads = [f"{k} ({n})" for k, n in r.kinds.items()]
    name_w = max([len("tokenizer"), *(len(n) for n in r.tokenizers)])
    kind_w = [max(8, len(h)) for h in heads]
    lines = [
        f"{r.dataset} ({r.split}): {r.documents} whole documents, {r.queries} queries, plain bm25s "
        f"(default k1/b); app tokenizer {r.app_tokenizer_version or '?'}; load average "
        + " ".join(f"{x:.2f}" for x in r.load_average),
    ]
    if kinds:
        lines.append("per-kind columns: nDCG@10 of that kind's queries (query count in brackets)")
    lines.append(
        f"{'tokenizer':<{name_w}} {'nDCG@10':>8} {'R@10':>7} "
        + "".join(f"{h:>{w}} " for h, w in zip(heads, kind_w))
        + f"{'index s':>8} {'p50 ms':>7} {'vocab':>8}"
    )
    for name, t in r.tokenizers.items():
        lines.append(
            f"{name:<{name_w}} {t.ndcg_at_10:>8.4f} {t.recall_at_10:>7.4f} "
            + "".join(f"{t.kinds[k].ndcg_at_10:>{w}.4f} " for k, w in zip(kinds, kind_w))
            + f"{t.index_seconds:>8.2f} {t.query_p50_ms:>7.2f} {t.vocabulary:>8}"
        )
    return "\n".join(lines)
