"""The no-LLM decision: the gallery's ranking, checked against the colours the candidates' notes
document.

Absence of evidence is not evidence against: a candidate without notes keeps its place, and the
reference photos decide when the notes do not separate the contenders. "Uncertain" is kept for a
photo unlike every reference photo (the gallery's "none of these" probability), and even then the
nearest candidates are given as guesses."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from desktop_app.core.events import Candidate, Decision
from desktop_app.core.identify.colours import COLOUR_NAMES, ColourProfile, observed_colours
from desktop_app.core.identify.names import GENERIC, linked, notes_about, pretty_name, species_title
from desktop_app.core.identify.result import UNCERTAIN
from desktop_app.core.identify.texts import (
    CLASSIFIER_POINTS_TO,
    CLASSIFIER_POINTS_TO_NEXT,
    FOLLOWUP,
    FOLLOWUP_PAIR,
    FOLLOWUP_VIEW,
    FOLLOWUP_VIEW_PAIR,
    NEAREST,
    NO_CANDIDATES,
    NO_CLEAR_COLOURS,
    NO_NOTES,
    NO_NOTES_CLASSIFIER,
    NOT_CLOSE,
    NOT_CLOSE_NOTES,
    NOT_YOURS,
    NOTES_MENTION,
    OBSERVED,
    OVERTURNED,
    POINT_TO,
    POINT_TO_NEXT,
    TIED,
)
from desktop_app.core.library.documents import Hit
from desktop_app.core.messages import Message, Text, message

VOTE_CANDIDATES = 4  # candidates whose documents are compared in the no-LLM vote
TIE_MATCH = 0.02  # colour matches closer than this do not separate two tied candidates


@dataclass
class RankedCandidate:
    """One row of ``rank_candidates``: a candidate with the evidence its notes give."""

    candidate: Candidate
    log_score: float
    match: float | None  # how well its notes' colours fit the photo (None: no notes were read)
    documented: set[str]  # colour names its notes attribute to it
    separating: set[str]  # those that not every contender with notes shares (the only evidence)
    docs: list[Hit]  # its notes


def _log(score: float) -> float:
    return math.log(max(float(score), 1e-6))


def _vote_pool(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The candidates the vote compares: the gallery's leading labels (ImageNet's without one)."""
    return [c for c in candidates if c.source == "gallery"][:VOTE_CANDIDATES] or list(
        candidates[:VOTE_CANDIDATES]
    )


def vote_contenders(candidates: Sequence[Candidate], override_margin: float) -> list[str]:
    """The leader and the runner-ups whose score is within ``override_margin`` (log ratio) of it:
    the only candidates the notes could promote (see ``rank_candidates``)."""
    pool = _vote_pool(candidates)
    if not pool:
        return []
    lead = _log(pool[0].score)
    return [pool[0].name] + [c.name for c in pool[1:] if lead - _log(c.score) <= override_margin]


def _colour_match(profile: ColourProfile, text: str, documented: set[str]) -> float:
    """Share of the subject's colour that the notes mention, minus half the share of documented
    colours that are not seen (plus a little when a pale/dark face is both seen and documented).
    0 when nothing is documented."""
    observed = {n: s for n, s in profile.shares.items() if s >= 0.03}
    seen = sum(s for n, s in observed.items() if n in documented)
    unseen = sum(1 for n in documented if n not in observed) / len(documented) if documented else 0.0
    match = seen - 0.5 * unseen
    face = profile.face
    if face and re.search(rf"\b{face}\b[^.]*\b(face|cheek|eye|head)", text, re.I):
        match += 0.1
    return match


