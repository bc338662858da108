"""Agentic mode (``llm.agentic``): the model decides when to search, through the search_knowledge
tool, instead of the router deciding for it."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Protocol

from desktop_app.core.ask.budget import ContextBlock, render_blocks
from desktop_app.core.ask.citations import check_citations
from desktop_app.core.ask.conversation import Conversation, topic_of
from desktop_app.core.ask.prompts import AGENT_SYSTEM, SEARCH_TOOL
from desktop_app.core.ask.question import Question, as_question
from desktop_app.core.events import Answer, Event, Retrieved, RouteDecided, Token, Warning
from desktop_app.core.library.documents import Hit
from desktop_app.core.models.llm.base import LLMError, Message, ToolChatModel
from desktop_app.core.tasks import TaskState

MAX_AGENT_ROUNDS = 3  # tool turns before the model must answer: bounds a model that keeps searching


class AgentHost(Protocol):
    """What the agentic mode uses of the assistant (assistant.py, which calls it): its search and
    its extractive fallback."""

    def retrieve(self, query: str, scope: str | None = None) -> tuple[list[Hit], Warning | None]: ...

    def fallback(
        self,
        question: str | Question,
        exc: LLMError,
        blocks: list[ContextBlock],
        hits: Sequence[Hit],
        conv: Conversation,
        use_rag: bool,
        partial: str = "",
    ) -> Iterator[Event]: ...


def ask_agentic(
    assistant: AgentHost,
    chat_model: ToolChatModel,
    question: str | Question,
    conv: Conversation,
    cancel: TaskState | None = None,
) -> Iterator[Event]:
    """RouteDecided (by="agent"), Retrieved per search, Token, Answer; an LLM failure falls back to
    ``assistant.fallback`` (extractive answer) like the routed path."""
    q = as_question(question)
    question = q.text
    messages: list[Message] = [{"role": "system", "content": AGENT_SYSTEM[q.language]}, *conv.history[-6:]]
    messages.append({"role": "user", "content": question})
    blocks: list[ContextBlock] = []
    hits_all: list[Hit] = []
    routed = False
    text = ""
    try:
        for _round in range(MAX_AGENT_ROUNDS):
            turn = chat_model.chat(messages, [SEARCH_TOOL], cancel=cancel)
            if not routed:
                first = next((c for c in turn.tool_calls if c.name == "search_knowledge"), None)
                q = str(first.arguments.get("query", "")) if first else ""
                yield RouteDecided(bool(first), q, False, "agent", reason="the model chose")
                routed = True
            if not turn.tool_calls:
                text = turn.content
                break
            messages.append(
                {
                    "role": "assistant",
                    "content": turn.content or "",
                    "tool_calls": [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {
                                "name": c.name,
                                "arguments": json.dumps(c.arguments, ensure_ascii=False),
                            },
                        }
                        for c in turn.tool_calls
                    ],
                }
            )
            for call in turn.tool_calls:
                if call.name != "search_knowledge":
                    result = f"unknown tool {call.name!r}"
                else:
                    query = str(call.arguments.get("query") or question)
                    hits, warning = assistant.retrieve(query, conv.scope)
                    if warning:
                        yield warning
                    yield Retrieved(hits, query)
                    conv.last_query = topic_of(query)
                    new = [ContextBlock(len(blocks) + i + 1, h, h.text.strip()) for i, h in enumerate(hits)]
                    blocks += new
                    hits_all += hits
                    result = render_blocks(new) or "no results"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        else:  # still calling tools: ask for the answer without offering them again
            text = "".join(chat_model.stream(messages, cancel=cancel))
    except LLMError as exc:
        if not routed:
            yield RouteDecided(True, question, False, "agent", reason=f"agent failed: {exc}")
            hits_all, warning = assistant.retrieve(question, conv.scope)
            if warning:
                yield warning
            yield Retrieved(hits_all, question)
        yield from assistant.fallback(q, exc, blocks, hits_all, conv, True)
        return
    text = text.strip()
    yield Token(text)
    text, citations, warning = check_citations(text, blocks)
    if warning:
        yield warning
    conv.add_turn(question, text)
    yield Answer(text, citations, by="llm")
