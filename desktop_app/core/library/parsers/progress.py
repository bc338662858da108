"""Units of progress inside one file: the parsers say where they are, whoever runs them listens.

A parser calls ``unit("slide", 3, 40)`` before each page, slide, chapter, sheet block or XML part
it reads. Nobody listens by default (tests, a direct ``parse_file``). The parse worker process
listens: each unit is a heartbeat that restarts the per-unit deadline
(``index.max_seconds_per_unit``) and a progress line with a count and an ETA, and a unit is where
a failure is located ("took longer than 30 s at slide 3").

A listener is per thread, so the sync's reader thread and a test on another thread never hear each
other.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

# (kind, number, count): kind is a short word ("page", "slide", "chapter", "sheet", "part"),
# number is 1-based, count is the total when known (else None).
Listener = Callable[[str, int, "int | None"], None]

_local = threading.local()


def unit(kind: str, number: int, count: int | None = None) -> None:
    """Say that the parser starts unit ``number`` (of ``count``) of the file."""
    listener: Listener | None = getattr(_local, "listener", None)
    if listener is not None:
        listener(kind, number, count)


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Send this thread's units to ``listener`` inside the block."""
    before = getattr(_local, "listener", None)
    _local.listener = listener
    try:
        yield
    finally:
        _local.listener = before
