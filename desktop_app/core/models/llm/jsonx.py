"""Tolerant JSON extraction from model output: code fences, prose around the object, trailing
commas, Python literals (True/None), single quotes. Small models produce all of these."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_WHOLE_FENCE = re.compile(r"\s*```(?:json|JSON)?\s*(.*?)\s*```\s*", re.S)


def _balanced_objects(text: str) -> list[str]:
    """Every top-level {...} span, tracking strings so braces inside them do not count."""
    spans: list[str] = []
    depth, start, in_str, esc, quote = 0, -1, False, False, ""
    for i, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == quote:
                in_str = False
            continue
        if ch in "\"'" and depth > 0:
            in_str, quote = True, ch
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
    if depth > 0 and start >= 0:  # cut off by max_tokens: try closing it
        tail = text[start:]
        if in_str:
            tail += quote
        spans.append(tail + "}" * depth)
    return spans


def _loads(candidate: str) -> Any:
    for attempt in (candidate, _TRAILING_COMMA.sub(r"\1", candidate)):
        try:
            return json.loads(attempt)
        except json.JSONDecodeError:
            pass
    # Python-style dicts: {'a': True, 'b': None}
    py = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", re.sub(r"\bnull\b", "None", candidate)))
    try:
        value = ast.literal_eval(_TRAILING_COMMA.sub(r"\1", py))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return value


def extract_json(text: str) -> dict[str, Any] | None:
    """The first JSON object found in ``text``, or None if there is none that parses."""
    if not text:
        return None
    # A reply that is one fenced block is read whole first: the first ``` inside a string value
    # would end the block early.
    whole = _WHOLE_FENCE.fullmatch(text)
    candidates: list[str] = [whole.group(1)] if whole else []
    candidates += [m.group(1) for m in _FENCE.finditer(text)]
    candidates.append(text)
    for block in candidates:
        block = block.strip()
        value = _loads(block) if block.startswith("{") else None
        if isinstance(value, dict):
            return value
        for span in _balanced_objects(block):
            value = _loads(span)
            if isinstance(value, dict):
                return value
    return None


def as_bool(value: Any) -> bool | None:
    """JSON booleans as small models write them: true, "true", "yes", 1, "是"."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return bool(value)
    if isinstance(value, str):
        v = value.strip().lower()
        if v in ("true", "yes", "y", "1", "是", "对"):
            return True
        if v in ("false", "no", "n", "0", "否", "不"):
            return False
    return None
