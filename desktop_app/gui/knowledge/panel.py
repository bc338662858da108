"""The knowledge panel: documents table, drop zone, add/remove/re-index, scope selector, progress."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QColor, QDesktopServices, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.library.knowledge import SyncReport
from desktop_app.core.library.names import display_name
from desktop_app.core.messages import Message, Text
from desktop_app.gui.context import AppContext
from desktop_app.gui.i18n import on_language_changed, tr, tr_core, trn
from desktop_app.gui.knowledge.model import DocumentsModel
from desktop_app.gui.knowledge.path_delegate import PathDelegate
from desktop_app.gui.knowledge.scope_dialog import ScopeNameDialog
from desktop_app.gui.knowledge.switch_row import SwitchRow
from desktop_app.gui.knowledge.watcher import KnowledgeWatcher
from desktop_app.gui.markdown import plain_tooltip
from desktop_app.gui.operations import (
    INDEXING,
    JobKind,
    KnowledgeChange,
    Operation,
    index_batch,
    run_batch,
)
from desktop_app.gui.tasks import Failure, QtTaskState

FAILED_COLOUR = "#c62828"
MIN_TABLE_ROWS = 7  # document rows always in sight, indexing or not
OUTCOME_LINES = 5  # lines of a batch's outcome list shown before it scrolls
SKIPPED_COLOUR = "#b26a00"


def progress_name(message: Text) -> str:
    """The file a batch's progress message is about: the message itself when it is a file name,
    the ``name`` of a line inside a file ("a.pdf: reading page 3 of 9"), "" for other lines
    (waiting for another writer)."""
    if isinstance(message, Message):
        return str(message.params.get("name", ""))
    return message  # a file name


def local_paths(urls: list[QUrl]) -> list[Path]:
    """Local files/folders from dropped URLs; remote URLs are ignored."""
    return [Path(u.toLocalFile()) for u in urls if u.isLocalFile() and u.toLocalFile()]


class DropZone(QFrame):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("dropZone")
        self.setFrameShape(QFrame.StyledPanel)
        self.label = QLabel(alignment=Qt.AlignCenter)
        self.label.setWordWrap(True)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(12, 10, 12, 10)
        lay.addWidget(self.label)
        self.set_active(False)

    def set_active(self, active: bool) -> None:
        self.setProperty("active", active)
        self.style().unpolish(self)
        self.style().polish(self)


class KnowledgePanel(QWidget):
    """Everything about the user's documents. Files dropped anywhere on it are added."""

    batch_finished = Signal(object)  # SyncReport, or None when cancelled/failed
    documents_refreshed = Signal()

    def __init__(self, ctx: AppContext, parent=None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.setAcceptDrops(True)
        self._pending: list[tuple[list[Path], str]] = []  # drops before the KB is ready
        self._scopes: list[str] = ["shared"]
        self.last_report: Any = None
        self._known_failures: dict[str, str] = {}  # name -> reason, as last listed or reported
        # The knowledge base whose notices are counted, how many the list shows, how many a batch's report showed.
        self._notices: tuple[object, int, int] = (None, 0, 0)

        self.title = QLabel(objectName="panelTitle")
        self.scope_label = QLabel()
        self.scope_combo = QComboBox()
        self.new_scope_button = QPushButton()
        self.new_scope_button.clicked.connect(self._new_scope)
        self.drop_zone = DropZone()

        self.model = DocumentsModel(self, root=ctx.knowledge_dir)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setAlternatingRowColors(True)
        self.table.setShowGrid(False)
        self.table.setWordWrap(False)
        # Names are cut from the folder first, so the file name stays readable (path_delegate.py).
        self.name_delegate = PathDelegate(self.table)
        self.table.setItemDelegateForColumn(0, self.name_delegate)
        header = self.table.horizontalHeader()
        # Fixed widths, not ResizeToContents: that re-measures every row on each refresh, which
        # stalls the UI once the library has thousands of documents. The name takes what is left.
        for col, width in ((1, 72), (2, 56), (3, 68), (4, 90)):
            header.setSectionResizeMode(col, QHeaderView.Interactive)
            header.resizeSection(col, width)
        header.setSectionResizeMode(0, QHeaderView.Stretch)
        header.setStretchLastSection(False)
        # The list keeps MIN_TABLE_ROWS rows in sight whatever the progress area below needs.
        self.table.setMinimumHeight(
            MIN_TABLE_ROWS * 24 + header.sizeHint().height() + 2 * self.table.frameWidth()
        )
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(24)
        self.table.selectionModel().selectionChanged.connect(self._update_buttons)
        # An empty table says what to do; the hint lets clicks and drops through.
        self.empty_hint = QLabel(alignment=Qt.AlignCenter, objectName="emptyTable")
        self.empty_hint.setWordWrap(True)
        self.empty_hint.setStyleSheet("color: palette(placeholder-text); padding: 12px;")
        self.empty_hint.setAttribute(Qt.WA_TransparentForMouseEvents)
        QVBoxLayout(self.table.viewport()).addWidget(self.empty_hint)
        for changed in (self.model.modelReset, self.model.rowsInserted, self.model.rowsRemoved):
            changed.connect(self._update_empty_hint)
            changed.connect(self._update_error_column)

        self.add_button = QPushButton()
        self.add_folder_button = QPushButton()
        self.remove_button = QPushButton()
        self.reindex_button = QPushButton()
        self.open_folder_button = QPushButton()
        self.add_button.clicked.connect(self._choose_files)
        self.add_folder_button.clicked.connect(self._choose_folder)
        self.remove_button.clicked.connect(self.remove_selected)
        self.reindex_button.clicked.connect(self.reindex)
        self.open_folder_button.clicked.connect(self._open_folder)

        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.progress_label = QLabel()
        self.progress_label.setWordWrap(True)
        self.cancel_button = QPushButton()
        self.cancel_button.clicked.connect(self.cancel_batch)
        self.result_label = QLabel()
        self.result_label.setWordWrap(True)
        self.errors = QListWidget(objectName="outcomeList")
        # A reason is a sentence: wrapped, not cut at the panel's edge behind a sideways scroll.
        self.errors.setWordWrap(True)
        self.errors.setResizeMode(QListWidget.ResizeMode.Adjust)
        self.errors.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # At most a few lines (it scrolls): the document list above keeps its height.
        self.errors.setMaximumHeight(OUTCOME_LINES * self.errors.fontMetrics().lineSpacing() + 8)
        # Failed files are retried only once they change; this tries them again now.
        self.retry_button = QPushButton()
        self.retry_button.clicked.connect(self.retry_failed)

        scope_row = QHBoxLayout()
        scope_row.addWidget(self.scope_label)
        scope_row.addWidget(self.scope_combo, 1)
        scope_row.addWidget(self.new_scope_button)
        buttons = QHBoxLayout()
        for b in (self.add_button, self.add_folder_button, self.remove_button, self.reindex_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        buttons.addWidget(self.open_folder_button)
        progress_row = QHBoxLayout()
        progress_row.addWidget(self.progress, 1)
        progress_row.addWidget(self.cancel_button)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(10, 10, 10, 10)
        lay.addWidget(self.title)
        lay.addLayout(scope_row)
        lay.addWidget(self.drop_zone)
        lay.addWidget(self.table, 1)
        lay.addLayout(buttons)
        lay.addLayout(progress_row)
        lay.addWidget(self.progress_label)
        self.switch_row = SwitchRow(ctx)  # another embedding model's index filling meanwhile
        lay.addWidget(self.switch_row)
        result_row = QHBoxLayout()
        result_row.addWidget(self.result_label, 1)
        result_row.addWidget(self.retry_button)
        lay.addLayout(result_row)
        lay.addWidget(self.errors)
        self._set_busy(False)
        self.result_label.hide()
        self.errors.hide()
        self.retry_button.hide()

        self._looked_at_start = False
        self.watcher = KnowledgeWatcher(self)
        self.watcher.changed.connect(self.sync)
        ctx.kb_ready.connect(self._kb_ready)
        ctx.knowledge_changed.connect(self.refresh)
        ctx.runner.job_finished.connect(self._job_finished)
        on_language_changed(self.retranslate)
        self.retranslate()

    # -- text --------------------------------------------------------------------------------
    def retranslate(self, *_: object) -> None:
        self.title.setText(tr("Knowledge"))
        self.scope_label.setText(tr("Collection:"))
        self.new_scope_button.setText(tr("New…"))
        self.new_scope_button.setToolTip(
            tr("Create a collection: its documents are searched only in its own conversations")
        )
        self._fill_scopes()
        self.drop_zone.label.setText(
            tr("Drop files or folders here to add them to the knowledge base")
            if self.ctx.kb is not None or not self.ctx.load_error
            else tr("The knowledge base could not be opened: {error}").format(
                error=self.ctx.load_error.reason()
            )
        )
        self.add_button.setText(tr("Add files…"))
        self.add_folder_button.setText(tr("Add folder…"))
        self.remove_button.setText(tr("Remove"))
        self.reindex_button.setText(tr("Re-index"))
        self.open_folder_button.setText(tr("Open folder"))
        self.open_folder_button.setToolTip(tr("Show the knowledge folder in your file manager"))
        self.cancel_button.setText(tr("Cancel"))
        self.retry_button.setText(tr("Retry failed files"))
        self.retry_button.setToolTip(
            tr("Read the failed files again (they are otherwise retried only once they change)")
        )
        self.model.retranslate()
        if self.last_report is not None:
            self._show_report(self.last_report)
        self._update_buttons()
        self._update_empty_hint()

    def _fill_scopes(self) -> None:
        current = self.current_scope()
        self.scope_combo.blockSignals(True)
        self.scope_combo.clear()
        for scope in self._scopes:
            label = tr("Shared") if scope == "shared" else f"@{scope}"
            self.scope_combo.addItem(label, scope)
        idx = self.scope_combo.findData(current)
        self.scope_combo.setCurrentIndex(max(idx, 0))
        self.scope_combo.blockSignals(False)

    def current_scope(self) -> str:
        data = self.scope_combo.currentData() if hasattr(self, "scope_combo") else None
        return data or "shared"

    def select_scope(self, scope: str) -> None:
        """Make ``scope`` the current collection (a reopened conversation's, even before the
        documents are listed)."""
        if scope not in self._scopes:
            self._scopes.append(scope)
            self._fill_scopes()
        self.scope_combo.setCurrentIndex(self.scope_combo.findData(scope))

    def _new_scope(self) -> ScopeNameDialog:
        """Ask for a collection's name (the dialog checks it); the accepted one becomes current."""
        dialog = ScopeNameDialog(self)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self.add_scope(dialog.name()))
        dialog.open()
        self.scope_dialog = dialog  # tests fill it in
        return dialog

    def add_scope(self, name: str) -> None:
        """Make a (valid) collection name known and current."""
        if name not in self._scopes:
            self._scopes.append(name)
        self._fill_scopes()
        self.scope_combo.setCurrentIndex(self.scope_combo.findData(name))

    # -- drag and drop -----------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802
        if event.mimeData().hasUrls() and local_paths(event.mimeData().urls()):
            self.drop_zone.set_active(True)
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragLeaveEvent(self, event) -> None:  # noqa: N802
        self.drop_zone.set_active(False)

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        self.drop_zone.set_active(False)
        paths = local_paths(event.mimeData().urls())
        if paths:
            event.acceptProposedAction()
            self.add_paths(paths)

    # -- operations ----------------------------------------------------------------------------
    def add_paths(self, paths: list[Path], scope: str | None = None) -> None:
        """Copy files/folders into the knowledge folder and index them in the background."""
        scope = scope or self.current_scope()
        if self.ctx.kb is None:
            self._pending.append((paths, scope))
            self.progress_label.setText(tr("Waiting for the knowledge base to open…"))
            self.progress_label.show()
            return
        work = index_batch(JobKind.ADD, self.ctx.kb, paths, scope)
        self._start_batch(
            JobKind.ADD,
            work,
            trn("Adding {n} item…", "Adding {n} items…", len(paths)).format(n=len(paths)),
            Operation.ADD_FILES,
        )

    def sync(self) -> None:
        """Index new/changed files and drop removed ones (the file watcher calls this)."""
        if self.ctx.kb is None:
            return
        if self.ctx.runner.is_busy(JobKind.ADD) or self.ctx.runner.is_busy(JobKind.REINDEX):
            self.watcher.schedule()  # try again once the running batch is done
            return
        work = index_batch(JobKind.SYNC, self.ctx.kb)
        self._start_batch(JobKind.SYNC, work, tr("Checking for changes…"), Operation.SYNC)

    def retry_failed(self) -> None:
        """Sync, reading the files that failed again (a sync leaves them until they change)."""
        if self.ctx.kb is None:
            return
        work = index_batch(JobKind.SYNC, self.ctx.kb, retry_failed=True)
        self._start_batch(JobKind.SYNC, work, tr("Retrying failed files…"), Operation.RETRY_FAILED)

    def reindex(self) -> None:
        if self.ctx.kb is None:
            return
        work = index_batch(JobKind.REINDEX, self.ctx.kb)
        self._start_batch(JobKind.REINDEX, work, tr("Re-indexing…"), Operation.REINDEX)

    def remove_selected(self) -> None:
        names = [self.model.rows[i.row()].name for i in self.table.selectionModel().selectedRows()]
        if not names or self.ctx.kb is None or not self.confirm_remove(names):
            return
        kb = self.ctx.kb
        run_batch(
            self.ctx.runner,
            JobKind.REMOVE,
            lambda state: kb.remove(names),
            operation=Operation.REMOVE,
            on_done=lambda removed: self.ctx.knowledge_changed.emit(
                KnowledgeChange(JobKind.REMOVE, removed=tuple(removed))
            ),
            on_failure=self._show_error,
            on_cancelled=lambda: None,
        )

    def confirm_remove(self, names: list[str]) -> bool:
        """Ask before deleting: Remove deletes the files from the knowledge folder too."""
        if len(names) == 1:
            text = tr(
                "Remove “{name}”? The file is deleted from the knowledge folder and its passages from the index. This cannot be undone."
            ).format(name=names[0])
        else:
            text = tr(
                "Remove {n} documents? The files are deleted from the knowledge folder and their passages from the index. This cannot be undone."
            ).format(n=len(names))
        answer = QMessageBox.question(self, tr("Remove documents"), text)
        return answer == QMessageBox.Yes

    def refresh(self, change: KnowledgeChange | None = None) -> None:
        """Reload the documents table from the index (in the background), unless ``change`` says
        an operation changed nothing (a watcher sync that found no new file)."""
        if change is not None and not change.any:
            return
        if self.ctx.kb is None:
            return
        kb = self.ctx.kb
        self.ctx.runner.run(
            JobKind.LIST,
            lambda state: kb.list_documents(),
            operation=Operation.LIST,
            on_success=self._set_documents,
            on_failure=self._show_error,
        )

    def cancel_batch(self) -> None:
        for kind in INDEXING:
            self.ctx.runner.cancel(kind)
        self.progress_label.setText(tr("Cancelling…"))

    def _start_batch(
        self,
        kind: JobKind,
        work: Callable[[QtTaskState], SyncReport],
        message: str,
        operation: Operation,
    ) -> None:
        self._set_busy(True)
        self.progress.setRange(0, 0)
        self.progress_label.setText(message)
        run_batch(
            self.ctx.runner,
            kind,
            work,
            operation=operation,
            on_progress=self._on_progress,
            on_done=lambda report: self._batch_done(report, kind),
            on_failure=lambda failure: self._batch_failed(failure, kind),
            on_cancelled=lambda: self._batch_cancelled(kind),
        )

    # -- results (UI thread) ---------------------------------------------------------------------
    def _on_progress(self, done: int, total: int, message: Text) -> None:
        if total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(done)
            self.progress.setFormat(f"{done}/{total}")
        if message:
            self.progress_label.setText(tr("Indexing {name}").format(name=tr_core(message)))
            # Rows come from the progress itself: no extra index reads while the batch runs (a
            # periodic list_documents() competed with indexing for the GIL and stalled the UI).
            name = progress_name(message)
            if name:
                self.model.mark_progress(name)

    def _batch_done(self, report: SyncReport, kind: JobKind = JobKind.ADD) -> None:
        change = KnowledgeChange.of_report(kind, report)
        # A watcher sync that found nothing new keeps the last summary: one that only tried an
        # unchanged failed file again would otherwise bring back an old batch's failure.
        if kind is not JobKind.SYNC or self._is_news(report):
            self.last_report = report
            self._show_report(report)
        self._known_failures.update(report.failed)
        self.ctx.knowledge_changed.emit(change)
        self.batch_finished.emit(report)

    def _is_news(self, report: SyncReport) -> bool:
        failed = {name for name, _ in report.failed}
        done = [n for n in (*report.added, *report.updated) if n not in failed]
        again = all(self._known_failures.get(name) == why for name, why in report.failed)
        return bool(done or report.removed or report.cancelled or not again)

    def _clear_outcomes(self) -> None:
        """A batch that failed or was cancelled replaces the last one's results, lines included."""
        self.last_report = None
        self.errors.clear()
        self.errors.hide()

    def _batch_failed(self, failure: Failure, kind: JobKind) -> None:
        self._clear_outcomes()
        self._show_error(failure)
        self.ctx.knowledge_changed.emit(KnowledgeChange.of_report(kind, None))
        self.batch_finished.emit(None)

    def _batch_cancelled(self, kind: JobKind) -> None:
        self._clear_outcomes()
        self.result_label.setText(tr("Cancelled. Files already indexed are kept."))
        self.result_label.show()
        self.ctx.knowledge_changed.emit(KnowledgeChange.of_report(kind, None))
        self.batch_finished.emit(None)

    def _job_finished(self, job: Any) -> None:
        if job.kind in INDEXING and not any(self.ctx.runner.is_busy(k) for k in INDEXING):
            self._set_busy(False)

    def _show_report(self, report: Any) -> None:
        # A failed file is also in report.added (the manifest lists it): count it once, as failed.
        failed = {name for name, _ in report.failed}
        parts = []
        for label, items in (
            (tr("added"), [n for n in report.added if n not in failed]),
            (tr("updated"), [n for n in report.updated if n not in failed]),
            (tr("removed"), report.removed),
            (tr("failed"), report.failed),
            (tr("skipped"), report.skipped),
        ):
            if items:
                parts.append(f"{len(items)} {label}")
        if not parts:
            parts.append(tr("no changes"))
        self.result_label.setText(", ".join(parts))
        self.result_label.show()
        self.errors.clear()
        # Failures first and in red, files never copied in next in amber; what became of every
        # file that was read (its chunks, the pages OCR read, or a photo) in the normal colour.
        for name, error in report.failed:
            self._add_outcome(f"{display_name(name)}: {tr_core(error)}", FAILED_COLOUR)
        for name, why in report.skipped:  # hidden, unsupported, too large, a data folder: never copied
            self._add_outcome(tr("skipped") + f": {display_name(name)}: {tr_core(why)}", SKIPPED_COLOUR)
        for name in [*report.added, *report.updated]:
            got = report.outcomes.get(name) if name not in failed else None
            if got and got.get("photo"):
                self._add_outcome(f"{display_name(name)}: " + tr("a reference photo"))
            elif got:
                what = trn("{n} chunk", "{n} chunks", got["chunks"]).format(n=got["chunks"])
                if got.get("ocr_pages"):
                    pages = trn("{n} page read by OCR", "{n} pages read by OCR", got["ocr_pages"])
                    what += ", " + pages.format(n=got["ocr_pages"])
                self._add_outcome(f"{display_name(name)}: {what}")
        self._show_notices(report=True)
        self.errors.setVisible(self.errors.count() > 0)
        busy = any(self.ctx.runner.is_busy(k) for k in INDEXING)
        self.retry_button.setVisible(bool(report.failed) and not busy)

    def _show_notices(self, report: bool = False) -> None:
        """What the library found damaged in its index and rebuilt (a manifest, the vector store:
        ``KnowledgeBase.notices``), first in the outcomes list: as soon as the documents are listed,
        and again in the next batch's report (the sync that rebuilds it), which replaces the list."""
        kb = self.ctx.kb
        if kb is None:
            return
        listed, reported = self._notices[1:] if self._notices[0] is kb else (0, 0)
        fresh = kb.notices[reported if report else listed :]
        self._notices = (kb, len(kb.notices), len(kb.notices) if report else reported)
        for i, note in enumerate(fresh):
            self.errors.insertItem(i, self._outcome(tr_core(note), FAILED_COLOUR))
        if fresh:
            self.errors.show()

    def _add_outcome(self, text: str, colour: str = "") -> None:
        self.errors.addItem(self._outcome(text, colour))

    @staticmethod
    def _outcome(text: str, colour: str = "") -> QListWidgetItem:
        item = QListWidgetItem(text)
        item.setToolTip(plain_tooltip(text))  # the list is narrow: the whole line on hover
        if colour:
            item.setForeground(QColor(colour))
        return item

    def _show_error(self, failure: Failure) -> None:
        """Why the operation failed ("Could not <operation>: <reason>"), under the list."""
        self.result_label.setText(failure.text())
        self.result_label.show()

    def _set_documents(self, docs: list[Any]) -> None:
        self.model.set_documents(docs)
        self._known_failures = {d.name: d.error for d in docs if d.status == "failed" and d.error}
        # Failures from the command line or an earlier session are offered again too, not only a
        # batch's own.
        busy = any(self.ctx.runner.is_busy(k) for k in INDEXING)
        self.retry_button.setVisible(not busy and self._has_failures())
        scopes = {"shared"} | {d.scope for d in docs}
        for scope in sorted(scopes):
            if scope not in self._scopes:
                self._scopes.append(scope)
        self._fill_scopes()
        self._update_buttons()
        self._show_notices()  # the list may have found a damaged manifest and rebuilt it
        self.documents_refreshed.emit()

    def _set_busy(self, busy: bool) -> None:
        self.retry_button.setVisible(not busy and self._has_failures())
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)
        self.progress_label.setVisible(busy)

    def _has_failures(self) -> bool:
        return bool(self._known_failures) or (self.last_report is not None and bool(self.last_report.failed))

    def _update_buttons(self, *_: object) -> None:
        ready = self.ctx.kb is not None
        selected = self.table.selectionModel().hasSelection()
        for b in (self.add_button, self.add_folder_button, self.reindex_button):
            b.setEnabled(ready)
        self.remove_button.setEnabled(ready and selected)
        # A button that waits says why (Qt shows tooltips on disabled buttons too).
        if ready:
            why = ""
        elif self.ctx.load_error:
            error = self.ctx.load_error.reason()
            why = tr("The knowledge base could not be opened: {error}").format(error=error)
        else:
            why = tr("Available once the knowledge base has opened")
        for b in (self.add_button, self.add_folder_button, self.reindex_button):
            b.setToolTip(why)
        self.remove_button.setToolTip(
            why or ("" if selected else tr("Select documents in the list to remove them"))
        )

    def _update_error_column(self, *_: object) -> None:
        """The Error column only while a document has failed: otherwise its room goes to the names."""
        self.table.setColumnHidden(4, not any(doc.error for doc in self.model.rows))

    def _update_empty_hint(self, *_: object) -> None:
        self.empty_hint.setText(
            tr("No documents yet. Drop files or folders here, or click “Add files…”.")
            if self.ctx.kb is not None
            else tr("Your documents are listed here once the knowledge base has opened.")
        )
        # After a failed load the drop zone says why; the hint would only repeat "not yet".
        self.empty_hint.setVisible(self.model.rowCount() == 0 and not self.ctx.load_error)

    def _kb_ready(self) -> None:
        self.watcher.watch(self.ctx.knowledge_dir)
        if not self._looked_at_start:
            # Files saved, copied or deleted while the app was closed raised no watcher event: look
            # once (a file whose size and mtime are unchanged costs one stat). Only at the first
            # ready: applying settings emits it again, and a model switch syncs by itself.
            self._looked_at_start = True
            self.sync()
        self.switch_row.start(resume=False)  # a switch left filling (not paused) goes on
        self._update_buttons()
        self._update_empty_hint()
        self.refresh()
        pending, self._pending = self._pending, []
        for paths, scope in pending:
            self.add_paths(paths, scope)

    def _choose_files(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, tr("Add files"))
        if files:
            self.add_paths([Path(f) for f in files])

    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, tr("Add folder"))
        if folder:
            self.add_paths([Path(folder)])

    def _open_folder(self) -> None:
        self.ctx.knowledge_dir.mkdir(parents=True, exist_ok=True)
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.ctx.knowledge_dir)))
