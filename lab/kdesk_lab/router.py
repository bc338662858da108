"""Router benchmark: accuracy of the LLM path and the heuristic path on a labelled JSONL set.

Each line: {"message", "last_subject", "use_rag", "is_followup", "category", "lang"}. A route is
correct when ``use_rag`` matches; ``is_followup`` accuracy is reported beside it. The LLM path is
scored as the LLM answered: a reply that fails (timeout, unparseable JSON) counts as wrong and
is also counted under ``llm_failures`` (in the app the heuristic would step in).

A set whose lines are {"text", "lang", "kind", "history"?} (router_kinds.jsonl) is scored on the
route's kind instead (none / passages / document / library): a confusion table per path and the
accuracy per language (``run_kinds_bench``).
"""

from __future__ import annotations

import json
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from desktop_app.core.ask.router import Route, RouteError, Router, heuristic_route
from desktop_app.core.config import RouterConfig
from desktop_app.core.models.llm.base import ChatModel, LLMError

SET_PATH = Path(__file__).with_name("router_set.jsonl")


def load_set(path: Path) -> list[dict[str, Any]]:
    rows = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        if "message" not in row or "use_rag" not in row:
            raise ValueError(f"{path}:{i}: each line needs 'message' and 'use_rag'")
        rows.append(row)
    return rows


class _Score:
    def __init__(self) -> None:
        self.n = self.rag_ok = self.followup_ok = self.failures = 0
        self.by_group: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        self.ms: list[float] = []

    def add(self, row: dict, use_rag: bool | None, followup: bool | None, ms: float) -> None:
        ok = use_rag is not None and use_rag == bool(row["use_rag"])
        self.n += 1
        self.rag_ok += ok
        self.followup_ok += followup is not None and followup == bool(row.get("is_followup", False))
        self.failures += use_rag is None
        self.ms.append(ms)
        for key in (f"category:{row.get('category', '?')}", f"lang:{row.get('lang', '?')}"):
            self.by_group[key][0] += ok
            self.by_group[key][1] += 1

    def report(self) -> dict[str, Any]:
        n = max(1, self.n)
        return {
            "n": self.n,
            "use_rag_accuracy": round(self.rag_ok / n, 3),
            "is_followup_accuracy": round(self.followup_ok / n, 3),
            "failures": self.failures,
            "by_group": {k: round(v[0] / max(1, v[1]), 3) for k, v in sorted(self.by_group.items())},
            "ms_p50": round(statistics.median(self.ms), 1) if self.ms else None,
            "ms_max": round(max(self.ms), 1) if self.ms else None,
        }


def run_router_bench(
    set_path: Path,
    chat_model: ChatModel | None,
    config: RouterConfig | None = None,
    limit: int | None = None,
    model_name: str = "",
) -> dict[str, Any]:
    """Accuracy of both paths; the heuristic path runs without retrieval evidence (no KB)."""
    rows = load_set(set_path)[:limit]
    config = config or RouterConfig()
    heur, llm, hybrid = _Score(), _Score(), _Score()
    router = Router(chat_model, config)
    mistakes: list[dict[str, Any]] = []
    for row in rows:
        subject = row.get("last_subject") or None
        t0 = time.perf_counter()
        h = heuristic_route(row["message"], subject, None, config.min_hit_score)
        heur.add(row, h.use_rag, h.is_followup, (time.perf_counter() - t0) * 1000)
        if h.use_rag != bool(row["use_rag"]):
            mistakes.append({"path": "heuristic", "message": row["message"], "expected": row["use_rag"]})
        if chat_model is None:
            continue
        t0 = time.perf_counter()
        try:
            r = router.llm_route(row["message"], last_subject=subject)
            use_rag, followup = r.use_rag, r.is_followup
        except (LLMError, RouteError):
            use_rag = followup = None
            r = None
        ms = (time.perf_counter() - t0) * 1000
        llm.add(row, use_rag, followup, ms)
        # What the app does in auto mode: the LLM's route, no-document markers overriding it,
        # the heuristic when the LLM failed.
        final = router.overridden(r, row["message"]) if r is not None else h
        hybrid.add(row, final.use_rag, final.is_followup, ms)
        if use_rag != bool(row["use_rag"]):
            mistakes.append(
                {"path": "llm", "message": row["message"], "expected": row["use_rag"], "got": use_rag}
            )
    return {
        "set": str(set_path),
        "messages": len(rows),
        "model": model_name or None,
        "heuristic": heur.report(),
        "llm": llm.report() if chat_model is not None else None,
        "llm_with_markers": hybrid.report() if chat_model is not None else None,
        "mistakes": mistakes,
    }


