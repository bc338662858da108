"""`kdesk bench index`: the product's indexing against a bare MiniLM, on a tiny BEIR folder the test writes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from kdesk_lab.index import TokenCounter, format_index_result, padding_of, run_index_bench

ENGLISH = [
    ("Scarlet macaw", "The scarlet macaw has red, yellow and blue feathers and lives in rainforests."),
    ("African grey", "African greys are grey parrots with red tails, known for mimicking speech."),
    ("Kea", "The kea is an alpine parrot of New Zealand, curious and clever. " * 25),  # several chunks
    ("Carbonara", "Spaghetti with eggs, pecorino cheese, guanciale and black pepper."),
    ("Budgerigar", "Budgies are small, long-tailed parakeets that live in flocks across Australia."),
    ("Cockatoo", "Cockatoos have a movable crest on the head and a curved bill."),
]
CHINESE = [
    ("金刚鹦鹉", "金刚鹦鹉是一种羽毛鲜艳的大型鹦鹉，生活在美洲的热带雨林。"),
    ("大熊猫", "大熊猫主要以竹子为食，生活在中国四川的山区。"),
    ("长城", "长城是中国古代的军事防御工程，全长两万多公里。" * 30),  # longer than 256 tokens
    ("故宫", "故宫位于北京中轴线的中心，是明清两代的皇家宫殿。"),
]


@pytest.fixture
def beir(tmp_path: Path) -> Path:
    """24 documents, English and Chinese, in BEIR format (queries and qrels: load_beir needs them)."""
    folder = tmp_path / "tiny"
    (folder / "qrels").mkdir(parents=True)
    rows = [
        {"_id": f"d{i}", "title": title, "text": f"{text} ({i // len(ENGLISH + CHINESE)})"}
        for i, (title, text) in enumerate((ENGLISH + CHINESE) * 2 + ENGLISH[:4])
    ]
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "alpine parrot"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td2\t1\n")
    return folder


def test_token_counter_reads_what_the_encoder_reads(minilm_fp32):
    counter = TokenCounter()
    assert counter.max_tokens == 256
    assert counter.lengths(["hello world"]) == [4]  # [CLS] hello world [SEP]
    texts = ["parrots " * 400, "鹦鹉" * 50, "kea"]
    tokens, cut = counter.count(texts)
    assert cut == 1
    # The same figures as the model's own tokenizer, cut where sentence-transformers cuts.
    ids = minilm_fp32.model.tokenizer(texts, truncation=True, max_length=256)["input_ids"]
    assert tokens == sum(len(i) for i in ids)


def test_padding_is_counted_batch_by_batch(minilm_fp32):
    texts = ["a short one", "a much longer text about parrots and their food " * 5, "kea"]
    with padding_of(minilm_fp32.model) as pad:
        minilm_fp32.model.encode(texts, batch_size=2, show_progress_bar=False)
    assert pad.batches == 2
    assert pad.real == TokenCounter().count(texts)[0] < pad.computed
    with padding_of(object()) as none:
        assert none is None


@pytest.mark.timeout(120)
def test_bench_measures_the_product_and_the_baseline(beir: Path, minilm_fp32):
    r = run_index_bench(beir, embedder=minilm_fp32, log=lambda m: None)
    b = r.baseline
    assert r.documents == b.documents == 24 and r.failed_documents == 0
    assert r.chunks > r.documents and r.chunks_per_doc == pytest.approx(r.chunks / 24, abs=0.01)
    assert r.docs_per_s > 0 and r.chunks_per_s > 0 and b.docs_per_s > 0
    assert r.ratio == pytest.approx(r.docs_per_s / b.docs_per_s, rel=0.01)
    # Every chunk is encoded: as many texts as chunks, each read up to 256 tokens.
    assert r.texts_encoded == r.chunks and 0 < r.tokens_per_chunk <= 256
    assert r.tokens_per_doc > b.tokens_per_doc > 0 and r.tokens_ratio > 1
    assert r.truncated_texts >= 1 and b.truncated_docs >= 3  # the long Chinese text; the kea and it
    assert r.padded_tokens_per_doc >= r.tokens_per_doc and b.padded_tokens_per_doc >= b.tokens_per_doc
    assert 0 < r.encoder_share <= 1 and 0 < r.encode_seconds <= r.index_seconds and r.encode_calls >= 1
    assert len(r.load_start) == len(r.load_end) == 3
    if sys.platform.startswith("linux"):
        assert r.rss_peak_mb > 100 and r.chroma_rss_peak_mb > 0 and "child process" in r.chroma
    text = format_index_result(r)
    assert "PRODUCT / BASELINE" in text and "load average" in text
    assert json.loads(json.dumps(r.to_dict()))["baseline"]["documents"] == 24


def test_cli_refuses_a_folder_without_a_corpus(tmp_path: Path):
    from desktop_app.cli.main import main

    assert main(["bench", "index", "--beir", str(tmp_path / "nowhere")]) == 2
