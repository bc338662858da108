"""Safe image loading: orientation, colour modes, and hostile or broken files."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from desktop_app.core.identify.colours import colour_profile
from desktop_app.core.library.documents import ParseError
from desktop_app.core.library.images import load_image


def _save(img: Image.Image, path: Path, **kw) -> Path:
    img.save(path, **kw)
    return path


def test_exif_orientation_is_applied(tmp_path):
    # A landscape 60x30 image, left half red, tagged "rotate 90 CW" (orientation 6).
    img = Image.new("RGB", (60, 30), (0, 0, 255))
    img.paste((255, 0, 0), (0, 0, 30, 30))
    exif = Image.Exif()
    exif[0x0112] = 6
    path = _save(img, tmp_path / "rotated.jpg", exif=exif.tobytes(), quality=95)
    out = load_image(path)
    assert out.size == (30, 60)  # upright: portrait
    top = np.asarray(out)[5, 15]
    assert top[0] > 200 and top[2] < 60  # the red half is now on top


def test_cmyk_jpeg_becomes_rgb(tmp_path):
    path = _save(Image.new("CMYK", (20, 20), (0, 255, 255, 0)), tmp_path / "cmyk.jpg")
    out = load_image(path)
    assert out.mode == "RGB"
    r, g, b = np.asarray(out)[10, 10]
    assert r > 200 and g < 60 and b < 60


def test_palette_with_transparency_is_composited_on_white(tmp_path):
    img = Image.new("P", (20, 20), 0)
    img.putpalette([255, 0, 0] + [0, 0, 255] + [0] * 762)
    img.paste(1, (0, 0, 10, 20))
    img.info["transparency"] = 0  # palette index 0 (red) is transparent
    path = _save(img, tmp_path / "pal.png", transparency=0)
    out = np.asarray(load_image(path))
    assert tuple(out[10, 15]) == (255, 255, 255)  # the transparent part is white, not red
    assert tuple(out[10, 5]) == (0, 0, 255)


def test_rgba_and_la_alpha_are_composited(tmp_path):
    rgba = Image.new("RGBA", (10, 10), (0, 255, 0, 0))
    assert tuple(np.asarray(load_image(_save(rgba, tmp_path / "a.png")))[5, 5]) == (255, 255, 255)
    la = Image.new("LA", (10, 10), (0, 255))
    assert tuple(np.asarray(load_image(_save(la, tmp_path / "la.png")))[5, 5]) == (0, 0, 0)


def test_sixteen_bit_greyscale_is_stretched_to_8_bit(tmp_path):
    arr = np.tile(np.linspace(1000, 3000, 32, dtype=np.uint16), (8, 1))
    path = _save(Image.fromarray(arr), tmp_path / "deep.png")
    out = np.asarray(load_image(path))
    assert out.dtype == np.uint8 and out.shape == (8, 32, 3)
    assert out[0, 0, 0] == 0 and out[0, -1, 0] == 255  # full range used, not clipped to white


def test_truncated_file_is_rejected_with_a_clear_error(tmp_path):
    buf = io.BytesIO()
    Image.effect_noise((200, 200), 50).convert("RGB").save(buf, "JPEG")
    path = tmp_path / "cut.jpg"
    path.write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
    with pytest.raises(ParseError, match="truncated"):
        load_image(path)


def test_decompression_bomb_is_rejected_before_decoding(tmp_path):
    # A tiny PNG that claims 20000 x 20000 pixels.
    path = _save(Image.new("1", (20000, 20000)), tmp_path / "bomb.png", optimize=True)
    assert path.stat().st_size < 200_000
    with pytest.raises(ParseError, match="too large"):
        load_image(path)
    with pytest.raises(ParseError, match="too large"):
        load_image(_save(Image.new("RGB", (300, 300)), tmp_path / "small.png"), max_pixels=50_000)


def test_empty_and_non_image_files_are_rejected(tmp_path):
    (tmp_path / "empty.jpg").write_bytes(b"")
    (tmp_path / "text.jpg").write_text("not a picture")
    with pytest.raises(ParseError, match="^the image file is empty$"):  # no file name: callers add it
        load_image(tmp_path / "empty.jpg")
    with pytest.raises(ParseError, match="not an image"):
        load_image(tmp_path / "text.jpg")
    with pytest.raises(ParseError, match="cannot open"):
        load_image(tmp_path / "missing.jpg")


def test_animated_gif_uses_the_first_frame(tmp_path):
    frames = [Image.new("RGB", (10, 10), c) for c in ((255, 0, 0), (0, 255, 0))]
    path = tmp_path / "anim.gif"
    frames[0].save(path, save_all=True, append_images=frames[1:])
    r, g, _ = np.asarray(load_image(path))[5, 5]
    assert r > 200 and g < 60


def test_colour_profile_names_the_subject_not_the_background():
    # A red-and-blue "bird" in the middle of green foliage.
    img = Image.new("RGB", (120, 120), (40, 140, 40))
    img.paste((220, 20, 30), (40, 30, 80, 70))
    img.paste((30, 60, 220), (40, 70, 80, 100))
    profile = colour_profile(img)
    names = profile.names()
    assert set(names[:2]) == {"red", "blue"}
    # the background leaks a little at the subject's edges, but far less than its 80% of the pixels
    assert profile.shares.get("green", 0) < 0.5 * min(profile.shares["red"], profile.shares["blue"])
    assert profile.describe().startswith(("red and blue", "blue and red", "red, blue", "blue, red"))
