"""Markdown tables, the one form every parser gives tables in (DOCX, PPTX, XLSX, CSV)."""

from __future__ import annotations

from collections.abc import Sequence


def markdown_row(cells: Sequence[str], width: int) -> str:
    """One table row of ``width`` cells: whitespace collapsed (a cell stays on its line), pipes
    escaped, missing cells empty."""
    texts = [" ".join(cell.split()).replace("|", "\\|") for cell in cells]
    return "| " + " | ".join(texts + [""] * (width - len(texts))) + " |"


def separator(width: int) -> str:
    return "|" + " --- |" * width


def markdown_table(rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table whose first row is the header; ragged rows are padded; "" if all cells are empty."""
    if not any(cell.strip() for row in rows for cell in row):
        return ""
    width = max(len(row) for row in rows)
    lines = [markdown_row(rows[0], width), separator(width)]
    lines += [markdown_row(row, width) for row in rows[1:]]
    return "\n".join(lines)
