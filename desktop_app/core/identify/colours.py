"""Colours of a photo's subject, computed from pixels, and the colours notes attribute to theirs:
a visual description without a vision LLM, and what the no-LLM vote compares.

The subject is assumed to be near the centre and to differ from the background at the borders:
each pixel is weighted by a centre Gaussian times its distance (in Lab) from the border colours, so
sky, foliage and walls fade out. Pixels are then named with a small set of basic colour names
(hue/saturation/value rules) and the shares become a phrase such as
"red, yellow and blue plumage, pale face".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image

from desktop_app.core.identify.texts import (
    SEEN_BIRD,
    SEEN_BIRD_FACE,
    SEEN_SUBJECT,
    SEEN_SUBJECT_FACE,
    SUGGESTS,
)
from desktop_app.core.messages import Message, message

if TYPE_CHECKING:
    from desktop_app.core.identify.classifier import LabelScore

SIZE = 64  # analysis resolution: colour shares do not need more pixels
COLOUR_NAMES = (
    "red", "orange", "yellow", "green", "blue", "purple", "pink", "brown", "black", "grey", "white",
)  # fmt: skip

# Words in species notes that name (or imply) one of the basic colour names.
_COLOUR_WORDS: dict[str, tuple[str, ...]] = {
    "red": ("red", "scarlet", "crimson", "vermilion", "maroon", "红", "赤"),
    "orange": ("orange", "apricot", "salmon", "橙", "橘"),
    "yellow": ("yellow", "golden", "gold", "sulphur", "sulfur", "lemon", "黄"),
    "green": ("green", "olive", "emerald", "绿"),
    "blue": ("blue", "turquoise", "cobalt", "hyacinth", "蓝"),
    "purple": ("purple", "violet", "紫"),
    "pink": ("pink", "rose", "rosy", "粉"),
    "brown": ("brown", "chestnut", "rufous", "tan", "棕", "褐"),
    "black": ("black", "sooty", "黑"),
    "grey": ("grey", "gray", "slate", "silver", "ash", "灰"),
    "white": ("white", "cream", "ivory", "白"),
}
_WORD_RE = {
    name: re.compile("|".join(rf"\b{re.escape(w)}\b" if w.isascii() else re.escape(w) for w in words), re.I)
    for name, words in _COLOUR_WORDS.items()
}
_CLAUSE = re.compile(r"[.;:,()\n。；：，（）]+")
_NEGATION = re.compile(r"\b(no|not|without|unlike|lacks?|instead|never)\b|无|没有|不是", re.I)


@dataclass
class ColourProfile:
    shares: dict[str, float]  # colour name -> share of the subject's weight, descending
    face: str = ""  # "pale" | "dark" | "" (the top-centre region of the subject)

    def names(self, min_share: float = 0.08, limit: int = 4) -> list[str]:
        """The colours that make up a noticeable part of the subject, most prominent first."""
        picked = [n for n, s in self.shares.items() if s >= min_share][:limit]
        return picked or list(self.shares)[:1]

    def colour_list(self) -> str:
        """e.g. "red, yellow and blue" ("" without colours)."""
        names = self.names()
        return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)

    def describe(self, noun: str = "plumage") -> str:
        """e.g. "red, yellow and blue plumage, pale face"."""
        if not self.names():
            return ""
        return f"{self.colour_list()} {noun}" + (f", {self.face} face" if self.face else "")


_SORTED_NAMES = np.array(sorted(COLOUR_NAMES))
_SORTED_TO_INDEX = np.array([COLOUR_NAMES.index(n) for n in _SORTED_NAMES])


def _rgb_to_hsv(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """rgb in 0..1 -> hue in degrees, saturation and value in 0..1."""
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    mx, mn = rgb.max(-1), rgb.min(-1)
    delta = mx - mn
    safe = np.where(delta == 0, 1.0, delta)
    h = np.where(mx == r, ((g - b) / safe) % 6, np.where(mx == g, (b - r) / safe + 2, (r - g) / safe + 4))
    h = np.where(delta == 0, 0.0, h * 60.0)
    s = np.where(mx == 0, 0.0, delta / np.where(mx == 0, 1.0, mx))
    return h, s, mx


def _rgb_to_lab(rgb: np.ndarray) -> np.ndarray:
    lin = np.where(rgb > 0.04045, ((rgb + 0.055) / 1.055) ** 2.4, rgb / 12.92)
    m = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = lin @ m.T / np.array([0.9505, 1.0, 1.089])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], -1)


def _name_pixels(h: np.ndarray, s: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Index into COLOUR_NAMES for every pixel (basic-colour rules on HSV)."""
    idx = np.full(h.shape, COLOUR_NAMES.index("grey"))
    chroma = s * v
    dark = v < 0.2
    achromatic = (s < 0.22) | (chroma < 0.12)
    idx[achromatic & (v >= 0.75)] = COLOUR_NAMES.index("white")
    idx[achromatic & (v < 0.75)] = COLOUR_NAMES.index("grey")
    colour = ~achromatic & ~dark
    hue_name = np.select(
        [h < 15, h < 40, h < 70, h < 165, h < 255, h < 290, h < 335],
        ["red", "orange", "yellow", "green", "blue", "purple", "pink"],
        default="red",
    )
    named = np.searchsorted(_SORTED_NAMES, hue_name)
    named = _SORTED_TO_INDEX[named]
    idx[colour] = named[colour]
    # Dark or desaturated warm hues read as brown; light desaturated reds read as pink.
    warm = colour & (h < 50)
    idx[warm & (v < 0.55) & (s > 0.3)] = COLOUR_NAMES.index("brown")
    idx[colour & ((h < 15) | (h >= 335)) & (s < 0.5) & (v > 0.7)] = COLOUR_NAMES.index("pink")
    idx[dark] = COLOUR_NAMES.index("black")
    return idx


