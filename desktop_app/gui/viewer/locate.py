"""Find a cited chunk in a PDF page's text (no Qt here).

The chunk was extracted by the PDF parser (pypdf, cleaned, dehyphenated); the page text comes from
QtPdf (pdfium), with its own line breaks, soft hyphens and spacing. Both are cut into words (each
CJK character one word), casefolded and compared as word sequences. The chunk may start with the
page's running header or run over a page break, so the passage is the densest run of matching words
on the page, not the first or the whole match.
"""

from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_WORD = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")
# Between two pieces of one word broken at a line end: a soft hyphen (pdfium gives U+FFFE), or a
# hyphen followed by a line break or space.
_BREAK = re.compile(r"^(?:[\u00ad\ufffe]\s*|[-\u2010]\s+)$")
MAX_GAP = 12  # unmatched page words tolerated inside one passage (OCR slips, a figure label)


def words(text: str) -> list[tuple[str, int, int]]:
    """(word, start, end) of each word of ``text``; a word hyphenated at a line end is one word."""
    out: list[tuple[str, int, int]] = []
    for m in _WORD.finditer(text):
        word = unicodedata.normalize("NFKC", m.group()).casefold()
        if out and _BREAK.match(text[out[-1][2] : m.start()]) and not _is_cjk(word):
            prev, start, _ = out[-1]
            out[-1] = (prev + word, start, m.end())
        else:
            out.append((word, m.start(), m.end()))
    return out


def _is_cjk(word: str) -> bool:
    return bool(re.match(rf"[{_CJK}]", word))


def locate(chunk: str, page_text: str, min_words: int = 4) -> tuple[int, int] | None:
    """The [start, end) character span of ``page_text`` that holds the chunk's passage, or None
    when too little of it is on the page."""
    page = words(page_text)
    wanted = [w for w, _, _ in words(chunk)]
    if not page or not wanted:
        return None
    matcher = SequenceMatcher(None, [w for w, _, _ in page], wanted, autojunk=False)
    blocks = [b for b in matcher.get_matching_blocks() if b.size]
    best: list[int] | None = None
    group: list[int] = []  # matched words, first page word, end page word, longest block of a run
    for b in blocks:
        if group and b.a - group[2] <= MAX_GAP:
            group = [group[0] + b.size, group[1], b.a + b.size, max(group[3], b.size)]
        else:
            group = [b.size, b.a, b.a + b.size, b.size]
        if best is None or group[0] > best[0]:
            best = group
    if best is None:
        return None
    matched, first, end, longest = best
    # Not a passage but chance: common words scattered over the page ("the", "of"), no phrase.
    if (
        matched < min(min_words, len(wanted))
        or matched < 0.1 * len(wanted)
        or matched < 0.5 * (end - first)
        or longest < min(3, len(wanted))
    ):
        return None
    return page[first][1], page[end - 1][2]


def utf16_index(text: str, index: int) -> int:
    """A Python string index as Qt counts it (UTF-16 code units: astral characters count two)."""
    return len(text[:index].encode("utf-16-le")) // 2