def format_report(report: dict[str, Any]) -> str:
    lines = [f"router benchmark: {report['messages']} messages from {report['set']}"]
    for path in ("heuristic", "llm", "llm_with_markers"):
        r = report.get(path)
        if not r:
            lines.append(f"  {path:<16}  (not run: no language model)")
            continue
        lines.append(
            f"  {path:<16}  use_rag accuracy {r['use_rag_accuracy']:.3f}   is_followup accuracy "
            f"{r['is_followup_accuracy']:.3f}   failures {r['failures']}   p50 {r['ms_p50']} ms"
        )
        lines.append(
            "             " + "  ".join(f"{k.split(':', 1)[1]} {v:.2f}" for k, v in r["by_group"].items())
        )
    if report.get("model"):
        lines.append(f"  model: {report['model']}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- kinds of reading
KINDS_SET_PATH = Path(__file__).with_name("router_kinds.jsonl")
LABELS = ("none", "passages", "document", "library")


def is_kinds_set(path: Path) -> bool:
    """A set labelled with kinds (``text``, ``kind``) rather than ``message``/``use_rag``."""
    first = next((ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()), "{}")
    return "kind" in json.loads(first)


def load_kinds(path: Path) -> list[dict[str, Any]]:
    """Rows {text, lang, kind, history?}; history: earlier turns [{"user", "sources"}], oldest first."""
    rows = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        if "text" not in row or row.get("kind") not in LABELS:
            raise ValueError(f"{path}:{i}: each line needs 'text' and a 'kind' of {', '.join(LABELS)}")
        rows.append(row)
    return rows


def _context(row: dict[str, Any]) -> tuple[str | None, list[str]]:
    """What the app would know before the message: the subject (the cited note's name, as a
    named answer sets it, else the last question's topic) and the recent user messages."""
    from desktop_app.core.ask.conversation import topic_of

    history = row.get("history") or []
    if not history:
        return None, []
    last = history[-1]
    sources = last.get("sources") or []
    subject = Path(sources[0]).stem.replace("-", " ") if sources else topic_of(last.get("user", ""))
    return subject or None, [h.get("user", "") for h in history]


class _Confusion:
    def __init__(self) -> None:
        self.table: dict[str, dict[str, int]] = {k: dict.fromkeys((*LABELS, "failed"), 0) for k in LABELS}
        self.by_lang: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        self.ms: list[float] = []

    def add(self, row: dict[str, Any], got: str | None, ms: float) -> None:
        self.table[row["kind"]][got or "failed"] += 1
        ok = got == row["kind"]
        for key in (row.get("lang", "?"), "all"):
            self.by_lang[key][0] += ok
            self.by_lang[key][1] += 1
        self.ms.append(ms)

    def report(self) -> dict[str, Any]:
        return {
            "accuracy": {k: round(v[0] / max(1, v[1]), 3) for k, v in sorted(self.by_lang.items())},
            "n": {k: v[1] for k, v in sorted(self.by_lang.items())},
            "confusion": self.table,  # expected -> chosen -> count
            "ms_p50": round(statistics.median(self.ms), 1) if self.ms else None,
        }


def run_kinds_bench(
    set_path: Path,
    chat_model: ChatModel | None,
    config: RouterConfig | None = None,
    limit: int | None = None,
    model_name: str = "",
) -> dict[str, Any]:
    """Three-way (four-label) accuracy of the heuristic, the LLM's own kind, and the LLM with the
    markers overriding it (what the app does), with a confusion table each, per language."""
    rows = load_kinds(set_path)[:limit]
    config = config or RouterConfig()
    router = Router(chat_model, config)
    heur, llm, hybrid = _Confusion(), _Confusion(), _Confusion()
    mistakes: list[dict[str, Any]] = []
    chosen: list[dict[str, Any]] = []  # each message's LLM kind, to re-score other markers later
    for row in rows:
        subject, recent = _context(row)
        t0 = time.perf_counter()
        h = heuristic_route(row["text"], subject, None, config.min_hit_score)
        heur.add(row, h.kind, (time.perf_counter() - t0) * 1000)
        if h.kind != row["kind"]:
            mistakes.append({"path": "heuristic", "text": row["text"], "expected": row["kind"], "got": h.kind})
        if chat_model is None:
            continue
        t0 = time.perf_counter()
        try:
            r: Route | None = router.llm_route(row["text"], last_subject=subject, recent=recent)
        except (LLMError, RouteError):
            r = None
        ms = (time.perf_counter() - t0) * 1000
        llm.add(row, r.kind if r else None, ms)
        final = router.overridden(r, row["text"]) if r is not None else h
        hybrid.add(row, final.kind, ms)
        chosen.append({"text": row["text"], "expected": row["kind"], "llm": r.kind if r else None, "final": final.kind})
        if final.kind != row["kind"]:
            mistakes.append(
                {"path": "llm_with_markers", "text": row["text"], "expected": row["kind"], "got": final.kind}
            )
    return {
        "set": str(set_path),
        "messages": len(rows),
        "model": model_name or None,
        "heuristic": heur.report(),
        "llm": llm.report() if chat_model is not None else None,
        "llm_with_markers": hybrid.report() if chat_model is not None else None,
        "mistakes": mistakes,
        "llm_kinds": chosen,
    }


def format_kinds_report(report: dict[str, Any]) -> str:
    """Each path's accuracy per language and its confusion table (rows: expected, columns: chosen)."""
    lines = [f"router kinds benchmark: {report['messages']} messages from {report['set']}"]
    for path in ("heuristic", "llm", "llm_with_markers"):
        r = report.get(path)
        if not r:
            lines.append(f"  {path}: not run (no language model)")
            continue
        acc = "  ".join(f"{k} {v:.3f} (n={r['n'][k]})" for k, v in r["accuracy"].items())
        lines.append(f"  {path}: accuracy {acc}   p50 {r['ms_p50']} ms")
        cols = [*LABELS, "failed"]
        lines.append("    expected \\ chosen " + "".join(f"{c:>10}" for c in cols))
        for kind in LABELS:
            lines.append(f"    {kind:<19}" + "".join(f"{r['confusion'][kind][c]:>10}" for c in cols))
    if report.get("model"):
        lines.append(f"  model: {report['model']}")
    return "\n".join(lines)
