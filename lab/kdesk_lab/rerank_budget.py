"""`kdesk bench rerank`: the measurements behind the rerank budget (issue 36 item 3).

- ``decisive``: over a BEIR set's judged questions, the fused ranking's lead (the best
  candidate's fused score minus the next document's best; library/rerank_budget.decisive) and
  whether the best candidate's document is relevant, so ``retrieval.rerank_decisive_margin`` is
  chosen where the fused top document is right far more often than a reranker makes it.
- ``cost``: the cross-encoder's cost per candidate scoring whole chunks against the product's best
  windows, on the same fused candidates of the same questions, alternating per question in one
  run (so a load change hits both sides alike); torch as the product loads it. With
  ``against_fp32_whole``: torch float32 scoring whole chunks (the baseline) against the product's
  chosen runtime (the folder's ONNX export when it has one) scoring the best windows, with torch
  float32 on the same windows as the reference the chosen runtime's order must match (Spearman).

Both read a data folder already indexed with the BEIR corpus as ``<corpus id>.md`` files (what
`kdesk bench retrieval --work-dir` leaves).
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from desktop_app.core.desk import Desk
from desktop_app.core.library.rerank_budget import TokenCounter, decisive, window_of
from desktop_app.core.messages import message
from desktop_app.core.models import reasons
from desktop_app.core.models.rerank import CrossEncoderReranker
from desktop_app.core.models.rerank_cost import QUERY_TOKENS
from desktop_app.core.models.runtime import Runtime
from desktop_app.core.models.torch_threads import torch_threads
from kdesk_lab.ranks import spearman
from kdesk_lab.retrieval import load_beir

MARGINS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5)


def _corpus_id(hit) -> str:
    return Path(hit.source).stem


def lead_of(hits) -> float:
    """The best candidate's fused score over the next document's best (1.0 when it is alone)."""
    other = next((h for h in hits[1:] if h.doc_id != hits[0].doc_id), None)
    return hits[0].fused_score - other.fused_score if other is not None else 1.0


def judged_questions(beir: Path, split: str, limit: int | None) -> list[tuple[str, str, set[str]]]:
    """(query id, text, relevant corpus ids) of the split's judged questions, in file order."""
    data = load_beir(beir, split)
    rows = [(qid, data.queries[qid], set(rel)) for qid, rel in data.qrels.items() if qid in data.queries]
    return rows[:limit] if limit else rows


def run_decisive(desk: Desk, beir: Path, splits: tuple[str, ...], limit: int | None) -> dict[str, Any]:
    """Per split: for each margin, the share of questions it skips and P@1 of the fused ranking
    on those and on the rest."""
    kb = desk.kb
    cfg = kb.config.retrieval
    report: dict[str, Any] = {"coarse_k": cfg.coarse_k, "splits": {}}
    for split in splits:
        rows = []
        for _, text, relevant in judged_questions(beir, split, limit):
            hits = kb.retriever.candidates([text], scope=None, coarse_k=cfg.coarse_k, keep=cfg.rerank_k)[0]
            if not hits:
                continue
            lead = lead_of(hits)
            assert decisive(hits, lead) or lead <= 0  # the product's own test agrees with this lead
            rows.append((lead, _corpus_id(hits[0]) in relevant))
        table = []
        for m in MARGINS:
            skip = [ok for lead, ok in rows if lead >= m]
            rest = [ok for lead, ok in rows if lead < m]
            table.append(
                {
                    "margin": m,
                    "skipped": round(len(skip) / len(rows), 3) if rows else 0.0,
                    "p1_skipped": round(sum(skip) / len(skip), 3) if skip else None,
                    "p1_rest": round(sum(rest) / len(rest), 3) if rest else None,
                }
            )
        report["splits"][split] = {
            "questions": len(rows),
            "p1_fused": round(sum(ok for _, ok in rows) / len(rows), 3) if rows else None,
            "table": table,
        }
    return report


