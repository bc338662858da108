"""OCR speed and accuracy on pages of known text: ``kdesk bench ocr``.

Paragraphs of real text (Chinese: CMRC 2018 dev, English: SciFact abstracts, both from
``../shared/data/retrieval``) are drawn by Pillow in Noto Sans CJK (the ``noto-cjk-sans-otc``
package, a dev dependency) as A4 pages at 200 dpi, 11 pt, and saved as image-only PDFs the two
ways scanners write them: grey JPEG (``grey``) and black-and-white CCITT G4 (``bw``). Each PDF then
goes through the app's own path (``parse_pdf`` with an ``OcrJob``: PDFium gives each page's
picture, RapidOCR reads it).

- characters/s: characters of the reference text (whitespace left out) per second of that path,
  the engine's one-time load not counted (it is reported apart);
- character accuracy: 1 - edit distance / reference length, over the texts NFKC-folded (full- and
  half-width punctuation alike) with whitespace left out;
- word accuracy (English): the same over words, since a lost space costs a search its word.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PIL import Image, ImageFont

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "retrieval"
DPI = 200
A4 = (1654, 2339)  # pixels at 200 dpi
_WORD = re.compile(r"[^\W_]+")
_CJK = "\u3000-\u9fff\uff00-\uffef"
_TOKENS = re.compile(rf"[{_CJK}]|[^\s{_CJK}]+\s*|\s+")  # a CJK character, or a word and its spaces


def cjk_font(size: int) -> ImageFont.FreeTypeFont:
    """Noto Sans CJK SC at ``size`` pixels, from the noto-cjk-sans-otc package (the dev extra)."""
    from importlib.resources import files

    from PIL import ImageFont

    from desktop_app.core.packages import require

    require("noto_cjk_sans_otc", "drawing the OCR benchmark's pages")
    path = files("noto_cjk_sans_otc").joinpath("NotoSansCJK-Regular.ttc")
    return ImageFont.truetype(str(path), size, index=2)  # the collection's 3rd face: Simplified Chinese


def _wrap(text: str, font: ImageFont.FreeTypeFont, width: int) -> list[str]:
    """Lines no wider than ``width``: broken between words, or anywhere in CJK text."""
    lines: list[str] = []
    line = ""
    for token in _TOKENS.findall(text):
        if line and font.getlength((line + token).rstrip()) > width:
            lines.append(line.rstrip())
            line = token.lstrip()
        else:
            line += token
    if line.strip():
        lines.append(line.rstrip())
    return lines


def draw_pages(
    paragraphs: Sequence[str], *, size: tuple[int, int] = A4, font_px: int = 31, margin: int = 150
) -> list[tuple[Image.Image, str]]:
    """Pages with the paragraphs drawn black on white, each with the text it holds (its lines
    joined by newlines, paragraphs by blank lines); a paragraph that does not fit goes on."""
    from PIL import Image, ImageDraw

    font = cjk_font(font_px)
    step = int(font_px * 1.5)
    lines: list[str] = []
    for paragraph in paragraphs:
        lines += [*_wrap(" ".join(paragraph.split()), font, size[0] - 2 * margin), ""]
    pages = []
    while lines:
        image = Image.new("L", size, 255)
        pen = ImageDraw.Draw(image)
        y, drawn = margin, []
        while lines and y + step <= size[1] - margin:
            line = lines.pop(0)
            pen.text((margin, y), line, font=font, fill=0)
            drawn.append(line)
            y += step
        pages.append((image, "\n".join(drawn).strip()))
    return pages


def save_image_pdf(images: Sequence[Image.Image], path: Path, dpi: int = DPI, bilevel: bool = False) -> None:
    """An image-only PDF (no text layer), one image per page, as a scanner writes it: Pillow stores
    grey pages as JPEG, ``bilevel`` ones (thresholded) as CCITT G4."""
    if bilevel:
        images = [image.convert("1") for image in images]
    images[0].save(path, "PDF", resolution=dpi, save_all=True, append_images=list(images[1:]))


def edit_distance(a: Sequence[Any], b: Sequence[Any]) -> int:
    """Levenshtein distance (insertions, deletions, substitutions)."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def _fold(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split())


def char_accuracy(read: str, reference: str) -> float:
    ref = _fold(reference)
    return 1.0 - edit_distance(_fold(read), ref) / max(len(ref), 1)


def word_accuracy(read: str, reference: str) -> float:
    ref = _WORD.findall(reference.lower())
    return 1.0 - edit_distance(_WORD.findall(read.lower()), ref) / max(len(ref), 1)


def paragraphs(lang: str, count: int) -> list[str]:
    """The first ``count`` paragraphs of the Chinese (CMRC) or English (SciFact) corpus."""
    name = {"zh": "cmrc2018_dev", "en": "scifact"}[lang]
    out = []
    with open(DATA / name / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            text = json.loads(line)["text"].strip()
            if text:
                out.append(text)
            if len(out) == count:
                break
    return out


def run(
    langs: Sequence[str] = ("zh", "en"), pages: int = 2, modes: Sequence[str] = ("grey", "bw")
) -> dict[str, Any]:
    from desktop_app.core.library.ocr import OcrJob, engine
    from desktop_app.core.library.parsers.pdf import parse_pdf

    start = time.perf_counter()
    engine()
    report: dict[str, Any] = {"engine_load_s": round(time.perf_counter() - start, 2), "runs": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for lang, mode in ((lang, mode) for lang in langs for mode in modes):
            drawn = draw_pages(paragraphs(lang, 12))[:pages]
            pdf = Path(tmp) / f"{lang}-{mode}.pdf"
            save_image_pdf([image for image, _ in drawn], pdf, bilevel=mode == "bw")
            start = time.perf_counter()
            sections = parse_pdf(pdf, OcrJob(pdf.name, max_pages=0))
            seconds = time.perf_counter() - start
            by_page = {
                n: "\n".join(s.text for s in sections if s.page == n) for n in range(1, len(drawn) + 1)
            }
            reference = "\n".join(text for _, text in drawn)
            read = "\n".join(by_page.values())
            row = {
                "pages": len(drawn),
                "characters": len(_fold(reference)),
                "seconds": round(seconds, 2),
                "characters_per_s": round(len(_fold(reference)) / seconds, 1),
                "char_accuracy": round(char_accuracy(read, reference), 4),
                "page_char_accuracy": [
                    round(char_accuracy(by_page[i + 1], t), 4) for i, (_, t) in enumerate(drawn)
                ],
            }
            if lang == "en":
                row["word_accuracy"] = round(word_accuracy(read, reference), 4)
            report["runs"][f"{lang} {mode}"] = row
    report["load_average"] = [round(x, 2) for x in os.getloadavg()]
    report["cpus"] = os.cpu_count()
    return report
