"""`kdesk bench rerank` and the rerank columns of `kdesk bench latency`, on a small BEIR folder
indexed here and the tiny cross-encoder (tests/conftest.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from desktop_app.core.config import Config
from desktop_app.core.desk import Desk
from desktop_app.core.models.onnx_export import export_reranker
from kdesk_lab.latency import run_latency_bench
from kdesk_lab.rerank_budget import run_cost, run_decisive

CORPUS = {
    "d1": "# Scarlet macaw\nThe scarlet macaw has red, yellow and blue feathers and lives in rainforests.",
    # Three sentences: longer than the window, within the tiny model's 64 positions.
    "d2": "# African grey\nAfrican greys are grey parrots with red tails, known for mimicking speech. " * 3,
    "d3": "# Kakapo\nThe kakapo is a flightless nocturnal parrot from New Zealand.",
    "d4": "# Carbonara\nSpaghetti with eggs, pecorino cheese, guanciale and black pepper.",
}
QUERIES = {"q1": ("which grey parrot mimics speech?", "d2"), "q2": ("flightless parrot at night", "d3")}


def _library(tmp_path: Path, minilm, reranker: Path) -> tuple[Path, Path, Config]:
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in CORPUS.items())
    )
    (beir / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, (t, _) in QUERIES.items())
    )
    rows = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t1" for q, (_, d) in QUERIES.items()]
    (beir / "qrels" / "test.tsv").write_text("\n".join(rows) + "\n")
    cfg = Config()
    cfg.retrieval.reranker = str(reranker)
    cfg.retrieval.rerank_decisive_margin = 0.0  # every question reranked...
    cfg.retrieval.rerank_budget_ms = 60_000  # ...every candidate, even on a loaded machine
    data = tmp_path / "data"
    with Desk(data, cfg, embedder=minilm) as desk:
        for d, text in CORPUS.items():
            (desk.kb.knowledge_dir / f"{d}.md").write_text(text, encoding="utf-8")
        assert len(desk.kb.sync().added) == len(CORPUS)
    return beir, data, cfg


def test_rerank_bench_and_latency_report_the_budgeted_stage(tmp_path, minilm, tiny_cross_encoder):
    beir, data, cfg = _library(tmp_path, minilm, tiny_cross_encoder)
    with Desk(data, cfg, embedder=minilm) as desk:
        decisive = run_decisive(desk, beir, ("test",), None)
        cost = run_cost(desk, beir, tiny_cross_encoder, limit=2, candidates=3, window_tokens=10, batch=1)
        latency = run_latency_bench(desk, [t for t, _ in QUERIES.values()], runs=1, modes=("always",))
    split = decisive["splits"]["test"]
    assert split["questions"] == 2 and len(split["table"]) > 3
    assert cost["whole"]["pairs"] == cost["window"]["pairs"] == 6
    # The long African grey note is cut to its best window: fewer tokens than the whole chunk.
    assert cost["window"]["tokens_per_pair_mean"] < cost["whole"]["tokens_per_pair_mean"]
    rerank = latency["always"]["rerank"]
    assert rerank["stages"] >= 2 and rerank["budget_ms"] == 60_000 and rerank["over_budget_20pct"] == 0.0
    assert all(n >= 2 for n in rerank["scored_per_stage"])


def test_cost_against_fp32_whole_times_torch_whole_chunks_and_the_chosen_runtimes_windows(
    tmp_path, minilm, tiny_cross_encoder, capsys, monkeypatch
):
    from desktop_app.cli.main import main

    monkeypatch.delenv("KDESK_TORCH_DTYPE", raising=False)
    folder = Path(shutil.copytree(tiny_cross_encoder, tmp_path / "with-onnx"))
    export_reranker(folder)  # the folder's own export, as `kdesk models fetch` makes it
    beir, data, _ = _library(tmp_path, minilm, folder)
    argv = ["--data-dir", str(data), "bench", "rerank", "--beir", str(beir), "--cost", str(folder)]
    argv += ["--against-fp32-whole", "--threads", "1", "--window", "10", "--candidates", "3", "--json"]
    assert main(argv) == 0
    cost = json.loads(capsys.readouterr().out)["cost"]
    # (A) torch float32 on whole chunks although the folder has an export; (B) the export.
    assert cost["baseline_runtime"].startswith("torch float32 on cpu")
    assert cost["chosen_runtime"].startswith("onnxruntime float32 on cpu") and cost["threads"] == 1
    assert {cost[side]["pairs"] for side in ("whole_torch32", "window_chosen", "window_torch32")} == {6}
    assert cost["window_chosen"]["tokens_per_pair_mean"] < cost["whole_torch32"]["tokens_per_pair_mean"]
    assert cost["factor"] == pytest.approx(cost["factor_window"] * cost["factor_runtime"], rel=0.05, abs=0.02)
    # The export's scores are torch float32's on the same windows: the same order, the same values.
    agreement = cost["agreement"]
    assert agreement["spearman_all_pairs"] >= 0.99 and agreement["same_order_questions"] == 2
    assert agreement["max_abs_score_diff"] < 1e-5
