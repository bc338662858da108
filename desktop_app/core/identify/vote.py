"""The no-LLM decision: the gallery's ranking, checked against the colours the candidates' notes
document, and an evidence vote that says "uncertain" when the evidence does not separate them."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from desktop_app.core.events import Candidate, Decision
from desktop_app.core.identify.colours import COLOUR_NAMES, ColourProfile, observed_colours
from desktop_app.core.identify.names import notes_about, pretty_name
from desktop_app.core.identify.result import UNCERTAIN
from desktop_app.core.library.documents import Hit

VOTE_CANDIDATES = 4  # candidates whose documents are compared in the no-LLM vote
TIE_MATCH = 0.02  # colour matches closer than this do not separate two tied candidates


@dataclass
class RankedCandidate:
    """One row of ``rank_candidates``: a candidate with the evidence its notes give."""

    candidate: Candidate
    log_score: float
    match: float | None  # how well its notes' colours fit the photo (None: no notes were read)
    documented: set[str]  # colour names its notes attribute to it
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
    colours that are not seen (plus a little when a pale/dark face is both seen and documented)."""
    observed = {n: s for n, s in profile.shares.items() if s >= 0.03}
    seen = sum(s for n, s in observed.items() if n in documented)
    unseen = sum(1 for n in documented if n not in observed) / len(documented)
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

    Each contender (``vote_contenders``) gets ``match``, how well its notes' colours agree with
    the subject's (see ``_colour_match``; None without notes; other candidates get None). The
    gallery's order stands unless a runner-up whose score is within ``override_margin`` (log
    ratio) of the leader's has notes that match better by at least ``evidence_lead``: then it
    moves to the front. Colour names are coarse (look-alike species share palettes), and measured
    on the parrot galleries any looser rule cost accuracy, so only a clear disagreement with a
    near-tie overrides (docs/identify-benchmarks.md). ``reject`` (the gallery's "none of these"
    probability) at or above ``reject_uncertain`` puts a pseudo-candidate "uncertain" first: the
    photo is unlike every reference photo.
    """
    pool = _vote_pool(candidates)
    # Notes are read for the contenders only: the flow searches their notes on purpose, while a
    # far runner-up's "notes" would be whatever the feature queries happened to return (often a
    # note that merely mentions it, e.g. a hybrid's parent).
    contenders = set(vote_contenders(candidates, override_margin))
    rows = []
    for c in pool:
        docs = notes_about(hits, c.name) if c.name in contenders else []
        text = " ".join(h.text for h in docs)
        documented = observed_colours(text)
        match = _colour_match(profile, text, documented) if documented else None
        rows.append(RankedCandidate(c, _log(c.score), match, documented, docs))
    if rows:
        lead = rows[0]
        lead_match = lead.match if lead.match is not None else 0.0
        best: RankedCandidate | None = None
        for row in rows[1:]:
            if row.match is None or lead.log_score - row.log_score > override_margin:
                continue
            if row.match - lead_match >= evidence_lead and (best is None or row.match > best.match):
                best = row
        if best is not None:
            rows.remove(best)
            rows.insert(0, best)
    if reject is not None and reject >= reject_uncertain:
        none = Candidate(UNCERTAIN, reject, "gallery")
        rows.insert(0, RankedCandidate(none, _log(reject), None, set(), []))
    return rows


def evidence_vote(
    candidates: Sequence[Candidate],
    profile: ColourProfile,
    hits: Sequence[Hit],
    margin: float = 0.05,
    rows: list[RankedCandidate] | None = None,
    reject: float | None = None,
    tentative: float = 0.9,
) -> Decision:
    """The no-LLM decision: the first of ``rank_candidates`` (the gallery's pick unless the notes
    clearly disagree), "uncertain" when the photo is unlike every reference photo, when no
    candidate has notes, or when the two leaders are tied (gallery scores within ``margin`` log
    ratio) and their notes match the observed colours equally well. A name chosen while the
    gallery's "none of these" probability ``reject`` is at least ``tentative`` is given as the
    nearest guess with a request for a better photo."""
    observed = {n: s for n, s in profile.shares.items() if s >= 0.03}
    rows = rows if rows is not None else rank_candidates(candidates, profile, hits)
    if not rows:
        return Decision(UNCERTAIN, "There are no candidates to compare.", True, _followup())
    best = rows[0]
    runner = rows[1] if len(rows) > 1 else None
    seen_names = ", ".join(profile.names()) or "no clear colours"
    reasons = []
    named = [r for r in rows if r.candidate.name != UNCERTAIN]
    for i, r in enumerate(named[:3]):
        shown = pretty_name(r.candidate.name)
        if r.match is None:
            if r.docs:
                reasons.append(f"{shown}: notes ({r.docs[0].source}) name no colours")
            elif i == 0:  # only the leader's missing notes are worth saying
                reasons.append(f"{shown}: no notes found")
        else:
            agree = sorted(r.documented & set(observed), key=COLOUR_NAMES.index)
            src = r.docs[0].source if r.docs else ""
            reasons.append(
                f"{shown}: notes ({src}) mention {', '.join(agree) or 'none'} of the observed colours"
            )
    reasoning = f"Observed {seen_names}." + (" " + "; ".join(reasons) + "." if reasons else "")
    if best.candidate.name == UNCERTAIN:
        return Decision(
            UNCERTAIN,
            reasoning + " The photo is not close to any reference photo in the knowledge base.",
            True,
            _followup(),
        )
    documented_any = any(r.match is not None for r in rows)
    tied = (
        runner is not None
        and best.match is not None
        and runner.match is not None
        and abs(best.log_score - runner.log_score) < margin
        and abs(best.match - runner.match) < TIE_MATCH
    )
    leaders = [r.candidate.name for r in rows[:2]]
    if not documented_any or tied:
        why = (
            " The reference photos and the notes do not separate the candidates."
            if documented_any
            else " No candidate has notes."
        )
        return Decision(UNCERTAIN, reasoning + why, True, _followup(leaders))
    leader = max(rows, key=lambda r: r.log_score)  # the gallery's first choice
    if leader is not best:
        first, chosen = pretty_name(leader.candidate.name), pretty_name(best.candidate.name)
        reasoning += (
            f" The reference photos put {first} and {chosen} close"
            f" together; the notes of {chosen} fit the observed colours clearly better."
        )
    if reject is not None and reject >= tentative:
        return Decision(
            best.candidate.name,
            reasoning
            + f" The photo is not close to any reference photo ({reject:.0%} none of them), so this is"
            " only the nearest guess.",
            True,
            _followup(leaders),
        )
    return Decision(best.candidate.name, reasoning, False, "")


def _followup(names: Sequence[str] = ()) -> str:
    """What to send next: a better photo (naming the two look-alikes when there are two)."""
    ask = "Please send a sharper photo showing the whole bird (head, beak, wings and tail) in good light"
    if len(names) >= 2:
        ask += (
            ", ideally one where the features that separate"
            f" {pretty_name(names[0])} from {pretty_name(names[1])} are visible"
        )
    ask += ", or add reference photos and notes for this kind to the knowledge base."
    return ask
