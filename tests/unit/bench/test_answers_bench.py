"""`kdesk bench answers`: the metrics on hand-made cases, the written question sets against the
shared data, and one small run through the real assistant over a tiny data folder the test writes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from kdesk_lab.answers import (
    CROSSLINGUAL,
    FOLLOWUPS,
    UNANSWERABLE,
    answer_body,
    answer_length,
    citation_precision,
    contains,
    format_answers,
    is_refusal,
    load_cmrc,
    load_wiki,
    normalize,
    read_jsonl,
    run_answers_bench,
    spread,
    strip_note,
    text_language,
    token_f1,
)

NOTE = "No language model is configured; these are the most relevant passages."


# ------------------------------------------------------------------------------------ metrics
def test_strip_note_drops_the_uncited_lead_of_an_extractive_answer_only() -> None:
    text = f"{NOTE}\n\n- Lincoln was born in 1809. [1]\n- He died in 1865. [2]"
    assert strip_note(text, "extractive") == "- Lincoln was born in 1809. [1]\n- He died in 1865. [2]"
    assert strip_note(text, "llm") == text  # a model's first paragraph may be the answer
    assert strip_note("Born in 1809 [1].\n\nMore [2].", "extractive").startswith("Born")  # cited: kept
    assert strip_note(NOTE, "extractive") == ""  # nothing found: the note is all there is
    assert "[" not in answer_body(text, "extractive")
    assert not contains(answer_body(f"{NOTE}\n\n- x [1]", "extractive"), ["language model"], "en")


def test_normalize_folds_case_punctuation_articles_and_width() -> None:
    assert normalize("The  U.S. Navy!", "en") == "u s navy"
    assert normalize("ＡＢＣ，１２３", "zh") == "abc123"  # full width to half width, no spaces
    assert normalize("「战史演武」&「争霸演武」", "zh") == "战史演武争霸演武"


def test_containment_whole_words_in_english_and_characters_in_chinese() -> None:
    assert contains("He served 18 months.", ["18 months"], "en")
    assert contains("It was THE Senate's choice", ["the senate"], "en")
    assert not contains("born in 1809", ["1"], "en")  # a number inside another is no match
    assert not contains("the kangaroo", ["roo"], "en")
    assert contains("徐夫人最先嫁给了陆尚。", ["陆尚"], "zh")
    assert contains("由光荣和ω－force开发", ["光荣和ω-force"], "zh")  # full-width hyphen
    assert contains("anything", ["nope", "anything"], "en")  # any alternative
    assert not contains("", ["x"], "en")


def test_token_f1_words_and_characters() -> None:
    assert token_f1("eighteen months", ["eighteen months"], "en") == 1.0
    # 2 of 4 answer words match both gold words: P 0.5, R 1.0
    assert token_f1("about eighteen months total", ["eighteen months"], "en") == pytest.approx(2 / 3)
    assert token_f1("nothing here", ["eighteen months"], "en") == 0.0
    # characters: 陆尚 in 他嫁给陆尚 (5 chars): P 2/5, R 1
    assert token_f1("他嫁给陆尚", ["陆尚"], "zh") == pytest.approx(2 * 0.4 / 1.4)
    assert token_f1("x", ["nope", "x"], "en") == 1.0  # the best alternative


def test_citation_precision_and_length() -> None:
    assert citation_precision(["born in 1809", "died in 1865", "other"], ["1809"], "en") == pytest.approx(
        1 / 3
    )
    assert citation_precision([], ["1809"], "en") is None
    assert answer_length("Born in 1809 in Kentucky.", "en") == 5
    assert answer_length("他嫁给了陆尚。", "zh") == 6


def test_refusal_is_the_typed_field_never_the_wording() -> None:
    @dataclass
    class Old:  # an Answer without the field
        text: str = "your documents do not seem to answer this"

    @dataclass
    class New:
        text: str = "anything"
        refused: bool = True

    assert not is_refusal(Old())
    assert is_refusal(New())


def test_the_answers_language_ignores_the_names_it_repeats_from_the_question() -> None:
    assert text_language("五羊新城 is a neighborhood in Guangzhou.", "What is 五羊新城?") == "en"
    assert text_language("五羊新城，又称五羊邨，是广州的一个街区。", "What is 五羊新城?") == "zh"
    assert text_language("Gerald Ford 之前担任总统。", "Gerald Ford 之前担任什么职务？") == "zh"
    assert text_language("Highgate Cemetery", "Michael Faraday 在哪里工作？") == "en"
    assert text_language("4", "Grover Cleveland 有几个孩子？") == ""  # a number answers in either
    rows = read_jsonl(CROSSLINGUAL)
    assert len(rows) >= 20 and {(r["lang"], r["pages"]) for r in rows} == {("zh", "en"), ("en", "zh")}


def test_spread_keeps_every_group_in_a_short_run() -> None:
    rows = [{"g": g, "i": i} for g in "aab" for i in range(3)]
    assert {r["g"] for r in spread(rows, 2, lambda r: r["g"])} == {"a", "b"}
    assert spread(rows, None, lambda r: r["g"]) == rows


# ------------------------------------------------------------------------------------ the sets
@pytest.fixture(scope="module")
def shared_keys(shared_data: Path) -> set[str]:
    _, en_keys, _ = load_wiki(shared_data / "qa" / "cmu_wikiqa")
    _, zh_keys, _ = load_cmrc(shared_data / "retrieval" / "cmrc2018_dev")
    return set(en_keys) | set(zh_keys)  # article files and the indexed paragraphs' ids


def test_unanswerable_set(shared_keys: set[str]) -> None:
    rows = read_jsonl(UNANSWERABLE)
    assert len(rows) >= 60
    assert len({r["id"] for r in rows}) == len(rows)
    for r in rows:
        assert set(r) == {"id", "lang", "kind", "question", "subject"}
        assert r["lang"] in ("en", "zh") and r["kind"] in ("on_topic", "off_topic")
        if r["kind"] == "on_topic":
            assert r["subject"] in shared_keys, r
    for lang in ("en", "zh"):
        for kind in ("on_topic", "off_topic"):
            assert len([r for r in rows if (r["lang"], r["kind"]) == (lang, kind)]) >= len(rows) // 4


def test_followup_set(shared_keys: set[str]) -> None:
    rows = read_jsonl(FOLLOWUPS)
    assert len(rows) >= 80
    assert len({r["id"] for r in rows}) == len(rows)
    for r in rows:
        assert set(r) == {"id", "lang", "turn1", "turn2", "standalone", "gold"}
        assert r["gold"] in shared_keys, r
        assert r["turn2"] != r["standalone"]
    by_lang = [len([r for r in rows if r["lang"] == lang]) for lang in ("en", "zh")]
    assert min(by_lang) >= 0.4 * len(rows)


# ------------------------------------------------------------------------------------ end to end
ARTICLES = {
    "a1": (
        "Kea",
        "The kea is a parrot found in the alpine regions of New Zealand. Kea eat roots and insects.",
    ),
    "a2": (
        "Great_Wall",
        "The Great Wall was built over many centuries. Its best-known sections were built by the Ming "
        "dynasty. The wall is about 21,196 km long.",
    ),
    "a3": (
        "Kea",
        "The kea is a parrot found in the alpine regions of New Zealand. Kea eat roots and insects.",
    ),
}
PARAGRAPHS = [
    ("cmrc-d0", "虎皮鹦鹉", "虎皮鹦鹉原产于澳大利亚。虎皮鹦鹉主要吃草籽，也吃水果和蔬菜。"),
    ("cmrc-d1", "长城", "长城是中国古代的军事防御工程。明长城全长约八千八百五十千米。"),
    ("cmrc-d2", "熊猫", "大熊猫生活在四川的山区，以竹子为主要食物。"),
]


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture
def tiny_root(tmp_path: Path) -> Path:
    return write_tiny_root(tmp_path)


def write_tiny_root(tmp_path: Path) -> Path:
    """A shared-data folder in miniature: three stored articles (one stored twice) with questions,
    three CMRC-style paragraphs with questions and answers, and small unanswerable and follow-up sets."""
    root = tmp_path / "data"
    wiki = root / "qa" / "cmu_wikiqa"
    (wiki / "storage").mkdir(parents=True)
    for name, (title, text) in ARTICLES.items():
        (wiki / "storage" / f"{name}.txt.clean").write_text(f"{title}\n\n\n{text}\n", encoding="utf-8")
    qa = [
        ("Where is the kea found?", "New Zealand", "a1"),
        ("Where is the kea found?", "in the alpine regions of New Zealand", "a1"),
        ("How long is the Great Wall?", "21,196 km", "a2"),
        ("Is the kea a parrot?", "yes", "a1"),  # yes/no: never asked
    ]
    _jsonl(
        wiki / "qa.jsonl",
        [{"question": q, "answer": a, "article_file": f"{f}.txt.clean"} for q, a, f in qa],
    )
    cmrc = root / "retrieval" / "cmrc2018_dev"
    (cmrc / "qrels").mkdir(parents=True)
    _jsonl(cmrc / "corpus.jsonl", [{"_id": i, "title": t, "text": x} for i, t, x in PARAGRAPHS])
    zh = [
        ("q0", "虎皮鹦鹉原产于哪里？", "澳大利亚", "cmrc-d0"),
        ("q1", "大熊猫主要吃什么？", "竹子", "cmrc-d2"),
    ]
    _jsonl(cmrc / "queries.jsonl", [{"_id": i, "text": q} for i, q, _, _ in zh])
    _jsonl(cmrc / "answers.jsonl", [{"_id": i, "answers": [a, a]} for i, _, a, _ in zh])
    (cmrc / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{i}\t{d}\t1\n" for i, _, _, d in zh)
    )
    _jsonl(
        tmp_path / "unanswerable.jsonl",
        [
            {
                "id": "u1",
                "lang": "en",
                "kind": "on_topic",
                "question": "What colour is a kea's egg?",
                "subject": "a1.txt.clean",
            },
            {
                "id": "u2",
                "lang": "en",
                "kind": "off_topic",
                "question": "How do I bake sourdough bread?",
                "subject": "baking",
            },
            {"id": "u3", "lang": "zh", "kind": "off_topic", "question": "怎么做红烧肉？", "subject": "烹饪"},
        ],
    )
    _jsonl(
        tmp_path / "followups.jsonl",
        [
            {
                "id": "f1",
                "lang": "en",
                "turn1": "Tell me about the Great Wall.",
                "turn2": "How long is it?",
                "standalone": "How long is the Great Wall?",
                "gold": "a2.txt.clean",
            },
            {
                "id": "f2",
                "lang": "zh",
                "turn1": "虎皮鹦鹉是什么鸟？",
                "turn2": "它吃什么？",
                "standalone": "虎皮鹦鹉吃什么？",
                "gold": "cmrc-d0",
            },
        ],
    )
    _jsonl(
        tmp_path / "crosslingual.jsonl",
        [
            {"id": "x1", "lang": "en", "pages": "zh", "question": "What does the 虎皮鹦鹉 eat?"},
            {"id": "x2", "lang": "zh", "pages": "en", "question": "kea 生活在哪里？"},
        ],
    )
    return root


def test_small_run_through_the_real_assistant(tiny_root: Path, minilm) -> None:
    result = run_answers_bench(
        embedder=minilm,
        data_root=tiny_root,
        unanswerable=tiny_root.parent / "unanswerable.jsonl",
        followups=True,
        followups_file=tiny_root.parent / "followups.jsonl",
        crosslingual=True,
        crosslingual_file=tiny_root.parent / "crosslingual.jsonl",
        log=lambda m: None,
    )
    assert result.documents == {"en": 3, "zh": 3} and result.failed_documents == 0
    rows = result.rows
    qa = [r for r in rows if r.part == "qa"]
    assert sorted((r.lang, r.question) for r in qa) == [
        ("en", "How long is the Great Wall?"),
        ("en", "Where is the kea found?"),
        ("zh", "大熊猫主要吃什么？"),
        ("zh", "虎皮鹦鹉原产于哪里？"),
    ]
    kea = next(r for r in qa if r.question.startswith("Where is the kea"))
    assert kea.golds == ["New Zealand", "in the alpine regions of New Zealand"]
    assert kea.gold == "kea"  # both stored copies of the article count
    assert len([r for r in rows if r.part == "unanswerable"]) == 3
    assert len([r for r in rows if r.part == "followup"]) == 4  # turn 2 and its standalone form
    summary = result.backends["extractive"]["summary"]
    for lang in ("en", "zh"):
        s, mine = summary[lang], [r for r in qa if r.lang == lang]
        assert s["questions"] == len(mine) == 2
        assert s["hit"] == pytest.approx(sum(bool(r.hit) for r in mine) / 2)
        assert s["containment"] == pytest.approx(sum(bool(r.contained) for r in mine) / 2)
        assert s["f1"] == pytest.approx(sum(r.f1 for r in mine) / 2, abs=1e-4)
        assert s["false_refusal"] == pytest.approx(sum(r.refused for r in mine) / 2)
        for key in (
            "hit",
            "retrieved_hit",
            "containment",
            "f1",
            "cite_precision",
            "false_refusal",
            "refused",
        ):
            assert 0.0 <= s[key] <= 1.0, key
        assert 0 < s["first_token_p50_ms"] <= s["answer_p95_ms"] < 60_000
        assert s["length_median"] > 0
        assert s["dialogues"] == 1
    # Tiny, unambiguous documents: every gold document is retrieved; a refusal answered nothing.
    assert all(r.retrieved_hit for r in qa)
    assert any(r.contained for r in qa)
    assert all(not r.contained and r.f1 == 0.0 for r in rows if r.refused and r.part == "qa")
    assert all(r.by == "extractive" for r in rows)
    # Across languages with no model: the passages are quoted as written, the note is the asker's.
    across = [r for r in rows if r.part == "crosslingual"]
    assert {(r.lang, r.kind) for r in across} == {("en", "en_over_zh"), ("zh", "zh_over_en")}
    assert all(r.in_language for r in across if not r.refused), [r.answer for r in across]
    assert summary["en"]["crosslingual"] == 1 and summary["zh"]["in_language"] is not None
    table = format_answers(result)
    assert "extractive" in table and "unanswerable" in table and "follow-ups" in table
    assert "across languages" in table
    assert json.loads(json.dumps(result.to_dict(), ensure_ascii=False))["rows"][0]["backend"] == "extractive"
