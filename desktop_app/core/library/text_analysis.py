"""One text analyzer for every match of words: the keyword index (bm25.py), the assistant's evidence
and conversation (ask/evidence.py, ask/conversation.py) and its extractive answers (ask/extractive.py).
One Snowball English stemmer (PyStemmer), one Chinese segmenter (jieba, loaded with the first Chinese
text), one script split. It gives two views of a text, each with its own stop list:

- index terms (``tokenize``, ``query_terms``, ``plain_terms``, ``surface_words``; ``Tokenizer``): English
  (and any other alphabetic script) lowercased, stop words dropped (``STOPWORDS_EN``), stemmed; Chinese
  runs, Traditional characters folded to Simplified, give jieba words plus overlapping character
  bigrams (plain whole-document BM25 on CMRC 2018 dev, nDCG@10: jieba+bigrams 0.988, chars+bigrams
  0.986, bigrams 0.984, jieba 0.984; `kdesk bench keyword`); mixed text is split into script runs
  first, so "BM25算法的原理" gives ["bm25", "算法", "的", "原理", "算法", "法的", "的原", "原理"].
  Latin pieces of Chinese text also give name terms, and a question's terms are weighted.
- match keys (``match_keys``, ``terms``), which an extractive answer matches the question's words
  in sentences by: English words without the question's own words as well (``ANSWER_STOPWORDS_EN``:
  "what", "tell", "name"...), irregular pasts led to their verb, stemmed; Chinese characters and
  character bigrams (a sentence's words split by jieba may differ from the question's).
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from types import ModuleType

from desktop_app.core.library.languages import CJK, CJK_RE


@lru_cache(maxsize=1)
def jieba_module() -> ModuleType:
    """jieba, loaded once on the first Chinese text (its dictionary takes ~1 s)."""
    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


# Bump when tokenization changes: a persisted index with another version is rebuilt.
TOKENIZER_VERSION = "en-snowball-sw2+zh-t2s-jieba-bigram-1+names-2+doc-2+lang-1"

_TOKEN_RE = re.compile(rf"[{CJK}]+|[^\W_{CJK}]+")

# English stopwords (the common NLTK list, minus negations that carry meaning in claims).
STOPWORDS_EN = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom why will
    with would you your yours yourself yourselves""".split()
)


# A Latin-script piece of CJK text: what lies between CJK characters and punctuation.
_PIECE_RE = re.compile(rf"[{CJK}\n\t，。；：“”‘’（）【】《》、？！,;:()\[\]<>?!#*|`=~\"]+")
_LATIN_PIECE_RE = re.compile(r"[a-z0-9][a-z0-9 .\-/+']*", re.ASCII)
_WORD_RE = re.compile(r"[a-z0-9]+(?:[-./][a-z0-9]+)*", re.ASCII)
NAME_MAX_WORDS = 4


def _simplified_table() -> dict[int, str]:
    """str.translate table from Traditional to Simplified characters (t2s.txt, from OpenCC)."""
    lines = (Path(__file__).with_name("t2s.txt")).read_text(encoding="utf-8").splitlines()
    return str.maketrans(lines[1], lines[2])


