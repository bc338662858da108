"""The rerank client against servers that answer in each of the shapes it must read, on 127.0.0.1:
Text Embeddings Inference's (``/rerank`` only, ``{query, texts}`` -> ``[{index, score}]``, 422 for
the other shape), Infinity's/llama.cpp's (``{results: [{index, relevance_score}]}``, sorted by
score), one that cuts the list short, and one that is down then up again. The real llama.cpp server
is tests/integration/test_remote_roles.py; TEI and Infinity are not Python packages that run here,
so their documented request and response shapes are served by this small real HTTP server."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from desktop_app.core.config import Config
from desktop_app.core.models.remote_rerank import RemoteReranker, RerankError, rerank_endpoints


def _score(query: str, text: str) -> float:
    """Shared words, so the right order is known."""
    return float(len(set(query.lower().split()) & set(text.lower().split())))


class _Server:
    """One of ``"tei"``, ``"infinity"``, ``"short"``; records each request's path and body."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.requests: list[tuple[str, dict]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append((self.path, body))
                status, answer = outer.answer(self.path, body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def answer(self, path: str, body: dict) -> tuple[int, object]:
        if self.kind == "chat-only":  # llama-server started without --embeddings or --reranking
            what = (
                "reranking. Start it with `--reranking`"
                if "rerank" in path
                else "embeddings. Start it with `--embeddings`"
            )
            return 501, {
                "error": {
                    "code": 501,
                    "message": f"This server does not support {what}",
                    "type": "not_supported_error",
                }
            }
        if self.kind == "tei":
            if path != "/rerank":
                return 404, {"error": "not found"}
            if "texts" not in body:  # TEI's own validation error
                return 422, {"error": "Failed to deserialize the JSON body: missing field `texts`"}
            return 200, [{"index": i, "score": _score(body["query"], t)} for i, t in enumerate(body["texts"])]
        docs = body["documents"]
        rows = sorted(
            ({"index": i, "relevance_score": _score(body["query"], t)} for i, t in enumerate(docs)),
            key=lambda r: -r["relevance_score"],
        )
        if self.kind == "short":  # a server that ignores top_n and keeps its own 2
            rows = rows[:2]
        return 200, {"object": "list", "results": rows[: body.get("top_n", len(rows))]}

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server(request) -> Iterator[_Server]:
    s = _Server(request.param)
    yield s
    s.close()


QUERY = "grey parrot talk"
TEXTS = ["pasta egg", "grey parrot", "the parrot can talk grey", "red macaw"]
EXPECTED = np.array([_score(QUERY, t) for t in TEXTS])


@pytest.mark.parametrize("server", ["tei"], indirect=True)
def test_tei_is_found_on_rerank_with_texts_and_the_shape_is_kept(server):
    reranker = RemoteReranker(server.url)
    assert np.array_equal(reranker.score(QUERY, TEXTS), EXPECTED)
    tried = [(path, "texts" in body) for path, body in server.requests]
    assert tried[-1] == ("/rerank", True) and ("/v1/rerank", False) in tried
    server.requests.clear()
    assert np.array_equal(reranker.score(QUERY, TEXTS), EXPECTED)
    assert [(p, "texts" in b) for p, b in server.requests] == [("/rerank", True)]  # learnt: one request


@pytest.mark.parametrize("server", ["infinity"], indirect=True)
def test_sorted_results_are_put_back_in_the_texts_order_and_the_model_is_sent(server):
    reranker = RemoteReranker(server.url + "/rerank", model="bge-reranker-base", batch_size=3)
    assert np.array_equal(reranker.score(QUERY, TEXTS), EXPECTED)
    assert [len(b["documents"]) for _, b in server.requests] == [3, 1]  # batches of batch_size
    assert all(
        b["model"] == "bge-reranker-base" and b["top_n"] == len(b["documents"]) for _, b in server.requests
    )


@pytest.mark.parametrize("server", ["short"], indirect=True)
def test_a_list_cut_short_is_an_error_not_missing_scores(server):
    with pytest.raises(RerankError, match="not a list of scores"):
        RemoteReranker(server.url + "/v1/rerank").score(QUERY, TEXTS)


def test_a_server_that_is_down_is_said_and_tried_again_after_retry_after():
    reranker = RemoteReranker("http://127.0.0.1:9", retry_after=0.2, connect_timeout=1)
    with pytest.raises(RerankError, match="cannot connect to the rerank server 127.0.0.1:9"):
        reranker.score(QUERY, TEXTS)
    reranker.failure = "down"  # what retrieval does with the error
    assert reranker.failure == "down"
    time.sleep(0.3)
    assert reranker.failure is None  # the next search asks the server again


@pytest.mark.parametrize("setting", ["http://", "https:///rerank"])
def test_an_address_without_a_host_is_refused_in_words(setting):
    with pytest.raises(RerankError, match="is not a server address"):
        rerank_endpoints(setting)


def test_the_endpoints_tried_follow_what_the_user_typed():
    assert rerank_endpoints("http://h:8012") == ["http://h:8012/v1/rerank", "http://h:8012/rerank"]
    assert rerank_endpoints("http://h:8012/v1/") == ["http://h:8012/v1/rerank"]
    assert rerank_endpoints("https://h/api/rerank") == ["https://h/api/rerank"]


def test_the_key_comes_from_the_keyring_and_never_from_the_file_copy_alone(memory_keyring, tmp_path):
    from desktop_app.core.secrets import set_api_key

    path = tmp_path / "config.toml"
    assert set_api_key(path, "retrieval.reranker_api_key", "sk-remote-rerank-1234") == "keyring"
    from desktop_app.core.config import load_config

    cfg = load_config(path)
    assert cfg.retrieval.reranker_api_key == ""  # one copy, in the keyring
    cfg.retrieval.reranker = "http://127.0.0.1:8012"
    assert RemoteReranker.from_config(cfg)._api_key == "sk-remote-rerank-1234"


def test_config_reads_the_rerank_server_settings_strictly(tmp_path):
    from desktop_app.core.config import ConfigError, load_config

    path = tmp_path / "config.toml"
    path.write_text(
        '[retrieval]\nreranker = "http://gpu-box:8012"\nreranker_model = "bge"\n', encoding="utf-8"
    )
    cfg = load_config(path)
    assert (cfg.retrieval.reranker, cfg.retrieval.reranker_model) == ("http://gpu-box:8012", "bge")
    path.write_text("[retrieval]\nreranker_model = [1]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="retrieval.reranker_model must be text"):
        load_config(path)
    assert Config().retrieval.reranker_model == ""


@pytest.mark.parametrize("server", ["chat-only"], indirect=True)
def test_a_server_without_the_role_says_which_flag_starts_it(server):
    from desktop_app.core.models.embeddings.openai_compat import EmbeddingError, OpenAICompatEmbedder

    with pytest.raises(RerankError, match="does not rerank .*start llama.cpp's server with --reranking"):
        RemoteReranker(server.url).score(QUERY, TEXTS)
    with pytest.raises(EmbeddingError, match="does not serve embeddings .*with --embeddings"):
        OpenAICompatEmbedder("m", server.url, retries=0).embed_queries(["parrot"])
