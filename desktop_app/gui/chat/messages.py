"""Message widgets of the chat: the user's question and the assistant's streamed, cited answer.

Both wrap to the chat column at any width (citation chips flow onto more rows, long words break).
An answer offers Copy (its text, then one "[n] file, page N" line per citation) and Regenerate
(the same question again, as a new turn of the conversation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLineEdit, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from desktop_app.core import events as ev
from desktop_app.core.ask import notes
from desktop_app.core.messages import N_, message
from desktop_app.gui.i18n import current_language, on_language_changed, tr, tr_core
from desktop_app.gui.widgets import (
    AutoHeightBrowser,
    CiteChip,
    FlowLayout,
    citation_label,
    citation_reference,
    plain_label,
)

RENDER_INTERVAL_MS = 60  # re-render streamed Markdown at most this often
# The app's own words an answer opens with (the note of an answer without a language model, the
# refusal when the documents hold no answer), written in the question's language: shown in the
# window's. Messages without parameters, so the text an answer is stored as is found by their
# renderings. (Not the note about passages in the other language: which language the passages are
# in depends on the question.)
_ANSWER_NOTES = (
    notes.NO_MODEL_PASSAGES,
    notes.NO_MODEL_NOTHING_FOUND,
    notes.NO_MODEL_CHAT,
    notes.MODEL_FAILED_PASSAGES,
    notes.MODEL_FAILED_NOTHING_FOUND,
    notes.NOT_ANSWERED,
)

# The router's kinds of reading (router.py), as a window in another language names them.
KIND_NAMES = {
    "none": N_("no documents needed"),
    "passages": N_("passages of your documents"),
    "document": N_("whole documents"),
    "library": N_("the list of your documents"),
}


def shown_answer_text(text: str) -> str:
    """The answer's text with its leading note in the UI language; the rest as written."""
    for code in _ANSWER_NOTES:
        for written in notes.written_forms(code):
            if text == written or text.startswith(written + "\n\n"):
                return tr_core(message(code)) + text[len(written) :]
    return text


def mark_gone(widget: QWidget, sources: set[str]) -> None:
    """Label the citation chips of a saved message whose file has left the knowledge folder. They
    stay clickable: the viewer then shows the passage as it was saved."""
    for chip in widget.findChildren(QPushButton, "citeChip"):
        if chip.property("source") in sources:
            chip.setText(f"{chip.text()} " + tr("(removed)"))
            chip.setProperty("gone", True)
            chip.setToolTip(tr("This file is no longer in the knowledge folder; the saved passage is shown."))


class UserMessage(QWidget):
    """The user's question: a right-aligned bubble as wide as its text, with Edit beside it: the
    question edited and sent again replaces its turn and the turns after it (``edit_sent``)."""

    edit_sent = Signal(object, str)  # this message, the edited question

    def __init__(self, text: str, parent=None) -> None:
        super().__init__(parent)
        self.text = text
        self.bubble = QFrame(objectName="userMessage")
        self.bubble.setSizePolicy(QSizePolicy.Maximum, QSizePolicy.Preferred)
        label = plain_label(text)  # one line when it fits (the label's hint), wrapped when not
        inner = QHBoxLayout(self.bubble)
        inner.setContentsMargins(12, 8, 12, 8)
        inner.addWidget(label)
        self.edit_button = QPushButton(objectName="messageAction")
        self.edit_button.clicked.connect(self.start_edit)
        self.editor = QLineEdit(objectName="editInput")
        self.editor.returnPressed.connect(self.send_edit)
        self.send_edit_button = QPushButton()
        self.send_edit_button.clicked.connect(self.send_edit)
        self.cancel_edit_button = QPushButton()
        self.cancel_edit_button.clicked.connect(self.cancel_edit)
        self.edit_box = QWidget()
        edit_row = QHBoxLayout(self.edit_box)
        edit_row.setContentsMargins(0, 0, 0, 0)
        edit_row.addWidget(self.editor, 1)
        edit_row.addWidget(self.send_edit_button)
        edit_row.addWidget(self.cancel_edit_button)
        self.edit_box.hide()
        lay = QHBoxLayout(self)
        lay.setContentsMargins(40, 0, 0, 0)
        lay.addStretch(1)
        lay.addWidget(self.edit_button, 0, Qt.AlignBottom)
        lay.addWidget(self.bubble)
        lay.addWidget(self.edit_box, 4)
        on_language_changed(self.retranslate)
        self.retranslate()

    def retranslate(self, *_: object) -> None:
        self.edit_button.setText(tr("Edit"))
        self.edit_button.setToolTip(tr("Edit this question and send it again; the answers after it are removed"))
        self.send_edit_button.setText(tr("Send"))
        self.cancel_edit_button.setText(tr("Cancel"))

    def start_edit(self) -> None:
        """Put the question in an editor in place of the bubble."""
        self.editor.setText(self.text)
        self.bubble.hide()
        self.edit_button.hide()
        self.edit_box.show()
        self.editor.setFocus()
        self.editor.selectAll()

    def cancel_edit(self) -> None:
        self.edit_box.hide()
        self.bubble.show()
        self.edit_button.show()

    def send_edit(self) -> None:
        text = self.editor.text().strip()
        if not text:
            return
        self.cancel_edit()
        self.edit_sent.emit(self, text)


