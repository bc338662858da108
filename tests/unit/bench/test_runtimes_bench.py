"""`kdesk bench runtimes`: each runtime measured in a process of its own on the same texts, its
agreement with torch float32 computed, a runtime whose files are absent reported as such; and the
paired mode times the product's own classes (issue 36 item 4; the full-size runs are the bench
command's, docs/fullsize-models.md)."""

from __future__ import annotations

from kdesk_lab.fullsize import build
from kdesk_lab.runtimes import paired, run


def test_runtimes_are_measured_side_by_side_with_their_agreement_to_fp32(tmp_path, shared_data):
    folder = build("qwen3-embedding-0.6b", tmp_path / "models", tiny=True)
    reports = run(folder, tmp_path / "work", ("torch-fp32", "torch-bf16", "gguf-q8_0"), n=2, words=20)
    fp32, bf16, gguf = reports
    assert fp32["runtime"] == "torch-fp32" and fp32["cosine_min"] >= 0.99999 and fp32["ok"]
    assert bf16["ms_per_document"] > 0 and bf16["load_s"] >= 0 and bf16["peak_rss_mb"] > 0
    assert bf16["cosine_min"] >= 0.99  # a tiny random model in bfloat16
    assert "absent" in gguf["error"]  # no GGUF converted for this folder


def test_paired_mode_times_fp32_bf16_and_the_products_choice_in_one_process(tmp_path, shared_data):
    folder = build("bge-reranker-base", tmp_path / "models", tiny=True)
    rep = paired(folder, tmp_path / "work", rounds=1, n=2, words=20)
    assert rep["fp32"]["runtime"] == "torch float32 on cpu"
    assert rep["bf16"]["runtime"] == "torch bfloat16 on cpu"
    assert rep["chosen"]["runtime"] == "torch float32 on cpu"  # a tiny model stays in float32
    assert rep["fp32"]["speedup_vs_fp32"] == 1.0 and rep["chosen"]["spearman_vs_fp32"] == 1.0
