"""Identify what a photo shows, grounded in the user's knowledge base.

1. Classify: gallery neighbours (calibrated per-label probabilities) + ImageNet top-5 ->
   candidates and a confidence level High / Medium / Low.
2. Confidence check (Parrot-Set's rule, thresholds in ``Config.identify``, see result.py): Low ->
   retrieve; Medium -> retrieve if the top score < 0.65; High -> no retrieval; no level -> retrieve
   if < 0.75.
3. High: name the species, add a short retrieved summary.
4. Otherwise: three feature queries (candidate comparison, visual description, top-1 traits),
   top 2 hits each, deduplicated; then a decision from the LLM (llm.py: a JSON schema restricting
   ``final_name`` to the candidates or "uncertain"), or with no LLM (or a broken reply) the
   evidence vote (vote.py): the gallery's order, overturned only by notes that separate a near
   tie; "uncertain" only for a photo unlike every reference photo. Species known only from notes
   are offered beside the decision ("also possible").

Everything is yielded as events (Classified, FeatureQueries, Retrieved, Decision, Answer), so the
GUI, `kdesk identify` and tests share one pipeline.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image

from desktop_app.core.config import Config
from desktop_app.core.events import (
    Answer,
    Candidate,
    Citation,
    Classified,
    Decision,
    Error,
    Event,
    FeatureQueries,
    Retrieved,
    Warning,
)
from desktop_app.core.identify.classifier import (
    RESIZE,
    Classification,
    Classifier,
    centre_crop,
    get_classifier,
    inference_threads,
)
from desktop_app.core.identify.colours import ColourProfile, colour_profile, describe
from desktop_app.core.identify.gallery import Gallery, gallery_for, label_probabilities
from desktop_app.core.identify.llm import llm_decision, vision_description
from desktop_app.core.identify.names import (
    GENERIC,
    NAME_LINES,
    chinese_names,
    english_titles,
    mentions,
    norm_name,
    notes_about,
    pretty_name,
    species_notes,
)
from desktop_app.core.identify.result import (
    HIGH,
    MEDIUM,
    UNCERTAIN,
    IdentifyResult,
    confidence_level,
    needs_retrieval,
)
from desktop_app.core.identify.sharpness import is_blurry
from desktop_app.core.identify.specific import (
    ClassRanking,
    Fit,
    next_covered_class,
    rank_class,
    specific_candidates,
)
from desktop_app.core.identify.texts import (
    ALSO_BY_COLOUR,
    ALSO_BY_EYE,
    CANNOT,
    CLASS_TIED,
    CONFIDENT,
    IMAGE_UNREADABLE,
    LOOKS_LIKE,
    NEXT_CLASS,
    NEXT_FIT,
    NEXT_ONE,
    NEXT_TIED,
    PHOTOS_POINT_TO,
    QUERY_COMPARE,
    QUERY_TRAITS,
    SPECIFIC_FIT,
    WHICH_ONE,
)
from desktop_app.core.identify.vote import (
    ALSO_MIN_REJECT,
    also_possible,
    evidence_vote,
    notes_only_species,
    rank_candidates,
    unsure_reasoning,
    vote_contenders,
)
from desktop_app.core.library.documents import Hit, ParseError
from desktop_app.core.library.images import ImageSource, load_image
from desktop_app.core.messages import Text, message, render, render_lines
from desktop_app.core.models.torch_threads import torch_threads
from desktop_app.core.tasks import STOPPED, TaskState

if TYPE_CHECKING:
    from desktop_app.core.library.knowledge import KnowledgeBase
    from desktop_app.core.models.llm.base import ChatModel

log = logging.getLogger(__name__)

MAX_GALLERY_CANDIDATES = 5

SearchFn = Callable[[Sequence[str], int, "str | None"], list[Hit]]


class Identifier:
    """Runs the identify flow against a knowledge base (or any ``search`` callable).

    ``kb``: a KnowledgeBase (its gallery and ``search_many`` are used); ``search``: overrides the
    KB search (``search(queries, top_k, scope) -> hits``); ``gallery``: an object with
    ``nearest(feature, k, scope)`` and optionally ``label_scores(feature, scope, cfg)`` (default:
    the KB's); ``chat_model``: a ChatModel or None.
    """

    def __init__(
        self,
        kb: KnowledgeBase | None = None,
        chat_model: ChatModel | None = None,
        config: Config | None = None,
        *,
        search: SearchFn | None = None,
        gallery: Gallery | None = None,
        classifier: Classifier | None = None,
        vision_llm: bool | None = None,
    ) -> None:
        self.kb = kb
        self.chat_model = chat_model
        self.config = config or getattr(kb, "config", None) or Config()
        self.classifier = classifier or get_classifier()
        self._search = search
        self._gallery = gallery
        self.vision_llm = self.config.identify.vision_llm if vision_llm is None else vision_llm
        self.last_ranking: list[str] = []  # candidates in decision order (for benchmarks)
        self.last_reject: float | None = None  # gallery's "none of these" probability
        self.gallery_labels: list[str] = []  # every label of the last gallery consulted
        self.last_feature: np.ndarray | None = None  # the last photo in the gallery's vector space

    # -- seams
    @property
    def gallery(self) -> Gallery | None:
        if self._gallery is None and self.kb is not None and hasattr(self.kb, "chroma_client"):
            self._gallery = gallery_for(self.kb)
        return self._gallery

    def search(self, queries: Sequence[str], top_k: int, scope: str | None) -> list[Hit]:
        if self._search is not None:
            return list(self._search(list(queries), top_k, scope))
        if self.kb is None:
            return []
        return list(self.kb.search_many(list(queries), top_k=top_k, scope=scope))

    # -- public
    def identify(
        self, image: ImageSource, question: str | None = None, scope: str | None = None
    ) -> IdentifyResult:
        return IdentifyResult.from_events(list(self.run(image, question=question, scope=scope)))

    def run(
        self,
        image: ImageSource,
        question: str | None = None,
        scope: str | None = None,
        cancel: TaskState | None = None,
        timings: dict[str, float] | None = None,
    ) -> Iterator[Event]:
        """Yield Classified, FeatureQueries, Retrieved, Decision, Answer (Warning/Error as needed)."""
        cfg = self.config.identify
        t = timings if timings is not None else {}
        t0 = time.perf_counter()
        try:
            img = load_image(image, min_side=RESIZE)
        except ParseError as exc:  # the reason has no file name: say which photo, when it has one
            if isinstance(image, str | Path):
                yield Error(message(IMAGE_UNREADABLE, name=Path(image).name, reason=exc.message))
            else:
                yield Error(exc.message)
            return
        crop = centre_crop(img)
        t["load"] = (time.perf_counter() - t0) * 1000
        t1 = time.perf_counter()
        cls = self.classifier.classify_crops([crop], top_k=5)[0]
        t["classify"] = (time.perf_counter() - t1) * 1000

        t1 = time.perf_counter()
        candidates, score = self._candidates(cls, img, scope)
        level = confidence_level(score, cfg)
        retrieve = needs_retrieval(level, score, cfg)
        t["gallery"] = (time.perf_counter() - t1) * 1000
        t1 = time.perf_counter()
        name_notes = species_notes(self.kb, scope)
        for cand, zh in chinese_names([c.name for c in candidates], name_notes).items():
            next(c for c in candidates if c.name == cand).zh = zh  # the notes' name over ImageNet's
        for cand, title in english_titles([c.name for c in candidates], name_notes).items():
            next(c for c in candidates if c.name == cand).title = title
        t["names"] = (time.perf_counter() - t1) * 1000
        t1 = time.perf_counter()
        profile = colour_profile(crop, cls.saliency)
        # A class several notes share ("macaw"): its notes ranked by how the photo's colours fit
        # them; the badge is then the confidence in the species named (specific.py).
        ranking = self._class_ranking(cls, candidates, profile, name_notes)
        if ranking is not None:
            candidates = [*specific_candidates(ranking), *candidates]
            score = candidates[0].score
            level = confidence_level(score, cfg)
            if ranking.passed_over and level == HIGH:  # the class itself was the classifier's second
                level = MEDIUM
        yield Classified(candidates, level, retrieve if ranking is None else True)
        if _cancelled(cancel):
            yield Warning(message(STOPPED))
            return

        description: Text = describe(profile, cls.labels)
        if self.vision_llm and self.chat_model is not None:
            llm_text = vision_description(self.chat_model, img)
            if llm_text:
                description = llm_text
        t["describe"] = (time.perf_counter() - t1) * 1000

        top = candidates[0].name if candidates else ""
        self.last_ranking = [c.name for c in candidates]
        if ranking is not None:
            yield from self._specific(ranking, description, candidates, name_notes)
            return
        if not retrieve:
            yield from self._confident(top, score, scope, description, t, candidates)
            return

        queries = self.feature_queries([c.name for c in candidates], description, top)
        yield FeatureQueries(queries, description)
        t1 = time.perf_counter()
        # The queries are shown as messages; the search reads their English (the notes' language).
        searched = [render(q) for q in queries]
        hits = _dedup(self._safe_search(searched, 2 * len(searched), scope))
        # The vote also needs the own notes (identification keys) of the candidates it may choose
        # between: the leader and the runner-ups within the override margin, when the feature
        # queries did not bring them in. Most photos have no such runner-up: no second search
        # (a query embedding costs ~15-25 ms on this CPU).
        contenders = vote_contenders(candidates, cfg.vote_override_margin)
        vote_names = [n for n in contenders if not notes_about(hits, n, min_level=GENERIC)]
        extra = (
            self._safe_search(
                [f"{pretty_name(n)} identification" for n in vote_names], 3 * len(vote_names), scope
            )
            if vote_names
            else []
        )
        t["retrieve"] = (time.perf_counter() - t1) * 1000
        if _cancelled(cancel):
            yield Warning(message(STOPPED))
            return

        t1 = time.perf_counter()
        rows = rank_candidates(
            candidates,
            profile,
            _dedup(hits + extra),
            override_margin=cfg.vote_override_margin,
            evidence_lead=cfg.vote_evidence_lead,
            reject=self.last_reject,
            reject_uncertain=cfg.reject_uncertain,
        )
        self.last_ranking = [r.candidate.name for r in rows if r.candidate.name != UNCERTAIN]
        vote = evidence_vote(
            candidates,
            profile,
            hits,
            margin=cfg.vote_margin,
            rows=rows,
            reject=self.last_reject,
            tentative=cfg.reject_tentative,
            blurry=is_blurry(img),
        )
        decision = None
        if self.chat_model is not None:
            decision, warning = llm_decision(
                self.chat_model, candidates, render(description), hits, question, cancel
            )
            if warning:
                yield Warning(warning)
            if decision is not None and decision.final_name == UNCERTAIN and not vote.need_more_info:
                # The model's doubt does not erase what the reference photos saw: say both (a line
                # of its own, so the window can translate it).
                though = message(PHOTOS_POINT_TO, name=pretty_name(vote.final_name))
                decision.reasoning = [*decision.reasoning, though]
                decision.guesses = [vote.final_name]
        if decision is None:
            decision = vote
        species: dict[str, list[Hit]] = {}
        if self.last_reject is None or self.last_reject >= ALSO_MIN_REJECT:  # photos don't explain it well
            species = notes_only_species(hits, [*self.gallery_labels, *(c.name for c in candidates)])
        by_eye = self.zero_shot(species, candidates) if species else None
        decision.also_possible = also_possible(species, profile, by_eye)
        if decision is vote and decision.final_name == UNCERTAIN and decision.also_possible:
            # The notes offer a species: the card must not also say "not one of your species".
            decision.reasoning = unsure_reasoning(profile, decision.guesses, notes_offer=True)
        _name_decision(decision, candidates, name_notes)
        t["decide"] = (time.perf_counter() - t1) * 1000
        # Evidence is what supports the names the card gives, not every note the queries found.
        hits = supporting(hits, decision, species)
        yield Retrieved(hits, " | ".join(searched))
        yield decision
        yield _answer(decision, hits, by="llm" if decision is not vote else "vote", by_eye=by_eye is not None)

    # -- steps
    @staticmethod
    def _class_ranking(
        cls: Classification, candidates: Sequence[Candidate], profile: ColourProfile, notes: Sequence[Hit]
    ) -> ClassRanking | None:
        """The notes of the classifier's class ranked by fit, when the leading candidate is the
        classifier's (no reference photo leads) and its label is a class two or more notes share;
        or, when its label is a class no note covers, a lower class of its top 5 that they do."""
        if not candidates or candidates[0].source != "imagenet" or not notes:
            return None
        top = candidates[0]
        zh = next((lab.zh for lab in cls.labels if lab.name == top.name), "")
        ranking = rank_class(top.name, zh, top.score, profile, notes)
        return ranking if ranking is not None else next_covered_class(cls.labels, profile, notes)

    def _specific(
        self,
        ranking: ClassRanking,
        description: Text,
        candidates: Sequence[Candidate],
        notes: Sequence[Hit],
    ) -> Iterator[Event]:
        """A generic class: name the best-fitting note and the runner-up with the colours that
        speak for it, or, when the fits tie, say which notes it could be and ask."""
        yield FeatureQueries([], description)
        fits = ranking.fits[:2] if ranking.narrowed else ranking.tied()
        hits = [f.hit for f in fits if f.hit is not None]
        yield Retrieved(hits, " | ".join(f.title for f in fits))
        label = pretty_name(ranking.label)
        if ranking.passed_over:
            yield from self._next_class(ranking, fits, candidates, notes)
            return
        if ranking.narrowed:
            best = ranking.best
            reasoning: list[Text] = [
                message(
                    SPECIFIC_FIT,
                    cls=label,
                    colours=_and(best.colours) or "-",
                    name=best.title,
                    also=", ".join(f.title for f in fits[1:]) or "-",
                )
            ]
            decision = Decision(best.title, reasoning, False, "", guesses=[f.title for f in fits[1:]])
        else:
            names = ", ".join(f.title for f in fits)
            reasoning = [message(CLASS_TIED, cls=label, names=names)]
            decision = Decision(label, reasoning, True, message(WHICH_ONE, names=names))
            decision.guesses = [f.title for f in fits]
        _name_decision(decision, candidates, notes)
        yield decision
        # An open class quotes no note: which one to quote is what the card asks.
        yield _answer(decision, hits, by="notes" if ranking.narrowed else "vote")

    @staticmethod
    def _next_class(
        ranking: ClassRanking, fits: Sequence[Fit], candidates: Sequence[Candidate], notes: Sequence[Hit]
    ) -> Iterator[Event]:
        """The classifier's best guess has no notes: say so, then the lower class the notes cover
        and its best-fitting note (or, when the fits tie, which notes it could be, and ask)."""
        hits = [f.hit for f in fits if f.hit is not None]
        lines: list[Text] = [
            message(
                NEXT_CLASS,
                top=pretty_name(ranking.passed_over),
                top_score=ranking.passed_score,
                cls=pretty_name(ranking.label),
                score=ranking.score,
            )
        ]
        if len(fits) == 1:
            lines.append(message(NEXT_ONE, name=fits[0].title))
        elif ranking.narrowed:
            best = ranking.best
            also = ", ".join(f.title for f in fits[1:]) or "-"
            lines.append(message(NEXT_FIT, colours=_and(best.colours) or "-", name=best.title, also=also))
        else:
            names = ", ".join(f.title for f in fits)
            lines.append(message(NEXT_TIED, names=names))
        if ranking.narrowed:
            decision = Decision(
                ranking.best.title, lines, False, "", guesses=[f.title for f in fits[1:]]
            )
        else:
            names = ", ".join(f.title for f in fits)
            decision = Decision(
                pretty_name(ranking.label), lines, True, message(WHICH_ONE, names=names)
            )
            decision.guesses = [f.title for f in fits]
        _name_decision(decision, candidates, notes)
        yield decision
        yield _answer(decision, hits, by="notes" if ranking.narrowed else "vote")

    def _query_feature(self, cls: Classification, img: Image.Image) -> np.ndarray:
        """The photo in the gallery's vector space: the classifier's pooled feature, or the
        image-text model's embedding when the gallery stores that model's vectors."""
        features = getattr(self.gallery, "features", None)
        if features is None or features.name == self.classifier.name:
            return cls.feature
        return features.embed_image(img)

    def _candidates(
        self, cls: Classification, img: Image.Image, scope: str | None
    ) -> tuple[list[Candidate], float]:
        """Gallery labels (calibrated) then ImageNet labels; the confidence score is the gallery's
        top probability when a gallery exists (the KB's own references are what is identified),
        else ImageNet's top-1."""
        cfg = self.config.identify
        gallery_scores = []
        self.last_reject = None
        self.last_feature = None
        gallery = self.gallery
        if gallery is not None:
            try:
                self.last_feature = self._query_feature(cls, img)
            except Exception as exc:  # a broken image-text model must not stop identification
                log.warning("image-text model failed: %s", exc)
                gallery = None
        if gallery is not None and hasattr(gallery, "label_scores"):
            try:  # nearest-photo similarity for "in the gallery?", the ridge head for "which label"
                gallery_scores, self.last_reject = gallery.label_scores(self.last_feature, scope, cfg)
            except Exception as exc:  # a missing or locked index must not stop identification
                log.warning("gallery search failed: %s", exc)
                gallery_scores, self.last_reject = [], None
        elif gallery is not None:
            try:
                matches = gallery.nearest(self.last_feature, k=cfg.gallery_k, scope=scope)
            except Exception as exc:  # a missing or locked index must not stop identification
                log.warning("gallery search failed: %s", exc)
                matches = []
            gallery_scores, self.last_reject = label_probabilities(
                matches, cfg.temperature, cfg.reject_similarity
            )
        if not gallery_scores:  # no reference photos: nothing the photo could be "not close" to
            self.last_reject = None
        self.gallery_labels = [g.label for g in gallery_scores]
        out: list[Candidate] = []
        for g in gallery_scores[:MAX_GALLERY_CANDIDATES]:
            if g.probability >= 0.01 or len(out) < 3:
                out.append(Candidate(g.label, round(g.probability, 4), "gallery", photo=g.source))
        seen = {norm_name(c.name) for c in out}
        for lab in cls.labels[:5]:
            if norm_name(lab.name) not in seen:
                out.append(Candidate(lab.name, round(lab.score, 4), "imagenet", zh=lab.zh or None))
        score = out[0].score if out else 0.0
        return out, float(score)

    def zero_shot(
        self, species: dict[str, list[Hit]], candidates: Sequence[Candidate]
    ) -> dict[str, float] | None:
        """With an image-text model: zero-shot probabilities of the notes-only ``species`` against
        the gallery's leading labels ("a photo of a <name>"); None without one (colours decide)."""
        features = getattr(self.gallery, "features", None)
        if self.last_feature is None or not hasattr(features, "embed_texts"):
            return None
        names = list(species)
        leaders = [pretty_name(c.name) for c in candidates if c.source == "gallery"][:3]
        try:
            texts = features.embed_texts([f"a photo of a {n}." for n in [*names, *leaders]])
            logits = features.logit_scale * (texts @ self.last_feature)
        except Exception as exc:  # zero-shot is an extra; never let it stop the decision
            log.warning("zero-shot naming failed: %s", exc)
            return None
        p = np.exp(logits - logits.max())
        p /= p.sum()
        return {n: float(p[i]) for i, n in enumerate(names)}

    @staticmethod
    def feature_queries(names: Sequence[str], description: Text, top: str) -> list[Text]:
        """Candidate comparison, visual description, top-1 traits: messages, searched as their
        English."""
        shown = [pretty_name(n) for n in names[:3]]
        return [
            message(QUERY_COMPARE, names=" / ".join(shown)),
            description,
            message(QUERY_TRAITS, name=pretty_name(top)),
        ]

    def _safe_search(self, queries: Sequence[str], top_k: int, scope: str | None) -> list[Hit]:
        try:
            # A few short queries: one thread avoids the multi-thread stalls of small forwards.
            with torch_threads(inference_threads()):
                return self.search(queries, top_k, scope)
        except Exception as exc:  # the index may be missing or mid-rebuild
            log.warning("search failed: %s", exc)
            return []

    def _confident(
        self,
        top: str,
        score: float,
        scope: str | None,
        description: Text,
        t: dict[str, float],
        candidates: Sequence[Candidate],
    ) -> Iterator[Event]:
        """High confidence: name it and add a short summary from the knowledge base."""
        yield FeatureQueries([], description)
        t1 = time.perf_counter()
        hits = [h for h in self._safe_search([pretty_name(top)], 3, scope) if mentions(h, top)][:2]
        t["retrieve"] = (time.perf_counter() - t1) * 1000
        yield Retrieved(hits, pretty_name(top))
        decision = Decision(top, [message(CONFIDENT, score=score, name=pretty_name(top))], False, "")
        _name_decision(decision, candidates, [])
        yield decision
        yield _answer(decision, hits, by="classifier")


def supporting(hits: Sequence[Hit], decision: Decision, species: dict[str, list[Hit]]) -> list[Hit]:
    """The ``hits`` that speak for what the decision names: the notes of its pick, of the notes-only
    species it offers (``species``: title -> chunks) and, when it names neither, of its guesses."""
    named = [decision.final_name] if decision.final_name and decision.final_name != UNCERTAIN else []
    offered = {h.chunk_id for t in decision.also_possible for h in species.get(t, [])}
    names = named + list(decision.also_possible)
    if not names:
        names = list(decision.guesses)
    return [h for h in hits if h.chunk_id in offered or any(mentions(h, n) for n in names)]


def _answer(decision: Decision, hits: Sequence[Hit], by: str, by_eye: bool = False) -> Answer:
    """The answer: the decision in words, with a cited summary when the classifier was sure.
    ``by_eye``: the notes-only species were matched to the photo by an image-text model. One
    sentence of ours per line (``lines``: messages the window renders in its language, ``text``:
    their English); the notes' own are quoted as written."""
    name = decision.final_name or UNCERTAIN
    citations = [Citation(i + 1, h.source, h.page, h.chunk_id, h.text[:500]) for i, h in enumerate(hits)]
    lines: list[Text] = [message(CANNOT) if name == UNCERTAIN else message(LOOKS_LIKE, name=pretty_name(name))]
    lines += decision.reasoning
    about = [h for h in hits if mentions(h, name)] if name != UNCERTAIN else []
    if about and by in ("classifier", "notes"):
        lines.append(f"{_first_sentences(about[0].text)} [{hits.index(about[0]) + 1}]")
    if decision.also_possible:
        also = ALSO_BY_EYE if by_eye else ALSO_BY_COLOUR
        lines.append(message(also, names=", ".join(decision.also_possible)))
    if decision.need_more_info and decision.followup:
        lines.append(decision.followup)
    lines = [line for line in lines if render(line).strip()]
    return Answer(render_lines(lines), citations, by="extractive" if by != "llm" else "llm", lines=lines)


def _name_decision(decision: Decision, candidates: Sequence[Candidate], notes: Sequence[Hit]) -> None:
    """Set the decision's Chinese names and English titles of what it names (its pick, guesses and
    notes-only species): the candidates' (for Chinese a note's, else ImageNet's), then the notes'
    for the notes-only species."""
    wanted = [decision.final_name, *decision.guesses, *decision.also_possible]

    def names(
        known: dict[str, str], lookup: Callable[[Sequence[str], Sequence[Hit]], dict[str, str]]
    ) -> dict[str, str]:
        known.update(lookup([n for n in wanted if n not in known], notes))
        return {n: known[n] for n in wanted if n in known}

    decision.zh_names = names({c.name: c.zh for c in candidates if c.zh}, chinese_names)
    decision.titles = names({c.name: c.title for c in candidates if c.title}, english_titles)


def _and(names: Sequence[str]) -> str:
    """ "red, blue and yellow" ("" for none)."""
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


# A note's field labels' markup (its name lines go by names.NAME_LINES: its names are on the card).
_GALLERY_LABEL = re.compile(r"\s*Gallery label:\s*[^\s.]+\.?", re.I)
_FIELD_LABEL = re.compile(r"^\s*(?:[-*•]\s*)?\*\*([^*\n]+?):?\*\*:?\s*", re.M)


def note_summary(text: str) -> str:
    """A note's text as a card shows it: no title, no name or gallery-label lines, field labels as
    plain words ("**Colours:** red" -> "Colours: red")."""
    text = NAME_LINES.sub("", re.sub(r"^#+\s.*$", "", text, flags=re.M))
    text = _GALLERY_LABEL.sub("", text)
    text = _FIELD_LABEL.sub(lambda m: f"{m.group(1).strip()}: ", text)
    return re.sub(r"(?m)^\s*Chinese:\s*[^.\n]*\.\s*", "", text).strip()


def _first_sentences(text: str, limit: int = 280) -> str:
    text = re.sub(r"\s+", " ", note_summary(text)).strip()
    parts = re.split(r"(?<=[.!?。！？])\s+", text)
    out = ""
    for p in parts:
        if len(out) + len(p) > limit and out:
            break
        out = f"{out} {p}".strip()
    return out[:limit]


def _dedup(hits: Sequence[Hit]) -> list[Hit]:
    seen: set[str] = set()
    out = []
    for h in hits:
        if h.chunk_id not in seen:
            seen.add(h.chunk_id)
            out.append(h)
    return out


def _cancelled(cancel: TaskState | None) -> bool:
    return bool(cancel is not None and cancel.cancelled())
