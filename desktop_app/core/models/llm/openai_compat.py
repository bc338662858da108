"""OpenAI-compatible chat client (Ollama, LM Studio, llama.cpp server, vLLM, OpenAI) over httpx.

Why a reader thread: httpx's read timeout restarts on every byte, so a server that stalls after
the first token, or trickles keep-alives, could hold a request far past ``timeout``. The HTTP
work runs on a daemon thread feeding a queue; the caller's thread waits on the queue with the
overall deadline and the cancel flag, so both take effect within ~0.1 s whatever the socket does.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx

from desktop_app.core.config import LLMConfig
from desktop_app.core.messages import message
from desktop_app.core.models import reasons
from desktop_app.core.models.llm.base import ChatTurn, LLMError, Message, ToolCall
from desktop_app.core.models.llm.jsonx import extract_json
from desktop_app.core.tasks import Cancelled, TaskState

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


def _error_text(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:300]
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict):
        return str(err.get("message") or err)[:300]
    if isinstance(err, str):
        return err[:300]
    return json.dumps(body)[:300]


class _Rejected(Exception):
    """The server refused the request's response_format (a 4xx): try the next rung."""

    def __init__(self, status: int, text: str) -> None:
        super().__init__(f"HTTP {status}: {text}")
        self.status, self.text = status, text


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
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(headers=headers, trust_env=False)

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
        body["stream"] = True
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
        body["tools"] = tools
        body["tool_choice"] = "auto"
        out: queue.Queue = queue.Queue()
        url = self.base_url + "/chat/completions"

        def work() -> None:
            try:
                r = self._client.post(url, json=body, timeout=self._timeouts(deadline))
                out.put(("response", r))
            except Exception as exc:  # handed to the caller's thread
                out.put(("exc", exc))

        threading.Thread(target=work, daemon=True, name="llm-chat").start()
        kind, value = self._wait(out, deadline, cancel, lambda: None, limit)
        if kind == "exc":
            raise self._translate(value, deadline)
        r: httpx.Response = value
        if r.status_code >= 400:
            why = message(reasons.LLM_HTTP, status=r.status_code, text=_error_text(r))
            raise LLMError(str(why), "http")
        try:
            msg = r.json()["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMError(message(reasons.LLM_UNREADABLE, error=exc), "protocol") from exc
        calls = []
        for i, tc in enumerate(msg.get("tool_calls") or []):
            fn = tc.get("function") or {}
            args = fn.get("arguments") or {}
            if isinstance(args, str):
                args = extract_json(args) or {}
            calls.append(
                ToolCall(id=str(tc.get("id") or f"call_{i}"), name=str(fn.get("name")), arguments=args)
            )
        content = msg.get("content") or ""
        if not calls:
            calls = _tool_call_in_text(content, {t.get("function", {}).get("name") for t in tools})
            if calls:
                content = ""
        return ChatTurn(content=content, tool_calls=calls)

    def count_tokens(self, text: str) -> int | None:
        """Exact count from llama.cpp's /tokenize when the server has it; None elsewhere."""
        if self._tokenize_ok is False:
            return None
        root = self.base_url[: -len("/v1")] if self.base_url.endswith("/v1") else self.base_url
        try:
            r = self._client.post(root + "/tokenize", json={"content": text}, timeout=2.0)
            tokens = r.json()["tokens"] if r.status_code == 200 else None
        except (httpx.HTTPError, ValueError, KeyError, TypeError):
            tokens = None
        self._tokenize_ok = tokens is not None
        return len(tokens) if tokens is not None else None

    def close(self) -> None:
        self._client.close()

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

    def _timeouts(self, deadline: float) -> httpx.Timeout:
        # The deadline is kept by _wait; the socket's read timeout is only a backstop, set past it
        # so the two never race and the user always reads the same "did not finish within" reason.
        remaining = max(0.1, deadline - time.monotonic())
        return httpx.Timeout(remaining + 1.0, connect=min(self.connect_timeout, remaining))

    def _translate(self, exc: BaseException, deadline: float) -> LLMError:
        if isinstance(exc, LLMError):
            return exc
        where = self.base_url
        if isinstance(exc, httpx.ConnectTimeout):
            return LLMError(message(reasons.LLM_CONNECT_TIMEOUT, where=where), "unreachable")
        if isinstance(exc, httpx.ConnectError):
            reason = str(exc) or message(reasons.LLM_CONNECTION_REFUSED)
            return LLMError(message(reasons.LLM_UNREACHABLE, where=where, reason=reason), "unreachable")
        if isinstance(exc, httpx.TimeoutException):
            return LLMError(message(reasons.LLM_STOPPED_ANSWERING, where=where), "timeout")
        if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)):
            why = message(reasons.LLM_CONNECTION_LOST, where=where, error=exc or "reset")
            return LLMError(str(why), "protocol")
        if isinstance(exc, httpx.HTTPError):
            return LLMError(message(reasons.LLM_REQUEST_FAILED, error=exc), "protocol")
        why = message(reasons.LLM_REQUEST_FAILED_TYPE, error_type=type(exc).__name__, error=exc)
        return LLMError(str(why), "error")

    def _wait(
        self,
        q: queue.Queue,
        deadline: float,
        cancel: TaskState | None,
        abort: Callable[[], None],
        limit: float,
    ) -> tuple[str, Any]:
        """Next item from the reader thread, honouring the deadline and the cancel flag."""
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
        holder: dict[str, httpx.Response] = {}
        url = self.base_url + "/chat/completions"

        def work() -> None:
            try:
                with self._client.stream("POST", url, json=body, timeout=self._timeouts(deadline)) as r:
                    holder["r"] = r
                    if r.status_code >= 400:
                        r.read()
                        q.put(("status", (r.status_code, _error_text(r))))
                        return
                    for line in r.iter_lines():
                        if stop.is_set():
                            return
                        q.put(("line", line))
                q.put(("end", None))
            except Exception as exc:  # handed to the caller's thread
                if not stop.is_set():
                    q.put(("exc", exc))

        def abort() -> None:
            stop.set()
            r = holder.get("r")
            if r is not None:
                try:
                    r.close()
                except Exception:  # closing from another thread is best effort
                    pass

        threading.Thread(target=work, daemon=True, name="llm-stream").start()
        plain: list[str] = []  # a server that ignored stream=True sends one JSON body
        saw_data = False
        try:
            while True:
                kind, value = self._wait(q, deadline, cancel, abort, limit)
                if kind == "exc":
                    raise self._translate(value, deadline)
                if kind == "status":
                    status, text = value
                    if rejectable and "response_format" in body and 400 <= status < 500 and status != 401:
                        raise _Rejected(status, text)
                    raise LLMError(message(reasons.LLM_HTTP, status=status, text=text), "http")
                if kind == "end":
                    break
                line: str = value
                if not line or line.startswith(":") or line.startswith("event:"):
                    continue
                if not line.startswith("data:"):
                    plain.append(line)
                    continue
                saw_data = True
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                piece = self._delta(data)
                if piece:
                    yield piece
            if not saw_data and plain:
                yield self._whole_body("\n".join(plain))
        finally:
            stop.set()

    @staticmethod
    def _delta(data: str) -> str:
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise LLMError(message(reasons.LLM_GARBLED, data=repr(data[:80])), "protocol") from exc
        if not isinstance(chunk, dict):
            return ""
        if chunk.get("error"):
            err = chunk["error"]
            msg = err.get("message") if isinstance(err, dict) else err
            raise LLMError(message(reasons.LLM_ERROR_MID_ANSWER, error=msg), "http")
        choices = chunk.get("choices") or []
        if not choices:
            return ""
        delta = choices[0].get("delta") or choices[0].get("message") or {}
        return delta.get("content") or choices[0].get("text") or ""

    @staticmethod
    def _whole_body(text: str) -> str:
        try:
            body = json.loads(text)
            return body["choices"][0]["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            why = message(reasons.LLM_UNREADABLE, error=repr(text[:80]))
            raise LLMError(str(why), "protocol") from exc


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
