"""What one file may hold before its parser stops: the limits in one place, and the counters.

Office packages and books are ZIP archives, so a file of 1 MB can unpack to gigabytes of XML
(158 million empty paragraphs compress to almost nothing). Every parser counts what it reads as it
streams and stops at the first limit with a "too large" reason, before memory or time runs out.
Sized against real documents: the largest in the shared corpus (an 872-page handbook) has 8,243
paragraphs, 100,418 XML elements in its body and 0.8 M characters; each limit is 10 to 100
times that, so no real document meets one, and each keeps the peak memory of ``kdesk add`` well under
1.5 GB (docs/reliability.md has the figures). The extracted text is also capped by the index
setting ``index.max_document_mb`` (20 MB by default), checked after parsing.

XML is read without entities: an internal DTD that declares one is refused ("billion laughs" and
quadratic blow-ups expand a few kB into gigabytes; only a package's SVG pictures, which no library
here parses, keep theirs within expat's own amplification limit), and no external entity or DTD is
ever fetched.
"""

from __future__ import annotations

import pyexpat
import re
import zipfile
from collections.abc import Callable
from typing import IO

from desktop_app.core.library import reasons
from desktop_app.core.library.documents import ParseError

# Paragraphs of a file (DOCX w:p, PPTX a:p, block elements of a book's pages): ~20,000 pages.
MAX_PARAGRAPHS = 200_000
# XML elements read over a file, streamed (each costs ~1 µs to count, so ~10 s at most).
MAX_XML_ELEMENTS = 10_000_000
# XML elements held in memory at once as a tree (a PPTX's parts, one DOCX table, a book's package
# document): ~300 bytes each in lxml or ElementTree with their attributes, so ~300 MB.
MAX_TREE_ELEMENTS = 1_000_000
# Characters of text a file gives (~50 MB; index.max_document_mb refuses more than 20 MB of it).
MAX_TEXT_CHARS = 50_000_000
# Cells read over a workbook or CSV file: ~10 s and ~200 MB while parsed, ~12 MB of text.
MAX_CELLS = 1_000_000
# Columns of one sheet row: Excel's own limit (XFD), which no spreadsheet it wrote can pass.
MAX_COLUMNS = 16_384
# Chapters (spine documents) of a book: long novels have a few hundred.
MAX_CHAPTERS = 10_000
# A package's root relationships (_rels/.rels), read whole to tell its kind: a few hundred bytes.
MAX_ROOT_RELS_BYTES = 10**6
# Bytes fed to a parser at a time while streaming one part.
CHUNK_BYTES = 1 << 20

_XML_ENCODING = re.compile(rb"""\s*<\?xml[^>]*?encoding\s*=\s*["']([\w.:-]+)""")
_DOCTYPE_SUBSET = re.compile(rb"<!DOCTYPE[^>\[]*\[", re.I)


class Budget:
    """What a file has used of the limits so far; ``label`` names its format in the reasons."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.paragraphs = 0
        self.elements = 0
        self.chars = 0

    def add_paragraphs(self, n: int = 1) -> None:
        self.paragraphs += n
        if self.paragraphs > MAX_PARAGRAPHS:
            raise ParseError(reasons.TOO_MANY_PARAGRAPHS, label=self.label, limit=MAX_PARAGRAPHS)

    def add_elements(self, n: int = 1) -> None:
        self.elements += n
        if self.elements > MAX_XML_ELEMENTS:
            raise ParseError(reasons.TOO_MANY_ELEMENTS, label=self.label, limit=MAX_XML_ELEMENTS)

    def add_chars(self, n: int) -> None:
        self.chars += n
        if self.chars > MAX_TEXT_CHARS:
            raise ParseError(reasons.TOO_MANY_CHARS, label=self.label, limit=MAX_TEXT_CHARS)


def check_columns(label: str, columns: int) -> None:
    """Refuse a row of more than ``MAX_COLUMNS`` cells."""
    if columns > MAX_COLUMNS:
        raise ParseError(reasons.TOO_MANY_COLUMNS, label=label, limit=MAX_COLUMNS)


def check_tree(label: str, part: str, elements: int) -> None:
    """Refuse a part (or a piece of one) that would be held as a tree of more than ``MAX_TREE_ELEMENTS``."""
    if elements > MAX_TREE_ELEMENTS:
        raise ParseError(reasons.PART_TOO_MANY_ELEMENTS, label=label, part=part, limit=MAX_TREE_ELEMENTS)


def declares_entities(head: bytes) -> bool:
    """Whether an (X)HTML or XML document's internal DTD subset declares an entity."""
    match = _DOCTYPE_SUBSET.search(head)
    if match is None:
        return False
    end = head.find(b"]>", match.end())
    return b"<!ENTITY" in head[match.end() : end if end >= 0 else len(head)].upper()


