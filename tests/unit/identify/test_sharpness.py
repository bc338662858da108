"""A photo is "blurry" by a measure (variance of the Laplacian), not by the flow's doubt."""

from __future__ import annotations

from PIL import Image, ImageFilter

from desktop_app.core.identify.sharpness import BLURRY_BELOW, is_blurry, laplacian_variance


def test_a_sharp_shared_photo_is_not_blurry_and_its_blurred_copy_is(shared_data):
    img = Image.open(shared_data / "images" / "parrots" / "cokatoo_galah" / "Galah.jpg").convert("RGB")
    assert not is_blurry(img)
    blurred = img.copy()
    blurred.thumbnail((384, 384))
    blurred = blurred.filter(ImageFilter.GaussianBlur(2))
    assert is_blurry(blurred)
    assert laplacian_variance(blurred) < BLURRY_BELOW <= laplacian_variance(img)


def test_sharpness_does_not_depend_on_the_photos_size(shared_data):
    img = Image.open(shared_data / "images" / "coral" / "parrot.jpg").convert("RGB")
    big = img.resize((img.width * 2, img.height * 2), Image.LANCZOS)
    assert abs(laplacian_variance(big) - laplacian_variance(img)) < 0.5 * laplacian_variance(img)


def test_a_flat_or_tiny_image_counts_as_blurry():
    assert is_blurry(Image.new("RGB", (400, 300), (200, 40, 40)))
    assert laplacian_variance(Image.new("RGB", (2, 2))) == 0.0
