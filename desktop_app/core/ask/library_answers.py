"""Answers about the library itself (the router's "library" kind): which documents it holds, how
many, what is new, what a collection holds, which are about a subject. File-level answers from
the index (the manifest, each document's title and names, Chroma's text filter for mentions) and,
for a topic no title names, the library's own search with each document cited at its closest
sentence: complete without a language model, in the question's language, within the
conversation's collection (scope).
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from desktop_app.core.ask import notes
from desktop_app.core.ask.extractive import Meaning
from desktop_app.core.ask.holdings import Holding, find_named, read_holdings
from desktop_app.core.ask.question import Question
from desktop_app.core.ask.sentences import split_sentences
from desktop_app.core.events import Answer, Citation
from desktop_app.core.identify.names import name_key
from desktop_app.core.library.documents import Hit
from desktop_app.core.library.scopes import SHARED, chroma_where
from desktop_app.core.library.text_analysis import match_keys, query_terms, tokenize
from desktop_app.core.messages import Message, Text, message, render_lines

log = logging.getLogger(__name__)

# A list longer than this is cut ("… and 12 more"): a big library's answer stays readable.
MAX_LISTED = 12
MAX_FOLDERS = 12

_NEW = re.compile(
    r"\bnew\b|\brecent(?:ly)?\b|\blatest\b|\bnewest\b|\bchanged?\b|\bmodified\b|\bupdated\b|\blately\b|"
    r"新增|新加|新添|最近|改了|更新|修改|变化",
    re.I,
)
_PLACE_NEW = re.compile(r"\bNew\s+[A-Z]\w+")  # "New Zealand", "New Guinea": places, not news
# 多少 counts documents only beside one ("能拿多少奖金" in a question about which files to read is not).
_COUNT = re.compile(
    r"\bhow many\b|\bcount\b|\bnumber of\b|多少[个篇份本]?(?:文档|文件|笔记|资料)|几[个篇份本]|数量|总数|一共|总共|统计",
    re.I,
)
# "Show me my PDFs": the list of one format only.
_FORMATS = {
    ".pdf": r"pdfs?",
    ".docx": r"docx|word\s+(?:files|documents)",
    ".txt": r"txt|text\s+files",
    ".md": r"markdown|\.md\b",
    ".pptx": r"pptx|slides|powerpoints?",
    ".html": r"html|web\s+pages",
    ".epub": r"epubs?|e-?books",
}
_COLLECTION = re.compile(r"\bcollections?\b|\bfolders?\b|集合|文件夹|目录", re.I)
# The thing a "which notes are about X?" question asks about, where X is no document's name.
_ABOUT_EN = re.compile(
    r"\b(?:about|mention(?:s|ing)?|on|cover(?:s|ing)?|talk(?:s|ing)? about|regarding|concerning|with)\s+"
    r"(?:the\s+)?(.+?)\s*[?.!]*$",
    re.I,
)
_ABOUT_ZH = re.compile(
    r"(?:关于|提到了?|提及|讲到了?|说到了?|涉及|有关)([^？?。!！]+?)(?:的)?(?:文档|文件|笔记|资料)?[吗呢？?。!！]*$|"
    r"[跟和与]([^，,？?。]{1,16}?)(?:有关|相关)"  # 跟永乐皇帝有关
)

# What a library question asks about once its framing is gone ("Which of my documents help me work
# out what I owe the taxman?" -> "work out what owe the taxman"): the search for documents by meaning.
_FRAME_EN = re.compile(
    r"\b(?:which|what|of|my|the|your|a|an|any|some|all|do|does|did|i|me|have|has|are|is|there|in|on|"
    r"about|mentions?|mentioning|covers?|covering|talks?|regarding|concerning|specifically|help|helps|"
    r"should|read|look|at|list|show|display|find|give|tell|every|each|please|documents?|files?|notes?|docs?|"
    r"texts?|papers?|reports?|articles?|collections?)\b",
    re.I,
)
_FRAME_ZH = re.compile(
    r"(?:文档|文件|笔记|资料|材料)(?:里|中|里面|当中)?|我想知道|我想|我的|我有|应该看|应该|哪些|哪几个|哪个|什么|"
    r"关于|有关|相关|都|吗|呢|[跟和与](?=[^，。？?]{1,16}(?:有关|相关))"
)
# A document is listed when its best passage scores this share of the best one's, at most
# MAX_CLOSEST of them: the ranking is fused from ranks, so a long tail is noise.
CLOSEST_SHARE = 0.5
MAX_CLOSEST = 5


@dataclass
class _Subject:
    label: str  # as the question says it
    about: list[Holding]  # documents whose subject it is
    terms: list[str]  # what a mention looks like in a document's text


def collection_of(h: Holding) -> str:
    """A document's collection as the library shows it: its scope, else its top folder."""
    if h.scope != SHARED:
        return f"@{h.scope}"
    return h.source.split("/", 1)[0] if "/" in h.source else ""


