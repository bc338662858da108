"""Typed events yielded by Assistant.ask / Assistant.identify: one pipeline for GUI, CLI and tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from desktop_app.core.documents import Hit
from desktop_app.core.messages import Text


@dataclass
class RouteDecided:
    use_rag: bool
    search_query: str
    is_followup: bool
    by: str  # "llm" | "heuristic" | "mode" | "agent"
    reason: str = ""  # why: the heuristic's marker, or why the LLM router was not used
    # The reading chosen: "none" | "passages" | "document" (whole documents) | "library" (the
    # index); "" (a route stored before kinds, or made without one) is read from use_rag.
    kind: str = ""

    def __post_init__(self) -> None:
        if not self.kind:
            self.kind = "passages" if self.use_rag else "none"


@dataclass
class Retrieved:
    hits: list[Hit]
    query: str = ""


@dataclass
class Token:
    text: str


@dataclass
class Citation:
    n: int
    source: str
    page: int | None
    chunk_id: str = ""
    text: str = ""
    # The cited file's sha256 when the answer was given ("" when unknown, e.g. saved before it was
    # kept): the viewer compares it with the file now to say the passage may have moved.
    sha256: str = ""


@dataclass
class Answer:
    text: str  # English for the model's history, the CLI and JSON (``lines`` rendered, where set)
    citations: list[Citation] = field(default_factory=list)
    by: str = "llm"  # "llm" | "extractive" | "evidence" (refused on weak evidence, no model asked)
    # The documents do not answer the question: ``text`` says so, nothing is cited, and ``related``
    # holds the nearest passages for the user to check.
    refused: bool = False
    related: list[Citation] = field(default_factory=list)
    # The text as the core wrote it, one message (or quoted note) per line: what the window
    # renders in its language (an identification's answer); empty when ``text`` is all there is.
    lines: list[Text] = field(default_factory=list)


@dataclass
class Candidate:
    """One answer the photo classifier proposes, best first in ``Classified.candidates``."""

    name: str
    score: float  # calibrated probability (gallery) or softmax probability (ImageNet)
    source: str  # "gallery" | "imagenet"
    photo: str | None = None  # gallery: the best-matching reference photo
    zh: str | None = None  # the Chinese name where known: a note's ("Chinese: ..."), else ImageNet's
    title: str | None = None  # the English name its note's title gives ("Scarlet Macaw"), where known

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, with ``photo``, ``zh`` and ``title`` only when set (`kdesk identify --json`)."""
        out: dict[str, Any] = {"name": self.name, "score": self.score, "source": self.source}
        if self.photo is not None:
            out["photo"] = self.photo
        if self.zh is not None:
            out["zh"] = self.zh
        if self.title is not None:
            out["title"] = self.title
        return out


@dataclass
class Classified:
    candidates: list[Candidate]
    confidence_level: str  # "High" | "Medium" | "Low"
    low_confidence: bool  # True: the knowledge base is consulted before deciding


@dataclass
class FeatureQueries:
    queries: list[Text]  # messages the window shows in its language; searched as their English
    visual_description: Text = ""


@dataclass
class Decision:
    """The identify flow's verdict: a candidate's name or "uncertain", and why."""

    final_name: str
    reasoning: list[Text]  # one sentence per line: the flow's messages, or a model's own words
    need_more_info: bool
    followup: Text  # what photo or detail would settle it ("" when nothing is needed)
    guesses: list[str] = field(default_factory=list)  # nearest candidates, shown after "uncertain"
    # Species the knowledge base only describes (no reference photos) whose notes fit the photo.
    also_possible: list[str] = field(default_factory=list)
    # Chinese names of final_name, guesses and also_possible where known (shown in a Chinese window).
    zh_names: dict[str, str] = field(default_factory=dict)
    # Their notes' English titles where the label is not one ("ara_macao" -> "Scarlet Macaw").
    titles: dict[str, str] = field(default_factory=dict)


@dataclass
class Warning:  # noqa: A001 - the design's event name
    message: Text  # a catalogue message, rendered by the reader (the window in its language)


@dataclass
class Progress:
    """How far a long reading has got (a whole document read part by part): ``what`` says what."""

    done: int
    total: int
    what: Text


@dataclass
class Error:
    message: Text


Event = (
    RouteDecided
    | Retrieved
    | Token
    | Answer
    | Classified
    | FeatureQueries
    | Decision
    | Warning
    | Error
    | Progress
)
