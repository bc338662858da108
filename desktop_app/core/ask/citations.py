"""Citation markers in an answer ('[1]', '[1, 2]', '【2】'): which context blocks they name, and the
check that drops numbers no block has (small models invent them); the cited file's hash at answer
time, and whether the file has changed since."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from desktop_app.core.ask import notes
from desktop_app.core.ask.budget import ContextBlock
from desktop_app.core.events import Answer, Citation, Warning
from desktop_app.core.messages import message
from desktop_app.core.paths import sha256_file

if TYPE_CHECKING:
    from desktop_app.core.library.manifest import Entry

CITATION_MARK = re.compile(r"[\[【]\s*(\d{1,3}(?:\s*[,，、]\s*\d{1,3})*)\s*[\]】]")
_SEP = re.compile(r"[,，、]")


def parse_citations(text: str, blocks: Sequence[ContextBlock]) -> tuple[list[int], list[int]]:
    """Block numbers cited in ``text`` (first-appearance order) and those out of range."""
    valid = {b.n for b in blocks}
    cited: list[int] = []
    bad: list[int] = []
    for m in CITATION_MARK.finditer(text):
        for part in _SEP.split(m.group(1)):
            n = int(part)
            target = cited if n in valid else bad
            if n not in target:
                target.append(n)
    return cited, bad


def strip_citations(text: str, bad: Sequence[int]) -> str:
    """Remove out-of-range numbers from citation markers ('[2, 9]' -> '[2]', '[9]' -> '')."""
    if not bad:
        return text

    def fix(m: re.Match[str]) -> str:
        keep = [p.strip() for p in _SEP.split(m.group(1)) if int(p) not in bad]
        return f"[{', '.join(keep)}]" if keep else ""

    out = CITATION_MARK.sub(fix, text)
    return re.sub(r"[ \t]+([.,;:!?。，；：！？])", r"\1", re.sub(r"[ \t]{2,}", " ", out)).strip()


def citations_for(numbers: Sequence[int], blocks: Sequence[ContextBlock]) -> list[Citation]:
    """The Citation (file, page, chunk, excerpt) of each block number that exists."""
    by_n = {b.n: b for b in blocks}
    out = []
    for n in numbers:
        b = by_n.get(n)
        if b is not None:
            out.append(Citation(n, b.hit.source, b.hit.page, b.hit.chunk_id, b.hit.text[:500]))
    return out


def check_citations(text: str, blocks: Sequence[ContextBlock]) -> tuple[str, list[Citation], Warning | None]:
    """An LLM answer's text without out-of-range markers, its citations, and a Warning if any
    marker was dropped (None otherwise)."""
    cited, bad = parse_citations(text, blocks)
    if not bad:
        return text, citations_for(cited, blocks), None
    markers = ", ".join(f"[{n}]" for n in bad)
    warning = Warning(message(notes.CITATIONS_DROPPED, markers=markers, count=len(blocks)))
    return strip_citations(text, bad), citations_for(cited, blocks), warning


def stamp_hashes(answer: Answer, sha_of: Callable[[str], str | None]) -> None:
    """Record on each citation (cited and related) the sha256 its file had when the answer was
    given; ``sha_of(source)`` is the manifest's (None when the file has no row)."""
    known: dict[str, str] = {}
    for c in [*answer.citations, *answer.related]:
        if c.source not in known:
            known[c.source] = sha_of(c.source) or ""
        c.sha256 = known[c.source]


def current_sha256(path: Path, entry: Entry | None) -> str | None:
    """The sha256 of the file at ``path`` now (None when it is gone). The manifest's hash serves
    while the file's size and mtime are the ones it was hashed at; otherwise the file is read."""
    try:
        st = path.stat()
    except OSError:
        return None
    if entry is not None and entry.size == st.st_size and entry.mtime_ns == st.st_mtime_ns:
        return entry.sha256
    return sha256_file(path)


