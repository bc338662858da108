"""The OpenAI-compatible embeddings client against a real local HTTP server that fails on cue."""

from __future__ import annotations

import logging
import time

import numpy as np
import pytest

from desktop_app.core.models.embeddings.base import Embedder
from desktop_app.core.models.embeddings.openai_compat import (
    EmbeddingError,
    OpenAICompatEmbedder,
    embeddings_url,
)


def _client(server, **kw) -> OpenAICompatEmbedder:
    return OpenAICompatEmbedder("hash", server.url, **kw)


def test_name_and_dim_come_from_model_host_and_first_response(embeddings_server):
    emb = _client(embeddings_server)
    assert isinstance(emb, Embedder)
    assert emb.name == f"openai:hash@127.0.0.1:{embeddings_server.port}"
    vecs = emb.embed_documents(["parrots eat seeds", "macaws are large"])
    assert vecs.shape == (2, 64) and vecs.dtype == np.float32
    assert emb.dim == 64
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)


def test_dim_asked_before_any_embedding_probes_the_server(embeddings_server):
    emb = _client(embeddings_server)
    assert emb.dim == 64
    assert len(embeddings_server.script.requests) == 1


def test_vectors_keep_input_order_even_when_server_reorders(embeddings_server):
    emb = _client(embeddings_server)
    texts = ["alpha beta", "gamma delta", "epsilon"]
    together = emb.embed_documents(texts)
    alone = np.vstack([emb.embed_documents([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-6)


def test_similar_texts_get_similar_vectors(embeddings_server):
    emb = _client(embeddings_server)
    q = emb.embed_queries(["grey parrot diet"])[0]
    d = emb.embed_documents(["the grey parrot diet is seeds", "volcanic rock formation"])
    assert q @ d[0] > q @ d[1]


def test_inputs_are_sent_in_batches(embeddings_server):
    emb = _client(embeddings_server, batch_size=4)
    vecs = emb.embed_documents([f"text {i}" for i in range(10)])
    assert vecs.shape == (10, 64)
    assert [len(r["input"]) for r in embeddings_server.script.requests] == [4, 4, 2]
    assert all(r["model"] == "hash" for r in embeddings_server.script.requests)


def test_overlong_inputs_are_truncated_client_side(embeddings_server):
    emb = _client(embeddings_server, max_chars=50)
    emb.embed_documents(["x" * 500, ""])
    sent = embeddings_server.script.requests[0]["input"]
    assert len(sent[0]) == 50 and sent[1] == " "  # some servers reject empty strings


@pytest.mark.parametrize("fault", ["500", "503", "429", "drop", "stall:1.0"])
def test_transient_failures_are_retried(embeddings_server, fault):
    embeddings_server.script.faults = [fault]
    emb = _client(embeddings_server, retries=3, timeout=0.5)
    vecs = emb.embed_documents(["still works"])
    assert vecs.shape == (1, 64)
    assert len(embeddings_server.script.requests) == 2


def test_retries_back_off_exponentially(embeddings_server):
    embeddings_server.script.faults = ["500", "500"]
    emb = _client(embeddings_server, retries=3)
    emb.embed_documents(["x"])
    t = embeddings_server.script.times
    assert len(t) == 3
    first, second = t[1] - t[0], t[2] - t[1]
    # 0.5 s then 1 s, each up to 25% shorter for jitter: the same budget as the app's own loop had
    assert 0.35 <= first <= 0.9 and 0.7 <= second <= 1.6 and second > first, (first, second)


def test_persistent_5xx_gives_a_clear_error_after_the_retry_budget(embeddings_server):
    embeddings_server.script.faults = ["500"] * 10
    emb = _client(embeddings_server, retries=1)
    with pytest.raises(EmbeddingError, match=r"failed after 2 attempts: HTTP 500"):
        emb.embed_documents(["x"])
    assert len(embeddings_server.script.requests) == 2


def test_a_bad_request_is_not_retried(embeddings_server):
    embeddings_server.script.faults = ["400"]
    emb = _client(embeddings_server, retries=3)
    with pytest.raises(EmbeddingError, match=r"rejected the request \(HTTP 400: .*scripted failure"):
        emb.embed_documents(["x"])
    assert len(embeddings_server.script.requests) == 1


def test_stalled_server_fails_within_the_timeout_budget(embeddings_server):
    embeddings_server.script.faults = ["stall:3"] * 3
    emb = _client(embeddings_server, retries=1, timeout=0.3)
    t0 = time.monotonic()
    with pytest.raises(EmbeddingError, match="timed out"):
        emb.embed_documents(["x"])
    assert time.monotonic() - t0 < 2.0


def test_server_down_says_cannot_connect():
    emb = OpenAICompatEmbedder("hash", "http://127.0.0.1:9", retries=1, connect_timeout=1)
    with pytest.raises(EmbeddingError, match="cannot connect"):
        emb.embed_documents(["x"])


def test_auth_failure_is_not_retried_and_never_shows_the_key(embeddings_server, caplog):
    embeddings_server.script.faults = ["401"]
    secret = "sk-test-SECRET-123456"
    emb = _client(embeddings_server, api_key=secret)
    caplog.set_level(logging.DEBUG)
    with pytest.raises(EmbeddingError, match="check embedding.api_key") as info:
        emb.embed_documents(["x"])
    assert len(embeddings_server.script.requests) == 1
    assert embeddings_server.script.headers[0]["Authorization"] == f"Bearer {secret}"
    assert secret not in str(info.value) and secret not in caplog.text


def test_without_a_key_no_authorization_header_is_sent(embeddings_server):
    _client(embeddings_server).embed_documents(["x"])
    assert embeddings_server.script.headers[0]["Authorization"] is None


@pytest.mark.parametrize(
    ("fault", "message"), [("badjson", "not an embeddings list"), ("short", "0 vectors|1 vectors")]
)
def test_malformed_answers_are_clear_errors(embeddings_server, fault, message):
    embeddings_server.script.faults = [fault]
    emb = _client(embeddings_server)
    with pytest.raises(EmbeddingError, match=message):
        emb.embed_documents(["a", "b"] if fault == "short" else ["a"])


def test_wrong_path_is_a_404_error_naming_the_endpoint(embeddings_server):
    emb = OpenAICompatEmbedder("hash", embeddings_server.url + "/nope/embeddings", retries=0)
    with pytest.raises(EmbeddingError, match="HTTP 404"):
        emb.embed_documents(["x"])


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("http://h:11434", "http://h:11434/v1/embeddings"),
        ("http://h:11434/v1/", "http://h:11434/v1/embeddings"),
        ("h:8080/v1/embeddings", "http://h:8080/v1/embeddings"),
    ],
)
def test_embeddings_url_accepts_what_users_type(given, expected):
    assert embeddings_url(given) == expected


def test_empty_url_is_a_config_error():
    with pytest.raises(EmbeddingError, match="embedding.url"):
        OpenAICompatEmbedder("m", "")


def test_config_openai_model_routes_to_this_client(embeddings_server, tmp_path):
    from desktop_app.core.config import Config
    from desktop_app.core.models.embeddings import make_embedder

    cfg = Config()
    cfg.embedding.model = "openai:hash"
    cfg.embedding.url = embeddings_server.url + "/v1"
    emb = make_embedder(cfg, tmp_path)
    assert emb.name == f"openai:hash@127.0.0.1:{embeddings_server.port}"
    assert emb.embed_queries(["q"]).shape == (1, 64)


def test_kb_with_openai_embedder_finds_what_it_indexed(embeddings_server, tmp_path):
    """Manifest, vector store and search must agree on one collection before and after the model loads."""
    from desktop_app.core.config import Config
    from desktop_app.core.library.knowledge import KnowledgeBase

    cfg = Config()
    cfg.embedding.model = "openai:hash"
    cfg.embedding.url = embeddings_server.url
    with KnowledgeBase(tmp_path / "data", config=cfg) as kb:
        before = kb.embedder_name
        (kb.knowledge_dir / "birds.md").write_text("# Birds\nRainbow lorikeets drink nectar.\n")
        report = kb.sync()
        assert report.added == ["birds.md"]
        assert kb.embedder_name == before == kb.embedder.name
        assert kb.store.count() == 1
    with KnowledgeBase(tmp_path / "data", config=cfg) as kb:  # a fresh process-like instance
        hits = kb.search("lorikeets nectar")
        assert hits and hits[0].source == "birds.md"
