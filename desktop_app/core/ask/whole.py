"""Reading whole documents: summarise, outline, say what one says about a question, compare.

A document is read back from the index in its own order (its chunks, the overlap between them
dropped) and grouped into its sections by heading path; every quoted or summarised statement is
cited to the chunk it came from (its file, section and page), with the app's citation markers.

With a model the reading is map-then-reduce: the sections are packed into groups that fit the
model's context budget (budget.py), each group is summarised with its passages numbered as the final
answer cites them, and the group summaries are merged (in several rounds when they do not fit at
once); the last step streams. Without a model the answer is extractive: the document's own outline
(its headings) and, per section, its most central sentences (a LexRank-style centrality over the
app's sentence splitter and match keys, English and Chinese); a comparison lays the sides' matching
fields ("Colours:", "Habitat:") or sections side by side.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np

from desktop_app.core.ask import notes
from desktop_app.core.ask.budget import Budget, ContextBlock, fit_blocks, render_blocks
from desktop_app.core.ask.citations import CITATION_MARK, check_citations, citations_for
from desktop_app.core.ask.conversation import Conversation
from desktop_app.core.ask.prompts import CITE_REMINDER, MAP_SYSTEM, OUTLINE_SYSTEM, REDUCE_SYSTEM, SIDE_HEADER
from desktop_app.core.ask.question import Question
from desktop_app.core.ask.sentences import split_sentences
from desktop_app.core.events import Answer, Progress, Token, Warning
from desktop_app.core.library.documents import Hit
from desktop_app.core.library.languages import CJK_RE
from desktop_app.core.library.text_analysis import match_keys
from desktop_app.core.messages import message
from desktop_app.core.models.llm.base import ChatModel, LLMError, Message
from desktop_app.core.tasks import STOPPED, Cancelled, TaskState, check

if TYPE_CHECKING:
    from desktop_app.core.config import Config
    from desktop_app.core.library.knowledge import KnowledgeBase


class Assistant(Protocol):
    """What reading whole documents uses of the assistant (assistant.py, which calls it): its
    knowledge base, its chat model (None: extractive) and its config."""

    kb: KnowledgeBase | None
    chat_model: ChatModel | None
    config: Config


@dataclass
class Side:
    """One side of a reading: one document, or several notes on one subject ("the macaws")."""

    label: str  # how the question names it: "the kea note", "macaws", "kea.md"
    sources: list[str]  # the knowledge base's document sources (manifest keys) read as this side


# ------------------------------------------------------------------------------ reading back
@dataclass
class Piece:
    """One chunk's own text (without the overlap it repeats from the chunk before)."""

    hit: Hit
    text: str


@dataclass
class Part:
    """A section of a document as read back: consecutive chunks under one heading path."""

    source: str
    heading: list[str]
    pieces: list[Piece] = field(default_factory=list)

    @property
    def page(self) -> int | None:
        return self.pieces[0].hit.page if self.pieces else None

    @property
    def text(self) -> str:
        return "\n".join(p.text for p in self.pieces)


_MAX_OVERLAP = 2000  # no chunker overlap is longer (index.chunk_overlap is clamped to a third of a chunk)


def _own_text(prev: str, text: str) -> str:
    """``text`` without the start it repeats from the end of ``prev`` (the chunker's overlap)."""
    for k in range(min(len(prev), len(text), _MAX_OVERLAP), 15, -1):
        if prev.endswith(text[:k]):
            return text[k:].lstrip()
    return text


def parts_of(hits: Sequence[Hit]) -> list[Part]:
    """A document's chunks (any order) as its sections, in document order, overlap dropped."""
    parts: list[Part] = []
    prev: Hit | None = None
    for hit in sorted(hits, key=lambda h: (h.source, h.chunk_index)):
        same_doc = prev is not None and prev.source == hit.source
        text = _own_text(prev.text, hit.text) if same_doc and prev is not None else hit.text
        if not parts or not same_doc or parts[-1].heading != hit.heading_path:
            parts.append(Part(hit.source, list(hit.heading_path)))
        if text.strip():
            parts[-1].pieces.append(Piece(hit, text.strip()))
        prev = hit
    return [p for p in parts if p.pieces]


def read_sources(assistant: Assistant, sources: Sequence[str]) -> list[Part]:
    """The sections of each document in ``sources``, read back from the index, in the given order."""
    kb = assistant.kb
    out: list[Part] = []
    for source in sources:
        out.extend(parts_of(kb.chunks_of(kb.doc_id(source))))
    return out


