"""The most specific subject a photo supports when the classifier names a class, not a species.

ImageNet knows "macaw", "cockatoo", "lorikeet"; a knowledge base may hold fifteen macaw notes. When
the classifier's label is such a class (its head word, "macaw" of "Scarlet Macaw", is shared by two
or more species notes, or in Chinese their names end with the label's Chinese name, 金刚鹦鹉), the
class's notes are ranked by how well the colours seen in the photo (colours.py) fit the colours
each note gives its subject (its colour field when it has one, else its text), weighting a colour by
where the note puts it (the first clause of a description names the dominant colours). The same
rule holds for every photo and every class: nothing here knows a species.

The fit is weak evidence (the colours of a photo separate the fourteen macaws of the repository's
notes one time in three, five times better than chance, measured on ../shared/data/images/parrots
with the reference photos hidden: docs/identify-benchmarks.md), so the badge is calibrated on that:
the probability in what is named is the class's probability times the fit's softmax share, and when
the two best fits are nearly equal nothing narrows the class (``narrowed`` False): the card lists
what it could be and a follow-up question asks which.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from desktop_app.core.events import Candidate
from desktop_app.core.identify.colours import _NEGATION, _WORD_RE, COLOUR_NAMES, ColourProfile
from desktop_app.core.identify.names import GENERIC, NAME_LINES, english_title, name_key, notes_about
from desktop_app.core.library.documents import Hit
from desktop_app.core.library.languages import has_cjk

if TYPE_CHECKING:
    from desktop_app.core.identify.classifier import LabelScore

MIN_NOTES = 2  # a class shared by fewer notes is not generic: the one note is named as it is
TIE = 0.01  # cosine fits closer than this: the colours do not tell the two apart
TEMPERATURE = 0.15  # softmax temperature of the fits: the named share then averages the top-1 accuracy
# A lower class of the top 5 taken when the best guess has no notes: a real option, one in ten at
# least and not far below the best guess (a quarter of it); the owl's lower classes are all uncovered.
NEXT_MIN = 0.10
NEXT_RATIO = 0.25

_COLOUR_FIELD = re.compile(
    r"^\s*(?:[-*•]\s*)?(?:\*\*)?(?:colou?rs?|plumage|appearance|羽色|颜色|体色|外观)(?:\*\*)?\s*[:：]"
    r"(?:\*\*)?\s*(.+)$",
    re.I | re.M,
)
_NAME_FIELD = re.compile(
    r"^\s*(?:[-*•]\s*)?(?:\*\*)?(?:english(?: name)?|英文名?|chinese|中文名?|also|别名)(?:\*\*)?\s*[:：]\s*(.+)$",
    re.I | re.M,
)
_BOLD_LINE = re.compile(r"^\s*#.*$", re.M)
_WHOLE = re.compile(r"\b(body|all over|mostly|plumage|whole|overall)\b|全身|通体|大多|主要", re.I)


@dataclass
class Fit:
    """One note of the class, with how well the photo's colours fit what it says."""

    title: str  # the note's name in its own language ("Scarlet Macaw", "绯红金刚鹦鹉")
    source: str
    fit: float  # cosine of the photo's colour shares and the note's weighted colours
    probability: float = 0.0  # the fit's softmax share among the class's notes
    colours: list[str] = field(default_factory=list)  # colours seen that the note gives, most seen first
    hit: Hit | None = None


@dataclass
class ClassRanking:
    """The notes of a generic class ranked by fit; ``narrowed``: the best fits clearly best."""

    label: str  # the classifier's class ("macaw")
    score: float  # the classifier's probability of the class
    fits: list[Fit]
    # When the classifier's best guess is a class no note covers and this one, lower in its top 5,
    # is taken instead: that best guess and its probability (the card says so).
    passed_over: str = ""
    passed_score: float = 0.0

    @property
    def narrowed(self) -> bool:
        return len(self.fits) < 2 or self.fits[0].fit - self.fits[1].fit >= TIE

    @property
    def best(self) -> Fit:
        return self.fits[0]

    def confidence(self) -> float:
        """The probability that what is named is right: the class's times the best fit's share."""
        return self.score * self.fits[0].probability

    def tied(self, most: int = 4) -> list[Fit]:
        """The notes within ``TIE`` of the best (what the photo could be), at most ``most``."""
        return [f for f in self.fits if self.fits[0].fit - f.fit < TIE][:most]


def _names(hit: Hit) -> tuple[str, list[str]]:
    """A note's title and every name it gives its subject (title, English / Chinese name lines)."""
    title = (hit.heading_path[0] if hit.heading_path else "").strip()
    names = [english_title(title) or title]
    names += [
        p.strip()
        for m in _NAME_FIELD.finditer(hit.text[:600])
        for p in re.split(r"[,，;；/、(（)）]", m.group(1))
    ]
    return names[0], [n.strip(" .。*") for n in names if n.strip(" .。*")]


