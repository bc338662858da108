"""The `openai` package's client as both OpenAI-compatible backends (chat, embeddings) hold it.

Importing `openai` and setting up its client take ~1 s of CPU on first use, so no module imports it
at load time (``kdesk --help``, the window's start): a backend's client is built on a daemon thread
as soon as the backend is, and by its first request (after the knowledge base has loaded) it is
usually ready.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import openai


class LazyClient:
    """One backend's `openai.OpenAI`, built in the background or by the first ``get()``."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        max_retries: int,
        timeout: float | None = None,
        connect_timeout: float | None = None,
    ) -> None:
        self._args = (base_url, api_key, max_retries, timeout, connect_timeout)
        self._client: openai.OpenAI | None = None
        self._closed = False
        self._lock = threading.Lock()
        # Sent with every request: leaves Authorization out when there is no key (openai insists on one).
        self.headers: dict[str, Any] = {}
        threading.Thread(target=self._warm, daemon=True, name="openai-client").start()

    def get(self) -> openai.OpenAI:
        """The client (built now if the background has not finished it)."""
        with self._lock:
            if self._client is None:
                self._client = self._build()
                self._closed = False
            return self._client

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._client is not None:
                self._client.close()
                self._client = None

    def _warm(self) -> None:
        try:
            with self._lock:
                if self._client is None and not self._closed:
                    self._client = self._build()
        except Exception:  # the first request builds it again and reports what is wrong
            pass

    def _build(self) -> openai.OpenAI:
        import openai

        base_url, api_key, max_retries, timeout, connect_timeout = self._args
        client = openai.OpenAI(
            base_url=base_url,
            api_key=api_key or "no-key",
            max_retries=max_retries,
            timeout=openai.Timeout(timeout, connect=connect_timeout) if timeout else openai.NOT_GIVEN,
            http_client=openai.DefaultHttpxClient(trust_env=False),  # a local server, never via a proxy
        )
        # Only what the user set here reaches the server: openai also reads OPENAI_ORG_ID,
        # OPENAI_PROJECT_ID and OPENAI_CUSTOM_HEADERS from the environment, meant for OpenAI's own
        # API, and would send them (a key among them) to whatever server this names.
        ambient = ["OpenAI-Organization", "OpenAI-Project", *_custom_header_names()]
        self.headers = dict.fromkeys(ambient, openai.omit)
        # The key given here, or none: never an Authorization line from the environment.
        self.headers["Authorization"] = f"Bearer {api_key}" if api_key else openai.omit
        return client


def _custom_header_names() -> list[str]:
    """The header names OPENAI_CUSTOM_HEADERS ("Name: value" lines) would add to every request."""
    lines = os.environ.get("OPENAI_CUSTOM_HEADERS", "").split("\n")
    return [line.split(":", 1)[0].strip() for line in lines if ":" in line]
