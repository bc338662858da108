"""Saved conversations in the window: the last one reopens after a restart with working citations
and its follow-up subject; the list renames, searches, starts and deletes conversations."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from desktop_app.core.ask.conversation import Conversation
from desktop_app.core.ask.conversation_store import FILE_NAME, ConversationStore
from desktop_app.core.events import Answer, Citation, RouteDecided
from desktop_app.gui.chat.conversations import ID_ROLE
from desktop_app.gui.chat.messages import AnswerMessage, UserMessage

VICKSBURG = "docs/pypdf/resources/Seige_of_Vicksburg_Sample_OCR.pdf"  # cannister shot on page 3
QUESTION = "What is a cannister shot made of?"


def test_the_last_conversation_reopens_after_a_restart_and_goes_on(
    make_window, qtbot, shared_data, monkeypatch, screenshot
):
    window = make_window()
    with qtbot.waitSignal(window.knowledge.batch_finished, timeout=120_000):
        window.knowledge.add_paths([shared_data / VICKSBURG])
    with qtbot.waitSignal(window.chat.answer_finished, timeout=60_000):
        window.chat.ask(QUESTION)
    chat_id = window.chat.conversation.id
    qtbot.waitUntil(lambda: window.conversations.titles() == [QUESTION], timeout=10_000)
    window.close()  # the app quits: nothing survives but the data folder

    window = make_window()
    assert [type(w) for w in window.chat.messages] == [UserMessage, AnswerMessage]
    assert window.chat.conversation.id == chat_id
    assert window.conversations.list.currentItem().data(ID_ROLE) == chat_id
    answer = window.chat.last_answer()
    assert answer.finished and answer.route.use_rag and answer.text.strip()
    target = next(c for c in answer.citations if c.page == 3)
    qtbot.mouseClick(answer.chips[answer.citations.index(target)], Qt.LeftButton)
    assert window.viewer.isVisible() and window.viewer.mode == "pdf"
    qtbot.waitUntil(lambda: window.viewer.current_page() == 3, timeout=10_000)

    # A follow-up after the restart resolves against the old subject.
    with qtbot.waitSignal(window.chat.answer_finished, timeout=60_000) as blocker:
        window.chat.ask("What are its balls packed with?")
    follow = blocker.args[0]
    assert follow.route.is_followup and "cannister" in follow.route.search_query.lower()
    assert any(c.page == 3 for c in follow.citations)
    stored = window.ctx.desk.conversations.load(chat_id)
    assert [m.question for m in stored.messages] == [QUESTION, "What are its balls packed with?"]
    screenshot(window, "06-saved-conversation")

    # Rename in place, search by title.
    lst = window.conversations
    lst.list.currentItem().setText("Vicksburg")
    qtbot.waitUntil(lambda: window.ctx.desk.conversations.find("Vicksburg") is not None, timeout=10_000)
    assert window.ctx.runner.wait_idle(10_000) and lst.titles() == ["Vicksburg"]
    lst.search.setText("VICKS")
    assert lst.titles() == ["Vicksburg"]
    lst.search.setText("lincoln")
    assert lst.titles() == []
    lst.search.clear()

    # New: an empty chat, saved only with its first answer.
    qtbot.mouseClick(lst.new_button, Qt.LeftButton)
    assert window.chat.messages == [] and window.chat.conversation is None
    assert lst.list.currentItem() is None and lst.titles() == ["Vicksburg"]

    # Opening it from the list, then deleting it (after the confirmation) empties the chat.
    lst.list.setCurrentRow(0)
    assert len(window.chat.messages) == 4 and window.chat.conversation.id == chat_id
    monkeypatch.setattr(QMessageBox, "question", lambda *args, **kwargs: QMessageBox.Yes)
    qtbot.mouseClick(lst.delete_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: lst.titles() == [], timeout=10_000)
    assert window.chat.messages == [] and window.chat.conversation is None
    assert window.ctx.desk.conversations.list_chats() == []


def test_a_removed_cited_file_is_marked_and_the_saved_passage_shown(make_window, qtbot, tmp_path):
    data = tmp_path / "data"
    store = ConversationStore(data / FILE_NAME, data / "knowledge")
    conv = Conversation(scope="birds")
    passage = "The kakapo is a flightless nocturnal parrot."

    def events():
        yield RouteDecided(True, "kakapo", False, "heuristic")
        conv.add_turn("What is a kakapo?", "A parrot [1].")
        yield Answer(
            "A parrot [1].", [Citation(1, "gone/kakapo.md", None, "x-chunk-0", passage)], by="extractive"
        )

    list(store.record(conv, events(), question="What is a kakapo?"))
    window = make_window()
    assert window.knowledge.current_scope() == "birds"  # the conversation's collection is searched
    answer = window.chat.last_answer()
    chip = answer.chips[0]
    assert chip.text() == "[1] kakapo.md (removed)" and chip.property("gone")
    with qtbot.waitSignal(window.ctx.runner.job_finished, timeout=10_000):
        qtbot.mouseClick(chip, Qt.LeftButton)
    qtbot.waitUntil(lambda: window.viewer.text_view.toPlainText() == passage, timeout=10_000)
    assert Path(window.viewer.source).name == "kakapo.md"
