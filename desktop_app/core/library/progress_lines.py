"""Progress lines inside one file: the unit being read ("page 120 of 619"), then the chunks
embedded, each with an estimate of the time left once the file has taken a few seconds.

The sync sends them as its task's progress message (the window's knowledge panel shows it under
its bar, ``kdesk``'s bar after the file count); they are catalogue messages, so the window says
them in its language.
"""

from __future__ import annotations

import math
import time

from desktop_app.core.library import reasons
from desktop_app.core.messages import Message, message

ETA_AFTER = 3.0  # seconds into a file before a time left is guessed (the first pages mislead)


def unit_text(kind: str, number: int) -> Message:
    """Where a parser is: "page 3", "slide 3", "OCR page 3" (an unknown kind is a part)."""
    return message(reasons.UNIT.get(kind, reasons.UNIT["part"]), number=number)


def eta(seconds: float) -> Message:
    """The time left: "about 40 s left" (to 5 s) under a minute, "about 3 min left" (rounded up) above."""
    if seconds < 60:
        return message(reasons.ETA_SECONDS, seconds=max(5, int(round(seconds / 5)) * 5))
    return message(reasons.ETA_MINUTES, minutes=int(math.ceil(seconds / 60)))


class FileProgress:
    """The lines of one file, timed from when it was started."""

    def __init__(self, name: str, clock: float | None = None) -> None:
        self.name = name
        self.started = time.monotonic() if clock is None else clock

    def _left(self, done: int, total: int) -> float | None:
        elapsed = time.monotonic() - self.started
        if elapsed < ETA_AFTER or done <= 0 or total <= done:
            return None
        return elapsed / done * (total - done)

    def reading(self, kind: str, number: int, count: int | None) -> Message:
        """The parser started unit ``number`` (of ``count``)."""
        unit = unit_text(kind, number)
        if not count:
            return message(reasons.READING_UNIT, name=self.name, unit=unit)
        left = self._left(number - 1, count)
        if left is None:
            return message(reasons.READING_UNIT_OF, name=self.name, unit=unit, count=count)
        return message(reasons.READING_UNIT_ETA, name=self.name, unit=unit, count=count, eta=eta(left))

    def embedding(self, done: int, total: int) -> Message:
        """``done`` of the file's ``total`` chunks are embedded and stored."""
        left = self._left(done, total)
        if left is None:
            return message(reasons.EMBEDDING, name=self.name, done=done, total=total)
        return message(reasons.EMBEDDING_ETA, name=self.name, done=done, total=total, eta=eta(left))
