"""Identify what a photo shows, grounded in the user's knowledge base.

1. Classify: gallery neighbours (calibrated per-label probabilities) + ImageNet top-5 ->
   candidates ``{name, score, source}`` and a confidence level High / Medium / Low.
2. Confidence check (Parrot-Set's rule, thresholds in ``Config.identify``): Low -> retrieve;
   Medium -> retrieve if the top score < 0.65; High -> no retrieval; no level -> retrieve if < 0.75.
3. High: name the species, add a short retrieved summary.
4. Otherwise: three feature queries (candidate comparison, visual description, top-1 traits),
   top 2 hits each, deduplicated; then a decision ``{final_name, reasoning, need_more_info,
   followup}`` from the LLM (JSON schema restricting ``final_name`` to the candidates or
   "uncertain"), or with no LLM (or a broken reply) an evidence vote: which candidate's documents
   best match the observed colours, "uncertain" when the margin is small.

Everything is yielded as events (Classified, FeatureQueries, Retrieved, Decision, Answer), so the
GUI, `kdesk identify` and tests share one pipeline.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import math
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from desktop_app.core.config import Config, IdentifyConfig
from desktop_app.core.events import (
    Answer,
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
    Classifier,
    centre_crop,
    get_classifier,
    inference_threads,
    torch_threads,
)
from desktop_app.core.identify.colours import COLOUR_NAMES, ZH_NAMES, ColourProfile, colour_profile
from desktop_app.core.identify.images import ImageSource, load_image
from desktop_app.core.library.documents import Hit, ParseError

log = logging.getLogger(__name__)

HIGH, MEDIUM, LOW = "High", "Medium", "Low"
UNCERTAIN = "uncertain"
MAX_GALLERY_CANDIDATES = 5
VOTE_CANDIDATES = 4  # candidates whose documents are compared in the no-LLM vote
TIE_MATCH = 0.02  # colour matches closer than this do not separate two tied candidates

SearchFn = Callable[[Sequence[str], int, "str | None"], list[Hit]]

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


@dataclass
class IdentifyResult:
    """The aggregate of one identification (what `kdesk identify --json` prints)."""

    candidates: list[dict[str, Any]] = field(default_factory=list)
    confidence_level: str = LOW
    confidence_score: float = 0.0
    low_confidence: bool = True  # True: the knowledge base was consulted before deciding
    visual_description: str = ""
    feature_queries: list[str] = field(default_factory=list)
    hits: list[Hit] = field(default_factory=list)
    decision: dict[str, Any] = field(default_factory=dict)
    answer: str = ""
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "candidates": self.candidates,
            "confidence_level": self.confidence_level,
            "confidence_score": round(self.confidence_score, 4),
            "low_confidence": self.low_confidence,
            "visual_description": self.visual_description,
            "feature_queries": self.feature_queries,
            "hits": [h.to_dict() for h in self.hits],
            "decision": self.decision,
            "answer": self.answer,
            "warnings": self.warnings,
            "error": self.error,
            "timings_ms": {k: round(v, 1) for k, v in self.timings_ms.items()},
        }

    @classmethod
    def from_events(cls, events: Sequence[Event]) -> IdentifyResult:
        out = cls()
        for e in events:
            if isinstance(e, Classified):
                out.candidates = e.candidates
                out.confidence_level = e.confidence_level
                out.low_confidence = e.low_confidence
                out.confidence_score = e.candidates[0]["score"] if e.candidates else 0.0
            elif isinstance(e, FeatureQueries):
                out.feature_queries = list(e.queries)
                out.visual_description = e.visual_description
            elif isinstance(e, Retrieved):
                known = {h.chunk_id for h in out.hits}
                out.hits += [h for h in e.hits if h.chunk_id not in known]
            elif isinstance(e, Decision):
                out.decision = e.decision
            elif isinstance(e, Answer):
                out.answer = e.text
            elif isinstance(e, Warning):
                out.warnings.append(e.message)
            elif isinstance(e, Error):
                out.error = e.message
        return out


# ---------------------------------------------------------------------------- confidence rule
def confidence_level(score: float, cfg: IdentifyConfig) -> str:
    """High / Medium / Low from the top candidate's calibrated score."""
    if score >= cfg.high:
        return HIGH
    if score >= cfg.medium:
        return MEDIUM
    return LOW


