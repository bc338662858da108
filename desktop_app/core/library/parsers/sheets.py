"""XLSX (openpyxl, read-only) and CSV/TSV: each sheet's rows as Markdown tables.

A sheet becomes sections of at most about ``SECTION_CHARS`` characters, each one chunk: a chunk
of a long table split by the chunker would lose the header row, and rows without their header
are numbers nobody can read. So every section opens with the sheet's name and row range and
repeats the header row (the sheet's first non-empty row). Empty rows and the empty columns left
of and after the data are dropped. XLSX cells show the value Excel saved (a formula's last
result, which a file written by a script may not have).

Bounded (limits.py): openpyxl keeps every shared string in memory and builds each row whole, so
the workbook's XML parts are first streamed through a counting scan that refuses entity
declarations, a row of more than Excel's 16,384 columns, more cells than ``MAX_CELLS`` (counted
as openpyxl gives them, gaps filled) and more characters than ``MAX_TEXT_CHARS``. A CSV file is
capped the same way as it is read (its size by index.max_document_mb before it is read).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import Iterable, Iterator
from pathlib import Path

from desktop_app.core.library import reasons
from desktop_app.core.library.documents import ParseError, Section
from desktop_app.core.library.parsers import progress
from desktop_app.core.library.parsers.limits import (
    MAX_CELLS,
    MAX_COLUMNS,
    Budget,
    check_columns,
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
from desktop_app.core.library.parsers.tables import markdown_row, separator
from desktop_app.core.library.parsers.text import decode_bytes
from desktop_app.core.messages import message

# One chunk at the default chunk size (1000 characters), and within what MiniLM reads (256 tokens):
# tables of names and numbers run about 2.5 characters a token, not prose's 4.
SECTION_CHARS = 600
__all__ = ["MAX_CELLS", "parse_csv", "parse_xlsx"]  # MAX_CELLS: openpyxl reads ~110,000 cells a second
_ROWS_PER_UNIT = 5000  # progress is told every this many rows
# A worksheet's rows and cells as the counting scan names them, transitional and Strict.
_SHEET_NS = (
    "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
    "http://purl.oclc.org/ooxml/spreadsheetml/main",
)
_ROW = frozenset(f"{ns} row" for ns in _SHEET_NS)
_CELL = frozenset(f"{ns} c" for ns in _SHEET_NS)
MAX_UNPACKED_BYTES = 10**9  # the workbook's parts, before openpyxl opens it
_KIND = message(reasons.EXCEL)
_CSV_DELIMITERS = ",;\t|"

Row = tuple[int, list[str]]  # the row's number in the sheet (1-based) and its cells' text


# --------------------------------------------------------------------------- rendering


def _sheet_sections(name: str, rows: Iterable[Row], label: str) -> list[Section]:
    """Sections of one sheet's non-empty rows; ``label`` names the sheet in each heading
    ("Sheet: Sales", "prices.csv") and ``name`` is its heading path, if any."""
    kept = [(number, cells) for number, cells in rows if any(cell.strip() for cell in cells)]
    if not kept:
        return []
    left = min(next(i for i, cell in enumerate(cells) if cell.strip()) for _, cells in kept)
    width = max(len(cells) for _, cells in kept) - left
    (_, header), body = kept[0], kept[1:]
    head = [markdown_row(header[left:], width), separator(width)]
    if not body:
        return [Section(text=f"{label}\n\n" + "\n".join(head), heading_path=[name] if name else [])]

    groups: list[list[tuple[int, str]]] = [[]]
    size = sum(len(line) + 1 for line in head)
    for number, cells in body:
        line = markdown_row(cells[left:], width)
        if groups[-1] and size + len(line) > SECTION_CHARS:
            groups.append([])
            size = sum(len(line) + 1 for line in head)
        groups[-1].append((number, line))
        size += len(line) + 1
    sections = []
    for group in groups:
        first, last = group[0][0], group[-1][0]
        rows_label = f"row {first}" if first == last else f"rows {first}–{last}"
        heading = f"{label} ({rows_label})" if len(groups) > 1 else label
        text = "\n".join([heading, "", *head, *(line for _, line in group)])
        sections.append(Section(text=text, heading_path=[name] if name else []))
    return sections


def _cell(value: object) -> str:
    """A cell's value as the sheet shows it, more or less: whole floats without ".0", dates in ISO."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, dt.datetime) and value.time() == dt.time():
        return value.date().isoformat()
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return str(value)


def _trimmed(cells: Iterable[object]) -> list[str]:
    out = [_cell(value) for value in cells]
    while out and not out[-1].strip():
        out.pop()
    return out


