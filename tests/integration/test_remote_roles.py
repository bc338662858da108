"""The embedding and rerank roles served by another machine (issue 36 item 6), against REAL llama.cpp
servers (xllamacpp, the product's own dependency): ``llama-server --embeddings`` for
``embedding.model = "openai:..."`` and ``llama-server --reranking`` for ``retrieval.reranker = "http://..."``.

The models are tiny BERTs with random weights built here (a real WordPiece vocabulary, 32-wide, one
layer), written as GGUF with the ``gguf`` package (the dev extra): the server's vectors must equal
sentence-transformers' on the same folder, and its rerank scores the CrossEncoder's. Then the whole
product: `kdesk search` and `kdesk models` with both roles remote, and a rerank server that goes
away mid-session (search goes on in the fused order, said once).
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from desktop_app.core.config import Config, save_config

pytestmark = [pytest.mark.integration]

gguf = pytest.importorskip(
    "gguf", reason="the gguf package (pip install -e '.[dev]') writes the test's GGUF models"
)
xlc = pytest.importorskip("xllamacpp")

REPO = Path(__file__).resolve().parents[2]
WORDS = (
    "parrot macaw grey kakapo feather red blue green seed fruit talk fly night forest vet pasta egg".split()
)
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
DOCS = {
    "parrots.md": "# Grey parrot\n\nThe grey parrot can talk. It eats seed and fruit in the forest.\n",
    "macaw.md": "# Red macaw\n\nThe red macaw has a blue and green feather. It can fly at night.\n",
    "kitchen.md": "# Pasta\n\nPasta with egg. The vet has no pasta.\n",
}


def _build_bert(folder: Path, *, reranker: bool) -> Path:
    """A tiny BERT (cross-encoder or sentence-transformers encoder) with random weights. Token type
    1 gets type 0's row: llama.cpp gives every token type 0, Hugging Face the second text type 1."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertModel, BertTokenizerFast

    vocab = [*SPECIAL, *WORDS]
    torch.manual_seed(11 if reranker else 12)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=128,
        num_labels=1,
        initializer_range=0.2,  # larger random weights: distinct scores for distinct texts
    )
    model = BertForSequenceClassification(config) if reranker else BertModel(config)
    with torch.no_grad():
        types = model.base_model.embeddings.token_type_embeddings.weight
        types[1] = types[0]
    model.save_pretrained(folder)
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    BertTokenizerFast(vocab={w: i for i, w in enumerate(vocab)}, do_lower_case=True).save_pretrained(folder)
    return folder