def needs_retrieval(level: str | None, score: float, cfg: IdentifyConfig) -> bool:
    """Parrot-Set's rule: Low -> retrieve; Medium -> retrieve if the top score is under
    ``medium_retrieve_below``; High -> no retrieval; an unknown level -> retrieve if under
    ``unknown_retrieve_below``."""
    if level == LOW:
        return True
    if level == MEDIUM:
        return score < cfg.medium_retrieve_below
    if level == HIGH:
        return False
    return score < cfg.unknown_retrieve_below


# ---------------------------------------------------------------------------- helpers
def norm_name(name: str) -> str:
    """'cokatoo_Major-Mitchell' -> 'cokatoo major mitchell' (for matching names in documents)."""
    return re.sub(r"\s+", " ", re.sub(r"[_\-/()（）.,]+", " ", name)).strip().lower()


def mentions(hit: Hit, name: str) -> bool:
    """Does this hit talk about ``name`` (in its text, heading or file name)?"""
    key = norm_name(name)
    if not key:
        return False
    hay = norm_name(" ".join([hit.text, hit.source, " ".join(hit.heading_path or [])]))
    return key in hay


_CLAUSE = re.compile(r"[.;:,()\n。；：，（）]+")
_NEGATION = re.compile(r"\b(no|not|without|unlike|lacks?|instead|never)\b|无|没有|不是", re.I)


def notes_about(hits: Sequence[Hit], name: str) -> list[Hit]:
    """The chunks of the one document that is most about ``name`` (most mentions, title first)."""
    key = norm_name(name)
    best: tuple[int, str] | None = None
    by_source: dict[str, list[Hit]] = {}
    for h in hits:
        if not mentions(h, name):
            continue
        by_source.setdefault(h.source, []).append(h)
        text = norm_name(h.text)
        score = text.count(key) + 2 * (key in norm_name(h.source + " " + " ".join(h.heading_path or [])))
        score += key in text[:80]
        if best is None or score > best[0]:
            best = (score, h.source)
    return by_source[best[1]] if best else []


def observed_colours(text: str) -> set[str]:
    """Colour names a note attributes to its subject (clauses with a negation are skipped:
    "no yellow crest" does not document yellow)."""
    found: set[str] = set()
    for clause in _CLAUSE.split(text):
        if clause.strip() and not _NEGATION.search(clause):
            found.update(name for name, rx in _WORD_RE.items() if rx.search(clause))
    return found


def pretty_name(name: str) -> str:
    """A label as shown to people (gallery labels may use underscores)."""
    return name.replace("_", " ").strip()


def describe(profile: ColourProfile, labels: Sequence[Any]) -> str:
    """The visual description: subject colours plus what the classifier thinks it is."""
    birdish = sum(lab.score for lab in labels if lab.group in ("bird", "parrot"))
    noun = "plumage" if birdish >= 0.3 else "colours"
    subject = "a bird" if birdish >= 0.3 else "a subject"
    text = f"{subject} with {profile.describe(noun)}"
    top = [f"{lab.name} ({lab.score:.0%})" for lab in labels[:3] if lab.score >= 0.05]
    if top:
        text += "; the classifier suggests " + ", ".join(top)
    return text


def _first_sentences(text: str, limit: int = 280) -> str:
    text = re.sub(r"\s+", " ", re.sub(r"^#+\s.*$", "", text, flags=re.M)).strip()
    parts = re.split(r"(?<=[.!?。！？])\s+", text)
    out = ""
    for p in parts:
        if len(out) + len(p) > limit and out:
            break
        out = f"{out} {p}".strip()
    return out[:limit]


def _image_data_url(img) -> str:
    buf = io.BytesIO()
    small = img.copy()
    small.thumbnail((512, 512))
    small.save(buf, format="JPEG", quality=85)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _parse_json(text: str) -> dict[str, Any] | None:
    text = text.strip()
    text = re.sub(r"^```(?:json)?\s*|\s*```$", "", text)
    try:
        obj = json.loads(text)
    except ValueError:
        m = re.search(r"\{.*\}", text, re.S)
        if not m:
            return None
        try:
            obj = json.loads(m.group(0))
        except ValueError:
            return None
    return obj if isinstance(obj, dict) else None