def _side(v: dict[str, list[float]]) -> dict[str, Any]:
    return {
        "pairs": len(v["ms"]),
        "ms_per_pair_mean": round(statistics.fmean(v["ms"]), 1),
        "ms_per_pair_p50": round(statistics.median(v["ms"]), 1),
        "tokens_per_pair_mean": round(statistics.fmean(v["tokens"]), 1),
        "ms_per_token": round(sum(v["ms"]) / sum(v["tokens"]), 3),
    }


def _pairs(kb, count: TokenCounter, text: str, candidates: int, window_tokens: int):
    """The question's fused top ``candidates``: (whole chunks, their pair tokens, best windows, theirs)."""
    hits = kb.retriever.candidates(
        [text], scope=None, coarse_k=kb.config.retrieval.coarse_k, keep=candidates
    )[0]
    chunks = [h.text for h in hits[:candidates]]
    lengths = count(chunks)
    windows = [window_of(text, c, window_tokens, n) for c, n in zip(chunks, lengths)]
    q = count([text])[0] + 3
    return chunks, [q + min(n, 509) for n in lengths], windows, [q + n for n in count(windows)]


def _timed(
    rr, text: str, texts: list[str], tokens: list[int], batch: int, side: dict[str, list[float]]
) -> list[float]:
    """Score ``texts`` in batches, adding each pair's ms and tokens to ``side``; the scores."""
    got: list[float] = []
    for i in range(0, len(texts), batch):
        t0 = time.perf_counter()
        got += [float(x) for x in rr.score(text, texts[i : i + batch])]
        ms = (time.perf_counter() - t0) * 1000
        n = len(texts[i : i + batch])
        side["ms"] += [ms / n] * n
    side["tokens"] += tokens
    return got


def run_cost(
    desk: Desk,
    beir: Path,
    reranker: Path,
    limit: int,
    candidates: int,
    window_tokens: int,
    batch: int,
) -> dict[str, Any]:
    """ms per candidate and tokens per pair, whole chunks vs best windows, one run."""
    rr = CrossEncoderReranker(reranker)
    count = TokenCounter(rr)
    rr.score("warm up", ["the model loads and runs once before the clock"])
    sides: dict[str, dict[str, list[float]]] = {
        "whole": {"ms": [], "tokens": []},
        "window": {"ms": [], "tokens": []},
    }
    questions = judged_questions(beir, "test", limit)
    for qi, (_, text, _) in enumerate(questions):
        chunks, whole_tokens, windows, window_tokens_each = _pairs(
            desk.kb, count, text, candidates, window_tokens
        )
        pairs = {"whole": (chunks, whole_tokens), "window": (windows, window_tokens_each)}
        for side in ("whole", "window") if qi % 2 == 0 else ("window", "whole"):
            _timed(rr, text, *pairs[side], batch, sides[side])
        done = {k: round(statistics.fmean(v["ms"]), 1) for k, v in sides.items()}
        print(f"question {qi + 1}/{len(questions)}: ms a pair so far {done}", file=sys.stderr, flush=True)
    out: dict[str, Any] = {
        "reranker": str(reranker),
        "questions": len(questions),
        "candidates": candidates,
        "window_tokens": window_tokens,
        "batch": batch,
        "query_tokens_planned": QUERY_TOKENS,
    }
    out.update({side: _side(v) for side, v in sides.items()})
    out["whole_over_window"] = round(out["whole"]["ms_per_pair_mean"] / out["window"]["ms_per_pair_mean"], 2)
    return out


def _spearman(a: list[float], b: list[float]) -> float | None:
    """Spearman's rho of two score lists; None when either is constant or too short."""
    if len(a) < 2 or len(set(a)) < 2 or len(set(b)) < 2:
        return None
    return spearman(a, b)


