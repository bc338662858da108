"""Safe image loading: every image the app looks at (a photo to identify, an image to read by OCR)
goes through ``load_image``.

Photos come from users, so they are treated as untrusted: decompression bombs are refused before
any pixel is decoded, truncated or corrupt files raise ``ParseError`` with a readable message, and
whatever the storage (EXIF-rotated JPEG, CMYK, palette with transparency, 16-bit PNG, multi-frame
GIF/TIFF) the result is an upright 8-bit RGB image.
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from desktop_app.core.library.documents import ParseError
from desktop_app.core.library.reasons import (
    IMAGE_BOMB,
    IMAGE_CANNOT_OPEN,
    IMAGE_CORRUPT,
    IMAGE_EMPTY,
    IMAGE_NOT_IMAGE,
    IMAGE_TOO_LARGE,
    IMAGE_TRUNCATED,
)

# 40 megapixels is well above any phone camera's output and far below what exhausts memory.
DEFAULT_MAX_PIXELS = 40_000_000
BACKGROUND = (255, 255, 255)  # transparent areas are composited onto white

ImageSource = str | Path | bytes | Image.Image


def load_image(
    source: ImageSource, *, max_pixels: int = DEFAULT_MAX_PIXELS, min_side: int | None = None
) -> Image.Image:
    """Open ``source`` (a path, raw bytes or a PIL image) as an upright RGB image.

    ``min_side``: the caller only needs that many pixels on the short side, so JPEGs may be
    decoded at a reduced scale (much faster for camera-sized photos). Raises ``ParseError``.
    """
    if isinstance(source, Image.Image):
        return _to_rgb(_upright(source))
    try:
        fp = io.BytesIO(source) if isinstance(source, bytes) else open(source, "rb")  # noqa: SIM115
    except OSError as exc:
        raise ParseError(IMAGE_CANNOT_OPEN, reason=exc.strerror or exc) from exc
    with fp:
        try:
            with warnings.catch_warnings():
                # Pillow only warns between MAX_IMAGE_PIXELS and twice that; refuse both alike.
                warnings.simplefilter("error", Image.DecompressionBombWarning)
                img = Image.open(fp)
                width, height = img.size
                if width * height > max_pixels:
                    raise ParseError(
                        IMAGE_TOO_LARGE,
                        width=width,
                        height=height,
                        megapixels=width * height / 1e6,
                        limit=max_pixels / 1e6,
                    )
                if getattr(img, "n_frames", 1) > 1:
                    img.seek(0)  # animated GIF / multi-page TIFF: the first frame stands for the file
                if min_side and img.format == "JPEG":
                    scale = min(width, height) / min_side
                    if scale >= 2:
                        img.draft("RGB", (int(width / scale) + 1, int(height / scale) + 1))
                img.load()
        except ParseError:
            raise
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise ParseError(IMAGE_BOMB, error=exc) from exc
        except UnidentifiedImageError as exc:
            if fp.seek(0, io.SEEK_END) == 0:
                raise ParseError(IMAGE_EMPTY) from exc
            raise ParseError(IMAGE_NOT_IMAGE) from exc
        except (OSError, SyntaxError, ValueError, EOFError) as exc:
            text = str(exc)
            if "truncated" in text.lower() or isinstance(exc, EOFError):  # Pillow: "Truncated File Read"
                raise ParseError(IMAGE_TRUNCATED) from exc
            raise ParseError(IMAGE_CORRUPT, error=text) from exc
        return _to_rgb(_upright(img))


def _upright(img: Image.Image) -> Image.Image:
    """Apply the EXIF orientation tag so the subject is the right way up."""
    try:
        return ImageOps.exif_transpose(img) or img
    except Exception:  # a broken EXIF block must not lose the photo
        return img


def _to_rgb(img: Image.Image) -> Image.Image:
    """Convert any Pillow mode to 8-bit RGB; alpha is composited onto white."""
    mode = img.mode
    if mode == "RGB":
        return img
    if mode in ("I;16", "I;16B", "I;16L", "I;16N", "I", "F"):
        # 16-bit / 32-bit greyscale: stretch the actual range to 0..255 (a plain convert clips).
        arr = np.asarray(img, dtype=np.float64)
        lo, hi = float(arr.min()), float(arr.max())
        arr = (arr - lo) * (255.0 / (hi - lo)) if hi > lo else np.zeros_like(arr)
        return Image.fromarray(arr.astype(np.uint8), "L").convert("RGB")
    if mode == "P":
        img = img.convert("RGBA") if "transparency" in img.info else img.convert("RGB")
        mode = img.mode
    if mode in ("LA", "La", "PA"):
        img = img.convert("RGBA")
        mode = "RGBA"
    if mode in ("RGBA", "RGBa"):
        base = Image.new("RGB", img.size, BACKGROUND)
        base.paste(img.convert("RGBA"), mask=img.convert("RGBA").getchannel("A"))
        return base
    if mode == "RGB":
        return img
    return img.convert("RGB")  # L, 1, CMYK, YCbCr, LAB, HSV
