"""Reading whole documents (ask/whole.py): read back from a real index (Chroma, the MiniLM fixture)
of real files (parrot notes, a paper PDF, a DOCX with headings, a Chinese paragraph of CMRC 2018);
with a model scripted in Python, without one extractively."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from desktop_app.core.ask import notes
from desktop_app.core.ask.assistant import Assistant
from desktop_app.core.ask.budget import estimate_tokens
from desktop_app.core.ask.conversation import Conversation
from desktop_app.core.ask.question import Question
from desktop_app.core.ask.whole import Side, attribute, parts_of, read_whole
from desktop_app.core.config import Config
from desktop_app.core.events import Answer, Progress, Token, Warning
from desktop_app.core.library.chunking import chunk_sections
from desktop_app.core.library.documents import Hit, Section
from desktop_app.core.library.knowledge import KnowledgeBase
from desktop_app.core.models.llm.base import LLMError
from desktop_app.core.tasks import STOPPED, Cancelled, SimpleTask

NOTES = Path(__file__).resolve().parents[3] / "knowledge" / "parrots"
PAPER = "multi-column-2p.pdf"
DOCX = "category-level.docx"


@pytest.fixture(scope="module")
def kb(tmp_path_factory, minilm, shared_data):
    folder = tmp_path_factory.mktemp("whole")
    src = folder / "src"
    (src / "parrots").mkdir(parents=True)
    for name in ("kea", "scarlet-macaw", "hyacinth-macaw", "sulphur-crested-cockatoo", "galah"):
        shutil.copy(NOTES / f"{name}.md", src / "parrots" / f"{name}.md")
    examples = shared_data / "docs" / "unstructured" / "example-docs"
    shutil.copy(examples / "pdf" / PAPER, src / PAPER)
    shutil.copy(examples / DOCX, src / DOCX)
    with open(shared_data / "retrieval" / "cmrc2018_dev" / "corpus.jsonl", encoding="utf-8") as f:
        row = next(r for r in map(json.loads, f) if len(r["text"]) > 700)
    (src / "zh.txt").write_text(row["text"], encoding="utf-8")
    base = KnowledgeBase(folder / "data", embedder=minilm)
    report = base.add([src / "parrots", src / PAPER, src / DOCX, src / "zh.txt"])
    assert not report.failed
    yield base
    base.close()


class Model:
    """Scripted: each call answers one sentence citing the first passage number of its prompt."""

    name = "scripted"

    def __init__(self, context_window: int = 900, fail: bool = False) -> None:
        self.context_window = context_window
        self.fail = fail
        self.prompts: list[str] = []

    def stream(
        self, messages, json_schema=None, max_tokens=None, temperature=None, cancel=None, timeout=None
    ):
        if self.fail:
            raise LLMError("the model crashed", "protocol")
        prompt = "\n".join(m["content"] for m in messages)
        self.prompts.append(prompt)
        n = re.search(r"\[(\d+)\]", messages[-1]["content"])
        for word in f"The part reports its findings [{n.group(1) if n else 1}].".split(" "):
            if cancel is not None and cancel.cancelled():
                raise Cancelled()
            yield word + " "

    def close(self) -> None:
        pass


def assistant(kb, model=None) -> Assistant:
    config = Config()
    config.llm.max_tokens = 100
    return Assistant(kb, model, config)


def read(kb, question, sides, model=None, cancel=None):
    return list(read_whole(assistant(kb, model), Question.read(question), sides, Conversation(), cancel))


def answer_of(events) -> Answer:
    return next(e for e in events if isinstance(e, Answer))


def test_a_document_reads_back_in_order_without_the_chunks_overlap():
    text = " ".join(f"Sentence number {i} says something about parrots." for i in range(60))
    chunks = chunk_sections([Section(text, heading_path=["Notes"])], "d", "d.md", size=300, overlap=120)
    hits = [
        Hit(c.id, "d", c.text, "d.md", None, c.chunk_index, c.total_chunks, 0.0, heading_path=["Notes"])
        for c in chunks
    ]
    parts = parts_of(list(reversed(hits)))
    assert len(chunks) > 3 and len(parts) == 1
    assert " ".join(parts[0].text.split()) == text


def test_summary_without_a_model_quotes_central_sentences_each_cited_to_its_page(kb):
    answer = answer_of(read(kb, "Summarize the paper", [Side(PAPER, [PAPER])]))
    assert answer.by == "extractive" and answer.text.startswith(
        "No language model is configured; this summary quotes the document's own most central sentences, "
        "section by section.\n\n"
    )
    quoted = [line for line in answer.text.splitlines() if line.startswith("- ")]
    assert len(quoted) >= 3
    by_n = {c.n: c for c in answer.citations}
    for line in quoted:
        n = int(re.search(r"\[(\d+)\]$", line).group(1))
        assert by_n[n].source == PAPER and by_n[n].page in (1, 2)
        sentence = re.sub(r"\s*\[\d+\]$", "", line[2:])
        assert " ".join(sentence.split()) in " ".join(kb.get_chunk(by_n[n].chunk_id).text.split())


def test_outline_gives_the_documents_headings_in_order(kb):
    answer = answer_of(read(kb, "What is the outline of category-level.docx?", [Side(DOCX, [DOCX])]))
    items = [re.sub(r"\s*\[\d+\]$", "", line.strip()[2:]) for line in answer.text.splitlines()[1:]]
    assert items == ["A Heading 1", "A Heading 2", "Another Heading 1"]
    assert all(c.source == DOCX for c in answer.citations)


def test_about_a_question_quotes_the_sentences_on_it(kb):
    answer = answer_of(read(kb, "What does the paper say about BM25?", [Side(PAPER, [PAPER])]))
    quoted = [line for line in answer.text.splitlines() if line.startswith("- ")]
    assert quoted and all("BM25" in line for line in quoted), answer.text


def test_chinese_document_summary_quotes_its_own_sentences(kb):
    answer = answer_of(read(kb, "总结这篇文档", [Side("zh.txt", ["zh.txt"])]))
    quoted = [line[2:] for line in answer.text.splitlines() if line.startswith("- ")]
    assert answer.text.startswith("未配置语言模型；以下摘要按章节引用文档中最核心的原句。\n\n") and len(quoted) >= 3
    whole = (Path(kb.knowledge_dir) / "zh.txt").read_text(encoding="utf-8")
    assert all(re.sub(r"\s*\[\d+\]$", "", q) in whole for q in quoted)


def test_comparison_without_a_model_aligns_the_notes_fields(kb):
    sides = [Side("kea", ["parrots/kea.md"]), Side("scarlet macaw", ["parrots/scarlet-macaw.md"])]
    answer = answer_of(read(kb, "Compare the kea and the scarlet macaw", sides))
    block = answer.text.split("**Where and size**")[1].split("\n\n")[0]
    assert "- kea: Southern Alps of New Zealand; about 48 cm. [1]" in block
    assert "- scarlet macaw: Lowland forests from Mexico to the Amazon; about 85 cm long. [2]" in block
    assert [c.source for c in answer.citations] == ["parrots/kea.md", "parrots/scarlet-macaw.md"]


def test_a_side_of_several_notes_gives_each_notes_line(kb):
    macaws = ["parrots/hyacinth-macaw.md", "parrots/scarlet-macaw.md"]
    cockatoos = ["parrots/galah.md", "parrots/sulphur-crested-cockatoo.md"]
    answer = answer_of(
        read(kb, "比较金刚鹦鹉和凤头鹦鹉", [Side("金刚鹦鹉", macaws), Side("凤头鹦鹉", cockatoos)])
    )
    colours = answer.text.split("**Colours**")[1].split("\n\n")[0]
    assert answer.text.startswith("未配置语言模型")
    assert "- 金刚鹦鹉 (Hyacinth Macaw" in colours and "- 凤头鹦鹉 (Galah" in colours
    assert {c.source for c in answer.citations} == set(macaws + cockatoos)


def test_with_a_model_a_long_document_is_read_in_parts_within_its_context_and_reduced(kb):
    model = Model(context_window=900)
    events = read(kb, "Summarize the paper", [Side(PAPER, [PAPER])], model)
    progress = [e for e in events if isinstance(e, Progress)]
    answer = answer_of(events)
    total = progress[0].total
    assert total > 1 and [(p.done, p.total) for p in progress] == [(i, total) for i in range(1, total + 1)]
    assert "part 1 of" in str(progress[0].what)
    assert len(model.prompts) == total + 1  # every part, then the reduce
    assert all(estimate_tokens(p) + 100 <= model.context_window for p in model.prompts)
    assert "".join(e.text for e in events if isinstance(e, Token)).strip() == answer.text
    assert answer.by == "llm" and answer.citations and all(c.source == PAPER for c in answer.citations)


def test_cancel_stops_the_reading(kb):
    model = Model(context_window=900)
    task = SimpleTask()
    events = []
    for event in read_whole(
        assistant(kb, model),
        Question.read("Summarize the paper"),
        [Side(PAPER, [PAPER])],
        Conversation(),
        task,
    ):
        events.append(event)
        if isinstance(event, Progress):
            task.cancel()
    assert [e.done for e in events if isinstance(e, Progress)] == [1]
    assert len(model.prompts) == 1
    stopped = [e for e in events if isinstance(e, Warning) and e.message.code == STOPPED]
    assert stopped and isinstance(events[-1], Answer)  # the reading ends at once, saying so


def test_a_model_that_fails_gives_the_extractive_summary_with_a_warning(kb):
    events = read(kb, "Summarize the kea note", [Side("the kea note", ["parrots/kea.md"])], Model(fail=True))
    warning = next(e for e in events if isinstance(e, Warning))
    assert warning.message.code == notes.FALLBACK_WHOLE
    answer = answer_of(events)
    assert answer.by == "extractive" and "Southern Alps" in answer.text


def test_a_document_with_nothing_indexed_is_said_to_have_no_text(kb):
    answer = answer_of(read(kb, "Summarize missing.md", [Side("missing.md", ["missing.md"])]))
    assert answer.refused and "missing.md has no indexed text" in answer.text


def test_a_sentence_the_model_left_unmarked_is_cited_to_the_passage_holding_it(kb):
    parts = parts_of(kb.chunks_of(kb.doc_id("parrots/kea.md")))
    from desktop_app.core.ask.budget import ContextBlock

    blocks = [ContextBlock(7, parts[0].pieces[0].hit, parts[0].pieces[0].text)]
    text = attribute("The kea lives in the Southern Alps of New Zealand. Penguins swim.", blocks)
    assert text == "The kea lives in the Southern Alps of New Zealand [7]. Penguins swim."
