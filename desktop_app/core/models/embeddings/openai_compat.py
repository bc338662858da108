"""Embeddings from an OpenAI-compatible ``/v1/embeddings`` server (llama.cpp's ``llama-server
--embeddings``, Ollama, vLLM, text-embeddings-inference, Infinity), on this machine or another.

The vectors are computed elsewhere, so this is all about the wire. The `openai` package sends the
requests and retries transient failures (5xx, 408, 429, dropped connections, timeouts) with
exponential backoff; this module batches, adds the query/document prompts the model's family
prescribes (the server knows nothing of them: Qwen3-Embedding needs its instruction on queries),
and turns what is left into errors a user can read (catalogue messages, models/reasons.py).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import numpy as np

from desktop_app.core.messages import UserError
from desktop_app.core.models import reasons
from desktop_app.core.models.embeddings.base import multilingual_family, normalize
from desktop_app.core.models.embeddings.st import _family_prompts  # one table of prompts, local or served
from desktop_app.core.models.openai_api import LazyClient
from desktop_app.core.models.remote import error_text


class EmbeddingError(UserError, RuntimeError):
    """The embeddings server could not give vectors; its message is what the user reads."""


def embeddings_url(base_url: str) -> str:
    """The full endpoint from what a user types: ``host:port``, ``.../v1`` or ``.../v1/embeddings``."""
    url = base_url.strip().rstrip("/")
    if not url:
        raise EmbeddingError(reasons.EMBED_NO_URL)
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
        query_prefix: str | None = None,
        document_prefix: str | None = None,
    ) -> None:
        if not model:
            raise EmbeddingError(reasons.EMBED_NO_MODEL)
        self.model = model
        # Known from the served model's name (bge-m3, Qwen3-Embedding ...); None: retrieval guesses.
        self.multilingual: bool | None = multilingual_family(model)
        self.url = embeddings_url(url)
        self.batch_size = max(1, int(batch_size))
        self.retries = max(0, int(retries))
        # None: what the model card of the served model's family prescribes (as for a local folder).
        family_query, family_document = _family_prompts(model)
        self.query_prefix = family_query if query_prefix is None else query_prefix
        self.document_prefix = family_document if document_prefix is None else document_prefix
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
        if self._dim is None and self._serves_rerank():
            raise EmbeddingError(reasons.EMBED_IS_RERANKER, host=self._host)
        out: list[np.ndarray] = []
        for start in range(0, len(texts), self.batch_size):
            # Servers reject over-long input (TEI: 413/validation error) rather than truncating.
            batch = [(t[: self._max_chars] or " ") for t in texts[start : start + self.batch_size]]
            out.append(self._post_batch(batch))
        return normalize(np.concatenate(out, axis=0))

    def _serves_rerank(self) -> bool:
        """Whether the server answers a rerank request, asked once before the first vectors are taken.

        llama-server --reranking answers /v1/embeddings too, with whatever its output buffer held:
        zeros, non-numbers, or numbers that pass for a vector (one CI run in many), which would be
        indexed. Any other server refuses /rerank (404; llama-server --embeddings: 501) or knows
        the model as no reranker; every failure here leaves the embeddings request to speak."""
        import httpx
        import openai

        body = {"model": self.model, "query": "role check", "documents": ["role check"]}
        try:
            resp = self._api.get().post(
                "/rerank",
                body=body,
                cast_to=httpx.Response,
                options={"headers": self._api.headers, "max_retries": 0},
            )
            results = resp.json().get("results")
        except (openai.OpenAIError, httpx.HTTPError, ValueError, AttributeError):
            return False
        return isinstance(results, list) and bool(results)

    def _post_batch(self, batch: list[str]) -> np.ndarray:
        import openai

        client = self._api.get()
        host, attempts = self._host, self.retries + 1
        try:
            raw = client.embeddings.with_raw_response.create(
                model=self.model, input=batch, encoding_format="float", extra_headers=self._api.headers
            )
        except openai.APITimeoutError as exc:
            raise EmbeddingError(reasons.EMBED_TIMED_OUT, host=host, attempts=attempts) from exc
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            error = f"{type(cause).__name__}: {cause}"
            raise EmbeddingError(
                reasons.EMBED_CANNOT_CONNECT, host=host, attempts=attempts, error=error
            ) from exc
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise EmbeddingError(reasons.EMBED_REFUSED, host=host, status=exc.status_code) from None
        except openai.NotFoundError as exc:
            path = urlsplit(self.url).path
            text = _snippet(exc.response)
            raise EmbeddingError(
                reasons.EMBED_NOT_FOUND, host=host, path=path, model=self.model, text=text
            ) from None
        except openai.APIStatusError as exc:
            status, text = exc.status_code, _snippet(exc.response)
            if status == 501:  # llama-server started without --embeddings
                raise EmbeddingError(reasons.EMBED_NOT_EMBEDDER, host=host, text=text) from None
            if status in (408, 409, 429) or status >= 500:  # the ones the client retries
                raise EmbeddingError(
                    reasons.EMBED_RETRIES_FAILED, host=host, attempts=attempts, status=status, text=text
                ) from None
            raise EmbeddingError(reasons.EMBED_REJECTED, host=host, status=status, text=text) from None
        return self._parse(raw.http_response, len(batch))

    def _parse(self, resp: Any, expected: int) -> np.ndarray:
        try:
            data = resp.json()["data"]
            rows = sorted(data, key=lambda d: d.get("index", 0))  # the spec allows any order
            vectors = np.asarray([r["embedding"] for r in rows], dtype=np.float32)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise EmbeddingError(reasons.EMBED_BAD_ANSWER, host=self._host, text=_snippet(resp)) from exc
        if vectors.ndim != 2 or vectors.shape[0] != expected:
            got = vectors.shape[0] if vectors.ndim else 0
            raise EmbeddingError(reasons.EMBED_COUNT, host=self._host, got=got, expected=expected)
        norms = np.linalg.norm(vectors, axis=1)
        if not np.all(np.isfinite(norms)) or not np.all(norms > 0):  # a reranking llama-server's answer
            raise EmbeddingError(reasons.EMBED_ZERO_VECTORS, host=self._host)
        if self._dim is None:
            self._dim = int(vectors.shape[1])
        elif vectors.shape[1] != self._dim:
            raise EmbeddingError(
                reasons.EMBED_DIM_CHANGED, host=self._host, old=self._dim, new=int(vectors.shape[1])
            )
        return vectors


def _snippet(resp: Any, limit: int = 200) -> str:
    """The server's own words: the message of an OpenAI/llama.cpp error body, else the body."""
    try:
        return error_text(resp.json())[:limit]
    except ValueError:
        return error_text(resp.text)[:limit]


OpenAIEmbedder = OpenAICompatEmbedder  # the name make_embedder() imports
