"""argparse types for numeric flags: a bad value is a usage error (exit 2) that says what is allowed."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def _number(text: str, kind: type, ok: Callable[[float], bool], what: str):
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not math.isfinite(value) or not ok(value):
        raise argparse.ArgumentTypeError(f"{what} expected, not {text!r}")
    return value


def positive_int(text: str) -> int:
    return _number(text, int, lambda v: v >= 1, "a whole number of at least 1")


def non_negative_int(text: str) -> int:
    return _number(text, int, lambda v: v >= 0, "a whole number of at least 0")


def positive_float(text: str) -> float:
    return _number(text, float, lambda v: v > 0, "a number above 0")
