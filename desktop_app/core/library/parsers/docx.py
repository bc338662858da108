"""DOCX: sections by heading, tables as Markdown, text boxes, shapes, notes, headers and footers.

The package is read with zipfile + ElementTree, not python-docx: python-docx cannot open Strict OOXML,
its ``Paragraph.text`` sees only direct runs and hyperlinks (text boxes, content controls inside a
paragraph and tracked insertions are lost), and its errors do not say which part is damaged.
Strict parts are renamed into the transitional namespaces once parsed, so one walker reads both.

Reading order: body blocks as they come (content controls, custom XML, tracked insertions and
moves unwrapped; deletions skipped). A shape's text (text box, WordArt, SmartArt) is read once,
from the first ``mc:Choice``, else the ``mc:Fallback``: an inline shape's inside its paragraph's
text, a floating shape's as blocks right after the paragraph it is anchored to. Footnotes and
endnotes follow the block that refers to them, Markdown style (``text[^1]`` ... ``[^1]: note``).
Headers open the document and footers close it, each distinct paragraph once however many
sections repeat it.

Memory stays bounded (limits.py): every part is first streamed through a counting scan that
refuses entity declarations and stops at the limits on elements, paragraphs and characters; the
body is then read one top-level block (a paragraph, a table) at a time with ``iterparse``, each
block dropped once read, and the other parts, small in real documents, as trees.
"""

from __future__ import annotations

import posixpath
import re
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

from desktop_app.core.library import reasons
from desktop_app.core.library.documents import ParseError, Section
from desktop_app.core.library.parsers import progress
from desktop_app.core.library.parsers.limits import Budget, check_tree, scan_zip_part
from desktop_app.core.library.parsers.package import ZIP_READ_ERRORS, open_zip, read_head, zip_reason
from desktop_app.core.library.parsers.pdf import clean_text
from desktop_app.core.library.parsers.tables import markdown_table
from desktop_app.core.messages import message

_W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_R_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_WP_NS = "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
_A_NS = "http://schemas.openxmlformats.org/drawingml/2006/main"
_DGM_NS = "http://schemas.openxmlformats.org/drawingml/2006/diagram"
# Strict OOXML (ISO/IEC 29500 Strict) names the same elements in these namespaces; the package
# layer (relationships, content types) and the Microsoft and VML extensions are the same in both.
_STRICT_PREFIX = "http://purl.oclc.org/ooxml/"
_STRICT = {
    f"{_STRICT_PREFIX}wordprocessingml/main": _W_NS,
    f"{_STRICT_PREFIX}officeDocument/relationships": _R_NS,
    f"{_STRICT_PREFIX}drawingml/wordprocessingDrawing": _WP_NS,
    f"{_STRICT_PREFIX}drawingml/main": _A_NS,
    f"{_STRICT_PREFIX}drawingml/diagram": _DGM_NS,
}
_W, _R, _WP, _A, _DGM = (f"{{{ns}}}" for ns in (_W_NS, _R_NS, _WP_NS, _A_NS, _DGM_NS))
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_V = "{urn:schemas-microsoft-com:vml}"
_PKG_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
_CT_OVERRIDE = "{http://schemas.openxmlformats.org/package/2006/content-types}Override"

