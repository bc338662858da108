"""First-token latency of an answer, with the knowledge base and the model already loaded (what a
user waits for on the second question): question -> route -> retrieval -> first streamed token."""

from __future__ import annotations

import statistics
import time
from typing import Any

from desktop_app.core.ask.assistant import Assistant, Conversation
from desktop_app.core.desk import Desk
from desktop_app.core.events import Answer, Retrieved, RouteDecided, Token


def _rerank_log(assistant: Assistant):
    """The retriever's log of rerank stages (rerank_budget.RerankStats), None without a reranker."""
    budgeted = getattr(getattr(assistant.kb, "retriever", None), "budgeted", None)
    return budgeted.log if budgeted is not None else None


def _one(assistant: Assistant, question: str, mode: str) -> dict[str, Any]:
    log = _rerank_log(assistant)
    before = list(log) if log is not None else []
    t0 = time.perf_counter()
    marks: dict[str, float] = {}
    tokens = 0
    answer_by = None
    for ev in assistant.ask(question, Conversation(), mode=mode):
        now = (time.perf_counter() - t0) * 1000
        if isinstance(ev, RouteDecided):
            marks.setdefault("route_ms", now)
        elif isinstance(ev, Retrieved):
            marks.setdefault("retrieved_ms", now)
        elif isinstance(ev, Token):
            marks.setdefault("first_token_ms", now)
            tokens += 1
        elif isinstance(ev, Answer):
            marks["answer_ms"] = now
            answer_by = ev.by
    marks["tokens"] = tokens
    marks["answer_by"] = answer_by
    if log is not None:  # the rerank stages this question ran (one a search)
        marks["rerank"] = [st for st in log if not any(st is b for b in before)]
    return marks


def _rerank_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Candidates scored a question and the stage's time against the budget: p50, p95, and the
    share of stages over the budget by more than 20%."""
    stages = [st for r in rows for st in r.get("rerank", [])]
    if not stages:
        return {}
    ran = [st for st in stages if not st.skipped]
    ms = sorted(st.ms for st in stages)
    budget = stages[0].budget_ms
    return {
        "stages": len(stages),
        "budget_ms": budget,
        "ms_p50": round(statistics.median(ms), 1),
        "ms_p95": round(ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))], 1),
        "ms_max": round(ms[-1], 1),
        "over_budget_20pct": round(sum(m > 1.2 * budget for m in ms) / len(ms), 3),
        "skipped_decisive": sum(st.skipped == "decisive" for st in stages),
        "skipped_budget": sum(st.skipped == "budget" for st in stages),
        "scored_per_stage": [st.scored for st in stages],
        "cached_per_stage": [st.cached for st in stages],
        "scored_p50": statistics.median(st.scored + st.cached for st in ran) if ran else 0,
        "window_tokens": sorted({st.window_tokens for st in ran}),
    }


WARM_UP = "What is this library about?"


def run_latency_bench(
    desk: Desk, questions: list[str], runs: int = 3, modes: tuple[str, ...] = ("always", "auto")
) -> dict:
    """p50 of each mark over ``runs`` rounds of ``questions`` per router mode, after a warm-up
    question of its own (it loads the embedder and starts a GGUF server without putting the
    timed questions in llama.cpp's prompt cache). A later mode re-asks what an earlier one
    asked, so its answer prompts may come from that cache: time one mode per process for that."""
    assistant = desk.assistant
    warm = _one(assistant, WARM_UP, "always")
    report: dict[str, Any] = {"warm_up": warm, "runs": runs, "questions": questions, "modes": list(modes)}
    for mode in modes:
        rows = [_one(assistant, q, mode) for _ in range(runs) for q in questions]
        summary: dict[str, Any] = {}
        for key in ("route_ms", "retrieved_ms", "first_token_ms", "answer_ms"):
            values = [r[key] for r in rows if key in r]
            if values:
                summary[key + "_p50"] = round(statistics.median(values), 1)
        summary["answers_by"] = sorted({str(r["answer_by"]) for r in rows})
        rerank = _rerank_summary(rows)
        if rerank:
            summary["rerank"] = rerank
        report[mode] = summary
    # Which reranker the figures include, and any model that failed and was skipped (search went
    # on without it, so its figures are those of the fused ranking alone).
    kb = assistant.kb
    reranker = getattr(getattr(kb, "retriever", None), "reranker", None)  # tests' fakes have none
    report["reranker"] = getattr(reranker, "name", None)
    report["skipped"] = [str(why) for why in getattr(kb, "model_failures", list)()]
    return report
