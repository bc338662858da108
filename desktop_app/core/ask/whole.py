"""STAND-IN, REPLACED BY h-whole's MODULE AT MERGE (issue 37 item 2): reading whole documents.

Only the interface the router's "document" kind calls is fixed here (``Side``, ``read_whole``);
this version names the documents each side resolved to, each cited, and reads nothing. The
integrator keeps h-whole's ``whole.py`` (extractive summary/outline/compare without a model,
map-reduce with one, progress, cancel) and drops this file.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from desktop_app.core.ask.conversation import Conversation
from desktop_app.core.ask.question import Question
from desktop_app.core.events import Answer, Citation, Event
from desktop_app.core.tasks import TaskState


@dataclass
class Side:
    label: str  # how the question names it: "the kea note", "macaws", "kea.md"
    sources: list[str]  # the knowledge base's document sources (manifest keys) read as this side


def read_whole(
    assistant: Any,  # the Assistant (importing it here would be a cycle: lint-imports)
    q: Question,
    sides: list[Side],
    conv: Conversation,
    cancel: TaskState | None = None,
) -> Iterator[Event]:
    """One side: summarise / outline / say what it says about q (q.text tells which); two or more
    sides: compare them side by side. Yields Token..., Answer (citations to section/page), Warning,
    and a Progress event for long documents. (Stand-in: lists the sides' documents, cited.)"""
    citations: list[Citation] = []
    parts = []
    for side in sides:
        marks = []
        for source in side.sources:
            n = next((c.n for c in citations if c.source == source), len(citations) + 1)
            if n > len(citations):
                citations.append(Citation(n, source, None))
            marks.append(f"{source} [{n}]")
        parts.append(f"- {side.label}: " + ", ".join(marks))
    text = "\n".join(parts)
    conv.add_turn(q.text, text)
    yield Answer(text, citations, by="extractive")
