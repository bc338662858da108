"""Image files that hold text (a screenshot, a photo or scan of a page), read as documents by OCR.

The rule (README, "Documents"): an image under a folder named like a photo folder
(``PHOTO_FOLDERS``: photos, images, gallery, 照片, ...) is a reference photo and is never read.
Any other image is read by OCR when it is indexed: if it holds at least ``MIN_TEXT_WEIGHT``
letters and digits read with confidence (a CJK character counts two), it is a text document and
not a reference photo; otherwise (a parrot, a watermark, a sign in the background) it stays a
reference photo, as every image was before OCR. On the parrot photos of the shared data OCR reads
at most 4 characters, at confidence below 0.65; a screenshot or a page holds hundreds.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from desktop_app.core.library import reasons
from desktop_app.core.library.documents import ParseError, Section

if TYPE_CHECKING:
    from desktop_app.core.library.ocr import OcrJob

# Folder names that say "these are photos" (the gallery also never takes them as a photo's label).
PHOTO_FOLDERS = frozenset({
    "photos", "photo", "images", "image", "pictures", "picture", "pics", "img", "imgs", "gallery",
    "reference", "references", "refs", "samples", "照片", "图片", "图像", "相册",
})  # fmt: skip
MIN_TEXT_WEIGHT = 40
# JPEGs are decoded at a reduced scale down to this short side: OCR shrinks larger images anyway.
_MIN_SIDE = 1500


def in_photo_folder(rel: str) -> bool:
    """Whether a file (path relative to the knowledge folder) lies under a photo folder."""
    return any(part.lower() in PHOTO_FOLDERS for part in PurePosixPath(rel).parts[:-1])


def parse_image(path: Path, ocr: OcrJob) -> list[Section]:
    """The text of an image as one section; ParseError when it holds too little (a photo)."""
    from desktop_app.core.library.images import load_image
    from desktop_app.core.library.ocr import engine, without_jpeg_ringing
    from desktop_app.core.library.parsers.pdf import normalize_text

    image = load_image(path, min_side=_MIN_SIDE)  # ParseError for bombs, truncated files, non-images
    if path.suffix.lower() in (".jpg", ".jpeg"):
        image = without_jpeg_ringing(image)
    ocr.page(1, 1)
    page = engine().read(image)
    if page.text_weight < MIN_TEXT_WEIGHT:
        raise ParseError(reasons.IMAGE_TOO_LITTLE_TEXT, weight=page.text_weight, minimum=MIN_TEXT_WEIGHT)
    return [Section(text=normalize_text(page.text), ocr=True)]
