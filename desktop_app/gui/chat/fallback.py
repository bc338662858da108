"""When ``desktop_app.core.ask.assistant`` cannot be loaded, the chat still shows cited passages.

The events are the assistant's own types, so the answer renders and cites exactly as usual.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from desktop_app.core import events as ev


def passages_answer(kb: Any, question: str, scope: str, top_k: int) -> Iterator[Any]:
    """Search and list the best passages, each cited."""
    yield ev.RouteDecided(use_rag=True, search_query=question, is_followup=False, by="mode")
    hits = kb.search(question, top_k=top_k, scope=None if scope == "shared" else scope)
    yield ev.Retrieved(hits=hits, query=question)
    lines, citations = [], []
    for n, hit in enumerate(hits, start=1):
        snippet = " ".join(hit.text.split())
        snippet = snippet[:300] + ("…" if len(snippet) > 300 else "")
        lines.append(f"{n}. {snippet} [{n}]")
        citations.append(
            ev.Citation(n=n, source=hit.source, page=hit.page, chunk_id=hit.chunk_id, text=hit.text)
        )
    text = "\n".join(lines) if lines else "No passage in your documents matches the question."
    yield ev.Answer(text=text, citations=citations, by="extractive")