_P, _TBL, _TR, _TC, _RUN = f"{_W}p", f"{_W}tbl", f"{_W}tr", f"{_W}tc", f"{_W}r"
_BLOCKS, _ROWS, _CELLS = frozenset({_P, _TBL}), frozenset({_TR}), frozenset({_TC})
_ALT = f"{_MC}AlternateContent"
# Shapes with text: a text box's paragraphs, WordArt or a watermark (the ``string`` attribute of a
# VML text path), a SmartArt diagram (its nodes live in a separate diagram data part).
_TXBX, _TEXTPATH, _DIAGRAM = f"{_W}txbxContent", f"{_V}textpath", f"{_DGM}relIds"
# Wrappers whose children belong to the enclosing container: content controls, custom XML, smart
# tags, tracked insertions and moves (their deleted counterparts, w:del and w:moveFrom, are skipped).
_BLOCK_WRAPPERS = frozenset(
    f"{_W}{name}" for name in ("sdt", "sdtContent", "customXml", "smartTag", "ins", "moveTo")
)
_INLINE_WRAPPERS = _BLOCK_WRAPPERS | {f"{_W}{name}" for name in ("hyperlink", "fldSimple", "dir", "bdo")}
# Run content as python-docx renders it; w:instrText (field codes) and w:delText are not text.
_RUN_TEXT = {f"{_W}tab": "\t", f"{_W}ptab": "\t", f"{_W}cr": "\n", f"{_W}noBreakHyphen": "-"}
_DRAWINGS = frozenset({f"{_W}drawing", f"{_W}pict", f"{_W}object"})
_NOTE_REFS = {f"{_W}footnoteReference": "footnote", f"{_W}endnoteReference": "endnote"}
_FLOATING_VML = re.compile(r"position\s*:\s*absolute")
_HEADER_ORDER = {"first": 0, "default": 1, "even": 2}  # page 1, then every page, then even pages
# Paragraphs as the counting scan names them ("namespace local"), transitional and Strict.
_SCAN_PARAGRAPHS = frozenset({f"{_W_NS} p", f"{_STRICT_PREFIX}wordprocessingml/main p"})
_PARAGRAPH_TAGS = frozenset({_P, f"{{{_STRICT_PREFIX}wordprocessingml/main}}p"})
_UNIT_PARAGRAPHS = 1000  # the body's progress is told every this many paragraphs

# The largest real body part in the shared corpus (an 872-page handbook) unpacks to a few MB.
MAX_PART_BYTES = 512 * 10**6
_XML_ENCODING = re.compile(rb"""\s*<\?xml[^>]*?encoding\s*=\s*["']([\w.:-]+)""")
_HEADING_NAME = re.compile(r"^heading\s*([1-9])$", re.I)
_DOCX_MAIN = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
_OTHER_MAIN = {
    "application/vnd.ms-word.document.macroEnabled.main+xml": message(reasons.DOCM),
    "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml": str(
        message(reasons.DOTX)
    ),
    "application/vnd.ms-word.template.macroEnabledTemplate.main+xml": message(reasons.DOTM),
}
_KIND = message(reasons.WORD)

Element = ET.Element
Block = tuple[str, int | None]  # text and heading level; None for body text, tables, notes, shapes


# --------------------------------------------------------------------------- the package


def _to_transitional(root: Element) -> None:
    """Rename Strict elements and attributes to their transitional names, in place."""
    for element in root.iter():
        if element.tag.startswith("{" + _STRICT_PREFIX):
            namespace, local = element.tag[1:].split("}", 1)
            element.tag = f"{{{_STRICT.get(namespace, namespace)}}}{local}"
        for key in [k for k in element.attrib if k.startswith("{" + _STRICT_PREFIX)]:
            namespace, local = key[1:].split("}", 1)
            element.attrib[f"{{{_STRICT.get(namespace, namespace)}}}{local}"] = element.attrib.pop(key)


def _parse_xml(data: bytes) -> Element:
    """ElementTree's expat reads no external entities and caps entity expansion ("billion laughs").
    It decodes only UTF-8, UTF-16 and single-byte encodings itself, so a part declared in another
    (GBK, Shift_JIS: some non-Word writers) is decoded by Python first."""
    try:
        return ET.fromstring(data)
    except ValueError:  # "multi-byte encodings are not supported": the codec exists, expat lacks it
        declared = _XML_ENCODING.match(data)
        encoding = declared.group(1).decode("ascii") if declared else "utf-8"
        return ET.fromstring(data.decode(encoding, errors="replace"))


