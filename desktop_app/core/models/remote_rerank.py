"""The rerank role served by another machine: ``retrieval.reranker = "http://host:port"``.

Three servers, two shapes of the same request:

- llama.cpp's ``llama-server --reranking`` (``/v1/rerank``, ``/rerank``), Infinity (``/rerank``,
  ``/v1/rerank`` behind ``--url-prefix /v1``), vLLM, Jina and Cohere take ``{model, query,
  documents, top_n}`` and answer ``{results: [{index, relevance_score}]}``, sorted by score and cut
  at ``top_n``;
- Text Embeddings Inference takes ``{query, texts}`` on ``/rerank`` and answers ``[{index, score}]``.

A bare ``http://host:port`` tries ``/v1/rerank`` then ``/rerank``, the documents shape then TEI's,
and keeps what worked. Scores are matched back by ``index``. A failure is a ``RerankError`` whose
message the user reads; retrieval then keeps the fused order (``failure``, as for a local
cross-encoder) and asks the server again after ``retry_after`` seconds, so a server that comes back
is used again without a restart.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from desktop_app.core.config import Config
from desktop_app.core.messages import Text, UserError, message
from desktop_app.core.models import reasons
from desktop_app.core.models.remote import error_text, host_of, is_server_url, probe, snippet

API_KEY = "retrieval.reranker_api_key"  # its name in secrets.py (keyring, else config.toml)


class RerankError(UserError, RuntimeError):
    """The rerank server could not score the pairs; its message is what the user reads."""


def rerank_endpoints(setting: str) -> list[str]:
    """The URLs to try for what a user typed: a full ``.../rerank`` as is; ``.../v1`` + ``/rerank``;
    a bare ``http://host:port`` both ``/v1/rerank`` (llama.cpp) and ``/rerank`` (TEI, Infinity)."""
    url = setting.strip().rstrip("/")
    parts = urlsplit(url)
    if not is_server_url(url) or not parts.hostname:
        raise RerankError(reasons.RERANKER_BAD_URL, url=setting.strip())
    if parts.path.endswith(("/rerank", "/reranking")):
        return [url]
    if parts.path.endswith("/v1"):
        return [url + "/rerank"]
    return [url + "/v1/rerank", url + "/rerank"]


