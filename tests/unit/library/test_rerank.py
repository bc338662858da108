"""The cross-encoder fine stage, on a tiny random-weight model the test builds (never a hub id)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from desktop_app.core.config import RetrievalConfig
from desktop_app.core.library.documents import Hit
from desktop_app.core.library.retrieval import Retriever
from desktop_app.core.models.rerank import (
    CrossEncoderReranker,
    find_reranker,
    is_cross_encoder,
    load_reranker,
    reranker_status,
)


def test_folder_is_recognised_as_a_cross_encoder(tiny_cross_encoder: Path, tmp_path: Path):
    assert is_cross_encoder(tiny_cross_encoder)
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["BertModel"]}), encoding="utf-8")
    assert not is_cross_encoder(tmp_path)  # an embedding model, not a reranker
    assert not is_cross_encoder(tmp_path / "missing")


def test_tiny_cross_encoder_loads_offline_and_scores(tiny_cross_encoder: Path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    rr = CrossEncoderReranker(tiny_cross_encoder)
    scores = rr.score("red parrot", ["red macaw feather", "pasta egg", "grey parrot talk"])
    assert scores.shape == (3,) and np.isfinite(scores).all()
    assert len(set(np.round(scores, 6))) >= 2  # random weights, but not a constant
    assert rr.score("anything", []).shape == (0,)


class FixedStore:
    """Stands in for ChromaStore with fixed candidates: the retriever's fine stage alone."""

    def __init__(self, hits: list[Hit]) -> None:
        self.hits = hits

    def count(self) -> int:
        return len(self.hits)

    def query(self, vectors, k, where=None):
        return [[h for h in self.hits[:k]] for _ in range(len(vectors))]

    def query_ids(self, vectors, k, where=None):  # the retriever's ids-only dense query
        return [[(h.chunk_id, h.vector_score) for h in self.hits[:k]] for _ in range(len(vectors))]

    def vectors(self, chunk_ids):
        return {}

    def get(self, chunk_ids, vectors=None):
        return [h for h in self.hits if h.chunk_id in set(chunk_ids)]


class OneHotEmbedder:
    name, dim, max_chars = "fixed", 2, 100

    def embed_queries(self, texts):
        return np.tile(np.array([[1.0, 0.0]], dtype=np.float32), (len(texts), 1))

    def embed_documents(self, texts):
        return self.embed_queries(texts)


def test_rerank_stage_changes_the_order_and_sets_scores(tiny_cross_encoder: Path):
    texts = [
        "red macaw feather",
        "pasta egg",
        "grey parrot talk",
        "kakapo fly night",
        "green seed fruit",
        "vet forest",
    ]
    hits = [
        Hit(f"d{i}-chunk-0", f"d{i}", t, f"d{i}.md", None, 0, 1, 1.0 - i / 10, vector_score=1.0 - i / 10)
        for i, t in enumerate(texts)
    ]
    rr = load_reranker(str(tiny_cross_encoder))
    assert rr is not None
    # Every pair scored even on a loaded machine: the budget is tested in test_rerank_budget.py.
    config = RetrievalConfig(coarse_k=6, rerank_budget_ms=60_000)
    retriever = Retriever(FixedStore(hits), None, OneHotEmbedder(), config, reranker=rr, use_keyword=False)
    coarse = retriever.candidates(["red parrot"], scope=None, coarse_k=6)[0]
    fine = retriever.search("red parrot", top_k=6)
    expected = dict(zip([h.chunk_id for h in coarse], rr.score("red parrot", [h.text for h in coarse])))
    # Scored in small batches (rerank_budget.py): the same scores up to float rounding.
    assert all(abs(h.rerank_score - expected[h.chunk_id]) < 1e-5 for h in fine)
    assert [h.rerank_score for h in fine] == sorted((h.rerank_score for h in fine), reverse=True)
    assert [h.chunk_id for h in fine] != [h.chunk_id for h in coarse]
    assert all(h.rerank_score is not None and h.score == h.rerank_score for h in fine)
    assert all(h.fused_score is not None for h in fine)


def test_auto_finds_any_cross_encoder_in_the_models_folder(tiny_cross_encoder: Path, monkeypatch):
    monkeypatch.setenv("KDESK_MODELS", str(tiny_cross_encoder.parent))
    path, reason = find_reranker("auto")
    assert path == tiny_cross_encoder and "using" in str(reason)
    status = reranker_status("auto")
    assert status.active and status.name == "tiny-reranker"


def test_no_reranker_is_skipped_with_a_reason(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("KDESK_MODELS", str(tmp_path))
    monkeypatch.setattr("desktop_app.core.models.rerank.models_dirs", lambda data_dir=None: [tmp_path])
    assert load_reranker("auto") is None
    status = reranker_status("auto")
    assert not status.active and "skipped" in str(status.reason)
    assert "disabled" in str(reranker_status("none").reason)
    assert "not found" in str(reranker_status("no-such-model").reason)
