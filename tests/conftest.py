"""Shared fixtures. Tests run offline: no model hub, ever."""

from __future__ import annotations

import os
import tempfile
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