def subject_weights(rgb: np.ndarray, saliency: np.ndarray | None = None) -> np.ndarray:
    """Per-pixel weight of belonging to the subject: a subject prior x distance from border colours.

    The prior is the classifier's activation map when given (it finds off-centre subjects), else
    a centre Gaussian.
    """
    hgt, wid = rgb.shape[:2]
    if saliency is not None and saliency.size:
        sal = Image.fromarray((np.clip(saliency, 0, 1) * 255).astype(np.uint8), "L")
        prior = np.asarray(sal.resize((wid, hgt), Image.BILINEAR), dtype=np.float64) / 255.0
        prior = 0.05 + prior**1.5  # sharpen, but never zero out a pixel completely
    else:
        yy, xx = np.mgrid[0:hgt, 0:wid]
        cy, cx = (hgt - 1) / 2, (wid - 1) / 2
        prior = np.exp(-(((yy - cy) / (0.35 * hgt)) ** 2 + ((xx - cx) / (0.35 * wid)) ** 2) / 2)
    lab = _rgb_to_lab(rgb)
    band = max(2, min(hgt, wid) // 12)
    border = np.concatenate(
        [
            lab[:band].reshape(-1, 3),
            lab[-band:].reshape(-1, 3),
            lab[:, :band].reshape(-1, 3),
            lab[:, -band:].reshape(-1, 3),
        ]
    )
    # Distance to the nearest of a sample of border pixels: backgrounds are often two-toned
    # (sky + branch, leaves + shadow), so one mean colour would not do.
    sample = border[np.linspace(0, len(border) - 1, num=min(64, len(border))).astype(int)]
    # Squared distances as |a|^2 + |b|^2 - 2ab: one small matrix product instead of a
    # (pixels x samples x 3) array (18 -> <1 ms for a 64-px thumbnail).
    flat = lab.reshape(-1, 3)
    d2 = (flat**2).sum(1)[:, None] + (sample**2).sum(1)[None] - 2.0 * (flat @ sample.T)
    dist = np.sqrt(np.clip(d2.min(-1), 0.0, None)).reshape(hgt, wid)
    background = 1.0 - np.clip(dist / 20.0, 0.0, 1.0)  # within ~20 Lab units of a border colour
    return prior * (1.0 - 0.95 * background)


def colour_profile(img: Image.Image, saliency: np.ndarray | None = None) -> ColourProfile:
    """Colour shares of the subject of an RGB image (``saliency``: see subject_weights)."""
    small = img.convert("RGB")
    small.thumbnail((SIZE, SIZE), Image.BILINEAR)
    rgb = np.asarray(small, dtype=np.float64) / 255.0
    weights = subject_weights(rgb, saliency)
    h, s, v = _rgb_to_hsv(rgb)
    idx = _name_pixels(h, s, v)
    total = weights.sum() or 1.0
    counts = np.bincount(idx.ravel(), weights=weights.ravel(), minlength=len(COLOUR_NAMES)) / total
    order = np.argsort(-counts)
    shares = {COLOUR_NAMES[i]: round(float(counts[i]), 4) for i in order if counts[i] > 0}
    return ColourProfile(shares, _face(v, s, weights))


def _face(v: np.ndarray, s: np.ndarray, weights: np.ndarray) -> str:
    """Brightness of the upper-central subject area relative to the whole subject ("pale"/"dark")."""
    hgt, wid = v.shape
    region = (slice(int(hgt * 0.15), int(hgt * 0.45)), slice(int(wid * 0.3), int(wid * 0.7)))
    w = weights[region]
    if w.sum() < 1e-6:
        return ""
    face_light = float((v[region] * (1 - s[region]) * w).sum() / w.sum())
    body_light = float((v * (1 - s) * weights).sum() / (weights.sum() or 1.0))
    if face_light > 0.62 and face_light > body_light + 0.08:
        return "pale"
    if face_light < 0.22 and face_light < body_light - 0.08:
        return "dark"
    return ""


def describe(profile: ColourProfile, labels: Sequence[LabelScore]) -> Message:
    """The visual description: subject colours plus what the classifier thinks it is (a message the
    window shows in its language; searched as its English)."""
    birdish = sum(lab.score for lab in labels if lab.group in ("bird", "parrot")) >= 0.3
    if profile.face:
        code = SEEN_BIRD_FACE if birdish else SEEN_SUBJECT_FACE
    else:
        code = SEEN_BIRD if birdish else SEEN_SUBJECT
    seen = message(code, colours=profile.colour_list(), face=profile.face)
    top = [f"{lab.name} ({lab.score:.0%})" for lab in labels[:3] if lab.score >= 0.05]
    if top:
        return message(SUGGESTS, seen=seen, labels=", ".join(top))
    return seen


def observed_colours(text: str) -> set[str]:
    """Colour names a note attributes to its subject (clauses with a negation are skipped:
    "no yellow crest" does not document yellow)."""
    found: set[str] = set()
    for clause in _CLAUSE.split(text):
        if clause.strip() and not _NEGATION.search(clause):
            found.update(name for name, rx in _WORD_RE.items() if rx.search(clause))
    return found
