"""First-token latency of an answer, with the knowledge base and the model already loaded (what a
user waits for on the second question): question -> route -> retrieval -> first streamed token."""

from __future__ import annotations

import statistics
import time
from typing import Any

from desktop_app.core.ask.assistant import Assistant, Conversation
from desktop_app.core.desk import Desk
from desktop_app.core.events import Answer, Retrieved, RouteDecided, Token


def _one(assistant: Assistant, question: str, mode: str) -> dict[str, Any]:
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
    return marks


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
        report[mode] = summary
    # Which reranker the figures include, and any model that failed and was skipped (search went
    # on without it, so its figures are those of the fused ranking alone).
    kb = assistant.kb
    reranker = getattr(getattr(kb, "retriever", None), "reranker", None)  # tests' fakes have none
    report["reranker"] = getattr(reranker, "name", None)
    report["skipped"] = [str(why) for why in getattr(kb, "model_failures", list)()]
    return report