class _Package:
    """The parts of a DOCX zip. Part names are case-insensitive in OPC, so lookups are too."""

    def __init__(self, zf: zipfile.ZipFile) -> None:
        self._zf = zf
        self._names = {info.filename.lower(): info.filename for info in zf.infolist()}
        self._rels: dict[str, dict[str, tuple[str, str]]] = {}
        self._parsed: dict[str, Element | None] = {}  # a diagram's part may be referred to many times
        self.budget = Budget("DOCX")
        self._units = 0

    def _checked(self, name: str, *, required: bool) -> tuple[str, int] | None:
        """(member name, elements) of a part after its counting scan; None when an optional part
        is missing or cannot be unpacked. Over a limit, or with entities, the file is refused."""
        actual = self._names.get(name.lower())
        if actual is None:
            return None
        size = self._zf.getinfo(actual).file_size
        if size > MAX_PART_BYTES:  # a decompression bomb, or far more text than any real document
            raise ParseError(
                reasons.DOCX_PART_TOO_LARGE, part=name, mb=size / 1e6, limit_mb=MAX_PART_BYTES / 1e6
            )
        self._units += 1
        progress.unit("part", self._units)
        try:
            elements = scan_zip_part(self._zf, actual, "DOCX", self.budget, paragraph=_SCAN_PARAGRAPHS)
        except ZIP_READ_ERRORS as exc:
            if not required:
                return None
            raise ParseError(
                reasons.PART_CANNOT_UNPACK, label="DOCX", part=name, reason=zip_reason(exc)
            ) from exc
        except ParseError as exc:
            if not required and exc.message.code == reasons.PART_NOT_WELL_FORMED:
                return None
            raise
        return actual, elements

    def body(self, name: str) -> Iterator[Element]:
        """The top-level children of the main part's w:body, streamed: each is complete when given
        and dropped after. Raises DOCX_NO_BODY without a body."""
        checked = self._checked(name, required=True)
        assert checked is not None
        actual, elements = checked
        try:
            yield from self._stream_body(actual, name)
        except ValueError as exc:  # a multi-byte encoding expat lacks: the (scanned) tree instead
            if "multi-byte" not in str(exc):
                raise
            root = self._tree(name, required=True, checked=checked)  # not scanned twice
            assert root is not None
            body = root.find(f"{_W}body")
            if body is None:
                raise ParseError(reasons.DOCX_NO_BODY, part=name) from exc
            yield from list(body)

    def _stream_body(self, actual: str, name: str) -> Iterator[Element]:
        depth = 0
        body: Element | None = None
        inside = False  # between the body's start and end
        strict = False
        held = 0  # elements of the block being read
        paragraphs = 0
        try:
            with self._zf.open(actual) as stream:
                for event, element in ET.iterparse(stream, events=("start", "end")):
                    if event == "start":
                        depth += 1
                        if depth == 1:
                            strict = element.tag.startswith("{" + _STRICT_PREFIX)
                        elif depth == 2 and element.tag.rsplit("}", 1)[-1] == "body" and body is None:
                            body, inside, held = element, True, 0
                        elif depth > 2:
                            held += 1
                            if held > 100_000:  # counted in steps: a block of millions of runs
                                check_tree("DOCX", name, held)
                        continue
                    depth -= 1
                    if element.tag in _PARAGRAPH_TAGS:
                        paragraphs += 1
                        if paragraphs % _UNIT_PARAGRAPHS == 0:
                            progress.unit("paragraph", paragraphs)
                    if element is body:
                        inside = False
                    elif depth == 2 and inside and body is not None:
                        check_tree("DOCX", name, held)
                        held = 0
                        if strict:
                            _to_transitional(element)
                        yield element
                        body.remove(element)
        except ZIP_READ_ERRORS as exc:
            if isinstance(exc, ValueError) and "multi-byte" in str(exc):
                raise
            raise ParseError(
                reasons.PART_CANNOT_UNPACK, label="DOCX", part=name, reason=zip_reason(exc)
            ) from exc
        except ET.ParseError as exc:  # the scan read it whole, so only a changed file gets here
            line, column = exc.position
            raise ParseError(
                reasons.PART_NOT_WELL_FORMED, label="DOCX", part=name, line=line, column=column + 1
            ) from exc
        if body is None:
            raise ParseError(reasons.DOCX_NO_BODY, part=name)

    def xml(self, name: str, *, required: bool = False) -> Element | None:
        """A parsed part. A missing or unreadable optional part is None: the body still counts."""
        if name.lower() in self._parsed:
            return self._parsed[name.lower()]
        root = self._tree(name, required=required)
        self._parsed[name.lower()] = root
        return root

    def _tree(self, name: str, *, required: bool, checked: tuple[str, int] | None = None) -> Element | None:
        """The part as a tree, after its scan (``checked``: done already)."""
        checked = checked or self._checked(name, required=required)
        if checked is None:
            return None
        actual, elements = checked
        check_tree("DOCX", name, elements)
        try:
            data = self._zf.read(actual)
        except ZIP_READ_ERRORS as exc:
            if not required:
                return None
            raise ParseError(
                reasons.PART_CANNOT_UNPACK, label="DOCX", part=name, reason=zip_reason(exc)
            ) from exc
        try:
            root = _parse_xml(data)
        except ET.ParseError as exc:
            if not required:
                return None
            line, column = exc.position
            raise ParseError(
                reasons.PART_NOT_WELL_FORMED, label="DOCX", part=name, line=line, column=column + 1
            ) from exc
        if _STRICT_PREFIX.encode() in data:
            _to_transitional(root)
        return root

    def rels(self, part: str) -> dict[str, tuple[str, str]]:
        """A part's internal relationships: id -> (type's last segment, target part name).

        Types are compared by their last segment: Strict spells the same ones under
        http://purl.oclc.org/ooxml/officeDocument/relationships/."""
        if part not in self._rels:
            folder, name = posixpath.split(part)
            root = self.xml(posixpath.join(folder, "_rels", f"{name}.rels"))
            found: dict[str, tuple[str, str]] = {}
            for rel in [] if root is None else root.iter(_PKG_REL):
                target = unquote(rel.get("Target") or "")
                if not target or rel.get("TargetMode") == "External":
                    continue
                if target.startswith("/"):
                    target = target.lstrip("/")
                else:
                    target = posixpath.normpath(posixpath.join(folder, target))
                found[rel.get("Id") or ""] = ((rel.get("Type") or "").rsplit("/", 1)[-1], target)
            self._rels[part] = found
        return self._rels[part]

    def main_part(self) -> str:
        """The main document part (not always word/document.xml), after checking it is a .docx."""
        targets = [t for kind, t in self.rels("").values() if kind == "officeDocument"]
        main = next((t for t in targets if t.lower() in self._names), "word/document.xml")
        if main.lower() not in self._names:
            raise ParseError(reasons.ZIP_NOT_KIND, label="DOCX", kind=_KIND, part="word/document.xml")
        types = self.xml("[Content_Types].xml")
        for override in [] if types is None else types.iter(_CT_OVERRIDE):
            content_type = override.get("ContentType") or _DOCX_MAIN
            if (
                content_type != _DOCX_MAIN
                and (override.get("PartName") or "").lstrip("/").lower() == main.lower()
            ):
                kind = _OTHER_MAIN.get(
                    content_type, message(reasons.OTHER_PACKAGE, content_type=content_type)
                )
                raise ParseError(reasons.DOCX_OTHER_PACKAGE, kind=kind)
        return main


