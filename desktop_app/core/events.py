"""Typed events yielded by Assistant.ask / Assistant.identify: one pipeline for GUI, CLI and tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from desktop_app.core.library.documents import Hit


@dataclass
class RouteDecided:
    use_rag: bool
    search_query: str
    is_followup: bool
    by: str  # "llm" | "heuristic" | "mode" | "agent"
    reason: str = ""  # why: the heuristic's marker, or why the LLM router was not used


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


@dataclass
class Answer:
    text: str
    citations: list[Citation] = field(default_factory=list)
    by: str = "llm"  # "llm" | "extractive"


@dataclass
class Classified:
    candidates: list[dict[str, Any]]  # {name, score, source}
    confidence_level: str  # "High" | "Medium" | "Low"
    low_confidence: bool


@dataclass
class FeatureQueries:
    queries: list[str]
    visual_description: str = ""


@dataclass
class Decision:
    decision: dict[str, Any]  # {final_name, reasoning, need_more_info, followup}


@dataclass
class Warning:  # noqa: A001 - the design's event name
    message: str


@dataclass
class Error:
    message: str


Event = (
    RouteDecided | Retrieved | Token | Answer | Classified | FeatureQueries | Decision | Warning | Error
)
