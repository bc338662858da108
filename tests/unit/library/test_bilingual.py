"""A question's words in the other language (bilingual.py): CC-CEDICT's senses, kept where the
library holds them."""

from __future__ import annotations

from desktop_app.core.library.bilingual import (
    american,
    chinese_for,
    english_for,
    translated_terms,
    translations,
)
from desktop_app.core.library.text_analysis import stem


def test_an_english_phrase_is_translated_before_its_words():
    spans = chinese_for([stem("annual"), stem("leave")], lambda t: True)
    assert spans[0][:2] == (0, 2) and "年假" in spans[0][2]


def test_only_the_senses_the_library_holds_are_kept():
    # "deposit": an ore deposit (矿床) first in the dictionary; a lease says 押金.
    assert chinese_for([stem("deposit")], lambda t: t == "押金") == [(0, 1, ["押金"])]
    assert chinese_for([stem("deposit")], lambda t: False) == []


def test_a_longer_chinese_word_wins_over_a_single_character():
    # 茄 alone is in 番茄 (tomato) too: 茄子 is the eggplant.
    found = chinese_for([stem("eggplant")], lambda t: t in {"茄", "茄子"})
    assert found == [(0, 1, ["茄子"])]


def test_a_chinese_word_gets_its_english_glosses_as_index_stems():
    assert english_for("炖", lambda t: True)[:1] == [stem("stew")]
    assert "capit" not in english_for("北京", lambda t: True)  # a long gloss's other words are no sense


def test_british_spellings_are_read_as_the_dictionary_writes_them():
    assert american("kilometres") == "kilometers" and american("fertilising") == "fertilizing"
    assert american("colour") == "color" and american("hour") == "hour"
    assert chinese_for([stem("kilometres")], lambda t: t == "公里", [stem(american("kilometres"))]) == [
        (0, 1, ["公里"])
    ]
    # A word the dictionary has as written is not respelled: "braised" is no "braized".
    assert chinese_for([stem("braised")], lambda t: True, [stem(american("braised"))])


def test_grammar_words_are_not_translated():
    assert [w for w, _ in translations("北京的天气怎么样？", lambda t: True, chinese=False)] == ["北京", "天气"]
    assert "多久" not in [w for w, _ in translations("红烧肉要炖多久？", lambda t: True, chinese=False)]


def test_a_words_translations_share_its_weight():
    terms, weights = translated_terms("marriage leave", lambda t: t == "婚假")
    assert terms == ["婚假"] and weights == [1.0]
    terms, weights = translated_terms("deposit", lambda t: t in {"押金", "存放"})
    assert sorted(terms) == ["存放", "押金"] and weights == [0.5, 0.5]