def rank_candidates(
    candidates: Sequence[Candidate],
    profile: ColourProfile,
    hits: Sequence[Hit],
    override_margin: float = 0.25,
    evidence_lead: float = 1.0,
    reject: float | None = None,
    reject_uncertain: float = 0.985,
) -> list[RankedCandidate]:
    """Order the leading candidates: the gallery's ranking, checked against the notes.

    Each contender (``vote_contenders``) with notes (a document linked to its name, see
    names.notes_about; a note that merely mentions it does not count) gets ``match``: how well the
    colours that separate it from the other contenders with notes agree with the photo's (see
    ``_colour_match``; a colour every such note mentions separates nothing). Other candidates get
    None. The gallery's order stands unless the leader and a runner-up within ``override_margin``
    (log ratio) both have notes and the runner-up's match is better by at least
    ``evidence_lead``: then it moves to the front. A leader without notes is never overturned:
    missing notes say nothing against it. ``reject`` (the gallery's "none of these" probability)
    at or above ``reject_uncertain`` puts a pseudo-candidate "uncertain" first: the photo is unlike
    every reference photo.
    """
    pool = _vote_pool(candidates)
    # Notes are read for the contenders only: the flow searches their notes on purpose, while a
    # far runner-up's "notes" would be whatever the feature queries happened to return.
    contenders = set(vote_contenders(candidates, override_margin))
    docs = {
        c.name: notes_about(hits, c.name, min_level=GENERIC) if c.name in contenders else [] for c in pool
    }
    documented = {n: observed_colours(" ".join(h.text for h in d)) for n, d in docs.items()}
    with_notes = [documented[c.name] for c in pool if docs[c.name]]
    shared = set.intersection(*with_notes) if len(with_notes) > 1 else set().union(*with_notes)
    rows = []
    for c in pool:
        if not docs[c.name]:
            rows.append(RankedCandidate(c, _log(c.score), None, set(), set(), []))
            continue
        text = " ".join(h.text for h in docs[c.name])
        separating = documented[c.name] - shared
        match = _colour_match(profile, text, separating)
        rows.append(RankedCandidate(c, _log(c.score), match, documented[c.name], separating, docs[c.name]))
    if rows and rows[0].match is not None:
        lead = rows[0]
        best: RankedCandidate | None = None
        for row in rows[1:]:
            if row.match is None or lead.log_score - row.log_score > override_margin:
                continue
            if row.match - lead.match >= evidence_lead and (best is None or row.match > best.match):
                best = row
        if best is not None:
            rows.remove(best)
            rows.insert(0, best)
    if reject is not None and reject >= reject_uncertain:
        none = Candidate(UNCERTAIN, reject, "gallery")
        rows.insert(0, RankedCandidate(none, _log(reject), None, set(), set(), []))
    return rows


def evidence_vote(
    candidates: Sequence[Candidate],
    profile: ColourProfile,
    hits: Sequence[Hit],
    margin: float = 0.05,
    rows: list[RankedCandidate] | None = None,
    reject: float | None = None,
    tentative: float = 0.9,
    blurry: bool = False,
) -> Decision:
    """The no-LLM decision: the first of ``rank_candidates`` (the gallery's pick unless the notes
    clearly disagree). "Uncertain" only when the photo is unlike every reference photo, with the
    nearest candidates as guesses. A name is given with a request for a better photo when the two
    leaders are tied (gallery scores within ``margin`` log ratio, nothing in the notes separates
    them) or when the gallery's "none of these" probability ``reject`` is at least ``tentative``;
    a sharper photo is asked for only when the photo is ``blurry`` (sharpness.py).
    The reasoning is one sentence per line (each a catalogue message the window translates)."""
    observed = {n: s for n, s in profile.shares.items() if s >= 0.03}
    rows = rows if rows is not None else rank_candidates(candidates, profile, hits, reject=reject)
    if not rows:
        return Decision(UNCERTAIN, [message(NO_CANDIDATES)], True, _followup(blurry=blurry))
    named = [r for r in rows if r.candidate.name != UNCERTAIN]
    guesses = [r.candidate.name for r in named[:3]]
    seen_names = _seen(profile)
    if rows[0].candidate.name == UNCERTAIN:
        reasoning = unsure_reasoning(profile, guesses)
        return Decision(UNCERTAIN, reasoning, True, _followup(blurry=blurry), guesses=guesses)
    best = rows[0]
    leader = max(rows, key=lambda r: r.log_score)  # the gallery's first choice
    runner = next((r for r in named if r is not best), None)
    shown = pretty_name(best.candidate.name)
    lines: list[Text] = [message(OBSERVED, colours=seen_names)]
    lead_name, lead_score = pretty_name(leader.candidate.name), leader.candidate.score
    by_photos = leader.candidate.source == "gallery"  # else the image classifier's label leads
    if runner is not None:
        runner_text = f"{pretty_name(runner.candidate.name)} {runner.candidate.score:.0%}"
        points = POINT_TO_NEXT if by_photos else CLASSIFIER_POINTS_TO_NEXT
        lines.append(message(points, name=lead_name, score=lead_score, runner=runner_text))
    else:
        lines.append(
            message(POINT_TO if by_photos else CLASSIFIER_POINTS_TO, name=lead_name, score=lead_score)
        )
    for r in named[:3]:
        name = pretty_name(r.candidate.name)
        if r.match is not None:
            agree = sorted(r.documented & set(observed), key=COLOUR_NAMES.index)
            colours = ", ".join(agree) or "none"
            lines.append(
                message(NOTES_MENTION, name=_capital(name), source=r.docs[0].source, colours=colours)
            )
        elif r is best:
            lines.append(message(NO_NOTES if by_photos else NO_NOTES_CLASSIFIER, name=shown))
    if leader is not best:
        lines.append(message(OVERTURNED, leader=lead_name, name=shown))
    tied = (
        runner is not None
        and leader is best
        and abs(best.log_score - runner.log_score) < margin
        and not (
            best.match is not None
            and runner.match is not None
            and abs(best.match - runner.match) >= TIE_MATCH
        )
    )
    if tied and runner is not None:
        return Decision(
            best.candidate.name,
            [*lines, message(TIED, name=shown, runner=pretty_name(runner.candidate.name))],
            True,
            _followup([best.candidate.name, runner.candidate.name], blurry),
        )
    if reject is not None and reject >= tentative:
        return Decision(
            best.candidate.name,
            [*lines, message(NOT_CLOSE, reject=reject)],
            True,
            _followup(guesses[:2], blurry),
        )
    return Decision(best.candidate.name, lines, False, "")


