"""Turn a file into sections of text, dispatching on its suffix.

``parse_file`` raises ``ParseError`` with a short, specific message for anything it cannot read
(encrypted, corrupt, scanned, binary, empty, unsupported); any other exception is a bug. With an
``ocr`` job (sync passes one) scanned PDF pages and images are read by OCR within its page cap.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from desktop_app.core.library import reasons
from desktop_app.core.library.documents import ParseError, Section
from desktop_app.core.library.parsers.text import TEXT_SUFFIXES
from desktop_app.core.messages import message

PDF_SUFFIXES = frozenset({".pdf"})
DOCX_SUFFIXES = frozenset({".docx"})
PPTX_SUFFIXES = frozenset({".pptx"})
XLSX_SUFFIXES = frozenset({".xlsx"})
CSV_SUFFIXES = frozenset({".csv", ".tsv"})
EPUB_SUFFIXES = frozenset({".epub"})
SUPPORTED_SUFFIXES = frozenset(
    TEXT_SUFFIXES
    | PDF_SUFFIXES
    | DOCX_SUFFIXES
    | PPTX_SUFFIXES
    | XLSX_SUFFIXES
    | CSV_SUFFIXES
    | EPUB_SUFFIXES
)
IMAGE_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".bmp", ".webp", ".gif", ".tif", ".tiff"})

if TYPE_CHECKING:
    from desktop_app.core.library.ocr import OcrJob

__all__ = ["IMAGE_SUFFIXES", "SUPPORTED_SUFFIXES", "ParseError", "Section", "parse_file"]


def parse_file(path: Path, ocr: OcrJob | None = None) -> list[Section]:
    """Sections of a text, PDF, DOCX, PPTX, XLSX, CSV or EPUB document; never an empty list (that
    is a ParseError)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in IMAGE_SUFFIXES and ocr is None:
        raise ParseError(reasons.IMAGE_IS_PHOTO, suffix=suffix)
    if suffix not in SUPPORTED_SUFFIXES | IMAGE_SUFFIXES:
        raise ParseError(reasons.UNSUPPORTED, suffix=suffix or message(reasons.NO_SUFFIX))
    if not path.is_file():
        raise ParseError(reasons.NOT_A_FILE if path.exists() else reasons.NOT_FOUND)

    if ocr is not None and suffix in IMAGE_SUFFIXES:  # a document only if it holds text (image.py)
        from desktop_app.core.library.parsers.image import parse_image

        sections = parse_image(path, ocr)
    elif suffix in PDF_SUFFIXES:
        from desktop_app.core.library.parsers.pdf import parse_pdf

        sections = parse_pdf(path, ocr)
    elif suffix in DOCX_SUFFIXES:
        from desktop_app.core.library.parsers.docx import parse_docx

        sections = parse_docx(path)
    elif suffix in PPTX_SUFFIXES:
        from desktop_app.core.library.parsers.pptx import parse_pptx

        sections = parse_pptx(path)
    elif suffix in XLSX_SUFFIXES:
        from desktop_app.core.library.parsers.sheets import parse_xlsx

        sections = parse_xlsx(path)
    elif suffix in CSV_SUFFIXES:
        from desktop_app.core.library.parsers.sheets import parse_csv

        sections = parse_csv(path)
    elif suffix in EPUB_SUFFIXES:
        from desktop_app.core.library.parsers.epub import parse_epub

        sections = parse_epub(path)
    else:
        from desktop_app.core.library.parsers.text import parse_text_file

        sections = parse_text_file(path)
    if not sections:
        raise ParseError(reasons.EMPTY)
    return sections
