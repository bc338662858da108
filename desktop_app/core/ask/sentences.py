"""Sentence and clause splitting for extractive answers, English and Chinese.

Rules rather than a library. Compared for issue 22 (tests/unit/ask/test_sentences.py's 50 cases):
these rules 50, blingfire 42, sentencex 42, pysbd 40; none of the three splits Chinese at ；
or keeps a colon's list with its sentence, and each still needs ``unwrap`` for hard-wrapped
PDF lines; on the extractive answers' own figures all four tie, so no dependency is worth it.
A "." ends a sentence only before whitespace and a capital, digit, quote or CJK character, and
not after a known abbreviation, a single initial (J. R. R. Tolkien) or a dotted acronym (U.S.)
unless a sentence-opening word follows. Chinese sentences end at 。！？； (commas stay inside),
never inside parentheses or Chinese quotes.
"""

from __future__ import annotations

import re

from desktop_app.core.library.languages import CJK_RE

_STRUCTURAL = re.compile(r"^\s*([-*+•]\s|\d+[.)]\s|#|\||>)")
# A labelled field on a line of its own ("**Origin:** Burgundy", "Capacity: 1.7 L", "用法用量：..."): a
# record's lines, never a wrapped sentence, so each keeps its break.
_FIELD = re.compile(r"^\s*(?:\*\*|__)?[^\s:：*_][^:：\n]{0,30}?(?:\*\*|__)?\s*[:：]")
_ITEM = re.compile(r"^\s*([-*+•]\s|\d+[.)]\s)")

# Words that end with "." without ending the sentence (lower-cased, dots inside kept).
_ABBREV = set(
    "mr mrs ms dr prof st mt ft gen col lt sgt capt maj gov sen rep rev hon pres jr sr inc ltd co corp "
    "bros vs e.g i.e cf al approx ca c fig figs vol vols pp p ed eds no nos op est dept univ assn ave "
    "blvd rd jan feb mar apr jun jul aug sep sept oct nov dec mon tue wed thu fri sat sun".split()
)
_NEEDS_DIGIT = {"no", "nos", "p", "pp", "fig", "figs", "vol", "vols", "op"}  # "No. 4", not "say no."
# After a dotted acronym ("U.S."), these capitalised words start a new sentence; others do not
# ("U.S. Naval Reserve").
_OPENERS = set(
    "the a an he she it they we i this that these those there his her its their our in on at after "
    "before during when while however but and also then later since from by for as".split()
)
# A candidate end: terminal punctuation, closing quotes/brackets, then (Latin) whitespace or
# (after CJK punctuation) nothing.
_END = re.compile(r"""(?:[。！？；]+|[!?]+|\.(?:\.\.)?|…+)[”’"'」』）)\]]*""")
_OPENING_NEXT = re.compile(r"""\s*(?:[“‘"'「『（(\[]\s*)*([A-Z0-9\u3400-\u4dbf\u4e00-\u9fff])""")
_LEAD_PUNCT = re.compile(r"^[，,、：:；;）)\]」』”’]+\s*")
_FIELD_CHARS = 80  # a field line longer than this may be a wrapped paragraph's first line
_LIST_CHARS = 300  # a sentence with its list longer than this is no longer a sentence to quote
_TOKEN_BEFORE = re.compile(r"([A-Za-z](?:[A-Za-z.]*[A-Za-z])?)$")


def unwrap(text: str) -> str:
    """Join hard-wrapped lines (PDF and OCR text break mid-sentence) so a sentence is not cut at a
    line end; blank lines, list items, headings and table rows keep their breaks."""
    text = re.sub(r"(\w)-\n(?=[a-z])", r"\1", text)  # "cylin-\nder" -> "cylinder"
    out: list[str] = []
    for line in text.split("\n"):
        prev = out[-1] if out else ""
        # A field's line keeps its break; a long one may be a wrapped paragraph ("Abstract: ...").
        field = _FIELD.match(line) or (_FIELD.match(prev) and len(prev) <= _FIELD_CHARS)
        if prev.strip() and line.strip() and not _STRUCTURAL.match(line) and not _STRUCTURAL.match(prev) and not field:
            glue = "" if CJK_RE.search(prev[-1:]) and CJK_RE.search(line.lstrip()[:1]) else " "
            out[-1] = prev.rstrip() + glue + line.lstrip()
        else:
            out.append(line)
    return "\n".join(out)