def _followup(names: Sequence[str] = (), blurry: bool = False) -> Message:
    """What to send next: another photo (naming the two look-alikes when there are two), a sharper
    one only when this one is blurry."""
    if len(names) >= 2:
        pair = FOLLOWUP_PAIR if blurry else FOLLOWUP_VIEW_PAIR
        return message(pair, first=pretty_name(names[0]), second=pretty_name(names[1]))
    return message(FOLLOWUP if blurry else FOLLOWUP_VIEW)


def unsure_reasoning(
    profile: ColourProfile, guesses: Sequence[str], notes_offer: bool = False
) -> list[Text]:
    """Why no reference photo's species is named: "not one of your species" with the nearest
    guesses, or, when the notes offer a species (``notes_offer``), that the notes may describe it."""
    first = message(NOT_CLOSE_NOTES if notes_offer else NOT_YOURS, colours=_seen(profile))
    shown = ", ".join(pretty_name(g) for g in guesses)  # their scores are all near 0: not shown
    return [first] + ([message(NEAREST, names=shown)] if shown else [])


def _seen(profile: ColourProfile) -> Text:
    """The photo's colour names, or the message that none is clear."""
    return ", ".join(profile.names()) or message(NO_CLEAR_COLOURS)


def _capital(name: str) -> str:
    """A name opening a sentence."""
    return name[:1].upper() + name[1:]


# A notes-only species is "also possible" only for a photo the reference photos do not explain well
# (p(none of these) at least ALSO_MIN_REJECT) and, without an image-text model, when its notes'
# colours fit closely (colour match, see _colour_match): colour names are coarse, and looser rules
# put a green parakeet beside every green parrot (docs/identify-benchmarks.md).
ALSO_MIN_REJECT = 0.5
ALSO_FIT = 0.8
ALSO_MAX = 2
ALSO_BY_EYE = 0.25  # zero-shot probability (among the gallery's leaders and them) a notes-only species needs


def notes_only_species(hits: Sequence[Hit], labels: Sequence[str]) -> dict[str, list[Hit]]:
    """Species notes among ``hits`` (title -> its chunks) linked to none of ``labels``: species
    the knowledge base describes but has no reference photos of."""
    out: dict[str, list[Hit]] = {}
    for source in dict.fromkeys(h.source for h in hits):
        chunks = [h for h in hits if h.source == source]
        title = species_title(chunks)
        if title and title not in out and not any(linked(chunks, lab) for lab in labels):
            out[title] = chunks
    return out


def also_possible(
    species: dict[str, list[Hit]], profile: ColourProfile, by_eye: dict[str, float] | None = None
) -> list[str]:
    """Which notes-only ``species`` (see ``notes_only_species``) to offer beside the decision (at
    most ``ALSO_MAX``, best first; never chosen). ``by_eye``: their zero-shot probabilities from an
    image-text model, which then decide; without one, only those whose documented colours fit the
    photo. The flow asks only for a photo the gallery does not explain well (``ALSO_MIN_REJECT``)."""
    fits: dict[str, float] = {}
    for title, chunks in species.items():
        if by_eye is not None:
            if by_eye.get(title, 0.0) >= ALSO_BY_EYE:
                fits[title] = by_eye[title]
            continue
        text = " ".join(h.text for h in chunks)
        documented = observed_colours(text)
        if len(documented) >= 2:
            fit = _colour_match(profile, text, documented)
            if fit >= ALSO_FIT:
                fits[title] = fit
    return sorted(fits, key=lambda t: -fits[t])[:ALSO_MAX]
