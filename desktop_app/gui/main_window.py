"""The main window: knowledge panel | chat | source viewer, a menu and a status bar."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import QLabel, QMainWindow, QMessageBox, QSplitter

from desktop_app.gui.chat.markdown import plain_tooltip
from desktop_app.gui.chat.panel import ChatPanel
from desktop_app.gui.context import AppContext
from desktop_app.gui.i18n import on_language_changed, set_language, tr
from desktop_app.gui.knowledge.panel import KnowledgePanel
from desktop_app.gui.operations import JobKind
from desktop_app.gui.settings.dialog import SettingsDialog
from desktop_app.gui.viewer.viewer import SourceViewer

ROLE_TITLES = {
    "embedder": "Embedder",
    "reranker": "Reranker",
    "llm": "LLM",
    "classifier": "Classifier",
}


class MainWindow(QMainWindow):
    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.resize(1280, 780)
        self.setMinimumSize(900, 560)

        self.knowledge = KnowledgePanel(ctx)
        self.chat = ChatPanel(ctx, scope_getter=self.knowledge.current_scope)
        self.viewer = SourceViewer(ctx)
        self.viewer.hide()
        self.splitter = QSplitter(Qt.Horizontal)
        self.splitter.addWidget(self.knowledge)
        self.splitter.addWidget(self.chat)
        self.splitter.addWidget(self.viewer)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setStretchFactor(2, 1)
        self.splitter.setSizes([420, 860, 0])
        self.splitter.setChildrenCollapsible(False)
        self.setCentralWidget(self.splitter)

        self.chat.citation_activated.connect(self.open_citation)
        self.chat.documents_dropped.connect(self.knowledge.add_paths)

        self.status_labels: dict[str, QLabel] = {}
        for role in ROLE_TITLES:
            label = QLabel(objectName="statusItem")
            label.setTextFormat(Qt.PlainText)
            self.status_labels[role] = label
            self.statusBar().addPermanentWidget(label)
        ctx.status_changed.connect(self.update_status)
        ctx.load_failed.connect(self._load_failed)
        ctx.config_changed.connect(self._config_changed)

        self.settings_action = QAction(self)
        self.settings_action.setShortcut(QKeySequence.Preferences)
        self.settings_action.triggered.connect(self.open_settings)
        self.quit_action = QAction(self)
        self.quit_action.setShortcut(QKeySequence.Quit)
        self.quit_action.triggered.connect(self.close)
        self.file_menu = self.menuBar().addMenu("")
        self.file_menu.addAction(self.settings_action)
        self.file_menu.addSeparator()
        self.file_menu.addAction(self.quit_action)

        on_language_changed(self.retranslate)
        self.retranslate()
        self.update_status()

    def retranslate(self, *_: object) -> None:
        self.setWindowTitle(tr("Knowledge Desk"))
        self.file_menu.setTitle(tr("&File"))
        self.settings_action.setText(tr("Settings…"))
        self.quit_action.setText(tr("Quit"))
        self.update_status()

    def update_status(self) -> None:
        for role, label in self.status_labels.items():
            status = self.ctx.status[role]
            title = tr(ROLE_TITLES[role])
            if status.name:
                label.setText(f"● {title}: {status.name}")
                label.setToolTip(plain_tooltip(status.name))
                label.setProperty("missing", False)
            else:
                label.setText(f"○ {title}: {tr('none')}")
                label.setToolTip(plain_tooltip(status.reason or tr("not loaded")))
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
        self.viewer.open_citation(citation)
        if was_hidden:
            total = sum(self.splitter.sizes())
            self.splitter.setSizes([int(total * 0.24), int(total * 0.40), int(total * 0.36)])

    def open_settings(self) -> SettingsDialog:
        dialog = SettingsDialog(self.ctx, self)
        dialog.open()
        return dialog

    def _config_changed(self) -> None:
        set_language(self.ctx.config.ui.language)

    def _load_failed(self, message: str) -> None:
        self.knowledge.retranslate()
        self.statusBar().showMessage(tr("Could not open the knowledge base: {error}").format(error=message))

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
