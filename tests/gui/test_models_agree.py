"""`kdesk models`, the status bar and the running assistant name the same chat model, whatever
`llm.backend` says: all three read the Desk's one decision (models/llm/factory.py)."""

from __future__ import annotations

import json

import pytest

from desktop_app.cli.main import main
from desktop_app.core.config import Config, save_config
from desktop_app.core.models.llm.factory import BACKENDS
from desktop_app.core.models.llm.gguf import GGUFChatModel
from desktop_app.core.models.llm.openai_compat import OpenAIChatModel

URL = "http://127.0.0.1:9/v1"  # nothing listens: deciding never connects


def _cases() -> list[tuple[str, dict[str, str], type | None]]:
    """(case, llm settings, the class that must run) for every backend the factory accepts,
    each configured completely and incompletely, plus an unknown name."""
    cases: list[tuple[str, dict[str, str], type | None]] = []
    for backend in BACKENDS:
        if backend == "gguf":
            cases.append(("gguf", {"backend": "gguf", "gguf": "tiny.gguf"}, GGUFChatModel))
            cases.append(("gguf-missing-file", {"backend": "gguf", "gguf": "absent.gguf"}, None))
        elif backend == "none":
            cases += [("none", {"backend": "none"}, None), ("empty", {"backend": ""}, None)]
        else:
            cases.append((backend, {"backend": backend, "url": URL, "model": "qwen"}, OpenAIChatModel))
            cases.append((f"{backend}-no-url", {"backend": backend}, None))
    cases.append(("unknown", {"backend": "telepathy", "url": URL}, None))
    return cases


@pytest.mark.parametrize("case, llm, runs", _cases(), ids=[c[0] for c in _cases()])
def test_models_command_status_bar_and_assistant_agree(make_window, tmp_path, capsys, case, llm, runs):
    data = tmp_path / "data"
    (data / "models").mkdir(parents=True)
    (data / "models" / "tiny.gguf").write_bytes(b"GGUF")  # found, never started
    config = Config()
    for key, value in llm.items():
        setattr(config.llm, key, value)
    save_config(config, data / "config.toml")

    assert main(["models", "--json", "--data-dir", str(data)]) == 0
    chat = next(r for r in json.loads(capsys.readouterr().out)["roles"] if r["role"] == "chat")

    window = make_window(config)
    running = window.ctx.assistant.chat_model
    shown = window.ctx.status["llm"]
    label = window.status_labels["llm"].text()
    if runs is None:
        assert running is None, case
        assert shown.name is None and label.startswith("○"), (case, label)
        assert chat["active_id"] in (None, "extractive"), (case, chat)
        # Why, in the same words: the status bar's tooltip and `kdesk models` share the reason.
        assert shown.reason and str(shown.reason) in chat["reason"], (case, shown.reason, chat["reason"])
    else:
        assert isinstance(running, runs), (case, running)
        assert shown.name == chat["active"], (case, shown, chat)
        assert label == f"● LLM: {chat['active']}", (case, label)
        if runs is GGUFChatModel:
            assert chat["path"] == str(running.path) and not running.server.running
        else:
            assert running.base_url == URL and running.model == "qwen"
