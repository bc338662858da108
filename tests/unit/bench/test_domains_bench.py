"""`kdesk bench domains`: the scoring helpers on hand-made cases, and one small run through the real
assistant over a tiny two-domain set (English cooking notes, Chinese tea notes) the test writes."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from kdesk_lab.domains import (
    contains_gold,
    copy_documents,
    format_domains,
    load_questions,
    parse_backend,
    run_domains_bench,
    same_file,
    says_not_said,
    score,
    set_documents,
)

NOTE = "No language model is configured; these are the most relevant passages."

DOCS = {
    "cooking/bread.md": "# Bread\n\nKnead the bread dough for ten minutes until it is smooth and elastic. "
    "Let the dough rise in a warm place for one hour.\n",
    "cooking/rice.txt": "Rinse the rice three times before cooking. Use one and a half cups of water for "
    "each cup of rice.\n",
    "tea/longjing.md": "# 龙井茶\n\n龙井茶产自杭州西湖一带。龙井茶是一种绿茶，用八十度左右的水冲泡。\n",
    "tea/puer.md": "# 普洱茶\n\n普洱茶产自云南。普洱茶可以存放很多年，越陈越香。\n",
}
QUESTIONS = [
    {
        "id": "cooking-01",
        "domain": "cooking",
        "language": "en",
        "doc_language": "en",
        "question": "How long should you knead the bread dough until it is smooth?",
        "gold": ["ten minutes", "10 minutes"],
        "file": "cooking/bread.md",
        "kind": "passages",
    },
    {
        "id": "cooking-02",
        "domain": "cooking",
        "language": "en",
        "doc_language": "en",
        "question": "What temperature does the oven need for baking sourdough pizza on a stone?",
        "gold": [],
        "file": [],
        "kind": "unanswerable",
    },
    {
        "id": "cooking-03",
        "domain": "cooking",
        "language": "en",
        "doc_language": "en",
        "question": "Summarize bread.md",
        "gold": [],
        "file": ["cooking/bread.md"],
        "kind": "document",
    },
    {
        "id": "tea-01",
        "domain": "tea",
        "language": "zh",
        "doc_language": "zh",
        "question": "普洱茶产自哪里？",
        "gold": ["云南"],
        "file": "tea/puer.md",
        "kind": "passages",
    },
    {
        "id": "tea-02",
        "domain": "tea",
        "language": "en",
        "doc_language": "zh",
        "question": "Where does Longjing tea come from?",
        "gold": ["杭州", "Hangzhou"],
        "file": "tea/longjing.md",
        "kind": "passages",
    },
    {
        "id": "tea-03",
        "domain": "tea",
        "language": "zh",
        "doc_language": "zh",
        "question": "我的文档有哪些？",
        "gold": [],
        "file": ["tea/longjing.md", "tea/puer.md"],
        "kind": "library",
    },
]


def write_set(root: Path) -> Path:
    for rel, text in DOCS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / "questions.jsonl").write_text(
        "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in QUESTIONS), encoding="utf-8"
    )
    return root


# ------------------------------------------------------------------------------------ scoring
def test_containment_ignores_case_width_spaces_and_punctuation() -> None:
    assert contains_gold("Knead for TEN  minutes.", ["ten minutes"])
    assert contains_gold("产自杭州，西湖一带", ["杭州西湖"])  # the comma goes
    assert contains_gold("ＡＢＣ１２３", ["abc 123"])  # full width to half width
    assert not contains_gold("anything", [])
    assert not contains_gold("anything", [""])


def test_a_cited_source_is_matched_by_its_path_under_the_knowledge_folder(tmp_path: Path) -> None:
    assert same_file("cooking/x.md", "cooking/x.md")
    assert same_file("set/cooking/x.md", "cooking/x.md")
    assert not same_file("cooking/xx.md", "x.md")
    assert same_file(str(tmp_path / "cooking" / "x.md"), "cooking/x.md", tmp_path)
    assert same_file("cooking\\x.md", "./cooking/x.md")


def test_not_said_reads_the_assistants_own_words_only() -> None:
    assert says_not_said("The documents do not say.")
    assert says_not_said("文档中没有提到这一点。")
    # The extractive path cites its own "the notes do not say": a citation mark is no quote.
    assert says_not_said(
        f"{NOTE}\n\nThe notes about the 龙井茶 do not say where it lives. [1]", ["龙井茶产自杭州。"]
    )
    # A quoted passage that happens to say "not mentioned" is the document talking.
    chunk = "The will was not mentioned in court. It was read later."
    assert not says_not_said(f"{NOTE}\n\n- The will was not mentioned in court. [1]", [chunk])
    assert not says_not_said("Knead for ten minutes [1].")
    assert not says_not_said(f"{NOTE}\n\n**ten minutes** [1]")


def questions_of(rows: list[dict], folder: Path) -> list:
    """Rows through the set's own loader (its parsing, not a copy of it)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "questions.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    return load_questions(folder)


