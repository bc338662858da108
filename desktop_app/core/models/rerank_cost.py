"""What a reranker costs on this machine, and what a time budget buys with it (issue 36 item 3).

The cost is milliseconds per token of a scored pair (question + passage, special tokens included),
measured from real scoring and kept as a moving average per model folder and device in
``<data-dir>/rerank_cost.json``: a new machine, a busier one or a faster runtime moves it within a
few searches. ``plan`` turns a budget and that cost into how many candidates to score and how long
each pair's passage may be; retrieval (library/rerank_budget.py) follows the plan and stops at the
deadline whatever the plan said, so a wrong estimate costs pairs, never time.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from desktop_app.core.messages import Text, message
from desktop_app.core.models import reasons

log = logging.getLogger(__name__)

FILE = "rerank_cost.json"
# Weight of the newest measurement: quick to fall, slower to rise. An estimate too low costs
# nothing (the deadline stops scoring), one too high skips reranking, so one slow outlier (a
# first pass, a burst of load) must not shut the stage off.
ALPHA_DOWN = 0.5
ALPHA_UP = 0.2
# Passage lengths a pair may take (model tokens), longest first: the longest that lets MIN_PAIRS fit.
WINDOWS = (160, 128, 96, 64)
MIN_PAIRS = 5
QUERY_TOKENS = 20  # a typical question with the pair's special tokens, for planning only
# Share of the budget planned for scoring: the rest is the stage's own work (windows, tokenizing).
PLANNED_SHARE = 0.85

_lock = threading.Lock()


@dataclass(frozen=True)
class Plan:
    """How many fused candidates to score and each one's passage length, within a budget."""

    pairs: int  # 0: not even two pairs fit (then the fused ranking stands)
    window_tokens: int
    ms_per_pair: float  # the estimate for a pair of this length; 0.0 when the cost is unknown


def model_key(path: Path | str | None, name: str, device: str = "cpu") -> str:
    """One cost per model folder and device."""
    where = str(Path(path).resolve()) if path else name
    return f"{where}@{device}"


class CostBook:
    """Measured ms per token of each reranker, read from and written to the data folder."""

    def __init__(self, data_dir: Path | None) -> None:
        self.path = Path(data_dir) / FILE if data_dir is not None else None
        self._costs: dict[str, dict] = self._read()

    def _read(self) -> dict[str, dict]:
        if self.path is None:
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {k: v for k, v in data.items() if isinstance(v, dict) and v.get("ms_per_token", 0) > 0}

    def ms_per_token(self, key: str) -> float | None:
        """The moving average for ``key``, None before its first measurement."""
        with _lock:
            rec = self._costs.get(key)
        return float(rec["ms_per_token"]) if rec else None

    def age_s(self, key: str) -> float | None:
        """Seconds since ``key`` was last measured, None before its first measurement."""
        with _lock:
            rec = self._costs.get(key)
        return time.time() - float(rec.get("updated", 0)) if rec else None

    def observe(self, key: str, ms: float, tokens: int) -> float:
        """Fold one measured batch (``ms`` to score ``tokens`` tokens) into the average; returns it."""
        if tokens <= 0 or ms <= 0:
            return self.ms_per_token(key) or 0.0
        sample = ms / tokens
        with _lock:
            rec = self._costs.get(key)
            if rec is None:
                value = sample
            else:
                old = float(rec["ms_per_token"])
                alpha = ALPHA_DOWN if sample < old else ALPHA_UP
                value = (1 - alpha) * old + alpha * sample
            self._costs[key] = {
                "ms_per_token": round(value, 5),
                "samples": (rec or {}).get("samples", 0) + 1,
                "updated": round(time.time(), 1),
            }
        return value

    def save(self) -> None:
        """Write the averages (after a rerank stage: one small file write per search)."""
        if self.path is None:
            return
        with _lock:
            text = json.dumps(self._costs, indent=1, sort_keys=True)
        try:
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(self.path)
        except OSError as exc:  # a read-only data folder: this session still learns
            log.info("could not save the rerank cost in %s: %s", self.path, exc)


def budget_text(
    budget_ms: float, rerank_k: int, path: Path | str | None, name: str, device: str, data_dir: Path | None
) -> Text:
    """What the budget allows with this reranker on this machine, for `kdesk models` and Settings."""
    ms_per_token = CostBook(data_dir).ms_per_token(model_key(path, name, device))
    if ms_per_token is None:
        return message(reasons.RERANK_BUDGET_UNMEASURED, budget=int(budget_ms))
    p = plan(budget_ms, ms_per_token, rerank_k)
    ms = max(1, round(p.ms_per_pair))
    if p.pairs == 0:
        return message(reasons.RERANK_BUDGET_NONE, ms=ms, budget=int(budget_ms))
    return message(reasons.RERANK_BUDGET, pairs=p.pairs, ms=ms, tokens=p.window_tokens, budget=int(budget_ms))


def plan(budget_ms: float, ms_per_token: float | None, rerank_k: int) -> Plan:
    """The longest passage (WINDOWS) that lets ``MIN_PAIRS`` pairs fit the budget, and how many fit
    at that length (at most ``rerank_k``); the shortest passage when fewer fit. Unknown cost: the
    longest window and ``rerank_k`` pairs (the deadline stops the first search, which measures it)."""
    if ms_per_token is None or ms_per_token <= 0:
        return Plan(rerank_k, WINDOWS[0], 0.0)
    want = min(MIN_PAIRS, rerank_k)
    usable = budget_ms * PLANNED_SHARE
    for window in WINDOWS:
        per_pair = ms_per_token * (window + QUERY_TOKENS)
        fit = int(usable // per_pair)
        if fit >= want or window == WINDOWS[-1]:
            pairs = min(rerank_k, fit)
            return Plan(pairs if pairs >= 2 else 0, window, per_pair)
    raise AssertionError("unreachable")
