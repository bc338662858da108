"""What the roles served by another machine share: is the server there, and what an answer says.

The embedding role (``embedding.model = "openai:<model>"`` at ``embedding.url``) and the rerank role
(``retrieval.reranker = "http://host:port"``) can each be a server: llama.cpp's ``llama-server``,
Text Embeddings Inference, Infinity, vLLM, Ollama. ``kdesk models`` and Settings > Models ask
``probe`` whether it answers, with a short timeout, so a machine that is off is said at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from desktop_app.core.messages import Text, message
from desktop_app.core.models import reasons

PROBE_TIMEOUT = 2.0  # seconds: `kdesk models` says "cannot reach" quickly rather than waiting


def is_server_url(setting: str) -> bool:
    """A setting that names a server rather than a model folder: it starts with http:// or https://."""
    return setting.strip().lower().startswith(("http://", "https://"))


def host_of(url: str) -> str:
    """``host:port`` of a URL, as messages name a server."""
    return urlsplit(url).netloc or url


def root_of(url: str) -> str:
    """The server's root from any of its endpoints: ``http://h:1/v1/rerank`` -> ``http://h:1``."""
    parts = urlsplit(url if "://" in url else "http://" + url)
    return f"{parts.scheme}://{parts.netloc}"


def snippet(text: str, limit: int = 200) -> str:
    """An answer's body on one line, cut at ``limit`` characters: enough to say what went wrong."""
    text = " ".join(str(text).split())
    return text[:limit] + ("..." if len(text) > limit else "")


def error_text(body: Any) -> str:
    """The server's own words from an error body: OpenAI/llama.cpp ``{"error": {"message"}}``,
    TEI ``{"error": "..."}``, FastAPI ``{"detail": ...}``; else the body itself."""
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and err.get("message"):
            return snippet(err["message"])
        if isinstance(err, str) and err:
            return snippet(err)
        if body.get("detail"):
            return snippet(str(body["detail"]))
    return snippet(str(body))


@dataclass
class Reach:
    """Whether a server answered ``probe``, and the words to show for it."""

    reachable: bool
    reason: Text


def probe(
    url: str, setting: str, api_key: str = "", key_name: str = "", timeout: float = PROBE_TIMEOUT
) -> Reach:
    """GET the server's ``/health`` (llama.cpp, TEI, Infinity and vLLM all have one; Ollama answers
    its root): any HTTP answer means the machine and the server are up; 401/403 means the key is wrong."""
    import httpx

    root = root_of(url)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        with httpx.Client(timeout=timeout, trust_env=False, headers=headers) as client:
            resp = client.get(root + "/health")
            if resp.status_code == 404:
                resp = client.get(root + "/")
    except (httpx.HTTPError, httpx.InvalidURL, ValueError) as exc:
        error = type(exc).__name__ + (f": {snippet(str(exc), 120)}" if str(exc) else "")
        return Reach(False, message(reasons.REMOTE_UNREACHABLE, setting=setting, url=root, error=error))
    if resp.status_code in (401, 403):
        why = message(
            reasons.REMOTE_REFUSED_KEY,
            setting=setting,
            url=root,
            status=resp.status_code,
            key=key_name or "api_key",
        )
        return Reach(True, why)
    return Reach(True, message(reasons.REMOTE_REACHABLE, setting=setting, url=root))
