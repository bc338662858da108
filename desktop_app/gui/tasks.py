"""The one background task runner of the GUI (Anki's TaskManager, Orange's TaskState).

Every model and disk job goes through ``TaskRunner.run(kind, fn, ...)``: ``fn(state)`` runs on a
QThreadPool thread and must not touch widgets ("don't call UI routines in op"); its progress, its
streamed items (when ``fn`` returns an iterator) and its outcome come back to the UI thread as
signals of a ``Job`` living there. Starting a job of a kind that is already running cancels the
old one unless ``exclusive=False``. Jobs that write the same resource share a ``lock`` name and
run one after the other. A job that raises fails with a ``Failure``: the exception itself and the
operation the caller named ("save Settings"), shown as "Could not save Settings: <reason>" in the
window's language (Anki's ``CollectionOp.failure``); the traceback goes to the log only.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QCoreApplication, QElapsedTimer, QObject, QRunnable, QThreadPool, Signal

from desktop_app.core.messages import Message, Translator, message_of
from desktop_app.core.tasks import Cancelled
from desktop_app.gui.i18n import catalogue, tr

log = logging.getLogger(__name__)


class QtTaskState(QObject):
    """Implements ``desktop_app.core.tasks.TaskState``: progress as a signal, cancel from any thread.

    Progress is throttled (at most one signal per ``min_interval`` seconds, plus the final one) so a
    fast loop of 1,000 small files cannot flood the UI thread's event queue.
    """

    progress_changed = Signal(int, int, object)  # the message: a Text, rendered by the receiver

    def __init__(self, min_interval: float = 0.05) -> None:
        super().__init__()
        self._cancel = threading.Event()
        self._min_interval = min_interval
        self._last = 0.0
        self.done = 0
        self.total = 0
        self.message = ""

    def progress(self, done: int, total: int, message: str = "") -> None:
        self.done, self.total, self.message = done, total, message
        now = time.monotonic()
        if done < total and now - self._last < self._min_interval:
            return
        self._last = now
        self.progress_changed.emit(int(done), int(total), message)

    def cancel(self) -> None:
        self._cancel.set()

    def cancelled(self) -> bool:
        return self._cancel.is_set()


def readable_error(exc: BaseException) -> str:
    """A message a user can read: the exception's text, or its type when it has none."""
    text = str(exc).strip()
    return text if text else type(exc).__name__


def english(text: str) -> str:
    """The identity ``translate``: renders a reason in English (stored, then shown through tr_core)."""
    return text


def error_text(exc: BaseException, translate: Translator | Callable[[str], str] | None = None) -> str:
    """Why a job failed, in the language of ``translate`` (the window's by default).

    A ``UserError`` (a ``ParseError``...) or a core error raised with a ``Message`` is its catalogue
    message; an ``OSError`` its system text and file; anything else (a third party's error, an
    unexpected one) its type and text, as written.
    """
    found = message_of(exc)
    if isinstance(found, Message):
        return found.render(translate or catalogue())
    text = str(exc).strip()
    if isinstance(exc, OSError) and exc.strerror:
        where = exc.filename2 or exc.filename  # a rename names its target second
        return f"{exc.strerror}: {where}" if where else str(exc.strerror)
    if not text:
        return type(exc).__name__
    return f"{type(exc).__name__}: {text}"


@dataclass(frozen=True)
class Failure:
    """A job that raised: the exception itself and what the user asked for, ``operation`` (an
    English catalogue text such as "save Settings", rendered through ``tr`` when shown)."""

    operation: str
    error: BaseException

    def reason(self, translate: Callable[[str], str] | None = None) -> str:
        """Why, in the window's language (or that of ``translate``)."""
        return error_text(self.error, translate)

    def text(self) -> str:
        """The failure as the window says it, "Could not <operation>: <reason>", in its current
        language (called when shown, so a language switch renders it again)."""
        if not self.operation:
            return self.reason()
        return tr("Could not {operation}: {reason}").format(
            operation=tr(self.operation), reason=self.reason()
        )


class Job(QObject):
    """One background job; its signals are delivered on the UI thread."""

    partial = Signal(object)  # one item of an iterator result (streamed events)
    succeeded = Signal(object)
    failed = Signal(object)  # a Failure: the exception and the operation
    was_cancelled = Signal()
    finished = Signal()  # always last

    def __init__(self, kind: str, state: QtTaskState, operation: str = "") -> None:
        super().__init__()
        self.kind = kind
        self.state = state
        self.operation = operation  # what "Could not ..." names when the job fails
        self.failure: Failure | None = None
        self.done = False
        # Set on the worker thread once the function has returned or raised: its outcome signals
        # may still wait in the UI thread's queue, but no work is left to stop.
        self.returned = False

    def cancel(self) -> None:
        self.state.cancel()

    def cancelled(self) -> bool:
        return self.state.cancelled()


_BACKGROUND_NICE = 10
_lowered = threading.local()


def _lower_thread_priority() -> None:
    """Run this pool thread (and the torch threads it starts) below the UI thread.

    On a busy 2-core machine the window's thread otherwise waits its turn behind model and disk
    work; Linux nice values are per thread, and threads inherit their creator's value. Other
    systems keep the default priority.
    """
    if getattr(_lowered, "done", False):
        return
    _lowered.done = True
    if sys.platform.startswith("linux"):
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), _BACKGROUND_NICE)
        except (AttributeError, OSError) as exc:
            log.debug("background priority unchanged: %s", exc)


