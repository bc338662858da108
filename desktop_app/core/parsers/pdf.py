"""PDF with pypdf: one section per page that has a text layer, ``page`` counted from 1.

Pages are read one at a time, so a long PDF costs one page of extracted text at a time on top of
pypdf's own object cache. A page that fails to extract is skipped and recorded in the first
section's metadata; the document fails only when no page gives text.
"""

from __future__ import annotations

import logging
from pathlib import Path

from desktop_app.core.documents import ParseError, Section

log = logging.getLogger(__name__)


def _short(exc: BaseException, limit: int = 120) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def clean_text(text: str) -> str:
    """Drop NULs and lone surrogates that PDF text extraction can produce (they break JSON and Chroma)."""
    if "\x00" in text:
        text = text.replace("\x00", "")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", errors="replace").decode("utf-8")
    return text


def parse_pdf(path: Path) -> list[Section]:
    """Sections of a PDF, one per page with text. Raises ParseError for encrypted, corrupt or scanned files."""
    from pypdf import PasswordType, PdfReader
    from pypdf.errors import DependencyError

    try:
        reader = PdfReader(path, strict=False)
    except OSError as exc:
        raise ParseError(f"unreadable file: {exc.strerror or exc}") from exc
    except (Exception, RecursionError) as exc:
        raise ParseError(f"corrupt PDF: {_short(exc)}") from exc

    if reader.is_encrypted:
        try:
            result = reader.decrypt("")
        except DependencyError as exc:
            raise ParseError("encrypted PDF: the 'cryptography' package is needed to open it") from exc
        except (Exception, RecursionError) as exc:
            # Unsupported or damaged encryption dictionaries end here too.
            raise ParseError(f"encrypted PDF: cannot decrypt ({_short(exc)})") from exc
        if result == PasswordType.NOT_DECRYPTED:
            raise ParseError("encrypted PDF: a password is required")

    try:
        page_count = len(reader.pages)
    except (Exception, RecursionError) as exc:
        raise ParseError(f"corrupt PDF: {_short(exc)}") from exc
    if page_count == 0:
        raise ParseError("empty document: the PDF has no pages")

    sections: list[Section] = []
    without_text: list[int] = []
    page_errors: list[dict[str, object]] = []
    for index in range(page_count):
        number = index + 1
        try:
            text = clean_text(reader.pages[index].extract_text() or "")
        except (Exception, RecursionError) as exc:
            # One bad page (broken content stream, odd font) must not cost the whole document.
            log.debug("page %d of %s failed: %s", number, path, exc)
            page_errors.append({"page": number, "error": _short(exc)})
            continue
        if text.strip():
            sections.append(Section(text=text, page=number))
        else:
            without_text.append(number)

    if not sections:
        if page_errors and not without_text:
            raise ParseError(f"corrupt PDF: no page could be read ({page_errors[0]['error']})")
        raise ParseError(f"no text layer: scanned pages need OCR ({page_count} pages)")

    meta = sections[0].metadata
    meta["total_pages"] = page_count
    if without_text:
        meta["pages_without_text"] = without_text
    if page_errors:
        meta["page_errors"] = page_errors
    return sections