# ------------------------------------------------------------------------------ what is asked
_OUTLINE = re.compile(
    r"\boutline\b|\bheadings?\b|\btable of contents\b|\bsections?\b.*\b(?:has|have|are)\b|"
    r"\bstructure\b|大纲|提纲|目录|标题|章节|结构",
    re.I,
)
_SUMMARY = re.compile(
    r"\bsummar|\bsum up\b|\boverview\b|\bgist\b|\btl;?dr\b|\bwhat(?:'s| is| does)\b.*\b(?:about|say)\b\s*\??$|"
    r"\bmain (?:points|ideas)\b|\bkey points\b|概括|总结|摘要|概述|梗概|要点|讲了什么|说了什么|主要内容|讲的是什么",
    re.I,
)


def reading_kind(q: Question, sides: Sequence[Side]) -> str:
    """The kind of reading: "compare" (two sides or more), "outline", "summary", else "about"."""
    if len(sides) >= 2:
        return "compare"
    if _OUTLINE.search(q.text):
        return "outline"
    return "summary" if _SUMMARY.search(q.text) else "about"


# ------------------------------------------------------------------------------ centrality
@dataclass
class Sentence:
    text: str
    part: int  # index of its Part
    piece: Piece  # the chunk it is cited to
    position: int  # its place in its part (0: the part's first sentence)
    keys: Counter[str] = field(default_factory=Counter)
    score: float = 0.0


_MIN_KEYS = 4  # shorter sentences (a bare heading, "See p. 4.") are not quoted
_MAX_CHARS = 400  # a "sentence" longer than this is a run-on table or list, not a statement
# Tuned on `kdesk bench summaries` (its first 40 documents of each set, docs/summaries.md): a walk
# that restarts often (0.5) keeps the lead and question prior strong.
_DAMPING = 0.5
_LEAD = 1.0  # how much more often the walk restarts at a part's first sentence
_SIMILAR = 0.5  # a sentence this close to one already chosen says the same thing


def sentences_of(parts: Sequence[Part]) -> list[Sentence]:
    """Every quotable sentence of the parts, in document order, with its match keys."""
    out: list[Sentence] = []
    for i, part in enumerate(parts):
        position = 0
        for piece in part.pieces:
            for s in split_sentences(piece.text):
                # Chinese sentences are compared by character bigrams: single characters made every two alike.
                keys = Counter(k for k in match_keys(s) if not CJK_RE.fullmatch(k))
                if sum(keys.values()) < _MIN_KEYS or len(s) > _MAX_CHARS or s.lstrip().startswith("#"):
                    continue
                if sum(c.isdigit() for c in s) > 0.2 * sum(c.isalpha() for c in s):
                    continue  # a table row or a list of figures, not a statement
                out.append(Sentence(s.strip(), i, piece, position, keys))
                position += 1
    return out


def _vectors(sentences: Sequence[Sentence]) -> np.ndarray:
    """Rows of unit-length tf-idf vectors over the sentences' match keys."""
    df: Counter[str] = Counter()
    for s in sentences:
        df.update(s.keys.keys())
    vocab = {k: j for j, k in enumerate(df)}
    n = len(sentences)
    mat = np.zeros((n, len(vocab)), dtype=np.float32)
    for i, s in enumerate(sentences):
        for k, c in s.keys.items():
            mat[i, vocab[k]] = (1 + math.log(c)) * math.log((n + 1) / df[k])
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    return mat / np.maximum(norms, 1e-9)


