"""User-visible texts of the core as codes with parameters.

The core states *what* happened as a ``Message`` (a code from ``CATALOGUE`` and its parameters).
The CLI prints ``str(message)``, the English rendering; the window renders the same message through
the gettext catalogue of its language (``translations``), whose msgid is the English template. The
templates are gettext messages: ``pybabel extract`` (babel.cfg) finds ``define(code, template)`` and
``define_plural(code, singular, plural)`` as keywords, so the core needs no other marker; ``N_`` marks
a text the window translates at run time (a table's column names). Texts that older versions
stored as English (a failed file's reason in the manifest, a saved conversation's warnings and
cards) are turned back into their message once, by the stores' migrations (``from_english``);
nothing else parses text.
"""

from __future__ import annotations

import dataclasses
import functools
import gettext
import json
import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

CATALOGUE: dict[str, str] = {}  # code -> English template ("{name}" fields, str.format syntax)
# code -> (plural template, the parameter that counts): rendered through ngettext
PLURALS: dict[str, tuple[str, str]] = {}
LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"  # <lang>/LC_MESSAGES/messages.mo
DOMAIN = "messages"
_PATTERNS: dict[str, list[tuple[str, re.Pattern[str]]]] = {}


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


def define_plural(code: str, singular: str, plural: str, count: str = "count") -> str:
    """Register a message whose form follows a number (the parameter ``count``), by the plural
    rules of the language it is rendered in (English two forms, Chinese one)."""
    define(code, singular)
    if PLURALS.get(code, (plural, count)) != (plural, count):
        raise ValueError(f"message code {code!r} is defined twice with different texts")
    PLURALS[code] = (plural, count)
    return code


def N_(text: str) -> str:  # noqa: N802 - the gettext convention the extractor looks for
    """Mark a text for extraction without translating it here (it is translated when shown)."""
    return text


class Translator(Protocol):
    """What rendering needs of a language: ``gettext.NullTranslations`` (English) or a catalogue."""

    def gettext(self, message: str) -> str: ...

    def ngettext(self, msgid1: str, msgid2: str, n: int) -> str: ...


ENGLISH: Translator = gettext.NullTranslations()


@functools.cache
def translations(language: str) -> Translator:
    """The gettext catalogue of ``language`` ("zh_CN"); English (the msgids) for "en" or one the app
    does not have."""
    if language == "en":
        return ENGLISH
    return gettext.translation(DOMAIN, LOCALE_DIR, [language], fallback=True)


class _Callable:
    """A plain ``text -> text`` function as a Translator (a plural picks its form the English way)."""

    def __init__(self, translate: Callable[[str], str]) -> None:
        self._translate = translate

    def gettext(self, message: str) -> str:
        return self._translate(message)

    def ngettext(self, msgid1: str, msgid2: str, n: int) -> str:
        return self._translate(msgid1 if n == 1 else msgid2)


def _translator(lang: Translator | Callable[[str], str] | None) -> Translator:
    if lang is None:
        return ENGLISH
    return lang if hasattr(lang, "ngettext") else _Callable(lang)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Message:
    code: str
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def template(self) -> str:
        return CATALOGUE[self.code]

    def render(self, lang: Translator | Callable[[str], str] | None = None) -> str:
        """The text in the language of ``lang`` (a catalogue, or a ``text -> text`` function;
        English by default). A parameter that is a Message itself is rendered the same way, so a
        reason nested in a reason is translated; a plural message takes the form its count needs."""
        lang = _translator(lang)
        params = {k: v.render(lang) if isinstance(v, Message) else v for k, v in self.params.items()}
        plural = PLURALS.get(self.code)
        if plural is None:
            template = lang.gettext(self.template)
        else:
            template = lang.ngettext(self.template, plural[0], _count(params.get(plural[1])))
        try:
            return template.format(**params)
        except (KeyError, IndexError, ValueError):
            # A parameter parsed back from text is a string: "{score:.0%}" cannot format it.
            return _plain_fields(template).format(**{k: str(v) for k, v in params.items()})

    def __str__(self) -> str:
        return self.render()

    def __hash__(self) -> int:  # params is a dict: hash its JSON form
        return hash(json.dumps(self.to_dict(), sort_keys=True, default=str))

    def __format__(self, spec: str) -> str:  # f"{reason:<40}" in a CLI table: its English
        return format(self.render(), spec)

    def to_dict(self) -> dict[str, Any]:
        """``{code, params}``, a nested message as its own dict (what the stores and JSON keep)."""
        return {"code": self.code, "params": {k: _param_json(v) for k, v in self.params.items()}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Message:
        params = {
            k: cls.from_dict(v) if isinstance(v, dict) and "code" in v else v
            for k, v in data.get("params", {}).items()
        }
        return cls(str(data["code"]), params)


# A text the user reads: a catalogue message (rendered in the reader's language), or a text that is
# no message (user content, a file name, a third-party library's error), shown as it is.
Text = str | Message  # noqa: UP007 - a runtime alias


def _param_json(value: Any) -> Any:
    if isinstance(value, Message):
        return value.to_dict()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)  # an exception, a path: its English text


