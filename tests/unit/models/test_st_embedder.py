"""The sentence-transformers loader on tiny models the test builds (random weights, real
architecture), found through the models folders exactly as Qwen3-Embedding-0.6B would be."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from desktop_app.core.config import Config
from desktop_app.core.models.embeddings import EmbedderUnavailable, make_embedder
from desktop_app.core.models.embeddings.st import QWEN3_INSTRUCTION, SentenceTransformerEmbedder

WORDS = "the a parrot macaw eats seeds fruit red blue green what does it eat query passage : instruct".split()


def build_tiny_st_model(folder: Path, prompts: dict[str, str] | None = None) -> Path:
    from sentence_transformers import SentenceTransformer, models
    from transformers import BertConfig, BertModel, BertTokenizerFast

    raw = folder.parent / (folder.name + "-raw")
    raw.mkdir(parents=True)
    vocab = [
        "[PAD]",
        "[UNK]",
        "[CLS]",
        "[SEP]",
        "[MASK]",
        *WORDS,
        *[f"##{c}" for c in "abcdefghijklmnopqrstuvwxyz"],
        *"abcdefghijklmnopqrstuvwxyz:?",
    ]
    (raw / "vocab.txt").write_text("\n".join(vocab), encoding="utf-8")
    BertTokenizerFast(vocab_file=str(raw / "vocab.txt")).save_pretrained(raw)
    cfg = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=128,
    )
    BertModel(cfg).save_pretrained(raw)
    word = models.Transformer(str(raw), max_seq_length=64)
    dim = getattr(word, "get_embedding_dimension", None) or word.get_word_embedding_dimension
    pool = models.Pooling(dim(), pooling_mode="mean")
    model = SentenceTransformer(modules=[word, pool], device="cpu", prompts=prompts or {})
    model.save(str(folder))
    return folder


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("models")
    build_tiny_st_model(root / "tiny-bert")
    build_tiny_st_model(root / "Qwen3-Embedding-tiny")
    build_tiny_st_model(root / "tiny-with-prompts", prompts={"query": "what does it eat: ", "document": ""})
    return root


def test_local_model_loads_offline_and_embeds_unit_vectors(tiny_models, monkeypatch):
    monkeypatch.setenv("KDESK_MODELS", str(tiny_models))
    cfg = Config()
    cfg.embedding.model = "tiny-bert"
    emb = make_embedder(cfg)
    assert isinstance(emb, SentenceTransformerEmbedder)
    vecs = emb.embed_documents(["the parrot eats seeds", "red macaw"])
    assert vecs.shape == (2, 32) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    # No instruction for a plain model: queries and documents embed alike.
    assert np.allclose(emb.embed_queries(["red macaw"]), emb.embed_documents(["red macaw"]), atol=1e-6)
    assert emb.max_chars == 64 * 4


def test_qwen3_models_get_the_query_instruction(tiny_models):
    emb = SentenceTransformerEmbedder(tiny_models / "Qwen3-Embedding-tiny")
    assert emb._query_prefix == QWEN3_INSTRUCTION
    q, d = emb.embed_queries(["red macaw"]), emb.embed_documents(["red macaw"])
    assert not np.allclose(q, d, atol=1e-4)


def test_prompts_shipped_with_the_model_win(tiny_models):
    saved = json.loads((tiny_models / "tiny-with-prompts" / "config_sentence_transformers.json").read_text())
    assert saved["prompts"]["query"] == "what does it eat: "
    emb = SentenceTransformerEmbedder(tiny_models / "tiny-with-prompts")
    emb.embed_queries(["x"])  # loads
    assert emb._query_prefix == "what does it eat: "
    expected = emb.embed_documents(["what does it eat: red macaw"])
    assert np.allclose(emb.embed_queries(["red macaw"]), expected, atol=1e-6)


def test_missing_model_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setenv("KDESK_MODELS", str(tmp_path))
    cfg = Config()
    cfg.embedding.model = "Qwen3-Embedding-0.6B"
    with pytest.raises(EmbedderUnavailable, match="kdesk models fetch embedding"):
        make_embedder(cfg, data_dir=tmp_path)


def test_single_query_fast_path_equals_sentence_transformers_encode(tiny_models, minilm):
    tiny = SentenceTransformerEmbedder(tiny_models / "tiny-with-prompts")
    for emb in (tiny, minilm):
        text = "  What does the scarlet macaw eat? Seeds, fruit; red blue green  "
        fast = emb.embed_queries([text])
        assert emb._fast_query() is not None  # BERT + mean pooling: the fast path ran
        slow = emb._encode([text], emb._query_prefix)
        np.testing.assert_allclose(fast, slow, atol=2e-6)
        np.testing.assert_allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-6)
    # Longer than the model's max_seq_length: truncated exactly as encode truncates.
    long = " ".join(["parrot macaw seeds"] * 60)
    np.testing.assert_allclose(
        tiny.embed_queries([long]), tiny._encode([long], tiny._query_prefix), atol=2e-6
    )
