"""PDF with pypdf: page text repaired for search, split into sections at the PDF's outline headings.

Per page: pypdf's plain extraction (content-stream order, which keeps the columns of a two-column
paper apart), with table rows taken from pypdf's layout rendering (cells joined by " | "), then a
compatibility normalisation (ligatures, full-width letters) that leaves CJK punctuation alone.

Per document, once every page is read: line-end hyphenation is joined where the joined word is the
document's own spelling, and words that kerning split apart ("mo del") are joined back where
neither part is a word of the document but the whole is. Outline (bookmark) entries become heading paths
as a DOCX's headings do: a page is split where an entry's title starts, and each section carries the
titles of the entries it lies under. ``page`` is counted from 1; a page may hold several sections.

A page that fails to extract is skipped and recorded in the first section's metadata. Pages with
no text layer that hold images (scanned pages) are read by OCR when the caller allows it (an
``OcrJob``: sync does, within ``index.ocr_max_pages``); their sections have ``ocr`` set. The
document fails only when no page gives text, and the message then tells scanned pages (no OCR
allowed, or OCR read nothing) from blank or vector-only ones. Measurements: docs/pdf-extraction.md.

A truncated PDF (an interrupted download or copy) has lost its cross-reference table and often
its page tree, which PDF writers put at the end: pypdf then reads no page at all. Its complete
page objects are found by scanning the bytes and given a new page tree (``_repair_truncated``),
so the readable pages are kept; ``truncated`` and ``pages_lost`` in the first section's metadata
say what happened.
"""

from __future__ import annotations

import io
import logging
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_app.core.library import reasons
from desktop_app.core.library.documents import ParseError, Section
from desktop_app.core.library.parsers import progress

if TYPE_CHECKING:
    from desktop_app.core.library.ocr import OcrJob

log = logging.getLogger(__name__)

# Width (1/1000 em) pypdf assumes for a font without a space glyph, as TeX's fonts are; a TJ offset
# beyond ~half of it becomes a space. pypdf's default, 200, turns kerns such as T-o (~0.1 em) into
# spaces ("To olkit"); TeX's narrowest word space is ~0.22 em, so 300 still finds every real one.
_SPACE_WIDTH = 300.0

# Letters of scripts that put spaces between words; CJK ideographs, kana and Hangul are left out of
# the word repairs (no hyphenation there, and a space in Korean is a real word boundary).
_LETTER = (
    r"[^\W\d_\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]"
)
_WORD = re.compile(rf"{_LETTER}+")
_HYPHEN_BREAK = re.compile(rf"({_LETTER}+)[-\u2010]\n[ \t]*({_LETTER}+)(?!\w)[ \t]*")
_COMPOUND = re.compile(rf"{_LETTER}+(?:[-\u2010]{_LETTER}+)+")
_HYPHENS = re.compile(r"[-\u2010]")
_SOFT_BREAK = re.compile(r"\u00ad[ \t]*\n[ \t]*")  # a soft hyphen ending a line: the word goes on
_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u2060\ufeff"))  # soft hyphen, zero-width space, joiner, BOM
_WORD_END = frozenset(' .,;:!?)]"”')  # what may follow a word that could be half of a split one
_CELL_GAP = re.compile(r"(?<=\S) {3,}(?=\S)")
_NUMBER = re.compile(r"^[(\[]?[-+\u2212]?[\d.,]*\d[\d.,]*%?[)\]]?[,;]?$")
_NUMBERED_LINE = r"^[ \t]*(?:(?:\d+(?:\.\d+)*|[IVXLC]+|[A-Z])\.?\s+)?"  # a line start, a section number
_SECTION_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[IVXLC]+\.|[A-Z]\.|chapter \w+|appendix \w+)\s+", re.I)
_MAX_OUTLINE_DEPTH = 16
_MAX_OUTLINE_ENTRIES = 5000


def _short(exc: BaseException, limit: int = 120) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _collapse(text: str) -> str:
    return " ".join(text.split())


def clean_text(text: str) -> str:
    """Drop NULs and lone surrogates that PDF text extraction can produce (they break JSON and Chroma)."""
    if "\x00" in text:
        text = text.replace("\x00", "")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", errors="replace").decode("utf-8")
    return text


