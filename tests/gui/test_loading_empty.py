"""The first seconds and the first look: while models load, the status bar says which step runs and
the waiting buttons say why they wait, and saved conversations can be read; an empty chat says what
the app does, which models serve each role and what no language model means, in both languages."""

from __future__ import annotations

import threading
from collections.abc import Iterator

from PySide6.QtCore import Qt

from desktop_app.core.ask.conversation import Conversation
from desktop_app.core.ask.conversation_store import FILE_NAME, ConversationStore
from desktop_app.core.events import Answer, Citation, Event, RouteDecided
from desktop_app.core.messages import translations
from desktop_app.core.models.registry import display_name
from desktop_app.gui.context import LOAD_STEPS
from desktop_app.gui.i18n import set_language
from desktop_app.gui.settings.dialog import SettingsDialog

QUESTION = "What do kakapo eat?"
ANSWER = "Kakapo eat leaves, seeds and fruit [1]."
WAIT = "Available once the knowledge base has opened"


class GatedEmbedder:
    """The session's real embedder, whose first query (the load's warm-up) waits until the test
    opens the gate: the window stays in "Loading the embedding model" as long as the test needs."""

    def __init__(self, inner, gate: threading.Event) -> None:
        self.inner = inner
        self.gate = gate

    name = property(lambda self: self.inner.name)
    dim = property(lambda self: self.inner.dim)
    max_chars = property(lambda self: self.inner.max_chars)

    def embed_documents(self, texts):
        return self.inner.embed_documents(texts)

    def embed_queries(self, texts):
        assert self.gate.wait(120), "the test never opened the gate"
        return self.inner.embed_queries(texts)


def _save_a_conversation(data_dir) -> str:
    store = ConversationStore(data_dir / FILE_NAME, data_dir / "knowledge")
    conv = Conversation()
    cite = Citation(1, "birds/kakapo.md", None, "k-chunk-0", "The kakapo eats leaves, seeds and fruit.")

    def asked() -> Iterator[Event]:
        yield RouteDecided(True, QUESTION, False, "heuristic")
        conv.add_turn(QUESTION, ANSWER)
        yield Answer(ANSWER, [cite], by="extractive")

    list(store.record(conv, asked(), question=QUESTION))
    return conv.id


def test_loading_says_what_loads_buttons_say_why_they_wait_and_old_chats_stay_readable(
    make_window, qtbot, tmp_path, minilm, screenshot
):
    chat_id = _save_a_conversation(tmp_path / "data")
    gate = threading.Event()
    try:
        window = make_window(wait=False, embedder=GatedEmbedder(minilm, gate))
        ctx, knowledge = window.ctx, window.knowledge
        qtbot.waitUntil(lambda: window.loading_label.text() == "Loading the embedding model…", timeout=30_000)
        assert window.loading_bar.isVisible() and window.loading_bar.maximum() == 0  # busy
        assert window.loading_label.isVisible() and not ctx.ready
        status = window.status_text()
        assert status["embedder"].startswith("◌ Embedder: loading…")
        assert all("none" not in text for text in status.values())
        waiting = (knowledge.add_button, knowledge.add_folder_button, knowledge.reindex_button)
        for button in (*waiting, knowledge.remove_button):
            assert not button.isEnabled() and button.toolTip() == WAIT
        assert knowledge.empty_hint.isVisible()
        assert "once the knowledge base has opened" in knowledge.empty_hint.text()

        # The last conversation reopened and the list shows it while the models still load.
        qtbot.waitUntil(lambda: len(window.chat.messages) == 2, timeout=30_000)
        assert window.chat.conversation.id == chat_id and window.chat.last_answer().text == ANSWER
        qtbot.waitUntil(lambda: window.conversations.titles() == [QUESTION], timeout=30_000)
        window.new_conversation()
        window.open_conversation(chat_id)  # read again from the list
        assert window.chat.last_answer().text == ANSWER and not ctx.ready
        screenshot(window, "loading-en")

        # A new chat: the empty state says the models are loading, and no "no language model" yet.
        window.new_conversation()
        empty = window.chat.placeholder
        assert empty.isVisible()
        assert all(label.text() == "○ loading…" for label in empty.model_labels.values())
        assert not empty.llm_note.isVisible()

        set_language("zh_CN")  # live
        assert window.loading_label.text() == "正在加载向量模型…"
        assert window.status_text()["embedder"].startswith("◌ 向量模型: 加载中…")
        assert knowledge.add_button.toolTip() == "知识库打开后即可使用"
        assert empty.model_labels["llm"].text() == "○ 加载中…"
        screenshot(window, "loading-zh")
        set_language("en")

        with qtbot.waitSignal(ctx.kb_ready, timeout=60_000):
            gate.set()
        assert not window.loading_bar.isVisible() and not window.loading_label.isVisible()
        assert window.status_text()["embedder"].startswith(f"● Embedder: {display_name(minilm.name)}")
        for button in waiting:
            assert button.isEnabled() and button.toolTip() == ""
        assert knowledge.remove_button.toolTip() == "Select documents in the list to remove them"
        assert empty.model_labels["embedder"].text() == f"● {display_name(minilm.name)}"  # followed status_changed
        assert empty.llm_note.isVisible()
        ctx.runner.wait_idle(30_000)
        assert knowledge.empty_hint.isVisible() and knowledge.empty_hint.text().startswith("No documents yet")
    finally:
        gate.set()


