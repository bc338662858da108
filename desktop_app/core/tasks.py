"""Progress and cancellation for long core work (Orange's TaskState, without Qt).

Core functions take an optional ``task``; the GUI passes one wired to signals, the CLI one that
draws a progress bar on stderr, tests pass nothing.
"""

from __future__ import annotations

import threading
from typing import Protocol

from desktop_app.core.messages import define

# The note beside an answer or a card the user stopped: one code for both, so the one English word
# "stopped" stored by older versions reads back as one message.
STOPPED = define("task.stopped", "stopped")


class Cancelled(Exception):
    """Raised inside core work when the user asked to stop."""


class TaskState(Protocol):
    """The one progress/cancel protocol: indexing, downloads and LLM calls (their ``cancel=``) poll it."""

    def progress(self, done: int, total: int, message: str = "") -> None: ...

    def cancelled(self) -> bool: ...


class NullTask:
    """Does nothing: the default when the caller wants no progress."""

    def progress(self, done: int, total: int, message: str = "") -> None:
        pass

    def cancelled(self) -> bool:
        return False


class SimpleTask:
    """A thread-safe task state: cancel() from any thread, progress recorded for inspection."""

    def __init__(self) -> None:
        self._cancel = threading.Event()
        self.done = 0
        self.total = 0
        self.message = ""

    def progress(self, done: int, total: int, message: str = "") -> None:
        self.done, self.total, self.message = done, total, message

    def cancel(self) -> None:
        self._cancel.set()

    def cancelled(self) -> bool:
        return self._cancel.is_set()


def check(task: TaskState | None) -> None:
    """Raise Cancelled if the task was cancelled; call between units of work."""
    if task is not None and task.cancelled():
        raise Cancelled()
