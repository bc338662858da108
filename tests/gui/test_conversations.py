"""Saved conversations in the window: the last one reopens after a restart with working citations
and its follow-up subject; the list renames, searches, starts and deletes conversations."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QPushButton

from desktop_app.core.ask.conversation import Conversation
from desktop_app.core.ask.conversation_store import FILE_NAME, ConversationStore, StoredMessage
from desktop_app.core.events import (
    Answer,
    Candidate,
    Citation,
    Classified,
    Decision,
    Event,
    Retrieved,
    RouteDecided,
)
from desktop_app.core.library.documents import Hit
from desktop_app.gui.chat.conversations import ID_ROLE
from desktop_app.gui.chat.messages import AnswerMessage, UserMessage
from desktop_app.gui.chat.panel import RECENT_MESSAGES
from desktop_app.gui.identify.card import IdentifyCard

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


def test_a_long_conversation_reopens_with_its_last_messages_cards_and_removed_files_marked(
    make_window, qtbot, tmp_path, shared_data, screenshot
):
    data = tmp_path / "data"
    store = ConversationStore(data / FILE_NAME, data / "knowledge")
    conv = Conversation(scope="birds")
    passage = "The kakapo is a flightless nocturnal parrot."
    gone = Citation(1, "gone/kakapo.md", None, "x-chunk-0", passage)

    def asked(question: str, cites: list[Citation]) -> Iterator[Event]:
        yield RouteDecided(True, question, False, "heuristic")
        conv.add_turn(question, "An answer [1].")
        yield Answer("An answer [1].", cites, by="extractive")

    def identified() -> Iterator[Event]:
        yield Classified([Candidate("Ara_macao", 0.9, "gallery")], "High", False)
        yield Retrieved([Hit("x-chunk-0", "x", passage, gone.source, None, 0, 1, 0.5)])
        yield Decision("Ara_macao", ["the gallery agrees"], False, "")
        yield Answer("A scarlet macaw.", [], by="extractive")

    list(store.record(conv, asked("What is a kakapo?", [gone]), question="What is a kakapo?"))
    for i in range(RECENT_MESSAGES):
        list(store.record(conv, asked(f"question {i}?", []), question=f"question {i}?"))
    list(store.record(conv, identified(), image=shared_data / "images" / "coral" / "parrot.jpg"))

    window = make_window()
    chat = window.chat
    assert window.knowledge.current_scope() == "birds"  # the conversation's collection is searched
    # The last RECENT_MESSAGES messages, the photo's card last; the first two wait for a click.
    card = chat.messages[-1]
    assert isinstance(card, IdentifyCard) and not card.photo.pixmap().isNull()
    assert card.decision_name.text() == "Ara macao" and card.evidence[0].text == passage
    evidence_chip = card.findChildren(QPushButton, "citeChip")[0]
    assert evidence_chip.property("gone") and evidence_chip.text().endswith("(removed)")
    assert len(chat.messages) == 2 * (RECENT_MESSAGES - 1) + 1
    assert chat.earlier_button.isVisible() and chat.earlier_button.text() == "Show earlier messages (2)"
    qtbot.mouseClick(chat.earlier_button, Qt.LeftButton)
    screenshot(window, "07-earlier-messages")
    assert not chat.earlier_button.isVisible() and len(chat.messages) == 2 * (RECENT_MESSAGES + 1) + 1
    assert chat.messages[0].text == "What is a kakapo?"

    # The removed file's chip says so, and opens the passage as it was saved.
    chip = chat.messages[1].chips[0]
    assert chip.text() == "[1] kakapo.md (removed)" and chip.property("gone")
    with qtbot.waitSignal(window.ctx.runner.job_finished, timeout=10_000):
        qtbot.mouseClick(chip, Qt.LeftButton)
    qtbot.waitUntil(lambda: window.viewer.text_view.toPlainText() == passage, timeout=10_000)
    assert Path(window.viewer.source).name == "kakapo.md"


def test_a_damaged_store_is_said_in_the_status_bar_and_the_list_works(make_window, qtbot, tmp_path):
    """The window finds the damaged store when it reopens the last conversation: the status bar
    names both files and what was kept; the list shows the kept conversations (issue 44)."""
    path = tmp_path / "data" / FILE_NAME
    store = ConversationStore(path, tmp_path / "data" / "knowledge")
    for i in range(3):
        store.append(Conversation(), StoredMessage("ask", f"question {i}", "an answer"))
    data = path.read_bytes()
    # The page of `messages` holds all three rows: write over it, so the conversations stay.
    with closing(sqlite3.connect(path)) as db:
        root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'messages'").fetchone()[0]
    path.write_bytes(data[: (root - 1) * 4096] + b"\x00" * 4096 + data[root * 4096 :])
    window = make_window(wait=False)
    qtbot.waitUntil(lambda: "was damaged" in window.statusBar().currentMessage(), timeout=20_000)
    said = window.statusBar().currentMessage()
    aside = next(path.parent.glob(f"{FILE_NAME}.damaged-*"))
    assert said == (
        f"The conversation store {path} was damaged: it was set aside as {aside}; 3 conversations were kept"
        " in a new store."
    )
    qtbot.waitUntil(
        lambda: sorted(window.conversations.titles()) == ["question 0", "question 1", "question 2"]
    )
    window.ctx.runner.wait_idle(60_000)
