"""Citation markers in an answer ('[1]', '[1, 2]', '【2】'): which context blocks they name, and the
check that drops numbers no block has (small models invent them)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from desktop_app.core.ask.budget import ContextBlock
from desktop_app.core.events import Citation, Warning

CITATION_MARK = re.compile(r"[\[【]\s*(\d{1,3}(?:\s*[,，、]\s*\d{1,3})*)\s*[\]】]")
_SEP = re.compile(r"[,，、]")


def parse_citations(text: str, blocks: Sequence[ContextBlock]) -> tuple[list[int], list[int]]:
    """Block numbers cited in ``text`` (first-appearance order) and those out of range."""
    valid = {b.n for b in blocks}
    cited: list[int] = []
    bad: list[int] = []
    for m in CITATION_MARK.finditer(text):
        for part in _SEP.split(m.group(1)):
            n = int(part)
            target = cited if n in valid else bad
            if n not in target:
                target.append(n)
    return cited, bad


def strip_citations(text: str, bad: Sequence[int]) -> str:
    """Remove out-of-range numbers from citation markers ('[2, 9]' -> '[2]', '[9]' -> '')."""
    if not bad:
        return text

    def fix(m: re.Match[str]) -> str:
        keep = [p.strip() for p in _SEP.split(m.group(1)) if int(p) not in bad]
        return f"[{', '.join(keep)}]" if keep else ""

    out = CITATION_MARK.sub(fix, text)
    return re.sub(r"[ \t]+([.,;:!?。，；：！？])", r"\1", re.sub(r"[ \t]{2,}", " ", out)).strip()


def citations_for(numbers: Sequence[int], blocks: Sequence[ContextBlock]) -> list[Citation]:
    """The Citation (file, page, chunk, excerpt) of each block number that exists."""
    by_n = {b.n: b for b in blocks}
    out = []
    for n in numbers:
        b = by_n.get(n)
        if b is not None:
            out.append(Citation(n, b.hit.source, b.hit.page, b.hit.chunk_id, b.hit.text[:500]))
    return out


def check_citations(text: str, blocks: Sequence[ContextBlock]) -> tuple[str, list[Citation], Warning | None]:
    """An LLM answer's text without out-of-range markers, its citations, and a Warning if any
    marker was dropped (None otherwise)."""
    cited, bad = parse_citations(text, blocks)
    if not bad:
        return text, citations_for(cited, blocks), None
    warning = Warning(
        f"the answer cited {', '.join(f'[{n}]' for n in bad)} but only {len(blocks)} "
        f"source block(s) were given; those citations were dropped"
    )
    return strip_citations(text, bad), citations_for(cited, blocks), warning
