"""The no-LLM answerer: a first line that answers, then at most two supporting sentences.

The question's type (who, when, where, how many, which, why) is read from its words once
(question.py). Every
sentence of the retrieved blocks is scored by the share of the question's words it holds, each
weighted by its rarity among the retrieved sentences (a word every sentence has weighs little)
and, in Chinese, doubled beside the question word (嫁给了谁: 嫁给 is what is asked), and by how
close together they stand. The score is gated by how well the sentence's block matches the
question's subject (a sentence that shares the asked-about word but speaks of someone else
loses), lowered for merely restating the question and by the block's retrieval rank. The best
few then gain when they hold an entity of the asked type the question lacks (a year for "when",
a name for "who"). The best sentence leads, cut to the clauses holding the answer when it is
long; up to two supporting sentences follow, each cited, and near-duplicate passages never take
two citation slots.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import PurePosixPath

from desktop_app.core.ask import notes
from desktop_app.core.ask.budget import ContextBlock
from desktop_app.core.ask.question import FACT_KINDS, Question, as_question, asked_words
from desktop_app.core.ask.question import question_type as question_type  # its old home, still imported
from desktop_app.core.ask.sentences import clauses, split_sentences
from desktop_app.core.library.bilingual import translations
from desktop_app.core.library.languages import question_lang

# The one text analyzer (library/text_analysis.py), under the names this module has used.
from desktop_app.core.library.text_analysis import ANSWER_STOPWORDS_EN as _STOP
from desktop_app.core.library.text_analysis import ANSWER_TOKEN_RE as _TOKEN
from desktop_app.core.library.text_analysis import HAN_RE as _HAN
from desktop_app.core.library.text_analysis import UNIT_SYMBOLS, terms
from desktop_app.core.library.text_analysis import ZH_QUESTION_WORDS_RE as _ZH_QWORDS
from desktop_app.core.library.text_analysis import ZH_STOP_CHARS as _ZH_STOP
from desktop_app.core.library.text_analysis import answer_stemmer as _stemmer
from desktop_app.core.library.text_analysis import jieba_module as _jieba
from desktop_app.core.library.text_analysis import match_keys as _keys
from desktop_app.core.messages import Text, message

log = logging.getLogger(__name__)

# The general type a fact kind (question.py) is checked as (entities, short answers).
_BASE_TYPE = {"size": "number", "range": "place"}


# ------------------------------------------------------------------------------ labelled facts
# A line that labels its fact ("**Where and size:** ...", "- 分布：...", "Diet: ...") and the
# kinds each label gives; a prose sentence is told by its words instead.
_LABEL = re.compile(
    r"^\s*(?:[-*•]\s*)?(?:\*\*)?([^:：*\n]{1,30}?)(?:\*\*)?\s*[:：]\s*(?:\*\*)?\s*(.*)$", re.S
)
_LABEL_KINDS: list[tuple[str, re.Pattern[str]]] = [
    (
        "range",
        re.compile(r"where|range|distribution|habitat|found|native|分布|栖息|产地|生境|范围|地区", re.I),
    ),
    ("size", re.compile(r"size|length|wingspan|weight|体长|大小|体型|身长|尺寸|体重", re.I)),
    ("diet", re.compile(r"diet|food|feed|eat|食性|食物|吃", re.I)),
    ("colour", re.compile(r"colou?r|plumage|appearance|羽色|颜色|体色|外观|毛色", re.I)),
    ("latin", re.compile(r"latin|scientific|binomial|学名|拉丁", re.I)),
    (
        "name",
        re.compile(r"chinese|english|also|other names|common name|中文名?|英文名?|别名|俗名|名称", re.I),
    ),
    ("other", re.compile(r"gallery label|identification|keys|notes?|behaviou?r|status|识别|保护|习性", re.I)),
]
_PROSE_CUES: dict[str, re.Pattern[str]] = {
    "range": re.compile(
        r"\b(?:lives?|living|found|native|occurs?|ranges?|distributed|inhabits?|habitat|endemic)\b|"
        r"\b(?:in|of|from|across|throughout) (?:the )?[A-Z][a-z]+|分布|栖息|生活在|产于|见于|原产",
    ),
    "size": re.compile(
        r"\d\s*(?:cm|mm|m|kg|g|in|inches|centimet(?:re|er)s?)\b|\b(?:measures?|length|size|wingspan)\b|厘米|公分|体长|[0-9]\s*克"
    ),
    "diet": re.compile(r"\b(?:eats?|eaten|feeds?|feeding|food|diet|forages?)\b|吃|食性|为食|觅食|取食"),
    "colour": re.compile(r"\b(?:colou?r(?:s|ed)?|plumage|feathers?)\b|羽色|羽毛|颜色"),
    "latin": re.compile(r"\b[A-Z][a-z]{2,} [a-z]{3,}\b"),
}
_SIZE_CLAUSE = re.compile(
    r"\d\s*(?:cm|mm|kg|g|m)\b|\d\s*(?:厘米|公分|克|公斤)|\b(?:long|length|wingspan)\b", re.I
)
_FACT_BONUS = 0.6  # a sentence giving the asked kind of fact
_FACT_OFF = 0.4  # a labelled line giving another kind ("Chinese: ..." for "where does it live?")


def label_kinds(sentence: str) -> tuple[set[str], str]:
    """The fact kinds a labelled line gives ("Where and size" -> range and size) and its value;
    (empty, sentence) for a sentence with no label."""
    m = _LABEL.match(sentence)
    if not m:
        return set(), sentence
    kinds = {k for k, rx in _LABEL_KINDS if rx.search(m.group(1))}
    return (kinds, m.group(2).strip()) if kinds else (set(), sentence)


def gives_fact(kind: str, sentence: str) -> bool:
    """Whether ``sentence`` gives a fact of ``kind``: by its label, else (prose) by its words."""
    kinds, _value = label_kinds(sentence)
    if kinds:
        return kind in kinds
    cue = _PROSE_CUES.get(kind)
    return bool(cue and cue.search(sentence))


def fact_clause(kind: str, sentence: str) -> str:
    """The part of a labelled line that answers ``kind``: its value, cut to the clauses of that
    kind when the label gives several ("Where and size: Alps; about 48 cm" -> "about 48 cm" for a
    size question); the line as it is otherwise."""
    kinds, value = label_kinds(sentence)
    if not kinds or not value:
        return sentence
    if len(kinds - {"other"}) < 2 or kind not in ("size", "range"):
        return value
    parts = [p.strip() for p in re.split(r"[;；]", value) if p.strip()]
    keep = [p for p in parts if (kind == "size") == bool(_SIZE_CLAUSE.search(p))]
    return "; ".join(keep) if keep else value


_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_ZH_NUM = "〇零一二两三四五六七八九十百千万亿"
_ENTITY: dict[str, re.Pattern[str]] = {
    "date": re.compile(
        rf"\b(?:1[0-9]{{3}}|20[0-9]{{2}}|[1-9][0-9]{{0,2}} ?(?:BC|BCE|AD|CE))s?\b|\b(?:{_MONTHS})\b|"
        rf"\bcentur(?:y|ies)\b|[0-9{_ZH_NUM}]+(?:年|月|日|世纪|年代)|[元初末]年",
        re.I,
    ),
    "number": re.compile(
        rf"\b\d[\d,.]*\b|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|"
        rf"thirty|forty|fifty|hundred|thousand|million|billion|dozen|half)\b|[0-9{_ZH_NUM}]+",
        re.I,
    ),
    # English only: Chinese names and places are told by jieba's part-of-speech tags (_zh_entities).
    "person": re.compile(r"\b[A-Z][a-z]+(?:\s+(?:[A-Z]\.\s*)*[A-Z][a-z]+)+\b|\bby [A-Z][a-z]+"),
    "place": re.compile(r"\b(?:in|at|from|near) (?:the )?[A-Z][a-z]+"),
    "reason": re.compile(
        r"\bbecause\b|\bdue to\b|\bsince\b|\bas a result\b|\bso that\b|\bin order to\b|"
        r"因为|由于|所以|因此|为了|原因|导致"
    ),
}
_ENTITY["which"] = re.compile(f"{_ENTITY['person'].pattern}|{_ENTITY['place'].pattern}|《[^》]+》")
_ZH_TAGS = {"person": ("nr",), "place": ("ns",), "which": ("nr", "ns", "nt", "nz")}


@lru_cache(maxsize=4096)
def _zh_entities(sentence: str, kind: str) -> tuple[str, ...]:
    """The words of ``sentence`` jieba tags as a person (nr) or place (ns) name; run on the few
    best sentences only (part-of-speech tagging reads ~20k characters a second)."""
    import jieba.posseg

    _jieba()
    tags = _ZH_TAGS[kind]
    return tuple(p.word for p in jieba.posseg.cut(sentence) if p.flag.startswith(tags) and len(p.word) > 1)


def _has_new_entity(kind: str, sentence: str, question: str) -> bool:
    """Whether ``sentence`` holds an entity of the asked kind that the question does not."""
    q = question.lower()
    found: list[str] = []
    if pattern := _ENTITY.get(kind):
        found = [m.group(0) for m in pattern.finditer(sentence)]
    if kind in _ZH_TAGS and _HAN.search(sentence):
        found.extend(_zh_entities(sentence, kind))
    return any(f.lower() not in q for f in found)


# ------------------------------------------------------------------------------ scoring
@dataclass
class Extract:
    text: str
    cited: list[int]  # block numbers, in order of appearance
    lead: str = ""  # the answering line, without its citation
    support: list[str] = field(default_factory=list)  # the supporting sentences, without citations
    coverage: float = 0.0  # the lead's weighted share of the question's words (0..1)
    short: str = ""  # the lead's span that answers a when / how many / who / where question
    # It says the documents do not give what was asked ("The notes about the kea do not say what it
    # eats."): a refusal, judged as one.
    refused: bool = False


# Words a Chinese answer says otherwise than its question (郭麐在哪一年去世 / 卒于1831年).
_ZH_SYNONYMS = {
    word: alts.split(",")
    for pair in (
        "去世:卒,逝世,病逝,死于,薨 出生:生于,出生于 母亲:母,生母 父亲:父 妻子:妻,夫人,娶 丈夫:嫁给 "
        "编著:编,撰,所著 作者:撰,所著 创办:创立,创建,成立 定义:是指 抓:逮捕 目的:为了,以便 "
        "儿子:之子,皇子,长子,次子 女儿:之女 爱好:兴趣,喜欢 作品:著有 用途:用于,用来 建立:成立,创建 "
        "意思:意为,意指,意即,是指 习性:栖息,生活于,喜"
    ).split()
    for word, alts in [pair.split(":")]
}


@dataclass
class _Unit:
    """One word of the question: an English word, or a Chinese word as its bigrams (a name of six
    characters counts once, like the one verb that picks the answering sentence)."""

    keys: frozenset[str]
    chars: frozenset[str] = frozenset()  # a Chinese word's characters: some credit (母 for 母亲)
    focus: bool = False  # beside a Chinese question word: what is asked about
    weight: float = 1.0
    synonyms: tuple[frozenset[str], ...] = ()  # other words for it, each as its keys

    def match(self, have: set[str]) -> float:
        got = len(self.keys & have) / len(self.keys)
        if got < 1 and self.chars:
            got = max(got, _CHAR * len(self.chars & have) / len(self.chars))
        for alt in self.synonyms:
            if got < _SYNONYM and alt <= have:
                got = _SYNONYM
        return got


@dataclass
class _Candidate:
    rank: int  # the block's position among the kept blocks
    pos: int  # the sentence's position in its block
    text: str
    keys: list[str] = field(default_factory=list)  # _keys(text), computed once
    coverage: float = 0.0
    score: float = 0.0
    asked: str = ""  # the question line or heading it answers (an FAQ's Q:, "## How long ...?")


_MIN_CHARS_EN, _MIN_CHARS_ZH = 12, 5
_LONG_EN, _LONG_ZH = 45, 100  # a lead longer than this (words / characters) is cut to its clauses
_CHAR = 0.25  # credit for a Chinese word's characters without the word
_SYNONYM = 0.8  # credit for a synonym of the question's word
_FOCUS = 2.0  # weight of the words beside a Chinese question word
_INHERIT = 0.3  # a subject word found elsewhere in the sentence's block counts this much
_BLOCK = 0.7  # how much the block's own match with the question gates its sentences
_RESTATE = 0.5  # penalty share for a sentence that only restates the question
_RANK_DECAY = 0.08
_NO_FOCUS = 0.6  # a sentence without the word asked about keeps this share of its score
_TYPE_BONUS = 0.35
_TYPED = 8  # the best sentences checked for an entity of the asked type
_PRONOUN = re.compile(r"^(?:he|she|they|his|her|their|it|its|this|these)\b|^[他她它其]", re.I)


def _han_keys(word: str) -> frozenset[str]:
    """A Chinese word's keys: its bigrams, or the character of a one-character word."""
    return frozenset([word] if len(word) == 1 else (word[i : i + 2] for i in range(len(word) - 1)))