def test_a_failed_load_stops_the_indicator_and_says_why(make_window, qtbot, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "knowledge").write_text("a file where the knowledge folder should be")
    window = make_window(wait=False)
    qtbot.waitUntil(lambda: bool(window.ctx.load_error), timeout=60_000)
    window.ctx.runner.wait_idle(30_000)
    assert not window.loading_bar.isVisible()
    assert window.loading_label.isVisible()
    assert window.loading_label.text().startswith("Could not open the knowledge base: ")
    button = window.knowledge.add_button
    assert not button.isEnabled() and button.toolTip().startswith("The knowledge base could not be opened: ")
    set_language("zh_CN")
    assert window.loading_label.text().startswith("无法打开知识库：")


def test_the_empty_chat_shows_what_the_app_does_and_the_models_in_both_languages(
    make_window, qtbot, minilm, screenshot
):
    window = make_window()
    empty = window.chat.placeholder
    assert empty.isVisible() and window.chat.messages == []
    texts = empty.texts()
    for heading in ("Build your knowledge base", "Ask a question", "Identify a photo"):
        assert heading in texts
    assert "Models in use" in texts
    # Config() defaults: the bundled embedder and classifier, no reranker, no language model.
    rows = {role: label.text() for role, label in empty.model_labels.items()}
    assert rows["embedder"] == f"● {display_name(minilm.name)}"
    assert rows["classifier"].startswith("● EfficientNet-Lite0")
    assert rows["reranker"] == "○ none" and rows["llm"] == "○ none"
    assert empty.model_labels["llm"].toolTip()  # why: no language model configured
    assert empty.llm_note.isVisible()
    assert empty.llm_note.text() == (
        "No language model: answers are quoted sentences from your documents (extractive)."
    )
    assert empty.manage_button.text() == "Manage models…"
    hint = window.knowledge.empty_hint
    assert (
        hint.isVisible()
        and hint.text() == "No documents yet. Drop files or folders here, or click “Add files…”."
    )
    screenshot(window, "empty-en")

    set_language("zh_CN")  # every text switches live
    texts = empty.texts()
    for heading in ("建立你的知识库", "提问", "识别照片", "正在使用的模型", "语言模型", "管理模型…"):
        assert heading in texts
    assert empty.model_labels["llm"].text() == "○ 无"
    assert empty.llm_note.text() == "没有语言模型：回答是从你的文档中摘录的原句（摘录式）。"
    assert hint.text().startswith("还没有文档")
    screenshot(window, "empty-zh")
    # It wraps to a narrow chat column: nothing to scroll sideways.
    window.resize(900, 700)
    qtbot.waitUntil(lambda: window.chat.scroll.viewport().width() < 500, timeout=5_000)
    qtbot.wait(50)
    assert window.chat.scroll.horizontalScrollBar().maximum() == 0
    assert empty.width() <= window.chat.scroll.viewport().width()

    qtbot.mouseClick(empty.manage_button, Qt.LeftButton)
    dialogs = [d for d in window.findChildren(SettingsDialog) if d.isVisible()]
    assert len(dialogs) == 1
    dialog = dialogs[0]
    assert dialog.tabs.currentWidget() is dialog.models  # on the model manager
    dialog.reject()
    window.ctx.runner.wait_idle(30_000)


def test_the_loading_steps_have_translations():
    zh = translations("zh_CN")
    assert all(zh.gettext(step) != step for step in LOAD_STEPS)
