"""Is a photo measurably blurry? The variance of its Laplacian (the classic focus measure), taken on
the photo scaled to a fixed size so that large and small photos are measured alike.

Threshold (docs/identify-benchmarks.md, "Sharpness"): on the 265 readable photos of
../shared/data/images/parrots and coral/parrot.jpg, scaled to 384 px, the variance is 85 or more
(1st percentile 115, median 781); the same photos blurred (Gaussian, sigma 1.5 px) give 67 or less at
the 99th percentile (median 19), sigma 3 px at most 8. Under 75 is blurry: no shared photo is.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

SIDE = 384  # the long side the photo is measured at
BLURRY_BELOW = 75.0


def laplacian_variance(img: Image.Image, side: int = SIDE) -> float:
    """The variance of the 4-neighbour Laplacian of the photo's grey levels at ``side`` px."""
    grey = img.convert("L")
    grey.thumbnail((side, side))
    a = np.asarray(grey, dtype=np.float32)
    if a.shape[0] < 3 or a.shape[1] < 3:
        return 0.0
    lap = a[1:-1, :-2] + a[1:-1, 2:] + a[:-2, 1:-1] + a[2:, 1:-1] - 4 * a[1:-1, 1:-1]
    return float(lap.var())


def is_blurry(img: Image.Image) -> bool:
    """True when the photo's Laplacian variance is under ``BLURRY_BELOW``."""
    return laplacian_variance(img) < BLURRY_BELOW
