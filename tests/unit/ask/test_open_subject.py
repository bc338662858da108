"""A follow-up to a photo that left its species open (several notes fit): answered from each of the
first candidates' own notes, each part cited and saying whose it is, then asked which one it is."""

from __future__ import annotations

from desktop_app.core.ask.assistant import MAX_SUBJECT_OPTIONS, Assistant
from desktop_app.core.ask.conversation import Conversation
from desktop_app.core.config import Config
from desktop_app.core.events import Answer, Retrieved, RouteDecided
from desktop_app.core.library.documents import Hit

SCARLET = (
    "# Scarlet Macaw (Ara macao)\n\nChinese: 绯红金刚鹦鹉.\n\n**Colours:** Bright red body; yellow band on the wing."
    "\n\n**Where and size:** Southern Mexico to the Amazon basin; about 85 cm.\n\n**Diet:** Seeds, nuts and fruit."
)
GREEN = (
    "# Green-winged Macaw (Ara chloropterus)\n\nChinese: 红绿金刚鹦鹉.\n\n**Colours:** Dark red body; green band."
    "\n\n**Where and size:** Forests of northern and central South America; about 95 cm."
)
HYACINTH = (
    "# Hyacinth Macaw (Anodorhynchus hyacinthinus)\n\nChinese: 紫蓝金刚鹦鹉.\n\n**Colours:** Cobalt blue all over."
    "\n\n**Where and size:** Pantanal of Brazil; about 100 cm."
)
KEA = "# Kea (Nestor notabilis)\n\nChinese: 啄羊鹦鹉.\n\n**Where and size:** Southern Alps of New Zealand; about 48 cm."


def _hit(source: str, text: str) -> Hit:
    title = text.splitlines()[0].lstrip("# ").strip()
    return Hit(f"{source}#0", source, text, source, None, 0, 1, 0.7, heading_path=[title], vector_score=0.7)


class NotesKB:
    """A library of four notes: a search returns the note whose title the query names first."""

    def __init__(self) -> None:
        self.config = Config()
        self.hits = [
            _hit("scarlet.md", SCARLET),
            _hit("green.md", GREEN),
            _hit("hyacinth.md", HYACINTH),
            _hit("kea.md", KEA),
        ]
        self.queries: list[str] = []

    def search(self, query, top_k=None, scope=None):
        self.queries.append(query)
        named = [h for h in self.hits if h.heading_path[0].split(" (")[0].lower() in query.lower()]
        return named + [h for h in self.hits if h not in named]

    def is_empty(self) -> bool:
        return False


def _ask(question: str, options: list[str]) -> tuple[list, Answer, Conversation, NotesKB]:
    kb = NotesKB()
    conv = Conversation(subject_options=list(options))
    events = list(Assistant(kb, None, kb.config).ask(question, conv))
    return events, events[-1], conv, kb


def test_a_followup_to_an_open_photo_answers_from_each_candidates_note_then_asks_which():
    events, answer, conv, kb = _ask("Where does it live?", ["Scarlet Macaw", "Green-winged Macaw"])
    assert isinstance(answer, Answer) and not answer.refused
    assert "- If it is the Scarlet Macaw: Southern Mexico to the Amazon basin [1]" in answer.text
    assert (
        "- If it is the Green-winged Macaw: Forests of northern and central South America [2]" in answer.text
    )
    assert answer.text.startswith(
        "The photo could be any of these in your notes: Scarlet Macaw, Green-winged"
    )
    assert answer.text.endswith("Which one is it?")
    assert [(c.n, c.source) for c in answer.citations] == [(1, "scarlet.md"), (2, "green.md")]
    route = events[0]
    assert isinstance(route, RouteDecided) and route.use_rag and route.is_followup
    assert [e.query for e in events if isinstance(e, Retrieved)] == kb.queries
    assert kb.queries == ["Where does Scarlet Macaw live", "Where does Green-winged Macaw live"]
    assert conv.subject_options == ["Scarlet Macaw", "Green-winged Macaw"]  # still open: asked which
    assert conv.history[-1]["content"] == answer.text


def test_a_candidate_whose_note_lacks_the_fact_is_said_to_lack_it_in_the_questions_language():
    _events, answer, _conv, _kb = _ask("它吃什么？", ["Green-winged Macaw", "Scarlet Macaw"])
    assert answer.text.startswith("照片可能是你笔记中的以下任何一种：Green-winged Macaw, Scarlet Macaw。")
    assert "- 如果是Green-winged Macaw：它的笔记没有提到它吃什么。 [1]" in answer.text
    assert "- 如果是Scarlet Macaw：Seeds, nuts and fruit. [2]" in answer.text
    assert answer.text.endswith("是哪一种？") and [c.source for c in answer.citations] == [
        "green.md",
        "scarlet.md",
    ]


def test_only_the_first_candidates_are_answered_and_every_one_is_named():
    options = ["Hyacinth Macaw", "Scarlet Macaw", "Green-winged Macaw", "Kea"]
    _events, answer, _conv, kb = _ask("How big is it?", options)
    assert len(kb.queries) == MAX_SUBJECT_OPTIONS == 3
    assert "Hyacinth Macaw, Scarlet Macaw, Green-winged Macaw, Kea." in answer.text
    items = [line for line in answer.text.splitlines() if line.startswith("- ")]
    assert items == [
        "- If it is the Hyacinth Macaw: about 100 cm. [1]",
        "- If it is the Scarlet Macaw: about 85 cm. [2]",
        "- If it is the Green-winged Macaw: about 95 cm. [3]",
    ]


def test_a_candidate_without_a_note_is_said_to_have_none_and_no_notes_at_all_is_a_refusal():
    _events, answer, _conv, _kb = _ask("Where does it live?", ["bee eater", "Kea"])
    assert "- If it is the bee eater: no note about it was found." in answer.text
    assert "- If it is the Kea: Southern Alps of New Zealand [1]" in answer.text
    assert not answer.refused and [c.source for c in answer.citations] == ["kea.md"]
    _events, none, _conv, _kb = _ask("Where does it live?", ["bee eater"])
    assert none.refused and none.citations == []


def test_a_question_of_no_fact_kind_quotes_only_a_line_that_answers_it():
    _events, answer, _conv, _kb = _ask("Is it endangered?", ["Scarlet Macaw", "Kea"])
    assert "- If it is the Scarlet Macaw: its note does not seem to answer this." in answer.text
    assert answer.refused  # neither note says: nothing is quoted