def _keeps_form(code: int) -> bool:
    """Characters NFKC would harm. Full-width punctuation (，！？；：（）): CJK text is written with
    it, and the chunker ends a sentence at ！？； but at ASCII !?; only before a space; the same for
    "…" and "‥". Hangul compatibility jamo: NFKC makes them conjoining jamo, which render as
    fillers on their own."""
    return (
        (0xFF01 <= code <= 0xFF60 and not chr(code).isalnum())
        or code in (0x2025, 0x2026)
        or 0x3131 <= code <= 0x318E
    )


class _CompatTable(dict[int, str]):
    """``str.translate`` table giving each character its NFKC form, filled on first use."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        mapped = char if _keeps_form(code) else unicodedata.normalize("NFKC", char)
        # A spacing accent (˘ ¨ ´) becomes a space plus a combining mark, which would split "O˘guz".
        if len(mapped) > 1 and mapped[0] == " " and not mapped.isspace():
            mapped = char
        self[code] = mapped
        return mapped


_COMPAT = _CompatTable()


def normalize_text(text: str) -> str:
    """Extracted page text made searchable: ligatures and other compatibility forms as NFKC gives
    them ("ﬁ" -> "fi", "Ｐ" -> "P", "①" -> "1"), CJK punctuation as written (``_keeps_form``), soft
    hyphens and zero-width characters removed, a soft hyphen at a line end joining the word."""
    text = clean_text(text)
    if "\u00ad" in text:
        text = _SOFT_BREAK.sub("", text)
    text = text.translate(_INVISIBLE)
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFC", text.translate(_COMPAT))
    return text


def table_rows(layout: str) -> dict[str, str]:
    """Table rows in pypdf's layout rendering of a page, keyed by their words as the plain
    extraction writes them (whitespace collapsed), with the cells joined by " | ".

    A row is a line whose words are set apart by a gap of 3+ columns that overlaps a gap of the line
    above or below by 2+ columns: a table's gutter. Justified prose has wide gaps now and then, but
    rarely at the same place on two lines. A pair of rows is keyed together too, because the plain
    extraction puts rows on nearby baselines on one line.
    """
    lines = layout.split("\n")
    gaps = [[m.span() for m in _CELL_GAP.finditer(line)] for line in lines]
    rows: set[int] = set()
    for i in range(len(lines) - 1):
        if any(min(e1, e2) - max(s1, s2) >= 2 for s1, e1 in gaps[i] for s2, e2 in gaps[i + 1]):
            rows.update((i, i + 1))
    cells = {i: " | ".join(_CELL_GAP.split(lines[i].strip())) for i in rows}
    found: dict[str, str] = {}
    for i in sorted(rows):
        found[_collapse(lines[i])] = cells[i]
        if i + 1 in rows:
            found[_collapse(lines[i] + " " + lines[i + 1])] = f"{cells[i]}\n{cells[i + 1]}"
    return found


def may_hold_table(text: str) -> bool:
    """Whether a page is worth pypdf's layout rendering, which costs as much as the plain extraction
    again: a line holding two or more numbers (tables nearly always have one; see the measurement
    in docs/pdf-extraction.md)."""
    return any(sum(1 for token in line.split() if _NUMBER.match(token)) >= 2 for line in text.split("\n"))


def _page_text(page: Any) -> str:
    """A page's plain text with its table rows' cells set apart (the layout rendering failing
    costs the cells, never the page)."""
    text = page.extract_text(space_width=_SPACE_WIDTH) or ""
    if not text.strip() or not may_hold_table(text):
        return text
    try:
        layout = page.extract_text(extraction_mode="layout", layout_mode_space_vertically=False)
    except (Exception, RecursionError) as exc:
        log.debug("layout extraction failed: %s", exc)
        return text
    rows = table_rows(layout)
    if rows:
        text = "\n".join(rows.get(_collapse(line), line) for line in text.split("\n"))
    return text


@dataclass
class Vocabulary:
    """How a document spells its words, to repair line-end hyphenation and kerning splits."""

    words: Counter[str] = field(default_factory=Counter)  # lowercase words, hyphenation breaks left out
    compounds: Counter[str] = field(default_factory=Counter)  # "well-known": adjacent parts of compounds
    pairs: Counter[tuple[str, str]] = field(default_factory=Counter)  # two words, one space apart
    fragments: Counter[str] = field(default_factory=Counter)  # uses as a half of a likely split word

    @classmethod
    def of(cls, texts: list[str]) -> Vocabulary:
        vocab = cls()
        for text in texts:
            # The halves of a hyphenation break are no evidence of how a word is spelt.
            text = _HYPHEN_BREAK.sub("\n", text)
            vocab.words.update(w.lower() for w in _WORD.findall(text))
            for match in _COMPOUND.finditer(text):
                parts = _HYPHENS.split(match.group().lower())
                vocab.compounds.update(f"{a}-{b}" for a, b in zip(parts, parts[1:]))
            for line in text.split("\n"):
                vocab.pairs.update((a.group().lower(), b.group().lower()) for a, b in _split_pairs(line))
        for (a, b), n in vocab.pairs.items():
            if vocab.words[a + b] >= n:
                vocab.fragments[a] += n
                vocab.fragments[b] += n
        return vocab

    def is_word(self, word: str) -> bool:
        return self.words[word.lower()] > 0

    def split_apart(self, left: str, right: str) -> bool:
        """Whether "left right" is one word split in two: the document writes the joined word at
        least as often as the pair, and neither half occurs but as a half of such pairs ("Ev ents" and
        "LineEv ents" join; "may be", "World Wide" and "inland water" stay)."""
        a, b = left.lower(), right.lower()
        return (
            self.words[a + b] >= self.pairs[a, b]
            and self.words[a] <= self.fragments[a]
            and self.words[b] <= self.fragments[b]
        )


def _split_pairs(line: str) -> list[tuple[re.Match[str], re.Match[str]]]:
    """Adjacent words of a line one space apart, neither glued to digits, hyphens or apostrophes."""
    words = [m for m in _WORD.finditer(line) if _standalone(line, m.start(), m.end())]
    return [(a, b) for a, b in zip(words, words[1:]) if b.start() == a.end() + 1]


def _standalone(line: str, start: int, end: int) -> bool:
    return (start == 0 or line[start - 1] in ' (["“') and (end == len(line) or line[end] in _WORD_END)


def dehyphenate(text: str, vocab: Vocabulary) -> str:
    """Join "classifi-\\ncation" into "classification" (the word moves up, the line break stays) when
    the continuation is lowercase and the document spells the word unhyphenated at least as often
    as hyphenated. With neither spelling in the document, keep the hyphen of a compound: the part
    before it continues a hyphenated chain ("Analyst-in-\\ncharge"), or is a word of the document
    and the part after is one too or is too long for a syllable, 5+ letters ("privacy-\\npreserving"); join
    otherwise ("distribu-\\ntion", "exception-\\nally"). A kept hyphen keeps the compound on one line."""

    def repair(match: re.Match[str]) -> str:
        a, b = match.group(1), match.group(2)
        # The line break moves after the word, unless the word ended its line already.
        eol = "" if match.end() == len(text) or text[match.end()] == "\n" else "\n"
        if b[0].islower():
            joined = vocab.words[(a + b).lower()]
            hyphenated = vocab.compounds[f"{a}-{b}".lower()]
            if joined or hyphenated:
                compound = hyphenated > joined
            else:
                chained = match.start() > 0 and text[match.start() - 1] in "-\u2010"
                compound = chained or (vocab.is_word(a) and (vocab.is_word(b) or len(b) >= 5))
            if not compound:
                log.debug("hyphenation joined: %s-%s", a, b)
                return f"{a}{b}{eol}"
        return f"{a}-{b}{eol}"

    return _HYPHEN_BREAK.sub(repair, text)


def join_splits(text: str, vocab: Vocabulary) -> str:
    """Join the words of a line that ``Vocabulary.split_apart`` says are one ("mo del" -> "model")."""
    out = []
    for line in text.split("\n"):
        drop: list[int] = []  # offsets of the spaces to remove
        for a, b in _split_pairs(line):
            if vocab.split_apart(a.group(), b.group()):
                log.debug("split joined: %s %s", a.group(), b.group())
                drop.append(a.end())
        for offset in reversed(drop):
            line = line[:offset] + line[offset + 1 :]
        out.append(line)
    return "\n".join(out)


@dataclass
class _Heading:
    page: int  # 0-based page index
    title: str
    path: list[str]


def _outline(reader: Any) -> list[_Heading]:
    """Outline entries in page order, each with the titles of the entries above it; [] when the
    outline is missing or broken (it only adds headings, so it never fails a document)."""
    headings: list[_Heading] = []

    def walk(items: list[Any], parents: list[str], depth: int) -> None:
        path = parents
        for item in items:
            if len(headings) >= _MAX_OUTLINE_ENTRIES:
                return
            if isinstance(item, list):  # the children of the entry before it
                if depth < _MAX_OUTLINE_DEPTH:
                    walk(item, path, depth + 1)
                continue
            title = _collapse(normalize_text(str(item.get("/Title") or "")))
            path = [*parents, title] if title else parents
            try:
                page = reader.get_destination_page_number(item)
            except (Exception, RecursionError):  # one broken destination costs its entry only
                page = None
            if title and page is not None and page >= 0:
                headings.append(_Heading(page, title, path))

    try:
        walk(reader.outline, [], 0)
    except (Exception, RecursionError) as exc:
        log.debug("outline unreadable: %s", exc)
        return []
    headings.sort(key=lambda h: h.page)  # stable: entries on one page keep their outline order
    return headings


def _find_title(text: str, title: str, start: int) -> int | None:
    """Where a heading's title begins a line of the page text at or after ``start``, after an
    optional section number (case and spacing ignored), else None."""
    words = (_SECTION_NUMBER.sub("", title) or title).split()[:12]
    pattern = _NUMBERED_LINE + r"\s*".join(map(re.escape, words))
    match = re.compile(pattern, re.I | re.M).search(text, start)
    return match.start() if match else None


def _split_page(
    text: str, headings: list[_Heading], path: list[str]
) -> tuple[list[tuple[list[str], str]], list[str]]:
    """A page's text cut where its headings' titles begin a line: (heading path, text) pieces, the
    first under ``path`` (where the previous page ended), and the path the page ends under.

    A title missing from the page (the outline spells it otherwise) cannot be placed: as the page's
    first heading it covers the page from the top (it starts on this page); after another heading
    it takes over from the next page on, unless a later heading on the page is found.
    """
    cuts: list[tuple[int, list[str]]] = [(0, path)]
    placed = False
    ending: list[str] | None = None
    for heading in headings:
        found = _find_title(text, heading.title, cuts[-1][0])
        if found is None and placed:
            ending = heading.path
            continue
        placed = placed or found is not None
        at = cuts[-1][0] if found is None else found
        if at == cuts[-1][0]:
            cuts[-1] = (at, heading.path)
        else:
            cuts.append((at, heading.path))
        ending = None
    ends = [at for at, _ in cuts[1:]] + [len(text)]
    pieces = [(p, text[at:end]) for (at, p), end in zip(cuts, ends)]
    return pieces, ending or cuts[-1][1]


def _has_images(page: Any) -> bool:
    try:
        return len(page.images) > 0
    except (Exception, RecursionError):
        return True  # cannot tell: the scanned-page message is the likelier one


def _read_scanned(
    path: Path, numbers: list[int], job: OcrJob, page_errors: list[dict[str, object]]
) -> dict[int, str]:
    """OCR text of the scanned pages ``numbers`` (1-based), by page; pages that read as nothing
    are left out, pages that cannot be drawn are recorded in ``page_errors``."""
    from desktop_app.core.library.ocr import engine, render_pdf_pages
    from desktop_app.core.packages import MissingPackage

    job.check_pages(len(numbers))  # before any work: a refused file costs nothing
    try:
        reader = engine()
    except MissingPackage as exc:
        raise ParseError(reasons.PDF_NO_OCR, reason=exc) from exc
    texts: dict[int, str] = {}
    for i, (number, image) in enumerate(render_pdf_pages(path, numbers), 1):
        job.page(i, len(numbers))
        if isinstance(image, str):
            page_errors.append({"page": number, "error": image})
            continue
        page = reader.read(image)
        if page.text_weight:  # some of it read with confidence: not a stray mark on a picture
            texts[number] = normalize_text(page.text)
    return texts


_OBJECT = re.compile(rb"(?<![\d])(\d{1,9})\s+(\d{1,5})\s+obj\b")
_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")
_PAGES_COUNT = re.compile(rb"/Type\s*/Pages\b.*?/Count\s+(\d+)|/Count\s+(\d+).*?/Type\s*/Pages\b", re.S)
_PARENT = re.compile(rb"/Parent\s+(\d+)\s+\d+\s+R")


@dataclass
class _Repair:
    data: bytes  # the file with a new page tree and cross-reference table
    pages: int  # page objects found
    expected: int | None  # the page count the file's own page tree gave, when that object survived
    error: str = ""  # what pypdf said of the file as it was


def _repair_truncated(data: bytes) -> _Repair | None:
    """A truncated PDF's complete objects with a new page tree over its page objects (in file
    order), a catalog and a cross-reference table; None when no page object is complete. Page
    objects inside compressed object streams cannot be found so, nor shared resources lost."""
    end = data.rfind(b"endobj")
    if end < 0:
        return None
    data = data[: end + len(b"endobj")] + b"\n"
    offsets: dict[int, int] = {}
    pages: list[int] = []
    parents: Counter[int] = Counter()
    expected: int | None = None
    matches = list(_OBJECT.finditer(data))
    for match, after in zip(matches, [*matches[1:], None]):
        number = int(match.group(1))
        offsets[number] = match.start()
        body = data[match.end() : after.start() if after else len(data)]
        head = body.split(b"stream", 1)[0]
        if _PAGE.search(head):
            pages.append(number)
            if parent := _PARENT.search(head):
                parents[int(parent.group(1))] += 1
        elif count := _PAGES_COUNT.search(head):
            expected = max(expected or 0, int(count.group(1) or count.group(2)))
    pages = list(dict.fromkeys(pages))
    if not pages:
        return None
    # The pages' own parent number, when it was lost, so /Parent finds the new tree.
    lost = [n for n, _ in parents.most_common() if n not in offsets]
    tree = lost[0] if lost else max(offsets) + 1
    catalog = max(max(offsets), tree) + 1
    out = io.BytesIO()
    out.write(data)
    for number, text in (
        (
            tree,
            b"<< /Type /Pages /Kids [%s] /Count %d >>"
            % (b" ".join(b"%d 0 R" % n for n in pages), len(pages)),
        ),
        (catalog, b"<< /Type /Catalog /Pages %d 0 R >>" % tree),
    ):
        offsets[number] = out.tell()
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, text))
    xref = out.tell()
    size = max(offsets) + 1
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % size)
    for number in range(1, size):
        if number in offsets:
            out.write(b"%010d 00000 n \n" % offsets[number])
        else:
            out.write(b"0000000000 65535 f \n")
    out.write(b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, catalog, xref))
    return _Repair(out.getvalue(), len(pages), expected)


def _open_pdf(path: Path) -> tuple[Any, int, _Repair | None]:
    """A PdfReader of the file and its page count, else of its repair when the file is
    truncated (see the module)."""
    from pypdf import PdfReader

    try:
        reader = PdfReader(path, strict=False)
        if reader.is_encrypted:  # pages are counted after decryption
            return reader, -1, None
        return reader, len(reader.pages), None
    except OSError as exc:
        raise ParseError(reasons.UNREADABLE, reason=exc.strerror or exc) from exc
    except (Exception, RecursionError) as exc:
        error = exc
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ParseError(reasons.UNREADABLE, reason=exc.strerror or exc) from exc
    if b"%%EOF" in data[-1024:] or not data.startswith(b"%PDF"):  # not truncated: damaged otherwise
        raise ParseError(reasons.CORRUPT, label="PDF", reason=_short(error)) from error
    repair = _repair_truncated(data)
    if repair is None:
        raise ParseError(reasons.PDF_PAGES_LOST, reason=_short(error)) from error
    repair.error = _short(error)
    try:
        reader = PdfReader(io.BytesIO(repair.data), strict=False)
        return reader, len(reader.pages), repair
    except (Exception, RecursionError) as exc:
        raise ParseError(reasons.PDF_PAGES_LOST, reason=_short(error)) from exc


def parse_pdf(path: Path, ocr: OcrJob | None = None) -> list[Section]:
    """Sections of a PDF (see the module docstring); scanned pages are read by OCR only when
    ``ocr`` is given. Raises ParseError for encrypted, corrupt, scanned (without OCR) or textless
    files."""
    from pypdf import PasswordType
    from pypdf.errors import DependencyError

    reader, page_count, repair = _open_pdf(path)

    if reader.is_encrypted:
        try:
            result = reader.decrypt("")
        except DependencyError as exc:
            raise ParseError(reasons.PDF_NEEDS_CRYPTOGRAPHY) from exc
        except (Exception, RecursionError) as exc:
            # Unsupported or damaged encryption dictionaries end here too.
            raise ParseError(reasons.PDF_CANNOT_DECRYPT, reason=_short(exc)) from exc
        if result == PasswordType.NOT_DECRYPTED:
            raise ParseError(reasons.ENCRYPTED, label="PDF")

    if page_count < 0:
        try:
            page_count = len(reader.pages)
        except (Exception, RecursionError) as exc:
            raise ParseError(reasons.CORRUPT, label="PDF", reason=_short(exc)) from exc
    if page_count == 0:
        raise ParseError(reasons.PDF_NO_PAGES)

    pages: list[tuple[int, str]] = []  # (0-based index, normalised text)
    without_text: list[int] = []
    page_errors: list[dict[str, object]] = []
    for index in range(page_count):
        number = index + 1
        progress.unit("page", number, page_count)
        try:
            text = normalize_text(_page_text(reader.pages[index]))
        except (Exception, RecursionError) as exc:
            # One bad page (broken content stream, odd font) must not cost the whole document.
            log.debug("page %d of %s failed: %s", number, path, exc)
            page_errors.append({"page": number, "error": _short(exc)})
            continue
        if text.strip():
            pages.append((index, text))
        else:
            without_text.append(number)

    scanned = [number for number in without_text if _has_images(reader.pages[number - 1])]
    read_by_ocr: dict[int, str] = {}
    if scanned and ocr is not None:
        read_by_ocr = _read_scanned(path, scanned, ocr, page_errors)
        pages = sorted(pages + [(number - 1, text) for number, text in read_by_ocr.items()])
        without_text = [number for number in without_text if number not in read_by_ocr]

    if not pages:
        if repair is not None:
            raise ParseError(reasons.PDF_PAGES_LOST, reason=repair.error)
        if page_errors and not without_text:
            raise ParseError(reasons.PDF_NO_PAGE_READ, reason=page_errors[0]["error"])
        if scanned and ocr is not None:
            raise ParseError(reasons.PDF_OCR_NO_TEXT, count=len(scanned))
        if scanned:
            raise ParseError(reasons.PDF_NEEDS_OCR, count=page_count)
        if page_count == 1:
            raise ParseError(reasons.PDF_BLANK_PAGE)
        raise ParseError(reasons.PDF_BLANK, count=page_count)

    vocab = Vocabulary.of([text for _, text in pages])
    headings = _outline(reader)
    sections: list[Section] = []
    current: list[str] = []  # the heading path the previous page ended under
    next_heading = 0
    for index, text in pages:
        progress.unit("page", page_count, page_count)  # still at work after the last page: a heartbeat
        text = join_splits(dehyphenate(text, vocab), vocab)
        first = next_heading
        # Entries on pages without text take effect on the next page that has some.
        while next_heading < len(headings) and headings[next_heading].page <= index:
            next_heading += 1
        pieces, current = _split_page(text, headings[first:next_heading], current)
        by_ocr = index + 1 in read_by_ocr
        sections += [
            Section(text=t, page=index + 1, heading_path=p, ocr=by_ocr) for p, t in pieces if t.strip()
        ]

    meta = sections[0].metadata
    meta["total_pages"] = page_count
    if without_text:
        meta["pages_without_text"] = without_text
    if read_by_ocr:
        meta["ocr_pages"] = sorted(read_by_ocr)
    if page_errors:
        meta["page_errors"] = page_errors
    if repair is not None:
        meta["truncated"] = True
        if repair.expected is not None and repair.expected > page_count:
            meta["pages_lost"] = repair.expected - page_count
    return sections
