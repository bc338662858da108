"""Split parsed sections into chunks for embedding.

Two strategies, both deterministic and linear in the text length:

- ``fixed``: windows of ``size`` characters that overlap by ``overlap``, cut at whitespace
  (or sentence punctuation, for Chinese) when there is some in the second half of the window.
- ``semantic``: paragraphs (blank-line separated) merged toward ``size``; a longer paragraph is
  split into sentences (English ``.!?``, Chinese ``。！？；…``, newlines), a longer sentence is cut
  hard. A chunk starts with the trailing sentences of the previous one, up to ``overlap`` chars.

Chunks never cross a section. ``char_start``/``char_end`` are offsets into the section's text and
``section.text[char_start:char_end] == chunk.text`` holds exactly (whitespace is trimmed by moving
the offsets, not by editing the text).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence

from desktop_app.core.library.documents import Chunk, Section
from desktop_app.core.library.languages import text_lang

STRATEGIES = ("semantic", "fixed")

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n\s*")
# A sentence ends at English punctuation followed by whitespace, at Chinese punctuation, or at a newline.
_SENTENCE_END = re.compile(
    r"""[.!?]+["'”’)\]]*(?=\s)|[。！？；;…]+["'”’」』）)\]]*|\n"""
)  # fmt: skip
_CUT_PREFERENCE = re.compile(r"[\s。！？；，、,;:：]")


def make_doc_id(rel_path: str) -> str:
    """A stable id for a document from its path relative to the knowledge folder.

    A readable ASCII slug of the path (for logs and Chroma ids) plus 16 hex digits of the SHA-1
    of the exact path string: the same path always maps to the same id, different paths do not
    collide in practice even when their slugs do (``a b.md`` and ``a-b.md``).
    """
    digest = hashlib.sha1(rel_path.encode("utf-8", errors="surrogatepass")).hexdigest()[:16]
    slug = re.sub(r"[^a-z0-9]+", "-", rel_path.lower()).strip("-")[:48].strip("-")
    return f"{slug or 'doc'}-{digest}"


