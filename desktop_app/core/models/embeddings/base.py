"""The Embedder protocol: the seam between the index and any embedding model."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns text into unit-length vectors. Documents and queries may be embedded differently
    (e5 "query: " prefixes, Qwen3 instructions), so they have separate methods."""

    @property
    def name(self) -> str:
        """A stable id of the model (used to key the index collection)."""
        ...

    @property
    def dim(self) -> int: ...

    @property
    def max_chars(self) -> int:
        """Roughly how many characters the encoder reads before truncating (chunk size cap)."""
        ...

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """float32 array (len(texts), dim), L2-normalised."""
        ...

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """float32 array (len(texts), dim), L2-normalised."""
        ...


def normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms
