"""One text analyzer (text_analysis.py) for the keyword index, the evidence and extractive answers."""

from __future__ import annotations

from desktop_app.core.ask import evidence, extractive
from desktop_app.core.library import bm25, text_analysis


def test_the_index_the_evidence_and_the_answers_use_one_analyzer():
    assert bm25.tokenize is evidence.tokenize is text_analysis.tokenize
    assert extractive.terms is text_analysis.terms
    # One stemmer: the index term and the answer's match key of a word are the same ("died" meets
    # "die"); an irregular past meets its verb in answers.
    assert text_analysis.tokenize("died") == text_analysis.match_keys("died") == ["die"]
    assert text_analysis.match_keys("wrote") == text_analysis.tokenize("write") == ["write"]


def test_each_view_keeps_its_own_stop_words():
    # A question's own words ("what", "name") are stop words for matching answers, not for the index.
    assert text_analysis.tokenize("what is the name") == ["name"]
    assert text_analysis.match_keys("what is the name") == []
    # Chinese: the index takes jieba's words and bigrams, an answer characters and bigrams.
    assert text_analysis.plain_terms("雪豹") == ["雪豹", "雪豹"]
    assert text_analysis.match_keys("雪豹") == ["雪", "豹", "雪豹"]
