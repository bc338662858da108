"""Embedding models behind one protocol; `make_embedder` picks one from the config."""

from __future__ import annotations

from pathlib import Path

from desktop_app.core.config import Config
from desktop_app.core.models.embeddings.base import Embedder, normalize
from desktop_app.core.packages import MissingPackage

__all__ = ["Embedder", "normalize", "make_embedder", "EmbedderUnavailable"]


class EmbedderUnavailable(Exception):
    """The configured embedding model cannot be loaded; the message says why."""


def make_embedder(config: Config, data_dir: Path | None = None) -> Embedder:
    """The embedder named by `config.embedding.model`:
    "default" -> bundled MiniLM; "openai:<model>" -> an OpenAI-compatible /v1/embeddings server;
    anything else -> a sentence-transformers folder found in the models folders (or a path)."""
    from desktop_app.core.paths import find_model

    name = config.embedding.model.strip() or "default"
    if name == "default":
        from desktop_app.core.models.embeddings.default import default_embedder

        try:
            return default_embedder(device=config.embedding.device)
        except MissingPackage as exc:
            raise EmbedderUnavailable(str(exc)) from exc
    if name.startswith("openai:"):
        from desktop_app.core.models.embeddings.openai_compat import OpenAIEmbedder
        from desktop_app.core.secrets import get_api_key  # config.toml's key, else the keyring's

        if not config.embedding.url:
            raise EmbedderUnavailable("embedding.model is openai:... but embedding.url is empty")
        return OpenAIEmbedder(
            url=config.embedding.url,
            model=name.split(":", 1)[1],
            api_key=get_api_key(config, "embedding.api_key"),
        )
    path = find_model(name, data_dir)
    if path is None:
        raise EmbedderUnavailable(
            f"embedding model '{name}' not found in the models folders; install it with: kdesk models fetch embedding"
        )
    from desktop_app.core.models.embeddings.st import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(path, model_id=name, device=config.embedding.device)