def test_scores_by_kind(tmp_path: Path) -> None:
    qs = {q["id"]: q for q in QUESTIONS}
    passages, whole = questions_of([qs["cooking-01"], qs["tea-03"]], tmp_path)
    asked = SimpleNamespace(
        text=f"{NOTE}\n\n- Knead the bread dough for ten minutes. [1]",
        by="extractive",
        refused=False,
        cited=[("cooking/bread.md", "")],
        route="heuristic:rag",
        first_token_ms=1.0,
        answer_ms=1.0,
        warnings=[],
    )
    r = score("extractive", passages, asked, "passages", None)
    assert r.ok and r.contained and r.file_cited and r.routes_right and not r.not_said
    refused = score(
        "extractive", passages, SimpleNamespace(**{**vars(asked), "refused": True}), "passages", None
    )
    assert not refused.ok and not refused.contained
    one = SimpleNamespace(**{**vars(asked), "cited": [("tea/puer.md", "")]})
    assert not score("extractive", whole, one, "library", None).ok  # both files listed: both cited
    both = SimpleNamespace(**{**vars(asked), "cited": [("tea/puer.md", ""), ("tea/longjing.md", "")]})
    assert score("extractive", whole, both, "library", None).ok
    assert not score("extractive", whole, both, "passages", None).routes_right
    # A library answer lists its files in the text and cites none.
    listed = SimpleNamespace(
        **{**vars(asked), "text": "- A (tea/longjing.md)\n- B (tea/puer.md)", "cited": []}
    )
    r = score("library", whole, listed, "library", None, sorted(DOCS))
    assert r.ok and r.files_named and not r.file_cited and r.others_named == 0
    # ... but a list of the whole library picks nothing.
    everything = SimpleNamespace(**{**vars(listed), "text": "\n".join(f"- {d}" for d in DOCS)})
    r = score("library", whole, everything, "library", None, sorted(DOCS))
    assert r.files_named and r.others_named == 2 and not r.ok


def test_a_set_is_copied_whole_and_a_kept_library_loses_what_the_set_lost(tmp_path: Path) -> None:
    root = write_set(tmp_path / "set")
    docs = set_documents(root)
    assert docs == sorted(DOCS)  # questions.jsonl is the set's, not a document
    kdir = tmp_path / "knowledge"
    (kdir / "old").mkdir(parents=True)
    (kdir / "old" / "gone.md").write_text("stale", encoding="utf-8")
    copy_documents(root, kdir, docs)
    assert sorted(p.relative_to(kdir).as_posix() for p in kdir.rglob("*") if p.is_file()) == sorted(DOCS)


def test_a_bad_kind_or_backend_fails_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="kind"):
        questions_of([{**QUESTIONS[0], "kind": "passage"}], tmp_path)
    with pytest.raises(ValueError, match="no such file"):
        parse_backend(str(tmp_path / "missing.gguf"))
    assert parse_backend("none") == ("extractive", "")


# ------------------------------------------------------------------------------------ end to end
def test_small_run_through_the_real_assistant(tmp_path: Path, minilm) -> None:
    root = write_set(tmp_path / "tiny")
    result = run_domains_bench([root], embedder=minilm, log=lambda m: None)
    (s,) = result.sets
    assert (s.documents, s.questions, s.failed_documents) == (4, 6, 0)
    records = {r.id: r for r in s.records}
    assert set(records) == {q["id"] for q in QUESTIONS}
    assert all(r.backend == "extractive" and r.route_kind for r in records.values())
    # Nearly the document's own sentence: answered, with the gold, citing its file.
    knead = records["cooking-01"]
    assert knead.ok and not knead.refused, (knead.answer, knead.cited)
    assert knead.routes_right
    summary = s.backends["extractive"]["summary"]
    assert set(summary) == {"domains", "languages", "total"}
    assert set(summary["domains"]) == {"cooking", "tea"} and set(summary["languages"]) == {"en", "zh"}
    total = summary["total"]["all"]
    counts = ("n", "answerable", "other_language", "unanswerable", "whole")
    assert [total[k] for k in counts] == [6, 3, 1, 1, 2]
    assert total["contained_cited"] >= 1
    # The unanswerable question is counted in its row, whichever way the assistant went.
    pizza = records["cooking-02"]
    assert summary["domains"]["cooking"]["unanswerable"] == 1
    assert summary["domains"]["cooking"]["unanswerable_refused"] == int(pizza.refused or pizza.not_said)
    assert total["refused_or_not_said"] == sum(
        r.refused or r.not_said for r in records.values() if r.kind == "passages"
    )
    assert total["latency_median_ms"] > 0
    table = format_domains(result, show_failures=True)
    assert "domain cooking" in table and "lang zh" in table and "total" in table
    assert json.loads(json.dumps(result.to_dict(), ensure_ascii=False))["sets"][0]["records"][0]["id"]
