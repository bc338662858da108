"""Actions on a message: Copy an answer with its citations, Regenerate it as a new saved turn,
Copy a citation (file, page and passage). The real clipboard of the offscreen platform."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from desktop_app.core import events as ev
from desktop_app.gui.chat.messages import AnswerMessage

NOTES = Path(__file__).resolve().parents[2] / "knowledge" / "parrots"
CITED = [
    ev.Citation(
        n=1, source="parrots/african-grey-parrot.md", page=None, chunk_id="g-0", text="A grey parrot."
    ),
    ev.Citation(n=2, source="field guide.pdf", page=4, chunk_id="f-3", text="Red tail,\n  white face."),
]


def _answer(qtbot, question: str = "What colour is its tail?") -> AnswerMessage:
    message = AnswerMessage(question=question)
    qtbot.addWidget(message)
    message.handle_event(ev.Answer("The tail is **red** [1][2].", CITED, by="extractive"))
    message.finish()
    message.show()
    return message


def test_copy_puts_the_answer_and_its_citations_on_the_clipboard(qtbot):
    message = _answer(qtbot)
    assert message.copy_button.isVisible() and message.regenerate_button.isVisible()
    QGuiApplication.clipboard().clear()
    qtbot.mouseClick(message.copy_button, Qt.LeftButton)
    assert QGuiApplication.clipboard().text() == (
        "The tail is **red** [1][2].\n\n[1] parrots/african-grey-parrot.md\n[2] field guide.pdf, p. 4"
    )


def test_copy_on_a_citation_chip_gives_file_page_and_passage(qtbot):
    message = _answer(qtbot)
    menu = message.chips[1].make_menu()
    assert [a.text() for a in menu.actions()] == ["Copy citation"]
    QGuiApplication.clipboard().clear()
    menu.actions()[0].trigger()
    assert QGuiApplication.clipboard().text() == "field guide.pdf, p. 4\n\nRed tail,\n  white face."


def test_an_answer_still_streaming_offers_no_actions(qtbot):
    message = AnswerMessage(question="Why?")
    qtbot.addWidget(message)
    message.show()
    message.handle_event(ev.Token("Because"))
    assert not message.actions_box.isVisible()


def test_regenerate_asks_again_as_a_new_saved_turn_of_the_conversation(make_window, qtbot, drop):
    window = make_window()
    with qtbot.waitSignal(window.knowledge.batch_finished, timeout=120_000):
        drop(window.knowledge, [NOTES / "kakapo.md"])
    window.ctx.runner.wait_idle(30_000)
    question = "What does the kakapo eat?"
    with qtbot.waitSignal(window.chat.answer_finished, timeout=60_000) as blocker:
        window.chat.ask(question)
    first = blocker.args[0]
    conversation = window.chat.conversation
    with qtbot.waitSignal(window.chat.answer_finished, timeout=60_000) as blocker:
        qtbot.mouseClick(first.regenerate_button, Qt.LeftButton)
    second = blocker.args[0]
    assert second is not first and second.question == question and second.text
    assert [type(w).__name__ for w in window.chat.messages] == ["UserMessage", "AnswerMessage"] * 2
    assert window.chat.messages[2].text == question
    assert window.chat.conversation is conversation  # the same conversation, one turn more
    saved = window.ctx.desk.conversations.load(conversation.id)
    assert [m.question for m in saved.messages] == [question, question]
    # A reopened conversation's answers regenerate too.
    window.chat.open_chat(saved)
    reopened = window.chat.messages[-1]
    assert isinstance(reopened, AnswerMessage) and reopened.question == question
    assert reopened.regenerate_button.isVisibleTo(reopened)


def test_a_long_url_in_a_question_wraps_but_copies_whole(qtbot):
    from PySide6.QtGui import QKeySequence
    from PySide6.QtWidgets import QLabel

    from desktop_app.gui.chat.messages import UserMessage
    from desktop_app.gui.widgets import ZWSP, PlainLabel

    url = "https://example.org/" + "a" * 280
    message = UserMessage(f"Is this about parrots? {url}")
    qtbot.addWidget(message)
    message.resize(300, 400)
    message.show()
    label = message.findChild(PlainLabel)
    assert label.minimumSizeHint().width() < 300  # the URL breaks inside...
    assert label.text() == f"Is this about parrots? {url}"  # ...at display-only break points
    label.setFocus()
    shown = QLabel.text(label)  # what Qt lays out: the text with its break points
    assert ZWSP in shown
    label.setSelection(0, len(shown))
    QGuiApplication.clipboard().clear()
    qtbot.keySequence(label, QKeySequence.Copy)
    assert QGuiApplication.clipboard().text() == f"Is this about parrots? {url}"
    # Chinese breaks between characters by itself: no break points are added to it.
    zh = PlainLabel("非洲灰鹦鹉的尾巴是红色的，脸是白色的，嘴是黑色的，眼睛是淡黄色的。")
    qtbot.addWidget(zh)
    assert QLabel.text(zh) == zh.text()
