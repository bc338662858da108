"""Which language a text is in (by script), which a question asks in, and which texts an embedder
can read.

Retrieval lets an embedder vote only on chunks in a language it knows: an English-only encoder's
vectors for Chinese text are noise, and fused with BM25 they pull the right page down whatever
language the question is in (an English question over Chinese pages lost 0.023 nDCG@10 that way).
Each chunk's language is found once, at indexing, and stored with it.

Languages are told apart by script only (no model): ``zh`` (Han characters), ``ja`` (kana),
``ko`` (Hangul), ``latin`` (Latin letters: English and the other Western languages alike) and
``other`` (Cyrillic, Greek, Arabic ...). A text is CJK when at least ``CJK_MIN_SHARE`` of its
letters are: a Chinese page that names species in Latin and English is still Chinese.

A question's language is another matter: ``question_lang`` says which language ("en" or "zh") to
answer in, by its grammar words, and ``Question.read`` (core/ask) calls it once per question.
This module is the one place either is worked out, and ``CJK`` / ``CJK_RE`` the one range of Han
characters the other modules test characters against.
"""

from __future__ import annotations

import re

from desktop_app.core.models.embeddings.base import multilingual_family

# Han characters (with Extension A and the compatibility ideographs): the "CJK" every module means
# by "is this Chinese"; kana and Hangul only matter to text_lang, to tell Japanese and Korean apart.
CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_RE = re.compile(f"[{CJK}]")
_KANA = "\u3040-\u30ff"
_HANGUL = "\uac00-\ud7af"
_CJK_SCRIPTS = re.compile(f"[{CJK}{_KANA}{_HANGUL}]")
_KANA_RE = re.compile(f"[{_KANA}]")
_HANGUL_RE = re.compile(f"[{_HANGUL}]")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")

# A CJK character carries about a word; Latin names inside Chinese text are many letters each.
CJK_MIN_SHARE = 0.2
LANGS = ("zh", "ja", "ko", "latin", "other")

# The grammar words of a question: a sentence built of one language's naming things in the other
# ("What is 五羊新城?", "Abraham Lincoln 是哪一年出生的？") is in the language of its grammar.
_EN_GRAMMAR = re.compile(
    r"\b(?:what|who|whom|whose|when|where|why|how|which|is|are|was|were|do|does|did|the|a|an|of|in|on|"
    r"at|to|for|with|from|by|and|or|not|can|could|would|should|will|has|have|had|it|its|this|that)\b",
    re.I,
)
_ZH_GRAMMAR = re.compile(r"[的是吗呢哪谁怎请了吧么]|什么|多少|为什么|如何|几[个年次位种]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")


def has_cjk(text: str) -> bool:
    """Whether the text holds any Han character."""
    return bool(CJK_RE.search(text))


def question_lang(text: str) -> str:
    """'zh' or 'en', the language to answer in: the language of the text's grammar words when only
    one language has any, else the script of most of it (Chinese characters against Latin words)."""
    cjk = len(CJK_RE.findall(text))
    latin = len(_LATIN_WORD.findall(text))
    if not cjk or not latin:
        return "zh" if cjk else "en"
    en, zh = bool(_EN_GRAMMAR.search(text)), bool(_ZH_GRAMMAR.search(text))
    if en != zh:
        return "en" if en else "zh"
    return "zh" if cjk >= latin else "en"


def text_lang(text: str) -> str:
    """The language of a text by its script (module docstring); "" when it has no letters."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return ""
    cjk = sum(1 for c in letters if _CJK_SCRIPTS.match(c))
    if cjk >= CJK_MIN_SHARE * len(letters):
        kana = sum(1 for c in letters if _KANA_RE.match(c))
        hangul = sum(1 for c in letters if _HANGUL_RE.match(c))
        if hangul > kana and hangul >= 0.3 * cjk:
            return "ko"
        return "ja" if kana >= 0.1 * cjk else "zh"
    latin = sum(1 for c in letters if _LATIN.match(c))
    return "latin" if latin >= 0.5 * len(letters) else "other"


def is_multilingual(embedder) -> bool:
    """The embedder's own ``multilingual`` flag, else its model family's; an unknown family
    is taken to read every language (it then votes as before languages were stored)."""
    flag = getattr(embedder, "multilingual", None)
    if flag is None:
        flag = multilingual_family(str(getattr(embedder, "name", "")))
    return True if flag is None else bool(flag)


def reads(multilingual: bool, lang: str) -> bool:
    """Whether an encoder's vectors for text in ``lang`` mean anything ("" = unknown: yes);
    ``multilingual`` is ``is_multilingual(encoder)``, found once per encoder."""
    return multilingual or lang in ("", "latin")
