"""PPTX: one section per slide (``page`` = the slide number): title, text, tables, speaker notes.

Read with python-pptx after the checks every ZIP-based format shares (package.py). Shapes are read
in the slide's z-order, the order screen readers use; group shapes are read through, tables become
Markdown, a chart gives its title. Each section opens with "Slide N: title", so a citation shows
which slide it is even where only a page number is printed.

python-pptx builds an lxml tree of every XML part when it opens a file, so each part is first
streamed through a counting scan (limits.py) that refuses entity declarations and stops at the
limits on paragraphs, characters and the elements held as trees: a 1.4 MB slide of 158 million
empty paragraphs is refused in seconds instead of filling 10 GB.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from desktop_app.core.library import reasons
from desktop_app.core.library.documents import ParseError, Section
from desktop_app.core.library.parsers import progress
from desktop_app.core.library.parsers.limits import (
    MAX_TREE_ELEMENTS,
    Budget,
    check_tree,
    scan_zip_part,
)
from desktop_app.core.library.parsers.package import (
    ZIP_READ_ERRORS,
    check_office_family,
    check_unpacked_size,
    damaged_reason,
    open_zip,
    read_head,
    reader_library,
    xml_members,
)
from desktop_app.core.library.parsers.tables import markdown_table
from desktop_app.core.messages import message

_KIND = message(reasons.POWERPOINT)
# python-pptx loads every part (pictures and videos too) into memory when it opens a file.
MAX_UNPACKED_BYTES = 10**9
_A_P = "http://schemas.openxmlformats.org/drawingml/2006/main p"  # a paragraph, as the scan names it


def parse_pptx(path: Path) -> list[Section]:
    """One section per slide that has any text; an empty list when none has."""
    pptx = reader_library("pptx", "reading PowerPoint files")

    try:
        head = read_head(path, "PPTX", ".pptx", _KIND)
        with open_zip(path, head, "PPTX", ".pptx", _KIND) as zf:
            check_unpacked_size(zf, "PPTX", MAX_UNPACKED_BYTES)
            check_office_family(zf, "ppt", "PPTX", _KIND, "ppt/presentation.xml")
            _scan_parts(zf)
        sections: list[Section] = []
        slides = pptx.Presentation(str(path)).slides
        for number, slide in enumerate(slides, 1):
            progress.unit("slide", number, len(slides))
            if found := _slide(number, slide):
                heading, text = found
                sections.append(Section(text=text, page=number, heading_path=[heading]))
        return sections
    except OSError as exc:
        raise ParseError(reasons.UNREADABLE, reason=exc.strerror or exc) from exc
    except RecursionError as exc:  # group shapes are read recursively (before RuntimeError, its base)
        raise ParseError(reasons.PPTX_TOO_DEEP) from exc
    # python-pptx on a damaged package: missing parts (KeyError), XML that is not well-formed (lxml's
    # XMLSyntaxError is a SyntaxError), an element of the wrong kind where one is expected
    # (AttributeError: its element classes are chosen by tag), values it cannot read (ValueError,
    # TypeError, its own errors).
    except (
        KeyError,
        SyntaxError,
        AttributeError,
        TypeError,
        pptx.exc.PythonPptxError,
        *ZIP_READ_ERRORS,
    ) as exc:
        raise ParseError(reasons.CORRUPT, label="PPTX", reason=damaged_reason(exc)) from exc


def _scan_parts(zf) -> None:
    """Count every XML part before python-pptx holds them all as trees; refuse past a limit."""
    budget = Budget("PPTX")
    parts = xml_members(zf)
    held = 0
    for number, name in enumerate(parts, 1):
        progress.unit("part", number, len(parts))
        try:
            svg = name.lower().endswith(".svg")  # a picture, not read as XML by python-pptx
            held += scan_zip_part(zf, name, "PPTX", budget, paragraph=frozenset({_A_P}), entities=svg)
        except ParseError as exc:
            if exc.message.code == reasons.PART_NOT_WELL_FORMED:
                continue  # python-pptx says whether it needs the part (an unused one is no harm)
            raise
        if held > MAX_TREE_ELEMENTS:
            check_tree("PPTX", name, held)


def _slide(number: int, slide) -> tuple[str, str] | None:
    """(heading, text) of a slide, None when it has no text."""
    title_shape = slide.shapes.title
    title = _flat(title_shape.text_frame.text) if title_shape is not None else ""
    others = [s for s in slide.shapes if title_shape is None or s.shape_id != title_shape.shape_id]
    blocks = list(_shape_blocks(others))
    if slide.has_notes_slide:
        notes_frame = slide.notes_slide.notes_text_frame
        if notes_frame is not None and (notes := _frame_text(notes_frame)):
            blocks.append(f"Speaker notes:\n{notes}")
    if not title and not blocks:
        return None
    heading = f"Slide {number}: {title}" if title else f"Slide {number}"
    return heading, "\n\n".join([heading, *blocks])


def _shape_blocks(shapes: Iterable) -> Iterator[str]:
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    for shape in shapes:
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            yield from _shape_blocks(shape.shapes)
        elif shape.has_text_frame:
            if text := _frame_text(shape.text_frame):
                yield text
        elif shape.has_table:
            rows = [[cell.text for cell in row.cells] for row in shape.table.rows]
            if table := markdown_table(rows):
                yield table
        elif shape.has_chart:
            chart = shape.chart
            if chart.has_title and (title := _flat(chart.chart_title.text_frame.text)):
                yield title


def _frame_text(frame) -> str:
    """A text frame's paragraphs, one a line; a line break inside a paragraph (python-pptx's
    vertical tab) is a line break too."""
    lines = [p.text.replace("\v", "\n").strip() for p in frame.paragraphs]
    return "\n".join(line for line in lines if line)


def _flat(text: str) -> str:
    return " ".join(text.split())
