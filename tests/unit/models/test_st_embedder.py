"""The sentence-transformers loader on tiny models the test builds (random weights, real
architecture), found through the models folders exactly as Qwen3-Embedding-0.6B would be.

The prefixes checked are the model cards': Qwen3-Embedding an instruction ending in "Query:" on
queries and nothing on documents; bge-m3 nothing on either side (dense retrieval); multilingual-e5
"query: " / "passage: "; a folder's own prompts (config_sentence_transformers.json) win."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from desktop_app.core.config import Config
from desktop_app.core.models.embeddings import EmbedderUnavailable, make_embedder
from desktop_app.core.models.embeddings.base import multilingual_family
from desktop_app.core.models.embeddings.st import (
    QWEN3_INSTRUCTION,
    SentenceTransformerEmbedder,
    _folder_prompts,
)

# What Qwen/Qwen3-Embedding-0.6B ships in config_sentence_transformers.json.
QWEN3_SHIPPED = {
    "query": "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:",
    "document": "",
}

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


def _word_tokenizer(raw: Path, specials: list[str], template: str, **special_tokens: str) -> None:
    """A word-level fast tokenizer over WORDS (the real BPE/SentencePiece vocabularies are huge)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate([*specials, *WORDS, "?", "web", "search", "given"])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token=special_tokens["unk_token"]))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single=template, special_tokens=[(t, vocab[t]) for t in specials if t in template]
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, model_input_names=["input_ids", "attention_mask"], **special_tokens
    )
    fast.save_pretrained(raw)


def build_tiny_qwen3(folder: Path, prompts: dict[str, str] | None = None) -> Path:
    """Qwen3-Embedding's layout: a Qwen3 decoder, left padding, the end-of-text token appended
    and pooled (last-token pooling), then normalised."""
    from transformers import Qwen3Config, Qwen3Model

    raw = folder.parent / (folder.name + "-raw")
    raw.mkdir(parents=True)
    _word_tokenizer(
        raw,
        ["<|endoftext|>", "<unk>"],
        "$A <|endoftext|>",
        pad_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        unk_token="<unk>",
        padding_side="left",
    )
    cfg = Qwen3Config(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=37,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        max_position_embeddings=128,
    )
    Qwen3Model(cfg).save_pretrained(raw)
    return _save_sentence_transformer(raw, folder, "lasttoken", prompts)


def build_tiny_xlmr(folder: Path, pooling: str) -> Path:
    """bge-m3's / multilingual-e5's layout: XLM-RoBERTa, then CLS (bge-m3) or mean (e5) pooling."""
    from transformers import XLMRobertaConfig, XLMRobertaModel

    raw = folder.parent / (folder.name + "-raw")
    raw.mkdir(parents=True)
    _word_tokenizer(
        raw,
        ["<s>", "<pad>", "</s>", "<unk>"],  # XLM-R's ids 0-3
        "<s> $A </s>",
        bos_token="<s>",
        cls_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
    )
    cfg = XLMRobertaConfig(
        vocab_size=64,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=130,  # RoBERTa positions start after the padding id
        type_vocab_size=1,
        pad_token_id=1,
    )
    XLMRobertaModel(cfg).save_pretrained(raw)
    return _save_sentence_transformer(raw, folder, pooling)


def _save_sentence_transformer(raw: Path, folder: Path, pooling: str, prompts: dict[str, str] | None = None) -> Path:
    """A saved transformer in ``raw`` as a sentence-transformers folder: pooling, then normalised."""
    from sentence_transformers import SentenceTransformer, models

    word = models.Transformer(str(raw), max_seq_length=64)
    dim = getattr(word, "get_embedding_dimension", None) or word.get_word_embedding_dimension
    pool = models.Pooling(dim(), pooling_mode=pooling)
    model = SentenceTransformer(modules=[word, pool, models.Normalize()], device="cpu", prompts=prompts or {})
    model.save(str(folder))
    return folder


@pytest.fixture(scope="module")
def family_models(tmp_path_factory) -> Path:
    """Tiny models of the real architectures, in a models folder under the real names."""
    root = tmp_path_factory.mktemp("family-models")
    build_tiny_qwen3(root / "Qwen3-Embedding-0.6B", prompts=QWEN3_SHIPPED)
    build_tiny_qwen3(root / "Qwen3-Embedding-0.6B-no-prompts")
    build_tiny_xlmr(root / "bge-m3", pooling="cls")
    build_tiny_xlmr(root / "multilingual-e5-small", pooling="mean")
    return root


def _through_make_embedder(name: str, models_dir: Path, monkeypatch) -> SentenceTransformerEmbedder:
    monkeypatch.setenv("KDESK_MODELS", str(models_dir))
    cfg = Config()
    cfg.embedding.model = name
    emb = make_embedder(cfg)
    assert isinstance(emb, SentenceTransformerEmbedder) and emb.name == name
    emb.embed_documents(["warm up"])  # loads: the folder's prompts are read now
    return emb