class _CellBudget:
    """Counts cells read over a file and refuses the file past ``MAX_CELLS``, or a row past
    ``MAX_COLUMNS``."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.used = 0

    def take(self, n: int) -> None:
        check_columns(self.label, n)
        self.used += n
        if self.used > MAX_CELLS:
            raise ParseError(reasons.TOO_MANY_CELLS, label=self.label, cells=MAX_CELLS)


# --------------------------------------------------------------------------- XLSX


def parse_xlsx(path: Path) -> list[Section]:
    """Sections of every worksheet with data, in the workbook's order."""
    openpyxl = reader_library("openpyxl", "reading Excel files")

    try:
        head = read_head(path, "XLSX", ".xlsx", _KIND)
        with open_zip(path, head, "XLSX", ".xlsx", _KIND) as zf:
            check_unpacked_size(zf, "XLSX", MAX_UNPACKED_BYTES)
            check_office_family(zf, "xl", "XLSX", _KIND, "xl/workbook.xml")
            _scan_workbook(zf)
        workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
        try:
            budget = _CellBudget("XLSX")
            sections: list[Section] = []
            for number, sheet in enumerate(workbook.worksheets, 1):
                progress.unit("sheet", number, len(workbook.worksheets))
                sheet.reset_dimensions()  # rows as stored: a wrong <dimension> would pad every row
                sections += _sheet_sections(sheet.title, _xlsx_rows(sheet, budget), f"Sheet: {sheet.title}")
            return sections
        finally:
            workbook.close()  # read-only mode keeps the file open
    except OSError as exc:
        raise ParseError(reasons.UNREADABLE, reason=exc.strerror or exc) from exc
    # openpyxl on a damaged package: missing parts (KeyError), XML that is not well-formed (lxml's
    # and ElementTree's errors are SyntaxErrors), values it cannot convert (ValueError, TypeError).
    except (KeyError, SyntaxError, TypeError, *ZIP_READ_ERRORS) as exc:
        raise ParseError(reasons.CORRUPT, label="XLSX", reason=damaged_reason(exc)) from exc


class _SheetCounter:
    """Counts a worksheet part's cells as openpyxl will give them: each row up to its last cell."""

    def __init__(self, cells: _CellBudget) -> None:
        self.cells = cells
        self.width = 0  # the current row's last column

    def __call__(self, name: str, attributes: dict[str, str]) -> None:
        if name in _ROW:
            self.end_row()
        elif name in _CELL:
            reference = attributes.get("r", "")
            letters = reference.rstrip("0123456789")
            column = _column_number(letters) if letters and letters.isalpha() else self.width + 1
            self.width = max(self.width, column)
            if self.width > MAX_COLUMNS:  # before the row ends: one row can hold millions of cells
                check_columns(self.cells.label, self.width)

    def end_row(self) -> None:
        if self.width:
            self.cells.take(self.width)
        self.width = 0


def _column_number(letters: str) -> int:
    number = 0
    for letter in letters.upper()[:8]:  # XFD is the last column; more letters are over the limit
        number = number * 26 + ord(letter) - 64
    return number


def _scan_workbook(zf) -> None:
    """Count every XML part of the workbook before openpyxl reads it; refuse past a limit.
    A part that is not well-formed is left to openpyxl, which says whether it needs it."""
    budget = Budget("XLSX")
    cells = _CellBudget("XLSX")
    parts = xml_members(zf)
    for number, name in enumerate(parts, 1):
        progress.unit("part", number, len(parts))
        counter = _SheetCounter(cells)  # only worksheets have rows and cells
        try:
            svg = name.lower().endswith(".svg")  # a picture, not read as XML by openpyxl
            scan_zip_part(zf, name, "XLSX", budget, on_start=counter, entities=svg)
        except ParseError as exc:
            if exc.message.code == reasons.PART_NOT_WELL_FORMED:
                continue
            raise
        if counter is not None:
            counter.end_row()


def _xlsx_rows(sheet, budget: _CellBudget) -> Iterator[Row]:
    for number, values in enumerate(sheet.iter_rows(values_only=True), 1):
        if number % _ROWS_PER_UNIT == 0:
            progress.unit("row", number)
        budget.take(len(values))
        yield number, _trimmed(values)


# --------------------------------------------------------------------------- CSV


def parse_csv(path: Path) -> list[Section]:
    """One sheet: the rows of a CSV (delimiter sniffed: , ; tab |) or TSV file."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ParseError(reasons.UNREADABLE, reason=exc.strerror or exc) from exc
    text, encoding = decode_bytes(data)
    del data
    if not text.strip():
        raise ParseError(reasons.EMPTY)
    label = path.suffix.lstrip(".").upper()
    budget = _CellBudget(label)
    dialect: type[csv.Dialect] = csv.excel_tab
    if path.suffix.lower() != ".tsv":
        try:
            dialect = csv.Sniffer().sniff(text[: 64 * 1024], delimiters=_CSV_DELIMITERS)
        except csv.Error:  # one column, or no consistent delimiter: commas, as a spreadsheet would
            dialect = csv.excel

    def rows() -> Iterator[Row]:
        try:
            for number, cells in enumerate(csv.reader(io.StringIO(text, newline=""), dialect), 1):
                if number % _ROWS_PER_UNIT == 0:
                    progress.unit("row", number)
                budget.take(len(cells))
                yield number, _trimmed(cells)
        # csv's field limit (131,072 characters) stays: past it is nearly always a quote left
        # open, which would make the rest of the file one field.
        except csv.Error as exc:  # a field over csv's size limit, a NUL byte
            raise ParseError(reasons.CORRUPT, label=label, reason=exc) from exc

    sections = _sheet_sections("", rows(), path.name)
    if sections:
        sections[0].metadata["encoding"] = encoding
    return sections