def run_cost_against_fp32_whole(
    desk: Desk,
    beir: Path,
    reranker: Path,
    limit: int,
    candidates: int,
    window_tokens: int,
    batch: int,
    threads: int | None = None,
) -> dict[str, Any]:
    """Issue 36's reranker target in one run: ms a pair of (A) torch float32 scoring whole chunks
    and (B) the product's chosen runtime for ``reranker`` scoring the best windows, on the same
    fused candidates, the order of the sides alternating per question; (R) torch float32 on the
    same windows, timed too (it splits the factor into window and runtime), is the reference
    whose order (B) must keep. ``threads``: torch's and onnxruntime's intra-op threads."""
    fp32 = Runtime("cpu", "float32", message(reasons.RUNTIME_FORCED, dtype="float32"))
    torch32 = CrossEncoderReranker(reranker, device="cpu", runtime=fp32)
    chosen = CrossEncoderReranker(reranker, device="cpu", threads=threads)
    count = TokenCounter(torch32)
    names = ("whole_torch32", "window_chosen", "window_torch32")
    models = {"whole_torch32": torch32, "window_chosen": chosen, "window_torch32": torch32}
    sides: dict[str, dict[str, list[float]]] = {k: {"ms": [], "tokens": []} for k in names}
    scores: dict[str, list[list[float]]] = {"window_chosen": [], "window_torch32": []}
    questions = judged_questions(beir, "test", limit)
    with torch_threads(threads) if threads else contextlib.nullcontext():
        for rr in (torch32, chosen):
            rr.score("warm up", ["the model loads and runs once before the clock"])
        for qi, (_, text, _) in enumerate(questions):
            chunks, whole_tokens, windows, window_tokens_each = _pairs(
                desk.kb, count, text, candidates, window_tokens
            )
            pairs = {
                "whole_torch32": (chunks, whole_tokens),
                "window_chosen": (windows, window_tokens_each),
                "window_torch32": (windows, window_tokens_each),
            }
            for side in names if qi % 2 == 0 else tuple(reversed(names)):
                got = _timed(models[side], text, *pairs[side], batch, sides[side])
                if side in scores:
                    scores[side].append(got)
            done = {k: round(statistics.fmean(v["ms"]), 1) for k, v in sides.items()}
            print(f"question {qi + 1}/{len(questions)}: ms a pair so far {done}", file=sys.stderr, flush=True)
    b, r = scores["window_chosen"], scores["window_torch32"]
    per_q = [rho for rho in (_spearman(x, y) for x, y in zip(b, r)) if rho is not None]
    flat_b, flat_r = [x for s in b for x in s], [x for s in r for x in s]
    out: dict[str, Any] = {
        "reranker": str(reranker),
        "chosen_runtime": str(chosen.runtime.describe()),
        "baseline_runtime": str(torch32.runtime.describe()),
        "threads": threads,
        "questions": len(questions),
        "candidates": candidates,
        "window_tokens": window_tokens,
        "batch": batch,
    }
    out.update({k: _side(v) for k, v in sides.items()})
    a_ms, b_ms, r_ms = (statistics.fmean(sides[k]["ms"]) for k in names[:3])
    out["factor"] = round(a_ms / b_ms, 2)  # the target: >= 3
    out["factor_window"] = round(a_ms / r_ms, 2)
    out["factor_runtime"] = round(r_ms / b_ms, 2)
    out["agreement"] = {
        "spearman_all_pairs": None if (rho := _spearman(flat_b, flat_r)) is None else round(rho, 4),
        "spearman_per_question_mean": round(statistics.fmean(per_q), 4) if per_q else None,
        "same_order_questions": sum(
            sorted(range(len(x)), key=lambda i: -x[i]) == sorted(range(len(y)), key=lambda i: -y[i])
            for x, y in zip(b, r)
        ),
        "max_abs_score_diff": float(f"{max((abs(x - y) for x, y in zip(flat_b, flat_r)), default=0.0):.3g}"),
        # The reference's spread, beside which the difference is small or not (random weights score narrowly).
        "reference_score_range": [float(f"{f(flat_r, default=0.0):.6g}") for f in (min, max)],
    }
    return out
