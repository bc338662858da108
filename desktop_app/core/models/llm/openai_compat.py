"""OpenAI-compatible chat client (Ollama, LM Studio, llama.cpp server, vLLM, OpenAI) on the `openai` package.

The package speaks the protocol: request bodies, server-sent events, typed errors. What stays here is
the deadline: the HTTP read timeout restarts on every byte, so a server that stalls after the first
token, or trickles keep-alives, could hold a request far past ``timeout``. The request runs on a
daemon thread feeding a queue; the caller's thread waits on the queue with the overall deadline and
the cancel flag, so both take effect within ~0.1 s whatever the socket does.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from desktop_app.core.config import LLMConfig
from desktop_app.core.messages import message
from desktop_app.core.models import reasons
from desktop_app.core.models.llm.base import ChatTurn, LLMError, Message, ToolCall
from desktop_app.core.models.llm.jsonx import extract_json
from desktop_app.core.models.openai_api import LazyClient
from desktop_app.core.tasks import Cancelled, TaskState

if TYPE_CHECKING:  # imported on a client's first use (openai_api.py)
    import openai

log = logging.getLogger(__name__)

# Structured-output ladder: the first rung a server accepts is remembered for the next calls.
_RUNGS = ("json_schema", "json_object", "text")
_POLL = 0.1  # seconds between cancel/deadline checks while waiting for the server


def normalize_base_url(url: str) -> str:
    """'http://host:8080' -> 'http://host:8080/v1'; a URL with a path is taken as given."""
    url = url.strip().rstrip("/")
    if not url:
        raise LLMError(message(reasons.LLM_NO_URL_CONFIGURED), "unreachable")
    if "://" not in url:
        url = "http://" + url
    for suffix in ("/chat/completions", "/completions"):
        if url.endswith(suffix):
            url = url[: -len(suffix)]
    if urlsplit(url).path in ("", "/"):
        url += "/v1"
    return url


def _error_text(exc: openai.APIStatusError) -> str:
    """The server's own words: its JSON error's ``message``, else the body as it came."""
    body = exc.body  # openai has already taken a JSON body's "error" member out
    text = (body.get("message") or json.dumps(body)) if isinstance(body, dict) else body
    return str(text or "").strip()[:300]


def _field(obj: Any, name: str) -> Any:
    """``obj.name`` of a parsed reply, or ``obj[name]`` where a server's extra field stayed a dict."""
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _piece(chunk: Any) -> str:
    """The text a stream chunk adds: ``delta.content``, or a whole ``message`` / completions-style
    ``text`` from servers that send those instead."""
    choices = _field(chunk, "choices") or []
    if not choices:
        return ""
    choice = choices[0]
    for part in (_field(choice, "delta"), _field(choice, "message")):
        content = _field(part, "content") if part is not None else None
        if content:
            return str(content)
    return str(_field(choice, "text") or "")


class _Rejected(Exception):
    """The server refused the request's response_format (a 4xx): try the next rung."""


