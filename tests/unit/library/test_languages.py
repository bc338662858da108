"""One language detector: library/languages.py, imported by everyone that needs it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import desktop_app
from desktop_app.core.ask import prompts, question
from desktop_app.core.library import languages
from desktop_app.core.library.languages import CJK, CJK_RE, has_cjk, question_lang, text_lang

_DETECTORS = re.compile(r"^def (question_lang|lang_of|has_cjk|text_lang)\(", re.M)


def test_the_detectors_are_defined_once_in_the_languages_module():
    core = Path(desktop_app.__file__).parent / "core"
    defined = {
        (path.relative_to(core).as_posix(), m.group(1))
        for path in core.rglob("*.py")
        for m in _DETECTORS.finditer(path.read_text(encoding="utf-8"))
    }
    assert defined == {
        ("library/languages.py", "question_lang"),
        ("library/languages.py", "has_cjk"),
        ("library/languages.py", "text_lang"),
    }
    assert question.question_lang is languages.question_lang
    assert not hasattr(prompts, "lang_of") and not hasattr(prompts, "has_cjk") and not hasattr(prompts, "_CJK")


@pytest.mark.parametrize(
    ("text", "found"),
    [("kea", False), ("12 -- !", False), ("五羊新城", True), ("What is 五羊新城?", True), ("\uf900", True)],
)
def test_has_cjk_finds_any_han_character(text, found):
    assert has_cjk(text) is found
    assert bool(CJK_RE.search(text)) is found


def test_kana_and_hangul_are_no_han_but_text_lang_tells_them_apart():
    assert not has_cjk("ユキヒョウ") and not has_cjk("눈표범")
    assert text_lang("ユキヒョウは山に住んでいます") == "ja" and text_lang("눈표범은 산에 산다") == "ko"
    assert re.fullmatch(f"[{CJK}]+", "雪豹")


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("", "en"),  # no letters: English, the default
        ("kea", "en"),
        ("雪豹", "zh"),
        ("What is 雪豹的学名", "zh"),  # both grammars: the script of most of it
        ("What is the snow leopard 的", "en"),
        ("雪豹 snow", "zh"),  # no grammar either way, more characters than words
    ],
)
def test_question_lang_by_grammar_then_by_script(text, lang):
    assert question_lang(text) == lang