class Tokenizer:
    """Text -> BM25 terms; ``__call__`` for what is indexed, ``query`` for a question (with weights).

    Names: a Latin-script piece of Chinese text (a binomial, an English name, a model code) is a
    unit, so besides its words it gives one name term: "学名为 Panthera uncia，英文名 Snow Leopard"
    adds "_panthera_uncia" and "_snow_leopard"; "KD-3300 Pro" adds "_kd-3300_pro", "Lion" "_lion".
    An exact name in a question then matches the one page that holds it, and the page of
    "KD-3300 Pro" (or of "Lion's Mane") no longer counts as naming "KD-3300" (or "Lion"). English
    text has no such units (word pairs over SciFact: nDCG@10 0.693 -> 0.674), so it gives no name
    terms; an English question offers its words and pairs of words as names, which can only match
    names in Chinese text. "_" occurs in no other term.

    Query weights: a Chinese run's words and bigrams are two views of the same text, so together
    they weigh what its words alone weigh; otherwise a mixed question's 16 Chinese terms drown
    its two Latin ones (docs/retrieval-benchmarks.md).
    """

    def __init__(self) -> None:
        import Stemmer  # PyStemmer

        self._stemmer = Stemmer.Stemmer("english")
        self._cache: dict[str, str] = {}
        self._t2s = _simplified_table()

    def _stem(self, word: str) -> str:
        stem = self._cache.get(word)
        if stem is None:
            stem = self._stemmer.stemWord(word)
            if len(self._cache) < 500_000:
                self._cache[word] = stem
        return stem

    def _segment(self, run: str) -> list[str]:
        return jieba_module().lcut(run, HMM=True)

    def __call__(self, text: str) -> list[str]:
        return self._analyze(text, query=False)[0]

    def plain(self, text: str) -> list[str]:
        """The terms in text order, without name terms (which follow them in ``__call__``)."""
        return self._analyze(text, query=False, names=False)[0]

    def query(self, text: str) -> tuple[list[str], list[float]]:
        """A question's terms and their weights (see the class docstring)."""
        return self._analyze(text, query=True)

    def _analyze(self, text: str, query: bool, names: bool = True) -> tuple[list[str], list[float]]:
        # Traditional characters folded to Simplified: jieba's dictionary is Simplified, and a
        # question in one script then finds a page in the other.
        low = text.lower().translate(self._t2s)
        tokens: list[str] = []
        weights: list[float] = []
        for match in _TOKEN_RE.finditer(low):
            run = match.group()
            if CJK_RE.match(run):
                if len(run) == 1:
                    tokens.append(run)
                    weights.append(1.0)
                    continue
                # Words give exact-term matches, bigrams recall where jieba's split differs
                # between the question and the passage.
                words = self._segment(run)
                tokens.extend(words)
                tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
                n = len(words) + len(run) - 1  # its words and bigrams share its words' weight
                weights.extend([len(words) / n] * n)
            elif run not in STOPWORDS_EN:
                tokens.append(self._stem(run))
                weights.append(1.0)
        if names:
            found = self._names(low) if CJK_RE.search(low) else self._query_names(low) if query else []
            tokens.extend(found)
            weights.extend([1.0] * len(found))
        return tokens, weights

    def _name(self, words: list[str]) -> str:
        # "_" never occurs in other terms: "_lion" is the page that names a Lion, not Lion's Mane.
        return "".join("_" + self._stem(w) for w in words)

    def _names(self, low: str) -> list[str]:
        """Name terms of the Latin pieces of CJK text."""
        out: list[str] = []
        for piece in _PIECE_RE.split(low):
            piece = piece.strip(" .-/'")
            if piece and _LATIN_PIECE_RE.fullmatch(piece):
                words = _WORD_RE.findall(piece)
                if 1 <= len(words) <= NAME_MAX_WORDS:
                    out.append(self._name(words))
        return out

    def _query_names(self, low: str) -> list[str]:
        """What an English question may name as a unit: each word, and each pair of words."""
        words = [w for w in _WORD_RE.findall(low) if w not in STOPWORDS_EN]
        return [self._name([w]) for w in words] + [self._name([a, b]) for a, b in zip(words, words[1:])]


_tokenizer: Tokenizer | None = None
_tokenizer_lock = threading.Lock()


def _shared() -> Tokenizer:
    """The shared tokenizer (PyStemmer objects are cheap, but the stem cache is worth sharing)."""
    global _tokenizer
    if _tokenizer is None:
        with _tokenizer_lock:
            if _tokenizer is None:
                _tokenizer = Tokenizer()
    return _tokenizer


def tokenize(text: str) -> list[str]:
    """The terms a text is indexed under."""
    return _shared()(text)


def plain_terms(text: str) -> list[str]:
    """A text's index terms in text order, without the name terms (``Tokenizer.plain``)."""
    return _shared().plain(text)


def query_terms(text: str) -> tuple[list[str], list[float]]:
    """A question's terms and their weights."""
    return _shared().query(text)


# A quantity's word and the symbols a page writes it with ("2200 W" answers "how many watts"),
# as index terms (stemmed words; "°C" is indexed as "c").
UNIT_SYMBOLS = {
    "watt": ("w", "kw"), "kilowatt": ("kw",), "degre": ("c", "f"), "celsius": ("c",), "fahrenheit": ("f",),
    "kilometr": ("km",), "kilomet": ("km",), "metr": ("m",), "meter": ("m",), "centimetr": ("cm",),
    "centimet": ("cm",), "millimetr": ("mm",), "millimet": ("mm",), "mile": ("mi", "mph"), "inch": ("in",),
    "litr": ("l", "ml"), "liter": ("l", "ml"), "millilitr": ("ml",), "millilit": ("ml",), "gram": ("g", "kg"),
    "kilogram": ("kg",), "kilo": ("kg",), "pound": ("lb", "lbs"), "percent": ("%",), "percentag": ("%",),
    "hour": ("h", "hr", "hrs"), "minut": ("min", "mins"), "second": ("s", "sec"), "volt": ("v",), "amp": ("a",),
}  # fmt: skip