def _item(h: Holding, lang: str) -> str:
    return f"- {h.label(lang)} ({h.source})"


def _listed(hs: Sequence[Holding], lang: str, most: int = MAX_LISTED) -> list[Text]:
    lines: list[Text] = [_item(h, lang) for h in hs[:most]]
    if len(hs) > most:
        lines.append(message(notes.LIBRARY_MORE, count=len(hs) - most))
    return lines


def mentioning(kb: Any, scope: str | None, terms: Sequence[str]) -> set[str]:
    """Sources whose text holds one of ``terms`` (Chroma's substring filter, a few spellings each);
    empty when the store cannot be read."""
    spellings = {v for t in terms if t for v in (t, t.lower(), t.capitalize(), t.title())}
    if not spellings:
        return set()
    where_doc = (
        {"$contains": next(iter(spellings))}
        if len(spellings) == 1
        else {"$or": [{"$contains": s} for s in sorted(spellings)]}
    )
    try:
        got = kb.store.collection.get(where=chroma_where(scope), where_document=where_doc, include=["metadatas"])
    except Exception as exc:  # noqa: BLE001 - a list of files still answers without the mentions
        log.warning("mentions not read: %s", exc)
        return set()
    return {str(m.get("source", "")) for m in got["metadatas"]}


def _subject(q: Question, holdings: Sequence[Holding]) -> _Subject | None:
    """What the question asks the documents to be about: a name or group it names ("macaws",
    "金刚鹦鹉"), else the words after "about" / "关于" (then documents titled so are about it)."""
    named = find_named(q.text, holdings)
    if named:
        m = max(named, key=lambda x: len(x.holdings))  # "the macaw notes": the group, not one note
        singular = name_key(m.label)
        return _Subject(m.label, m.holdings, sorted({m.label, singular}))
    found = _ABOUT_ZH.search(q.text) or _ABOUT_EN.search(q.text)
    if not found:
        return None
    label = next((g for g in found.groups() if g), "").strip(" \"'“”‘’")
    label = re.sub(r"^(?:my|the|your)\s+", "", label, flags=re.I)
    if not label or len(label) > 60:
        return None
    key = label.lower()
    about = [h for h in holdings if key in h.title.lower() or key in h.zh]
    return _Subject(label, about, [label, name_key(label)])


