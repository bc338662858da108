"""The chat panel: message list, input row (text, attach image, send, stop), drops.

Questions run ``Assistant.ask`` on the task runner and stream events into an ``AnswerMessage``;
photos (dropped or attached) run ``Assistant.identify`` into an ``IdentifyCard``. Documents dropped
here are handed to the knowledge panel (``documents_dropped``). A saved conversation is shown by
replaying its messages' events into the same widgets (``open_chat``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.ask.assistant import Conversation
from desktop_app.core.ask.conversation_store import StoredChat, StoredMessage, photo_title
from desktop_app.core.library.parsers import IMAGE_SUFFIXES
from desktop_app.gui.chat.empty_state import EmptyState
from desktop_app.gui.chat.messages import AnswerMessage, UserMessage, mark_gone
from desktop_app.gui.chat.model_bar import ChatOptionsDialog, ModelBar
from desktop_app.gui.context import AppContext
from desktop_app.gui.i18n import current_language, on_language_changed, tr, tr_core
from desktop_app.gui.identify.card import IdentifyCard
from desktop_app.gui.knowledge.panel import local_paths
from desktop_app.gui.operations import CHATS_LOCK, JobKind, Operation

# A reopened conversation shows its last messages; building a message's widgets takes ~4 ms of the UI
# thread (and as much again to lay it out), so earlier ones wait for "Show earlier messages".
RECENT_MESSAGES = 30


def is_image(path: Path) -> bool:
    return path.suffix.lower() in IMAGE_SUFFIXES


class ChatPanel(QWidget):
    citation_activated = Signal(object)  # events.Citation or a Hit
    documents_dropped = Signal(list)  # list[Path]
    answer_finished = Signal(object)  # AnswerMessage
    identify_finished = Signal(object)  # IdentifyCard
    scope_wanted = Signal(str)  # an opened conversation's collection ("shared" for none)
    retitled = Signal()  # a photo conversation was named by its species (the list reads it again)

    def __init__(self, ctx: AppContext, scope_getter=None, parent=None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.scope_getter = scope_getter or (lambda: "shared")
        self.setAcceptDrops(True)
        self.conversation: Conversation | None = None  # history and the subject of follow-ups
        self.messages: list[QWidget] = []
        # Widgets of a conversation left while a job still streamed into them: kept (hidden)
        # until the runner is idle, so a late event never reaches a deleted widget.
        self._retired: list[QWidget] = []
        self._earlier: list[StoredMessage] = []  # a reopened conversation's messages not shown yet
        self._follow_bottom = True  # new content scrolls into view (not while reading earlier ones)
        self._queued: list[tuple[JobKind, Any]] = []  # work waiting for the KB to open

        self.model_bar = ModelBar(ctx)
        self.model_bar.options_requested.connect(self.edit_chat_options)
        self.placeholder = EmptyState(ctx)  # until the first message
        self.list_widget = QWidget(objectName="messageList")
        self.list_layout = QVBoxLayout(self.list_widget)
        self.list_layout.setContentsMargins(12, 12, 12, 12)
        self.list_layout.setSpacing(10)
        self.earlier_button = QPushButton(objectName="earlierButton")
        self.earlier_button.clicked.connect(self.show_earlier)
        self.earlier_button.hide()
        self.list_layout.addWidget(self.earlier_button, 0, Qt.AlignHCenter)
        self.list_layout.addWidget(self.placeholder)
        self.list_layout.addStretch(1)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(self.list_widget)
        self.scroll.setFrameShape(QScrollArea.NoFrame)
        self.scroll.verticalScrollBar().rangeChanged.connect(self._stick_to_bottom)

        self.input = QLineEdit(objectName="questionInput")
        self.input.returnPressed.connect(self.send)
        self.attach_button = QPushButton()
        self.attach_button.clicked.connect(self._choose_image)
        self.send_button = QPushButton(objectName="sendButton")
        self.send_button.setDefault(True)
        self.send_button.clicked.connect(self.send)
        self.stop_button = QPushButton()
        self.stop_button.clicked.connect(self.stop)
        self.stop_button.setEnabled(False)

        row = QHBoxLayout()
        row.addWidget(self.attach_button)
        row.addWidget(self.input, 1)
        row.addWidget(self.send_button)
        row.addWidget(self.stop_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 8)
        lay.addWidget(self.model_bar)
        lay.addWidget(self.scroll, 1)
        input_box = QHBoxLayout()
        input_box.setContentsMargins(10, 0, 10, 0)
        input_box.addLayout(row)
        lay.addLayout(input_box)

        ctx.kb_ready.connect(self._run_queued)
        ctx.runner.job_finished.connect(self._update_buttons)
        on_language_changed(self.retranslate)
        self.retranslate()

    def retranslate(self, *_: object) -> None:
        self.input.setPlaceholderText(tr("Ask a question…"))
        self.attach_button.setText(tr("Photo…"))
        self.attach_button.setToolTip(tr("Attach a photo to identify"))
        self.send_button.setText(tr("Send"))
        self.stop_button.setText(tr("Stop"))
        self.earlier_button.setText(tr("Show earlier messages ({n})").format(n=len(self._earlier)))

    # -- asking --------------------------------------------------------------------------------
    def send(self) -> None:
        question = self.input.text().strip()
        if not question:
            return
        self.input.clear()
        self.ask(question)

    def ask(self, question: str) -> AnswerMessage:
        user = UserMessage(question)
        user.edit_sent.connect(self.resend)
        self._add(user)
        answer = AnswerMessage(question=question)
        answer.citation_clicked.connect(self.citation_activated)
        answer.regenerate_requested.connect(self.ask)  # a new turn, saved like any other
        self._add(answer)
        if self.ctx.kb is None:
            answer.add_note(tr("Waiting for the knowledge base to open…"))
            self._queued.append((JobKind.ASK, (question, answer)))
        else:
            self._start_ask(question, answer)
        return answer

    def _start_ask(self, question: str, answer: AnswerMessage) -> None:
        ctx = self.ctx
        mode = ctx.config.router.mode
        scope = self.scope_getter()
        conversation = self._conversation_for(scope)

        def work(state):
            return ctx.call_ask(question, conversation, mode, state)

        def done() -> None:
            answer.finish()
            self._update_buttons()
            self.answer_finished.emit(answer)

        ctx.runner.run(
            JobKind.ASK,
            work,
            operation=Operation.ANSWER,
            on_partial=answer.handle_event,
            on_failure=lambda failure: answer.add_note(failure.text),  # rendered again on a language switch
            on_cancelled=answer.mark_stopped,
            on_finished=done,
        )
        self._update_buttons()

    # -- identification ------------------------------------------------------------------------
    def identify(self, image: Path) -> IdentifyCard:
        card = IdentifyCard(image)
        card.citation_clicked.connect(self.citation_activated)
        self._add(card)
        if self.ctx.kb is None:
            self._queued.append((JobKind.IDENTIFY, (image, card)))
        else:
            self._start_identify(image, card)
        return card

    def _start_identify(self, image: Path, card: IdentifyCard) -> None:
        ctx = self.ctx
        conversation = self._conversation_for(self.scope_getter())

        def done() -> None:
            card.finish()
            self._update_buttons()
            self._name_by_photo(card, conversation)
            self.identify_finished.emit(card)

        ctx.runner.run(
            JobKind.IDENTIFY,
            lambda state: ctx.call_identify(image, conversation, state),
            operation=Operation.IDENTIFY,
            on_partial=card.handle_event,
            on_failure=card.show_failure,
            on_cancelled=card.mark_stopped,
            on_finished=done,
        )
        self._update_buttons()

    def _name_by_photo(self, card: IdentifyCard, conversation: Conversation) -> None:
        """A conversation that began with this photo is titled by the species it named, in the
        window's language (the store keeps a title the user gave)."""
        if self._earlier or not self.messages or self.messages[0] is not card:
            return
        title = tr_core(photo_title(card.decision, chinese=current_language() == "zh_CN"))
        if not title:
            return
        store = self.ctx.desk.conversations
        self.ctx.runner.run(
            JobKind.CHATS,
            lambda _state: store.name_by_photo(conversation.id, title),
            operation=Operation.RENAME_CONVERSATION,
            on_success=lambda _renamed: self.retitled.emit(),
            exclusive=False,
            lock=CHATS_LOCK,
        )

    # -- edit and send again ---------------------------------------------------------------------
    def resend(self, user: UserMessage, text: str) -> None:
        """An edited question replaces its turn and the turns after it, in the window and in the
        saved conversation; then it is asked like any question (Regenerate's path)."""
        if user not in self.messages or self._busy():
            return
        at = self.messages.index(user)
        keep = len(self._earlier) + sum(isinstance(w, (AnswerMessage, IdentifyCard)) for w in self.messages[:at])
        dropped, self.messages = self.messages[at:], self.messages[:at]
        for widget in dropped:
            self.list_layout.removeWidget(widget)
            widget.hide()
        self._retired += dropped
        conversation = self.conversation
        if conversation is None:
            self.ask(text)
            return
        store = self.ctx.desk.conversations

        def cut(_state: object) -> StoredChat | None:
            store.truncate(conversation.id, keep)
            return store.load(conversation.id)

        def cut_done(chat: StoredChat | None) -> None:
            if self.conversation is not conversation:  # another conversation was opened meanwhile
                return
            if chat is not None:
                self.conversation = chat.conversation()
            else:  # never saved: the turns it remembers go as in the window
                del conversation.history[2 * keep :]
            self.ask(text)

        self.ctx.runner.run(
            JobKind.CHATS,
            cut,
            operation=Operation.EDIT_QUESTION,
            on_success=cut_done,
            exclusive=False,
            lock=CHATS_LOCK,
        )

    # -- this conversation's system prompt and temperature ---------------------------------------
    def edit_chat_options(self) -> ChatOptionsDialog:
        """The conversation's settings dialog; OK saves them with the conversation."""
        conversation = self.conversation
        dialog = ChatOptionsDialog(
            conversation.system_prompt if conversation else "",
            conversation.temperature if conversation else None,
            self.ctx.config.llm.temperature,
            self,
        )
        dialog.accepted.connect(lambda: self.set_chat_options(*dialog.values()))
        dialog.open()
        return dialog

    def set_chat_options(self, system_prompt: str, temperature: float | None) -> None:
        """Use ``system_prompt`` and ``temperature`` for this conversation's next answers and
        save them with it (a conversation not saved yet saves them with its first answer)."""
        conversation = self._conversation_for(self.scope_getter())
        conversation.system_prompt, conversation.temperature = system_prompt, temperature
        store = self.ctx.desk.conversations
        self.ctx.runner.run(
            JobKind.CHATS,
            lambda _state: store.set_options(conversation.id, system_prompt, temperature),
            operation=Operation.SAVE_CHAT_SETTINGS,
            exclusive=False,
            lock=CHATS_LOCK,
        )

    # -- saved conversations ---------------------------------------------------------------------
    def open_chat(self, chat: StoredChat) -> None:
        """Show a saved conversation and continue it: its turns, subject and collection."""
        self._clear()
        self.conversation = chat.conversation()
        self._earlier = chat.messages[:-RECENT_MESSAGES]
        for message in chat.messages[-RECENT_MESSAGES:]:
            for widget in self._replay(message):
                self._add(widget)
        self._show_earlier_button()
        self.scope_wanted.emit(chat.scope or "shared")

    def show_earlier(self) -> None:
        """Show the previous RECENT_MESSAGES of a reopened conversation above the first one shown."""
        batch, self._earlier = self._earlier[-RECENT_MESSAGES:], self._earlier[:-RECENT_MESSAGES]
        widgets = [w for message in batch for w in self._replay(message)]
        first = self.list_layout.indexOf(self.placeholder) + 1
        for i, widget in enumerate(widgets):
            self.list_layout.insertWidget(first + i, widget)
        self.messages[0:0] = widgets
        self._follow_bottom = False  # stay with what the user went up to read
        self.scroll.verticalScrollBar().setValue(0)
        self._show_earlier_button()

    def _show_earlier_button(self) -> None:
        self.earlier_button.setText(tr("Show earlier messages ({n})").format(n=len(self._earlier)))
        self.earlier_button.setVisible(bool(self._earlier))

    def new_chat(self) -> None:
        """An empty chat; it is saved with its first answer."""
        self._clear()
        self.conversation = None

    def _replay(self, message: StoredMessage) -> list[QWidget]:
        """A saved message's widgets, drawn from its replayed events."""
        widget: AnswerMessage | IdentifyCard
        shown: list[QWidget] = []
        if message.kind == "identify":
            widget = IdentifyCard(Path(message.image or ""))
        else:
            user = UserMessage(message.question)
            user.edit_sent.connect(self.resend)
            shown.append(user)
            widget = AnswerMessage(question=message.question)
            widget.regenerate_requested.connect(self.ask)
        widget.citation_clicked.connect(self.citation_activated)
        shown.append(widget)
        for event in message.events():
            widget.handle_event(event)
        widget.finish()
        gone = {c.source for c in message.citations + message.related + message.evidence if c.gone}
        if gone:
            mark_gone(widget, gone)
        return shown

    def _clear(self) -> None:
        self.stop()
        self._queued.clear()
        for widget in self.messages:
            self.list_layout.removeWidget(widget)
            widget.hide()
        self._retired += self.messages
        self.messages = []
        self._earlier = []
        self.earlier_button.hide()
        self.placeholder.show()
        self._update_buttons()

    def _conversation_for(self, scope: str) -> Conversation:
        """The running conversation, or a new one when the scope changed."""
        wanted = None if scope == "shared" else scope
        if self.conversation is None or self.conversation.scope != wanted:
            self.conversation = self.ctx.new_conversation(scope)
        return self.conversation

    def _choose_image(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, tr("Choose a photo"), "", tr("Images") + " (*.jpg *.jpeg *.png *.bmp *.webp)"
        )
        if path:
            self.identify(Path(path))

    # -- drops ---------------------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802
        if event.mimeData().hasUrls() and local_paths(event.mimeData().urls()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        paths = local_paths(event.mimeData().urls())
        if not paths:
            return
        event.acceptProposedAction()
        images = [p for p in paths if p.is_file() and is_image(p)]
        documents = [p for p in paths if p not in images]
        for image in images:
            self.identify(image)
        if documents:
            self.documents_dropped.emit(documents)

    # -- helpers -------------------------------------------------------------------------------
    def stop(self) -> None:
        self.ctx.runner.cancel(JobKind.ASK)
        self.ctx.runner.cancel(JobKind.IDENTIFY)

    def _add(self, widget: QWidget) -> None:
        self.placeholder.hide()
        self._follow_bottom = True
        self.messages.append(widget)
        self.list_layout.insertWidget(self.list_layout.count() - 1, widget)
        QTimer.singleShot(0, self._scroll_down)

    def _scroll_down(self) -> None:
        bar = self.scroll.verticalScrollBar()
        bar.setValue(bar.maximum())

    def _stick_to_bottom(self, _min: int, _max: int) -> None:
        if self._follow_bottom:
            self._scroll_down()

    def _run_queued(self) -> None:
        queued, self._queued = self._queued, []
        for kind, args in queued:
            if kind is JobKind.ASK:
                question, answer = args
                answer.notes.setText("")
                answer.notes.hide()
                self._start_ask(question, answer)
            else:
                self._start_identify(*args)

    def _busy(self) -> bool:
        return self.ctx.runner.is_busy(JobKind.ASK) or self.ctx.runner.is_busy(JobKind.IDENTIFY)

    def _update_buttons(self, *_: object) -> None:
        busy = self._busy()
        self.stop_button.setEnabled(busy)
        for widget in self.messages:  # an answer still coming: its question is not edited yet
            if isinstance(widget, UserMessage):
                widget.edit_button.setEnabled(not busy)
        if not busy:
            for widget in self._retired:
                widget.deleteLater()
            self._retired = []

    def last_answer(self) -> AnswerMessage | None:
        for widget in reversed(self.messages):
            if isinstance(widget, AnswerMessage):
                return widget
        return None
