"""Choose the chat backend from the config: an OpenAI-compatible server, a local GGUF, or none.

`resolve_chat_model` also says why, for `kdesk models` and the settings page.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from desktop_app.core.config import Config
from desktop_app.core.models.llm.base import ChatModel
from desktop_app.core.paths import find_model, models_dirs


@dataclass
class ChatModelChoice:
    model: ChatModel | None
    backend: str  # "openai" | "gguf" | "none"
    name: str
    reason: str  # one line for a person: what is active and why, or why nothing is

    def to_dict(self) -> dict:
        return {
            "role": "chat",
            "backend": self.backend,
            "name": self.name,
            "active": self.model is not None,
            "reason": self.reason,
        }


def _find_gguf(name: str, data_dir: Path | None) -> Path | None:
    path = find_model(name, data_dir)
    if path is not None and path.is_dir():  # a folder: take its (first) .gguf
        found = sorted(path.glob("*.gguf"))
        return found[0] if found else None
    return path


def _api_key(config: Config) -> str:
    """config.toml's key, else the system keyring's (desktop_app.core.secrets)."""
    try:
        from desktop_app.core.secrets import get_api_key

        return get_api_key(config, "llm.api_key")
    except (ImportError, ValueError):
        return config.llm.api_key


def resolve_chat_model(config: Config, data_dir: Path | None = None) -> ChatModelChoice:
    """The configured chat model (not yet started: GGUF servers start on first use) and why."""
    llm = config.llm
    backend = (llm.backend or "none").strip().lower()
    if backend in ("openai", "ollama", "vllm", "lmstudio", "llamacpp", "server"):
        if not llm.url.strip():
            return ChatModelChoice(None, "none", "", "llm.backend is 'openai' but llm.url is empty")
        from desktop_app.core.models.llm.openai_compat import OpenAIChatModel

        model = OpenAIChatModel.from_config(llm, api_key=_api_key(config))
        return ChatModelChoice(model, "openai", model.name, f"OpenAI-compatible server at {model.base_url}")
    if backend == "gguf":
        from desktop_app.core.models.llm.gguf import GGUFChatModel, xllamacpp_available

        if not llm.gguf.strip():
            return ChatModelChoice(None, "none", "", "llm.backend is 'gguf' but llm.gguf names no file")
        path = _find_gguf(llm.gguf, data_dir)
        if path is None:
            where = ", ".join(str(d) for d in models_dirs(data_dir))
            return ChatModelChoice(
                None, "none", llm.gguf, f"GGUF model {llm.gguf!r} not found (looked in {where})"
            )
        if not xllamacpp_available():
            return ChatModelChoice(
                None, "none", path.name, "a GGUF model is configured but xllamacpp is not installed"
            )
        model = GGUFChatModel.from_config(llm, path)
        return ChatModelChoice(model, "gguf", model.name, f"local GGUF {path} served in-process by xllamacpp")
    if backend not in ("none", ""):
        return ChatModelChoice(None, "none", "", f"unknown llm.backend {llm.backend!r}; extractive answers")
    return ChatModelChoice(
        None, "none", "", "no language model configured: answers are extractive (cited passages)"
    )


def make_chat_model(config: Config, data_dir: Path | None = None) -> ChatModel | None:
    """The configured ChatModel, or None for extractive answers."""
    return resolve_chat_model(config, data_dir).model
