"""The question read once (core/ask/question.py): its language, kind and subject reach the router,
the prompts and the extractive answerer, which no longer work them out of the bare string."""

from __future__ import annotations

import sys

import pytest

from desktop_app.core.ask import prompts
from desktop_app.core.ask.assistant import Assistant, Conversation
from desktop_app.core.ask.budget import ContextBlock
from desktop_app.core.ask.extractive import extractive_answer
from desktop_app.core.ask.question import Question
from desktop_app.core.ask.router import Router
from desktop_app.core.config import Config
from desktop_app.core.events import Answer
from desktop_app.core.library import languages
from desktop_app.core.library.documents import Hit

KEA = (
    "# Kea (Nestor notabilis)\n\nChinese: 啄羊鹦鹉.\n\n**Colours:** Olive green body; bright orange red under the "
    "wings.\n\n**Where and size:** Southern Alps of New Zealand; about 48 cm."
)
KAKAPO = (
    "# Kakapo (Strigops habroptilus)\n\n**Where and size:** New Zealand; critically endangered; about 60 cm."
)
GREY = (
    "# African Grey Parrot\n\nAfrican grey parrots eat palm nuts, seeds and fruit. They sometimes eat snails."
)


def _hit(source: str, text: str, score: float = 0.8) -> Hit:
    title = text.splitlines()[0].lstrip("# ").strip()
    return Hit(
        f"{source}#0", source, text, source, None, 0, 1, score, heading_path=[title], vector_score=score
    )


def _note(n: int, source: str, text: str) -> ContextBlock:
    return ContextBlock(n, _hit(source, text), text)


class FakeKB:
    """A library that returns the same hits for every search."""

    def __init__(self, hits: list[Hit]) -> None:
        self.config = Config()
        self.hits = hits

    def search(self, query, top_k=None, scope=None):
        return list(self.hits)

    def is_empty(self) -> bool:
        return False


class ScriptedModel:
    """Routes every question to the documents and answers "Palm nuts [1]."; records the prompts."""

    name = "scripted"
    context_window = 4096

    def __init__(self) -> None:
        self.sent: list[list[dict]] = []

    def stream(
        self, messages, json_schema=None, max_tokens=None, temperature=None, cancel=None, timeout=None
    ):
        self.sent.append(messages)
        yield (
            '{"is_followup": false, "use_rag": true, "search_query": "kea"}'
            if json_schema
            else "Palm nuts [1]."
        )

    def close(self) -> None:
        pass


# The kakapo's note ranks first: only the subject tells the answerer the kea's is meant.
PARROT_HITS = [_hit("kakapo.md", KAKAPO, 0.7), _hit("kea.md", KEA, 0.6)]


def _count_language_reads(monkeypatch: pytest.MonkeyPatch, text: str) -> list[str]:
    """Every call of ``question_lang`` on ``text``, wherever the function was imported to."""
    real = languages.question_lang
    calls: list[str] = []

    def counting(arg: str) -> str:
        if arg == text:
            calls.append(arg)
        return real(arg)

    for module in list(sys.modules.values()):
        ours = (module.__name__ or "").startswith("desktop_app")
        if ours and getattr(module, "question_lang", None) is real:
            monkeypatch.setattr(module, "question_lang", counting)
    return calls


@pytest.mark.parametrize("with_model", [False, True], ids=["extractive", "llm"])
def test_one_ask_reads_the_questions_language_once(monkeypatch, with_model):
    question = "What do African grey parrots eat?"
    calls = _count_language_reads(monkeypatch, question)
    kb = FakeKB([_hit("grey.md", GREY)])
    kb.config.router.decisive_hit_score = 0  # the model routes too: its prompt needs the language
    model = ScriptedModel() if with_model else None
    answers = [e for e in Assistant(kb, model, kb.config).ask(question) if isinstance(e, Answer)]
    assert answers and answers[-1].citations
    assert len(calls) == 1


def test_the_router_prompt_takes_the_questions_language_as_read():
    model = ScriptedModel()
    # A language the text alone would not give: the prompt follows the value, not a second reading.
    Router(model).route(Question("Kea 在哪里", "en", "range"))
    assert model.sent[0][0]["content"] == prompts.ROUTER_SYSTEM["en"]
    Router(model).route("Kea 在哪里")  # a bare string is still read (older callers)
    assert model.sent[1][0]["content"] == prompts.ROUTER_SYSTEM["zh"]


def test_the_questions_subject_picks_the_note_the_answer_quotes():
    blocks = [_note(1, "kakapo.md", KAKAPO), _note(2, "kea.md", KEA)]
    ex = extractive_answer(Question.read("How big is it?", subject="Kea"), blocks)
    assert ex.lead == "Kea: about 48 cm." and ex.cited == [2]
    bare = extractive_answer("How big is it?", blocks)  # no subject: nothing says the kea is meant
    assert bare.lead != ex.lead


def test_a_followup_after_a_named_species_is_answered_from_its_size_line(monkeypatch):
    import desktop_app.core.ask.assistant as assistant_module

    read: list[Question] = []
    real = assistant_module.extractive_answer

    def spy(question, *args, **kwargs):
        read.append(question)
        return real(question, *args, **kwargs)

    monkeypatch.setattr(assistant_module, "extractive_answer", spy)
    kb = FakeKB(PARROT_HITS)
    assistant = Assistant(kb, None, Config())
    conv = Conversation()
    list(assistant.ask("Where does the kea live?", conversation=conv))
    assert conv.last_subject == "Kea" and read[-1].kind == "range" and read[-1].subject == "Kea"
    answer = [e for e in assistant.ask("how big is it?", conversation=conv) if isinstance(e, Answer)][-1]
    assert (read[-1].kind, read[-1].subject, read[-1].language) == ("size", "Kea", "en")
    assert "Kea: about 48 cm. [2]" in answer.text and [c.source for c in answer.citations] == ["kea.md"]


def test_the_words_searched_pick_the_note_before_a_subject_title_two_notes_share():
    grey = (
        "# African Grey Parrot (Psittacus erithacus)\n\nChinese: 非洲灰鹦鹉. Gallery label: jako_grey.\n\n"
        "**Where and size:** Central African forests; about 33 cm; famous for talking."
    )
    pale = (
        "# African Grey Parrot (pale-grey set) (Psittacus erithacus)\n\nChinese: 非洲灰鹦鹉（浅灰）. "
        "Gallery label: jako_white.\n\n**Where and size:** The gallery keeps these photos as a separate label."
    )
    blocks = [_note(1, "pale.md", pale), _note(2, "grey.md", grey)]
    q = Question.read("Where does it live?", subject="African Grey Parrot")
    ex = extractive_answer(q, blocks, about="Where does jako grey live")  # the photo's gallery label
    assert ex.lead.startswith("African Grey Parrot: Central African forests") and ex.cited == [2]