def class_notes(label: str, zh: str, notes: Sequence[Hit]) -> list[Hit]:
    """The species notes (first chunks) of the class ``label`` names: an English name whose head
    word is the label's ("Scarlet Macaw" for "macaw", "Sulphur-crested Cockatoo" for
    "sulphur-crested cockatoo"), or a Chinese name ending with ``zh`` (the label's Chinese name)."""
    words = name_key(label).split()
    if not words:
        return []
    head = words[-1]
    out: dict[str, Hit] = {}
    for h in notes:
        _title, names = _names(h)
        for n in names:
            if has_cjk(n):
                hit = bool(zh) and n.endswith(zh) and n != zh
            else:
                key = name_key(n).split()
                hit = bool(key) and key[-1] == head and len(key) > 1
            if hit:
                out.setdefault(h.source, h)
                break
    return list(out.values())


def colour_text(text: str) -> str:
    """What a note says of its subject's colours: its colour field, else its text without its title
    and name lines (a Chinese name such as 绯红 must not count as a colour seen)."""
    found = [m.group(1) for m in _COLOUR_FIELD.finditer(text)]
    if found:
        return "; ".join(found)
    return NAME_LINES.sub("", _BOLD_LINE.sub("", text))


def colour_weights(text: str) -> np.ndarray:
    """The colours a description gives, weighted by place: 1/(1+i) for its i-th clause, doubled
    where the clause speaks of the whole bird ("red body", "blue all over"); negated parts skipped."""
    v = np.zeros(len(COLOUR_NAMES))
    clauses = [c for c in re.split(r"[;.。；]", text) if c.strip()]
    for i, clause in enumerate(clauses):
        for part in re.split(r"[,，、]", clause):
            if not part.strip() or _NEGATION.search(part):
                continue
            w = (2.0 if _WHOLE.search(part) else 1.0) / (1 + i)
            for j, name in enumerate(COLOUR_NAMES):
                if _WORD_RE[name].search(part):
                    v[j] = max(v[j], w)
    return v


def fit_of(seen: np.ndarray, weights: np.ndarray) -> float:
    """How well a note's weighted colours fit the photo's colour shares (cosine)."""
    norm = float(np.linalg.norm(weights)) * float(np.linalg.norm(seen))
    return float(seen @ weights / norm) if norm else 0.0


def rank_class(
    label: str,
    zh: str,
    score: float,
    profile: ColourProfile,
    notes: Sequence[Hit],
    min_notes: int = MIN_NOTES,
    members: Sequence[Hit] | None = None,
) -> ClassRanking | None:
    """The class's notes (``members``, default ``class_notes``) ranked by colour fit; None when
    ``label`` is not a class shared by ``min_notes`` notes or the photo has no colours."""
    members = list(members) if members is not None else class_notes(label, zh, notes)
    seen = np.array([profile.shares.get(n, 0.0) for n in COLOUR_NAMES])
    if len(members) < min_notes or not seen.any():
        return None
    fits = []
    for h in members:
        weights = colour_weights(colour_text(h.text))
        fit = fit_of(seen, weights)
        given = [n for n in profile.names(min_share=0.05, limit=5) if weights[COLOUR_NAMES.index(n)] > 0]
        fits.append(Fit(_names(h)[0], h.source, fit, colours=given, hit=h))
    fits.sort(key=lambda f: (-f.fit, f.title))
    logits = np.array([f.fit for f in fits]) / TEMPERATURE
    p = np.exp(logits - logits.max())
    p /= p.sum()
    for f, share in zip(fits, p, strict=True):
        f.probability = float(share)
    return ClassRanking(label, score, fits)


def specific_candidates(ranking: ClassRanking, most: int = 3) -> list[Candidate]:
    """The best-fitting notes as candidates (source "notes"), scored by the confidence in each."""
    return [Candidate(f.title, round(ranking.score * f.probability, 4), "notes") for f in ranking.fits[:most]]


def covered_class(
    label: str, zh: str, score: float, profile: ColourProfile, notes: Sequence[Hit]
) -> ClassRanking | None:
    """The notes of a class the notes cover, ranked by fit: the notes sharing its head word (one
    is enough), else the one note about it by name; None when no note covers it."""
    ranking = rank_class(label, zh, score, profile, notes, min_notes=1)
    if ranking is None:
        about = notes_about(notes, label, min_level=GENERIC)
        if about:
            ranking = rank_class(label, zh, score, profile, notes, min_notes=1, members=about[:1])
    return ranking


def next_covered_class(
    labels: Sequence[LabelScore], profile: ColourProfile, notes: Sequence[Hit]
) -> ClassRanking | None:
    """When the classifier's best guess is a class no note covers ("kite"), the first lower class
    of its top 5 that the notes cover with ``NEXT_MIN`` and ``NEXT_RATIO`` of the best guess's
    probability, its notes ranked by fit (``passed_over`` names the best guess); else None."""
    if not labels or not notes:
        return None
    top = labels[0]
    if class_notes(top.name, top.zh, notes) or notes_about(notes, top.name, min_level=GENERIC):
        return None
    for lab in labels[1:5]:
        if lab.score < NEXT_MIN or lab.score < NEXT_RATIO * top.score:
            break  # best first: the rest are lower still
        ranking = covered_class(lab.name, lab.zh, lab.score, profile, notes)
        if ranking is not None:
            ranking.passed_over, ranking.passed_score = top.name, top.score
            return ranking
    return None