def _units(question: str, lang: str) -> list[_Unit]:
    """The question's content words. A Chinese question word stands where the answer would
    (徐夫人最先嫁给了谁): the word after it (在哪里栖息), else the one before, is the focus."""
    stem = _stemmer()
    words: list[frozenset[str] | None] = []  # None: a question word
    synonyms: dict[frozenset[str], tuple[frozenset[str], ...]] = {}
    counting: dict[int, bool] = {}  # question word position -> it asks for a quantity
    for m in _TOKEN.finditer(question):
        tok = m.group(0)
        if _HAN.match(tok):
            for word in _jieba().lcut(tok):
                # jieba glues a particle to an unknown name ("尚恩有"): the name alone is the word
                w = word.strip("".join(_ZH_STOP)) if len(word) > 2 else word
                if not w:
                    continue
                if _ZH_QWORDS.fullmatch(w):
                    words.append(None)
                    counting[len(words) - 1] = w.startswith(("多少", "几"))
                elif w not in _ZH_STOP:
                    words.append(_han_keys(w))
                    synonyms[words[-1]] = tuple(_han_keys(a) for a in _ZH_SYNONYMS.get(w, ()))
        elif (low := tok.lower()) not in _STOP:
            words.append(frozenset([stem(low)]))
            # "how many watts" is answered by "2200 W", "for four people" by "serves 4"
            alts = [*UNIT_SYMBOLS.get(stem(low), ()), *([str(_NUMBER_WORDS[low])] if low in _NUMBER_WORDS else [])]
            synonyms[words[-1]] = tuple(frozenset([a]) for a in alts)
    focus: set[int] = set()
    if lang == "zh":
        for i, w in enumerate(words):
            if w is None:
                after = i + 1 < len(words) and words[i + 1] is not None
                before = i > 0 and words[i - 1] is not None
                if after:
                    focus.add(i + 1)
                # "水深多少的海域": the quantity asked is the word before 多少/几
                if before and (not after or counting[i]):
                    focus.add(i - 1)
    # "How much guanciale", "how many watts", "what ratio": the thing asked for, which the
    # answering sentence must hold itself (the subject may be named elsewhere in its passage).
    asked = {stem(w.lower()) for w in asked_words(question)} if lang == "en" else set()
    out: dict[frozenset[str], _Unit] = {}
    for i, w in enumerate(words):
        if w:
            first = next(iter(w))
            chars = frozenset("".join(w)) if len(first) == 2 and _HAN.match(first) else frozenset()
            unit = out.setdefault(w, _Unit(w, chars, synonyms=synonyms.get(w, ())))
            unit.focus = unit.focus or i in focus or first in asked
    return list(out.values())


