"""The chat models a person can switch between (the chat window's model switcher), and checking an
OpenAI-compatible server ("Test connection" in Settings).

The options are what this machine has: no model (extractive answers from the documents), the
configured OpenAI-compatible server, and each local GGUF file in the models folders. Choosing one
gives a Config whose ``[llm]`` section selects it; the Desk applies it like any settings change, so
the model that answers the next question is the one ``resolve_chat_model`` reports.
"""

from __future__ import annotations

import copy
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from desktop_app.core.config import Config
from desktop_app.core.messages import Text, message
from desktop_app.core.models import reasons
from desktop_app.core.models.llm.base import LLMError
from desktop_app.core.models.llm.factory import OPENAI_BACKENDS, resolve_chat_model
from desktop_app.core.models.registry import display_name
from desktop_app.core.paths import models_dirs

NONE = "none"
SERVER = "server"


@dataclass
class ChatOption:
    """One entry of the model switcher."""

    key: str  # "none" | "server" | "gguf:<absolute path>"
    label: Text
    usable: bool = True
    why: Text = ""  # why it cannot be used here (no xllamacpp)


def local_ggufs(data_dir: Path | None = None) -> list[Path]:
    """The .gguf files in the models folders (and one folder down), each once, by name."""
    found: dict[Path, Path] = {}
    for folder in models_dirs(data_dir):
        if not folder.is_dir():
            continue
        for path in sorted([*folder.glob("*.gguf"), *folder.glob("*/*.gguf")]):
            if path.is_file():
                found.setdefault(path.resolve(), path)
    return sorted(found.values(), key=lambda p: p.name.lower())


def chat_model_options(config: Config, data_dir: Path | None = None) -> list[ChatOption]:
    """No model, the configured server (when a URL is set) and the local GGUF files."""
    options = [ChatOption(NONE, message(reasons.OPTION_NO_MODEL))]
    url = config.llm.url.strip().rstrip("/")
    if url:
        model = config.llm.model.strip() or message(reasons.OPTION_SERVER_DEFAULT)
        options.append(ChatOption(SERVER, message(reasons.OPTION_SERVER, model=model, url=url)))
    ggufs = local_ggufs(data_dir)
    current = resolve_chat_model(config, data_dir)
    if current.backend == "gguf" and Path(current.where).resolve() not in {p.resolve() for p in ggufs}:
        ggufs.append(Path(current.where))  # configured by an absolute path outside the folders
    runs = importlib.util.find_spec("xllamacpp") is not None  # not imported: the window is opening
    for path in ggufs:
        why = "" if runs else message(reasons.LLM_NO_XLLAMACPP)
        known = display_name(path.name)  # a manifest model by its name, as the rest of the app says it
        label = message(reasons.OPTION_LOCAL, name=path.stem if known == path.name else known)
        options.append(ChatOption(f"gguf:{path.resolve()}", label, usable=runs, why=why))
    return options


def current_option(config: Config, data_dir: Path | None = None) -> str:
    """The key of the option the config selects ("none" when it selects nothing that runs)."""
    choice = resolve_chat_model(config, data_dir)
    if choice.backend == "openai":
        return SERVER
    if choice.backend == "gguf":
        return f"gguf:{Path(choice.where).resolve()}"
    return NONE


def with_option(config: Config, key: str) -> Config:
    """A copy of ``config`` whose ``[llm]`` selects the option ``key``; other settings unchanged."""
    new = copy.deepcopy(config)
    if key == NONE:
        new.llm.backend = "none"
    elif key == SERVER:
        if new.llm.backend.strip().lower() not in OPENAI_BACKENDS:
            new.llm.backend = "openai"
    elif key.startswith("gguf:"):
        new.llm.backend = "gguf"
        new.llm.gguf = key.removeprefix("gguf:")
    else:
        raise ValueError(f"not a chat model option: {key!r}")
    return new


@dataclass
class ServerCheck:
    """What "Test connection" found: the server's models, or why it could not be asked."""

    ok: bool
    models: list[str]
    summary: Text  # one line for a person


def check_server(url: str, api_key: str = "", model: str = "", timeout: float = 10.0) -> ServerCheck:
    """Ask an OpenAI-compatible server for its models (``GET {url}/models``); a failure is the
    reason a person reads (refused, timed out, HTTP 401 ...), never an exception."""
    from desktop_app.core.models.llm.openai_compat import OpenAIChatModel

    try:
        client = OpenAIChatModel(url, model, api_key, timeout=timeout, connect_timeout=min(timeout, 5.0))
    except LLMError as exc:  # no URL
        return ServerCheck(False, [], message(reasons.SERVER_FAILED, reason=exc.args[0]))
    try:
        names = client.list_models(timeout)
    except LLMError as exc:
        return ServerCheck(False, [], message(reasons.SERVER_FAILED, reason=exc.args[0]))
    finally:
        client.close()
    where = client.base_url
    if not names:
        return ServerCheck(True, [], message(reasons.SERVER_FOUND_NONE, url=where))
    shown = ", ".join(names[:8]) + (", …" if len(names) > 8 else "")
    found = message(reasons.SERVER_FOUND, url=where, count=len(names), models=shown)
    if model.strip() and model.strip() not in names:
        found = message(reasons.SERVER_MODEL_MISSING, found=found, model=model.strip())
    return ServerCheck(True, names, found)