# --------------------------------------------------------------------------- WordprocessingML


def _val(element: Element | None) -> str | None:
    return None if element is None else element.get(f"{_W}val")


def _branch(alternate: Element) -> Element | None:
    """The one branch of an mc:AlternateContent to read: Word writes the same text in each."""
    choice = alternate.find(f"{_MC}Choice")
    return choice if choice is not None else alternate.find(f"{_MC}Fallback")


def _children(element: Element, tags: frozenset[str]) -> list[Element]:
    """Direct children with one of ``tags``, looking through wrappers and alternate content."""
    found = []
    for child in element:
        if child.tag in tags:
            found.append(child)
        elif child.tag in _BLOCK_WRAPPERS:
            found.extend(_children(child, tags))
        elif child.tag == _ALT and (branch := _branch(child)) is not None:
            found.extend(_children(branch, tags))
    return found


def _shapes(element: Element, floating: bool = False) -> Iterator[tuple[Element, bool]]:
    """(shape text element, floating?) in a drawing. Text boxes are not looked into (reading
    them finds the shapes nested inside), and only one branch of alternate content is."""
    for child in element:
        if child.tag in (_TXBX, _TEXTPATH, _DIAGRAM):
            yield child, floating
        elif child.tag == _ALT:
            if (branch := _branch(child)) is not None:
                yield from _shapes(branch, floating)
        else:
            moves = child.tag == f"{_WP}anchor" or (
                child.tag.startswith(_V) and bool(_FLOATING_VML.search(child.get("style") or ""))
            )
            yield from _shapes(child, floating or moves)


