"""Shared fixtures. Tests run offline: no model hub, ever."""

from __future__ import annotations

import hashlib
import os
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
# A data folder chosen in Settings is remembered in the user's config folder: never the real one.
os.environ["KDESK_CONFIG_DIR"] = tempfile.mkdtemp(prefix="kdesk-test-config-")

SHARED_DATA = (Path(__file__).resolve().parents[1] / ".." / "shared" / "data").resolve()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data: third-party test data, read in place, never copied into the repo."""
    if not SHARED_DATA.exists():
        pytest.skip(f"shared test data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def minilm():
    """The bundled offline MiniLM embedder of a new library (int8 ONNX), loaded once for the session."""
    from desktop_app.core.models.embeddings.default import default_embedder

    emb = default_embedder()
    emb.embed_documents(["warm up"])
    return emb


@pytest.fixture(scope="session")
def minilm_fp32():
    """The float32 MiniLM through sentence-transformers (the default of older libraries)."""
    from desktop_app.core.models.embeddings.default import minilm_fp32_embedder

    emb = minilm_fp32_embedder()
    emb.embed_documents(["warm up"])
    return emb


class CountingEmbedder:
    """Wraps a real embedder and counts the texts it embeds (to prove what sync re-embeds)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.documents_embedded = 0
        self.calls = 0
        self.fail_after: int | None = None  # raise once this many document texts were embedded

    name = property(lambda self: self.inner.name)
    dim = property(lambda self: self.inner.dim)
    max_chars = property(lambda self: self.inner.max_chars)

    def embed_documents(self, texts):
        if self.fail_after is not None and self.documents_embedded + len(texts) > self.fail_after:
            raise RuntimeError("simulated crash in the middle of indexing")
        self.calls += 1
        self.documents_embedded += len(texts)
        return self.inner.embed_documents(texts)

    def embed_queries(self, texts):
        return self.inner.embed_queries(texts)


@pytest.fixture
def counting_embedder(minilm) -> CountingEmbedder:
    return CountingEmbedder(minilm)


class MemoryKeyring(KeyringBackend):
    """A real keyring backend that keeps passwords in a dict (the OS ones need a desktop session)."""

    priority = 5

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service, username):
        return self.store.get((service, username))

    def set_password(self, service, username, password):
        self.store[(service, username)] = password

    def delete_password(self, service, username):
        self.store.pop((service, username), None)


@pytest.fixture
def memory_keyring(monkeypatch):
    """The system keyring replaced by a MemoryKeyring for one test."""
    monkeypatch.delenv("KDESK_NO_KEYRING", raising=False)
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


HUB_COMMIT = "0123456789abcdef0123456789abcdef01234567"