class OpenAIChatModel:
    """ChatModel for any server speaking /v1/chat/completions with server-sent events."""

    def __init__(
        self,
        base_url: str,
        model: str = "",
        api_key: str = "",
        *,
        timeout: float = 60.0,
        connect_timeout: float = 5.0,
        context_window: int = 4096,
        max_tokens: int = 512,
        temperature: float = 0.2,
        name: str | None = None,
    ) -> None:
        self.base_url = normalize_base_url(base_url)
        self.model = model
        self.timeout = float(timeout)
        self.connect_timeout = float(connect_timeout)
        self.context_window = int(context_window)
        self.max_tokens = int(max_tokens)
        self.temperature = float(temperature)
        self.name = name or f"{model or 'default'} @ {self.base_url}"
        self.structured = _RUNGS[0]  # downgraded when a server rejects response_format
        self._tokenize_ok: bool | None = None
        # No retries: a retried stream would restart the answer; the deadline is the budget.
        self._api = LazyClient(self.base_url, api_key, max_retries=0)

    @classmethod
    def from_config(cls, llm: LLMConfig, api_key: str | None = None) -> OpenAIChatModel:
        """From a Config.llm section."""
        return cls(
            llm.url,
            llm.model,
            api_key if api_key is not None else llm.api_key,
            timeout=llm.timeout,
            connect_timeout=llm.connect_timeout,
            context_window=llm.context_window,
            max_tokens=llm.max_tokens,
            temperature=llm.temperature,
        )

    # ------------------------------------------------------------------ ChatModel
    def stream(
        self,
        messages: list[Message],
        json_schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        cancel: TaskState | None = None,
        timeout: float | None = None,
    ) -> Iterator[str]:
        """Stream the reply's text. ``timeout`` (default: the configured one) bounds the whole call."""
        limit = timeout if timeout is not None else self.timeout
        deadline = time.monotonic() + limit
        body = self._body(messages, max_tokens, temperature)
        if json_schema is None:
            yield from self._stream_once(body, deadline, cancel, limit=limit)
            return
        rungs = _RUNGS[_RUNGS.index(self.structured) :]
        for i, rung in enumerate(rungs):
            attempt = dict(body)
            if rung == "json_schema":
                attempt["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "response", "schema": json_schema, "strict": True},
                }
            elif rung == "json_object":
                attempt["response_format"] = {"type": "json_object"}
            try:
                yield from self._stream_once(
                    attempt, deadline, cancel, limit=limit, rejectable=i < len(rungs) - 1
                )
            except _Rejected as exc:
                log.info("server refused response_format %s (%s); trying the next one", rung, exc)
                continue
            self.structured = rung
            return

    def chat(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        max_tokens: int | None = None,
        temperature: float | None = None,
        cancel: TaskState | None = None,
        timeout: float | None = None,
    ) -> ChatTurn:
        """One non-streamed turn with tools offered (agentic mode)."""
        limit = timeout if timeout is not None else self.timeout
        deadline = time.monotonic() + limit
        body = self._body(messages, max_tokens, temperature)
        out: queue.Queue = queue.Queue()

        def work() -> None:
            try:
                api = self._api.get()
                reply = api.chat.completions.create(
                    **body,
                    tools=tools,
                    tool_choice="auto",
                    timeout=self._timeouts(deadline),
                    extra_headers=self._api.headers,
                )
                out.put(("reply", reply))
            except Exception as exc:  # handed to the caller's thread
                out.put(("exc", exc))

        threading.Thread(target=work, daemon=True, name="llm-chat").start()
        kind, value = self._wait(out, deadline, cancel, lambda: None, limit)
        if kind == "exc":
            raise self._translate(value)
        try:
            msg = value.choices[0].message  # a body that is not JSON arrives as a str: no .choices
        except (AttributeError, IndexError, TypeError) as exc:
            raise LLMError(message(reasons.LLM_UNREADABLE, error=exc), "protocol") from exc
        calls = []
        for i, tc in enumerate(_field(msg, "tool_calls") or []):
            fn = _field(tc, "function")
            args = _field(fn, "arguments") or {}
            if isinstance(args, str):
                args = extract_json(args) or {}
            call_id = str(_field(tc, "id") or f"call_{i}")
            calls.append(ToolCall(id=call_id, name=str(_field(fn, "name")), arguments=args))
        content = _field(msg, "content") or ""
        if not calls:
            calls = _tool_call_in_text(content, {t.get("function", {}).get("name") for t in tools})
            if calls:
                content = ""
        return ChatTurn(content=content, tool_calls=calls)

    def count_tokens(self, text: str) -> int | None:
        """Exact count from llama.cpp's /tokenize when the server has it; None elsewhere."""
        if self._tokenize_ok is False:
            return None
        import openai

        root = self.base_url[: -len("/v1")] if self.base_url.endswith("/v1") else self.base_url
        try:
            # Not an OpenAI endpoint: the client's generic post, to an absolute URL off the /v1 root.
            api = self._api.get()
            reply = api.post(
                root + "/tokenize",
                body={"content": text},
                cast_to=object,
                options={"timeout": 2.0, "max_retries": 0, "headers": self._api.headers},
            )
            tokens = reply["tokens"]
            count: int | None = len(tokens)
        except (openai.OpenAIError, KeyError, TypeError):
            count = None
        self._tokenize_ok = count is not None
        return count

    def list_models(self, timeout: float = 10.0) -> list[str]:
        """The ids ``GET /models`` lists ("Test connection"); LLMError says why it failed."""
        try:
            api = self._api.get()
            page = api.models.list(timeout=timeout, extra_headers=self._api.headers)
            return [str(m.id) for m in page.data]
        except Exception as exc:  # noqa: BLE001 - turned into the message a user reads
            raise self._translate(exc) from exc

    def close(self) -> None:
        self._api.close()

    # ------------------------------------------------------------------ internals
    def _body(
        self, messages: list[Message], max_tokens: int | None, temperature: float | None
    ) -> dict[str, Any]:
        return {
            "model": self.model or "default",
            "messages": messages,
            "max_tokens": int(max_tokens or self.max_tokens),
            "temperature": float(self.temperature if temperature is None else temperature),
        }

    def _timeouts(self, deadline: float) -> openai.Timeout:
        import openai

        # The deadline is kept by _wait; the socket's read timeout is only a backstop, set past it
        # so the two never race and the user always reads the same "did not finish within" reason.
        remaining = max(0.1, deadline - time.monotonic())
        return openai.Timeout(remaining + 1.0, connect=min(self.connect_timeout, remaining))

    def _translate(self, exc: BaseException) -> LLMError:
        """An exception from the request or the stream, as the catalogue message a user reads."""
        import httpx2  # openai's transport: its exceptions tell a refused connection from a lost one
        import openai

        if isinstance(exc, LLMError):
            return exc
        where = self.base_url
        cause = exc.__cause__
        if isinstance(exc, openai.APITimeoutError):
            if isinstance(cause, httpx2.ConnectTimeout):
                return LLMError(message(reasons.LLM_CONNECT_TIMEOUT, where=where), "unreachable")
            return LLMError(message(reasons.LLM_STOPPED_ANSWERING, where=where), "timeout")
        if isinstance(exc, openai.APIConnectionError):
            if isinstance(cause, httpx2.ConnectError):
                reason = str(cause) or message(reasons.LLM_CONNECTION_REFUSED)
                why = message(reasons.LLM_UNREACHABLE, where=where, reason=reason)
                return LLMError(why, "unreachable")
            if isinstance(cause, (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError)):
                why = message(reasons.LLM_CONNECTION_LOST, where=where, error=cause or "reset")
                return LLMError(why, "protocol")
            return LLMError(message(reasons.LLM_REQUEST_FAILED, error=cause or exc), "protocol")
        if isinstance(exc, openai.APIStatusError):  # AuthenticationError, NotFoundError, RateLimitError ...
            why = message(reasons.LLM_HTTP, status=exc.status_code, text=_error_text(exc))
            return LLMError(why, "http")
        if isinstance(exc, openai.APIError):  # an error event inside a 200 stream
            return LLMError(message(reasons.LLM_ERROR_MID_ANSWER, error=exc.message), "http")
        if isinstance(exc, json.JSONDecodeError):  # a data: line that is not JSON
            return LLMError(message(reasons.LLM_GARBLED, data=repr(exc.doc[:80])), "protocol")
        why = message(reasons.LLM_REQUEST_FAILED_TYPE, error_type=type(exc).__name__, error=exc)
        return LLMError(why, "error")

    def _wait(
        self,
        q: queue.Queue,
        deadline: float,
        cancel: TaskState | None,
        abort: Callable[[], None],
        limit: float,
    ) -> tuple[str, Any]:
        """Next item from the request thread, honouring the deadline and the cancel flag."""
        while True:
            if cancel is not None and cancel.cancelled():
                abort()
                raise Cancelled()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                abort()
                raise LLMError(message(reasons.LLM_TOO_SLOW, limit=limit), "timeout")
            try:
                return q.get(timeout=min(_POLL, remaining))
            except queue.Empty:
                continue

    def _stream_once(
        self,
        body: dict[str, Any],
        deadline: float,
        cancel: TaskState | None,
        limit: float,
        rejectable: bool = False,
    ) -> Iterator[str]:
        q: queue.Queue = queue.Queue()
        stop = threading.Event()
        opened: list[Any] = []  # the open stream, for abort() to close

        def work() -> None:
            try:
                api = self._api.get()
                chunks = api.chat.completions.create(
                    **body, stream=True, timeout=self._timeouts(deadline), extra_headers=self._api.headers
                )
                opened.append(chunks)
                if stop.is_set():  # aborted while the request was on its way
                    chunks.close()
                    return
                response = chunks.response
                if "json" in response.headers.get("content-type", ""):
                    q.put(("whole", response.read().decode("utf-8", "replace")))  # stream=True ignored
                else:
                    for chunk in chunks:
                        if stop.is_set():
                            return
                        q.put(("chunk", chunk))
                q.put(("end", None))
            except Exception as exc:  # handed to the caller's thread
                if not stop.is_set():
                    q.put(("exc", exc))

        def abort() -> None:
            stop.set()
            for chunks in opened:
                try:
                    chunks.close()  # ends the reader thread's wait on the socket
                except Exception:  # closing from another thread is best effort
                    pass

        threading.Thread(target=work, daemon=True, name="llm-stream").start()
        try:
            while True:
                kind, value = self._wait(q, deadline, cancel, abort, limit)
                if kind == "end":
                    return
                if kind == "exc":
                    if rejectable and _refused_format(value, body):
                        raise _Rejected(f"HTTP {value.status_code}: {_error_text(value)}")
                    raise self._translate(value)
                piece = self._whole_body(value) if kind == "whole" else _piece(value)
                if piece:
                    yield piece
        finally:
            abort()

    @staticmethod
    def _whole_body(text: str) -> str:
        try:
            body = json.loads(text)
            return body["choices"][0]["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            why = message(reasons.LLM_UNREADABLE, error=repr(text[:80]))
            raise LLMError(why, "protocol") from exc


def _refused_format(exc: BaseException, body: dict[str, Any]) -> bool:
    """A 4xx other than 401 to a request with response_format: the server may not support it."""
    import openai

    return (
        isinstance(exc, openai.APIStatusError)
        and "response_format" in body
        and 400 <= exc.status_code < 500
        and exc.status_code != 401
    )


def _tool_call_in_text(content: str, names: set[str | None]) -> list[ToolCall]:
    """A tool call written as text ('{"name": "search_knowledge", "arguments": {...}}', bare or in
    <tool_call> tags), as small models do when the server's template parser misses it."""
    text = content.strip()
    if not text or "{" not in text[:40]:
        return []
    data = extract_json(text)
    if not data or data.get("name") not in names:
        return []
    args = data.get("arguments", data.get("parameters", {}))
    if isinstance(args, str):
        args = extract_json(args) or {}
    return [ToolCall(id="call_0", name=str(data["name"]), arguments=args if isinstance(args, dict) else {})]