def library_answer(
    kb: Any, q: Question, scope: str | None, floor: float | None = None, meaning: Meaning | None = None
) -> Answer:
    """The library's own answer to ``q`` (no model): about a subject, what is new, a collection,
    the documents closest to what it asks, or the whole list, each with counts. ``floor``: the
    encoder's cosine under which a passage is far from a question (None: words alone judge);
    ``meaning`` picks the sentence quoted for a document found by meaning."""
    holdings = sorted(read_holdings(kb, scope), key=lambda h: h.source)
    lang = q.language
    text = q.text
    suffixes = [sfx for sfx, rx in _FORMATS.items() if re.search(rf"(?<![\w]){rx}(?![\w])", text, re.I)]
    if suffixes:
        holdings = [h for h in holdings if h.source.lower().endswith(tuple(suffixes))]
    lines: list[Text]
    subject = _subject(q, holdings)
    topic = topic_of(text)  # what it asks about, framing dropped: searched when no title names it
    asks_topic = bool(match_keys(topic))
    collections = {collection_of(h) for h in holdings}
    if _NEW.search(_PLACE_NEW.sub(" ", text)):
        lines = _newest(holdings, lang)
    elif _COLLECTION.search(text) and (
        (coll := _collection_named(text, holdings)) is not None
        or (len(collections) == 1 and (coll := next(iter(collections))))
    ):
        members = [h for h in holdings if collection_of(h) == coll]
        lines = [message(notes.LIBRARY_COLLECTION, name=coll.lstrip("@"), count=len(members))]
        lines += _listed(members, lang)
    elif subject is not None and (about := _about(kb, scope, subject, holdings, lang)):
        lines = about
    elif subject is not None or (asks_topic and not _COUNT.search(text)):
        if asks_topic and (closest := _closest(kb, q, topic, scope, holdings, floor, meaning)):
            return closest
        lines = [
            message(notes.LIBRARY_NONE_ABOUT, subject=subject.label)
            if subject is not None
            else message(notes.LIBRARY_NONE_CLOSE)
        ]
    elif _COUNT.search(text) or not _COLLECTION.search(text):
        lines = _whole(holdings, lang, names=not _COUNT.search(text))
    else:
        lines = _whole(holdings, lang, names=False)
    if suffixes and lines and isinstance(lines[0], Message) and lines[0].code == notes.LIBRARY_TOTAL:
        lines[0] = message(notes.LIBRARY_OF_FORMAT, count=len(holdings), format=" / ".join(suffixes))
    return Answer(render_lines(lines, notes.answer_language(lang)), [], by="library", lines=lines)