class _Worker(QRunnable):
    def __init__(self, job: Job, fn: Callable[[QtTaskState], Any], lock: threading.Lock | None) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self._job = job
        self._fn = fn
        self._lock = lock

    def run(self) -> None:  # runs on a pool thread
        job, state = self._job, self._job.state
        _lower_thread_priority()
        try:
            if self._lock is not None:
                while not self._lock.acquire(timeout=0.1):
                    if state.cancelled():
                        raise Cancelled()
            try:
                if state.cancelled():
                    raise Cancelled()
                result = self._fn(state)
                if isinstance(result, Iterator):
                    for item in result:
                        if state.cancelled():
                            close = getattr(result, "close", None)
                            if close is not None:
                                close()
                            raise Cancelled()
                        job.partial.emit(item)
                    result = None
            finally:
                if self._lock is not None:
                    self._lock.release()
        except Cancelled:
            job.returned = True
            job.was_cancelled.emit()
        except Exception as exc:  # noqa: BLE001 - surfaced to the user as a message
            job.returned = True
            if state.cancelled():  # the user asked it to stop (or the window closes): no failure
                log.warning("cancelled job %s raised:\n%s", job.kind, traceback.format_exc())
                job.was_cancelled.emit()
            else:
                log.error(
                    "background job %s (%s) failed:\n%s", job.kind, job.operation, traceback.format_exc()
                )
                job.failure = Failure(job.operation, exc)
                job.failed.emit(job.failure)
        else:
            job.returned = True
            if state.cancelled():
                job.was_cancelled.emit()
            else:
                job.succeeded.emit(result)
        finally:
            job.finished.emit()


class TaskRunner(QObject):
    """Runs functions on a thread pool and reports back on the UI thread."""

    job_started = Signal(object)
    job_finished = Signal(object)
    # The Failure of a job started without ``on_failure``: the window says it in its status bar.
    unhandled_failure = Signal(object)

    def __init__(self, max_threads: int | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.pool = QThreadPool(self)
        if max_threads:
            self.pool.setMaxThreadCount(max_threads)
        self._jobs: list[Job] = []
        self._locks: dict[str, threading.Lock] = {}
        self._closing = False

    def run(
        self,
        kind: str,
        fn: Callable[[QtTaskState], Any],
        *,
        operation: str = "",
        on_success: Callable[[Any], None] | None = None,
        on_failure: Callable[[Failure], None] | None = None,
        on_progress: Callable[[int, int, str], None] | None = None,
        on_partial: Callable[[Any], None] | None = None,
        on_cancelled: Callable[[], None] | None = None,
        on_finished: Callable[[], None] | None = None,
        exclusive: bool = True,
        lock: str | None = None,
    ) -> Job:
        """Start ``fn(state)`` in the background; callbacks run on the UI thread. ``operation``
        says what the job does for "Could not <operation>: <reason>" (``operations.Operation``);
        ``on_failure`` receives the ``Failure``, else ``unhandled_failure`` carries it."""
        if exclusive:
            self.cancel(kind)
        state = QtTaskState()
        if self._closing:
            state.cancel()  # started by a callback while shutting down: ends at once, as cancelled
        job = Job(kind, state, operation)
        if on_progress is not None:
            state.progress_changed.connect(on_progress)
        if on_partial is not None:
            job.partial.connect(on_partial)
        if on_success is not None:
            job.succeeded.connect(on_success)
        job.failed.connect(on_failure if on_failure is not None else self.unhandled_failure.emit)
        if on_cancelled is not None:
            job.was_cancelled.connect(on_cancelled)
        if on_finished is not None:
            job.finished.connect(on_finished)
        job.finished.connect(lambda j=job: self._finish(j))
        self._jobs.append(job)
        worker_lock = self._locks.setdefault(lock, threading.Lock()) if lock else None
        job._worker = _Worker(job, fn, worker_lock)  # keep the Python wrapper alive
        self.job_started.emit(job)
        self.pool.start(job._worker)
        return job

    def _finish(self, job: Job) -> None:
        job.done = True
        if job in self._jobs:
            self._jobs.remove(job)
        job._worker = None
        self.job_finished.emit(job)

    def active(self, kind: str | None = None) -> list[Job]:
        return [j for j in self._jobs if kind is None or j.kind == kind]

    def is_busy(self, kind: str | None = None) -> bool:
        return bool(self.active(kind))

    def is_working(self, kind: str | None = None) -> bool:
        """A job of the kind still runs its function (``is_busy`` also counts one whose outcome
        has not reached the UI thread yet)."""
        return any(not j.returned for j in self.active(kind))

    def cancel(self, kind: str | None = None) -> None:
        """Ask running jobs of a kind (or all) to stop; they end at their next check."""
        for job in self.active(kind):
            job.cancel()

    def wait_idle(self, timeout_ms: int = 30_000) -> bool:
        """Process events until no job is left (tests, shutdown). True if idle in time."""
        timer = QElapsedTimer()
        timer.start()
        while self._jobs:
            if timer.elapsed() > timeout_ms:
                return False
            QCoreApplication.processEvents()
            self.pool.waitForDone(10)
        return True

    def shutdown(self, timeout_ms: int = 10_000) -> None:
        """Cancel everything and wait for the pool so no thread outlives the window. The results
        delivered meanwhile may start jobs (a load that finished starts the first sync): they are
        cancelled as they start and waited for too, so none reports to a deleted window."""
        self._closing = True
        for _ in range(5):
            self.cancel()
            self.pool.waitForDone(timeout_ms)
            QCoreApplication.processEvents()
            if not self._jobs:
                break
