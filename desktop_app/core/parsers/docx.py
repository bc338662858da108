"""DOCX with python-docx: sections by heading, tables as Markdown, body order preserved.

The body XML is walked directly (paragraphs and tables in document order, content controls
unwrapped) because python-docx's ``paragraphs``/``tables`` lists lose the interleaving.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from desktop_app.core.documents import ParseError, Section
from desktop_app.core.parsers.pdf import clean_text

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_P, _TBL, _TR, _TC = f"{_W}p", f"{_W}tbl", f"{_W}tr", f"{_W}tc"
# Wrappers whose children belong to the enclosing container (content controls, custom XML, ins/del marks).
_WRAPPERS = frozenset({f"{_W}sdt", f"{_W}sdtContent", f"{_W}customXml", f"{_W}smartTag", f"{_W}ins"})
_HEADING_NAME = re.compile(r"^heading\s*([1-9])$", re.I)
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_OLE_ENCRYPTED = "EncryptedPackage".encode("utf-16-le")  # the stream name, in the OLE directory


def _short(exc: BaseException, path: Path | None = None, limit: int = 120) -> str:
    text = str(exc)
    if path is not None:  # python-docx puts the full path in some messages; the name is enough
        text = text.replace(str(path), path.name)
    text = " ".join(text.split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _children(element: Any, tags: frozenset[str]) -> list[Any]:
    """Direct children with one of ``tags``, looking through wrapper elements."""
    found = []
    for child in element.iterchildren():
        if child.tag in tags:
            found.append(child)
        elif child.tag in _WRAPPERS:
            found.extend(_children(child, tags))
    return found


def _style_level(paragraph: Any) -> int | None:
    """0 for Title, 1..9 for Heading N, also through a style based on one; None for body text."""
    try:
        style = paragraph.style
    except Exception:  # a paragraph pointing at a missing style id
        return None
    depth = 0
    while style is not None and depth < 10:
        name = (style.name or "").strip()
        if name.lower() == "title":
            return 0
        match = _HEADING_NAME.match(name) or _HEADING_NAME.match(style.style_id or "")
        if match:
            return int(match.group(1))
        try:
            style = style.base_style
        except Exception:
            return None
        depth += 1
    return None


def _heading_level(paragraph: Any, cache: dict[str | None, int | None]) -> int | None:
    """The heading level of a paragraph: its style's (cached per style id: lookups are slow in
    python-docx), else a direct outline level in its properties."""
    style_id = paragraph._p.style
    if style_id not in cache:
        cache[style_id] = _style_level(paragraph)
    if cache[style_id] is not None:
        return cache[style_id]
    ppr = paragraph._p.pPr
    if ppr is not None:
        outline = ppr.find(f"{_W}outlineLvl")
        if outline is not None:
            try:
                level = int(outline.get(f"{_W}val"))
            except (TypeError, ValueError):
                return None
            if 0 <= level <= 8:  # 9 means "body text"
                return level + 1
    return None


def _cell_text(tc: Any, parent: Any) -> str:
    from docx.text.paragraph import Paragraph

    parts = []
    for p in tc.iter(_P):  # nested tables flatten into the cell
        text = Paragraph(p, parent).text.strip()
        if text:
            parts.append(text)
    return " ".join(" ".join(parts).split())


def table_to_markdown(tbl: Any, parent: Any) -> str:
    """A Markdown table; merged cells keep their text in the first grid cell, ragged rows are padded."""
    rows: list[list[str]] = []
    for tr in _children(tbl, frozenset({_TR})):
        row: list[str] = []
        for tc in _children(tr, frozenset({_TC})):
            text = _cell_text(tc, parent).replace("|", "\\|")
            span = 1
            tcpr = tc.find(f"{_W}tcPr")
            if tcpr is not None:
                grid_span = tcpr.find(f"{_W}gridSpan")
                if grid_span is not None:
                    try:
                        span = max(1, min(int(grid_span.get(f"{_W}val")), 64))
                    except (TypeError, ValueError):
                        span = 1
            row.append(text)
            row.extend([""] * (span - 1))
        rows.append(row)
    if not any(any(cell for cell in row) for row in rows):
        return ""
    width = max(len(row) for row in rows)
    rows = [row + [""] * (width - len(row)) for row in rows]
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * width]
    lines += ["| " + " | ".join(row) + " |" for row in rows[1:]]
    return "\n".join(lines)


def parse_docx(path: Path) -> list[Section]:
    """Sections of a DOCX split at Title/Heading 1..9 paragraphs, each with its heading path."""
    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.text.paragraph import Paragraph

    try:
        with path.open("rb") as fh:
            is_ole = fh.read(len(_OLE_MAGIC)) == _OLE_MAGIC
            # An OLE compound file: Word encrypts DOCX into one, and old binary .doc files are one.
            encrypted = is_ole and _OLE_ENCRYPTED in fh.read()
    except OSError as exc:
        raise ParseError(f"unreadable file: {exc.strerror or exc}") from exc
    if encrypted:
        raise ParseError("encrypted DOCX: a password is required")
    if is_ole:
        raise ParseError("corrupt DOCX: this is an old binary Word (.doc) file; save it as .docx")

    try:
        document = docx.Document(str(path))
        body = document.element.body
    except PackageNotFoundError as exc:
        raise ParseError("corrupt DOCX: not a Word (zip) package") from exc
    except (Exception, RecursionError) as exc:
        # BadZipFile, a .docm/.dotx content type (ValueError), malformed XML, missing parts...
        raise ParseError(f"corrupt DOCX: {_short(exc, path)}") from exc

    # (heading_path, blocks, has_body) per section; the first has no heading.
    sections: list[tuple[list[str], list[str], bool]] = [([], [], False)]
    stack: list[tuple[int, str]] = []
    style_levels: dict[str | None, int | None] = {}
    try:
        for element in _children(body, frozenset({_P, _TBL})):
            if element.tag == _TBL:
                table = table_to_markdown(element, document)
                if table:
                    path_, blocks, _ = sections[-1]
                    blocks.append(table)
                    sections[-1] = (path_, blocks, True)
                continue
            paragraph = Paragraph(element, document)
            text = clean_text(paragraph.text).strip()
            if not text:
                continue
            level = _heading_level(paragraph, style_levels)
            if level is not None:
                title = " ".join(text.split())
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, title))
                sections.append(([t for _, t in stack], [title], False))
            else:
                path_, blocks, _ = sections[-1]
                blocks.append(text)
                sections[-1] = (path_, blocks, True)
    except ParseError:
        raise
    except (Exception, RecursionError) as exc:
        raise ParseError(f"corrupt DOCX: {_short(exc, path)}") from exc

    with_body = [s for s in sections if s[2]]
    kept = with_body or [s for s in sections if s[1]]
    if not kept:
        raise ParseError("empty document: no text")
    return [Section(text="\n\n".join(blocks), heading_path=path_) for path_, blocks, _ in kept]