def _whole(holdings: Sequence[Holding], lang: str, names: bool) -> list[Text]:
    """The total, then each folder or collection with its count (and its first documents)."""
    by: dict[str, list[Holding]] = defaultdict(list)
    for h in holdings:
        by[collection_of(h)].append(h)
    lines: list[Text] = [message(notes.LIBRARY_TOTAL, count=len(holdings))]
    if len(by) > 1 or not names:
        lines.append(message(notes.LIBRARY_COLLECTIONS, count=len(by)))
    # The biggest first; a few documents per folder when the list is asked for.
    ordered = sorted(by.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    per = max(3, MAX_LISTED // max(1, len(by))) if len(by) > 1 else MAX_LISTED
    for folder, members in ordered[:MAX_FOLDERS]:
        name: Text = folder.lstrip("@") if folder else message(notes.LIBRARY_TOP_FOLDER)
        lines.append(message(notes.LIBRARY_FOLDER, folder=name, count=len(members)))
        if names:
            lines += _listed(members, lang, per)
    if len(ordered) > MAX_FOLDERS:
        lines.append(message(notes.LIBRARY_MORE, count=len(ordered) - MAX_FOLDERS))
    return lines


def _newest(holdings: Sequence[Holding], lang: str) -> list[Text]:
    """The documents indexed on the latest day any was (added or changed), newest first."""
    dated = sorted((h for h in holdings if h.indexed_at), key=lambda h: (h.indexed_at, h.source), reverse=True)
    if not dated:
        return [message(notes.LIBRARY_TOTAL, count=len(holdings))]
    day = dated[0].indexed_at[:10]
    latest = [h for h in dated if h.indexed_at.startswith(day)]
    return [message(notes.LIBRARY_NEW, date=day, count=len(latest)), *_listed(latest, lang)]


def _collection_named(text: str, holdings: Sequence[Holding]) -> str | None:
    """The collection or folder the question names ("the parrots collection", "@work")."""
    low = text.lower()
    names = {collection_of(h) for h in holdings} - {""}
    for name in sorted(names, key=len, reverse=True):
        bare = name.lstrip("@").lower()
        if re.search(rf"(?<![\w]){re.escape(bare)}(?![\w])", low):
            return name
    return None


def _about(kb: Any, scope: str | None, subject: _Subject, holdings: Sequence[Holding], lang: str) -> list[Text]:
    """Documents whose subject it is first, then those that only mention it, each with a count;
    empty when none is titled so or says it (the search by meaning answers then)."""
    about_sources = {h.source for h in subject.about}
    mentioned = mentioning(kb, scope, subject.terms) - about_sources
    others = [h for h in holdings if h.source in mentioned]
    label = subject.label
    if not subject.about and not others:
        return []
    lines: list[Text] = []
    if subject.about:
        lines.append(message(notes.LIBRARY_ABOUT, count=len(subject.about), subject=label))
        lines += _listed(subject.about, lang, max(MAX_LISTED, 20))
        if others:
            lines.append(message(notes.LIBRARY_MENTION, count=len(others), subject=label))
            lines += _listed(others, lang)
    else:
        lines.append(message(notes.LIBRARY_ONLY_MENTION, count=len(others), subject=label))
        lines += _listed(others, lang)
    return lines


def topic_of(text: str) -> str:
    """What a library question asks the documents to be about, its framing words dropped."""
    rest = _FRAME_ZH.sub(" ", text)
    for rx in _FORMATS.values():  # "my PDFs about tax": the format is a filter, not the topic
        rest = re.sub(rf"(?<![\w]){rx}(?![\w])", " ", rest, flags=re.I)
    rest = _FRAME_EN.sub(" ", rest)
    return re.sub(r"[\s?？!！。，,、:：]+", " ", rest).strip()


def _closest(
    kb: Any,
    q: Question,
    topic: str,
    scope: str | None,
    holdings: Sequence[Holding],
    floor: float | None,
    meaning: Meaning | None,
) -> Answer | None:
    """The documents whose text is closest to ``topic`` (what ``q`` asks about, its framing dropped),
    found by the library's own search (meaning, words and their translations), closest first, each
    cited at the passage that makes it so; None when nothing is close.
    A passage is close when it holds a word of the topic (or a translation) or its cosine reaches
    ``floor``: the search ranks every passage, and a ranking alone lists football for a recipe."""
    listed = {h.source: h for h in holdings}
    best: dict[str, Hit] = {}
    for hit in kb.search(topic, top_k=30, scope=scope):
        close = bool(hit.keyword_score) or (
            floor is not None and hit.vector_score is not None and hit.vector_score >= floor
        )
        if hit.source in listed and hit.score > 0 and close:
            best.setdefault(hit.source, hit)
    if not best:
        return None
    top = next(iter(best.values())).score
    chosen = [h for h in best.values() if h.score >= CLOSEST_SHARE * top][:MAX_CLOSEST]
    lang = q.language
    lines: list[Text] = [message(notes.LIBRARY_CLOSEST, count=len(chosen))]
    citations = []
    try:
        terms, weights = kb.keyword.query_terms(topic)  # with the words' translations
    except Exception as exc:  # noqa: BLE001 - the topic's own words still pick a sentence
        log.warning("query terms not read: %s", exc)
        terms, weights = query_terms(topic)
    weight = dict(zip(terms, weights, strict=False))
    for n, hit in enumerate(chosen, 1):
        quote = _closest_sentence(hit.text, topic, weight, meaning)
        lines.append(f"- {listed[hit.source].label(lang)} ({hit.source}): “{quote}” [{n}]")
        citations.append(Citation(n, hit.source, hit.page, hit.chunk_id, hit.text[:500]))
    tr = notes.answer_language(lang)
    return Answer(render_lines(lines, tr), citations, by="library", lines=lines)


def _closest_sentence(text: str, topic: str, weight: dict[str, float], meaning: Meaning | None) -> str:
    """The passage's sentence closest to the topic: the weight of its words (and their translations)
    plus its cosine where the encoder reads it; the first on a tie; cut short."""
    # Line by line: a sentence ending in ":" takes in its list, and the item that says it is wanted.
    sentences = [
        s.strip()
        for line in text.splitlines()
        for s in split_sentences(line)
        if s.strip() and not s.lstrip().startswith("#")
    ] or [text.strip()]
    scores = [sum(weight.get(t, 0.0) for t in set(tokenize(s))) for s in sentences]
    if meaning is not None and len(sentences) > 1:
        try:
            cosines = meaning(topic, sentences)
        except Exception as exc:  # noqa: BLE001 - the words alone still pick one
            log.warning("sentence cosines failed: %s", exc)
            cosines = []
        top = max(scores) or 1.0
        scores = [sc + top * (c or 0.0) for sc, c in zip(scores, [*cosines] or [None] * len(scores), strict=False)]
    best = sentences[max(range(len(sentences)), key=lambda i: (scores[i], -i))]
    most = 160
    return best if len(best) <= most else best[: most - 1].rstrip() + "…"
