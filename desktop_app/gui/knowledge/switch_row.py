"""The knowledge panel's line about a model switch: which model answers meanwhile, how far the next
one's index is, with Pause and Resume. The fill itself is core (library/switching.py, Desk.fill_switch);
this runs it as a background job and shows its progress."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from desktop_app.core.config import Config
from desktop_app.core.library.switching import FillProgress
from desktop_app.core.messages import Text
from desktop_app.gui.context import AppContext
from desktop_app.gui.i18n import on_language_changed, tr, tr_core
from desktop_app.gui.operations import JobKind, Operation
from desktop_app.gui.tasks import Failure


class SwitchRow(QWidget):
    """Hidden unless another embedding model's index is filling (or paused)."""

    def __init__(self, ctx: AppContext, parent=None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.bar = QProgressBar()
        self.bar.setTextVisible(True)
        self.bar.setMaximumWidth(160)
        self.button = QPushButton()
        self.button.clicked.connect(self._toggle)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.label, 1)
        lay.addWidget(self.bar)
        lay.addWidget(self.button)
        self._message: Text = ""
        self._paused = False
        self.hide()
        on_language_changed(self._retranslate)

    @property
    def running(self) -> bool:
        return self.ctx.runner.is_busy(JobKind.SWITCH_EMBEDDER)

    def start(self, resume: bool = True) -> None:
        """Fill the pending switch in the background (at start: only if not paused, ``resume`` False)."""
        desk = self.ctx.desk if self.ctx.kb is not None else None
        if desk is None or self.running:
            return
        # Not under KB_LOCK: the fill takes the knowledge base's writer lock a batch at a time, so
        # adds and syncs go on. A thread more meanwhile: the fill must not hold one of the pool's few.
        pool = self.ctx.runner.pool
        pool.setMaxThreadCount(pool.maxThreadCount() + 1)
        self._paused = False
        self.ctx.runner.run(
            JobKind.SWITCH_EMBEDDER,
            lambda state: (desk.fill_switch(state, apply=False, resume=resume), desk.switch_progress()),
            operation=Operation.FILL_INDEX,
            on_progress=self._progress,
            on_success=self._done,
            on_failure=self._failed,
            on_finished=lambda: pool.setMaxThreadCount(pool.maxThreadCount() - 1),
        )

    def _progress(self, done: int, total: int, message: Text) -> None:
        if total > 0:
            self.bar.setRange(0, total)
            self.bar.setValue(done)
            self.bar.setFormat(f"{done}/{total}")
        self._message = message
        self.show()
        self._retranslate()

    def _done(self, outcome: tuple[Config | None, FillProgress | None]) -> None:
        config, left = outcome
        if config is not None:  # complete: the new model answers from now on
            self.hide()
            self.ctx.apply_settings(config)
        elif left is not None and not left.paused:  # another model chosen meanwhile: fill that one
            QTimer.singleShot(0, self.start)
        elif left is not None:  # paused (here, at an earlier session, or by `kdesk models pause`)
            self._paused, self._message = True, left.status()
            if left.total:
                self.bar.setRange(0, left.total)
                self.bar.setValue(left.done)
                self.bar.setFormat(f"{left.done}/{left.total}")
            self.show()
            self._retranslate()
        else:
            self.hide()  # none pending, or withdrawn elsewhere

    def _failed(self, failure: Failure) -> None:
        self._message = failure.text()
        self._paused = True  # Resume tries again
        self.show()
        self._retranslate()

    def _toggle(self) -> None:
        if self.running:
            self._paused = True
            desk = self.ctx.desk
            self.ctx.runner.cancel(JobKind.SWITCH_EMBEDDER)  # stops after the step in flight
            self.ctx.runner.run(
                JobKind.PAUSE_SWITCH,
                lambda _s: (desk.pause_switch(True), desk.switch_progress())[1],
                on_success=lambda left: left is not None and self._done((None, left)),
            )
        else:
            self.start(resume=True)

    def _retranslate(self, *_: object) -> None:
        kb = self.ctx.kb
        current = kb.embedder_name if kb is not None else ""
        progress = tr_core(self._message) if self._message else ""
        if self._paused:  # the message says which model answers, and where the fill stopped
            self.label.setText(progress)
            self.button.setText(tr("Resume"))
        else:
            self.label.setText(
                tr("Searching with {current}; {progress}").format(current=current, progress=progress)
            )
            self.button.setText(tr("Pause"))
