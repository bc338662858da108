"""Candidate names: as shown to people, normalised for matching, and found in retrieved notes."""

from __future__ import annotations

import re
from collections.abc import Sequence

from desktop_app.core.library.documents import Hit


def pretty_name(name: str) -> str:
    """A label as shown to people (gallery labels may use underscores)."""
    return name.replace("_", " ").strip()


def norm_name(name: str) -> str:
    """'cokatoo_Major-Mitchell' -> 'cokatoo major mitchell' (for matching names in documents)."""
    return re.sub(r"\s+", " ", re.sub(r"[_\-/()（）.,]+", " ", name)).strip().lower()


def mentions(hit: Hit, name: str) -> bool:
    """Does this hit talk about ``name`` (in its text, heading or file name)?"""
    key = norm_name(name)
    if not key:
        return False
    hay = norm_name(" ".join([hit.text, hit.source, " ".join(hit.heading_path or [])]))
    return key in hay


def notes_about(hits: Sequence[Hit], name: str) -> list[Hit]:
    """The chunks of the one document that is most about ``name`` (most mentions, title first)."""
    key = norm_name(name)
    best: tuple[int, str] | None = None
    by_source: dict[str, list[Hit]] = {}
    for h in hits:
        if not mentions(h, name):
            continue
        by_source.setdefault(h.source, []).append(h)
        text = norm_name(h.text)
        score = text.count(key) + 2 * (key in norm_name(h.source + " " + " ".join(h.heading_path or [])))
        score += key in text[:80]
        if best is None or score > best[0]:
            best = (score, h.source)
    return by_source[best[1]] if best else []