class _Refused(Exception):
    """Raised inside expat's callbacks to stop the scan; carries the ParseError to raise outside."""

    def __init__(self, error: ParseError) -> None:
        self.error = error


def scan_xml(
    source: IO[bytes] | bytes,
    label: str,
    part: str,
    budget: Budget,
    *,
    paragraph: frozenset[str] = frozenset(),
    on_start: Callable[[str, dict[str, str]], None] | None = None,
    encoding: str | None = None,
    entities: bool = False,
) -> int:
    """Stream a part through expat, counting its elements (into ``budget`` and returned),
    its ``paragraph`` elements ("namespace local") and its characters, and refusing entity
    declarations; ``on_start(name, attributes)`` sees each element. Raises ParseError for a part
    that is not well-formed or over a limit; nothing is kept, so memory stays flat. ``encoding``
    overrides the part's declaration. Element names are "namespace local". ``entities``: let
    expat expand them within its own amplification limit (a picture's SVG from Illustrator
    declares some), else refuse the part."""
    parser = pyexpat.ParserCreate(encoding, namespace_separator=" ")
    parser.buffer_text = True
    counted = 0

    def start(name: str, attributes: dict[str, str]) -> None:
        nonlocal counted
        counted += 1
        try:
            budget.add_elements()
            if name in paragraph:
                budget.add_paragraphs()
            if on_start is not None:
                on_start(name, attributes)
        except ParseError as exc:
            raise _Refused(exc) from None

    def characters(text: str) -> None:
        try:
            budget.add_chars(len(text))
        except ParseError as exc:
            raise _Refused(exc) from None

    def entity(*_: object) -> None:
        raise _Refused(ParseError(reasons.XML_ENTITIES, label=label, part=part))

    parser.StartElementHandler = start
    parser.CharacterDataHandler = characters
    if not entities:
        parser.EntityDeclHandler = entity
        parser.UnparsedEntityDeclHandler = entity
    parser.SetParamEntityParsing(pyexpat.XML_PARAM_ENTITY_PARSING_NEVER)
    read = (lambda: b"") if isinstance(source, bytes) else (lambda: source.read(CHUNK_BYTES))
    try:
        chunk = source if isinstance(source, bytes) else read()
        while chunk:
            parser.Parse(chunk, False)
            chunk = read()
        parser.Parse(b"", True)
    except _Refused as refused:
        raise refused.error from None
    except pyexpat.ExpatError as exc:
        raise ParseError(
            reasons.PART_NOT_WELL_FORMED, label=label, part=part, line=exc.lineno, column=exc.offset + 1
        ) from None
    return counted


def scan_zip_part(
    zf: zipfile.ZipFile,
    name: str,
    label: str,
    budget: Budget,
    *,
    paragraph: frozenset[str] = frozenset(),
    on_start: Callable[[str, dict[str, str]], None] | None = None,
    entities: bool = False,
) -> int:
    """``scan_xml`` on a member of a ZIP archive, streamed as it unpacks. A part in a multi-byte
    encoding expat cannot read (GBK, Shift_JIS: some non-Word writers) is decoded by Python first."""
    try:
        with zf.open(name) as stream:
            return scan_xml(
                stream, label, name, budget, paragraph=paragraph, on_start=on_start, entities=entities
            )
    except ValueError as exc:  # "multi-byte encodings are not supported"
        if "multi-byte" not in str(exc):
            raise
    data = zf.read(name)
    declared = _XML_ENCODING.match(data)
    encoding = declared.group(1).decode("ascii") if declared else "utf-8"
    try:
        text = data.decode(encoding, errors="replace").encode("utf-8")
    except LookupError:  # an encoding Python does not know either
        text = data.decode("utf-8", errors="replace").encode("utf-8")
    del data
    return scan_xml(
        text, label, name, budget, paragraph=paragraph, on_start=on_start, encoding="utf-8", entities=entities
    )
