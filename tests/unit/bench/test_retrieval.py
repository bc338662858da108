"""`kdesk bench retrieval` on a small BEIR folder the test writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kdesk_lab.retrieval import (
    format_result,
    load_beir,
    mrr_at,
    ndcg_at,
    percentile,
    recall_at,
    run_retrieval_bench,
)

CORPUS = [
    ("d1", "Scarlet macaw", "The scarlet macaw has red, yellow and blue feathers and lives in rainforests."),
    (
        "d2",
        "African grey parrot",
        "African greys are grey parrots with red tails, known for mimicking speech.",
    ),
    ("d3", "Kakapo", "The kakapo is a flightless nocturnal parrot from New Zealand. " * 30),  # several chunks
    ("d4", "Carbonara", "Spaghetti with eggs, pecorino cheese, guanciale and black pepper."),
    ("d5", "金刚鹦鹉", "金刚鹦鹉是一种羽毛鲜艳的大型鹦鹉，生活在美洲的热带雨林。"),
]
QUERIES = [
    ("q1", "which parrot can imitate human speech?", "d2"),
    ("q2", "flightless parrot that is active at night", "d3"),
    ("q3", "pasta recipe with egg and cheese", "d4"),
    ("q4", "金刚鹦鹉生活在哪里？", "d5"),
]


@pytest.fixture
def beir(tmp_path: Path) -> Path:
    folder = tmp_path / "mini-beir"
    (folder / "qrels").mkdir(parents=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as fh:
        for did, title, text in CORPUS:
            fh.write(json.dumps({"_id": did, "title": title, "text": text}, ensure_ascii=False) + "\n")
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as fh:
        for qid, text, _ in QUERIES:
            fh.write(json.dumps({"_id": qid, "text": text}, ensure_ascii=False) + "\n")
    lines = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t1" for q, _, d in QUERIES]
    (folder / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_metrics_match_hand_computed_values():
    rel = {"a": 1, "b": 1}
    assert ndcg_at(["a", "b", "c"], rel) == pytest.approx(1.0)
    assert ndcg_at(["c", "a"], {"a": 1}) == pytest.approx(1 / 1.5849625, rel=1e-6)
    assert recall_at(["a", "x"], rel, 10) == 0.5
    assert mrr_at(["x", "y", "b"], rel) == pytest.approx(1 / 3)
    assert mrr_at(["x"], rel) == 0.0
    assert percentile([1, 2, 3, 4], 50) == 2 and percentile([1, 2, 3, 4], 95) == 4


def test_load_beir_skips_the_header_and_unjudged_queries(beir: Path):
    data = load_beir(beir)
    assert len(data.corpus) == 5 and data.corpus["d1"][0] == "Scarlet macaw"
    assert data.qrels["q2"] == {"d3": 1}


def test_bench_indexes_through_the_pipeline_and_reports_every_mode(beir: Path, tmp_path: Path, minilm):
    work = tmp_path / "work"
    modes = ["fused", "dense", "keyword", "fused-0.7", "fused-hnsw"]
    r = run_retrieval_bench(beir, embedder=minilm, modes=modes, work_dir=work, log=lambda m: None)
    assert r.documents == 5 and r.queries == 4 and r.failed_documents == 0
    assert r.chunks > 5  # the long document was chunked
    assert r.docs_per_s > 0 and r.encoder_passages_per_s > 0 and r.index_vs_encoder > 0
    # The encoder's share of the sync, measured in the same run: real time, and part of the whole.
    assert not r.index_reused and 0 < r.encode_seconds <= r.index_seconds
    assert r.encoder_share == pytest.approx(r.encode_seconds / r.index_seconds, abs=0.05)
    assert set(r.modes) == set(modes)
    fused = r.modes["fused"]
    assert fused.ndcg_at_10 >= 0.9 and fused.recall_at_100 == 1.0
    assert 0 < fused.query_p50_ms <= fused.query_p95_ms
    assert r.modes["keyword"].recall_at_10 >= 0.75
    # Chroma's approximate index answers the "-hnsw" modes: on 5 documents it is exact too.
    assert r.modes["fused-hnsw"].ndcg_at_10 == pytest.approx(fused.ndcg_at_10, abs=1e-3)
    text = format_result(r)
    assert "nDCG@10" in text and "fused-0.7" in text
    json.dumps(r.to_dict())
    # A kept work dir is re-used: nothing is re-indexed the second time.
    again = run_retrieval_bench(beir, embedder=minilm, modes=["keyword"], work_dir=work, log=lambda m: None)
    assert again.index_reused and again.modes["keyword"].ndcg_at_10 == r.modes["keyword"].ndcg_at_10
    assert again.docs_per_s is None and again.chunks_per_s is None and again.encoder_share is None
    assert "index reused" in format_result(again)


def test_cli_rejects_impossible_options(beir: Path, tmp_path: Path):
    from desktop_app.cli.main import main

    assert main(["bench", "retrieval", "--beir", str(beir), "--no-dense", "--no-keyword"]) == 2
    assert main(["bench", "retrieval", "--beir", str(tmp_path / "nowhere")]) == 2