def _write_gguf(folder: Path, out: Path, *, reranker: bool) -> Path:
    """The folder as llama.cpp's convert_hf_to_gguf.py writes a BERT (phantom-space WordPiece vocabulary,
    its tensor names), keeping the pooler as the rank head's dense layer as it does for XLM-R."""
    from safetensors.numpy import load_file

    cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    vocab = (folder / "vocab.txt").read_text(encoding="utf-8").split()
    arch = gguf.MODEL_ARCH.BERT
    w = gguf.GGUFWriter(str(out), gguf.MODEL_ARCH_NAMES[arch])
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_head_count(cfg["num_attention_heads"])
    w.add_layer_norm_eps(cfg["layer_norm_eps"])
    w.add_causal_attention(False)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_pooling_type(gguf.PoolingType.RANK if reranker else gguf.PoolingType.MEAN)
    if reranker:
        w.add_classifier_output_labels(["LABEL_0"])
    w.add_token_type_count(cfg["type_vocab_size"])
    w.add_tokenizer_model("bert")
    w.add_tokenizer_pre("default")
    w.add_token_list([t if t in SPECIAL else "\u2581" + t for t in vocab])
    types = [gguf.TokenType.CONTROL if t in SPECIAL else gguf.TokenType.NORMAL for t in vocab]
    types[vocab.index("[UNK]")] = gguf.TokenType.UNKNOWN
    w.add_token_types(types)
    # [CLS], [SEP] as end of text, [PAD] and which are added, read from tokenizer.json as the converter does
    gguf.SpecialVocab(folder, n_vocab=len(vocab)).add_to_gguf(w)
    names = gguf.get_tensor_name_map(arch, cfg["num_hidden_layers"])
    for name, tensor in load_file(folder / "model.safetensors").items():
        name = name.removeprefix("bert.").replace("pooler.dense", "classifier.dense")
        if name == "embeddings.position_ids" or (name.startswith("classifier.dense") and not reranker):
            continue
        if name.startswith("classifier.") and not name.startswith("classifier.dense"):
            name = name.replace("classifier.", "classifier.out_proj.")
        mapped = names.get_name(name, try_suffixes=(".weight", ".bias"))
        assert mapped, name
        w.add_tensor(mapped, tensor.astype(np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return out


class LlamaServer:
    """llama.cpp's HTTP server in this process, as the product starts its chat model's
    (models/llm/gguf.py), serving embeddings or rerank."""

    def __init__(self, gguf_path: Path, *, reranker: bool, api_key: str = "") -> None:
        import httpx

        params = xlc.CommonParams()
        params.model.path = str(gguf_path)
        params.hostnames = ["127.0.0.1"]
        params.port = 0
        params.n_ctx = 512
        params.n_parallel = 1
        params.n_batch = params.n_ubatch = 512
        params.cpuparams.n_threads = params.cpuparams_batch.n_threads = 1
        params.embedding = True
        if reranker:
            params.pooling_type = 4  # LLAMA_POOLING_TYPE_RANK: what `llama-server --reranking` sets
        if api_key:
            params.api_keys = [api_key]
        params.verbosity = -1
        self._server = xlc.Server(params)
        self.url = str(self._server.listening_address).rstrip("/")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/health", timeout=2, trust_env=False).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError("llama.cpp server did not become ready")

    def stop(self) -> None:
        if self._server is not None:
            self._server = None  # the native destructor stops the server and frees the model
            gc.collect()


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("remote-models")
    out = {}
    for kind, reranker in (("embedder", False), ("reranker", True)):
        folder = _build_bert(root / f"tiny-{kind}", reranker=reranker)
        out[kind] = folder
        out[kind + "_gguf"] = _write_gguf(folder, root / f"tiny-{kind}.gguf", reranker=reranker)
    return out


@pytest.fixture(scope="module")
def embed_server(models):
    server = LlamaServer(models["embedder_gguf"], reranker=False)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def rerank_server(models):
    server = LlamaServer(models["reranker_gguf"], reranker=True)
    yield server
    server.stop()


def test_served_vectors_equal_sentence_transformers_on_the_same_model(models, embed_server):
    from sentence_transformers import SentenceTransformer

    from desktop_app.core.models.embeddings.openai_compat import OpenAICompatEmbedder

    texts = ["grey parrot talk", "Red macaw, blue feather!", "pasta egg", "night forest", "vet"]
    emb = OpenAICompatEmbedder("tiny", embed_server.url, batch_size=2)  # 3 requests, order kept
    served = emb.embed_documents(texts)
    reference = SentenceTransformer(str(models["embedder"]), device="cpu").encode(
        texts, normalize_embeddings=True
    )
    assert emb.dim == 32 and served.shape == (5, 32)
    # llama.cpp's GELU is the tanh approximation from a table: equal within ~1e-4, not bit for bit
    assert (served * reference).sum(axis=1).min() > 0.9999
    assert np.allclose(served, reference, atol=1e-3)
    emb.close()


@pytest.mark.parametrize("path", ["", "/v1", "/rerank"])
def test_served_rerank_scores_equal_the_cross_encoders(models, rerank_server, path):
    import torch
    from sentence_transformers import CrossEncoder

    from desktop_app.core.models.remote_rerank import RemoteReranker

    query = "grey parrot talk"
    texts = ["parrot seed fruit", "pasta egg", "red macaw fly night", "vet", "grey parrot can talk"]
    reranker = RemoteReranker(rerank_server.url + path, batch_size=3)  # two requests
    served = reranker.score(query, texts)
    ce = CrossEncoder(str(models["reranker"]), device="cpu", activation_fn=torch.nn.Identity())
    reference = ce.predict([(query, t) for t in texts])
    assert served.shape == (5,) and reranker.failure is None
    assert np.allclose(served, reference, atol=2e-2)
    assert list(np.argsort(-served)) == list(np.argsort(-reference))
    reranker.close()


def test_a_server_of_the_other_role_is_said_and_its_answers_never_used(embed_server, rerank_server):
    from desktop_app.core.models.embeddings.openai_compat import EmbeddingError, OpenAICompatEmbedder
    from desktop_app.core.models.remote_rerank import RemoteReranker, RerankError

    with pytest.raises(RerankError, match="--reranking"):
        RemoteReranker(embed_server.url).score("parrot", ["seed"])
    # A reranking llama-server answers /v1/embeddings too, with whatever its buffer held (zeros,
    # non-numbers, or numbers that pass for a vector): asked whether it reranks, it is never indexed.
    for _ in range(3):
        with pytest.raises(EmbeddingError, match="answers rerank requests.*--reranking"):
            OpenAICompatEmbedder("tiny", rerank_server.url, retries=0).embed_queries(["parrot"])
    # The embedding server itself is asked the same once, refuses (501), and gives its vectors.
    embedder = OpenAICompatEmbedder("tiny", embed_server.url, retries=0)
    assert embedder.embed_queries(["parrot"]).shape == (1, 32) and embedder.dim == 32


def test_a_wrong_key_is_refused_in_words_that_name_the_setting(models):
    from desktop_app.core.models.remote_rerank import RemoteReranker, RerankError

    server = LlamaServer(models["reranker_gguf"], reranker=True, api_key="right-key-123")
    try:
        with pytest.raises(RerankError, match="HTTP 401.*retrieval.reranker_api_key"):
            RemoteReranker(server.url, api_key="wrong-key-456").score("parrot", ["seed"])
        ok = RemoteReranker(server.url, api_key="right-key-123").score("parrot", ["seed", "egg"])
        assert ok.shape == (2,)
    finally:
        server.stop()


def _data_dir(root: Path, embed_url: str, rerank_url: str) -> Path:
    src = root / "src"
    src.mkdir(parents=True)
    for name, text in DOCS.items():
        (src / name).write_text(text, encoding="utf-8")
    cfg = Config()
    cfg.embedding.model = "openai:tiny"
    cfg.embedding.url = embed_url
    cfg.retrieval.reranker = rerank_url
    # every search reranks: no decisive skip, and a budget no loaded machine runs out of
    cfg.retrieval.rerank_decisive_margin = 0
    cfg.retrieval.rerank_budget_ms = 60_000
    data = root / "data"
    save_config(cfg, data / "config.toml")
    return data


def _kdesk(*args: str, data: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO), KDESK_NO_KEYRING="1")
    return subprocess.run(
        [sys.executable, "-m", "desktop_app.cli.main", *args, "--data-dir", str(data)],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        cwd=REPO,
    )


def test_kdesk_search_and_models_with_both_roles_on_servers(tmp_path, embed_server, rerank_server):
    data = _data_dir(tmp_path, embed_server.url, rerank_server.url)
    added = _kdesk("add", str(tmp_path / "src"), data=data)
    assert added.returncode == 0, added.stderr[-2000:]
    found = _kdesk("search", "grey parrot talk", "--json", data=data)
    assert found.returncode == 0, found.stderr[-2000:]
    hits = json.loads(found.stdout)["hits"]
    assert hits and all(h["rerank_score"] is not None for h in hits)
    assert "warnings" not in json.loads(found.stdout)
    models = _kdesk("models", data=data)
    assert models.returncode == 0, models.stderr[-2000:]
    assert f"a reranker on the server {rerank_server.url}" in models.stdout
    assert (
        f'retrieval.reranker = "{rerank_server.url}": the server at {rerank_server.url} answers'
        in models.stdout
    )
    assert f"embedding.url: the server at {embed_server.url} answers" in models.stdout


def test_a_rerank_server_that_goes_away_leaves_the_fused_ranking_said_once(tmp_path, models, embed_server):
    from desktop_app.core.library.knowledge import KnowledgeBase
    from desktop_app.core.models.status import model_status

    server = LlamaServer(models["reranker_gguf"], reranker=True)
    url = server.url
    data = _data_dir(tmp_path, embed_server.url, url)
    kb = KnowledgeBase(data)
    try:
        kb.add([tmp_path / "src"])
        assert all(h.rerank_score is not None for h in kb.search("grey parrot talk"))
        server.stop()
        hits = kb.search("can a grey parrot talk")  # another question: the last one's scores are cached
        assert hits and all(h.rerank_score is None for h in hits)  # the fused order, not an error
        first = [str(w) for w in kb.search_warnings()]
        assert len(first) == 1 and "cannot connect to the rerank server" in first[0], first
        kb.search("red macaw")
        assert kb.search_warnings() == [] and len(kb.model_failures()) == 1  # said once
        row = next(r for r in model_status(data, kb.config) if r.role == "reranker")
        assert row.active is None and "cannot reach the server" in str(row.reason)
    finally:
        kb.close()
        server.stop()