def _raw(emb: SentenceTransformerEmbedder, text: str) -> np.ndarray:
    """The model's vector for exactly ``text`` (the loader cleared the model's own prompts)."""
    assert emb.model.prompts == {}
    return emb.model.encode([text], normalize_embeddings=True, convert_to_numpy=True)


def _assert_prefixes(emb: SentenceTransformerEmbedder, query: str, document: str) -> None:
    text = "what does the red macaw eat ?"
    q, d = emb.embed_queries([text]), emb.embed_documents([text])
    np.testing.assert_allclose(q, _raw(emb, query + text), atol=1e-5)
    np.testing.assert_allclose(d, _raw(emb, document + text), atol=1e-5)
    assert np.allclose(q, d, atol=1e-5) == (query == document)
    # Batches take the same prefixes as single texts.
    batch = [text, "the parrot eats seeds"] * 5
    np.testing.assert_allclose(emb.embed_queries(batch)[0], q[0], atol=1e-5)
    np.testing.assert_allclose(emb.embed_documents(batch)[0], d[0], atol=1e-5)


def test_qwen3_embedding_queries_get_the_shipped_instruction_and_documents_nothing(
    family_models, monkeypatch
):
    emb = _through_make_embedder("Qwen3-Embedding-0.6B", family_models, monkeypatch)
    assert type(emb.model[0].auto_model).__name__ == "Qwen3Model"
    assert (emb._query_prefix, emb._doc_prefix) == (QWEN3_SHIPPED["query"], "")
    _assert_prefixes(emb, QWEN3_SHIPPED["query"], "")
    assert emb.multilingual is True


def test_qwen3_embedding_without_shipped_prompts_gets_the_apps_instruction(family_models, monkeypatch):
    emb = _through_make_embedder("Qwen3-Embedding-0.6B-no-prompts", family_models, monkeypatch)
    assert QWEN3_INSTRUCTION.startswith("Instruct: ") and QWEN3_INSTRUCTION.endswith("\nQuery:")
    _assert_prefixes(emb, QWEN3_INSTRUCTION, "")
    assert not np.allclose(emb.embed_queries(["red macaw"]), _raw(emb, QWEN3_SHIPPED["query"] + "red macaw"))
    assert emb.multilingual is True


def test_bge_m3_embeds_queries_and_documents_alike(family_models, monkeypatch):
    emb = _through_make_embedder("bge-m3", family_models, monkeypatch)
    assert type(emb.model[0].auto_model).__name__ == "XLMRobertaModel"
    assert (emb._query_prefix, emb._doc_prefix) == ("", "")
    _assert_prefixes(emb, "", "")
    assert emb.multilingual is True


def test_multilingual_e5_gets_query_and_passage_prefixes(family_models, monkeypatch):
    emb = _through_make_embedder("multilingual-e5-small", family_models, monkeypatch)
    _assert_prefixes(emb, "query: ", "passage: ")
    assert emb.multilingual is True


def test_folder_prompts_win_side_by_side():
    e5 = ("query: ", "passage: ")
    assert _folder_prompts({}, e5) == e5
    assert _folder_prompts({"query": "", "document": ""}, e5) == e5  # declares nothing
    assert _folder_prompts(QWEN3_SHIPPED, (QWEN3_INSTRUCTION, "")) == (QWEN3_SHIPPED["query"], "")
    assert _folder_prompts({"query": "q: "}, e5) == ("q: ", "passage: ")  # the side it names
    assert _folder_prompts({"query": "query: ", "passage": "passage: "}, ("", "")) == e5
    assert _folder_prompts({"query": "Q", "document": ""}, e5) == ("Q", "")  # a declared empty side


def test_multilingual_flag_follows_the_model_family(minilm_fp32, tiny_models):
    assert minilm_fp32.multilingual is False  # the bundled all-MiniLM-L6-v2
    assert (
        SentenceTransformerEmbedder(tiny_models / "tiny-bert").multilingual is None
    )  # the name guess applies
    for name in (
        "Qwen3-Embedding-0.6B",
        "bge-m3",
        "multilingual-e5-small",
        "paraphrase-multilingual-MiniLM-L12-v2",
        "LaBSE",
        "bge-small-zh-v1.5",
        "/opt/models/gte-multilingual-base",
    ):
        assert multilingual_family(name) is True, name
    for name in ("all-MiniLM-L6-v2", "minilm-int8", "bge-base-en-v1.5", "bge-small-en", "e5-small-v2", "all-mpnet-base-v2"):
        assert multilingual_family(name) is False, name
    assert multilingual_family("my-finetune") is None


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


def test_single_query_fast_path_equals_sentence_transformers_encode(tiny_models, minilm_fp32):
    tiny = SentenceTransformerEmbedder(tiny_models / "tiny-with-prompts")
    for emb in (tiny, minilm_fp32):
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