class RemoteReranker:
    """A ``Reranker`` (models/rerank.py) over HTTP. ``model`` is sent when set (a server that
    serves several rerankers picks by it; llama.cpp ignores it)."""

    def __init__(
        self,
        url: str,
        model: str = "",
        api_key: str = "",
        *,
        batch_size: int = 32,
        timeout: float = 30.0,
        connect_timeout: float = 2.0,
        max_chars: int = 2000,
        retry_after: float = 60.0,
    ) -> None:
        self.endpoints = rerank_endpoints(url)
        self.url = self.endpoints[0]
        self.model = model.strip()
        self.host = host_of(self.url)
        self.name = f"{self.model or 'reranker'}@{self.host}"
        self.path = None  # no folder: failures are recorded under the name
        self.batch_size = max(1, int(batch_size))  # TEI's default max_client_batch_size is 32
        self.timeout = float(timeout)
        self.max_chars = max_chars  # servers reject over-long pairs rather than truncating
        self.retry_after = retry_after
        self._api_key = api_key
        self._client: Any = None
        self._lock = threading.Lock()
        self._shape: tuple[str, str] | None = None  # (endpoint, "documents" | "texts") that worked
        self._failure: Text | None = None
        self._failed_at = 0.0
        self.connect_timeout = float(connect_timeout)

    @classmethod
    def from_config(cls, config: Config, url: str | None = None) -> RemoteReranker:
        """The reranker at ``url`` (default ``retrieval.reranker``), with ``retrieval.reranker_model``
        and the key from the keyring or config.toml."""
        from desktop_app.core.secrets import get_api_key

        r = config.retrieval
        return cls(url or r.reranker, r.reranker_model, get_api_key(config, API_KEY))

    # -- what retrieval reads and sets --------------------------------------------------------
    @property
    def failure(self) -> Text | None:
        """Why the last call failed, until ``retry_after`` seconds have passed (None: try it)."""
        if self._failure is not None and time.monotonic() - self._failed_at > self.retry_after:
            self._failure = None
        return self._failure

    @failure.setter
    def failure(self, why: Text | None) -> None:
        self._failure, self._failed_at = why, time.monotonic()

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """One relevance score per text (higher is better), in the order given."""
        if not texts:
            return np.zeros(0, dtype=np.float32)
        out = []
        for start in range(0, len(texts), self.batch_size):
            batch = [(t[: self.max_chars] or " ") for t in texts[start : start + self.batch_size]]
            out.append(self._score_batch(query, batch))
        return np.concatenate(out).astype(np.float32)

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    # -- the wire --------------------------------------------------------------------------------
    def _http(self):
        import httpx

        with self._lock:
            if self._client is None:
                headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
                self._client = httpx.Client(
                    timeout=httpx.Timeout(self.timeout, connect=self.connect_timeout),
                    headers=headers,
                    trust_env=False,  # a server the user named, never through a proxy
                    transport=httpx.HTTPTransport(retries=1),  # one more try to connect, no more
                )
            return self._client

    def _score_batch(self, query: str, batch: list[str]) -> np.ndarray:
        shapes = (
            [self._shape] if self._shape else [(e, s) for e in self.endpoints for s in ("documents", "texts")]
        )
        tried: list[str] = []
        last: RerankError | None = None
        for endpoint, shape in shapes:
            resp = self._post(endpoint, _body(shape, self.model, query, batch))
            if resp.status_code in (404, 405):  # no such route here: the next endpoint
                tried.append(urlsplit(endpoint).path)
                last = RerankError(
                    reasons.RERANK_NO_ENDPOINT, host=self.host, paths=", ".join(dict.fromkeys(tried))
                )
                continue
            if resp.status_code in (400, 422) and shape == "documents" and self._shape is None:
                last = self._status_error(resp)  # TEI wants "texts": try that shape next
                continue
            if resp.status_code >= 400:
                raise self._status_error(resp)
            scores = self._parse(resp, len(batch))
            self._shape = (endpoint, shape)
            return scores
        assert last is not None
        raise last

    def _post(self, endpoint: str, body: dict[str, Any]):
        import httpx

        try:
            return self._http().post(endpoint, json=body)
        except httpx.TimeoutException as exc:
            if isinstance(exc, httpx.ConnectTimeout):
                raise RerankError(reasons.RERANK_CANNOT_CONNECT, host=self.host, error="timed out") from exc
            raise RerankError(reasons.RERANK_TIMED_OUT, host=self.host, seconds=self.timeout) from exc
        except httpx.HTTPError as exc:
            error = f"{type(exc).__name__}: {snippet(str(exc), 120)}" if str(exc) else type(exc).__name__
            raise RerankError(reasons.RERANK_CANNOT_CONNECT, host=self.host, error=error) from exc

    def _status_error(self, resp) -> RerankError:
        status, text = resp.status_code, _said(resp)
        if status in (401, 403):
            return RerankError(reasons.RERANK_REFUSED, host=self.host, status=status)
        if status == 501:  # llama-server started without --reranking
            return RerankError(reasons.RERANK_NOT_RERANKER, host=self.host, text=text)
        return RerankError(reasons.RERANK_HTTP, host=self.host, status=status, text=text)

    def _parse(self, resp, expected: int) -> np.ndarray:
        try:
            body = resp.json()
            rows = body["results"] if isinstance(body, dict) else body
            scores = np.full(expected, np.nan, dtype=np.float64)
            for row in rows:
                value = row["relevance_score"] if "relevance_score" in row else row["score"]
                scores[int(row["index"])] = float(value)
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            raise RerankError(reasons.RERANK_BAD_ANSWER, host=self.host, text=snippet(resp.text)) from exc
        if np.isnan(scores).any():  # a server that cut the list at its own top_n
            raise RerankError(reasons.RERANK_BAD_ANSWER, host=self.host, text=snippet(resp.text))
        return scores


def _body(shape: str, model: str, query: str, batch: list[str]) -> dict[str, Any]:
    if shape == "texts":  # TEI: truncate rather than refuse a pair longer than the model reads
        return {"query": query, "texts": batch, "truncate": True}
    body: dict[str, Any] = {
        "query": query,
        "documents": batch,
        "top_n": len(batch),
        "return_documents": False,
    }
    if model:
        body["model"] = model
    return body


def _said(resp) -> str:
    try:
        return error_text(resp.json())
    except ValueError:
        return snippet(resp.text)


def remote_reranker_reason(config: Config) -> tuple[bool, Text]:
    """For ``kdesk models``: (reachable, the words) for the server ``retrieval.reranker`` names."""
    from desktop_app.core.secrets import get_api_key

    setting = config.retrieval.reranker.strip()
    try:
        url = rerank_endpoints(setting)[0]
    except RerankError as exc:
        return False, exc.message
    reach = probe(url, f'retrieval.reranker = "{setting}"', get_api_key(config, API_KEY), API_KEY)
    return reach.reachable, reach.reason


def server_name(setting: str) -> Text:
    """What serves the role, in words: "a reranker on the server http://host:port"."""
    return message(reasons.RERANKER_ON_SERVER, url=setting.strip().rstrip("/"))