class _Styles:
    """Heading levels by paragraph style id: Title is 0, Heading N is N, also through a style
    based on one (cached: a document has few styles and many paragraphs)."""

    def __init__(self, root: Element | None) -> None:
        self._styles: dict[str, tuple[str, str | None]] = {}
        self._default: str | None = None
        self._levels: dict[str | None, int | None] = {}
        for style in [] if root is None else root.iter(f"{_W}style"):
            style_id = style.get(f"{_W}styleId")
            if style_id is None or style.get(f"{_W}type", "paragraph") != "paragraph":
                continue
            name = (_val(style.find(f"{_W}name")) or "").strip()
            self._styles[style_id] = (name, _val(style.find(f"{_W}basedOn")))
            if style.get(f"{_W}default") in ("1", "true", "on"):
                self._default = style_id

    def level(self, style_id: str | None) -> int | None:
        if style_id not in self._levels:
            self._levels[style_id] = self._lookup(style_id)
        return self._levels[style_id]

    def _lookup(self, style_id: str | None) -> int | None:
        current = style_id if style_id in self._styles else self._default  # as Word falls back
        for _ in range(10):  # basedOn chains can loop in damaged files
            if current not in self._styles:
                return None
            name, based_on = self._styles[current]
            if name.lower() == "title":
                return 0
            match = _HEADING_NAME.match(name) or _HEADING_NAME.match(current)
            if match:
                return int(match.group(1))
            current = based_on
        return None


class _Paragraph:
    """The text of one paragraph being read, and the floating shapes anchored in it."""

    def __init__(self, markers: bool) -> None:
        self.parts: list[str] = []
        self.floating: list[Element] = []
        self.markers = markers  # note markers go in the text, but not in headings (they become paths)
        self.spliced = False  # an inline shape's text was put in between spaces

    def text(self) -> str:
        text = "".join(self.parts)
        return clean_text(re.sub(" {2,}", " ", text) if self.spliced else text).strip()