class AnswerMessage(QFrame):
    """The assistant's answer: route note, streamed Markdown, citation chips, warnings."""

    citation_clicked = Signal(object)  # events.Citation
    regenerate_requested = Signal(str)  # the question, to be asked again

    def __init__(self, parent=None, question: str = "") -> None:
        super().__init__(parent)
        self.setObjectName("answerMessage")
        self.question = question
        self.text = ""
        self.tokens: list[str] = []
        self.citations: list[Any] = []
        self.hits: list[Any] = []
        self.answer: Any = None
        self.route: Any = None
        self.finished = False
        self.events: list[Any] = []  # everything received, in order (tests, debugging)

        self.route_label = plain_label(object_name="muted")
        self.route_label.hide()
        self.body = AutoHeightBrowser()
        self.body.citation_clicked.connect(self._cite_number)
        self.chips_box = QWidget()
        self.chips_row = FlowLayout(self.chips_box)
        self.chips_box.hide()
        self.chips: list[QWidget] = []
        self.notes = plain_label(object_name="warning")
        self.notes.hide()
        self._notes: list[Callable[[], str]] = []  # each note's text in the current language
        self.typing = plain_label(tr("Thinking…"), object_name="muted")
        self.copy_button = QPushButton(objectName="messageAction")
        self.copy_button.clicked.connect(self.copy)
        self.regenerate_button = QPushButton(objectName="messageAction")
        self.regenerate_button.clicked.connect(self.regenerate)
        self.actions_box = QWidget()
        actions = QHBoxLayout(self.actions_box)
        actions.setContentsMargins(0, 0, 0, 0)
        actions.addWidget(self.copy_button)
        actions.addWidget(self.regenerate_button)
        actions.addStretch(1)
        self.actions_box.hide()  # shown once the answer is complete

        lay = QVBoxLayout(self)
        lay.setContentsMargins(12, 8, 12, 8)
        lay.setSpacing(4)
        lay.addWidget(self.route_label)
        lay.addWidget(self.typing)
        lay.addWidget(self.body)
        lay.addWidget(self.chips_box)
        lay.addWidget(self.notes)
        lay.addWidget(self.actions_box)
        self.body.hide()

        self._render_timer = QTimer(self)
        self._render_timer.setSingleShot(True)
        self._render_timer.setInterval(RENDER_INTERVAL_MS)
        self._render_timer.timeout.connect(self._render)
        on_language_changed(self.retranslate)
        self.retranslate()

    def retranslate(self, *_: object) -> None:
        self.copy_button.setText(tr("Copy"))
        self.copy_button.setToolTip(tr("Copy the answer and its citations"))
        self.regenerate_button.setText(tr("Regenerate"))
        self.regenerate_button.setToolTip(tr("Ask the same question again"))
        if self.route is not None:
            self._show_route(self.route)
        if not self.finished:
            self.typing.setText(tr("Thinking…"))
        if self._notes:
            self._show_notes()
        if self.answer is not None:
            self._render()  # its leading note, if any, in the new language

    # -- events --------------------------------------------------------------------------------
    def handle_event(self, event: Any) -> None:
        self.events.append(event)
        if isinstance(event, ev.RouteDecided):
            self.route = event
            self._show_route(event)
        elif isinstance(event, ev.Retrieved):
            self.hits = list(event.hits)
        elif isinstance(event, ev.Token):
            self.tokens.append(event.text)
            self.text = "".join(self.tokens)
            if not self._render_timer.isActive():
                self._render_timer.start()
        elif isinstance(event, ev.Answer):
            self.answer = event
            self.text = event.text
            # A refusal cites nothing; its nearest passages are offered as chips under "Related".
            self.citations = list(event.related if event.refused else event.citations)
            self._render_timer.stop()
            self._render()
            self._show_chips()
        elif isinstance(event, ev.Progress):  # a whole document read part by part, before any token
            self.typing.setText(tr_core(event.what))
        elif isinstance(event, ev.Warning):
            self.add_note(lambda m=event.message: tr_core(m))
        elif isinstance(event, ev.Error):
            self.add_note(lambda m=event.message: tr("Error: {message}").format(message=tr_core(m)))

    def _show_route(self, route: Any) -> None:
        kind = getattr(route, "kind", "")
        if kind == "library":
            text = tr("Answered from the list of your documents")
        elif kind == "document":
            text = tr("Read whole documents")
        elif route.use_rag:
            text = tr("Searched your documents for “{query}”").format(query=route.search_query)
        else:
            text = tr("Answered without searching your documents")
        self.route_label.setText(text)
        # Which kind of reading the router chose, and its own words for why: those are English
        # (the router's rule), so another language's window names the kind alone.
        if current_language() == "en":
            why = tr("Chose {kind} ({by}): {reason}").format(kind=kind, by=route.by, reason=route.reason)
        else:
            why = tr("Chose: {kind}").format(kind=tr(KIND_NAMES.get(kind, kind)))
        self.route_label.setToolTip(why if route.reason else "")
        self.route_label.show()

    def _render(self) -> None:
        self.typing.hide()
        self.body.show()
        numbers = {c.n for c in self.citations} if self.citations else set()
        self.body.set_markdown(shown_answer_text(self.text), numbers)

    def _show_chips(self) -> None:
        for chip in self.chips:
            chip.deleteLater()
        self.chips = []
        if self.answer is not None and self.answer.refused and self.citations:
            label = plain_label(tr("Related:"), object_name="muted")
            self.chips_row.addWidget(label)
            self.chips.append(label)
        for citation in self.citations:
            chip = CiteChip(citation_label(citation), citation.source, citation.page, citation.text or "")
            chip.clicked.connect(lambda _=False, c=citation: self.citation_clicked.emit(c))
            self.chips_row.addWidget(chip)
            self.chips.append(chip)
        self.chips_box.setVisible(bool(self.chips))

    def _cite_number(self, n: int) -> None:
        for citation in self.citations:
            if citation.n == n:
                self.citation_clicked.emit(citation)
                return

    def add_note(self, text: str | Callable[[], str]) -> None:
        """A note under the answer: a text, or a function giving it in the current language (a
        core message, re-rendered when the language changes)."""
        self._notes.append(text if callable(text) else lambda: text)
        self._show_notes()

    def _show_notes(self) -> None:
        self.notes.setText("\n".join(note() for note in self._notes))
        self.notes.show()

    def finish(self) -> None:
        self.finished = True
        self.typing.hide()
        if self.text and self.answer is None:
            self._render_timer.stop()
            self._render()
        if not self.text and not self.notes.text():
            self.add_note(lambda: tr("No answer."))
        self.copy_button.setVisible(bool(self.text))
        self.regenerate_button.setVisible(bool(self.question))
        self.actions_box.setVisible(bool(self.text or self.question))

    # -- actions -------------------------------------------------------------------------------
    def copy_text(self) -> str:
        """The answer as shown, then its citations as "[n] file, page N" lines."""
        lines = [f"[{c.n}] {citation_reference(c.source, c.page)}" for c in self.citations]
        return self.text.strip() + ("\n\n" + "\n".join(lines) if lines else "")

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.copy_text())

    def regenerate(self) -> None:
        if self.question:
            self.regenerate_requested.emit(self.question)

    def mark_stopped(self) -> None:
        self.add_note(lambda: tr("Stopped."))
