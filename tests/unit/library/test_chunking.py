"""Chunking: fixed and semantic strategies, offsets, ids, overlap, sections never crossed."""

from __future__ import annotations

import random
import re
import time

import pytest

from desktop_app.core.library.chunking import chunk_sections, make_doc_id
from desktop_app.core.library.documents import Chunk, Section

ENGLISH = (
    "Parrots are clever birds. They live in warm places! Do they talk? Some of them do.\n\n"
    "The macaw is large and colourful. It eats nuts and fruit. Its beak cracks hard shells.\n\n"
    + " ".join(f"Sentence number {i} describes another detail of the cockatoo." for i in range(40))
    + "\n\nA short closing paragraph."
)
CHINESE = (
    "鹦鹉是聪明的鸟类。它们生活在温暖的地方！它们会说话吗？有些会；有些不会……\n\n"
    + "".join(f"第{i}句描述了金刚鹦鹉的一个特征。" for i in range(60))
    + "\n\n结束。"
)


def _random_text(rng: random.Random) -> str:
    words = ["parrot", "macaw", "seed", "鹦鹉", "羽毛", "a", "the", "verylongwordwithoutanybreaks" * 3]
    seps = [" ", " ", " ", ". ", "! ", "? ", "。", "！", "\n", "\n\n", "\n \n", ", "]
    return "".join(rng.choice(words) + rng.choice(seps) for _ in range(rng.randint(0, 400)))


def _sections() -> list[Section]:
    return [
        Section(text=ENGLISH, page=1, heading_path=["Guide"]),
        Section(text=CHINESE, page=2, heading_path=["指南", "鹦鹉"]),
        Section(text="Tiny.", page=3),
    ]


def _check_invariants(sections: list[Section], chunks: list[Chunk], size: int) -> None:
    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))
    for c in chunks:
        section = sections[c.section_index]
        assert c.text == section.text[c.char_start : c.char_end]
        assert c.text and c.text == c.text.strip()
        assert len(c.text) <= size
        assert c.total_chunks == len(chunks)
        assert c.id == f"{c.doc_id}-chunk-{c.chunk_index}"
        assert c.page == section.page
        assert c.heading_path == section.heading_path
    # Every visible character of every section lands in some chunk of that section.
    for index, section in enumerate(sections):
        covered = [False] * len(section.text)
        for c in chunks:
            if c.section_index == index:
                covered[c.char_start : c.char_end] = [True] * (c.char_end - c.char_start)
        missing = [ch for ch, ok in zip(section.text, covered) if not ok and not ch.isspace()]
        assert not missing, f"section {index} lost {''.join(missing)[:40]!r}"


@pytest.mark.parametrize("strategy", ["semantic", "fixed"])
@pytest.mark.parametrize(("size", "overlap"), [(1000, 150), (120, 30), (40, 0), (7, 3)])
def test_chunks_are_exact_slices_of_their_section(strategy: str, size: int, overlap: int) -> None:
    sections = _sections()
    chunks = chunk_sections(sections, "doc-1", "guide.md", strategy=strategy, size=size, overlap=overlap)
    _check_invariants(sections, chunks, size)
    assert {c.source for c in chunks} == {"guide.md"}


@pytest.mark.parametrize("strategy", ["semantic", "fixed"])
def test_random_texts_keep_every_invariant(strategy: str) -> None:
    for seed in range(40):
        rng = random.Random(seed)
        sections = [Section(text=_random_text(rng), page=i + 1) for i in range(3)]
        size = rng.choice([10, 50, 200, 1000])
        overlap = rng.choice([0, 5, 40, 150])
        chunks = chunk_sections(sections, "d", "r.txt", strategy=strategy, size=size, overlap=overlap)
        _check_invariants(sections, chunks, size)


@pytest.mark.parametrize("strategy", ["semantic", "fixed"])
def test_chunks_never_cross_a_section(strategy: str) -> None:
    sections = [Section(text="Alpha beta gamma.", page=1), Section(text="Delta epsilon.", page=2)]
    chunks = chunk_sections(sections, "d", "s.pdf", strategy=strategy, size=1000)
    assert [(c.text, c.page, c.section_index) for c in chunks] == [
        ("Alpha beta gamma.", 1, 0),
        ("Delta epsilon.", 2, 1),
    ]


def test_semantic_merges_short_paragraphs_up_to_the_size() -> None:
    text = "First paragraph.\n\nSecond paragraph.\n\nThird paragraph."
    chunks = chunk_sections([Section(text=text)], "d", "p.md", size=1000)
    assert [c.text for c in chunks] == [text]
    chunks = chunk_sections([Section(text=text)], "d", "p.md", size=40, overlap=0)
    assert [c.text for c in chunks] == ["First paragraph.\n\nSecond paragraph.", "Third paragraph."]


def test_semantic_splits_long_paragraphs_at_sentence_ends() -> None:
    chunks = chunk_sections([Section(text=ENGLISH)], "d", "e.md", size=200, overlap=0)
    assert len(chunks) > 3
    for c in chunks:
        assert re.search(r"[.!?]$", c.text), c.text


def test_semantic_splits_chinese_at_chinese_punctuation() -> None:
    chunks = chunk_sections([Section(text=CHINESE)], "d", "c.md", size=60, overlap=0)
    assert len(chunks) > 5
    for c in chunks:
        assert c.text[-1] in "。！？；…", c.text