class _Reader:
    """Reads the parts of one DOCX into blocks; parts are loaded while the zip is open."""

    def __init__(self, package: _Package) -> None:
        self._package = package
        self._diagram_sources: dict[Element, str] = {}  # SmartArt reference -> the part holding it
        self._main = main = package.main_part()
        self._sect_prs: list[Element] = []  # the body's section properties, read as it streams
        self._main_rels = package.rels(main)
        first = {kind: target for kind, target in reversed(list(self._main_rels.values()))}
        self._styles = _Styles(self._load(first["styles"]) if "styles" in first else None)
        self._notes: dict[str, dict[str, Element]] = {}  # "footnote"/"endnote" -> w:id -> note
        for kind in ("footnote", "endnote"):
            root = self._load(first[f"{kind}s"]) if f"{kind}s" in first else None
            self._notes[kind] = (
                {} if root is None else {n.get(f"{_W}id") or "": n for n in root.iter(f"{_W}{kind}")}
            )
        self._numbers: dict[tuple[str, str], int] = {}
        self._pending: list[tuple[int, Element]] = []  # notes referred to, not yet written

    def _load(self, name: str, required: bool = False) -> Element | None:
        root = self._package.xml(name, required=required)
        if root is not None:  # a diagram's data part is named by its source part's relationships
            self._diagram_sources.update(dict.fromkeys(root.iter(_DIAGRAM), name))
        return root

    def page_furniture(self) -> tuple[list[Block], list[Block]]:
        """Header and footer blocks of every section, each distinct paragraph once."""
        found: dict[str, list[Block]] = {"header": [], "footer": []}
        parts_read: set[str] = set()
        texts: set[str] = set()
        for sect_pr in self._sect_prs:
            references = [r for r in sect_pr if r.tag in (f"{_W}headerReference", f"{_W}footerReference")]
            references.sort(key=lambda ref: _HEADER_ORDER.get(ref.get(f"{_W}type") or "", 1))
            for ref in references:
                kind, target = self._main_rels.get(ref.get(f"{_R}id") or "", ("", ""))
                if kind not in found or target in parts_read:
                    continue
                parts_read.add(target)
                root = self._load(target)
                for text, _ in [] if root is None else self.blocks(root):
                    if text not in texts:
                        texts.add(text)
                        found[kind].append((text, None))
        return found["header"], found["footer"]

    def body_blocks(self) -> list[Block]:
        """The body's blocks, headings marked, read one top-level block at a time."""
        out: list[Block] = []
        holder = ET.Element("holder")
        for element in self._package.body(self._main):
            self._diagram_sources.update(dict.fromkeys(element.iter(_DIAGRAM), self._main))
            changed = {id(old) for change in element.iter(f"{_W}sectPrChange") for old in change}
            self._sect_prs += [s for s in element.iter(f"{_W}sectPr") if id(s) not in changed]
            holder.append(element)
            out += self.blocks(holder, headings=True)
            holder.remove(element)
        return out

    def blocks(self, container: Element, headings: bool = False) -> list[Block]:
        out: list[Block] = []
        for element in _children(container, _BLOCKS):
            floating: list[Element] = []
            if element.tag == _TBL:
                if table := self._table(element):
                    out.append((table, None))
            else:
                level = self._heading_level(element) if headings else None
                paragraph = self._paragraph(element, markers=level is None)
                if text := paragraph.text():
                    out.append((text, level))
                floating = paragraph.floating
            out.extend(self._flush_notes())
            for shape in floating:
                out.extend(self._shape_blocks(shape))
        return out

    def _heading_level(self, p: Element) -> int | None:
        """The paragraph style's heading level, else a direct outline level in its properties."""
        ppr = p.find(f"{_W}pPr")
        level = self._styles.level(_val(None if ppr is None else ppr.find(f"{_W}pStyle")))
        if level is not None or ppr is None:
            return level
        try:
            outline = int(_val(ppr.find(f"{_W}outlineLvl")) or "")
        except ValueError:
            return None
        return outline + 1 if 0 <= outline <= 8 else None  # 9 means "body text"

    def _paragraph(self, p: Element, markers: bool = True) -> _Paragraph:
        paragraph = _Paragraph(markers)
        self._inline(p, paragraph)
        return paragraph

    def _inline(self, container: Element, paragraph: _Paragraph) -> None:
        for child in container:
            if child.tag == _RUN:
                self._run(child, paragraph)
            elif child.tag in _INLINE_WRAPPERS:
                self._inline(child, paragraph)
            elif child.tag == _ALT and (branch := _branch(child)) is not None:
                self._inline(branch, paragraph)

    def _run(self, run: Element, paragraph: _Paragraph) -> None:
        parts = paragraph.parts
        for child in run:
            tag = child.tag
            if tag == f"{_W}t":
                parts.append(child.text or "")
            elif tag in _RUN_TEXT:
                parts.append(_RUN_TEXT[tag])
            elif tag == f"{_W}br":
                parts.append("" if child.get(f"{_W}type") in ("page", "column") else "\n")
            elif tag in _NOTE_REFS:
                self._note_reference(_NOTE_REFS[tag], child.get(f"{_W}id") or "", paragraph)
            elif tag in _DRAWINGS:
                for shape, floating in _shapes(child):
                    if floating:
                        paragraph.floating.append(shape)
                    elif text := self._flat(shape):
                        parts.append(f" {text} ")
                        paragraph.spliced = True
            elif tag == _ALT and (branch := _branch(child)) is not None:
                self._run(branch, paragraph)  # a branch holds run content: a drawing, a symbol

    def _note_reference(self, kind: str, note_id: str, paragraph: _Paragraph) -> None:
        note = self._notes[kind].get(note_id)
        if note is None:
            return
        key = (kind, note_id)
        if key not in self._numbers:  # numbered in reading order, footnotes and endnotes alike
            self._numbers[key] = len(self._numbers) + 1
            self._pending.append((self._numbers[key], note))
        if paragraph.markers:
            paragraph.parts.append(f"[^{self._numbers[key]}]")

    def _flush_notes(self) -> list[Block]:
        out: list[Block] = []
        while self._pending:  # a note may refer to another one, which is appended as it is read
            number, note = self._pending.pop(0)
            if text := " ".join(self._flat_parts(note)):
                out.append((f"[^{number}]: {text}", None))
        return out

    def _shape_parts(self, shape: Element) -> list[str]:
        if shape.tag == _TXBX:
            return self._flat_parts(shape)
        if shape.tag == _TEXTPATH:
            return [text] if (text := " ".join((shape.get("string") or "").split())) else []
        return self._diagram_parts(shape)

    def _shape_blocks(self, shape: Element) -> list[Block]:
        if shape.tag == _TXBX:  # a text box keeps its tables and notes as blocks
            return self.blocks(shape)
        parts = self._shape_parts(shape)
        return [("\n".join(parts), None)] if parts else []

    def _flat(self, shape: Element) -> str:
        return " ".join(" ".join(self._shape_parts(shape)).split())

    def _diagram_parts(self, rel_ids: Element) -> list[str]:
        """A SmartArt diagram's node texts, from the data part its r:dm relationship names."""
        source = self._diagram_sources.get(rel_ids, "")
        kind, target = self._package.rels(source).get(rel_ids.get(f"{_R}dm") or "", ("", ""))
        data = self._package.xml(target) if kind == "diagramData" else None
        parts = []
        for point in [] if data is None else data.iter(f"{_DGM}pt"):
            if point.get("type", "node") in ("node", "asst"):  # not connectors or layout points
                for p in point.iter(f"{_A}p"):
                    if text := " ".join("".join(t.text or "" for t in p.iter(f"{_A}t")).split()):
                        parts.append(text)
        return parts

    def _flat_parts(self, container: Element) -> list[str]:
        """Every paragraph's text in a container, with nested tables and all shapes flattened in."""
        parts: list[str] = []
        for element in _children(container, _BLOCKS):
            if element.tag == _TBL:
                for tr in _children(element, _ROWS):
                    for tc in _children(tr, _CELLS):
                        parts.extend(self._flat_parts(tc))
                continue
            paragraph = self._paragraph(element)
            parts.append(paragraph.text())
            parts.extend(self._flat(shape) for shape in paragraph.floating)
        return [part for part in parts if part]

    def _table(self, tbl: Element) -> str:
        """A Markdown table; merged cells keep their text in the first grid cell, ragged rows are padded."""
        rows: list[list[str]] = []
        for tr in _children(tbl, _ROWS):
            row: list[str] = []
            for tc in _children(tr, _CELLS):
                row.append(" ".join(self._flat_parts(tc)))
                try:
                    span = max(1, min(int(_val(tc.find(f"{_W}tcPr/{_W}gridSpan")) or 1), 64))
                except ValueError:
                    span = 1
                row.extend([""] * (span - 1))
            rows.append(row)
        return markdown_table(rows)


