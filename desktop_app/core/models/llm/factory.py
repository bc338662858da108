"""Choose the chat backend from the config: an OpenAI-compatible server, a local GGUF, or none.

`resolve_chat_model` also says why, for `kdesk models` and the settings page.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from desktop_app.core.config import Config
from desktop_app.core.messages import Text, message
from desktop_app.core.models import reasons
from desktop_app.core.models.llm.base import ChatModel
from desktop_app.core.paths import find_model, models_dirs

OPENAI_BACKENDS = ("openai", "ollama", "vllm", "lmstudio", "llamacpp", "server")
BACKENDS = (*OPENAI_BACKENDS, "gguf", "none")


@dataclass
class ChatModelChoice:
    """The one decision of which chat model is active: `kdesk models`, the status bar and the
    running assistant all read it. Deciding builds nothing; ``model`` builds it (cheap: a GGUF
    server starts on the first question)."""

    backend: str  # "openai" | "gguf" | "none": what runs, whatever alias the config used
    name: str
    reason: Text  # one line for a person: what is active and why, or why nothing is
    where: str = ""  # the server's URL or the GGUF file
    build: Callable[[], ChatModel] | None = None  # None: extractive answers

    @property
    def active(self) -> bool:
        return self.build is not None

    @functools.cached_property
    def model(self) -> ChatModel | None:
        return self.build() if self.build is not None else None

    def to_dict(self) -> dict:
        return {
            "role": "chat",
            "backend": self.backend,
            "name": self.name,
            "active": self.active,
            "reason": str(self.reason),  # JSON: English
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
    """The configured chat model and why (nothing is built or started here)."""
    llm = config.llm
    backend = (llm.backend or "none").strip().lower()
    if backend in OPENAI_BACKENDS:
        if not llm.url.strip():
            return ChatModelChoice("none", "", message(reasons.LLM_NO_URL, backend=repr(llm.backend)))

        def openai() -> ChatModel:
            from desktop_app.core.models.llm.openai_compat import OpenAIChatModel

            return OpenAIChatModel.from_config(llm, api_key=_api_key(config))

        base = llm.url.strip().rstrip("/")
        return ChatModelChoice(
            "openai",
            f"{llm.model or 'default'} @ {base}",
            message(reasons.LLM_SERVER, url=base),
            where=base,
            build=openai,
        )
    if backend == "gguf":
        from desktop_app.core.models.llm.gguf import xllamacpp_available

        if not llm.gguf.strip():
            return ChatModelChoice("none", "", message(reasons.LLM_NO_GGUF))
        path = _find_gguf(llm.gguf, data_dir)
        if path is None:
            where = ", ".join(str(d) for d in models_dirs(data_dir))
            why = message(reasons.LLM_GGUF_NOT_FOUND, name=repr(llm.gguf), dirs=where)
            return ChatModelChoice("none", llm.gguf, why)
        if not xllamacpp_available():
            return ChatModelChoice(
                "none",
                path.name,
                message(reasons.LLM_NO_XLLAMACPP),
                where=str(path),
            )

        def gguf() -> ChatModel:
            from desktop_app.core.models.llm.gguf import GGUFChatModel

            return GGUFChatModel.from_config(llm, path)

        return ChatModelChoice(
            "gguf",
            path.name,
            message(reasons.LLM_GGUF, path=path),
            where=str(path),
            build=gguf,
        )
    if backend not in ("none", ""):
        why = message(reasons.LLM_UNKNOWN_BACKEND, backend=repr(llm.backend))
        return ChatModelChoice("none", "", why)
    return ChatModelChoice("none", "", message(reasons.LLM_NONE))


def make_chat_model(config: Config, data_dir: Path | None = None) -> ChatModel | None:
    """The configured ChatModel, or None for extractive answers."""
    return resolve_chat_model(config, data_dir).model