def chunk_sections(
    sections: Sequence[Section],
    doc_id: str,
    source: str,
    *,
    strategy: str = "semantic",
    size: int = 1000,
    overlap: int = 150,
    scope: str = "shared",
) -> list[Chunk]:
    """Chunks of a document's sections, numbered over the whole document.

    ``size`` is the maximum chunk length in characters; ``overlap`` is clamped to half of it so
    every step moves forward by at least half a window.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown chunking strategy {strategy!r}; expected one of {STRATEGIES}")
    if size < 1:
        raise ValueError("chunk size must be at least 1 character")
    overlap = max(0, min(overlap, size // 2))

    spans_per_section: list[tuple[int, Section, list[tuple[int, int]]]] = []
    for section_index, section in enumerate(sections):
        if strategy == "fixed":
            spans = fixed_spans(section.text, size, overlap)
        else:
            spans = semantic_spans(section.text, size, overlap)
        spans_per_section.append((section_index, section, spans))

    total = sum(len(spans) for _, _, spans in spans_per_section)
    chunks: list[Chunk] = []
    for section_index, section, spans in spans_per_section:
        for start, end in spans:
            i = len(chunks)
            chunks.append(
                Chunk(
                    id=f"{doc_id}-chunk-{i}",
                    doc_id=doc_id,
                    text=section.text[start:end],
                    source=source,
                    page=section.page,
                    heading_path=list(section.heading_path),
                    chunk_index=i,
                    total_chunks=total,
                    char_start=start,
                    char_end=end,
                    section_index=section_index,
                    scope=scope,
                    lang=text_lang(section.text[start:end]),
                    ocr=section.ocr,
                )
            )
    return chunks


# --------------------------------------------------------------------------- helpers


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Move ``start``/``end`` inward past whitespace; an all-blank span becomes empty."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _cut_point(text: str, start: int, end: int, floor: int, bound: int) -> int:
    """Where to end a window ``[start, end)`` of ``text[:bound]``: just after the last whitespace or
    punctuation in ``[floor, end)``, else ``end`` (a hard cut, e.g. a URL or unbroken Chinese)."""
    if end >= bound:
        return bound
    if text[end].isspace():
        return end
    for i in range(end - 1, max(floor, start) - 1, -1):
        if _CUT_PREFERENCE.match(text, i):
            return i + 1
    return end


def _hard_spans(text: str, start: int, end: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Windows of at most ``size`` over ``text[start:end]``, preferring whitespace cuts."""
    spans: list[tuple[int, int]] = []
    pos = start
    while pos < end:
        limit = min(pos + size, end)
        if limit >= end:
            cut = end
        else:
            floor = pos + max(size // 2, overlap + 1)
            cut = _cut_point(text, pos, limit, floor, end)
        a, b = _trim(text, pos, cut)
        if a < b:
            spans.append((a, b))
        if cut >= end:
            break
        nxt = max(cut - overlap, pos + 1)
        if overlap:
            # Start the overlap at a word boundary when there is one inside it.
            for i in range(nxt, cut):
                if text[i].isspace():
                    nxt = i + 1
                    break
        pos = nxt
    return spans


def fixed_spans(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    """(start, end) offsets of fixed-size windows over ``text``, trimmed of whitespace."""
    return _hard_spans(text, 0, len(text), size, overlap)


def _paragraphs(text: str) -> Iterable[tuple[int, int]]:
    pos = 0
    for match in _PARAGRAPH_BREAK.finditer(text):
        a, b = _trim(text, pos, match.start())
        if a < b:
            yield a, b
        pos = match.end()
    a, b = _trim(text, pos, len(text))
    if a < b:
        yield a, b


def _sentences(text: str, start: int, end: int) -> Iterable[tuple[int, int]]:
    pos = start
    for match in _SENTENCE_END.finditer(text, start, end):
        a, b = _trim(text, pos, match.end())
        if a < b:
            yield a, b
        pos = match.end()
    a, b = _trim(text, pos, end)
    if a < b:
        yield a, b


def _units(text: str, size: int) -> Iterable[tuple[int, int, bool]]:
    """Paragraphs no longer than ``size``; longer ones as sentences, longer sentences cut hard
    (the flag: a hard piece, which may be cut again where it is convenient)."""
    for p_start, p_end in _paragraphs(text):
        if p_end - p_start <= size:
            yield p_start, p_end, False
            continue
        for s_start, s_end in _sentences(text, p_start, p_end):
            if s_end - s_start <= size:
                yield s_start, s_end, False
            else:
                for a, b in _hard_spans(text, s_start, s_end, size, 0):
                    yield a, b, True


def _overlap_start(text: str, chunk_start: int, chunk_end: int, earliest: int) -> int | None:
    """The start of the first sentence inside ``[earliest, chunk_end)`` that lies in the chunk,
    or None when no sentence boundary falls there (then there is no overlap)."""
    lo = max(chunk_start, earliest)
    if lo >= chunk_end:
        return None
    if lo == chunk_start:
        return chunk_start
    # A boundary is the end of a sentence-ending match (or a paragraph break) before ``lo``...
    window_start = max(chunk_start, lo - 4)
    for match in _SENTENCE_END.finditer(text, window_start, chunk_end):
        if match.end() >= lo:
            a, _ = _trim(text, match.end(), chunk_end)
            return a if a < chunk_end else None
    return None


def semantic_spans(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    """(start, end) offsets of paragraph-aware chunks over ``text``, trimmed of whitespace."""
    spans: list[tuple[int, int]] = []
    cur_start: int | None = None
    cur_end = 0
    units = list(_units(text, size))[::-1]  # a stack: a unit cut in two goes back on it
    while units:
        u_start, u_end, hard = units.pop()
        if cur_start is None:
            cur_start, cur_end = u_start, u_end
            continue
        if u_end - cur_start <= size:
            cur_end = u_end
            continue
        room = cur_start + size - u_start
        if hard and cur_end - cur_start < size // 4 and room > 0:
            # A short chunk (a heading line, a lead-in) is not left alone before a piece of an
            # over-long sentence: it takes the piece's head, the rest goes on. Alone, it cost a
            # chunk on most SciFact abstracts (the title line, then the text, title repeated).
            cut = _cut_point(text, u_start, u_start + room, u_start + room // 2, u_end)
            head_end = _trim(text, u_start, cut)[1]
            rest_start, rest_end = _trim(text, cut, u_end)
            if head_end > u_start and rest_start < rest_end:
                cur_end = head_end
                units.append((rest_start, rest_end, True))
                continue
        spans.append((cur_start, cur_end))
        new_start = u_start
        if overlap:
            # Trailing sentences of the chunk just closed, as long as the new chunk still fits.
            earliest = max(cur_end - overlap, u_end - size)
            ov = _overlap_start(text, cur_start, cur_end, earliest)
            if ov is not None and ov > cur_start and u_end - ov <= size:
                new_start = ov
        cur_start, cur_end = new_start, u_end
    if cur_start is not None:
        spans.append((cur_start, cur_end))
    return spans
