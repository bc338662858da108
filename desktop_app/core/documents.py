"""Plain data shared by every layer (a core basic, like events): sections from parsers, chunks in
the index, hits from search.

Vocabulary (one concept, one word): a *document* is a file in the knowledge folder, a *section*
is a parser's unit (a PDF page, a DOCX heading's body), a *chunk* is a piece of one section that
gets embedded, a *hit* is a search result.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from desktop_app.core.messages import Text, UserError


class ParseError(UserError):
    """A document could not be read: ``ParseError(code, **params)``, a reason of
    ``library/reasons.py``; its English text is what the manifest stores and the CLI prints."""


@dataclass
class Section:
    """A parser's unit of text: never split across by the chunker's merging."""

    text: str
    page: int | None = None  # 1-based page for paged formats, else None
    heading_path: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    ocr: bool = False  # read by OCR from a picture of the page (ocr.py), not from a text layer


@dataclass
class Chunk:
    """A piece of one section, the unit that is embedded and searched."""

    id: str  # "<doc_id>-chunk-<i>"
    doc_id: str
    text: str
    source: str  # path relative to the knowledge folder, with "/" separators
    page: int | None
    heading_path: list[str]
    chunk_index: int
    total_chunks: int
    char_start: int  # offsets into the section's text
    char_end: int
    section_index: int = 0
    scope: str = "shared"
    lang: str = ""  # languages.text_lang of the text, found at indexing ("": not known)
    ocr: bool = False  # its section was read by OCR


@dataclass
class Hit:
    """A search result. ``score`` is the final ranking score (rerank if run, else fused or vector)."""

    chunk_id: str
    doc_id: str
    text: str
    source: str
    page: int | None
    chunk_index: int
    total_chunks: int
    score: float
    vector_score: float | None = None  # 1 - cosine distance
    keyword_score: float | None = None  # BM25 score
    fused_score: float | None = None  # coarse stage: document-level score fusion, or RRF (retrieval.py)
    rerank_score: float | None = None  # cross-encoder, None when the stage did not run
    heading_path: list[str] = field(default_factory=list)
    scope: str = "shared"
    lang: str = ""  # the chunk's language (languages.py); "" for chunks indexed before it was stored
    ocr: bool = False  # the text was read by OCR (a scanned page, an image), so it may hold misreadings

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class DocumentInfo:
    """One row of `kdesk list`: a file in the knowledge folder and its index state."""

    name: str  # path relative to the knowledge folder
    doc_id: str
    sha256: str
    size: int
    chunks: int
    status: str  # "indexed" | "failed" | "pending"
    error: Text | None = None  # a catalogue message, rendered by the reader
    indexed_at: str | None = None
    kind: str = "text"  # "text" | "image"
    scope: str = "shared"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (`kdesk list --json`): the error in English."""
        return asdict(self) | {"error": None if self.error is None else str(self.error)}


def page_label(source: str, page: int | None) -> str:
    """How a citation names its place: "slide 3" in a PPTX (its page is the slide number, see
    parsers/pptx.py), "p. 3" elsewhere, "" without a page."""
    if page is None:
        return ""
    return f"slide {page}" if source.lower().endswith(".pptx") else f"p. {page}"
