"""User-visible texts of the core as codes with parameters.

The core never imports Qt, so it cannot translate; it states *what* happened as a ``Message``
(a code from ``CATALOGUE`` and its parameters). The CLI prints ``str(message)``, the English
rendering; the GUI renders the same message through its ``tr()``, whose key is the English template,
so a Chinese window says it in Chinese. Texts stored as English (a failed file's reason in the
manifest, a saved conversation's warnings) are turned back into their message by ``parse``.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

CATALOGUE: dict[str, str] = {}  # code -> English template ("{name}" fields, str.format syntax)
_PATTERNS: dict[str, re.Pattern[str]] = {}


def catalogue() -> dict[str, str]:
    """Every message defined so far (code -> English template). The modules that define them are
    imported by the layers above (all of them by core/desk.py: ``MESSAGE_MODULES``), never from here."""
    return CATALOGUE


def define(code: str, template: str) -> str:
    """Register a message; returns the code (``FOO = define("foo", "...")``)."""
    if CATALOGUE.get(code, template) != template:
        raise ValueError(f"message code {code!r} is defined twice with different texts")
    CATALOGUE[code] = template
    _PATTERNS.pop(code, None)
    return code


def _identity(text: str) -> str:
    return text


@dataclass(frozen=True)
class Message:
    code: str
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def template(self) -> str:
        return CATALOGUE[self.code]

    def render(self, translate: Callable[[str], str] = _identity) -> str:
        """The text in the language of ``translate`` (English by default). A parameter that is a
        Message itself is rendered the same way, so a reason nested in a reason is translated."""
        params = {k: v.render(translate) if isinstance(v, Message) else v for k, v in self.params.items()}
        template = translate(self.template)
        try:
            return template.format(**params)
        except (KeyError, IndexError, ValueError):
            # A parameter parsed back from text is a string: "{score:.0%}" cannot format it.
            return _plain_fields(template).format(**{k: str(v) for k, v in params.items()})

    def __str__(self) -> str:
        return self.render()


def message(code: str, **params: Any) -> Message:
    if code not in CATALOGUE:
        raise KeyError(f"unknown message code {code!r}")
    return Message(code, params)


class UserError(Exception):
    """An error whose text is a catalogue message (``str(exc)`` is its English rendering)."""

    def __init__(self, code: str, **params: Any) -> None:
        self.message = message(code, **params)
        super().__init__(str(self.message))


def _plain_fields(template: str) -> str:
    """The template with format specs and conversions dropped: "{score:.0%}" -> "{score}"."""
    out = []
    for literal, name, _spec, _conv in string.Formatter().parse(template):
        out.append(literal.replace("{", "{{").replace("}", "}}"))
        if name is not None:
            out.append("{" + name + "}")
    return "".join(out)


def _pattern(code: str) -> re.Pattern[str]:
    pattern = _PATTERNS.get(code)
    if pattern is None:
        parts, seen = [], set()
        for literal, name, _spec, _conv in string.Formatter().parse(CATALOGUE[code]):
            parts.append(re.escape(literal))
            if name is not None:
                parts.append(f"(?P=p_{name})" if name in seen else f"(?P<p_{name}>.+?)")
                seen.add(name)
        pattern = _PATTERNS[code] = re.compile("".join(parts), re.DOTALL)
    return pattern


def parse(text: str) -> Message | None:
    """The message whose English rendering is ``text``, or None. The most specific template
    (the most literal text) wins when several match."""
    best: tuple[int, Message] | None = None
    for code, template in catalogue().items():
        m = _pattern(code).fullmatch(text)
        if m is None:
            continue
        # The literal characters: each field "{name}" is as long as its group "p_name".
        literal = len(_plain_fields(template)) - sum(len(n) for n in m.groupdict())
        if best is None or literal > best[0]:
            best = (literal, Message(code, {k[2:]: v for k, v in m.groupdict().items()}))
    return best[1] if best else None


def render_text(text: str, translate: Callable[[str], str]) -> str:
    """An English core text in the language of ``translate``: through its message when it has
    one, else unchanged (user content, a third-party error)."""
    found = parse(text)
    return text if found is None else render_parsed(found, translate)


def render_parsed(
    found: Message, translate: Callable[[str], str], term: Callable[[str], str] | None = None
) -> str:
    """A message parsed back from text in the language of ``translate``. A parameter that is itself
    a message (a reason inside a reason) is rendered the same way; any other goes through ``term``
    when given (the identify card shows a species by the name its notes give in that language)."""
    return _nested(found, term).render(translate)


def _nested(msg: Message, term: Callable[[str], str] | None) -> Message:
    params: dict[str, Any] = {}
    for key, value in msg.params.items():
        inner = parse(value) if isinstance(value, str) else None
        if inner is not None:
            params[key] = _nested(inner, term)
        else:
            params[key] = term(str(value)) if term is not None else value
    return Message(msg.code, params)
