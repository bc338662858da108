"""A GGUF model from models/ served in-process by xllamacpp (llama.cpp's own HTTP server, MIT).

The server starts on first use (the window must open at once) on 127.0.0.1 with a free port, and
all talk goes through the same OpenAI-compatible client as a remote server, so streaming, JSON
schemas, timeouts and cancellation behave identically. ``close()`` stops it.
"""

from __future__ import annotations

import gc
import logging
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from desktop_app.core.config import LLMConfig
from desktop_app.core.messages import message
from desktop_app.core.models import reasons
from desktop_app.core.models.llm.base import ChatTurn, LLMError, Message
from desktop_app.core.models.llm.openai_compat import OpenAIChatModel
from desktop_app.core.packages import MissingPackage, require
from desktop_app.core.tasks import TaskState

log = logging.getLogger(__name__)


def xllamacpp_available() -> bool:
    try:
        import xllamacpp  # noqa: F401
    except ImportError:
        return False
    return True


def default_threads() -> int:
    """Half the cores, at most 4. llama.cpp's threads spin while they wait for each other, so
    when the machine is busy (embedding, the GUI) every extra thread costs: on 2 busy cores,
    SmolLM2 made 30 tokens in ~2 s with 1 thread and in ~26 s with 2."""
    return max(1, min(4, (os.cpu_count() or 2) // 2))


def default_batch_threads() -> int:
    """Every core, at most 8: reading the prompt is one large matrix product per layer, which
    divides well across threads, unlike generating one token at a time."""
    return max(1, min(8, os.cpu_count() or 2))


class GGUFServer:
    """Owns one xllamacpp.Server; start() is idempotent and thread-safe."""

    def __init__(
        self,
        path: Path,
        context_window: int = 4096,
        threads: int = 0,
        *,
        batch_threads: int = 0,
        batch: int = 512,
        poll: int = 50,
    ) -> None:
        self.path = Path(path)
        self.context_window = context_window
        self.threads = threads or default_threads()
        self.batch_threads = batch_threads or default_batch_threads()
        self.batch = max(32, batch)
        self.poll = min(100, max(0, poll))
        self._server: Any = None
        self._lock = threading.Lock()
        self.base_url: str | None = None

    def start(self, ready_timeout: float = 120.0) -> str:
        with self._lock:
            if self._server is not None and self.base_url:
                return self.base_url
            try:
                xlc = require("xllamacpp", "the local GGUF chat backend")
            except MissingPackage as exc:
                raise LLMError(str(exc), "unreachable") from exc
            if not self.path.is_file():
                raise LLMError(message(reasons.GGUF_NOT_FOUND, path=self.path), "unreachable")
            params = xlc.CommonParams()
            params.model.path = str(self.path)
            params.hostnames = ["127.0.0.1"]  # loopback only: never expose the model on the network
            params.port = 0  # a free port, chosen by the OS
            params.n_ctx = int(self.context_window)
            params.n_parallel = 1
            params.cpuparams.n_threads = self.threads
            params.cpuparams_batch.n_threads = self.batch_threads
            params.n_batch = params.n_ubatch = self.batch
            # Sleeping at once (poll 0) made every step wait for threads to wake: slower on both
            # prompt and generation, idle or busy (docs/chat-benchmarks.md).
            params.cpuparams.poll = params.cpuparams_batch.poll = self.poll
            # llama.cpp logs every request to stderr; keep it for `kdesk -v` only (-1 silences it).
            params.verbosity = 3 if logging.getLogger().isEnabledFor(logging.INFO) else -1
            t0 = time.monotonic()
            try:
                server = xlc.Server(params)
            except Exception as exc:  # a broken or unsupported file
                why = message(reasons.GGUF_CANNOT_LOAD, name=self.path.name, error=exc)
                raise LLMError(why, "unreachable") from exc  # a message: the window translates it
            base = str(server.listening_address).rstrip("/")
            deadline = t0 + ready_timeout
            while time.monotonic() < deadline:
                try:
                    if httpx.get(base + "/health", timeout=2.0, trust_env=False).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.2)
            else:
                del server
                gc.collect()
                raise LLMError(message(reasons.GGUF_NOT_READY, name=self.path.name), "timeout")
            self._server = server
            self.base_url = base + "/v1"
            log.info("serving %s at %s (%.1f s)", self.path.name, base, time.monotonic() - t0)
            return self.base_url

    @property
    def running(self) -> bool:
        return self._server is not None

    def stop(self) -> None:
        with self._lock:
            if self._server is None:
                return
            server, self._server, self.base_url = self._server, None, None
            del server  # the native destructor stops the HTTP server and frees the model
            gc.collect()


class GGUFChatModel:
    """ChatModel over a lazily started in-process llama.cpp server."""

    def __init__(
        self,
        path: Path,
        *,
        context_window: int = 4096,
        threads: int = 0,
        batch_threads: int = 0,
        batch: int = 512,
        poll: int = 50,
        timeout: float = 60.0,
        connect_timeout: float = 5.0,
        max_tokens: int = 512,
        temperature: float = 0.2,
    ) -> None:
        self.path = Path(path)
        self.name = f"{self.path.name} (local)"
        self.context_window = context_window
        self.server = GGUFServer(
            self.path, context_window, threads, batch_threads=batch_threads, batch=batch, poll=poll
        )
        self._client_args = dict(
            timeout=timeout,
            connect_timeout=connect_timeout,
            context_window=context_window,
            max_tokens=max_tokens,
            temperature=temperature,
        )
        self._client: OpenAIChatModel | None = None

    @classmethod
    def from_config(cls, llm: LLMConfig, path: Path) -> GGUFChatModel:
        return cls(
            path,
            context_window=llm.context_window,
            threads=llm.threads,
            batch_threads=llm.batch_threads,
            batch=llm.batch,
            poll=llm.poll,
            timeout=llm.timeout,
            connect_timeout=llm.connect_timeout,
            max_tokens=llm.max_tokens,
            temperature=llm.temperature,
        )

    def client(self) -> OpenAIChatModel:
        base = self.server.start()
        if self._client is None or self._client.base_url != base:
            self._client = OpenAIChatModel(base, self.path.stem, name=self.name, **self._client_args)
        return self._client

    def stream(
        self,
        messages: list[Message],
        json_schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        cancel: TaskState | None = None,
        timeout: float | None = None,
    ) -> Iterator[str]:
        return self.client().stream(
            messages,
            json_schema=json_schema,
            max_tokens=max_tokens,
            temperature=temperature,
            cancel=cancel,
            timeout=timeout,
        )

    def chat(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        max_tokens: int | None = None,
        temperature: float | None = None,
        cancel: TaskState | None = None,
        timeout: float | None = None,
    ) -> ChatTurn:
        return self.client().chat(
            messages, tools, max_tokens=max_tokens, temperature=temperature, cancel=cancel, timeout=timeout
        )

    def count_tokens(self, text: str) -> int | None:
        return self.client().count_tokens(text) if self.server.running else None

    def start(self) -> None:
        """Start the server now (a model switched to in the window loads before it is asked)."""
        self.client()

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        self.server.stop()
