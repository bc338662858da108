"""Does the retrieved evidence answer the question? The signal behind "your documents do not seem
to answer this".

The best hit's similarity alone cannot tell an unanswerable question about an indexed subject
("What is Abraham Lincoln's favourite ice cream flavour?") from an answerable one: its passages
are about Lincoln too (similarity medians 0.52 against 0.62, docs/chat-benchmarks.md). What the
unanswerable one lacks is a passage holding its other rare terms ("ice cream", "flavour"). So the
judge is *coverage*: the share of the question's terms, weighted by how rare each is in the
library (IDF), that one of the top passages holds.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from desktop_app.core.ask.question import asked_words
from desktop_app.core.library.bilingual import WEIGHT, translations
from desktop_app.core.library.languages import CJK_RE, has_cjk
from desktop_app.core.library.text_analysis import UNIT_SYMBOLS, idf, query_terms, tokenize

# Question words are rare in documents (documents rarely ask), so their IDF is high although
# they say nothing about the answer: never count them.
_QUESTION_WORDS = frozenset(
    "什么 什么样 为什么 为何 怎么 怎么样 怎样 如何 哪 哪里 哪儿 哪个 哪些 哪位 哪一 哪一年 哪年 谁 多少 几 "
    "多久 多大 多长 多高 何时 何地 何人 是否 有没有 吗 呢 请问 请 一下 介绍 是 的 了 在 有 和 与 被 "
    "也 都 又 就 这 那 它 他 她 它们 他们 她们 之 而 及 或 于 为 从 对 向 把 让 给 "
    "tell name explain describe list give show know".split()
)
_NAME = re.compile(r"^_")
_LATIN = re.compile(r"[A-Za-z]")
DocFreq = Callable[[Iterable[str]], tuple[int, dict[str, int]]]  # KeywordIndex.doc_freq


@dataclass
class Evidence:
    """How well the best passages answer a question."""

    coverage: float  # 0..1: IDF-weighted share of the question's terms held by the best passage
    vector: float | None  # the best passage's cosine similarity, when the dense side scored it
    passage: int | None  # index (into the hits judged) of the passage that covers most
    # 0..1: IDF-weighted share of the question's words no document holds in either language (nor
    # as a unit's symbol): what it asks about is not in the library ("calories", "ice cream")
    absent: float = 0.0

    def to_dict(self) -> dict[str, float | int | None]:
        return {
            "coverage": round(self.coverage, 3),
            "vector": self.vector,
            "passage": self.passage,
            "absent": round(self.absent, 3),
        }


def question_terms(question: str) -> dict[str, float]:
    """The question's BM25 terms (stemmed words; Chinese words and bigrams) and their weights,
    without name terms and question words."""
    terms, weights = query_terms(question)
    out: dict[str, float] = {}
    for term, weight in zip(terms, weights):
        if _NAME.match(term) or is_question_word(term):
            continue
        out[term] = out.get(term, 0.0) + weight
    return out


def is_question_word(term: str) -> bool:
    """A question word or particle, or a Chinese bigram made of their characters ("是谁", "哪一")."""
    return term in _QUESTION_WORDS or (len(term) <= 2 and all(ch in _QUESTION_CHARS for ch in term))


_QUESTION_CHARS = frozenset("什么为何怎样如哪里谁多少几吗呢是的了请问一个些位年")


def judge(
    question: str,
    texts: Sequence[str],
    doc_freq: DocFreq,
    vectors: Sequence[float | None] = (),
    cross_lingual: bool = False,
    languages: set[str] | frozenset[str] = frozenset(),
) -> Evidence:
    """Coverage of ``question`` by the best of ``texts`` (the top hits, best first); ``idf`` maps
    ``doc_freq`` is the library's KeywordIndex.doc_freq (a term no document holds weighs most: the
    question asks about something the library never names). ``cross_lingual``: the dense side
    can match a question to a page in another language (a multilingual encoder). ``languages``:
    the library's (KeywordIndex.languages), into which the question's words are translated."""
    wanted = question_terms(question)
    best_vector = max((v for v in vectors if v is not None), default=None)
    if not texts:
        return Evidence(0.0, best_vector, None)
    if not wanted:  # nothing to check ("what is it?"): trust retrieval
        return Evidence(1.0, best_vector, 0)
    docs, df = doc_freq(wanted)
    weight = {t: w * max(idf(docs, df.get(t, 0)), 0.0) for t, w in wanted.items()}
    total = sum(weight.values())
    if total <= 0:
        return Evidence(1.0, best_vector, 0)
    # The question's words in the other language (bilingual.py), each a group held when the
    # passage holds any of its terms: an English question over a Chinese page is judged by them.
    groups = _translated(question, docs, doc_freq, languages) if len(languages) > 1 or languages - {
        _LANG[_script(question)]
    } else []
    absent = _absent(question, weight, df, groups, doc_freq) / total
    best, where, judged = 0.0, 0, False
    for i, text in enumerate(texts):
        # Only terms in a script the passage is written in can be looked for in it: a Chinese
        # question's words are never in an English page it was found by (a multilingual encoder,
        # a Latin name), and their absence says nothing.
        scripts = {_script(text)} if _script(text) != "both" else {"cjk", "latin"}
        judgeable = {t: w for t, w in weight.items() if _script(t) in scripts}
        own = [(keys, w) for _source, keys, w in groups if _script(keys[0]) in scripts]
        if sum(judgeable.values()) + sum(w for _k, w in own) <= 0:
            continue
        judged = True
        held = set(tokenize(text))
        got = sum(w for t, w in judgeable.items() if t in held)
        room = sum(judgeable.values())
        share = got / room if room > 0 else 0.0
        if own:  # with the translations too, when they say more
            got += sum(w for keys, w in own if held.intersection(keys))
            share = max(share, got / (room + sum(w for _k, w in own)))
        if share > best:
            best, where = share, i
    if not judged:
        # Nothing of the question can be looked for in these passages (a Chinese question, English
        # pages): a multilingual encoder may have matched them across languages, so trust it;
        # an English-only one could not have, so they are noise.
        return Evidence(1.0 if cross_lingual else 0.0, best_vector, 0, absent)
    return Evidence(best, best_vector, where, absent)


_LANG = {"cjk": "zh", "latin": "latin", "both": ""}



def _absent(
    question: str,
    weight: dict[str, float],
    df: dict[str, int],
    groups: list[tuple[str, list[str], float]],
    doc_freq: DocFreq,
) -> float:
    """The IDF weight of the question's Latin-script words that no document holds, in their own
    language or translated (``groups``), nor as a unit's symbol; counted when two or more are
    absent ("ice cream flavour") or the word asked for is ("how many calories"): one other word
    alone is as likely a paraphrase of the page's ("where does it live" over "Where: ..."). Chinese
    words are left out: a question's jieba words often differ from a page's (刚入职 / 入职)."""
    translated = {w for source, _keys, _w in groups for w in source.split()}
    asked = {tokenize(w)[0] for w in asked_words(question) if tokenize(w)}
    found: list[str] = []
    out = 0.0
    for term, w in weight.items():
        if df.get(term, 0) or _script(term) != "latin" or term.startswith("_") or term.isdigit():
            continue
        if term in translated:
            continue
        symbols = UNIT_SYMBOLS.get(term, ())
        if symbols and any(doc_freq(symbols)[1].values()):
            continue
        found.append(term)
        out += w
    return out if len(found) >= 2 or asked.intersection(found) else 0.0


def _translated(
    question: str, docs: int, doc_freq: DocFreq, languages: set[str] | frozenset[str]
) -> list[tuple[str, list[str], float]]:
    """The question's translated words (bilingual.translations) that the library holds, each
    as its terms and the weight of its rarest term."""
    present_cache: dict[str, int] = {}

    def present(term: str) -> bool:
        if term not in present_cache:
            present_cache[term] = doc_freq([term])[1].get(term, 0)
            if not present_cache[term] and len(term) > 2 and CJK_RE.match(term):
                # a word jieba split otherwise in the pages: held when all of its bigrams are
                pairs = [term[i : i + 2] for i in range(len(term) - 1)]
                present_cache[term] = min(doc_freq(pairs)[1].values())
        return present_cache[term] > 0

    out: list[tuple[str, list[str], float]] = []
    for source, keys in translations(question, present, "zh" in languages, "latin" in languages):
        if any(is_question_word(k) for k in keys):
            continue
        rarest = max(idf(docs, present_cache.get(k, 0) or docs) for k in keys)
        out.append((source, keys, WEIGHT * max(rarest, 0.0)))
    return out


def _script(text: str) -> str:
    """"cjk", "latin" or "both" (by the characters present; "latin" for digits alone)."""
    cjk = has_cjk(text)
    latin = bool(_LATIN.search(text))
    return "both" if cjk and latin else "cjk" if cjk else "latin"