def test_semantic_cuts_a_sentence_longer_than_the_size() -> None:
    text = "x" * 250 + ". Short one."
    chunks = chunk_sections([Section(text=text)], "d", "x.txt", size=100, overlap=0)
    assert [c.text for c in chunks] == ["x" * 100, "x" * 100, "x" * 50 + ". Short one."]


def test_semantic_overlap_repeats_trailing_sentences_of_the_previous_chunk() -> None:
    sentences = [f"Sentence {i} is short." for i in range(30)]
    text = " ".join(sentences)
    chunks = chunk_sections([Section(text=text)], "d", "o.txt", size=100, overlap=45)
    assert len(chunks) > 3
    for prev, cur in zip(chunks, chunks[1:]):
        assert cur.char_start < prev.char_end  # overlapping
        shared = text[cur.char_start : prev.char_end]
        assert len(shared) <= 45
        assert shared.strip().startswith("Sentence ") and shared.strip().endswith(".")
    no_overlap = chunk_sections([Section(text=text)], "d", "o.txt", size=100, overlap=0)
    for prev, cur in zip(no_overlap, no_overlap[1:]):
        assert cur.char_start >= prev.char_end


def test_fixed_windows_overlap_and_cut_at_whitespace() -> None:
    text = " ".join(f"word{i:03d}" for i in range(300))
    chunks = chunk_sections([Section(text=text)], "d", "f.txt", strategy="fixed", size=100, overlap=20)
    assert len(chunks) > 20
    for prev, cur in zip(chunks, chunks[1:]):
        assert 0 < prev.char_end - cur.char_start <= 20
    for c in chunks:
        assert re.fullmatch(r"word\d{3}( word\d{3})*", c.text), c.text  # no word cut in half


def test_fixed_cuts_hard_when_there_is_no_whitespace() -> None:
    text = "鹦" * 250
    chunks = chunk_sections([Section(text=text)], "d", "z.txt", strategy="fixed", size=100, overlap=10)
    assert [len(c.text) for c in chunks] == [100, 100, 70]


def test_chunking_is_deterministic() -> None:
    one = chunk_sections(_sections(), "d", "g.md", size=90, overlap=30)
    two = chunk_sections(_sections(), "d", "g.md", size=90, overlap=30)
    assert one == two


def test_blank_sections_give_no_chunks_and_numbering_stays_dense() -> None:
    sections = [Section(text="  \n\n "), Section(text="Only text.", page=5), Section(text="")]
    chunks = chunk_sections(sections, "d", "b.txt", scope="alice")
    assert [(c.id, c.chunk_index, c.total_chunks, c.section_index, c.page, c.scope) for c in chunks] == [
        ("d-chunk-0", 0, 1, 1, 5, "alice")
    ]
    assert chunk_sections([], "d", "b.txt") == []


def test_unknown_strategy_and_bad_size_are_rejected() -> None:
    with pytest.raises(ValueError, match="strategy"):
        chunk_sections(_sections(), "d", "g.md", strategy="magic")
    with pytest.raises(ValueError, match="size"):
        chunk_sections(_sections(), "d", "g.md", size=0)


@pytest.mark.parametrize("strategy", ["semantic", "fixed"])
def test_large_sections_chunk_in_linear_time(strategy: str) -> None:
    text = ("A parrot sat on the branch and talked. " * 30 + "\n\n") * 4000  # ~4.7 MB
    started = time.perf_counter()
    chunks = chunk_sections([Section(text=text)], "d", "big.txt", strategy=strategy)
    assert time.perf_counter() - started < 10
    assert chunks[-1].char_end == len(text.rstrip())


def test_doc_id_is_stable_and_safe_for_chroma() -> None:
    assert make_doc_id("parrots/Macaw notes.md") == make_doc_id("parrots/Macaw notes.md")
    for rel in ("parrots/Macaw notes.md", "@alice/日记.txt", "../odd name\n😀.pdf", ""):
        assert re.fullmatch(r"[a-z0-9][a-z0-9-]*[a-z0-9]", make_doc_id(rel)), rel


def test_doc_ids_differ_for_paths_with_the_same_slug() -> None:
    paths = ["a b.md", "a-b.md", "A B.md", "a/b.md", "a_b.md", "鹦鹉.md", "鸚鵡.md", "a b.md "]
    assert len({make_doc_id(p) for p in paths}) == len(paths)


def test_a_heading_line_is_not_left_alone_before_an_unbroken_paragraph() -> None:
    # SciFact's abstracts: a title line, then sentences glued without spaces ("cells.S100A9"), so
    # the paragraph is cut hard. The title shares the first chunk instead of being one by itself.
    body = "word " * 300
    text = "# A title line\n\n" + body.strip()
    chunks = chunk_sections([Section(text=text)], "d", "t.md", size=1000, overlap=0)
    assert chunks[0].text.startswith("# A title line\n\nword")
    assert len(chunks) == 2
    _check_invariants([Section(text=text)], chunks, 1000)


def test_a_short_sentence_is_not_cut_into_to_fill_a_chunk() -> None:
    # Whole sentences stay whole: only the pieces of a sentence longer than a chunk are cut.
    text = "Short one. " + "Longer sentence with many words here. " * 3
    chunks = chunk_sections([Section(text=text)], "d", "s.txt", size=100, overlap=0)
    for c in chunks:
        assert c.text.endswith("."), c.text
