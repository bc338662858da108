"""Settings > Models names the server that serves a role from another machine and says whether it
answers (issue 36 item 6): a real HTTP server on 127.0.0.1 that answers ``/health``, and a port
where nothing listens."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from desktop_app.core.config import Config


class _Health(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")


@pytest.fixture
def health_server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Health)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _page(make_window, qtbot, reranker: str):
    cfg = Config()
    cfg.retrieval.reranker = reranker
    dialog = make_window(cfg).open_settings()
    page = dialog.show_models()
    qtbot.waitUntil(lambda: bool(page.statuses), timeout=20_000)
    return page


def test_a_reranker_server_that_answers_is_named_as_in_use_and_reachable(make_window, qtbot, health_server):
    page = _page(make_window, qtbot, health_server)
    assert page.active_labels["reranker"].text() == f"In use: a model on the server {health_server}"
    label = page.server_labels["reranker"]
    assert not label.isHidden() and label.text() == f"Server {health_server}: reachable"
    assert "answers" in label.toolTip()


def test_a_reranker_server_that_is_down_is_named_and_said_not_reachable(make_window, qtbot):
    page = _page(make_window, qtbot, "http://127.0.0.1:9")
    assert page.active_labels["reranker"].text() == "Nothing in use"
    label = page.server_labels["reranker"]
    assert label.text() == "Server http://127.0.0.1:9: not reachable"
    assert "cannot reach the server" in label.toolTip() and "rerank stage is skipped" in label.toolTip()
