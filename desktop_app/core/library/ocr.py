"""Text read from pictures: PDF pages without a text layer, and image files that hold text.

The engine is rapidocr-onnxruntime: PaddleOCR's PP-OCRv4 detection and recognition models
(Chinese and English in one), shipped inside its wheel and run on onnxruntime, so nothing is
downloaded at run time. It loads once per process, on the first page that needs it (~0.5 s);
nothing imports this module at start-up. A PDF page's picture comes from pypdfium2 (PDFium inside
its wheel): the scan's own pixels, or the page drawn as a viewer draws it (scanner strips and
tiles, masks, CCITT, JBIG2 and JPEG 2000 images, page rotation; docs/pdf-extraction.md says why
not pypdf's ``page.images``).

Figures (characters/s, accuracy) are in docs/pdf-extraction.md; ``kdesk bench ocr``
measures them.
"""

from __future__ import annotations

import logging
import os
import statistics
import threading
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_app.core.library import reasons
from desktop_app.core.library.documents import ParseError
from desktop_app.core.messages import message
from desktop_app.core.tasks import NullTask, TaskState, check

if TYPE_CHECKING:
    from PIL import Image

log = logging.getLogger(__name__)

# A page is read at the resolution of its scan (the recognizer loses the spaces between English
# words once 11 pt text is shrunk below ~30 px an em, docs/pdf-extraction.md), within these bounds
# when it has to be drawn; RapidOCR may keep this many pixels on the longer side (its default,
# 2000, shrinks an A4 page at 300 dpi to 170 dpi).
DPI_RANGE = (150.0, 300.0)
DEFAULT_DPI = 200.0  # a page whose images PDFium does not see (inside a form XObject deeper down)
MAX_SIDE = 4000
DETECT_SIDE = 1600
# A line read below this confidence is not counted as evidence that an image holds text.
SURE = 0.8
# opencv-python, the GUI build of OpenCV that rapidocr requires (its metadata names it, not the
# headless build), points Qt at its own bundled Qt 5 when imported. A Qt 6 started later in the same
# process (the app's PySide6, a test's) must not look there, so both are put back after the import.
_QT_VARIABLES = ("QT_QPA_PLATFORM_PLUGIN_PATH", "QT_QPA_FONTDIR")

_engine: OcrEngine | None = None
_engine_lock = threading.Lock()
_render_lock = threading.Lock()  # PDFium is not thread-safe


def is_cjk(char: str) -> bool:
    return "\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff" or "\u3040" <= char <= "\u30ff"


@dataclass
class OcrLine:
    text: str
    confidence: float
    box: tuple[float, float, float, float]  # left, top, right, bottom in pixels

    @property
    def height(self) -> float:
        return self.box[3] - self.box[1]

    @property
    def middle(self) -> float:
        return (self.box[1] + self.box[3]) / 2


@dataclass
class OcrPage:
    """What OCR read on one picture, lines in reading order."""

    lines: list[OcrLine] = field(default_factory=list)

    @property
    def text(self) -> str:
        return lines_to_text(self.lines)

    @property
    def text_weight(self) -> int:
        """Letters and digits read with confidence, a CJK character counting two (it carries
        about as much as a short word): how much text a picture holds."""
        return sum(
            2 if is_cjk(ch) else 1
            for line in self.lines
            if line.confidence >= SURE
            for ch in line.text
            if ch.isalnum()
        )


def lines_to_text(lines: list[OcrLine]) -> str:
    """Boxes on one row (their middles within half a line height) joined left to right, rows top to
    bottom, a blank line (the chunker's paragraph break) where rows are further apart than a line."""
    if not lines:
        return ""
    height = statistics.median(line.height for line in lines) or 1.0
    rows: list[list[OcrLine]] = []
    for line in sorted(lines, key=lambda ln: ln.middle):
        if rows and abs(line.middle - rows[-1][0].middle) <= height / 2:
            rows[-1].append(line)
        else:
            rows.append([line])
    out: list[str] = []
    bottom: float | None = None
    for row in rows:
        row.sort(key=lambda ln: ln.box[0])
        text = row[0].text
        for line in row[1:]:
            text += ("" if is_cjk(text[-1:]) and is_cjk(line.text[:1]) else " ") + line.text
        top = min(ln.box[1] for ln in row)
        if out:
            out.append("\n\n" if bottom is not None and top - bottom > height else "\n")
        out.append(text)
        bottom = max(ln.box[3] for ln in row)
    return "".join(out)