class FakeHub:
    """The part of a Hugging Face hub the model fetcher uses, for one repository on 127.0.0.1: HEAD
    and GET on ``/{repo}/resolve/{revision}/{path}`` with ``X-Repo-Commit``, ``ETag`` and
    ``Content-Length``, and Range requests for resuming. It records every request; ``drop_after``
    (path -> bytes) drops the connection part-way through a file once; with ``piece`` it sends
    bodies that much at a time, slowly, and with ``gate`` set it stops after ``pause_at`` bytes
    until the gate opens (progress and Cancel in the window)."""

    def __init__(self, repo_id: str, files: dict[str, bytes], piece: int = 0) -> None:
        self.repo_id = repo_id
        self.files = files
        self.piece = piece
        self.requests: list[tuple[str, str, str | None]] = []
        self.drop_after: dict[str, int] = {}
        self.gate: threading.Event | None = None
        self.pause_at = 0
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_HEAD(self) -> None:
                hub._serve(self, head=True)

            def do_GET(self) -> None:
                hub._serve(self, head=False)

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address) -> None:
                pass  # clients hanging up mid-body (a drop, Cancel) are part of the tests

        self._server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        if self.gate is not None:
            self.gate.set()
        self._server.shutdown()
        self._server.server_close()

    def ranges(self, path: str) -> list[int]:
        """Start offsets of the Range GETs received for ``path``."""
        return [
            int(rng.split("=")[1].split("-")[0])
            for method, url, rng in self.requests
            if method == "GET" and url.endswith("/" + path) and rng
        ]

    def _not_found(self, h: BaseHTTPRequestHandler, code: str) -> None:
        h.send_response(404)
        h.send_header("X-Error-Code", code)
        h.send_header("Content-Length", "0")
        h.end_headers()

    def _serve(self, h: BaseHTTPRequestHandler, head: bool) -> None:
        self.requests.append((h.command, h.path, h.headers.get("Range")))
        prefix = f"/{self.repo_id}/resolve/"
        if not h.path.startswith(prefix):
            return self._not_found(h, "RepoNotFound")
        path = h.path[len(prefix) :].partition("/")[2]
        data = self.files.get(path)
        if data is None:
            return self._not_found(h, "EntryNotFound")
        start = (
            int(h.headers["Range"].split("=")[1].split("-")[0]) if not head and h.headers.get("Range") else 0
        )
        body = data[start:]
        h.send_response(206 if start else 200)
        h.send_header("X-Repo-Commit", HUB_COMMIT)
        h.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
        h.send_header("Accept-Ranges", "bytes")
        h.send_header("Content-Length", str(len(data) if head else len(body)))
        if start:
            h.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        h.end_headers()
        if head:
            return
        cut = self.drop_after.pop(path, None)
        if cut is not None:
            h.wfile.write(body[:cut])
            h.wfile.flush()
            h.close_connection = True
            try:
                h.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if not self.piece:
            h.wfile.write(body)
            return
        for offset in range(0, len(body), self.piece):
            if self.gate is not None and offset >= self.pause_at:
                self.gate.wait(30)
            h.wfile.write(body[offset : offset + self.piece])
            h.wfile.flush()
            time.sleep(0.03)


@pytest.fixture
def fake_hub() -> Iterator[Callable[..., FakeHub]]:
    """``fake_hub(repo_id, files, piece=0)``: a FakeHub, closed after the test."""
    hubs: list[FakeHub] = []

    def make(repo_id: str, files: dict[str, bytes], piece: int = 0) -> FakeHub:
        hubs.append(FakeHub(repo_id, files, piece))
        return hubs[-1]

    yield make
    for hub in hubs:
        hub.close()


TINY_RERANKER_WORDS = (
    "parrot macaw grey kakapo feather red blue green seed fruit talk fly night forest vet pasta egg".split()
)


def _build_cross_encoder(folder: Path, vocab_size: int | None = None) -> Path:
    """A BERT cross-encoder with random weights and a word-list tokenizer in ``folder``; its
    embedding table holds ``vocab_size`` ids (default: the whole vocabulary)."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder.mkdir(parents=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *TINY_RERANKER_WORDS]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    # vocab as a dict: transformers 5 ignores vocab_file here and would read every word as [UNK]
    tokenizer = BertTokenizerFast(vocab={w: i for i, w in enumerate(vocab)}, do_lower_case=True)
    torch.manual_seed(7)
    config = BertConfig(
        vocab_size=vocab_size or len(vocab),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=64,
        num_labels=1,
        initializer_range=0.5,  # large random weights: distinct scores for distinct texts
    )
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory) -> Path:
    """A cross-encoder of the reranker's architecture with random weights, built here (never a hub
    id): ``<tmp>/models/tiny-reranker``."""
    return _build_cross_encoder(tmp_path_factory.mktemp("models") / "tiny-reranker")


@pytest.fixture
def mismatched_reranker(tmp_path) -> Path:
    """A cross-encoder folder whose tokenizer gives ids the model's embedding table lacks (the
    tokenizer's vocabulary is larger than ``vocab_size``): scoring raises ``IndexError: index out of
    range in self``, as a folder with a mismatched tokenizer did. ``<tmp>/models/broken-reranker``."""
    # [PAD] and [UNK] only: [CLS] (id 2) is already out of range.
    return _build_cross_encoder(tmp_path / "models" / "broken-reranker", vocab_size=2)
