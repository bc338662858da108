"""The cited sentence: which sentence of a passage an answer's claim rests on."""

from __future__ import annotations

from desktop_app.core.ask.citations import cited_sentence, claim_for, sentence_spans

PASSAGE = (
    "Blue-and-yellow macaw\n\n"
    "Colours: blue back and wings, golden-yellow underparts, a green forehead. "
    "It lives in the swamps and forests of South America. It eats nuts and fruit."
)


def test_the_claim_is_the_answer_sentences_that_cite_the_number():
    answer = "Its underparts are golden-yellow [1]. It eats nuts [2]. The forehead is green [1, 2]."
    assert claim_for(answer, 1) == "Its underparts are golden-yellow . The forehead is green ."
    assert claim_for(answer, 3) == ""


def test_a_marker_after_the_full_stop_cites_the_sentence_before_it():
    answer = "Passages:\n\nThe kakapo feeds on rimu fruit. [1]\n\n- Weather filler. [2]"
    assert claim_for(answer, 1) == "The kakapo feeds on rimu fruit."
    assert claim_for(answer, 2) == "Weather filler."


def test_the_cited_sentence_is_the_one_the_claim_repeats():
    start, end = cited_sentence(PASSAGE, "It lives in the swamps and forests of South America [1].")
    assert PASSAGE[start:end] == "It lives in the swamps and forests of South America."


def test_a_paraphrase_finds_its_sentence_and_an_unrelated_claim_none():
    start, end = cited_sentence(PASSAGE, "The macaw has golden-yellow underparts and blue wings.")
    assert PASSAGE[start:end].startswith("Colours: blue back")
    assert cited_sentence(PASSAGE, "Kakapo are flightless nocturnal parrots.") is None
    assert cited_sentence(PASSAGE, "") is None


def test_chinese_sentences_end_at_the_full_stop():
    text = "金刚鹦鹉生活在南美洲。它吃坚果和水果。"
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans] == ["金刚鹦鹉生活在南美洲。", "它吃坚果和水果。"]
    start, end = cited_sentence(text, "金刚鹦鹉吃坚果和水果")
    assert text[start:end] == "它吃坚果和水果。"


def test_a_pdf_page_s_hard_wrapped_lines_are_one_sentence():
    page = "The balls are made of\nsuch a size that seven of them can\nlie in a bed. Grape shot."
    start, end = cited_sentence(
        page, "The balls are made of such a size that seven can lie in a bed", wrapped=True
    )
    assert page[start:end] == "The balls are made of\nsuch a size that seven of them can\nlie in a bed."
