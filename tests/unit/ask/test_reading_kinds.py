"""The router's kinds of reading (none, passages, document, library) and what the assistant does
with each: library answers from a real index (bundled MiniLM, Chroma, the manifest), whole-document
questions resolved to their documents (whole.read_whole recorded: h-whole's module reads them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop_app.cli.main import main
from desktop_app.core.ask import whole
from desktop_app.core.ask.assistant import Assistant, Conversation
from desktop_app.core.ask.router import Router, heuristic_route, parse_route, reading_kind
from desktop_app.core.config import Config, RouterConfig
from desktop_app.core.events import Answer, Citation, RouteDecided
from desktop_app.core.library.knowledge import KnowledgeBase
from kdesk_lab.router import KINDS_SET_PATH, format_kinds_report, run_kinds_bench

PARROTS = Path(__file__).resolve().parents[3] / "knowledge" / "parrots"
NOTES = [
    "kea.md",
    "kakapo.md",
    "scarlet-macaw.md",
    "hyacinth-macaw.md",
    "blue-and-yellow-macaw.md",
    "galah.md",
    "sulphur-crested-cockatoo.md",
    "palm-cockatoo.md",
]
# Not a macaw note, but it names macaws: listed after the notes about them.
CARE = "# Keeping parrots\n\nLarge parrots such as macaws need a big aviary and daily company.\n"
PLAN = "# Field trip plan\n\nWe will look for kea near Arthur's Pass in March.\n"


@pytest.fixture(scope="module")
def kb(tmp_path_factory, minilm):
    kb = KnowledgeBase(tmp_path_factory.mktemp("kinds") / "data", config=Config(), embedder=minilm)
    (kb.knowledge_dir / "parrots").mkdir()
    for name in NOTES:
        (kb.knowledge_dir / "parrots" / name).write_text((PARROTS / name).read_text(encoding="utf-8"), "utf-8")
    (kb.knowledge_dir / "care.md").write_text(CARE, encoding="utf-8")
    (kb.knowledge_dir / "@trips").mkdir()
    (kb.knowledge_dir / "@trips" / "plan.md").write_text(PLAN, encoding="utf-8")
    assert not kb.sync().failed
    yield kb
    kb.close()


@pytest.fixture
def read(monkeypatch):
    """Records the sides whole.read_whole is given, and answers with their sources cited."""
    calls: list[list[whole.Side]] = []

    def reader(assistant, q, sides, conv, cancel=None):
        calls.append(sides)
        cites = [Citation(i, s, None) for i, s in enumerate((s for side in sides for s in side.sources), 1)]
        yield Answer("read", cites, by="extractive")

    monkeypatch.setattr(whole, "read_whole", reader)
    return calls


def ask(kb, question: str, conv: Conversation | None = None) -> tuple[RouteDecided, Answer]:
    events = list(Assistant(kb, None, kb.config).ask(question, conv or Conversation()))
    route = next(e for e in events if isinstance(e, RouteDecided))
    return route, next(e for e in events if isinstance(e, Answer))


# ---------------------------------------------------------------------------- the router
@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("Thanks a lot!", "none"),
        ("你好", "none"),
        ("What does the kea eat?", "passages"),
        ("啄羊鹦鹉吃什么？", "passages"),
        ("What file formats are supported?", "passages"),
        ("Summarize the kea note", "document"),
        ("sumarize kea.md pls", "document"),
        ("比较金刚鹦鹉和凤头鹦鹉", "document"),
        ("这篇笔记的主要内容是什么", "document"),
        ("What does the galah note say about breeding?", "document"),
        ("What documents do I have?", "library"),
        ("Which of my notes are about macaws?", "library"),
        ("有多少个文件？", "library"),
        ("最近新增了哪些文件", "library"),
        ("What does the parrots collection hold?", "library"),
        ("Can you sum up the galah file?", "document"),
        ("金刚鹦鹉跟凤头鹦鹉有什么不一样", "document"),
        ("Do I have anything on lorikeets?", "library"),
        ("我的文档有哪些", "library"),
        ("What do kea eat according to my notes?", "passages"),
        ("什么是PDF？", "passages"),
        ("列出金刚鹦鹉的特征", "passages"),
        ("Is the kakapo new to science?", "passages"),
    ],
)
def test_the_heuristic_chooses_the_kind_of_reading(message, kind):
    route = heuristic_route(message)
    assert route.kind == kind
    assert route.use_rag == (kind != "none")


def test_the_llms_kind_decides_use_rag_and_an_answer_without_one_keeps_the_old_meaning():
    route = parse_route('{"kind":"library","is_followup":false,"use_rag":false,"search_query":""}', "How many?")
    assert (route.kind, route.use_rag, route.by) == ("library", True, "llm")
    old = parse_route('{"is_followup":false,"use_rag":true,"search_query":"kea diet"}', "What do kea eat?")
    assert (old.kind, old.use_rag) == ("passages", True)


class ScriptedModel:
    name = "scripted"
    context_window = 2048

    def __init__(self, reply: str) -> None:
        self.reply = reply

    def stream(self, messages, json_schema=None, max_tokens=None, temperature=None, cancel=None, timeout=None):
        assert "kind" in json_schema["required"]
        yield self.reply

    def close(self) -> None:
        pass


def test_a_kind_marker_overrides_a_small_models_passages():
    model = ScriptedModel('{"kind":"passages","is_followup":false,"use_rag":true,"search_query":"kea"}')
    router = Router(model, RouterConfig(decisive_hit_score=0))  # the model is asked
    route = router.route("Summarise the kea note for me")
    assert route.kind == "document" and route.by == "heuristic" and "overrides" in route.reason
    assert router.route("Where do kea live?").kind == "passages"


def test_the_llms_library_or_document_kind_needs_a_document_named_and_no_how_to():
    model = ScriptedModel('{"kind":"library","is_followup":false,"use_rag":true,"search_query":"lorikeet"}')
    router = Router(model, RouterConfig(decisive_hit_score=0))
    assert router.route("Where can I find the rainbow lorikeet?").kind == "passages"
    assert router.route("How do I delete a document from the desk?").kind == "passages"
    assert router.route("Got any documents on lorikeets lying around?").kind == "library"
    assert heuristic_route("How do I summarise a note?").kind == "passages"


def test_a_route_stored_before_kinds_reads_its_kind_from_use_rag():
    assert RouteDecided(**{"use_rag": False, "search_query": "", "is_followup": False, "by": "llm"}).kind == "none"
    assert RouteDecided(True, "kea", False, "heuristic").kind == "passages"


# ---------------------------------------------------------------------------- the library
def test_what_documents_do_i_have_lists_them_by_folder_with_counts(kb):
    route, answer = ask(kb, "What documents do I have?")
    assert route.kind == "library" and answer.by == "library" and not answer.citations
    lines = answer.text.splitlines()
    assert lines[0] == "You have 9 documents in your library."
    assert "parrots: 8 documents" in lines and "(top folder): 1 document" in lines
    assert "- Kea (Nestor notabilis) (parrots/kea.md)" in lines
    assert "plan.md" not in answer.text  # another collection's document


def test_notes_about_a_subject_come_first_then_those_that_only_mention_it(kb):
    _, answer = ask(kb, "Which of my notes are about macaws?")
    text = answer.text
    assert text.startswith("3 documents are about macaws:")
    assert "1 more document mentions macaws:" in text
    assert text.index("scarlet-macaw.md") < text.index("1 more document") < text.index("care.md")
    assert "kea.md" not in text


def test_a_chinese_library_question_is_answered_in_chinese(kb):
    _, answer = ask(kb, "哪些笔记是关于凤头鹦鹉的？")
    assert answer.text.startswith("3 个文档以凤头鹦鹉为主题：")
    assert "粉红凤头鹦鹉 Galah (Eolophus roseicapilla) (parrots/galah.md)" in answer.text
    _, count = ask(kb, "我有多少个文档？")
    assert count.text.splitlines()[0] == "你的资料库里有 9 个文档。"


def test_a_topic_no_title_names_lists_the_closest_documents_with_the_passage_that_says_it(kb):
    # "New Zealand" is no note's title, and "about" finds no document titled so: the search of
    # the topic finds the notes that say it, each cited at its passage.
    route, answer = ask(kb, "Which of my notes talk about birds that live in New Zealand?")
    assert route.kind == "library" and answer.by == "library"
    assert answer.text.startswith("By their text, these ") and "closest first:" in answer.text
    cited = [c.source for c in answer.citations]
    assert cited[:2] and set(cited[:2]) <= {"parrots/kea.md", "parrots/kakapo.md"}
    assert "[1]" in answer.text and "New Zealand" in answer.text.splitlines()[1]


def test_a_topic_nothing_is_close_to_is_said_not_ranked(kb):
    # Every passage has some rank in a search; none is close to football, so none is listed.
    _, answer = ask(kb, "Which of my notes cover football?")
    assert answer.text == "No document in your library is about or mentions football." and not answer.citations
    _, other = ask(kb, "Which of my documents help me fix a diesel engine?")
    assert other.text == "No document in your library is about what you ask."


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Which of my recipes call for wine?", "library"),
        ("我的资料里哪些跟新西兰有关？", "library"),
        ("我的药品资料里，哪些药是按体重给药的？", "library"),
        ("Which of the two macaws is bigger?", "passages"),
    ],
)
def test_which_of_my_things_asks_for_documents(question, kind):
    assert reading_kind(question) == ((kind, "asks about the library's files") if kind == "library" else None)


def test_a_chinese_topic_is_read_from_its_framing():
    from desktop_app.core.ask.library_answers import topic_of

    assert topic_of("我的资料里哪些跟永乐皇帝有关？") == "永乐皇帝"
    assert topic_of("Which of my PDFs help me work out what I owe the taxman?") == "work out owe taxman"


def test_a_collection_shows_its_own_documents_only_in_its_conversations(kb):
    _, shared = ask(kb, "What does the trips collection hold?")
    assert "plan.md" not in shared.text
    _, scoped = ask(kb, "What does the trips collection hold?", Conversation(scope="trips"))
    assert scoped.text.splitlines() == ["“trips” holds 1 document:", "- Field trip plan (@trips/plan.md)"]


def test_what_is_new_lists_the_latest_days_documents(kb):
    _, answer = ask(kb, "What's new?")
    assert answer.text.startswith("Added or changed most recently (")
    assert ": 9 documents" in answer.text.splitlines()[0]


# ---------------------------------------------------------------------------- whole documents
def test_a_document_named_by_title_is_read_whole(kb, read):
    route, answer = ask(kb, "Summarize the kea note")
    assert route.kind == "document"
    assert [(s.label, s.sources) for s in read[0]] == [("kea", ["parrots/kea.md"])]
    assert answer.citations[0].source == "parrots/kea.md"


@pytest.mark.parametrize(
    ("question", "sides"),
    [
        ("总结一下鸮鹦鹉的笔记", [["parrots/kakapo.md"]]),
        ("What does kakapo.md say about its diet?", [["parrots/kakapo.md"]]),
        (
            "比较金刚鹦鹉和凤头鹦鹉",
            [
                ["parrots/blue-and-yellow-macaw.md", "parrots/hyacinth-macaw.md", "parrots/scarlet-macaw.md"],
                ["parrots/galah.md", "parrots/palm-cockatoo.md", "parrots/sulphur-crested-cockatoo.md"],
            ],
        ),
        ("Compare Nestor notabilis with the kakpo", [["parrots/kea.md"], ["parrots/kakapo.md"]]),
    ],
)
def test_a_comparison_or_a_named_file_resolves_to_its_sides(kb, read, question, sides):
    route, _ = ask(kb, question)
    assert route.kind == "document"
    assert [s.sources for s in read[0]] == sides


def test_summarise_it_reads_the_file_the_conversation_is_about(kb, read):
    conv = Conversation()
    ask(kb, "Where does the kakapo live?", conv)
    assert conv.last_sources == ["parrots/kakapo.md"]
    route, _ = ask(kb, "Summarise it", conv)
    assert route.kind == "document"
    assert [s.sources for s in read[0]] == [["parrots/kakapo.md"]]


def test_a_photo_conversations_species_note_is_the_document_meant(kb, read):
    ask(kb, "Summarize the note about this bird", Conversation(last_subject="Galah"))
    assert [s.sources for s in read[0]] == [["parrots/galah.md"]]


def test_a_document_no_name_matches_is_answered_in_kind_with_the_closest(kb, read):
    route, answer = ask(kb, "Summarize the dodo note")
    assert route.kind == "document" and not read
    assert answer.refused and answer.text.startswith("I could not tell which document")
    assert "The closest: " in answer.text and len(answer.related) == 3


# ---------------------------------------------------------------------------- front ends and bench
def test_ask_json_shows_the_kind_and_why(tmp_path, capsys):
    src = tmp_path / "parrots"
    src.mkdir()
    for name in NOTES[:3]:
        (src / name).write_text((PARROTS / name).read_text(encoding="utf-8"), encoding="utf-8")
    data = str(tmp_path / "data")
    assert main(["--data-dir", data, "add", str(src)]) == 0
    capsys.readouterr()
    assert main(["--data-dir", data, "ask", "--no-llm", "--json", "How many documents do I have?"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["route"]["kind"] == "library" and "library" in out["route"]["reason"]
    assert out["answer"].startswith("You have 3 documents") and out["answer_by"] == "library"


def test_the_kinds_bench_prints_a_confusion_table_per_path():
    report = run_kinds_bench(KINDS_SET_PATH, None, limit=40)
    heur = report["heuristic"]
    assert report["messages"] == 40 and set(heur["accuracy"]) >= {"all", "en", "zh"}
    assert sum(sum(row.values()) for row in heur["confusion"].values()) == 40
    text = format_kinds_report(report)
    assert "expected \\ chosen" in text and "llm: not run" in text


def test_a_list_of_one_format_counts_only_those_files(kb):
    _, answer = ask(kb, "Show me all my PDFs")
    assert answer.text == "0 of your documents are .pdf files."
    _, md = ask(kb, "List my markdown files")
    assert md.text.startswith("9 of your documents are .md files.")


def test_an_unreadable_index_is_a_warning_then_an_answer_not_a_traceback(kb, monkeypatch):
    from desktop_app.core.ask import library_answers
    from desktop_app.core.events import Warning

    def broken(kb, scope):
        raise OSError("manifest is locked")

    monkeypatch.setattr(library_answers, "read_holdings", broken)
    events = list(Assistant(kb, None, kb.config).ask("What documents do I have?", Conversation()))
    warning = next(e for e in events if isinstance(e, Warning))
    assert "manifest is locked" in str(warning.message)
    assert isinstance(events[-1], Answer)


def test_a_big_library_is_listed_in_part_with_every_folders_count():
    from desktop_app.core.ask.holdings import Holding
    from desktop_app.core.ask.library_answers import _whole
    from desktop_app.core.messages import render_lines

    docs = [
        Holding(f"f{i // 30}/d{i}.md", f"Doc {i}", "", frozenset(), f"f{i // 30}", "shared", "2026-01-01", "text")
        for i in range(300)
    ]
    lines = render_lines(_whole(docs, "en", names=True)).splitlines()
    assert lines[:2] == ["You have 300 documents in your library.", "Your documents are in 10 folders or collections:"]
    assert sum(1 for ln in lines if ln.endswith(": 30 documents")) == 10
    assert lines.count("… and 27 more") == 10 and len(lines) == 2 + 10 * 5
