"""The chat models the window's switcher offers, what choosing one sets, and "Test connection"
against a real HTTP server (one that lists models, one that refuses a key, a closed port)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from desktop_app.core.config import Config
from desktop_app.core.messages import render
from desktop_app.core.models.llm.choices import (
    NONE,
    SERVER,
    chat_model_options,
    check_server,
    current_option,
    with_option,
)
from desktop_app.core.models.llm.factory import resolve_chat_model


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.delenv("KDESK_MODELS", raising=False)
    models = tmp_path / "data" / "models"
    (models / "qwen").mkdir(parents=True)
    (models / "smollm2-135m.gguf").write_bytes(b"GGUF")
    (models / "qwen" / "qwen2.5-0.5b-instruct-q4.gguf").write_bytes(b"GGUF")
    return tmp_path / "data"


def test_the_switcher_offers_no_model_the_configured_server_and_each_local_gguf(data_dir):
    cfg = Config()
    cfg.llm.url, cfg.llm.model = "http://127.0.0.1:11434/v1", "llama3.2"
    options = chat_model_options(cfg, data_dir)
    labels = [render(o.label) for o in options]
    assert labels[:2] == ["No model: answers from the documents", "llama3.2 on http://127.0.0.1:11434/v1"]
    assert "qwen2.5-0.5b-instruct-q4 (local)" in labels and "smollm2-135m (local)" in labels
    assert [o.key for o in options][:2] == [NONE, SERVER]
    no_url = chat_model_options(Config(), data_dir)
    assert SERVER not in [o.key for o in no_url]  # no server configured: none offered


def test_choosing_an_option_selects_it_and_the_resolver_reports_it(data_dir):
    cfg = Config()
    cfg.llm.url = "http://127.0.0.1:8080"
    gguf = next(o for o in chat_model_options(cfg, data_dir) if "smollm2" in o.key)
    chosen = with_option(cfg, gguf.key)
    assert cfg.llm.backend == "none"  # the original is left alone
    assert current_option(chosen, data_dir) == gguf.key
    if gguf.usable:
        assert resolve_chat_model(chosen, data_dir).backend == "gguf"
    server = with_option(chosen, SERVER)
    assert server.llm.backend == "openai" and resolve_chat_model(server, data_dir).backend == "openai"
    assert current_option(with_option(server, NONE), data_dir) == NONE
    with pytest.raises(ValueError):
        with_option(cfg, "carrier-pigeon")


class _Server:
    """A real OpenAI-compatible /v1/models endpoint on a free port."""

    def __init__(self, models: list[str], key: str = "") -> None:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                if key and self.headers.get("Authorization") != f"Bearer {key}":
                    body, code = {"error": {"message": "Invalid API key"}}, 401
                elif self.path == "/v1/models":
                    body, code = {"object": "list", "data": [{"id": m, "object": "model"} for m in models]}, 200
                else:
                    body, code = {"error": {"message": "not found"}}, 404
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        outer.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        outer.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server(["qwen2.5:1.5b", "llama3.2"])
    yield srv
    srv.close()


def test_test_connection_lists_the_servers_models(server):
    found = check_server(server.url)
    assert found.ok and found.models == ["qwen2.5:1.5b", "llama3.2"]
    assert render(found.summary) == f"Connected to {server.url}: 2 model(s): qwen2.5:1.5b, llama3.2"
    missing = check_server(server.url.removesuffix("/v1"), model="mistral")  # /v1 is added
    assert missing.ok and render(missing.summary).endswith("the model set here (mistral) is not among them")


def test_test_connection_says_why_it_failed_readably():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    refused = check_server(f"http://127.0.0.1:{port}/v1", timeout=3)
    assert not refused.ok and render(refused.summary).startswith(
        f"Could not connect: cannot reach the language model at http://127.0.0.1:{port}/v1"
    )
    guarded = _Server(["x"], key="secret")
    try:
        wrong = check_server(guarded.url, api_key="wrong", timeout=3)
        assert not wrong.ok
        assert render(wrong.summary) == "Could not connect: the language model server answered HTTP 401: Invalid API key"
        assert check_server(guarded.url, api_key="secret").ok
    finally:
        guarded.close()
    assert not check_server("").ok and "Traceback" not in render(check_server("").summary)