_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen twenty".split()
    )
}


def _translate(units: list[_Unit], question: str, lang: str, have: set[str]) -> None:
    """Give the question's words their translations (bilingual.py) that the passages hold, as
    synonyms: an English question's "leave" meets 年假 in a Chinese page, a Chinese question's 炖
    meets "simmer". Only when the passages are written in the other script."""
    other_han = any(_HAN.match(k) for k in have)
    other_latin = any(not _HAN.match(k) for k in have)
    chinese, english = lang == "en" and other_han, lang == "zh" and other_latin
    if not (chinese or english):
        return

    def present(term: str) -> bool:
        return _han_keys(term) <= have if _HAN.match(term) else term in have

    by_key = {k: u for u in units for k in u.keys}
    for source, found in translations(question, present, chinese, english):
        alts = tuple(_han_keys(t) if _HAN.match(t) else frozenset([t]) for t in found)
        words = _han_keys(source) if _HAN.match(source) else set(source.split())
        for unit in {id(by_key[k]): by_key[k] for k in words if k in by_key}.values():
            unit.synonyms = unit.synonyms + alts


def _weigh(units: list[_Unit], sentences: list[set[str]]) -> None:
    """Inverse sentence frequency over the retrieved text."""
    n = len(sentences)
    for u in units:
        df = sum(u.match(s) for s in sentences)
        u.weight = (math.log((n + 1) / (df + 0.5)) + 0.1) * (_FOCUS if u.focus else 1.0)


def _proximity(units: list[_Unit], seq: list[str]) -> float:
    """1 when the matched question words stand together, falling as they spread out."""
    where = [(i, j) for i, k in enumerate(seq) for j, u in enumerate(units) if k in u.keys]
    need = {j for _i, j in where}
    if len(need) < 2:
        return 0.0
    best = len(seq)
    for a in range(len(where)):
        seen: set[int] = set()
        for b in range(a, len(where)):
            seen.add(where[b][1])
            if seen == need:
                best = min(best, where[b][0] - where[a][0] + 1)
                break
    return min(1.0, 2 * len(need) / best)


def _block_match(units: list[_Unit], block_keys: set[str]) -> float:
    """How well a block matches the question's subject: its words other than the focus, by
    rarity, or all of them when every word is the focus."""
    subject = [u for u in units if not u.focus] or units
    total = sum(u.weight for u in subject) or 1.0
    return sum(u.weight * u.match(block_keys) for u in subject) / total


def _score(
    cand: _Candidate, units: list[_Unit], block_keys: set[str], block: float, lang: str, rank: int
) -> None:
    """Set ``cand.coverage`` (the weighted share of the question's words it holds) and
    ``cand.score`` (coverage, closeness, restatement, block match and its document's rank)."""
    seq = cand.keys
    have = set(seq)
    # The subject may be named once per block (later 它, 本鱼, "he"); what is asked must be here.
    matches = [max(u.match(have), 0 if u.focus else _INHERIT * u.match(block_keys)) for u in units]
    cand.coverage = sum(u.weight * m for u, m in zip(units, matches, strict=True)) / (
        sum(u.weight for u in units) or 1.0
    )
    score = cand.coverage * (1 + 0.3 * _proximity([u for u in units if u.match(have)], seq))
    # A sentence that only restates the question (its words, nothing new) answers nothing.
    qkeys = set().union(*(u.keys for u in units))
    new = {k for k in have - qkeys if len(k) > 1 or not _HAN.match(k)}
    if cand.coverage > 0.5 and len(new) < (4 if lang == "zh" else 3):
        score -= _RESTATE * cand.coverage
    focus = [u for u in units if u.focus]
    if focus and not any(u.match(have) >= 0.5 for u in focus):
        score *= _NO_FOCUS  # what is asked ("how much guanciale") is not in it
    cand.score = score * (1 - _BLOCK + _BLOCK * block) - _RANK_DECAY * rank