# --------------------------------------------------------------------------- entry point


def _read(path: Path, head: bytes) -> tuple[list[Block], list[Block], list[Block]]:
    """(header, body, footer) blocks of a DOCX."""
    with open_zip(path, head, "DOCX", ".docx", _KIND) as zf:
        reader = _Reader(_Package(zf))
        body = reader.body_blocks()  # first: the sections' headers and footers are named in it
        headers, footers = reader.page_furniture()
        return headers, body, footers


def parse_docx(path: Path) -> list[Section]:
    """Sections of a DOCX split at Title/Heading 1..9 paragraphs, each with its heading path."""
    try:
        head = read_head(path, "DOCX", ".docx", _KIND)
        headers, body, footers = _read(path, head)
    except OSError as exc:  # also a disk error or the file vanishing while the zip is read
        raise ParseError(reasons.UNREADABLE, reason=exc.strerror or exc) from exc
    except RecursionError as exc:  # the walk recurses per XML level, and expat sets no depth limit
        raise ParseError(reasons.DOCX_TOO_DEEP) from exc

    # (heading_path, blocks, has_body) per section; the first has no heading and opens with the headers.
    sections: list[tuple[list[str], list[str], bool]] = [([], [text for text, _ in headers], bool(headers))]
    stack: list[tuple[int, str]] = []
    for text, level in body:
        if level is None:
            path_, blocks, _ = sections[-1]
            blocks.append(text)
            sections[-1] = (path_, blocks, True)
            continue
        title = " ".join(text.split())
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        sections.append(([t for _, t in stack], [title], False))
    if footers:  # after the last section, but not under its heading
        if sections[-1][0]:
            sections.append(([], [], True))
        path_, blocks, _ = sections[-1]
        blocks.extend(text for text, _ in footers)
        sections[-1] = (path_, blocks, True)

    with_body = [s for s in sections if s[2]]
    kept = with_body or [s for s in sections if s[1]]
    if not kept:
        raise ParseError(reasons.EMPTY)
    return [Section(text="\n\n".join(blocks), heading_path=path_) for path_, blocks, _ in kept]
