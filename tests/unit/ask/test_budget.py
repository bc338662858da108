"""Fitting numbered context blocks into the model window."""

from __future__ import annotations

from desktop_app.core.ask.budget import Budget, estimate_tokens, fit_blocks, render_blocks
from desktop_app.core.library.documents import Hit


def hit(i: int, text: str, page: int | None = None) -> Hit:
    return Hit(f"d{i}-chunk-0", f"d{i}", text, f"doc{i}.pdf", page, 0, 1, 1.0 - i / 10)


def test_estimate_counts_chinese_characters_as_tokens_and_latin_as_chars_over_4():
    assert estimate_tokens("a" * 400) == 100
    assert estimate_tokens("鹦鹉" * 100) == 200


def test_blocks_are_numbered_with_source_and_page():
    blocks = fit_blocks([hit(1, "Parrots eat nuts.", page=4), hit(2, "Macaws fly.")], 1000)
    assert [b.n for b in blocks] == [1, 2]
    assert render_blocks(blocks) == "[1] doc1.pdf, p. 4\nParrots eat nuts.\n\n[2] doc2.pdf\nMacaws fly."


def test_blocks_beyond_the_budget_are_dropped_and_the_boundary_one_shortened():
    text = "This is a sentence about parrots. " * 40  # ~340 tokens
    blocks = fit_blocks([hit(1, text), hit(2, text), hit(3, text)], 500)
    assert [b.n for b in blocks] == [1, 2]
    assert not blocks[0].truncated and blocks[1].truncated and blocks[1].text.endswith("…")
    assert sum(estimate_tokens(b.render()) for b in blocks) <= 500


def test_a_sliver_of_room_adds_no_useless_fragment():
    text = "word " * 400
    assert len(fit_blocks([hit(1, text), hit(2, text)], 520)) == 1


def test_the_models_tokenizer_is_used_when_it_answers():
    calls: list[str] = []

    def counter(text: str) -> int:
        calls.append(text)
        return len(text.split())

    budget = Budget(context_window=100, answer_tokens=40, counter=counter)
    assert budget.available(["one two three"], overhead_per_message=0) == 57
    blocks = fit_blocks([hit(1, "a b c d e"), hit(2, "f g h")], 20, budget)
    assert [b.n for b in blocks] == [1, 2] and calls


def test_a_tokenizer_that_goes_away_falls_back_to_the_estimate():
    budget = Budget(context_window=1000, answer_tokens=100, counter=lambda text: None)
    assert budget.count("a" * 40) == 10
