"""Shared fixtures. Tests run offline: no model hub, ever."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

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
    """The bundled offline MiniLM embedder, loaded once for the whole session."""
    from desktop_app.core.embeddings.default import default_embedder

    emb = default_embedder()
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