def english(value: Any) -> Any:
    """``value`` for JSON and the CLI: every message in it (in a dataclass, list or dict) as its
    English text."""
    if isinstance(value, Message):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: english(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [english(v) for v in value]
    if isinstance(value, dict):
        return {k: english(v) for k, v in value.items()}
    return value


def render(text: Text | None, lang: Translator | Callable[[str], str] | None = None) -> str:
    """A text in the language of ``lang`` (English by default); one that is no message as it is."""
    if text is None:
        return ""
    return text.render(lang) if isinstance(text, Message) else str(text)


def dump(text: Text | None) -> str | None:
    """The stored form of a text (a manifest's error column, a saved warning): JSON, a message as
    ``{"code", "params"}`` and any other text as ``{"text"}``."""
    if text is None:
        return None
    # a message keeps its English too: what an older version, or sqlite3 at a prompt, shows
    data = {**text.to_dict(), "text": str(text)} if isinstance(text, Message) else {"text": str(text)}
    return json.dumps(data, ensure_ascii=False)


def load(stored: str | None) -> Text | None:
    """A text from its stored form (``dump``); an unknown code (a newer version's) reads as the
    English it was stored with."""
    if stored is None:
        return None
    data = json.loads(stored)
    return from_json(data)


def from_json(data: Any) -> Text:
    """A text from its JSON value: ``{"code", "params"}``, ``{"text"}`` or a plain string."""
    if isinstance(data, dict) and "code" in data:
        msg = Message.from_dict(data)
        if msg.code in catalogue():
            return msg
        return str(data.get("text") or msg.code)
    if isinstance(data, dict):
        return str(data.get("text", ""))
    return str(data)


def to_json(text: Text) -> Any:
    """The JSON value of a text: a message's ``{code, params}``, any other text as it is."""
    return text.to_dict() if isinstance(text, Message) else text


# Several sentences the reader reads one per line (an identification's reasoning): each a message
# or a text, rendered line by line in the reader's language.
Lines = list[Text]


def render_lines(lines: Sequence[Text], lang: Translator | Callable[[str], str] | None = None) -> str:
    """``lines`` in the language of ``lang`` (English by default), one per line, blank ones dropped."""
    return "\n".join(t for t in (render(line, lang).strip() for line in lines) if t)


def lines_from_json(data: Any) -> Lines:
    """Lines from their JSON value (a list of ``to_json`` values); a single text is one line."""
    if data is None or data == "":
        return []
    return [from_json(v) for v in data] if isinstance(data, list) else [from_json(data)]


def message_of(exc: BaseException) -> Text:
    """What an exception says, as a message where it carries one (``UserError``, or an error raised
    with a Message as its argument), else its text (or its type when it has none)."""
    found = getattr(exc, "message", None)
    if isinstance(found, Message):
        return found
    if exc.args and isinstance(exc.args[0], Message):
        return exc.args[0]
    return str(exc).strip() or type(exc).__name__


def from_english(text: str) -> Text:
    """The message a stored English text was rendered from, with its nested messages, or the text
    itself. Only the migrations of stored English call it (``parse``)."""
    found = parse(text)
    return text if found is None else _nested(found, None)


def _count(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 2  # a count parsed back as text that is no number: the "many" form


def message(code: str, **params: Any) -> Message:
    """The message ``code`` with its parameters; an exception given as one stands for what it says
    (its message, translated with this one, where it carries one)."""
    if code not in CATALOGUE:
        raise KeyError(f"unknown message code {code!r}")
    return Message(code, {k: message_of(v) if isinstance(v, BaseException) else v for k, v in params.items()})


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


def _patterns(code: str) -> list[tuple[str, re.Pattern[str]]]:
    """Each form of the message (one, or a plural's two) with the regex that matches its English."""
    patterns = _PATTERNS.get(code)
    if patterns is None:
        forms = [CATALOGUE[code]] + ([PLURALS[code][0]] if code in PLURALS else [])
        patterns = _PATTERNS[code] = [(form, re.compile(_regex(form), re.DOTALL)) for form in forms]
    return patterns


def _regex(template: str) -> str:
    parts, seen = [], set()
    for literal, name, _spec, _conv in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if name is not None:
            parts.append(f"(?P=p_{name})" if name in seen else f"(?P<p_{name}>.+?)")
            seen.add(name)
    return "".join(parts)


def parse(text: str) -> Message | None:
    """The message whose English rendering is ``text``, or None. The most specific template
    (the most literal text) wins when several match."""
    best: tuple[int, Message] | None = None
    for code in catalogue():
        for template, pattern in _patterns(code):
            m = pattern.fullmatch(text)
            if m is None:
                continue
            # The literal characters: each field "{name}" is as long as its group "p_name".
            literal = len(_plain_fields(template)) - sum(len(n) for n in m.groupdict())
            if best is None or literal > best[0]:
                best = (literal, Message(code, {k[2:]: v for k, v in m.groupdict().items()}))
    return best[1] if best else None


def render_parsed(
    found: Message,
    translate: Translator | Callable[[str], str],
    term: Callable[[str], str] | None = None,
) -> str:
    """A message in the language of ``translate``, each parameter that is a text (not a message
    nor a number) through ``term`` when given (the identify card shows a species by the name its
    notes give in that language)."""
    return _nested(found, term, reparse=False).render(translate)


def _nested(msg: Message, term: Callable[[str], str] | None, reparse: bool = True) -> Message:
    params: dict[str, Any] = {}
    for key, value in msg.params.items():
        inner = value if isinstance(value, Message) else parse(value) if reparse and isinstance(value, str) else None
        if inner is not None:
            params[key] = _nested(inner, term, reparse)
        else:
            # a name or a list of names goes through ``term``; a number keeps its format ("{score:.0%}")
            params[key] = term(value) if term is not None and isinstance(value, str) else value
    return Message(msg.code, params)