DECISION_SYSTEM = (
    "You identify the subject of a photo. You get the classifier's candidates with scores, a visual "
    "description of the photo, and numbered excerpts from the user's knowledge base. Compare the "
    "observed features with each candidate's identification keys in the excerpts. Choose final_name "
    'only from the candidates, or "uncertain" when the evidence does not single one out. Give short '
    "reasoning that cites excerpts as [n]. If uncertain, set need_more_info to true and say in "
    "followup what photo or detail would settle it. Answer in the language of the user's question "
    "(English if none). Reply with JSON only."
)


def decision_schema(names: Sequence[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "final_name": {"type": "string", "enum": [*names, UNCERTAIN]},
            "reasoning": {"type": "string"},
            "need_more_info": {"type": "boolean"},
            "followup": {"type": "string"},
        },
        "required": ["final_name", "reasoning", "need_more_info", "followup"],
        "additionalProperties": False,
    }


# ---------------------------------------------------------------------------- the flow
class Identifier:
    """Runs the identify flow against a knowledge base (or any ``search`` callable).

    ``kb``: a KnowledgeBase (its gallery and ``search_many`` are used); ``search``: overrides the
    KB search (``search(queries, top_k, scope) -> hits``); ``gallery``: an object with
    ``nearest(feature, k, scope)`` (default: the KB's); ``chat_model``: a ChatModel or None.
    """

    def __init__(
        self,
        kb: Any = None,
        chat_model: Any = None,
        config: Config | None = None,
        *,
        search: SearchFn | None = None,
        gallery: Any = None,
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

    # -- seams
    @property
    def gallery(self):
        if self._gallery is None and self.kb is not None and hasattr(self.kb, "chroma_client"):
            from desktop_app.core.identify.gallery import gallery_for

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
        events = list(self.run(image, question=question, scope=scope))
        return IdentifyResult.from_events(events)

    def run(
        self,
        image: ImageSource,
        question: str | None = None,
        scope: str | None = None,
        cancel: Any = None,
        timings: dict[str, float] | None = None,
    ) -> Iterator[Event]:
        """Yield Classified, FeatureQueries, Retrieved, Decision, Answer (Warning/Error as needed)."""
        cfg = self.config.identify
        t = timings if timings is not None else {}
        t0 = time.perf_counter()
        try:
            img = load_image(image, min_side=RESIZE)
        except ParseError as exc:
            yield Error(str(exc))
            return
        crop = centre_crop(img)
        t["load"] = (time.perf_counter() - t0) * 1000
        t1 = time.perf_counter()
        cls = self.classifier.classify_crops([crop], top_k=5)[0]
        t["classify"] = (time.perf_counter() - t1) * 1000

        t1 = time.perf_counter()
        candidates, score = self._candidates(cls, scope)
        level = confidence_level(score, cfg)
        retrieve = needs_retrieval(level, score, cfg)
        t["gallery"] = (time.perf_counter() - t1) * 1000
        yield Classified(candidates, level, retrieve)
        if _cancelled(cancel):
            yield Warning("stopped")
            return

        t1 = time.perf_counter()
        profile = colour_profile(crop, cls.saliency)
        description = describe(profile, cls.labels)
        if self.vision_llm and self.chat_model is not None:
            llm_text = self._vision_description(img)
            if llm_text:
                description = llm_text
        t["describe"] = (time.perf_counter() - t1) * 1000

        top = candidates[0]["name"] if candidates else ""
        self.last_ranking = [c["name"] for c in candidates]
        if not retrieve:
            yield from self._confident(top, score, candidates, scope, description, t)
            return

        names = [c["name"] for c in candidates]
        queries = self.feature_queries(names, description, top)
        yield FeatureQueries(queries, description)
        t1 = time.perf_counter()
        hits = self._dedup(self._safe_search(queries, 2 * len(queries), scope))
        # The vote also needs the own notes (identification keys) of the candidates it may choose
        # between: the leader and the runner-ups within the override margin, when the feature
        # queries did not bring them in. Most photos have no such runner-up: no second search
        # (a query embedding costs ~15-25 ms on this CPU).
        contenders = vote_contenders(candidates, cfg.vote_override_margin)
        vote_names = [n for n in contenders if not notes_about(hits, n)]
        extra = (
            self._safe_search(
                [f"{pretty_name(n)} identification" for n in vote_names], 3 * len(vote_names), scope
            )
            if vote_names
            else []
        )
        t["retrieve"] = (time.perf_counter() - t1) * 1000
        yield Retrieved(hits, " | ".join(queries))
        if _cancelled(cancel):
            yield Warning("stopped")
            return

        t1 = time.perf_counter()
        rows = rank_candidates(
            candidates,
            profile,
            self._dedup(hits + extra),
            override_margin=cfg.vote_override_margin,
            evidence_lead=cfg.vote_evidence_lead,
            reject=self.last_reject,
            reject_uncertain=cfg.reject_uncertain,
        )
        self.last_ranking = [r[0]["name"] for r in rows if r[0]["name"] != UNCERTAIN]
        vote = evidence_vote(
            candidates,
            profile,
            hits,
            margin=cfg.vote_margin,
            rows=rows,
            reject=self.last_reject,
            tentative=cfg.reject_tentative,
        )
        decision = None
        if self.chat_model is not None:
            decision, warning = self._llm_decision(candidates, description, hits, question, cancel)
            if warning:
                yield Warning(warning)
        if decision is None:
            decision = vote
        t["decide"] = (time.perf_counter() - t1) * 1000
        yield Decision(decision)
        yield self._answer(decision, hits, by="llm" if decision is not vote else "vote")

    # -- steps
    def _candidates(self, cls, scope: str | None) -> tuple[list[dict[str, Any]], float]:
        """Gallery labels (calibrated) then ImageNet labels; the confidence score is the gallery's
        top probability when a gallery exists (the KB's own references are what is identified),
        else ImageNet's top-1."""
        from desktop_app.core.identify.gallery import label_probabilities

        cfg = self.config.identify
        gallery_scores = []
        self.last_reject = None
        gallery = self.gallery
        if gallery is not None and hasattr(gallery, "label_scores"):
            try:  # nearest-photo similarity for "in the gallery?", the ridge head for "which label"
                gallery_scores, self.last_reject = gallery.label_scores(cls.feature, scope, cfg)
            except Exception as exc:  # a missing or locked index must not stop identification
                log.warning("gallery search failed: %s", exc)
                gallery_scores, self.last_reject = [], None
        elif gallery is not None:
            try:
                matches = gallery.nearest(cls.feature, k=cfg.gallery_k, scope=scope)
            except Exception as exc:  # a missing or locked index must not stop identification
                log.warning("gallery search failed: %s", exc)
                matches = []
            gallery_scores, self.last_reject = label_probabilities(
                matches, cfg.temperature, cfg.reject_similarity
            )
        out: list[dict[str, Any]] = []
        for g in gallery_scores[:MAX_GALLERY_CANDIDATES]:
            if g.probability >= 0.01 or len(out) < 3:
                out.append(
                    {
                        "name": g.label,
                        "score": round(g.probability, 4),
                        "source": "gallery",
                        "photo": g.source,
                    }
                )
        seen = {norm_name(c["name"]) for c in out}
        for lab in cls.labels[:5]:
            if norm_name(lab.name) in seen:
                continue
            entry = {"name": lab.name, "score": round(lab.score, 4), "source": "imagenet"}
            if lab.zh:
                entry["zh"] = lab.zh
            out.append(entry)
        score = out[0]["score"] if out else 0.0
        return out, float(score)

    @staticmethod
    def feature_queries(names: Sequence[str], description: str, top: str) -> list[str]:
        """Candidate comparison, visual description, top-1 traits."""
        shown = [pretty_name(n) for n in names[:3]]
        return [
            " / ".join(shown) + ": differences and identification keys",
            description,
            f"{pretty_name(top)}: appearance, colours and identification traits",
        ]

    def _safe_search(self, queries: Sequence[str], top_k: int, scope: str | None) -> list[Hit]:
        try:
            # A few short queries: one thread avoids the multi-thread stalls of small forwards.
            with torch_threads(inference_threads()):
                return self.search(queries, top_k, scope)
        except Exception as exc:  # the index may be missing or mid-rebuild
            log.warning("search failed: %s", exc)
            return []

    @staticmethod
    def _dedup(hits: Sequence[Hit]) -> list[Hit]:
        seen: set[str] = set()
        out = []
        for h in hits:
            if h.chunk_id not in seen:
                seen.add(h.chunk_id)
                out.append(h)
        return out

    def _confident(
        self, top: str, score: float, candidates, scope, description: str, t: dict[str, float]
    ) -> Iterator[Event]:
        """High confidence: name it and add a short summary from the knowledge base."""
        yield FeatureQueries([], description)
        t1 = time.perf_counter()
        hits = [h for h in self._safe_search([pretty_name(top)], 3, scope) if mentions(h, top)][:2]
        t["retrieve"] = (time.perf_counter() - t1) * 1000
        yield Retrieved(hits, pretty_name(top))
        decision = {
            "final_name": top,
            "reasoning": f"The classifier is confident ({score:.0%}) that this is {pretty_name(top)}.",
            "need_more_info": False,
            "followup": "",
        }
        yield Decision(decision)
        yield self._answer(decision, hits, by="classifier")

    def _answer(self, decision: dict[str, Any], hits: Sequence[Hit], by: str) -> Answer:
        name = decision.get("final_name") or UNCERTAIN
        citations = [Citation(i + 1, h.source, h.page, h.chunk_id, h.text[:500]) for i, h in enumerate(hits)]
        if name == UNCERTAIN:
            text = "I can't identify this with confidence. " + (decision.get("reasoning") or "")
        else:
            text = f"This looks like {pretty_name(name)}. " + (decision.get("reasoning") or "")
            about = [h for h in hits if mentions(h, name)]
            if about and by == "classifier":
                text += f" {_first_sentences(about[0].text)} [{hits.index(about[0]) + 1}]"
        if decision.get("need_more_info") and decision.get("followup"):
            text += " " + decision["followup"]
        return Answer(text.strip(), citations, by="extractive" if by != "llm" else "llm")

    def _llm_decision(
        self, candidates, description: str, hits: Sequence[Hit], question: str | None, cancel
    ) -> tuple[dict[str, Any] | None, str | None]:
        from desktop_app.core.models.llm.base import LLMError, complete

        names = [c["name"] for c in candidates]
        lines = [f"- {c['name']} ({c['source']}, score {c['score']:.2f})" for c in candidates]
        blocks = [f"[{i + 1}] {h.source}: {h.text[:700]}" for i, h in enumerate(hits)]
        user = (
            (f"Question: {question}\n" if question else "")
            + "Candidates:\n"
            + "\n".join(lines)
            + f"\n\nVisual description: {description}\n\nExcerpts:\n"
            + ("\n\n".join(blocks) or "(none found)")
        )
        messages = [{"role": "system", "content": DECISION_SYSTEM}, {"role": "user", "content": user}]
        try:
            text = complete(
                self.chat_model,
                messages,
                json_schema=decision_schema(names),
                max_tokens=400,
                temperature=0.0,
                cancel=cancel,
            )
        except LLMError as exc:
            return None, f"the language model failed ({exc}); decided by the evidence vote"
        obj = _parse_json(text)
        if not obj or obj.get("final_name") not in [*names, UNCERTAIN]:
            return (
                None,
                "the language model's decision was not valid JSON naming a candidate; decided by the evidence vote",
            )
        return {
            "final_name": obj["final_name"],
            "reasoning": str(obj.get("reasoning", "")),
            "need_more_info": bool(obj.get("need_more_info", obj["final_name"] == UNCERTAIN)),
            "followup": str(obj.get("followup", "")),
        }, None

    def _vision_description(self, img) -> str | None:
        """A vision-capable LLM's description (OpenAI-style image input); None on any failure."""
        from desktop_app.core.models.llm.base import LLMError, complete

        messages = [
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "Describe the main subject of this photo for identification in one sentence: "
                        "kind of animal or object, colours of each body part, distinctive marks.",
                    },
                    {"type": "image_url", "image_url": {"url": _image_data_url(img)}},
                ],
            }
        ]
        try:
            text = complete(self.chat_model, messages, max_tokens=120, temperature=0.0).strip()
        except (LLMError, TypeError, ValueError) as exc:
            log.info("vision description unavailable: %s", exc)
            return None
        return text or None


