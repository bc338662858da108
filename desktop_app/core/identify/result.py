"""What an identification produces: the confidence rule that steers the flow, and the aggregate
of its events (``IdentifyResult``, what `kdesk identify --json` prints)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from desktop_app.core.config import IdentifyConfig
from desktop_app.core.events import (
    Answer,
    Candidate,
    Classified,
    Decision,
    Error,
    Event,
    FeatureQueries,
    Retrieved,
    Warning,
)
from desktop_app.core.library.documents import Hit
from desktop_app.core.messages import Text, english, render, render_lines

HIGH, MEDIUM, LOW = "High", "Medium", "Low"
UNCERTAIN = "uncertain"  # the decision's name when no candidate is singled out


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


@dataclass
class IdentifyResult:
    """The aggregate of one identification's events."""

    candidates: list[Candidate] = field(default_factory=list)
    confidence_level: str = LOW
    confidence_score: float = 0.0
    low_confidence: bool = True  # True: the knowledge base was consulted before deciding
    visual_description: Text = ""
    feature_queries: list[Text] = field(default_factory=list)
    hits: list[Hit] = field(default_factory=list)
    decision: Decision | None = None  # None: the flow stopped before deciding
    answer: str = ""  # English (``Answer.text``)
    answer_lines: list[Text] = field(default_factory=list)  # what the window renders (``Answer.lines``)
    warnings: list[Text] = field(default_factory=list)  # catalogue messages, rendered when shown
    error: Text | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (`kdesk identify --json`): every text in English, a reasoning as one
        string, a line per sentence."""
        return {
            "candidates": [c.to_dict() for c in self.candidates],
            "confidence_level": self.confidence_level,
            "confidence_score": round(self.confidence_score, 4),
            "low_confidence": self.low_confidence,
            "visual_description": render(self.visual_description),
            "feature_queries": [render(q) for q in self.feature_queries],
            "hits": [h.to_dict() for h in self.hits],
            "decision": decision_json(self.decision, english) if self.decision is not None else {},
            "answer": self.answer,
            "warnings": [str(w) for w in self.warnings],  # JSON renders English
            "error": str(self.error) if self.error is not None else None,
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
                out.confidence_score = e.candidates[0].score if e.candidates else 0.0
            elif isinstance(e, FeatureQueries):
                out.feature_queries = list(e.queries)
                out.visual_description = e.visual_description
            elif isinstance(e, Retrieved):
                known = {h.chunk_id for h in out.hits}
                out.hits += [h for h in e.hits if h.chunk_id not in known]
            elif isinstance(e, Decision):
                out.decision = e
            elif isinstance(e, Answer):
                out.answer = e.text
                out.answer_lines = list(e.lines)
            elif isinstance(e, Warning):
                out.warnings.append(e.message)
            elif isinstance(e, Error):
                out.error = e.message
        return out


def decision_json(decision: Decision, texts: Callable[[Any], Any]) -> dict[str, Any]:
    """A decision as JSON, its reasoning and follow-up through ``texts``: ``english`` for the CLI
    (the reasoning one string, a line per sentence), ``to_json`` for a store (``{code, params}``)."""
    data = asdict(decision)  # its messages would come out as plain dicts: set below
    if texts is english:
        data["reasoning"] = render_lines(decision.reasoning)
        data["followup"] = render(decision.followup)
    else:
        data["reasoning"] = [texts(line) for line in decision.reasoning]
        data["followup"] = texts(decision.followup)
    return data
