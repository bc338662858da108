"""The no-LLM answerer: the sentences of the top blocks that share most terms with the question,
each cited [n], under a note saying that no language model is configured."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from desktop_app.core.ask.budget import ContextBlock
from desktop_app.core.ask.prompts import NO_LLM_NOTE, NO_LLM_NOTHING_FOUND, lang_of

_SENTENCE = re.compile(r"[^。！？!?.\n]+(?:[。！？!?]+|\.(?=\s|$)|$)", re.M)
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")
_STOP = set(
    "a an the of to in on for and or is are was were be been do does did what which who whom whose "
    "when where why how it its this that these those with from by as at about into can could should "
    "would will i you he she they we me my your their our there here than then so if not no yes tell "
    "please explain describe give list".split()
)


def terms(text: str) -> set[str]:
    """English words (no stop words, crude plural folding) and Chinese character bigrams."""
    low = text.lower()
    out = {w.rstrip("s") if len(w) > 3 else w for w in _WORD.findall(low) if w not in _STOP}
    for run in _HAN.findall(text):
        if len(run) == 1:
            out.add(run)
        out.update(run[i : i + 2] for i in range(len(run) - 1))
    return out


@dataclass
class Extract:
    text: str
    cited: list[int]  # block numbers, in order of appearance


_STRUCTURAL = re.compile(r"^\s*([-*+•]\s|\d+[.)]\s|#|\||>)")


def _unwrap(text: str) -> str:
    """Join hard-wrapped lines (PDF and OCR text break mid-sentence) so a sentence is not cut at a
    line end; blank lines, list items, headings and table rows keep their breaks."""
    text = re.sub(r"(\w)-\n(?=[a-z])", r"\1", text)  # "cylin-\nder" -> "cylinder"
    out: list[str] = []
    for line in text.split("\n"):
        prev = out[-1] if out else ""
        if prev.strip() and line.strip() and not _STRUCTURAL.match(line) and not _STRUCTURAL.match(prev):
            glue = "" if _HAN.search(prev[-1:]) and _HAN.search(line.lstrip()[:1]) else " "
            out[-1] = prev.rstrip() + glue + line.lstrip()
        else:
            out.append(line)
    return "\n".join(out)


def _sentences(text: str) -> list[str]:
    found = [s.strip() for s in _SENTENCE.findall(_unwrap(text))]
    return [s for s in found if len(s) >= 12 or _HAN.search(s) and len(s) >= 5]


def extractive_answer(
    question: str,
    blocks: Sequence[ContextBlock],
    note: str | None = None,
    max_sentences: int = 3,
    max_blocks: int = 3,
) -> Extract:
    """Best sentences of the top blocks by term overlap with the question, cited; the note goes
    first (default: "No language model is configured; ..." in the question's language)."""
    lang = lang_of(question)
    if not blocks:
        return Extract(NO_LLM_NOTHING_FOUND[lang] if note is None else note, [])
    q = terms(question)
    scored: list[tuple[float, int, int, str]] = []  # (score, rank of block, position, sentence)
    for rank, block in enumerate(blocks[:max_blocks]):
        for pos, sent in enumerate(_sentences(block.text)):
            overlap = len(q & terms(sent))
            # Overlap first; ties go to better-ranked blocks and earlier sentences.
            scored.append((overlap - 0.01 * rank - 0.001 * pos, rank, pos, sent))
    if not scored:  # blocks with no sentence-like text (tables): quote their start
        scored = [(0.0, r, 0, b.text.strip()[:300]) for r, b in enumerate(blocks[:max_blocks])]
    best = sorted(scored, reverse=True)[:max_sentences]
    best.sort(key=lambda s: (s[1], s[2]))  # read in document order
    lines, cited = [], []
    for _score, rank, _pos, sent in best:
        n = blocks[rank].n
        lines.append(f"- {sent} [{n}]")
        if n not in cited:
            cited.append(n)
    head = NO_LLM_NOTE[lang] if note is None else note
    return Extract(f"{head}\n\n" + "\n".join(lines), cited)
