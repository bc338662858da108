"""Scopes: which documents a conversation sees. Documents under `@name/` at the top of the
knowledge folder belong to scope `name`; everything else is "shared", visible to every scope."""

from __future__ import annotations

import re
from typing import Any

from desktop_app.core.library import reasons
from desktop_app.core.messages import Message, message

SHARED = "shared"
SCOPE_NAME_LIMIT = 40  # characters: a folder name (`@name/`) every file system takes
# Letters and digits of any script (\w is Unicode in Python: 鹦鹉 is a name), "-" and "_".
_SCOPE_NAME = re.compile(rf"^[\w\-]{{1,{SCOPE_NAME_LIMIT}}}$")


def scope_name_rule() -> Message:
    """What a collection name may hold, in words (the prompt and the error say the same)."""
    return message(reasons.SCOPE_NAME_RULE, limit=SCOPE_NAME_LIMIT)


def check_scope_name(name: str) -> Message | None:
    """Why ``name`` (a leading "@" allowed, spaces around ignored) cannot name a collection; None when it can."""
    name = name.strip().lstrip("@")
    if not name:
        return message(reasons.SCOPE_NAME_EMPTY, rule=scope_name_rule())
    if not _SCOPE_NAME.match(name):
        return message(reasons.SCOPE_NAME_INVALID, name=name, rule=scope_name_rule())
    return None


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
