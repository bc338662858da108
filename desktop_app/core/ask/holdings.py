"""What the library holds, document by document: each indexed file's title, names and folder, read
from the manifest and each document's first chunk (no model). The router's "document" kind finds
the documents a question names here (by title, file name, Chinese or Latin name, or a group such
as "the macaws" / "金刚鹦鹉"), and its "library" kind answers from it (library_answers.py).
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from desktop_app.core.identify.names import chinese_of, name_key, note_names
from desktop_app.core.library.languages import CJK, has_cjk
from desktop_app.core.library.manifest import INDEXED
from desktop_app.core.library.scopes import chroma_where, visible_scopes

log = logging.getLogger(__name__)

_CJK_RUN = re.compile(f"[{CJK}]+")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’.-]*")
_FILE = re.compile(r"[\w./-]+\.[A-Za-z0-9]{1,5}\b")
# Words that name the kind of thing, never which one: "the kea note", "the guide document".
_NOT_NAMES = frozenset(
    "the a an of and or with to my your this that these those note notes file files document documents "
    "doc docs pdf pdfs paper papers report about on in it its them they compare summarise summarize "
    "summary outline what which how many is are does do say says please me give tell read".split()
)
# A group name must be this specific: "parrot" names ten notes and "鹦鹉" all of them, which is
# the library, not a subject; a name of two words or four Chinese characters is one.
_MIN_GROUP_CJK = 3


@dataclass(frozen=True)
class Holding:
    """One indexed document as the library knows it (no text beyond its first chunk's names)."""

    source: str  # the manifest's key, the path in the knowledge folder
    title: str  # its first heading, else its file name's stem
    zh: str  # the name on its "Chinese:" line ("" when none)
    names: frozenset[str]  # name keys (identify/names.name_key): title parts, name lines, file stem
    folder: str  # its folder in the knowledge folder ("" at the top)
    scope: str
    indexed_at: str
    kind: str  # "text" | "image"

    @property
    def file_name(self) -> str:
        return PurePosixPath(self.source).name

    def label(self, lang: str = "en") -> str:
        """How an answer names it: its title (its Chinese name too for a Chinese reader)."""
        if lang == "zh" and self.zh and self.zh not in self.title:
            return f"{self.zh} {self.title}"
        return self.title


@dataclass
class Match:
    """The documents one phrase of a question names: ``label`` as the question says it."""

    label: str
    holdings: list[Holding]
    level: str  # "file" | "name" | "group" | "fuzzy"
    start: int = 0  # where in the question (keeps the sides in the question's order)


@dataclass
class Resolved:
    """What a question names: its matches in order, and close documents when it names none."""

    matches: list[Match] = field(default_factory=list)
    close: list[Holding] = field(default_factory=list)


def read_holdings(kb: Any, scope: str | None) -> list[Holding]:
    """The indexed documents ``scope`` sees, with their first chunk's names; an unreadable store
    leaves titles as file names (a list of files needs no index)."""
    seen = visible_scopes(scope)
    entries = [e for e in kb.manifest.all().values() if e.status == INDEXED and e.scope in seen]
    first: dict[str, tuple[str, str]] = {}  # source -> (title, text)
    try:
        got = kb.store.collection.get(
            where={"$and": [{"chunk_index": 0}, chroma_where(scope)]}, include=["documents", "metadatas"]
        )
        for text, meta in zip(got["documents"], got["metadatas"], strict=False):
            heading = str(meta.get("heading_path", "") or "").split(" > ")[0]
            first[str(meta.get("source", ""))] = (heading, text or "")
    except Exception as exc:  # noqa: BLE001 - the manifest alone still lists the files
        log.warning("first chunks not read: %s", exc)
    out = []
    for e in entries:
        heading, text = first.get(e.name, ("", ""))
        heading = heading or _title_line(text)
        stem = PurePosixPath(e.name).stem
        nn = note_names(heading, text[:600], e.name)
        names = set(nn.names) | {name_key(stem)}
        names |= {name_key(heading)} if heading else set()
        zh = chinese_of(text)
        names |= {name_key(c) for c in _CJK_RUN.findall(zh) if len(c) >= 2}
        out.append(
            Holding(
                source=e.name,
                title=heading.strip() or stem,
                zh=zh,
                names=frozenset(n for n in names if n),
                folder=str(PurePosixPath(e.name).parent) if "/" in e.name else "",
                scope=e.scope,
                indexed_at=e.indexed_at or "",
                kind=e.kind,
            )
        )
    return out


def _title_line(text: str) -> str:
    """A plain-text file's title: its first line when that is a Markdown heading ("# 郑和下西洋" in a
    .txt, which no parser reads as a heading) or a short line standing alone before the text."""
    lines = text.strip().split("\n", 2)
    first = lines[0].strip() if lines else ""
    if first.startswith("#"):
        return first.lstrip("#").strip()
    alone = len(lines) > 1 and not lines[1].strip()
    return first if alone and 0 < len(first) <= _TITLE_CHARS and not first.endswith(_SENTENCE_ENDS) else ""


_TITLE_CHARS = 60
_SENTENCE_ENDS = (".", "。", "!", "！", "?", "？", ":", "：", ";", "；", ",", "，")


# ---------------------------------------------------------------------------- finding names
def _title_words(h: Holding) -> list[str]:
    return [n for n in h.names if not has_cjk(n)]


def _group_keys(holdings: Sequence[Holding]) -> dict[str, list[Holding]]:
    """Last words of several documents' names ("macaw", "black cockatoo"), Latin genera ("ara"),
    and the Chinese endings several names share (金刚鹦鹉): each a group of notes on one subject."""
    groups: dict[str, set[str]] = {}
    by_source = {h.source: h for h in holdings}
    for h in holdings:
        for n in h.names:
            if has_cjk(n):
                for i in range(1, len(n) - _MIN_GROUP_CJK + 1):
                    groups.setdefault(n[i:], set()).add(h.source)
                continue
            words = n.split()
            for i in range(1, len(words)):
                groups.setdefault(" ".join(words[i:]), set()).add(h.source)
            if len(words) == 2:  # a binomial's genus: "ara macao" -> "ara"
                groups.setdefault(words[0], set()).add(h.source)
    # A short ending must name two documents or more to be a subject ("set" of "pale-grey set" is
    # none); a longer one may name one ("亚马逊鹦鹉" of 黄头亚马逊鹦鹉, "conure" of "Sun Conure").
    return {
        k: sorted((by_source[s] for s in v), key=lambda h: h.source)
        for k, v in groups.items()
        if k not in _NOT_NAMES and len(k) >= 3 and (len(v) >= 2 or len(k) >= (4 if has_cjk(k) else 5))
    }


def _spans(question: str) -> list[tuple[int, int, str]]:
    """Every run of one to five words of ``question`` (start, end, text), longest first."""
    words = list(_WORD.finditer(question))
    out = []
    for n in range(5, 0, -1):
        for i in range(len(words) - n + 1):
            a, b = words[i].start(), words[i + n - 1].end()
            out.append((a, b, question[a:b]))
    return out


def find_named(question: str, holdings: Sequence[Holding]) -> list[Match]:
    """The documents ``question`` names, in its order: file names ("kea.md"), a document's name
    (title, file stem, Chinese or Latin name: "kea", "鸮鹦鹉", "Nestor notabilis") or a group's
    ("macaws", "金刚鹦鹉", "Cacatua"). The longest name wins where names overlap."""
    taken: list[tuple[int, int]] = []
    found: list[Match] = []

    def free(a: int, b: int) -> bool:
        return all(b <= x or a >= y for x, y in taken)

    def add(a: int, b: int, label: str, hs: list[Holding], level: str) -> None:
        taken.append((a, b))
        found.append(Match(label, hs, level, a))

    by_file: dict[str, list[Holding]] = {}
    for h in holdings:
        for key in {h.source.lower(), h.file_name.lower()}:
            by_file.setdefault(key, []).append(h)
    for m in _FILE.finditer(question):
        hs = by_file.get(m.group(0).lower().strip("./"))
        if hs and free(m.start(), m.end()):
            add(m.start(), m.end(), m.group(0), hs, "file")
    by_name: dict[str, list[Holding]] = {}
    for h in holdings:
        for n in h.names:
            by_name.setdefault(n, []).append(h)
    groups = _group_keys(holdings)
    # Chinese names: the longest first, a document's own name before a group's ending.
    cjk_keys = sorted({k for k in [*by_name, *groups] if has_cjk(k)}, key=len, reverse=True)
    for key in cjk_keys:
        for m in re.finditer(re.escape(key), question):
            if not free(m.start(), m.end()):
                continue
            if key in by_name and (key not in groups or len(by_name[key]) >= len(groups[key])):
                add(m.start(), m.end(), key, by_name[key], "name")
            else:
                add(m.start(), m.end(), key, groups[key], "group")
    for a, b, text in _spans(question):
        key = name_key(text)
        if not key or key in _NOT_NAMES or not free(a, b):
            continue
        if all(w in _NOT_NAMES for w in key.split()):
            continue
        if key in by_name:
            add(a, b, text, by_name[key], "name")
        elif key in groups:
            add(a, b, text, groups[key], "group")
    return sorted(found, key=lambda m: m.start)


def close_to(question: str, holdings: Sequence[Holding], most: int = 3) -> list[Holding]:
    """Documents whose names look like a word of ``question`` (a typo: "kakpo"), closest first."""
    names = {n: h for h in holdings for n in h.names if not has_cjk(n)}
    scored: dict[str, tuple[float, Holding]] = {}
    words = [w.lower() for w in _WORD.findall(question) if w.lower() not in _NOT_NAMES and len(w) > 2]
    for w in words:
        for n in difflib.get_close_matches(w, list(names), n=most, cutoff=0.75):
            ratio = difflib.SequenceMatcher(None, w, n).ratio()
            h = names[n]
            if ratio > scored.get(h.source, (0.0, h))[0]:
                scored[h.source] = (ratio, h)
    return [h for _, h in sorted(scored.values(), key=lambda x: -x[0])][:most]


def resolve(question: str, holdings: Sequence[Holding]) -> Resolved:
    """The documents a question names, or (naming none) the ones whose names come close. A word
    no name matches but one document's name nearly spells ("kakpo") names that document."""
    found = find_named(question, holdings)
    names = {n: h for h in holdings for n in h.names if not has_cjk(n) and " " not in n}
    for m in _WORD.finditer(question):
        w = m.group(0).lower()
        if len(w) < 4 or w in _NOT_NAMES or any(x.start <= m.start() < x.start + len(x.label) for x in found):
            continue
        near = difflib.get_close_matches(w, list(names), n=1, cutoff=0.85)
        if near and not any(names[near[0]] in x.holdings for x in found):
            found.append(Match(names[near[0]].title, [names[near[0]]], "fuzzy", m.start()))
    if found:
        return Resolved(sorted(found, key=lambda x: x.start))
    close = close_to(question, holdings)
    if len(close) == 1 or (close and _ratio(question, close[0]) >= 0.85):
        # One close name (a typo): read it, and say which in the side's label.
        return Resolved([Match(close[0].title, [close[0]], "fuzzy")], close)
    return Resolved([], close)


def _ratio(question: str, h: Holding) -> float:
    words = [w.lower() for w in _WORD.findall(question) if len(w) > 2]
    return max(
        (difflib.SequenceMatcher(None, w, n).ratio() for w in words for n in _title_words(h)), default=0.0
    )
