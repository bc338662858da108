"""Small real servers on 127.0.0.1 that misbehave on cue, shared by the reliability tests.

The embeddings server computes hashed bag-of-words vectors: fake semantics, but real HTTP, so the
client under test (retries, timeouts, batching) runs exactly as it would against Ollama or TEI. It also
gives the subprocess tests a cheap, deterministic embedder through the product's own config
(``embedding.model = "openai:hash"``) instead of a test-only hook in product code.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

HASH_DIM = 64


def hashed_bow(text: str, dim: int = HASH_DIM) -> list[float]:
    """Deterministic bag-of-words vector: shared words -> shared dimensions -> similar vectors."""
    vec = [0.0] * dim
    for tok in re.findall(r"\w+", text.lower()):
        h = int.from_bytes(hashlib.md5(tok.encode("utf-8")).digest()[:4], "little")
        vec[h % dim] += 1.0
    if not any(vec):
        vec[0] = 1.0
    return vec


@dataclass
class ServerScript:
    """What the server does next: a queue of faults consumed one per request, then normal answers."""

    faults: list[str] = field(default_factory=list)  # "500", "401", "drop", "badjson", "stall:<s>", "short"
    requests: list[dict] = field(default_factory=list)
    headers: list[dict] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_fault(self) -> str | None:
        with self.lock:
            return self.faults.pop(0) if self.faults else None


class _EmbeddingsHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    script: ServerScript  # set on the subclass per server

    def log_message(self, *args: object) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if not self.path.rstrip("/").endswith("/v1/embeddings"):
            self._send(404, b'{"error": "not found"}')
            return
        payload = json.loads(raw)
        with self.script.lock:
            self.script.requests.append(payload)
            self.script.headers.append(dict(self.headers))
        fault = self.script.next_fault()
        if fault == "drop":
            # Abort the connection without any response: the client sees a reset / remote close.
            self.connection.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
            )
            self.close_connection = True
            self.connection.close()
            return
        if fault and fault.startswith("stall:"):
            time.sleep(float(fault.split(":", 1)[1]))
        elif fault in ("500", "503", "401", "404", "400"):
            self._send(int(fault), b'{"error": {"message": "scripted failure"}}')
            return
        elif fault == "badjson":
            self._send(200, b"<html>proxy error</html>", "text/html")
            return
        inputs = payload["input"]
        if isinstance(inputs, str):
            inputs = [inputs]
        if fault == "short":
            inputs = inputs[:-1]
        data = [{"object": "embedding", "index": i, "embedding": hashed_bow(t)} for i, t in enumerate(inputs)]
        data.reverse()  # legal per the spec; the client must sort by index
        body = json.dumps({"object": "list", "data": data, "model": payload.get("model")}).encode()
        self._send(200, body)


class EmbeddingsServer:
    """A threaded /v1/embeddings server on a free loopback port."""

    def __init__(self) -> None:
        self.script = ServerScript()
        handler = type("Handler", (_EmbeddingsHandler,), {"script": self.script})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> EmbeddingsServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def embeddings_server() -> Iterator[EmbeddingsServer]:
    with EmbeddingsServer() as server:
        yield server


@pytest.fixture(scope="session")
def shared_embeddings_server() -> Iterator[EmbeddingsServer]:
    """One fault-free server for the subprocess tests that only need cheap vectors."""
    with EmbeddingsServer() as server:
        yield server


@pytest.fixture
def free_port() -> int:
    """A loopback port that was free a moment ago (for servers started as subprocesses)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