def _size(text: str) -> int:
    """Words of Latin text plus characters of Chinese text."""
    return sum(len(r) for r in _HAN.findall(text)) + len(re.findall(r"[A-Za-z0-9]+", text))


def _lead(question: str, kind: str, units: list[_Unit], sentence: str, lang: str) -> str:
    """The sentence, or for a long one the shortest run of its clauses that keeps most of the
    question's matched words and (for a typed question) an entity of the asked type."""
    parts = clauses(sentence)
    if _size(sentence) <= (_LONG_ZH if lang == "zh" else _LONG_EN) or len(parts) < 2:
        return sentence
    glue = " " if lang == "en" else ""

    def covered(text: str) -> float:
        have = terms(text)
        return sum(u.weight * u.match(have) for u in units)

    want = covered(sentence)
    spans = [(a, b) for a in range(len(parts)) for b in range(a, len(parts))]
    for a, b in sorted(spans, key=lambda ab: _size(glue.join(parts[ab[0] : ab[1] + 1]))):
        span = glue.join(parts[a : b + 1])
        typed = kind in ("other",) or _has_new_entity(kind, span, question)
        if typed and covered(span) >= 0.7 * want and _size(span) < _size(sentence):
            return span
    return sentence


# ------------------------------------------------------------------------------ short answers
_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
_ZN = "0-9〇零一二两三四五六七八九十百千万亿"
_SPANS: dict[str, re.Pattern[str]] = {
    "date": re.compile(
        rf"\b(?:{_MONTH}\.? \d{{1,2}}(?:st|nd|rd|th)?,? \d{{3,4}}|\d{{1,2}}(?:st|nd|rd|th)? {_MONTH},? \d{{3,4}}|"
        rf"(?:(?:early|late|mid)[- ])?{_MONTH},? \d{{3,4}}|{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?|"
        rf"(?:(?:early|late|mid)[- ])?(?:1[0-9]{{3}}|20[0-9]{{2}})s?|\d{{1,2}}(?:st|nd|rd|th) century|"
        rf"\d{{1,4}} ?(?:BC|BCE|AD|CE))\b|"
        rf"(?:公元前?)?[{_ZN}]{{2,}}年(?:[{_ZN}]{{1,2}}月(?:[{_ZN}]{{1,3}}日)?)?|[{_ZN}]{{1,2}}月[{_ZN}]{{1,3}}日|"
        rf"[{_ZN}]+世纪(?:[{_ZN}]+年代)?|[{_ZN}]+年代"
    ),
    "number": re.compile(
        r"\b(?:(?:about|approximately|around|over|nearly|almost|more than|less than|some) )?"
        r"(?:\d[\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
        r"forty|fifty|hundred|a dozen)(?: ?(?:%|percent|hundred|thousand|million|billion|trillion))?"
        r"(?:[ -](?!(?:and|or|of|in|on|at|the|to|a|was|were|is|are|by|for|with|from|his|her|its|their|"
        r"he|she|it|they|we|this|that|these|those|when|which|who)\b)[a-z]+)?\b|"
        rf"(?:约|大约|超过|近)?[{_ZN}][{_ZN}.,，]*[余多]?(?:[%％‰倍]|(?:个|位|次|种|名|岁|座|部|条|只|家|本|年|"
        r"米|公里|千米|平方公里|公顷|吨|人|元|美元|港元|亿元|万元|天|小时|分钟|层|所|项|届|场|颗|台|辆|公斤|千克|克))?"
    ),
}
_ZH_UNIT = re.compile(r"(?:多少|几)([^\s，。？?的是])")
_ZH_UNITS = {"钱": ("元", "美元", "港元", "万元", "亿元", "欧元", "日元", "镑")}
_YEAR = re.compile(r"(?:1[0-9]{3}|20[0-9]{2})")
_SHORT_COVERAGE = 0.5  # below it the sentence is about the subject, not what is asked


def short_answer(question: str, kind: str, sentence: str) -> str:
    """The span of ``sentence`` that answers a when or how-many question: of the dates or numbers
    the question does not already hold, the one nearest the question's words (in Chinese, one
    with the measure word asked for, 多少场 -> 703场, or none); "" for other questions, or when
    there is none (the sentence is the answer). Names are not picked: capitalised words and
    jieba's name tags chose the wrong one for most who/where questions (docs/chat-benchmarks.md)."""
    if kind not in _SPANS:
        return ""
    q = question.lower()
    found = [
        (m.start(), m.end(), m.group(0).strip(" ,"))
        for m in _SPANS[kind].finditer(sentence)
        if m.group(0).strip(" ,") and m.group(0).strip(" ,").lower() not in q
    ]
    if kind == "number":
        # A bare year is no count ("How many children..." -> 1904), nor a lone 一 (a, one).
        found = [f for f in found if not _YEAR.fullmatch(f[2]) and f[2] not in ("一", "两", "一个")]
        if unit := _ZH_UNIT.search(question):
            wanted = _ZH_UNITS.get(unit.group(1), (unit.group(1),))
            found = [f for f in found if f[2].endswith(wanted)]
    if not found:
        return ""
    units = _units(question, "zh" if _HAN.search(question) else "en")
    anchors = [
        m.start() for m in _TOKEN.finditer(sentence) if any(u.match(set(_keys(m.group(0)))) for u in units)
    ]
    if not anchors:
        return found[0][2]
    return min(found, key=lambda f: min(min(abs(a - f[0]), abs(a - f[1])) for a in anchors))[2]


def _same_passage(ta: set[str], tb: set[str]) -> bool:
    """Near-identical passages (a document indexed twice, a repeated chunk), by their terms."""
    return bool(ta) and len(ta & tb) / max(1, min(len(ta), len(tb))) >= 0.9