def _cancelled(cancel: Any) -> bool:
    return bool(cancel is not None and cancel.cancelled())


# ---------------------------------------------------------------------------- the no-LLM vote
def _vote_pool(candidates: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The candidates the vote compares: the gallery's leading labels (ImageNet's without one)."""
    return [c for c in candidates if c.get("source") == "gallery"][:VOTE_CANDIDATES] or list(
        candidates[:VOTE_CANDIDATES]
    )


def vote_contenders(candidates: Sequence[dict[str, Any]], override_margin: float) -> list[str]:
    """The leader and the runner-ups whose score is within ``override_margin`` (log ratio) of it:
    the only candidates the notes could promote (see ``rank_candidates``)."""
    pool = _vote_pool(candidates)
    if not pool:
        return []
    lead = math.log(max(float(pool[0]["score"]), 1e-6))
    return [pool[0]["name"]] + [
        c["name"] for c in pool[1:] if lead - math.log(max(float(c["score"]), 1e-6)) <= override_margin
    ]


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
    candidates: Sequence[dict[str, Any]],
    profile: ColourProfile,
    hits: Sequence[Hit],
    override_margin: float = 0.25,
    evidence_lead: float = 1.0,
    reject: float | None = None,
    reject_uncertain: float = 0.985,
) -> list[tuple[dict[str, Any], float, float | None, set[str], list[Hit]]]:
    """Order the leading candidates: the gallery's ranking, checked against the notes.

    Each contender (``vote_contenders``) gets ``match``, how well its notes' colours agree with
    the subject's (see ``_colour_match``; None without notes; other candidates get None). The gallery's order stands unless a runner-up whose
    score is within ``override_margin`` (log ratio) of the leader's has notes that match better by
    at least ``evidence_lead``: then it moves to the front. Colour names are coarse (look-alike
    species share palettes), and measured on the parrot galleries any looser rule cost accuracy,
    so only a clear disagreement with a near-tie overrides (docs/identify-benchmarks.md).
    ``reject`` (the gallery's "none of these" probability) at or above ``reject_uncertain`` puts
    a pseudo-candidate "uncertain" first: the photo is unlike every reference photo.
    Returns (candidate, log score, match or None, documented colours, documents) in order.
    """
    pool = _vote_pool(candidates)
    # Notes are read for the contenders only: the flow searches their notes on purpose, while a
    # far runner-up's "notes" would be whatever the feature queries happened to return (often a
    # note that merely mentions it, e.g. a hybrid's parent).
    contenders = set(vote_contenders(candidates, override_margin))
    rows = []
    for c in pool:
        docs = notes_about(hits, c["name"]) if c["name"] in contenders else []
        text = " ".join(h.text for h in docs)
        documented = observed_colours(text)
        match = _colour_match(profile, text, documented) if documented else None
        rows.append((c, math.log(max(float(c["score"]), 1e-6)), match, documented, docs))
    if rows:
        lead = rows[0]
        lead_match = lead[2] if lead[2] is not None else 0.0
        best = None
        for row in rows[1:]:
            if row[2] is None or lead[1] - row[1] > override_margin:
                continue
            if row[2] - lead_match >= evidence_lead and (best is None or row[2] > best[2]):
                best = row
        if best is not None:
            rows.remove(best)
            rows.insert(0, best)
    if reject is not None and reject >= reject_uncertain:
        none = {"name": UNCERTAIN, "score": reject, "source": "gallery"}
        rows.insert(0, (none, math.log(max(reject, 1e-6)), None, set(), []))
    return rows


def evidence_vote(
    candidates: Sequence[dict[str, Any]],
    profile: ColourProfile,
    hits: Sequence[Hit],
    margin: float = 0.05,
    rows: list | None = None,
    reject: float | None = None,
    tentative: float = 0.9,
) -> dict[str, Any]:
    """The no-LLM decision: the first of ``rank_candidates`` (the gallery's pick unless the notes
    clearly disagree), "uncertain" when the photo is unlike every reference photo, when no
    candidate has notes, or when the two leaders are tied (gallery scores within ``margin`` log
    ratio) and their notes match the observed colours equally well. A name chosen while the
    gallery's "none of these" probability ``reject`` is at least ``tentative`` is given as the
    nearest guess with a request for a better photo."""
    observed = {n: s for n, s in profile.shares.items() if s >= 0.03}
    rows = rows if rows is not None else rank_candidates(candidates, profile, hits)
    if not rows:
        return {
            "final_name": UNCERTAIN,
            "reasoning": "There are no candidates to compare.",
            "need_more_info": True,
            "followup": _followup(profile),
        }
    best = rows[0]
    runner = rows[1] if len(rows) > 1 else None
    seen_names = ", ".join(profile.names()) or "no clear colours"
    reasons = []
    named = [r for r in rows if r[0]["name"] != UNCERTAIN]
    for i, (c, _, match, documented, docs) in enumerate(named[:3]):
        if match is None:
            if docs:
                reasons.append(f"{pretty_name(c['name'])}: notes ({docs[0].source}) name no colours")
            elif i == 0:  # only the leader's missing notes are worth saying
                reasons.append(f"{pretty_name(c['name'])}: no notes found")
        else:
            agree = sorted(set(documented) & set(observed), key=COLOUR_NAMES.index)
            src = docs[0].source if docs else ""
            reasons.append(
                f"{pretty_name(c['name'])}: notes ({src}) mention {', '.join(agree) or 'none'} of the observed colours"
            )
    reasoning = f"Observed {seen_names}." + (" " + "; ".join(reasons) + "." if reasons else "")
    if best[0]["name"] == UNCERTAIN:
        return {
            "final_name": UNCERTAIN,
            "reasoning": reasoning + " The photo is not close to any reference photo in the knowledge base.",
            "need_more_info": True,
            "followup": _followup(profile),
        }
    documented_any = any(r[2] is not None for r in rows)
    tied = (
        runner is not None
        and best[2] is not None
        and runner[2] is not None
        and abs(best[1] - runner[1]) < margin
        and abs(best[2] - runner[2]) < TIE_MATCH
    )
    if not documented_any or tied:
        return {
            "final_name": UNCERTAIN,
            "reasoning": reasoning
            + (
                " The reference photos and the notes do not separate the candidates."
                if documented_any
                else " No candidate has notes."
            ),
            "need_more_info": True,
            "followup": _followup(profile, [r[0]["name"] for r in rows[:2]]),
        }
    leader = max(rows, key=lambda r: r[1])  # the gallery's first choice
    if leader is not best:
        reasoning += (
            f" The reference photos put {pretty_name(leader[0]['name'])} and {pretty_name(best[0]['name'])} close"
            f" together; the notes of {pretty_name(best[0]['name'])} fit the observed colours clearly better."
        )
    if reject is not None and reject >= tentative:
        return {
            "final_name": best[0]["name"],
            "reasoning": reasoning
            + f" The photo is not close to any reference photo ({reject:.0%} none of them), so this is"
            " only the nearest guess.",
            "need_more_info": True,
            "followup": _followup(profile, [r[0]["name"] for r in rows[:2]]),
        }
    return {"final_name": best[0]["name"], "reasoning": reasoning, "need_more_info": False, "followup": ""}


def _followup(profile: ColourProfile, names: Sequence[str] = ()) -> str:
    ask = "Please send a sharper photo showing the whole bird (head, beak, wings and tail) in good light"
    if len(names) >= 2:
        ask += f", ideally one where the features that separate {pretty_name(names[0])} from {pretty_name(names[1])} are visible"
    ask += ", or add reference photos and notes for this kind to the knowledge base."
    return ask


def colour_names_zh(names: Sequence[str]) -> str:
    return "、".join(ZH_NAMES.get(n, n) for n in names)


def identify_image(
    image: ImageSource,
    search: SearchFn | None = None,
    chat_model: Any = None,
    config: Config | None = None,
    gallery: Any = None,
    question: str | None = None,
    scope: str | None = None,
) -> IdentifyResult:
    """Plain-function entry point: identify ``image`` with a search callable and optional LLM."""
    return Identifier(None, chat_model, config, search=search, gallery=gallery).identify(
        image, question, scope
    )
