"""The fine stage within a time budget (issue 36 item 3; ``retrieval.rerank_budget_ms``).

A full-size cross-encoder costs ~0.3-1 s a pair on a laptop's CPU, so the stage:

- skips when the fused ranking is decisive: its best document leads the next document by
  ``rerank_decisive_margin`` of the fused score (score fusion with both dense and keyword search);
  on SciFact its best document was then right far more often than a reranker makes it
  (docs/fullsize-models.md);
- scores the question with each chunk's best window, not the whole chunk: the ~64-160 model
  tokens around the words the question shares with it (text_analysis's match keys, one analyzer
  for Chinese and English), the length chosen with the number of pairs by rerank_cost.plan;
- scores the fused candidates best first in small batches, and stops before a batch whose
  estimated end passes the deadline: a loaded machine scores fewer pairs, never answers late;
- measures each batch and folds it into the cost per token (rerank_cost.CostBook, persisted);
- remembers scores per (question, chunk) in a bounded LRU, so regenerate and a repeated
  question cost nothing.

Unscored candidates follow the scored ones in their fused order: they were taken best first, so
every unscored one has weaker fused evidence than every scored one, and the cross-encoder has
vouched for none of them. Their ``score`` is set below the lowest rerank score (``rerank_score``
stays None, ``fused_score`` is kept) so that merging several queries' hits by score keeps it.
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from desktop_app.core.library.documents import Hit
from desktop_app.core.library.text_analysis import ANSWER_STOPWORDS_EN, HAN_RE, answer_stemmer, terms
from desktop_app.core.models.rerank_cost import PLANNED_SHARE, CostBook, Plan, model_key, plan

PROBE_AFTER_S = 300
CACHE_SIZE = 4096  # (question, chunk) scores kept: ~30 candidates x ~130 questions
BATCH_MAX = 4
# A batch is sized to take at most this share of the budget, so the deadline check is fine-grained.
BATCH_SHARE = 0.25
# Tokens per word unit when the reranker cannot count (XLM-R on English prose: ~1.3-1.5).
FALLBACK_TOKENS_PER_UNIT = 1.4

_UNIT_RE = re.compile(r"[A-Za-z0-9]+(?:'[a-z]+)?|[\u3400-\u4dbf\u4e00-\u9fff]")


@dataclass
class RerankStats:
    """What one rerank stage did (`kdesk bench latency` reports them)."""

    candidates: int  # fused candidates offered
    scored: int = 0  # pairs the cross-encoder scored now
    cached: int = 0  # pairs whose score came from the cache
    skipped: str = ""  # "decisive" | "budget" (not even two pairs fit) | "" (it ran)
    window_tokens: int = 0
    ms: float = 0.0  # the whole stage, windows and cache included
    budget_ms: float = 0.0


def _units(text: str) -> list[re.Match]:
    """Word units in text order: Latin words and single Chinese characters."""
    return list(_UNIT_RE.finditer(text))


def _keys(unit: str, nxt: str | None) -> list[str]:
    """The match keys a unit contributes (text_analysis.match_keys, one unit at a time)."""
    if HAN_RE.match(unit):
        return [unit, unit + nxt] if nxt is not None and HAN_RE.match(nxt) else [unit]
    low = unit.lower()
    return [] if low in ANSWER_STOPWORDS_EN else [answer_stemmer()(low)]


def best_window(query: str, text: str, max_units: int) -> str:
    """The ``max_units`` word units of ``text`` that hold the most of the question's match keys
    (distinct keys first, then occurrences), widened evenly around them; the whole text when it
    is that short. Cheap: one pass with counts, no model."""
    units = _units(text)
    if len(units) <= max_units:
        return text
    wanted = terms(query)
    keys = [
        [k for k in _keys(m.group(), units[i + 1].group() if i + 1 < len(units) else None) if k in wanted]
        for i, m in enumerate(units)
    ]
    counts: dict[str, int] = {}
    hits = 0

    def add(i: int, step: int) -> None:
        nonlocal hits
        for k in keys[i]:
            counts[k] = counts.get(k, 0) + step
            if counts[k] == 0:
                del counts[k]
            hits += step

    for i in range(max_units):
        add(i, 1)
    best, best_start = (len(counts), hits), 0
    for start in range(1, len(units) - max_units + 1):
        add(start - 1, -1)
        add(start + max_units - 1, 1)
        if (len(counts), hits) > best:
            best, best_start = (len(counts), hits), start
    if best == (0, 0):
        start = 0  # nothing matches: the chunk's beginning (its title and opening) says most
    else:
        matched = [i for i in range(best_start, best_start + max_units) if keys[i]]
        centre = (matched[0] + matched[-1]) // 2
        start = min(max(0, centre - max_units // 2), len(units) - max_units)
        # Centring must not drop a matched unit the best window held.
        start = min(start, matched[0])
        start = max(start, matched[-1] - max_units + 1)
    end = start + max_units - 1
    return text[units[start].start() : units[end].end()]


class TokenCounter:
    """Model tokens of texts: the reranker's own ``count_tokens`` (an optional capability) or an
    estimate from word units."""

    def __init__(self, reranker) -> None:
        self._count: Callable[[Sequence[str]], list[int]] | None = getattr(reranker, "count_tokens", None)

    def __call__(self, texts: Sequence[str]) -> list[int]:
        if self._count is not None and texts:
            try:
                return [int(n) for n in self._count(list(texts))]
            except Exception:  # a tokenizer that cannot count: estimate (scoring reports real failures)
                self._count = None
        return [max(1, round(len(_units(t)) * FALLBACK_TOKENS_PER_UNIT)) for t in texts]


def window_of(query: str, text: str, window_tokens: int, tokens: int) -> str:
    """``text`` cut to about ``window_tokens`` model tokens around its best match (``tokens``: its
    length in model tokens)."""
    if tokens <= window_tokens:
        return text
    n_units = len(_units(text)) or 1
    per_unit = max(tokens / n_units, 0.5)
    return best_window(query, text, max(8, int(window_tokens / per_unit)))


def decisive(hits: Sequence[Hit], margin: float) -> bool:
    """Whether the best fused candidate's document leads the next document's best by ``margin``."""
    if margin <= 0 or len(hits) < 2 or hits[0].fused_score is None:
        return False
    top = hits[0]
    other = next((h for h in hits[1:] if h.doc_id != top.doc_id), None)
    if other is None or other.fused_score is None:
        return False
    return top.fused_score - other.fused_score >= margin


class BudgetedReranker:
    """Scores a query's fused candidates with a cross-encoder within ``budget_ms`` (see the module)."""

    def __init__(self, reranker, data_dir: Path | None, device: str = "cpu") -> None:
        self.reranker = reranker
        self.key = model_key(getattr(reranker, "path", None), reranker.name, device)
        self.costs = CostBook(data_dir)
        self.count = TokenCounter(reranker)
        self._cache: OrderedDict[tuple[str, str, int], float] = OrderedDict()
        self.log: deque[RerankStats] = deque(maxlen=200)  # the latest stages, newest last
        self._warm = False
        self._lock = threading.Lock()

    def plan(self, budget_ms: float, rerank_k: int) -> Plan:
        return plan(budget_ms, self.costs.ms_per_token(self.key), rerank_k)

    def _cached(self, key: tuple[str, str, int]) -> float | None:
        with self._lock:  # searches may run on several worker threads
            score = self._cache.get(key)
            if score is not None:
                self._cache.move_to_end(key)
        return score

    def _remember(self, key: tuple[str, str, int], score: float) -> None:
        with self._lock:
            self._cache[key] = score
            self._cache.move_to_end(key)
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)

    def rerank(
        self, query: str, hits: list[Hit], budget_ms: float, rerank_k: int, margin: float
    ) -> tuple[list[Hit], RerankStats]:
        """``hits`` (fused, best first) with the best ``rerank_k`` rescored as far as the budget goes.

        Exceptions from the cross-encoder propagate (retrieval records the failure)."""
        t0 = time.perf_counter()
        hits = list(hits)
        stats = RerankStats(candidates=len(hits), budget_ms=budget_ms)
        if decisive(hits, margin):
            stats.skipped = "decisive"
            return self._done(hits, {}, stats, t0)
        if not self._warm and hits:
            # Before the clock: a lazily loaded model loads, and its first pass pays one-time costs
            # (20 ms a token measured against ~2 in steady state) that would poison the estimate.
            self.reranker.score(query, [hits[0].text[:800]])
            self._warm = True
            t0 = time.perf_counter()
        deadline = t0 + budget_ms / 1000.0
        p = self.plan(budget_ms, rerank_k)
        stats.window_tokens = p.window_tokens
        keys = [(query, h.chunk_id, hash(h.text)) for h in hits[:rerank_k]]
        scores: dict[int, float] = {}
        for i, key in enumerate(keys):
            cached = self._cached(key)
            if cached is not None:
                scores[i] = cached
        stats.cached = len(scores)
        # Cached pairs are free; the plan bounds the pairs still to score.
        unscored = [i for i in range(len(keys)) if i not in scores]
        todo = unscored[: max(0, p.pairs - stats.cached)]
        if p.pairs == 0:
            stats.skipped = "budget"
            # An estimate that allows nothing is never corrected by scoring: the top pair measures
            # again when it fits the budget alone, or when the estimate is PROBE_AFTER_S old (one
            # late stage at most that often, on a machine too busy for any pair).
            age = self.costs.age_s(self.key)
            probe = p.ms_per_pair <= budget_ms * PLANNED_SHARE or age is None or age > PROBE_AFTER_S
            todo = unscored[:1] if probe else []
        probing = stats.skipped == "budget" and bool(todo)  # past the estimate's deadline check
        if todo:
            q_tokens = self.count([query])[0] + 3  # [CLS] q [SEP] [SEP] passage [SEP]-like
            lengths = self.count([hits[i].text for i in todo])
            windows = [window_of(query, hits[i].text, p.window_tokens, n) for i, n in zip(todo, lengths)]
            cut = [j for j, (w, i) in enumerate(zip(windows, todo)) if w is not hits[i].text]
            pair_tokens = [q_tokens + n for n in lengths]
            for j, n in zip(cut, self.count([windows[j] for j in cut])):
                pair_tokens[j] = q_tokens + n
            pos = 0
            while pos < len(todo):
                cost = self.costs.ms_per_token(self.key)
                size = 1
                if cost:
                    per_pair = cost * max(pair_tokens[pos:])
                    size = int(max(1, min(BATCH_MAX, budget_ms * BATCH_SHARE // per_pair)))
                batch = range(pos, min(pos + size, len(todo)))
                expected = (cost or 0.0) * sum(pair_tokens[j] for j in batch) / 1000.0
                start = time.perf_counter()
                if start + expected > deadline and not probing:
                    break
                out = self.reranker.score(query, [windows[j] for j in batch])
                ms = (time.perf_counter() - start) * 1000
                self.costs.observe(self.key, ms, sum(pair_tokens[j] for j in batch))
                for j, s in zip(batch, out):
                    scores[todo[j]] = float(s)
                    self._remember(keys[todo[j]], float(s))
                stats.scored += len(batch)
                pos += len(batch)
            if stats.scored:
                self.costs.save()
        return self._done(hits, scores, stats, t0)

    def _done(
        self, hits: list[Hit], scores: dict[int, float], stats: RerankStats, t0: float
    ) -> tuple[list[Hit], RerankStats]:
        if len(scores) < 2:  # one score orders nothing: the fused ranking stands
            out = hits
        else:
            scored = sorted(
                (replace(hits[i], rerank_score=s, score=s) for i, s in scores.items()),
                key=lambda h: h.score,
                reverse=True,
            )
            floor = scored[-1].score - 1.0
            rest = [h for i, h in enumerate(hits) if i not in scores]
            out = scored + [replace(h, score=floor - n * 1e-3) for n, h in enumerate(rest)]
        stats.ms = (time.perf_counter() - t0) * 1000
        self.log.append(stats)
        return out, stats