def changed_since_answer(sha256: str, path: Path, entry: Entry | None) -> bool:
    """True when the cited file is still there but is no longer the one the answer read (its hash
    then was ``sha256``). False when no hash was kept or the file is gone: a removed file is shown
    as removed."""
    if not sha256:
        return False
    now = current_sha256(path, entry)
    return now is not None and now != sha256


# -- the cited sentence (the viewer tells it apart from the rest of the passage) --------------------
_CLAIM_WORD = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]|[^\W_]+")
# A sentence ends at . ! ? before a space or the line's end, at 。！？； or at the line's end.
_SENTENCE_END = re.compile(r"""[.!?]+["'”’)\]]*(?=\s|$)|[。！？；]+[”’」』）)]*""")


def claim_for(answer_text: str, n: int) -> str:
    """The sentences of an answer that carry citation ``n`` ("[n]", "[1, n]", "【n】"), markers removed."""
    from desktop_app.core.ask.sentences import split_sentences

    claims: list[str] = []
    previous = ""
    for sentence in split_sentences(answer_text):
        numbers = {int(x) for m in CITATION_MARK.finditer(sentence) for x in _SEP.split(m.group(1))}
        # "rimu fruit. [1]": a marker after the full stop is a sentence of its own; it cites the one before.
        words = CITATION_MARK.sub("", sentence).strip().lstrip("-*• ").strip()
        claim = words if any(ch.isalnum() for ch in words) else previous
        if n in numbers and claim and claim not in claims:
            claims.append(claim)
        previous = claim
    return " ".join(claims)


_LINE_WRAP = re.compile(r"(?<!\n)\n(?!\n)")


def sentence_spans(text: str, wrapped: bool = False) -> list[tuple[int, int]]:
    """[start, end) of each sentence of ``text`` (a line without an end mark is one sentence;
    ``wrapped``: lines are hard-wrapped, as on a PDF page, and only a blank line ends a paragraph)."""
    if wrapped:
        text = _LINE_WRAP.sub(" ", text)  # same length: the spans stay valid in the original
    spans: list[tuple[int, int]] = []
    pos = 0
    for line in text.split("\n"):
        begin = 0
        for m in _SENTENCE_END.finditer(line):
            spans.append((pos + begin, pos + m.end()))
            begin = m.end()
        spans.append((pos + begin, pos + len(line)))
        pos += len(line) + 1
    out = []
    for start, end in spans:  # trimmed, empty ones dropped
        piece = text[start:end]
        lead = len(piece) - len(piece.lstrip())
        trail = len(piece.rstrip())
        if trail > lead:
            out.append((start + lead, start + trail))
    return out


_COMMON = frozenset("the and has have had are was were its his her their with from that this for not but".split())


def _claim_words(text: str) -> set[str]:
    """The words that tell sentences apart: every Chinese character, Latin words of 3+ letters
    that are not the commonest ones."""
    words = (w.casefold() for w in _CLAIM_WORD.findall(text))
    return {w for w in words if "\u3400" <= w[0] <= "\u9fff" or (len(w) >= 3 and w not in _COMMON)}


def cited_sentence(passage: str, claim: str, wrapped: bool = False) -> tuple[int, int] | None:
    """The [start, end) of the sentence of ``passage`` the claim rests on: the one whose words the
    claim holds most of; None without a claim or when no sentence shares enough with it.
    ``wrapped``: the passage's lines are hard-wrapped (a PDF page's text)."""
    wanted = _claim_words(claim)
    if not wanted:
        return None
    best: tuple[float, int, tuple[int, int]] | None = None
    for start, end in sentence_spans(passage, wrapped):
        words = _claim_words(passage[start:end])
        shared = len(words & wanted)
        if not words or shared < min(3, len(words)):
            continue
        score = (shared, shared / len(words))  # most words shared, then most of the sentence shared
        if best is None or score > best[:2]:
            best = (*score, (start, end))
    if best is None or best[1] < 0.3:
        return None
    return best[2]
