"""argparse types for numeric flags: a bad value is a usage error (exit 2) that says what is allowed."""

from __future__ import annotations

import argparse
import math


def _number(text: str, kind: type, least: float, what: str):
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what} expected, not {text!r}") from None
    if isinstance(value, float) and not math.isfinite(value) or value < least:
        raise argparse.ArgumentTypeError(f"{what} expected, not {text!r}")
    return value


def positive_int(text: str) -> int:
    return _number(text, int, 1, "a whole number of at least 1")


def non_negative_int(text: str) -> int:
    return _number(text, int, 0, "a whole number of at least 0")


def positive_float(text: str) -> float:
    value = _number(text, float, 0, "a number above 0")
    if value == 0:
        raise argparse.ArgumentTypeError(f"a number above 0 expected, not {text!r}")
    return value
