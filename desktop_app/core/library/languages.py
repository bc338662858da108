"""Which language a text is in (by script), and which texts an embedder can read.

Retrieval lets an embedder vote only on chunks in a language it knows: an English-only encoder's
vectors for Chinese text are noise, and fused with BM25 they pull the right page down whatever
language the question is in (an English question over Chinese pages lost 0.023 nDCG@10 that way).
Each chunk's language is found once, at indexing, and stored with it.

Languages are told apart by script only (no model): ``zh`` (Han characters), ``ja`` (kana),
``ko`` (Hangul), ``latin`` (Latin letters: English and the other Western languages alike) and
``other`` (Cyrillic, Greek, Arabic ...). A text is CJK when at least ``CJK_MIN_SHARE`` of its
letters are: a Chinese page that names species in Latin and English is still Chinese.
"""

from __future__ import annotations

import re

from desktop_app.core.models.embeddings.base import multilingual_family

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_KANA = "\u3040-\u30ff"
_HANGUL = "\uac00-\ud7af"
_CJK = re.compile(f"[{_HAN}{_KANA}{_HANGUL}]")
_KANA_RE = re.compile(f"[{_KANA}]")
_HANGUL_RE = re.compile(f"[{_HANGUL}]")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")

# A CJK character carries about a word; Latin names inside Chinese text are many letters each.
CJK_MIN_SHARE = 0.2
LANGS = ("zh", "ja", "ko", "latin", "other")

def text_lang(text: str) -> str:
    """The language of a text by its script (module docstring); "" when it has no letters."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return ""
    cjk = sum(1 for c in letters if _CJK.match(c))
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
