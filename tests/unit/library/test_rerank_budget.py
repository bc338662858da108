"""The fine stage within retrieval.rerank_budget_ms (issue 36 item 3): deadline, best windows,
score cache, decisive skip, the cost per token kept in the data folder, and what `kdesk models` says."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from desktop_app.core.config import Config
from desktop_app.core.documents import Hit
from desktop_app.core.library.rerank_budget import BudgetedReranker, best_window
from desktop_app.core.models.rerank_cost import FILE, WINDOWS, CostBook, model_key, plan
from desktop_app.core.models.status import format_status, model_status


class CountingReranker:
    """Scores by the words a text shares with the question, sleeping ``ms_per_pair`` a pair: real
    time for the deadline, and a record of what it was asked."""

    name = "counting"
    path = None
    device = "cpu"

    def __init__(self, ms_per_pair: float = 0.0) -> None:
        self.ms_per_pair = ms_per_pair
        self.calls: list[list[str]] = []

    def score(self, query, texts):
        self.calls.append(list(texts))
        time.sleep(self.ms_per_pair * len(texts) / 1000)
        words = set(query.lower().split())
        return np.array([len(words & set(t.lower().split())) for t in texts], dtype=np.float32)

    @property
    def scored(self) -> int:  # pairs scored after the warm-up pass
        return sum(len(c) for c in self.calls[1:])


def _hits(n: int, fused=None) -> list[Hit]:
    """``n`` candidates of distinct documents, best fused first."""
    fused = fused or [1.0 - i * 0.01 for i in range(n)]
    return [
        Hit(f"d{i}-chunk-0", f"d{i}", f"passage {i} about parrots", f"d{i}.md", None, 0, 1, f, fused_score=f)
        for i, f in enumerate(fused)
    ]


def test_deadline_stops_scoring_and_unscored_keep_their_fused_order(tmp_path: Path):
    slow = CountingReranker(ms_per_pair=40)
    budgeted = BudgetedReranker(slow, tmp_path)
    hits = _hits(12)
    out, stats = budgeted.rerank("parrots 3", hits, budget_ms=200, rerank_k=12, margin=0.0)
    assert 2 <= stats.scored < 12  # a slow machine gets fewer pairs...
    assert stats.ms < 200 * 1.2  # ...never a late answer
    scored, rest = out[: stats.scored], out[stats.scored :]
    assert all(h.rerank_score is not None for h in scored)
    assert [h.chunk_id for h in rest] == [h.chunk_id for h in hits[stats.scored :]]
    assert all(h.rerank_score is None for h in rest)
    assert [h.score for h in out] == sorted((h.score for h in out), reverse=True)  # merges keep it
    assert {h.chunk_id for h in scored} == {h.chunk_id for h in hits[: stats.scored]}  # best fused first


def test_window_picks_the_passage_that_matches_the_question():
    filler = "The committee met again on Tuesday and discussed the annual budget of the museum. " * 8
    answer = "Kakapo parrots breed only in years when the rimu trees fruit heavily. "
    text = filler + answer + filler
    window = best_window("When do kakapo parrots breed?", text, max_units=30)
    assert "Kakapo parrots breed only" in window and len(window) < len(text) / 4
    zh = "博物馆的委员会在周二再次开会讨论了年度预算。" * 8 + "鸮鹦鹉只在陆均松大量结果的年份繁殖。" + "委员会讨论预算。" * 8
    assert "鸮鹦鹉只在陆均松" in best_window("鸮鹦鹉什么时候繁殖？", zh, max_units=30)
    assert best_window("anything", "a short passage", max_units=30) == "a short passage"


def test_regenerate_scores_nothing_again(tmp_path: Path):
    rr = CountingReranker()
    budgeted = BudgetedReranker(rr, tmp_path)
    first, _ = budgeted.rerank("parrots 2", _hits(6), budget_ms=1000, rerank_k=6, margin=0.0)
    asked = rr.scored
    again, stats = budgeted.rerank("parrots 2", _hits(6), budget_ms=1000, rerank_k=6, margin=0.0)
    assert asked == 6 and rr.scored == asked and stats.cached == 6 and stats.scored == 0
    assert [h.chunk_id for h in again] == [h.chunk_id for h in first]
    assert [h.rerank_score for h in again] == [h.rerank_score for h in first]


def test_a_decisive_fused_ranking_skips_the_reranker(tmp_path: Path):
    rr = CountingReranker()
    budgeted = BudgetedReranker(rr, tmp_path)
    hits = _hits(5, fused=[0.95, 0.5, 0.45, 0.4, 0.3])
    out, stats = budgeted.rerank("parrots 4", hits, budget_ms=1000, rerank_k=5, margin=0.3)
    assert stats.skipped == "decisive" and rr.scored == 0 and out == hits
    close = _hits(5, fused=[0.95, 0.8, 0.45, 0.4, 0.3])  # a lead under the margin: reranked
    _, stats = budgeted.rerank("parrots 4", close, budget_ms=1000, rerank_k=5, margin=0.3)
    assert stats.skipped == "" and rr.scored == 5


def test_cost_per_token_is_kept_in_the_data_folder_and_follows_the_machine(tmp_path: Path):
    rr = CountingReranker(ms_per_pair=1)
    BudgetedReranker(rr, tmp_path).rerank("parrots 1", _hits(4), budget_ms=1000, rerank_k=4, margin=0.0)
    key = model_key(None, "counting")
    saved = json.loads((tmp_path / FILE).read_text(encoding="utf-8"))[key]
    assert saved["ms_per_token"] > 0 and saved["samples"] >= 1
    # The next session starts from it, and a slower machine moves it up.
    rr.ms_per_pair = 100
    later = BudgetedReranker(rr, tmp_path)
    assert later.costs.ms_per_token(key) == saved["ms_per_token"]
    later.rerank("parrots 2", _hits(4), budget_ms=1000, rerank_k=4, margin=0.0)
    assert CostBook(tmp_path).ms_per_token(key) > saved["ms_per_token"]


def test_plan_shortens_the_windows_before_it_drops_candidates():
    assert plan(1000, None, 30).window_tokens == WINDOWS[0]  # unknown cost: the deadline decides
    fast = plan(1000, 0.1, 30)
    assert fast.window_tokens == WINDOWS[0] and fast.pairs == 30
    slow = plan(1000, 1.5, 30)  # ~full-size bge-reranker-base on 2 cores
    assert slow.window_tokens < WINDOWS[0] and 2 <= slow.pairs < 30
    assert plan(1000, 20.0, 30).pairs == 0  # not even two pairs: the fused ranking stands


def test_kdesk_models_says_what_the_budget_allows(tiny_cross_encoder: Path, tmp_path: Path):
    cfg = Config()
    cfg.retrieval.reranker = str(tiny_cross_encoder)

    def row():
        return next(r for r in model_status(tmp_path, cfg) if r.role == "reranker")

    assert "measured at the first search" in str(row().budget)
    book = CostBook(tmp_path)
    book.observe(model_key(tiny_cross_encoder, tiny_cross_encoder.name), ms=150.0, tokens=100)
    book.save()
    line = next(x for x in format_status([row()]).splitlines() if "budget:" in x)
    p = plan(1000, 1.5, 30)
    assert f"reranks the top {p.pairs} at ~{round(p.ms_per_pair)} ms a pair" in line


def test_a_machine_too_busy_for_two_pairs_keeps_the_fused_ranking_and_measures_again_later(tmp_path: Path):
    rr = CountingReranker()
    key = model_key(None, "counting")
    book = CostBook(tmp_path)
    book.observe(key, ms=50_000.0, tokens=100)  # 500 ms a token: a pair would take over a minute
    book.save()
    budgeted = BudgetedReranker(rr, tmp_path)
    hits = _hits(6)
    out, stats = budgeted.rerank("parrots 1", hits, budget_ms=1000, rerank_k=6, margin=0.0)
    assert stats.skipped == "budget" and rr.scored == 0 and out == hits and stats.ms < 1000
    # Measured long ago: one pair measures the machine again, and the estimate falls.
    data = json.loads((tmp_path / FILE).read_text(encoding="utf-8"))
    data[key]["updated"] -= 3600
    (tmp_path / FILE).write_text(json.dumps(data), encoding="utf-8")
    again = CountingReranker()
    BudgetedReranker(again, tmp_path).rerank("parrots 2", hits, budget_ms=1000, rerank_k=6, margin=0.0)
    assert again.scored == 1 and CostBook(tmp_path).ms_per_token(key) < 500