def _pagerank(sim: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Stationary scores of a random walk over the similarity graph that restarts by ``prior``."""
    np.fill_diagonal(sim, 0.0)
    rows = sim.sum(axis=1, keepdims=True)
    walk = np.where(rows > 0, sim / np.maximum(rows, 1e-9), 1.0 / len(sim))
    score = np.full(len(sim), 1.0 / len(sim))
    for _ in range(50):
        nxt = (1 - _DAMPING) * prior + _DAMPING * walk.T @ score
        if np.abs(nxt - score).sum() < 1e-6:
            return nxt
        score = nxt
    return score


_GRAPH_LIMIT = 1500  # sentences ranked in one graph; beyond it, by closeness to the centroid


# Words about the reading itself, not what is asked about: "what does the paper say about BM25?"
_READING_WORDS = re.compile(
    r"\b(?:papers?|documents?|notes?|files?|articles?|reports?|chapters?|sections?|books?|pdf|docx|"
    r"says?|said|tells?|mentions?|writes?|wrote|about)\b|文档|论文|笔记|文件|文章|报告|提到|说了|讲了|关于",
    re.I,
)


def on_question(sentences: Sequence[Sentence], about: str) -> list[float]:
    """How much of the question's terms each sentence holds, each term weighted by its rarity in the
    document (a word every sentence has, like "paper", says little)."""
    asked = {k for k in match_keys(_READING_WORDS.sub(" ", about)) if not CJK_RE.fullmatch(k)}
    df = Counter(k for s in sentences for k in asked & s.keys.keys())
    weight = {k: math.log((len(sentences) + 1) / (df[k] + 0.5)) for k in asked}
    total = sum(weight.values()) or 1.0
    return [sum(weight[k] for k in asked & s.keys.keys()) / total for s in sentences]


def rank_sentences(sentences: Sequence[Sentence], about: str = "") -> None:
    """Score each sentence by its centrality (LexRank over tf-idf cosines, restarting more often
    at a part's opening sentences, and at sentences sharing the terms of ``about``: a question)."""
    if not sentences:
        return
    vecs = _vectors(sentences)
    prior = np.array([1.0 + _LEAD / (1 + s.position) for s in sentences])
    if about:
        relevance = np.array(on_question(sentences, about))
        prior += 3.0 * relevance
    prior /= prior.sum()
    if len(sentences) <= _GRAPH_LIMIT:
        scores = _pagerank(vecs @ vecs.T, prior)
    else:
        centroid = vecs.mean(axis=0)
        scores = (vecs @ centroid) * prior * len(sentences)
    for s, v in zip(sentences, scores, strict=True):
        s.score = float(v)


def pick_sentences(sentences: Sequence[Sentence], most: int, per_part: int = 0) -> list[Sentence]:
    """The ``most`` best sentences (after ``rank_sentences``), none close to one already picked,
    at most ``per_part`` from one part (0: no limit), in document order."""
    if not sentences:
        return []
    vecs = _vectors(sentences)
    order = sorted(range(len(sentences)), key=lambda i: -sentences[i].score)
    chosen: list[int] = []
    taken: Counter[int] = Counter()
    for i in order:
        if len(chosen) >= most:
            break
        if per_part and taken[sentences[i].part] >= per_part:
            continue
        if chosen and float(np.max(vecs[chosen] @ vecs[i])) >= _SIMILAR:
            continue
        chosen.append(i)
        taken[sentences[i].part] += 1
    return [sentences[i] for i in sorted(chosen)]


def summary_length(n_sentences: int) -> int:
    """How many sentences an extractive summary of a document of ``n_sentences`` quotes."""
    return max(3, min(15, round(2 * math.sqrt(n_sentences))))


def extractive_summary(parts: Sequence[Part], most: int | None = None, about: str = "") -> list[Sentence]:
    """The most central sentences of the parts (``about``: a question they are read for)."""
    sentences = sentences_of(parts)
    if about:  # only sentences on the question, if any are
        relevance = on_question(sentences, about)
        best = max(relevance, default=0.0)
        sentences = [s for s, r in zip(sentences, relevance, strict=True) if r >= 0.5 * best] or sentences
    rank_sentences(sentences, about)
    n = most if most is not None else summary_length(len(sentences))
    return pick_sentences(sentences, n, per_part=max(2, math.ceil(2 * n / max(1, len(parts)))))


def _name(side: Side) -> str:
    return side.label or ", ".join(side.sources)


def _page_label(page: int | None, lang: str) -> str:
    return notes.written(message(notes.WHOLE_PAGE, page=page), lang)


def _heading_line(part: Part, lang: str) -> str:
    title = " › ".join(part.heading)
    if title:
        return f"**{title}**"
    page = part.page
    if page is None:
        return ""
    return f"**{_page_label(page, lang)}**"


class _Cites:
    """Numbers cited chunks in the order the answer first quotes them."""

    def __init__(self) -> None:
        self.blocks: list[ContextBlock] = []
        self._n: dict[str, int] = {}

    def mark(self, piece: Piece) -> str:
        hit = piece.hit
        n = self._n.get(hit.chunk_id)
        if n is None:
            n = self._n[hit.chunk_id] = len(self.blocks) + 1
            self.blocks.append(ContextBlock(n, hit, piece.text))
        return f"[{n}]"


def _quote(s: Sentence, cites: _Cites) -> str:
    return f"{s.text} {cites.mark(s.piece)}"


def extractive_reading(
    q: Question, sides: Sequence[Side], parts_by_side: Sequence[list[Part]], kind: str
) -> Answer:
    """The answer without a model: an outline, a summary, the sentences on a question, or a comparison."""
    lang = q.language
    cites = _Cites()
    if kind == "compare":
        text = _compare_extractive(lang, sides, parts_by_side, cites)
    else:
        text = _one_extractive(q, kind, _name(sides[0]), parts_by_side[0], cites)
    return Answer(text, citations_for([b.n for b in cites.blocks], cites.blocks), by="extractive")


def _one_extractive(q: Question, kind: str, name: str, parts: list[Part], cites: _Cites) -> str:
    lang = q.language
    if kind == "outline":
        lines = [notes.written(message(notes.WHOLE_OUTLINE, name=name), lang)]
        headed = [p for p in parts if p.heading]
        if not headed:  # its pages, each with its first sentence
            lines.append(notes.written(message(notes.WHOLE_NO_HEADINGS, name=name), lang))
            pages: dict[int | None, Sentence] = {}
            for s in sentences_of(parts):
                pages.setdefault(s.piece.hit.page, s)
            lines.extend(f"- {_page_label(page, lang)}: {_quote(s, cites)}" for page, s in pages.items())
            return "\n".join(lines)
        seen: set[tuple[str, ...]] = set()
        for part in headed or parts:
            key = tuple(part.heading) or (str(part.page),)
            if key in seen:
                continue
            seen.add(key)
            depth = max(0, len(part.heading) - 1)
            label = part.heading[-1] if part.heading else _heading_line(part, lang).strip("*")
            lines.append(f"{'  ' * depth}- {label} {cites.mark(part.pieces[0])}")
        return "\n".join(lines)
    about = q.text if kind == "about" else ""
    picked = extractive_summary(parts, about=about, most=None if kind == "summary" else 5)
    note = message(notes.WHOLE_ABOUT, name=name) if kind == "about" else message(notes.WHOLE_SUMMARY)
    blocks = [notes.written(note, lang)]
    outline = [" › ".join(p.heading) for p in parts if p.heading]
    if kind == "summary" and len(dict.fromkeys(outline)) > 1:
        intro = notes.written(message(notes.WHOLE_OUTLINE, name=name), lang)
        blocks.append(intro + " " + " · ".join(dict.fromkeys(outline)))
    by_part: dict[int, list[Sentence]] = {}
    for s in picked:
        by_part.setdefault(s.part, []).append(s)
    for i, chosen in by_part.items():
        head = _heading_line(parts[i], lang) if len(by_part) > 1 or parts[i].heading else ""
        body = "\n".join(f"- {_quote(s, cites)}" for s in chosen)
        blocks.append(f"{head}\n{body}" if head else body)
    return "\n\n".join(blocks)


# "**Colours:** olive green", "Habitat: forests", "颜色：绿色": a labelled field of a note.
_FIELD = re.compile(
    r"^\s*(?:[-*+]\s+)?\*{0,2}([^\W\d_][\w '’/&()-]{0,40}?|[\u3400-\u9fff]{1,8})\s*[:：]\s*\*{0,2}\s*(.+)$"
)


@dataclass
class _Field:
    label: str
    value: str
    piece: Piece
    note: str  # the note's title (its first heading) or file name


def fields_of(parts: Sequence[Part]) -> list[_Field]:
    """The labelled lines ("Colours: ...") of the parts, in order."""
    out: list[_Field] = []
    for part in parts:
        note = part.heading[0] if part.heading else part.source.rsplit("/", 1)[-1]
        for piece in part.pieces:
            for line in piece.text.splitlines():
                m = _FIELD.match(line)
                if m and len(m.group(2).strip()) > 1:
                    label = m.group(1).strip().strip("*").strip()
                    out.append(_Field(label, m.group(2).strip().strip("*").strip(), piece, note))
    return out


_NOTES_PER_SIDE = 5


def _compare_extractive(
    lang: str, sides: Sequence[Side], parts_by_side: Sequence[list[Part]], cites: _Cites
) -> str:
    fields = [fields_of(parts) for parts in parts_by_side]
    labels: dict[str, str] = {}  # key -> label as first written
    held: list[set[str]] = []
    for side_fields in fields:
        keys = set()
        for f in side_fields:
            key = f.label.lower()
            labels.setdefault(key, f.label)
            keys.add(key)
        held.append(keys)
    shared = [k for k in labels if sum(k in h for h in held) >= 2]
    if shared:
        blocks = [notes.written(message(notes.WHOLE_COMPARE_FIELDS), lang)]
        for key in shared:
            lines = [f"**{labels[key]}**"]
            for side, side_fields in zip(sides, fields, strict=True):
                mine = [f for f in side_fields if f.label.lower() == key]
                notes_seen = list(dict.fromkeys(f.note for f in mine))
                several = len(notes_seen) > 1
                for f in mine:
                    if f.note not in notes_seen[:_NOTES_PER_SIDE]:
                        continue
                    who = f"{_name(side)} ({f.note})" if several else _name(side)
                    lines.append(f"- {who}: {f.value} {cites.mark(f.piece)}")
                if len(notes_seen) > _NOTES_PER_SIDE:
                    more = message(notes.WHOLE_MORE_NOTES, count=len(notes_seen) - _NOTES_PER_SIDE)
                    lines.append(f"- {_name(side)}: " + notes.written(more, lang))
                if not mine:
                    lines.append(f"- {_name(side)}: —")
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)
    # No shared fields: each side's most central sentences, one block per side.
    blocks = [notes.written(message(notes.WHOLE_COMPARE_SECTIONS), lang)]
    for side, parts in zip(sides, parts_by_side, strict=True):
        picked = extractive_summary(parts, most=4)
        blocks.append(f"**{_name(side)}**\n" + "\n".join(f"- {_quote(s, cites)}" for s in picked))
    return "\n\n".join(blocks)


# ------------------------------------------------------------------------------ with a model
_NOTHING = re.compile(r"^\W*NOTHING\W*$")
_MAP_SENTENCES = 4
_MAP_ANSWER_TOKENS = 220  # what one group's summary may take (the budget reserves it)


def _model_budget(assistant: Assistant, answer_tokens: int) -> Budget:
    model = assistant.chat_model
    return Budget(model.context_window, answer_tokens, getattr(model, "count_tokens", None))


def _groups(
    parts: Sequence[Part], budget: Budget, fixed: Sequence[str], first_n: int
) -> list[list[ContextBlock]]:
    """The parts' chunks as numbered blocks (from ``first_n``) packed in order into groups that
    each fit the model's context beside ``fixed`` (the prompt); a chunk too long alone is shortened."""
    room = budget.available(fixed)
    groups: list[list[ContextBlock]] = [[]]
    left = room
    n = first_n
    for part in parts:
        for piece in part.pieces:
            hit = piece.hit
            own = Hit(**{**hit.__dict__, "text": piece.text})
            block = fit_blocks([own], room, budget)
            if not block:
                continue
            block = [ContextBlock(n, hit, block[0].text, block[0].truncated)]
            cost = budget.count(block[0].render()) + 2
            if cost > left and groups[-1]:
                groups.append([])
                left = room
            groups[-1].append(block[0])
            left -= cost
            n += 1
    return [g for g in groups if g]


def _complete(model: ChatModel, messages: list[Message], max_tokens: int, cancel: TaskState | None) -> str:
    return "".join(model.stream(messages, max_tokens=max_tokens, cancel=cancel)).strip()


def _stream(
    model: ChatModel, messages: list[Message], max_tokens: int, cancel: TaskState | None, parts: list[str]
) -> Iterator[Token]:
    for piece in model.stream(messages, max_tokens=max_tokens, cancel=cancel):
        parts.append(piece)
        yield Token(piece)


def _map_system(q: Question, kind: str, name: str) -> str:
    what = "about" if kind == "about" else "summary"
    return MAP_SYSTEM[what][q.language].format(name=name, n=_MAP_SENTENCES, question=q.text)


def _map_group(
    assistant: Assistant, system: str, group: Sequence[ContextBlock], lang: str, cancel: TaskState | None
) -> str:
    """One group's summary, its sentences ending with the numbers of its passages ("" for NOTHING)."""
    check(cancel)
    messages: list[Message] = [
        {"role": "system", "content": system},
        {"role": "user", "content": render_blocks(group) + "\n\n" + CITE_REMINDER[lang]},
    ]
    text = _complete(assistant.chat_model, messages, _MAP_ANSWER_TOKENS, cancel)
    return "" if _NOTHING.match(text) else attribute(text, group)


@dataclass
class _Progress:
    done: int = 0
    total: int = 0

    def event(self, name: str) -> Progress:
        return Progress(
            self.done, self.total, message(notes.READING_PARTS, name=name, done=self.done, total=self.total)
        )


def _reduce_rounds(
    assistant: Assistant, system: str, summaries: list[str], max_tokens: int, cancel: TaskState | None
) -> list[str]:
    """Merge summaries in rounds until all of them fit in one prompt beside ``system``."""
    model = assistant.chat_model
    budget = _model_budget(assistant, max_tokens)
    while len(summaries) > 1 and budget.count("\n\n".join(summaries)) > budget.available([system]):
        merged: list[str] = []
        batch: list[str] = []
        for s in summaries:
            if batch and budget.count("\n\n".join([*batch, s])) > budget.available([system]):
                merged.append(_merge(model, system, batch, max_tokens, cancel))
                batch = []
            batch.append(s)
        merged.append(_merge(model, system, batch, max_tokens, cancel) if len(batch) > 1 else batch[0])
        if len(merged) >= len(summaries):  # each summary fills the prompt alone: keep what fits
            break
        summaries = merged
    return summaries


def _merge(model: ChatModel, system: str, batch: list[str], max_tokens: int, cancel: TaskState | None) -> str:
    check(cancel)
    messages: list[Message] = [
        {"role": "system", "content": system},
        {"role": "user", "content": "\n\n".join(batch)},
    ]
    return _complete(model, messages, max_tokens, cancel)


def model_reading(
    assistant: Assistant,
    q: Question,
    sides: Sequence[Side],
    parts_by_side: Sequence[list[Part]],
    kind: str,
    cancel: TaskState | None,
) -> Iterator[Token | Progress | Answer | Warning]:
    """Map each side's sections within the context budget, reduce, stream the last step; the
    answer's markers cite the chunks each statement came from."""
    model = assistant.chat_model
    lang = q.language
    max_tokens = assistant.config.llm.max_tokens
    names = " / ".join(_name(s) for s in sides)
    progress = _Progress()
    blocks: list[ContextBlock] = []
    if kind == "outline":
        cites = _Cites()
        outline = "\n".join(
            f"- {' › '.join(p.heading) or _heading_line(p, lang)} {cites.mark(p.pieces[0])}"
            for p in _first_of_each_heading(parts_by_side[0])
        )
        blocks = cites.blocks
        system = OUTLINE_SYSTEM[lang].format(name=names)
        texts = [outline]
    else:
        budget = _model_budget(assistant, max(max_tokens, _MAP_ANSWER_TOKENS))
        plan: list[tuple[Side, str, list[list[ContextBlock]]]] = []
        for side, parts in zip(sides, parts_by_side, strict=True):
            system = _map_system(q, kind, _name(side))
            groups = _groups(parts, budget, [system, q.text], len(blocks) + 1)
            blocks.extend(b for g in groups for b in g)
            plan.append((side, system, groups))
        progress.total = sum(len(groups) for _, _, groups in plan)
        if progress.total == 1 and kind == "summary":
            # One group: its summary is the answer, streamed (no second pass over the same words).
            system, group = plan[0][1], plan[0][2][0]
            user = render_blocks(group) + "\n\n" + CITE_REMINDER[lang]
            streamed: list[str] = []
            messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
            yield from _stream(model, messages, max_tokens, cancel, streamed)
            yield from _finish("".join(streamed).strip(), blocks)
            return
        texts = []
        for side, system, groups in plan:
            for group in groups:
                summary = _map_group(assistant, system, group, lang, cancel)
                if summary:
                    head = SIDE_HEADER[lang].format(name=_name(side)) + "\n" if kind == "compare" else ""
                    texts.append(head + summary)
                progress.done += 1
                if progress.total > 1:  # a short document is one step: nothing to show
                    yield progress.event(_name(side))
        what = kind if kind in REDUCE_SYSTEM else "summary"
        system = REDUCE_SYSTEM[what][lang].format(name=names, n=3, question=q.text)
        texts = _reduce_rounds(assistant, system, texts, max_tokens, cancel)
    if not texts:
        text = notes.written(message(notes.WHOLE_NOTHING_READ, name=names), lang)
        yield Answer(text, [], by="llm", refused=True)
        return
    parts: list[str] = []
    messages: list[Message] = [
        {"role": "system", "content": system},
        {"role": "user", "content": "\n\n".join(texts)},
    ]
    yield from _stream(model, messages, max_tokens, cancel, parts)
    yield from _finish("".join(parts).strip(), blocks)


def _first_of_each_heading(parts: Sequence[Part]) -> list[Part]:
    seen: set[tuple[str, ...]] = set()
    out = []
    for p in parts:
        key = tuple(p.heading) or (str(p.page),)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


_ATTRIBUTE = 0.5  # the share of a sentence's terms a passage must hold to be cited for it


def attribute(text: str, blocks: Sequence[ContextBlock]) -> str:
    """``text`` with a marker after each sentence that has none, naming the passage holding most of
    its terms (small models often leave the markers out); a sentence no passage holds enough of
    stays unmarked."""
    if not blocks:
        return text
    keys = [set(match_keys(b.text)) for b in blocks]
    out = []
    for line in text.split("\n"):
        sentences = split_sentences(line) if line.strip() else []
        if not sentences:
            out.append(line)
            continue
        done = []
        for s in sentences:
            mine = set(match_keys(CITATION_MARK.sub("", s)))
            if not CITATION_MARK.search(s) and mine:
                share, best = max((len(mine & k) / len(mine), -i) for i, k in enumerate(keys))
                if share >= _ATTRIBUTE:
                    n = blocks[-best].n
                    s = re.sub(r"([.!?。！？]?)$", rf" [{n}]\1", s.rstrip(), count=1)
            done.append(s)
        out.append(" ".join(done))
    return "\n".join(out)


def _finish(text: str, blocks: Sequence[ContextBlock]) -> Iterator[Answer | Warning]:
    """The streamed text as the answer, its markers checked against the blocks (and added where
    the model left a sentence unmarked)."""
    text = attribute(text, blocks)
    if not text or not CITATION_MARK.sub("", text).strip():
        raise LLMError(message(notes.EMPTY_ANSWER), "bad_output")
    text, citations, warning = check_citations(text, blocks)
    if warning:
        yield warning
    yield Answer(text, citations, by="llm")


# ------------------------------------------------------------------------------ the entry point
def read_whole(
    assistant: Assistant,
    q: Question,
    sides: list[Side],
    conv: Conversation,
    cancel: TaskState | None = None,
) -> Iterator[Token | Progress | Answer | Warning]:
    """One side: summarise / outline / say what it says about q (q.text tells which); two or more
    sides: compare them side by side. Yields Token..., Answer (citations to section/page), Warning,
    and a Progress event for long documents."""
    kind = reading_kind(q, sides)
    lang = q.language
    parts_by_side: list[list[Part]] = []
    try:
        for side in sides:
            check(cancel)
            parts_by_side.append(read_sources(assistant, side.sources))
    except Cancelled:
        yield Warning(message(STOPPED))
        return
    except Exception as exc:  # the index may be missing, locked or mid-rebuild
        yield Warning(message(notes.SEARCH_FAILED, error=exc))
        parts_by_side = [[] for _ in sides]
    empty = [s for s, parts in zip(sides, parts_by_side, strict=True) if not parts]
    if empty or not sides:
        names = ", ".join(_name(s) for s in empty) or "—"
        text = notes.written(message(notes.WHOLE_NOTHING_READ, name=names), lang)
        answer = Answer(text, [], by="extractive", refused=True)
        conv.add_turn(q.text, answer.text)
        yield answer
        return
    answer: Answer | None = None
    if assistant.chat_model is not None:
        streamed: list[str] = []
        try:
            for event in model_reading(assistant, q, sides, parts_by_side, kind, cancel):
                if isinstance(event, Token):
                    streamed.append(event.text)
                if isinstance(event, Answer):
                    answer = event
                else:
                    yield event
        except Cancelled:
            text = "".join(streamed)
            conv.add_turn(q.text, text)
            yield Warning(message(STOPPED))
            yield Answer(text, [], by="llm")
            return
        except LLMError as exc:
            when = message(notes.MID_ANSWER if streamed else notes.BEFORE_ANSWERING)
            yield Warning(message(notes.FALLBACK_WHOLE, error=exc, when=when))
    if answer is None:
        answer = extractive_reading(q, sides, parts_by_side, kind)
    conv.add_turn(q.text, answer.text)
    yield answer
