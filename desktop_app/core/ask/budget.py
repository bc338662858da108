"""Fit numbered context blocks into the model's window, leaving room for the answer.

Counts come from the model's tokenizer when it has one (llama.cpp's /tokenize); otherwise an
estimate: chars/4 for Latin text, one token per CJK character (chars/4 would let a Chinese
context overflow the window fourfold).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from desktop_app.core.ask.prompts import block_header
from desktop_app.core.library.documents import Hit

# Wider than languages.CJK on purpose: CJK punctuation and full-width forms are a token each too.
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")

TokenCounter = Callable[[str], "int | None"]
MIN_BLOCK_TOKENS = 48  # a block cut shorter than this is noise, not evidence


def estimate_tokens(text: str) -> int:
    cjk = len(_CJK.findall(text))
    return cjk + (len(text) - cjk + 3) // 4


@dataclass
class ContextBlock:
    """One numbered passage given to the model; ``n`` is what the answer cites."""

    n: int
    hit: Hit
    text: str  # possibly shortened to fit
    truncated: bool = False

    @property
    def header(self) -> str:
        return block_header(self.n, self.hit.source, self.hit.page)

    def render(self) -> str:
        return f"{self.header}\n{self.text}"


class Budget:
    """Token accounting for one prompt: ``count`` uses the tokenizer when given, else estimates."""

    def __init__(self, context_window: int, answer_tokens: int, counter: TokenCounter | None = None) -> None:
        self.context_window = context_window
        self.answer_tokens = answer_tokens
        self._counter = counter

    def count(self, text: str) -> int:
        if self._counter is not None:
            n = self._counter(text)
            if n is not None:
                return n
            self._counter = None  # the tokenizer went away: estimate from now on
        return estimate_tokens(text)

    def available(self, fixed_texts: Sequence[str], overhead_per_message: int = 8) -> int:
        """Tokens left for context after the answer's reserve and the fixed prompt parts."""
        used = sum(self.count(t) + overhead_per_message for t in fixed_texts)
        return self.context_window - self.answer_tokens - used


def _shorten(text: str, max_tokens: int, count: Callable[[str], int]) -> str:
    """The longest prefix of ``text`` (cut at a sentence or word end) within ``max_tokens``."""
    lo, hi = 0, len(text)
    while lo < hi:  # binary search on characters; counts are monotone in prefix length
        mid = (lo + hi + 1) // 2
        if count(text[:mid]) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    cut = text[:lo]
    for sep in ("。", ". ", "！", "？", "\n", " "):
        k = cut.rfind(sep)
        if k > len(cut) * 0.6:
            return cut[: k + len(sep)].rstrip() + " …"
    return cut.rstrip() + " …"


def fit_blocks(hits: Sequence[Hit], budget_tokens: int, budget: Budget | None = None) -> list[ContextBlock]:
    """Number hits as blocks in rank order while they fit in ``budget_tokens``; the first block
    that does not fit is shortened if a useful part fits, and the rest are dropped."""
    count = budget.count if budget is not None else estimate_tokens
    blocks: list[ContextBlock] = []
    left = budget_tokens
    for hit in hits:
        n = len(blocks) + 1
        block = ContextBlock(n, hit, hit.text.strip())
        cost = count(block.render()) + 2  # the blank line between blocks
        if cost <= left:
            blocks.append(block)
            left -= cost
            continue
        header_cost = count(block.header) + 3
        room = left - header_cost
        if room >= MIN_BLOCK_TOKENS:
            blocks.append(ContextBlock(n, hit, _shorten(block.text, room, count), truncated=True))
        break
    return blocks


def render_blocks(blocks: Sequence[ContextBlock]) -> str:
    return "\n\n".join(b.render() for b in blocks)
