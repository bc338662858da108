"""Embeddings from an OpenAI-compatible ``/v1/embeddings`` server (Ollama, vLLM, text-embeddings-inference).

The vectors are computed elsewhere, so this is all about the wire. The `openai` package sends the
requests and retries transient failures (5xx, 408, 429, dropped connections, timeouts) with
exponential backoff; this module batches, and turns what is left into errors a user can read.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import numpy as np

from desktop_app.core.models.embeddings.base import multilingual_family, normalize
from desktop_app.core.models.openai_api import LazyClient


class EmbeddingError(RuntimeError):
    """The embeddings server could not give vectors; the message is shown to the user as is."""


def embeddings_url(base_url: str) -> str:
    """The full endpoint from what a user types: ``host:port``, ``.../v1`` or ``.../v1/embeddings``."""
    url = base_url.strip().rstrip("/")
    if not url:
        raise EmbeddingError("no embeddings server URL configured (embedding.url)")
    if "://" not in url:
        url = "http://" + url
    if url.endswith("/embeddings"):
        return url
    if url.endswith("/v1"):
        return url + "/embeddings"
    return url + "/v1/embeddings"


def openai_embedder_name(model: str, url: str) -> str:
    """The ``name`` an OpenAICompatEmbedder for (model, url) will have, without building one."""
    return f"openai:{model}@{urlsplit(embeddings_url(url)).netloc}"


class OpenAICompatEmbedder:
    """An Embedder over HTTP. ``dim`` is learnt from the first response (probing once if asked early).

    ``retries`` transient failures are retried per batch, after 0.5 s, 1 s, 2 s ... (the `openai`
    client's backoff, up to 25% less for jitter, or what a 429's Retry-After asks)."""

    def __init__(
        self,
        model: str,
        url: str,
        api_key: str = "",
        *,
        batch_size: int = 32,
        timeout: float = 60.0,
        connect_timeout: float = 5.0,
        retries: int = 3,
        max_chars: int = 2000,
        query_prefix: str = "",
        document_prefix: str = "",
    ) -> None:
        if not model:
            raise EmbeddingError("no embedding model name given (embedding.model = 'openai:<model>')")
        self.model = model
        # Known from the served model's name (bge-m3, Qwen3-Embedding ...); None: retrieval guesses.
        self.multilingual: bool | None = multilingual_family(model)
        self.url = embeddings_url(url)
        self.batch_size = max(1, int(batch_size))
        self.retries = max(0, int(retries))
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        self._max_chars = max_chars
        self._dim: int | None = None
        self._host = urlsplit(self.url).netloc
        self._api = LazyClient(
            self.url[: -len("/embeddings")],
            api_key,
            max_retries=self.retries,
            timeout=float(timeout),
            connect_timeout=float(connect_timeout),
        )

    # -- Embedder protocol -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return openai_embedder_name(self.model, self.url)

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._embed(["dimension probe"])  # the index needs the width before the first batch
        assert self._dim is not None
        return self._dim

    @property
    def max_chars(self) -> int:
        return self._max_chars

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._embed([self.document_prefix + t for t in texts])

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._embed([self.query_prefix + t for t in texts])

    def close(self) -> None:
        self._api.close()

    # -- internals ---------------------------------------------------------------------------------
    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        out: list[np.ndarray] = []
        for start in range(0, len(texts), self.batch_size):
            # Servers reject over-long input (TEI: 413/validation error) rather than truncating.
            batch = [(t[: self._max_chars] or " ") for t in texts[start : start + self.batch_size]]
            out.append(self._post_batch(batch))
        return normalize(np.concatenate(out, axis=0))

    def _post_batch(self, batch: list[str]) -> np.ndarray:
        import openai

        client = self._api.get()
        failed = f"embeddings server {self._host} failed after {self.retries + 1} attempts"
        try:
            raw = client.embeddings.with_raw_response.create(
                model=self.model, input=batch, encoding_format="float", extra_headers=self._api.headers
            )
        except openai.APITimeoutError as exc:
            raise EmbeddingError(f"{failed}: timed out") from exc
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise EmbeddingError(f"{failed}: cannot connect ({type(cause).__name__}: {cause})") from exc
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise EmbeddingError(
                f"embeddings server {self._host} refused the request (HTTP {exc.status_code}): "
                "check embedding.api_key"
            ) from None
        except openai.NotFoundError as exc:
            raise EmbeddingError(
                f"embeddings server {self._host} has no {urlsplit(self.url).path} or no model "
                f"'{self.model}' (HTTP 404: {_snippet(exc.response)})"
            ) from None
        except openai.APIStatusError as exc:
            status = exc.status_code
            if status in (408, 409, 429) or status >= 500:  # the ones the client retries
                raise EmbeddingError(f"{failed}: HTTP {status}: {_snippet(exc.response)}") from None
            raise EmbeddingError(
                f"embeddings server {self._host} rejected the request (HTTP {status}: {_snippet(exc.response)})"
            ) from None
        return self._parse(raw.http_response, len(batch))

    def _parse(self, resp: Any, expected: int) -> np.ndarray:
        try:
            data = resp.json()["data"]
            rows = sorted(data, key=lambda d: d.get("index", 0))  # the spec allows any order
            vectors = np.asarray([r["embedding"] for r in rows], dtype=np.float32)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise EmbeddingError(
                f"embeddings server {self._host} sent an answer that is not an embeddings list: "
                f"{_snippet(resp)}"
            ) from exc
        if vectors.ndim != 2 or vectors.shape[0] != expected:
            raise EmbeddingError(
                f"embeddings server {self._host} returned {vectors.shape[0] if vectors.ndim else 0} "
                f"vectors for {expected} inputs"
            )
        if self._dim is None:
            self._dim = int(vectors.shape[1])
        elif vectors.shape[1] != self._dim:
            raise EmbeddingError(
                f"embeddings server {self._host} changed dimension from {self._dim} to {vectors.shape[1]}: "
                "was the model swapped? Re-index with `kdesk reindex`."
            )
        return vectors


def _snippet(resp: Any, limit: int = 200) -> str:
    text = resp.text.strip().replace("\n", " ")
    return text[:limit] + ("..." if len(text) > limit else "")


OpenAIEmbedder = OpenAICompatEmbedder  # the name make_embedder() imports
