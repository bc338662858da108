"""Scopes: which documents a conversation sees. Documents under `@name/` at the top of the
knowledge folder belong to scope `name`; everything else is "shared", visible to every scope."""

from __future__ import annotations

from typing import Any

SHARED = "shared"


def scope_of(rel: str) -> str:
    """The scope of a document from its path relative to the knowledge folder."""
    first = rel.split("/", 1)[0]
    return first[1:] if first.startswith("@") and len(first) > 1 and "/" in rel else SHARED


def visible_scopes(scope: str | None) -> set[str]:
    """Shared documents are visible everywhere; a scope's own documents only in that scope."""
    return {SHARED} if not scope or scope == SHARED else {SHARED, scope}


def chroma_where(scope: str | None) -> dict[str, Any]:
    """The Chroma metadata filter for what ``scope`` sees."""
    scopes = sorted(visible_scopes(scope))
    return {"scope": scopes[0]} if len(scopes) == 1 else {"scope": {"$in": scopes}}