def _rank(
    q: Question, blocks: Sequence[ContextBlock], meaning: Meaning | None = None, translate: bool = True
) -> tuple[list[ContextBlock], list[list[str]], list[_Candidate], str, list[_Unit]]:
    """Every sentence of ``blocks`` scored against the question, best first, with the blocks kept
    (near-duplicates dropped), their sentences, the question's type and its words; ``meaning``
    adds how close the best few are to the question by meaning (an encoder's cosine)."""
    # A block repeating a better-ranked one's text gives nothing new and no second citation.
    kept: list[ContextBlock] = []
    text_keys: list[set[str]] = []
    for block in blocks:
        keys = terms(block.text)
        if not any(_same_passage(keys, k) for k in text_keys):
            kept.append(block)
            text_keys.append(keys)
    # A passage is about its document's title and section too ("## Ingredients" of the carbonara).
    block_keys = [k | terms(" ".join(b.hit.heading_path)) for k, b in zip(text_keys, kept, strict=True)]
    question, lang, kind = q.text, q.language, q.kind
    units = _units(question, lang)
    sentences = [split_sentences(table_rows(b.text)) for b in kept]
    found = _candidates(sentences)
    if not found:  # blocks with no sentence-like text: quote their start
        found = [_Candidate(r, 0, b.text.strip()[:300]) for r, b in enumerate(kept)]
    for cand in found:
        # An answer under its question (an FAQ's "Q: ...", a heading that asks) is matched with
        # the question's words too: the pair is the unit, and the answer is what is quoted.
        cand.keys = _keys(f"{cand.asked} {cand.text}" if cand.asked else cand.text)
    if translate:
        _translate(units, question, lang, set().union(*block_keys))
    _weigh(units, [set(c.keys) for c in found])
    blocks_match = [_block_match(units, k) for k in block_keys]
    # Retrieval ranks documents (fusion is per document): a document's passages share its rank.
    sources = list(dict.fromkeys(b.hit.source for b in kept))
    doc_rank = [sources.index(b.hit.source) for b in kept]
    for cand in found:
        _score(cand, units, block_keys[cand.rank], blocks_match[cand.rank], lang, doc_rank[cand.rank])
    found.sort(key=lambda c: (-c.score, c.rank, c.pos))
    if meaning is not None:
        _by_meaning(question, found, meaning)
    if kind in FACT_KINDS:  # the line giving the kind of fact asked, not another field
        for cand in found:
            labelled, _value = label_kinds(cand.text)
            if gives_fact(kind, cand.text):
                cand.score += _FACT_BONUS * max(cand.coverage, 0.3)
            elif labelled:
                cand.score -= _FACT_OFF
        found.sort(key=lambda c: (-c.score, c.rank, c.pos))
    base = _BASE_TYPE.get(kind, kind)
    if base not in ("other", *FACT_KINDS):  # the entity check is the costly part: the best few only
        for cand in found[:_TYPED]:
            if _has_new_entity(base, cand.text, question):
                cand.score += _TYPE_BONUS * max(cand.coverage, 0.2)
        found.sort(key=lambda c: (-c.score, c.rank, c.pos))
    _fit_tiers(question, found)
    return kept, sentences, found, kind, units


# ------------------------------------------------------------------------------ meaning
# The words of a question and of its answer often differ ("Where does it come from?" / "Origin:",
# "fun stuff" / "wants"): the library's encoder, where it reads both, says how close they are by
# meaning. Its cosine, weighted, joins the score of the best few sentences (kdesk bench domains'
# tuning set: the gold in the first three sentences 47 -> 50 of 64 with MiniLM or USE at 0.2-0.6).
Meaning = Callable[[str, Sequence[str]], Sequence[float | None]]
_MEANING = 0.3
_MEANT = 8  # the best sentences compared by meaning (MiniLM int8: ~5 ms each on a CPU)


def _by_meaning(question: str, found: list[_Candidate], meaning: Meaning) -> None:
    top = found[:_MEANT]
    try:
        sims = meaning(question, [f"{c.asked} {c.text}" if c.asked else c.text for c in top])
    except Exception as exc:  # noqa: BLE001 - an encoder failure leaves the words' ranking
        log.warning("sentences not compared by meaning: %s", exc)
        return
    for cand, sim in zip(top, sims, strict=False):
        if sim is not None:
            cand.score += _MEANING * sim
    found.sort(key=lambda c: (-c.score, c.rank, c.pos))


# ------------------------------------------------------------------------------ tiers
# A tier of a list or table is a range of some quantity ("20 to 25 °C: 1:2:2", "满10年不满20年：10天",
# "Below 20 °C", "体重超过30公斤"): a question giving a number (22 degrees, 工作12年) is answered by the
# tier whose range holds it, not its neighbours, which share every word but the numbers.
_NUM = r"(\d+(?:[.,]\d+)?)"
_NOT_DIGIT_BEFORE = r"(?<![A-Za-z0-9.,])"
_BETWEEN = re.compile(rf"{_NOT_DIGIT_BEFORE}{_NUM}\s*[^\d\s，。；;,:：]{{0,4}}\s*(?:to|-|–|—|~|～|至|到|不满|不足)\s*{_NUM}")
_ABOVE = re.compile(
    rf"(?:above|over|more than|at least|exceeding|超过|高于|大于|多于|满)\s*{_NUM}|"
    rf"{_NOT_DIGIT_BEFORE}{_NUM}\s*[^\d\s，。；;,:：]{{0,4}}(?:及以上|以上|or more|and (?:over|above)|\+)",
    re.I,
)
_BELOW = re.compile(
    rf"(?:below|under|less than|up to|fewer than|不满|不足|低于|少于|小于|未满)\s*{_NUM}|"
    rf"{_NOT_DIGIT_BEFORE}{_NUM}\s*[^\d\s，。；;,:：]{{0,4}}(?:以下|以内|or (?:less|fewer|under))",
    re.I,
)
_QUESTION_NUM = re.compile(rf"{_NOT_DIGIT_BEFORE}{_NUM}(?![A-Za-z0-9])")
_TIER_BONUS = 0.5


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _unit_after(text: str, end: int) -> str:
    """The Chinese measure word right after a number ("12年" -> 年, "12个月" -> 个月), "" for none."""
    m = _CJK_UNIT.match(text, end)
    return m.group(1) if m else ""


_CJK_UNIT = re.compile(r"\s*(个月|个?小时|分钟|公斤|千克|厘米|毫升|[年月周天日岁次袋片粒克米度℃元])")


def _ranges(sentence: str) -> list[tuple[float, float, str]]:
    """The ranges a sentence gives, with their Chinese measure word: [a, b] for "a to b"
    (满a年不满b年), [a, inf) for "above a", (-inf, b) for "below b"."""
    out: list[tuple[float, float, str]] = []
    used: list[int] = []  # where the numbers of ranges found so far start
    for m in _BETWEEN.finditer(sentence):
        a, b = _number(m.group(1)), _number(m.group(2))
        if a < b:
            out.append((a, b, _unit_after(sentence, m.end(2)) or _unit_after(sentence, m.end(1))))
            used += [m.start(1), m.start(2)]
    for m in (*_ABOVE.finditer(sentence), *_BELOW.finditer(sentence)):
        g = next(i for i in (1, 2) if m.group(i) is not None)
        if m.start(g) in used:
            continue
        value, unit = _number(m.group(g)), _unit_after(sentence, m.end(g))
        out.append((value, math.inf, unit) if m.re is _ABOVE else (-math.inf, value, unit))
    return out


