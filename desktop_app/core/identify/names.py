"""Candidate names: as shown to people, normalised for matching, and linked to the notes that
describe them.

A gallery label ("Rosy Faced Lovebird", "ara_macao", "绯红金刚鹦鹉") and a note ("# Lovebirds
(Agapornis spp.)", "Chinese: 情侣鹦鹉") rarely spell a species the same way. A note's names are its
title (split at brackets and slashes: common name, Latin binomial or genus), the names on a
"Chinese:"/"中文名"/"Latin:"/"Also:" line, a "Gallery label:" line, and its file name. ``link_level``
compares them with a label in singular form: the same name is an exact link; a note named by the
label's last words ("lovebirds" for "Rosy Faced Lovebird"), its Latin genus, or a Chinese name the
label ends with is a generic one (a note about the group); a note that merely mentions the label in
its text is the weakest.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

from desktop_app.core.library.documents import Hit
from desktop_app.core.library.languages import CJK

log = logging.getLogger(__name__)

EXACT, HEADING, GENERIC, MENTION = 4, 3, 2, 1  # link levels, strongest first (0: not linked)

_CJK = re.compile(f"[{CJK}]+")  # a run of Han characters
_LATIN = re.compile(r"\b([A-Z][a-z]{2,})\s+(spp?\.|[a-z]{3,})")
_NAME_LINE = re.compile(
    r"\s*(?:[-*•]\s*)?(?:\*\*)?(chinese|中文名?|english(?: name)?|英文名?|latin|scientific name|学名|also|aliases|"
    r"other names|别名|gallery label)"
    r"(?:\*\*)?\s*[:：]\s*(.+)",
    re.I,
)
# A note's whole name lines (Chinese, English, Latin, gallery label): left out where a note is quoted
# or read for its colours, since its names are shown apart and 绯红 must not count as a colour seen.
NAME_LINES = re.compile(
    r"^\s*(?:[-*•]\s*)?(?:\*\*)?(?:english(?: name)?|英文名?|chinese|中文名?|latin|学名|gallery label)"
    r"(?:\*\*)?\s*[:：].*$",
    re.I | re.M,
)
_SEGMENT = re.compile(r"\n|(?<=[.。])\s+")
_EMPHASIS = re.compile(r"\*+([^*]+)\*+")
_SPLIT = re.compile(r"[()（）/|,，;；、]+|\s+[-–—]\s+")


def pretty_name(name: str) -> str:
    """A label as shown to people (gallery labels may use underscores)."""
    return name.replace("_", " ").strip()


def norm_name(name: str) -> str:
    """'cokatoo_Major-Mitchell' -> 'cokatoo major mitchell' (for matching names in documents)."""
    return re.sub(r"\s+", " ", re.sub(r"[_\-/()（）.,'’]+", " ", name)).strip().lower()


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


@lru_cache(maxsize=4096)
def name_key(name: str) -> str:
    """norm_name with every word in singular form: "Lovebirds" and "lovebird" share a key."""
    return " ".join(_singular(w) for w in norm_name(name).split())


@dataclass(frozen=True)
class NoteNames:
    """The names a note gives its subject (keys, see ``name_key``)."""

    title: str  # the title's first part ("Kakapo" of "Kakapo (Strigops habroptilus)")
    names: frozenset[str]
    genera: frozenset[str]  # Latin genera it names as a whole ("Agapornis spp.")
    species: bool  # it names one species by a Latin binomial: not a note about a group
    named: bool  # a species note: Latin in its title's brackets or a name line ("Chinese: ...")


_LATIN_LINES = ("latin", "scientific name", "学名")


@lru_cache(maxsize=2048)  # every hit is checked against every gallery label of a photo
def note_names(title: str, text: str = "", source: str = "") -> NoteNames:
    """The names of a note: ``title`` its first heading, ``text`` its first lines, ``source`` its
    file path. Latin is read only where notes put it (in the title's brackets, on a "Latin:" line),
    so a title such as "Keeping macaws" is not taken for a binomial."""
    title = _EMPHASIS.sub(r"(\1)", title)  # "Kakapo *Strigops habroptilus*": set off like brackets
    title_parts = [p for p in _SPLIT.split(title) if p.strip()]
    common, maybe_latin = title_parts[:1], title_parts[1:]
    lines = [m for m in map(_NAME_LINE.match, _SEGMENT.split(text[:600])) if m]
    for m in lines:
        parts = [p for p in _SPLIT.split(m.group(2).rstrip(".。 ")) if p.strip()]
        (maybe_latin if m.group(1).lower() in _LATIN_LINES else common).extend(parts)
    if source:
        common.append(PurePosixPath(source.replace("\\", "/")).stem)
    names: set[str] = set()
    genera: set[str] = set()
    species = False
    for part, latin_ok in [(p, False) for p in common] + [(p, True) for p in maybe_latin]:
        part = part.strip(" .*_#")
        if not part:
            continue
        latin = _LATIN.fullmatch(part) if latin_ok else None
        if latin and re.fullmatch(r"spp?\.?", latin.group(2)):  # "Agapornis spp.": a genus ("spixii" is not)
            genera.add(latin.group(1).lower())
            continue
        species = species or bool(latin)
        names.add(name_key(part))
        names.update(name_key(c) for c in _CJK.findall(part) if len(c) >= 2)
    names.discard("")
    first = title_parts[0].strip() if title_parts else ""
    return NoteNames(first, frozenset(names), frozenset(genera), species, bool(lines or species or genera))


def link_level(label: str, note: NoteNames) -> int:
    """How strongly a note with these names is about ``label``: EXACT (one of its names), GENERIC
    (the label's name before a bracket, its genus, or, for a note about a group rather than one
    species, the label's last words or Chinese ending) or 0. "Sulphur-crested Cockatoo (Cacatua
    galerita)" is one species: it is not the note of "Lesser Sulphur-crested Cockatoo"."""
    key = name_key(label)
    if not key:
        return 0
    if key in note.names:
        return EXACT
    base = name_key(_SPLIT.split(label)[0])
    if base != key and base in note.names:  # "African Grey Parrot (pale)"
        return GENERIC
    words = key.split()
    if words[0] in note.genera:
        return GENERIC
    if note.species:
        return 0
    for n in note.names:
        if _CJK.fullmatch(n):
            if key.endswith(n) and key != n:  # 金刚鹦鹉 for 绯红金刚鹦鹉
                return GENERIC
            continue
        nw = n.split()
        if len(nw) < len(words) and words[-len(nw) :] == nw:  # "lovebird" for "rosy faced lovebird"
            return GENERIC
    return 0


def _hit_names(hit: Hit) -> NoteNames:
    title = hit.heading_path[0] if hit.heading_path else ""
    return note_names(title, hit.text[:600] if hit.chunk_index == 0 else "", hit.source)


def hit_names(hit: Hit) -> NoteNames:
    """The names the note of this chunk gives its subject (title, name lines, file name)."""
    return _hit_names(hit)


def hit_link(hit: Hit, label: str) -> int:
    """How strongly this chunk's note is about ``label`` (0: not at all)."""
    level = link_level(label, _hit_names(hit))
    if level:
        return level
    key = norm_name(label)
    if not key:
        return 0
    if any(key in norm_name(h) for h in (hit.heading_path or [])[1:]):
        return HEADING
    return MENTION if key in norm_name(hit.text) else 0


def mentions(hit: Hit, name: str) -> bool:
    """Does this hit talk about ``name`` (its note is named so, or its text names it)?"""
    return hit_link(hit, name) > 0


def notes_about(hits: Sequence[Hit], name: str, min_level: int = MENTION) -> list[Hit]:
    """The chunks of the one document most about ``name``: the strongest link (see the module
    docstring), then the most mentions; empty when no document links at ``min_level`` or above."""
    key = norm_name(name)
    best: tuple[int, int, str] | None = None
    by_source: dict[str, list[Hit]] = {}
    for h in hits:
        level = hit_link(h, name)
        if level < min_level:
            continue
        by_source.setdefault(h.source, []).append(h)
        score = (level, norm_name(h.text).count(key) if key else 0, h.source)
        if best is None or score[:2] > best[:2]:
            best = score
    return by_source[best[2]] if best else []


def linked(hits: Sequence[Hit], label: str) -> bool:
    """Is the note these chunks come from named after ``label`` (exactly or as its group)?"""
    return any(link_level(label, _hit_names(h)) for h in hits)


def species_title(hits: Sequence[Hit]) -> str:
    """The name a species note gives its subject (its title's first part), or "" when the note
    does not look like one (see ``NoteNames.named``)."""
    for h in hits:
        note = _hit_names(h)
        if note.title and note.named:
            return note.title
    return ""


_CHINESE_LINES = ("chinese", "中文", "中文名")


def chinese_of(text: str) -> str:
    """The name on a note's "Chinese:" / "中文名:" line ("" when it has none)."""
    for m in map(_NAME_LINE.match, _SEGMENT.split(text[:600])):
        if m and m.group(1).lower() in _CHINESE_LINES:
            value = m.group(2).strip().rstrip(".。 ")
            if _CJK.search(value) and len(value) <= 40:
                return value
    return ""


def chinese_names(labels: Sequence[str], notes: Sequence[Hit]) -> dict[str, str]:
    """label -> its Chinese name: the "Chinese:" line of the note named exactly after it (its
    title, a name line, "Gallery label:", its file name: see ``link_level``), or the label itself
    when it is Chinese. ``notes``: first chunks of notes (see ``species_notes``)."""
    named = [(_hit_names(h), zh) for h in notes if (zh := chinese_of(h.text))]
    out: dict[str, str] = {}
    for label in labels:
        if _CJK.fullmatch(label.strip()):
            out[label] = label.strip()
            continue
        zh = next((zh for names, zh in named if link_level(label, names) == EXACT), "")
        if zh:
            out[label] = zh
    return out


_BRACKETED = re.compile(r"\s*[(（]([^()（）]*)[)）]")


def english_title(heading: str) -> str:
    """A note's title as an English name: without its Latin binomial in brackets ("African Grey
    Parrot (pale-grey set) (Psittacus erithacus)" -> "African Grey Parrot (pale-grey set)"); "" for
    a title in Chinese."""
    heading = _EMPHASIS.sub(r"(\1)", heading)
    kept = _BRACKETED.sub(lambda m: "" if _LATIN.fullmatch(m.group(1).strip()) else m.group(0), heading)
    kept = " ".join(kept.split()).strip(" .*_#")
    return "" if not kept or _CJK.search(kept) else kept


def english_name(hit: Hit) -> str:
    """A species note's English name: its title when that is English, else its English-name line
    ("- 英文名：African Grey Parrot" on a page titled 非洲灰鹦鹉); "" when it gives none."""
    title = english_title(hit.heading_path[0]) if hit.heading_path else ""
    if title or hit.chunk_index != 0:
        return title
    for m in map(_NAME_LINE.match, _SEGMENT.split(hit.text[:600])):
        if m and m.group(1).lower() in ("english", "english name", "英文", "英文名"):
            return english_title(_SPLIT.split(m.group(2).rstrip(".。 "))[0])
    return ""


def english_titles(labels: Sequence[str], notes: Sequence[Hit]) -> dict[str, str]:
    """label -> the English title of the species note named exactly after it, where that title is
    not the label itself ("ara_macao" -> "Scarlet Macaw"; a label "Kakapo" keeps its own name).
    A label no note is named after that begins the name of exactly one note gets that note's
    English name: ImageNet's "African grey" is the library's one "African Grey Parrot", also on a
    Chinese page that gives its English name on a line."""
    titled = [
        (names, title)
        for h in notes
        if (names := _hit_names(h)).named and h.heading_path and (title := english_title(h.heading_path[0]))
    ]
    out: dict[str, str] = {}
    for label in labels:
        title = next((t for names, t in titled if link_level(label, names) == EXACT), "")
        if not title and not any(link_level(label, _hit_names(h)) == EXACT for h in notes):
            title = _only_note_beginning_with(label, notes)
        if title and norm_name(title) != norm_name(label):
            out[label] = title
    return out


def _only_note_beginning_with(label: str, notes: Sequence[Hit]) -> str:
    """The English name of the one species note with a name that is ``label`` and a trailing
    word ("african grey" -> "african grey parrot"); "" when no note or several notes have one.
    A qualifier in front names another species: "macaw" is not the note "Scarlet Macaw"."""
    key = name_key(label)
    found = {
        h.source: h
        for h in notes
        if key and (names := _hit_names(h)).named and any(n.startswith(f"{key} ") for n in names.names)
    }
    return english_name(next(iter(found.values()))) if len(found) == 1 else ""


def species_notes(kb: object, scope: str | None) -> list[Hit]:
    """The first chunks of the knowledge base's species notes: those giving a Chinese name, a Latin
    one or a gallery label on a name line (one Chroma read, filtered by its text index); empty
    without a knowledge base or when it cannot be read."""
    from desktop_app.core.library.scopes import chroma_where
    from desktop_app.core.library.store import hit_from

    if kb is None or not hasattr(type(kb), "store") or kb.is_empty():  # (the property opens the store)
        return []
    try:
        got = kb.store.collection.get(
            where={"$and": [{"chunk_index": 0}, chroma_where(scope)]},
            where_document={
                "$or": [
                    {"$contains": "Chinese"},
                    {"$contains": "中文"},
                    {"$contains": "Latin"},
                    {"$contains": "Gallery label"},
                    {"$contains": "学名"},  # a Chinese field list: "- 学名：Ara macao"
                ]
            },
            include=["documents", "metadatas"],
        )
    except Exception as exc:  # names are a nicety: a missing or locked index must not stop identify
        log.warning("species notes not read: %s", exc)
        return []
    return [hit_from(i, d, m) for i, d, m in zip(got["ids"], got["documents"], got["metadatas"])]
