"""Message widgets of the chat: the user's question and the assistant's streamed, cited answer."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from desktop_app.core import events as ev
from desktop_app.gui.chat.markdown import plain_tooltip
from desktop_app.gui.i18n import on_language_changed, tr
from desktop_app.gui.widgets import AutoHeightBrowser, citation_label, plain_label

RENDER_INTERVAL_MS = 60  # re-render streamed Markdown at most this often


def mark_gone(widget: QWidget, sources: set[str]) -> None:
    """Label the citation chips of a saved message whose file has left the knowledge folder. They
    stay clickable: the viewer then shows the passage as it was saved."""
    for chip in widget.findChildren(QPushButton, "citeChip"):
        if chip.property("source") in sources:
            chip.setText(f"{chip.text()} {tr('(removed)')}")
            chip.setProperty("gone", True)
            chip.setToolTip(tr("This file is no longer in the knowledge folder; the saved passage is shown."))


class UserMessage(QWidget):
    """The user's question: a right-aligned bubble as wide as its text."""

    def __init__(self, text: str, parent=None) -> None:
        super().__init__(parent)
        self.text = text
        self.bubble = QFrame(objectName="userMessage")
        self.bubble.setSizePolicy(QSizePolicy.Maximum, QSizePolicy.Preferred)
        label = plain_label(text, wrap=len(text) > 60)  # short questions stay on one line
        inner = QHBoxLayout(self.bubble)
        inner.setContentsMargins(12, 8, 12, 8)
        inner.addWidget(label)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(80, 0, 0, 0)
        lay.addStretch(1)
        lay.addWidget(self.bubble)


class AnswerMessage(QFrame):
    """The assistant's answer: route note, streamed Markdown, citation chips, warnings."""

    citation_clicked = Signal(object)  # events.Citation

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("answerMessage")
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
        self.chips_row = QHBoxLayout()
        self.chips_row.setSpacing(6)
        self.chips: list[QWidget] = []
        self.notes = plain_label(object_name="warning")
        self.notes.hide()
        self.typing = plain_label(tr("Thinking…"), object_name="muted")

        lay = QVBoxLayout(self)
        lay.setContentsMargins(12, 8, 12, 8)
        lay.setSpacing(4)
        lay.addWidget(self.route_label)
        lay.addWidget(self.typing)
        lay.addWidget(self.body)
        lay.addLayout(self.chips_row)
        lay.addWidget(self.notes)
        self.body.hide()

        self._render_timer = QTimer(self)
        self._render_timer.setSingleShot(True)
        self._render_timer.setInterval(RENDER_INTERVAL_MS)
        self._render_timer.timeout.connect(self._render)
        on_language_changed(self.retranslate)

    def retranslate(self, *_: object) -> None:
        if self.route is not None:
            self._show_route(self.route)
        if not self.finished:
            self.typing.setText(tr("Thinking…"))

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
        elif isinstance(event, ev.Warning):
            self.add_note(event.message)
        elif isinstance(event, ev.Error):
            self.add_note(tr("Error: {message}").format(message=event.message))

    def _show_route(self, route: Any) -> None:
        if route.use_rag:
            text = tr("Searched your documents for “{query}”").format(query=route.search_query)
        else:
            text = tr("Answered without searching your documents")
        self.route_label.setText(text)
        self.route_label.show()

    def _render(self) -> None:
        self.typing.hide()
        self.body.show()
        numbers = {c.n for c in self.citations} if self.citations else set()
        self.body.set_markdown(self.text, numbers)

    def _show_chips(self) -> None:
        for chip in self.chips:
            chip.deleteLater()
        self.chips = []
        if self.answer is not None and self.answer.refused and self.citations:
            label = plain_label(tr("Related:"), object_name="muted")
            self.chips_row.addWidget(label)
            self.chips.append(label)
        for citation in self.citations:
            chip = QPushButton(citation_label(citation), objectName="citeChip")
            chip.setProperty("source", citation.source)  # mark_gone finds it by its file
            chip.setCursor(Qt.PointingHandCursor)
            chip.setToolTip(
                plain_tooltip(" ".join(citation.text.split())[:300] if citation.text else citation.source)
            )
            chip.clicked.connect(lambda _=False, c=citation: self.citation_clicked.emit(c))
            self.chips_row.addWidget(chip)
            self.chips.append(chip)
        self.chips_row.addStretch(1)

    def _cite_number(self, n: int) -> None:
        for citation in self.citations:
            if citation.n == n:
                self.citation_clicked.emit(citation)
                return

    def add_note(self, text: str) -> None:
        current = self.notes.text()
        self.notes.setText(f"{current}\n{text}" if current else text)
        self.notes.show()

    def finish(self) -> None:
        self.finished = True
        self.typing.hide()
        if self.text and self.answer is None:
            self._render_timer.stop()
            self._render()
        if not self.text and not self.notes.text():
            self.add_note(tr("No answer."))

    def mark_stopped(self) -> None:
        self.add_note(tr("Stopped."))