def _fits(asked: list[tuple[float, str]], ranges: list[tuple[float, float, str]]) -> bool:
    """Whether a number of the question lies in one of the ranges (of the same measure word,
    where both give one: 工作12年 is not 满12个月)."""
    return any(lo <= n <= hi and not (unit and u and unit != u) for n, unit in asked for lo, hi, u in ranges)


def _fit_tiers(question: str, found: list[_Candidate]) -> None:
    """Raise the tier whose range holds the question's number above the tiers beside it; a list
    of tiers that its sentence took in ("ratios by temperature: - Below 20 °C ... - 20 to 25 °C ...")
    is quoted with the fitting tier alone."""
    asked = [(_number(m.group(1)), _unit_after(question, m.end(1))) for m in _QUESTION_NUM.finditer(question)]
    if not asked:
        return
    hit = False
    for cand in found[: _TYPED * 2]:
        head, *items = _ITEMS.split(cand.text)
        fitting = [i for i in items if _fits(asked, _ranges(i))]
        if len(items) >= 2 and len(fitting) == 1:
            cand.text = f"{head.rstrip()} {fitting[0].strip()}"
            cand.score += _TIER_BONUS * max(cand.coverage, 0.3)
            hit = True
    tiers = [(c, r) for c in found[: _TYPED * 2] if (r := _ranges(c.text))]
    if len(tiers) >= 2:  # one range is no list of tiers
        for cand, ranges in tiers:
            if _fits(asked, ranges):
                cand.score += _TIER_BONUS * max(cand.coverage, 0.3)
                hit = True
    if hit:
        found.sort(key=lambda c: (-c.score, c.rank, c.pos))


_ITEMS = re.compile(r"\s+[-*•]\s+")


_ASKS = re.compile(
    r"^\s*(?:#+\s*|[-*•]\s*)?(?:\*\*|__)?\s*(?:Q\d*\s*[:：.]|问\s*[:：]|问题\s*\d*\s*[:：])|[?？]\s*(?:\*\*|__)?\s*$",
    re.I,
)
_ANSWER_MARK = re.compile(
    r"^\s*(?:[-*•]\s*)?(?:\*\*|__)?\s*(?:A\d*\s*[:：.]|答\s*[:：]|回答\s*[:：])\s*(?:\*\*|__)?\s*", re.I
)
_BULLET = re.compile(r"^\s*[-*+•]\s+")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")


def _candidates(sentences: list[list[str]]) -> list[_Candidate]:
    """The sentences that can answer: not headings, not too short, and not questions (a question
    line lends its words to the sentence that answers it, the next one)."""
    out: list[_Candidate] = []
    for r, sents in enumerate(sentences):
        asked = ""
        for p, s in enumerate(sents):
            if _ASKS.search(s) and not _ANSWER_MARK.match(s):
                asked = s.lstrip("#").strip()
                continue
            if s.startswith("#"):
                continue
            text = _ANSWER_MARK.sub("", s) if asked else s
            if len(text) >= (_MIN_CHARS_ZH if _HAN.search(text) else _MIN_CHARS_EN):
                out.append(_Candidate(r, p, text, asked=asked))
            asked = ""
    return out


def table_rows(text: str) -> str:
    """A Markdown table's rows as labelled lines ("Model: K17; Capacity: 1.7 L"), so a row is
    quoted with the names of its values; other text as it is."""
    if "|" not in text:
        return text
    lines = text.split("\n")
    out: list[str] = []
    header: list[str] = []
    for i, line in enumerate(lines):
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.strip().startswith("|") else []
        if cells and i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1]):
            header = cells
            continue
        if _TABLE_RULE.match(line) and header:
            continue
        if cells and header and len(cells) == len(header):
            # One sentence a row: "；" would end a Chinese one, so its fields are joined by "，".
            zh = bool(_HAN.search(line))
            row = ("，" if zh else "; ").join(f"{h}: {c}" if h else c for h, c in zip(header, cells, strict=True))
            out.append(row + ("。" if zh else "."))
            continue
        header = header if cells else []
        out.append(line)
    return "\n".join(out)


def plain_line(text: str) -> str:
    """A quoted line without its list bullet ("- 婚假：..." quoted as "婚假：...")."""
    return _BULLET.sub("", text)


def key_sentences(
    question: str | Question,
    blocks: Sequence[ContextBlock],
    most: int = 6,
    meaning: Meaning | None = None,
    translate: bool = True,
) -> list[ContextBlock]:
    """The blocks cut to their best ``most`` sentences in all (each block's in reading order; a
    block with none left out, its number kept for citing): a small local model reads ~40 prompt
    tokens a second on this CPU, so five whole passages cost it half a minute before it answers."""
    if not blocks:
        return []
    kept, _sentences, found, _kind, _units = _rank(as_question(question), blocks, meaning, translate)
    best = [c for c in found if c.score > 0][:most] or found[:1]
    out: list[ContextBlock] = []
    for rank, block in enumerate(kept):
        picked = sorted((c for c in best if c.rank == rank), key=lambda c: c.pos)
        if picked:
            # The passage's language, not the question's: Chinese sentences join without a space.
            glue = "" if question_lang(block.text) == "zh" else " "
            out.append(replace(block, text=glue.join(c.text for c in picked), truncated=True))
    return out


# ------------------------------------------------------------------------------ the subject's note
_SCRIPT_EDGE = re.compile(r"(?<=[A-Za-z])(?=[\u3400-\u9fff])|(?<=[\u3400-\u9fff])(?=[A-Za-z])")
_LATIN_NAME = re.compile(r"\b[A-Z][a-z]{2,} [a-z]{3,}\b")


def note_title(block: ContextBlock) -> str:
    """The name a block's note gives its subject: its title without a Latin binomial in brackets
    (a Chinese title as it is), else its file name."""
    from desktop_app.core.identify.names import english_title

    heading = block.hit.heading_path[0] if block.hit.heading_path else ""
    title = english_title(heading) or heading.strip(" #*")
    return title or PurePosixPath(block.hit.source).stem