class OcrEngine:
    """RapidOCR with the models of its wheel; ``read`` may be called from any thread (one picture
    at a time)."""

    def __init__(self) -> None:
        from desktop_app.core.packages import require

        saved = {name: os.environ.get(name) for name in _QT_VARIABLES}
        try:
            rapidocr = require("rapidocr_onnxruntime", "reading scanned pages and images (OCR)")
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        # Half the cores: OCR runs beside the encoder and the window (and on a busy machine one
        # thread per session was twice as fast as two: onnxruntime's threads spin while they wait).
        threads = max(1, (os.cpu_count() or 2) // 2)
        # Text is found on the page shrunk to DETECT_SIDE, and read from the full-size picture: finding
        # lines on a 300-dpi A4 page at full size cost 4-5x the time for the same text.
        self._ocr = rapidocr.RapidOCR(
            max_side_len=MAX_SIDE,
            det_limit_type="max",
            det_limit_side_len=DETECT_SIDE,
            intra_op_num_threads=threads,
        )
        self._lock = threading.Lock()

    def read(self, image: Image.Image) -> OcrPage:
        with self._lock:
            # No 180-degree line classifier: it turned long upright lines over (character accuracy
            # of an A4 page, zh 0.914 -> 0.992 without it, en 0.876 -> 0.992). Page rotation is
            # the PDF's own (/Rotate, drawn by PDFium) or the photo's EXIF (images.load_image).
            result, _ = self._ocr(image, use_cls=False)
        lines = []
        for box, text, score in result or []:
            text = unicodedata.normalize("NFC", str(text)).strip()
            if text:
                xs, ys = [p[0] for p in box], [p[1] for p in box]
                lines.append(OcrLine(text, float(score), (min(xs), min(ys), max(xs), max(ys))))
        return OcrPage(lines)


def without_jpeg_ringing(image: Image.Image) -> Image.Image:
    """A JPEG-compressed picture through a 3x3 median filter: JPEG's ringing around glyphs costs the
    recognizer the spaces between English words (word accuracy of an A4 page, grey JPEG at 200 dpi:
    0.77 -> 0.95; Chinese unchanged, 0.9924). Not for other pictures: a b/w scan needs none, and the
    median wears thin strokes."""
    from PIL import ImageFilter

    return image.convert("L").filter(ImageFilter.MedianFilter(3))


def engine() -> OcrEngine:
    """The process's one OCR engine, loaded on first use (raises MissingPackage when not installed)."""
    global _engine
    with _engine_lock:
        if _engine is None:
            _engine = OcrEngine()
        return _engine


@dataclass
class OcrJob:
    """OCR allowed for one file: at most ``max_pages`` pages (0: no limit), with progress and
    cancellation through ``task`` (``done`` / ``total``: the batch's file counts, shown unchanged
    while the pages of this file go by)."""

    name: str = ""
    max_pages: int = 200
    task: TaskState = field(default_factory=NullTask)
    done: int = 0
    total: int = 0

    def page(self, number: int, count: int) -> None:
        """Before each page: say which page is read, then stop there if the user cancelled."""
        line = message(reasons.OCR_PAGE, name=self.name, number=number, count=count)
        self.task.progress(self.done, self.total, line)
        check(self.task)

    def check_pages(self, count: int) -> None:
        if self.max_pages > 0 and count > self.max_pages:
            raise ParseError(reasons.OCR_TOO_MANY_PAGES, count=count, limit=self.max_pages)


def render_pdf_pages(path: Path, numbers: list[int]) -> Iterator[tuple[int, Image.Image | str]]:
    """(1-based page number, grey image) for each page, or (number, error) for a page PDFium cannot
    draw; raises ParseError when it cannot open the file at all."""
    from desktop_app.core.packages import require

    pdfium = require("pypdfium2", "reading scanned pages (OCR)")
    with _render_lock:
        try:
            document = pdfium.PdfDocument(str(path))
        except Exception as exc:  # PdfiumError: damaged beyond what PDFium repairs
            raise ParseError(reasons.OCR_CANNOT_RENDER, reason=exc) from exc
    try:
        for number in numbers:
            with _render_lock:
                try:
                    image: Image.Image | str = _render(document[number - 1])
                except Exception as exc:  # one broken page costs that page only
                    image = f"cannot be rendered: {exc}"
            yield number, image
    finally:
        with _render_lock:
            document.close()


def _render(page: Any) -> Image.Image:
    """The page's scan itself when the page is one upright picture covering it, else the page
    drawn by PDFium at its scan's resolution. Drawing resamples a scan by a fraction of a pixel,
    and the recognizer is sensitive to blur between English words (word accuracy on one A4 page:
    0.993 from a b/w scan's own pixels, 0.989 drawn; 0.773 vs 0.745 from a grey JPEG scan)."""
    import pypdfium2.raw as pdfium_c

    try:
        images = list(page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,), max_depth=3))
        width, height = page.get_size()  # points
        if len(images) == 1:
            a, b, c, d, _, _ = images[0].get_matrix().get()
            if b == c == 0 and a > 0 and d > 0 and a * d >= 0.9 * width * height:
                try:
                    scan = images[0].get_bitmap(render=False).to_pil().convert("L")
                except Exception as exc:  # a filter PDFium only decodes while drawing
                    log.debug("scan not taken as is: %s", exc)
                else:
                    if "DCTDecode" in images[0].get_filters():
                        scan = without_jpeg_ringing(scan)
                    scan.thumbnail((MAX_SIDE, MAX_SIDE))
                    return scan.rotate(-page.get_rotation(), expand=True)  # /Rotate is clockwise
        low, high = DPI_RANGE
        dpi = max((m.horizontal_dpi for m in (i.get_metadata() for i in images)), default=DEFAULT_DPI)
        scale = min(min(max(dpi, low), high) / 72, MAX_SIDE / max(width, height, 1.0))
        return page.render(scale=scale, grayscale=True).to_pil()
    finally:
        page.close()
