"""The ChatModel seam: every chat backend (HTTP server, in-process GGUF) streams text the same way.

Backends raise `LLMError` with a message a user can read ("cannot reach the language model at
http://127.0.0.1:11434/v1: connection refused"); callers fall back instead of crashing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from desktop_app.core.messages import Text
from desktop_app.core.tasks import TaskState

Message = dict[str, Any]  # {"role": "system"|"user"|"assistant"|"tool", "content": str, ...}


class LLMError(Exception):
    """A chat request failed; ``kind`` says how, the message says it for a person."""

    def __init__(self, message: Text, kind: str = "error") -> None:
        super().__init__(message)
        self.kind = kind  # "unreachable" | "timeout" | "http" | "protocol" | "bad_output" | "error"


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass
class ChatTurn:
    """One non-streamed reply of a tool-calling model: text, or tool calls to run, or both."""

    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)


@runtime_checkable
class ChatModel(Protocol):
    name: str
    context_window: int  # tokens the model sees at once (prompt + answer)

    def stream(
        self,
        messages: list[Message],
        json_schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        cancel: TaskState | None = None,
    ) -> Iterator[str]:
        """Yield the answer's text piece by piece; raise LLMError on failure, Cancelled if cancelled."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class ToolChatModel(ChatModel, Protocol):
    """A ChatModel that can also run one tool-calling turn (agentic mode needs one)."""

    def chat(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        max_tokens: int | None = None,
        temperature: float | None = None,
        cancel: TaskState | None = None,
    ) -> ChatTurn: ...


def complete(
    model: ChatModel,
    messages: list[Message],
    json_schema: dict[str, Any] | None = None,
    max_tokens: int | None = None,
    temperature: float | None = None,
    cancel: TaskState | None = None,
    **kwargs: Any,
) -> str:
    """The whole answer as one string (for the router and other short, non-streamed calls).
    Extra keywords (``timeout``) go to backends that take them and are dropped for others."""
    args = dict(json_schema=json_schema, max_tokens=max_tokens, temperature=temperature, cancel=cancel)
    try:
        pieces = model.stream(messages, **args, **kwargs)
    except TypeError:
        if not kwargs:
            raise
        pieces = model.stream(messages, **args)
    return "".join(pieces)