def subject_blocks(blocks: Sequence[ContextBlock], text: str) -> list[int]:
    """Positions of the blocks from the note ``text`` (the question, or the query searched for a
    follow-up) is about: the note whose longest name (title, name lines, file name, see
    identify/names.py) the text holds, else the one holding a Latin binomial the text gives; []
    when none is named."""
    from desktop_app.core.identify.names import hit_names, name_key

    key = f" {name_key(_SCRIPT_EDGE.sub(' ', text))} "  # "Scarlet Macaw分布在哪里": two words
    best: tuple[int, str] | None = None
    for block in blocks:
        names = hit_names(block.hit)
        for name in {*names.names, name_key(names.title)}:
            han = bool(_HAN.fullmatch(name.replace(" ", "")))
            if len(name) < (2 if han else 3) or (name not in text if han else f" {name} " not in key):
                continue
            if best is None or len(name) > best[0]:
                best = (len(name), block.hit.source)
    if best is None:
        # A Chinese name the note gives in its text only ("called 绯红金刚鹦鹉 in Chinese").
        best = _shared_han_name(blocks, text)
    if best is None and (latin := _LATIN_NAME.search(text)):
        # Prose gives the Latin name in brackets after the common one: "The kea (Nestor notabilis)".
        bracketed = re.compile(rf"[(（;；]\s*{re.escape(latin.group(0))}\b", re.I)
        holder = next((b for b in blocks if bracketed.search(b.text)), None)
        best = (0, holder.hit.source) if holder is not None else None
    return [i for i, b in enumerate(blocks) if best is not None and b.hit.source == best[1]]


def _followup_subject(question: str, about: str) -> str:
    """What a follow-up's searched query adds to the question: the subject the router put in
    (rewrite_followup: "红烧肉 要炖多久" for "要炖多久？"); "" for a question searched as asked."""
    asked = question.strip().strip("?？!！。.")
    if not about or asked not in about:
        return ""
    return about.replace(asked, " ").strip()


def _titled(blocks: Sequence[ContextBlock], subject: str) -> list[int]:
    """Positions of the blocks of the one document whose title or file name holds ``subject``;
    [] when none or several do."""
    key = subject.casefold()
    if len(key) < 2:
        return []
    sources = {
        b.hit.source
        for b in blocks
        if key in (b.hit.heading_path[0] if b.hit.heading_path else "").casefold()
        or key in PurePosixPath(b.hit.source).stem.casefold()
    }
    if len(sources) != 1:
        return []
    return [i for i, b in enumerate(blocks) if b.hit.source in sources]


def _shared_han_name(blocks: Sequence[ContextBlock], text: str, least: int = 4) -> tuple[int, str] | None:
    """The note holding the longest run of the text's Chinese characters (``least`` or more, no
    question word in it) that no other note holds."""
    runs = [r for r in _HAN.findall(text) if len(r) >= least]
    for size in range(max((len(r) for r in runs), default=0), least - 1, -1):
        for run in runs:
            for i in range(len(run) - size + 1):
                piece = run[i : i + size]
                if _ZH_QWORDS.search(piece):
                    continue
                holders = {b.hit.source for b in blocks if piece in b.text}
                if len(holders) == 1:
                    return size, holders.pop()
    return None


def _whole_note(blocks: Sequence[ContextBlock], ranks: Sequence[int]) -> bool:
    """Whether the blocks at ``ranks`` hold their whole note (so what it lacks, it lacks)."""
    return bool(ranks) and len(ranks) >= max(1, blocks[ranks[0]].hit.total_chunks)


def _is_note(block: ContextBlock) -> bool:
    """A note about one named subject (a species note: name lines or a Latin name), whose lines
    are its subject's facts; an article's are not."""
    from desktop_app.core.identify.names import hit_names

    return bool(block.hit.heading_path) and hit_names(block.hit).named


def _whose(title: str, text: str, lang: str) -> str:
    """A quoted line from another note than the subject's, saying whose note it is."""
    return f"({title}) {text}" if lang == "en" else f"（{title}）{text}"


def _fact_answer(
    q: Question,
    head: str,
    kept: list[ContextBlock],
    found: list[_Candidate],
    subject: list[int],
    max_sentences: int,
) -> Extract | None:
    """The answer to a question for one kind of fact about a named subject: its note's line of that
    kind (the clause asked for), the page's title for a name question, or "the notes about X do not
    say ..." when its whole note has no such line; None to answer as for any question."""
    kind, lang = q.kind, q.language
    own = [c for c in found if c.rank in subject]
    block = kept[subject[0]]
    title = note_title(block)
    n = block.n
    if kind == "name":
        support = next((c for c in own if gives_fact("latin", c.text)), own[0] if own else None)
        lines = [f"**{title}** [{n}]\n"] + ([f"- {support.text} [{n}]"] if support else [])
        return Extract(
            f"{head}\n\n" + "\n".join(lines), [n], title, [support.text] if support else [], 1.0, title
        )
    giving = [c for c in own if gives_fact(kind, c.text)]
    heading = block.hit.heading_path[0] if block.hit.heading_path else ""
    if not giving and kind == "latin" and _LATIN_NAME.search(heading):
        return Extract(f"{head}\n\n{heading.strip(' #')} [{n}]", [n], heading, [], 1.0, heading.strip(" #"))
    if not giving:
        # Only a note of one named subject (a species note: name lines, a Latin name) is a record whose
        # missing field says the fact is not known; a recipe without a "where" line still says where
        # it comes from in other words ("Origin: Burgundy"), which the general answer finds.
        if not _whole_note(kept, subject) or not _is_note(block):
            return None
        what = message(notes.FACT_WHAT[kind])
        text = notes.written(message(notes.NOT_SAID, subject=title, what=what), lang)
        return Extract(f"{head}\n\n{text} [{n}]", [n], text, [], 0.0, refused=True)
    best = giving[0]
    lead = value = fact_clause(kind, best.text)
    if lead != best.text:  # a field's value alone: say whose it is
        lead = f"{title}: {lead}" if lang == "en" else f"{title}：{lead}"
    chosen = [best]
    # Only the subject's own lines support it: another species' size answers nothing about this one.
    for cand in giving[1:]:
        if len(chosen) >= max_sentences:
            break
        if not any(_same_passage(set(c.keys), set(cand.keys)) for c in chosen):
            chosen.append(cand)
    cited: list[int] = []
    lines = []
    for i, cand in enumerate(chosen):
        m = kept[cand.rank].n
        text = lead if i == 0 else cand.text
        if cand.rank not in subject:
            text = _whose(note_title(kept[cand.rank]), text, lang)
        lines.append(f"{plain_line(text)} [{m}]\n" if i == 0 else f"- {plain_line(text)} [{m}]")
        if m not in cited:
            cited.append(m)
    return Extract(
        f"{head}\n\n" + "\n".join(lines), cited, lead, [c.text for c in chosen[1:]], best.coverage, value
    )