def stem(word: str) -> str:
    """The index's stem of a lowercase English word."""
    return _shared()._stem(word)


def query_runs(text: str) -> list[tuple[str, bool]]:
    """A question's script runs as the index reads them (lowercase, Traditional folded to
    Simplified), each with whether it is Chinese."""
    low = text.lower().translate(_shared()._t2s)
    return [(m.group(), bool(CJK_RE.match(m.group()))) for m in _TOKEN_RE.finditer(low)]


def segment(run: str) -> list[str]:
    """jieba's words of a Chinese run, as the index cuts it."""
    return _shared()._segment(run)


def idf(docs: int, df: int) -> float:
    """How much a term says about which document is meant: ln((N + 1) / (df + 0.5)), highest for a
    term no document holds."""
    return math.log((docs + 1) / (df + 0.5))


def surface_words(text: str) -> list[tuple[str, str]]:
    """(word as written, its BM25 term) in text order: Latin words (stop words left out) and the
    jieba words of Chinese runs, so a caller can weigh words by their terms and quote them."""
    tok = _shared()
    out: list[tuple[str, str]] = []
    for match in _TOKEN_RE.finditer(text):
        run = match.group()
        if CJK_RE.match(run):
            out.extend((w, w.translate(tok._t2s)) for w in tok._segment(run))
        elif run.lower() not in STOPWORDS_EN:
            out.append((run, tok._stem(run.lower())))
    return out


# -- match keys of extractive answers ----------------------------------------------------------

HAN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")
ANSWER_TOKEN_RE = re.compile(r"[A-Za-z0-9]+(?:'[a-z]+)?|[\u3400-\u4dbf\u4e00-\u9fff]+")
ANSWER_STOPWORDS_EN = frozenset(
    "a an the of to in on for and or is are was were be been do does did what which who whom whose "
    "when where why how it its this that these those with from by as at about into can could should "
    "would will i you he she they we me my your their our there here than then so if not no yes tell "
    "please explain describe give list his her him them has have had many much name called".split()
)
ZH_QUESTION_WORDS_RE = re.compile(
    r"哪一年|哪年|何时|什么时候|什么|多少|几[个位次年种名岁]?|哪里|哪儿|在哪|哪个|哪位|哪些|哪|为什么|为何|"
    r"怎么|怎样|如何|是谁|谁|何人|何地|吗|呢|请问"
)
ZH_STOP_CHARS = frozenset("的了是在有被和与及或把将对为于以也都而其这那之中上下会能可曾又还就让呀")


# Irregular past forms the stemmer leaves apart from their verb ("What did Ford say" / "said").
IRREGULAR_PAST = {
    past: verb
    for pair in (
        "say:said write:wrote,written begin:began,begun win:won lead:led become:became take:took,taken "
        "make:made give:gave,given find:found hold:held build:built fight:fought teach:taught "
        "think:thought bring:brought sell:sold tell:told leave:left meet:met run:ran grow:grew,grown "
        "know:knew,known choose:chose,chosen speak:spoke,spoken eat:ate,eaten fall:fell,fallen "
        "fly:flew,flown draw:drew,drawn sing:sang,sung rise:rose,risen strike:struck send:sent "
        "spend:spent lose:lost keep:kept feel:felt hear:heard stand:stood pay:paid go:went,gone "
        "come:came see:saw,seen get:got,gotten bear:born,bore buy:bought catch:caught seek:sought "
        "drive:drove,driven ride:rode,ridden shoot:shot sit:sat swim:swam throw:threw,thrown wear:wore,worn"
    ).split()
    for verb, pasts in [pair.split(":")]
    for past in pasts.split(",")
}


@lru_cache(maxsize=1)
def answer_stemmer() -> Callable[[str], str]:
    """The index's stemmer ("died" must meet "die"), irregular pasts first led to their verb."""
    stem = _shared()._stem
    return lru_cache(maxsize=50_000)(lambda word: stem(IRREGULAR_PAST.get(word, word)))


def match_keys(text: str) -> list[str]:
    """Match keys in text order: stemmed English words (no question stop words), Chinese characters
    and character bigrams."""
    stem = answer_stemmer()
    out: list[str] = []
    for m in ANSWER_TOKEN_RE.finditer(text):
        tok = m.group(0)
        if HAN_RE.match(tok):
            out.extend(tok)
            out.extend(tok[i : i + 2] for i in range(len(tok) - 1))
        elif (low := tok.lower()) not in ANSWER_STOPWORDS_EN:
            out.append(stem(low))
    return out


def terms(text: str) -> set[str]:
    """The match keys of ``text``: stemmed English words, Chinese characters and bigrams."""
    return set(match_keys(text))