def _is_end(text: str, start: int, end: int) -> bool:
    """Whether the punctuation text[start:end] ends a sentence."""
    mark = text[start]
    rest = text[end:]
    if mark in "。！？；":
        return True
    if mark == "…" or text.startswith("...", start):  # an ellipsis ends one only before a capital
        nxt = _OPENING_NEXT.match(rest)
        return bool(rest[:1].isspace() and nxt and not nxt.group(1).isdigit())
    if rest and not rest[0].isspace():
        # "3.5", "U.S.", "e.g.," go on; Chinese text after "!" or "." needs no space.
        return mark in "!?" and bool(CJK_RE.match(rest)) or mark == "." and bool(CJK_RE.match(rest))
    if not rest.strip():
        return True
    nxt = _OPENING_NEXT.match(rest)
    if not nxt:  # lower case follows: "5 p.m. on Monday", "Baker St. near", '"Why?" she asked'
        return False
    if mark in "!?":
        return True
    word = _TOKEN_BEFORE.search(text[:start])
    if not word:
        return True
    token = word.group(1)
    low = token.lower()
    following = re.match(r"\s*[“‘\"'「『（(\[]*\s*(\S+)", rest)
    after = following.group(1) if following else ""
    if low in _ABBREV:
        return low in _NEEDS_DIGIT and not after[:1].isdigit()
    initial = len(token) == 1 and token.isupper() and text[: word.start()][-1:] in ("", " ", "(")
    if initial or "." in token:  # "J. R. R. Tolkien", "U.S. Naval" go on; "World War I. He" ends
        return re.sub(r"\W+$", "", after).lower() in _OPENERS
    return True


_PAIRS = (("（(", "）)"), ("「", "」"), ("『", "』"), ("“", "”"))


def _in_brackets(line: str, begin: int, start: int, end: int) -> bool:
    """Whether line[start:end] sits inside parentheses or Chinese quotes opened since ``begin`` and
    closed soon after (a stray "(" must not swallow the rest of the line): a quoted couplet
    「金钱鼠尾，乃新朝之雅政；峨冠博带，实亡国之陋规」 is one sentence."""
    before = line[begin:start]
    for opening, closing in _PAIRS:
        depth = sum(before.count(c) for c in opening) - sum(before.count(c) for c in closing)
        if depth > 0 and any(c in line[end : end + 60] for c in closing):
            return True
    return False


def _split_line(line: str) -> list[str]:
    out: list[str] = []
    item = _ITEM.match(line)
    begin = 0
    for m in _END.finditer(line, item.end() if item else 0):  # "1. First" is not a sentence "1."
        if _in_brackets(line, begin, m.start(), m.end()):  # "项斯（？－？）", "舜天（；）"
            continue
        if _is_end(line, m.start(), m.end()):
            piece = line[begin : m.end()].strip()
            if piece:
                out.append(piece)
            begin = m.end()
    tail = line[begin:].strip()
    if tail:
        out.append(tail)
    return out


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` in order, hard wraps joined; a sentence ending in ":" keeps the
    list items that follow it, and a fragment starting with a comma joins the sentence before."""
    out: list[str] = []
    open_list = False  # the previous sentence ended with ":" and takes the following items
    for line in unwrap(text).split("\n"):
        if not line.strip():
            open_list = False
            continue
        pieces = _split_line(line)
        # A list of short items stays with the sentence that announced it; items that are
        # sentences of their own (several, or long) stand alone.
        if open_list and _ITEM.match(line) and len(pieces) == 1 and len(out[-1]) + len(line) <= _LIST_CHARS:
            out[-1] = f"{out[-1]} {line.strip()}"
            continue
        for piece in pieces:
            if out and _LEAD_PUNCT.match(piece):
                out[-1] += piece if CJK_RE.search(piece[:3]) else " " + piece
            else:
                out.append(piece)
        open_list = bool(out) and out[-1].rstrip().endswith((":", "："))
    return out


_CLAUSE = re.compile(r"(?<=[，；;])|(?<=[,:：])\s+|\s+[–—]\s+")


def clauses(sentence: str) -> list[str]:
    """The comma/semicolon/dash-separated clauses of one sentence, punctuation kept on the left."""
    return [c.strip() for c in _CLAUSE.split(sentence) if c and c.strip()]