def subject_fact(question: str | Question, blocks: Sequence[ContextBlock]) -> Extract | None:
    """What the note of the question's ``subject`` alone says of the kind of fact asked (one of
    several candidate subjects: a photo left open): ``short`` the clause giving it (the page's
    title for a name question), else ``lead`` saying the note lacks it, with the block to cite;
    None for a question of no fact kind, or when that note is not among ``blocks`` or not there
    whole to show what it lacks."""
    q = as_question(question)
    if q.kind not in FACT_KINDS or not blocks or not q.subject:
        return None
    kept, _sentences, found, _kind, _units = _rank(q, blocks)
    subject = subject_blocks(kept, q.subject)
    fact = _fact_answer(q, "", kept, found, subject, 1) if subject else None
    if fact is not None and not fact.short:  # the note lacks it: say so without naming it again
        what = message(notes.FACT_WHAT[q.kind])
        fact.lead = notes.written(message(notes.NOT_SAID_OWN, what=what), q.language)
    return fact


def subject_note(blocks: Sequence[ContextBlock], question: str | Question, about: str = "") -> list[int]:
    """Positions of the blocks from the subject's note: the one the question or ``about`` (the query
    searched) names, else the one the question's ``subject`` names (set after routing: "how big is
    it?" searched in other words). The words first: a gallery label ("jako grey") tells two notes
    that share a title apart, the title alone does not."""
    q = as_question(question)
    named = subject_blocks(blocks, f"{about} {q.text}")
    return named or (subject_blocks(blocks, q.subject) if q.subject else [])


def named_subject(question: str | Question, blocks: Sequence[ContextBlock], about: str = "") -> str:
    """The title of the note among ``blocks`` that the question (or ``about``, the query searched)
    names, "" when it names none: what a follow-up question then refers to."""
    subject = subject_note(blocks, question, about)
    # A note without a title is named by its file only, which says less than the question's words.
    return note_title(blocks[subject[0]]) if subject and blocks[subject[0]].hit.heading_path else ""


def fact_answerable(question: str | Question, blocks: Sequence[ContextBlock], about: str = "") -> bool:
    """Whether the question asks for one kind of fact about a subject whose note is among
    ``blocks`` and that note either gives it or, being there whole, shows it lacks it: such a
    question is answered from the note (or "the notes do not say") and never refused for weak
    evidence (its words are the note's field labels, not the question's: 分布 / "Where ... live")."""
    q = as_question(question)
    kind = q.kind
    if kind not in FACT_KINDS or not blocks:
        return False
    subject = subject_note(blocks, q, about)
    if not subject:
        return False
    if kind == "name" or _whole_note(blocks, subject):
        return True
    return any(gives_fact(kind, s) for i in subject for s in split_sentences(blocks[i].text))


def extractive_answer(
    question: str | Question,
    blocks: Sequence[ContextBlock],
    note: Text | None = None,
    max_sentences: int = 3,
    max_blocks: int = 5,
    about: str = "",
    meaning: Meaning | None = None,
    translate: bool = True,
) -> Extract:
    """The answering sentence of the top blocks, then up to ``max_sentences - 1`` supporting
    ones, each cited; the note goes first, written in the question's language (default: "No
    language model is configured; ..."). ``about``: the query searched (a follow-up's names its
    subject). A question for one kind of fact about a note's subject (where it lives, its size, diet,
    colours, names) is answered from that note's line of that kind, or says the note lacks it;
    a line quoted from another note says whose it is."""
    q = as_question(question)
    question, lang = q.text, q.language
    if not blocks:
        nothing = message(notes.NO_MODEL_NOTHING_FOUND) if note is None else note
        return Extract(notes.written(nothing, lang), [])
    head = notes.written(message(notes.NO_MODEL_PASSAGES) if note is None else note, lang)
    kept, sentences, found, kind, units = _rank(q, blocks[:max_blocks], meaning, translate)
    if kind in FACT_KINDS:
        subject = subject_note(kept, q, about)
        if subject:
            answer = _fact_answer(q, head, kept, found, subject, max_sentences)
            if answer is not None:
                return answer
            # The note the question names answers it in its own words, not another note's line.
            found = [c for c in found if c.rank in subject] or found
    elif titled := _titled(kept, _followup_subject(question, about)):
        # A follow-up that leaves its subject out ("要炖多久？" after 红烧肉怎么做？) asks about the
        # document titled so, not a neighbour that says "多久" more often.
        found = [c for c in found if c.rank in titled] or found
    best = found[0]
    chosen = [best]
    for cand in found[1:]:
        if len(chosen) >= max_sentences:
            break
        if cand.score > 0 and not any(_same_passage(set(c.keys), set(cand.keys)) for c in chosen):
            chosen.append(cand)
    kind = _BASE_TYPE.get(kind, kind) if kind in FACT_KINDS else kind
    lead = _lead(question, kind, units, best.text, lang)
    if kind in ("person", "which") and best.pos > 0 and _PRONOUN.match(lead):
        # "She died in childbirth in 1772." names no one: the sentence before does.
        lead = (" " if lang == "en" else "").join((sentences[best.rank][best.pos - 1], lead))
    cited: list[int] = []
    lines: list[str] = []
    short = short_answer(question, kind, lead) if best.coverage >= _SHORT_COVERAGE else ""
    if short:
        # The answer itself first (a date, a number, a name), then the sentence that says it.
        lines.append(f"**{short}** [{kept[best.rank].n}]\n")
    for i, cand in enumerate(chosen):
        n = kept[cand.rank].n
        text = cand.text
        if i and kept[cand.rank].hit.source != kept[best.rank].hit.source and _is_note(kept[cand.rank]):
            text = _whose(note_title(kept[cand.rank]), text, lang)  # another species' note than the lead's
        lines.append(f"{plain_line(lead)} [{n}]\n" if i == 0 else f"- {plain_line(text)} [{n}]")
        if n not in cited:
            cited.append(n)
    return Extract(
        f"{head}\n\n" + "\n".join(lines), cited, lead, [c.text for c in chosen[1:]], best.coverage, short
    )
