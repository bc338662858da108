"""The main window: knowledge panel over the saved conversations | chat | source viewer, a menu and a
status bar."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import QFileDialog, QLabel, QMainWindow, QMessageBox, QProgressBar, QSplitter

from desktop_app.core.ask.conversation_store import StoredChat
from desktop_app.core.messages import N_, Message
from desktop_app.gui.about import AboutDialog
from desktop_app.gui.chat.conversations import ConversationList
from desktop_app.gui.chat.panel import ChatPanel
from desktop_app.gui.context import AppContext, model_tooltip
from desktop_app.gui.i18n import on_language_changed, set_language, tr, tr_core
from desktop_app.gui.knowledge.panel import KnowledgePanel
from desktop_app.gui.markdown import plain_tooltip
from desktop_app.gui.operations import CHATS_LOCK, JobKind, Operation
from desktop_app.gui.settings.dialog import SettingsDialog
from desktop_app.gui.tasks import Failure, Job
from desktop_app.gui.viewer.viewer import SourceViewer, answer_claim

NARROW_WIDTH = 1150  # px: narrower, an open viewer folds the knowledge column away

ROLE_TITLES = {
    "embedder": N_("Embedder"),
    "reranker": N_("Reranker"),
    "llm": N_("LLM"),
    "classifier": N_("Classifier"),
}


class MainWindow(QMainWindow):
    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.resize(1280, 780)
        self.setMinimumSize(900, 560)

        self.knowledge = KnowledgePanel(ctx)
        self.chat = ChatPanel(ctx, scope_getter=self.knowledge.current_scope)
        self.conversations = ConversationList(ctx)
        self.viewer = SourceViewer(ctx)
        self.viewer.hide()
        # The conversation list sits under the knowledge panel, beside the chat: a column of its
        # own would squeeze the chat to a strip while the viewer is open.
        self.left = QSplitter(Qt.Vertical)
        self.left.addWidget(self.knowledge)
        self.left.addWidget(self.conversations)
        self.left.setStretchFactor(0, 3)
        self.left.setStretchFactor(1, 2)
        self.left.setSizes([450, 300])
        self.left.setChildrenCollapsible(False)
        self.splitter = QSplitter(Qt.Horizontal)
        self.splitter.addWidget(self.left)
        self.splitter.addWidget(self.chat)
        self.splitter.addWidget(self.viewer)
        self.splitter.setStretchFactor(0, 1)  # a wider window widens the document list too (a third)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setStretchFactor(2, 2)
        self.splitter.setSizes([420, 860, 0])
        self.splitter.setChildrenCollapsible(False)
        # Below NARROW_WIDTH the viewer takes the knowledge column's place while it is open (three
        # columns would leave the chat ~300 px and the page ~150 px); drag the handle to get it back.
        self.splitter.setCollapsible(0, True)
        self._left_folded = False
        self.viewer.closed.connect(self._viewer_closed)
        self.setCentralWidget(self.splitter)

        self.chat.citation_activated.connect(self.open_citation)
        self.chat.documents_dropped.connect(self.knowledge.add_paths)
        self.chat.scope_wanted.connect(self.knowledge.select_scope)
        self.chat.answer_finished.connect(self._chat_saved)
        self.chat.identify_finished.connect(self._chat_saved)
        self.conversations.open_requested.connect(self.open_conversation)
        self.conversations.new_requested.connect(self.new_conversation)
        self.conversations.deleted.connect(self._conversation_deleted)
        self.conversations.export_requested.connect(self.export_conversation)
        self.chat.retitled.connect(self.conversations.refresh)

        self.chat.placeholder.manage_models.connect(self.open_model_manager)

        # While models load: a busy bar and the step under way; if loading fails, why.
        self.loading_bar = QProgressBar(objectName="loadingBar")
        self.loading_bar.setRange(0, 0)  # busy: a step's length is not known
        self.loading_bar.setTextVisible(False)
        self.loading_bar.setFixedSize(80, 12)
        self.loading_label = QLabel(objectName="loadingLabel")
        self.loading_label.setTextFormat(Qt.PlainText)
        self.statusBar().addWidget(self.loading_bar)
        self.statusBar().addWidget(self.loading_label, 1)
        self.status_labels: dict[str, QLabel] = {}
        for role in ROLE_TITLES:
            label = QLabel(objectName="statusItem")
            label.setTextFormat(Qt.PlainText)
            self.status_labels[role] = label
            self.statusBar().addPermanentWidget(label)
        ctx.status_changed.connect(self.update_status)
        ctx.loading_changed.connect(self.update_loading)
        ctx.load_failed.connect(self._load_failed)
        ctx.settings_failed.connect(self.show_failure)
        ctx.runner.unhandled_failure.connect(self.show_failure)  # jobs that name no handler of their own
        ctx.config_changed.connect(self._config_changed)
        ctx.notice.connect(self.show_notice)

        self.settings_action = QAction(self)
        self.settings_action.setShortcut(QKeySequence.Preferences)
        self.settings_action.triggered.connect(self.open_settings)
        self.quit_action = QAction(self)
        self.quit_action.setShortcut(QKeySequence.Quit)
        self.quit_action.triggered.connect(self.close)
        self.export_action = QAction(self)
        self.export_action.triggered.connect(lambda: self.export_conversation(self.conversations.current_id))
        self.file_menu = self.menuBar().addMenu("")
        self.file_menu.aboutToShow.connect(self._update_export_action)
        self.file_menu.addAction(self.export_action)
        self.file_menu.addAction(self.settings_action)
        self.file_menu.addSeparator()
        self.file_menu.addAction(self.quit_action)
        self.about_action = QAction(self)
        self.about_action.triggered.connect(self.open_about)
        self.help_menu = self.menuBar().addMenu("")
        self.help_menu.addAction(self.about_action)

        self._failure: tuple[Failure, str] | None = None  # the failure the status bar shows, as shown
        self._notice: tuple[Message, str] | None = None  # the notice the status bar shows, as shown
        on_language_changed(self.retranslate)
        self.retranslate()
        for notice in ctx.notices:  # told before this window listened
            self.show_notice(notice)
        self.restore_last_conversation()

    def retranslate(self, *_: object) -> None:
        self.setWindowTitle(tr("Knowledge Desk"))
        self.file_menu.setTitle(tr("&File"))
        self.settings_action.setText(tr("Settings…"))
        self.export_action.setText(tr("Export conversation as Markdown…"))
        self.quit_action.setText(tr("Quit"))
        self.help_menu.setTitle(tr("&Help"))
        self.about_action.setText(tr("About Knowledge Desk…"))
        self.update_loading()
        if self._failure is not None and self.statusBar().currentMessage() == self._failure[1]:
            self.show_failure(self._failure[0])  # still shown: say it in the new language
        if self._notice is not None and self.statusBar().currentMessage() == self._notice[1]:
            self.show_notice(self._notice[0])

    def update_loading(self) -> None:
        """The loading indicator: the step under way, or why loading failed; hidden once loaded."""
        step, error = self.ctx.loading_step, self.ctx.load_error
        self.loading_bar.setVisible(bool(step))
        if step:
            self.loading_label.setText(f"{tr(step)}…")
            self.loading_label.setToolTip(tr("Saved conversations can be read meanwhile."))
        elif error:
            self.loading_label.setText(error.text())
            self.loading_label.setToolTip(plain_tooltip(error.reason()))
        self.loading_label.setVisible(bool(step or error))
        self.update_status()

    def update_status(self) -> None:
        loading = not self.ctx.ready and self.ctx.loading
        for role, label in self.status_labels.items():
            status = self.ctx.status[role]
            title = tr(ROLE_TITLES[role])
            if status.name:
                label.setText(f"● {title}: {tr_core(status.name)}")
                label.setToolTip(plain_tooltip(model_tooltip(status)))
                label.setProperty("missing", False)
            elif loading:
                label.setText(f"◌ {title}: " + tr("loading…"))
                label.setToolTip(f"{tr(self.ctx.loading_step)}…")
                label.setProperty("missing", True)
            else:
                label.setText(f"○ {title}: " + tr("none"))
                label.setToolTip(plain_tooltip(tr_core(status.reason) if status.reason else tr("not loaded")))
                label.setProperty("missing", True)
            label.style().unpolish(label)
            label.style().polish(label)

    def status_text(self) -> dict[str, str]:
        """role -> shown text and reason (tests)."""
        return {
            r: f"{lbl.text()} ({self.ctx.status[r].reason or self.ctx.status[r].name})"
            for r, lbl in self.status_labels.items()
        }

    def open_citation(self, citation: Any) -> None:
        was_hidden = self.viewer.isHidden()
        self.viewer.open_citation(citation, answer_claim(self.chat.messages, citation))
        if was_hidden:
            total = sum(self.splitter.sizes())
            if self.width() < NARROW_WIDTH:
                self._left_folded = True
                self.splitter.setSizes([0, int(total * 0.52), int(total * 0.48)])
            else:
                self.splitter.setSizes([int(total * 0.24), int(total * 0.40), int(total * 0.36)])

    def _viewer_closed(self) -> None:
        if self._left_folded:  # the knowledge column comes back with the chat's width
            self._left_folded = False
            total = sum(self.splitter.sizes())
            left = max(self.left.minimumSizeHint().width(), int(total * 0.33))
            self.splitter.setSizes([left, total - left, 0])

    # -- saved conversations -----------------------------------------------------------------------
    def restore_last_conversation(self) -> None:
        """Reopen the most recent conversation. Off the UI thread: the first use of the store may
        create the file (a write and an fsync)."""
        store = self.ctx.desk.conversations

        def load(_state: object) -> StoredChat | None:
            last = store.last()
            return store.load(last.id) if last is not None else None

        def loaded(chat: StoredChat | None) -> None:
            if chat is not None and not self.chat.messages:  # nothing was asked meanwhile
                self.chat.open_chat(chat)
            self.conversations.set_current(self.chat.conversation.id if self.chat.conversation else None)

        self.ctx.runner.run(
            JobKind.CHATS,
            load,
            operation=Operation.OPEN_LAST_CONVERSATION,
            on_success=loaded,
            on_failure=self.show_failure,
            exclusive=False,
            lock=CHATS_LOCK,
        )

    def open_conversation(self, chat_id: str) -> None:
        chat = self.ctx.desk.conversations.load(chat_id)  # one conversation: a few ms (see the list)
        if chat is None:  # deleted meanwhile (another process)
            self.conversations.refresh()
            return
        self.chat.open_chat(chat)
        self.conversations.set_current(chat.id)

    def new_conversation(self) -> None:
        self.chat.new_chat()
        self.conversations.set_current(None)
        self.chat.input.setFocus()

    def _chat_saved(self, _widget: object) -> None:
        if self.chat.conversation is not None:
            self.conversations.set_current(self.chat.conversation.id)

    def _conversation_deleted(self, chat_id: str) -> None:
        if self.chat.conversation is not None and self.chat.conversation.id == chat_id:
            self.chat.new_chat()

    def _update_export_action(self) -> None:
        self.export_action.setEnabled(self.conversations.current_id is not None)  # saved ones only

    def export_conversation(self, chat_id: str | None, path: Path | None = None) -> Job | None:
        """Write a saved conversation as the Markdown `kdesk chats export` writes (to ``path``, else
        where the user chooses); the status bar says where it went."""
        if not chat_id:
            return None
        store, knowledge = self.ctx.desk.conversations, self.ctx.knowledge_dir
        if path is None:
            found = next((c for c in self.conversations.chats if c.id == chat_id), None)
            name = "".join(ch for ch in (found.title if found else "conversation") if ch not in '\\/:*?"<>|')
            chosen, _ = QFileDialog.getSaveFileName(
                self, tr("Export conversation"), str(Path.home() / f"{name.strip() or 'conversation'}.md"),
                tr("Markdown") + " (*.md)",
            )  # fmt: skip
            if not chosen:
                return None
            path = Path(chosen)

        def write(_state: object) -> Path:
            from desktop_app.core.ask.chat_export import write_markdown

            chat = store.load(chat_id)
            if chat is None:
                raise FileNotFoundError(chat_id)
            return write_markdown(chat, knowledge, path)

        return self.ctx.runner.run(
            JobKind.CHATS,
            write,
            operation=Operation.EXPORT_CONVERSATION,
            on_success=lambda out: self.statusBar().showMessage(tr("Exported to {path}").format(path=out), 10_000),
            on_failure=self.show_failure,
            exclusive=False,
            lock=CHATS_LOCK,
        )

    def open_settings(self) -> SettingsDialog:
        dialog = SettingsDialog(self.ctx, self)
        dialog.open()
        return dialog

    def open_about(self) -> AboutDialog:
        """Help › About: version, data folder, log file, the models' licences."""
        dialog = AboutDialog(self.ctx, self)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def open_model_manager(self) -> SettingsDialog:
        """Settings, on its model manager page (the empty chat's "Manage models…")."""
        dialog = self.open_settings()
        dialog.show_models()
        return dialog

    def _config_changed(self) -> None:
        set_language(self.ctx.config.ui.language)

    def _load_failed(self, _failure: Failure) -> None:
        self.knowledge.retranslate()
        self.update_loading()  # the loading indicator says why, in the current language

    def show_failure(self, failure: Failure) -> None:
        """Say in the status bar what could not be done and why ("Could not save Settings: …")."""
        text = failure.text()
        self._failure = (failure, text)
        self.statusBar().showMessage(text)

    def show_notice(self, notice: Message) -> None:
        """Say in the status bar, in the UI language, what the core found that the user must know
        (a damaged conversation store set aside and rebuilt: both files and what was kept)."""
        text = tr_core(notice)
        self._notice = (notice, text)
        self.statusBar().showMessage(text)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        if self.ctx.runner.is_working(JobKind.ADD) or self.ctx.runner.is_working(JobKind.REINDEX):
            answer = QMessageBox.question(
                self,
                tr("Indexing in progress"),
                tr("Stop indexing and quit? Files already indexed are kept."),
            )
            if answer != QMessageBox.Yes:
                event.ignore()
                return
        self.ctx.close()
        super().closeEvent(event)
