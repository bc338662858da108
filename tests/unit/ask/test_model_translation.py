"""The fourth lever of reading the other language (issue 43): with a model, the question is searched
again as the model translates it into the library's other language (RAGFlow's cross-language search),
over a real index (bundled MiniLM, Chroma, the keyword index)."""

from __future__ import annotations

import pytest

from desktop_app.core.ask.assistant import Assistant, Conversation
from desktop_app.core.ask.router import translate_query
from desktop_app.core.config import Config
from desktop_app.core.events import Answer, Retrieved
from desktop_app.core.library.knowledge import KnowledgeBase
from desktop_app.core.models.llm.base import LLMError

# A Chinese leaflet whose English words ("ibuprofen", "box") are on no page: only the Chinese finds it.
LEAFLET = "# 布洛芬缓释胶囊说明书\n\n【规格】每粒0.3克。\n\n【包装】铝塑板包装，每盒20粒。\n"
RECIPE = "# Carbonara\n\nServes 4. Use 400 g of spaghetti and 150 g of guanciale.\n"


class Translator:
    """Routes to the passages, translates the query as told, answers citing the first passage."""

    name = "scripted"
    context_window = 4096

    def __init__(self, translation: str = "布洛芬 一盒 多少粒") -> None:
        self.translation = translation
        self.asked: list[str] = []  # the queries it was asked to translate

    def stream(self, messages, json_schema=None, max_tokens=None, temperature=None, cancel=None, timeout=None):
        if json_schema:
            query = messages[-1]["content"].rstrip("?")
            yield f'{{"kind": "passages", "is_followup": false, "use_rag": true, "search_query": "{query}"}}'
        elif messages[0]["content"].startswith("Translate the user's search query"):
            self.asked.append(messages[-1]["content"])
            yield f'"{self.translation}"\n'
        else:
            yield "20 [1]."

    def close(self) -> None:
        pass


def _kb(tmp_path, minilm, files: dict[str, str]) -> KnowledgeBase:
    kb = KnowledgeBase(tmp_path / "data", config=Config(), embedder=minilm)
    for name, text in files.items():
        (kb.knowledge_dir / name).write_text(text, encoding="utf-8")
    assert not kb.sync().failed
    return kb


def _ask(kb: KnowledgeBase, model: Translator, question: str) -> tuple[Retrieved, Answer]:
    events = list(Assistant(kb, model, kb.config).ask(question, Conversation()))
    return next(e for e in events if isinstance(e, Retrieved)), next(e for e in events if isinstance(e, Answer))


def test_an_english_question_is_searched_in_chinese_too_as_the_model_translates_it(tmp_path, minilm):
    kb = _kb(tmp_path, minilm, {"ibuprofen.md": LEAFLET, "carbonara.md": RECIPE})
    try:
        model = Translator()
        retrieved, answer = _ask(kb, model, "How many capsules come in one box of the ibuprofen?")
        assert model.asked == ["How many capsules come in one box of the ibuprofen"]
        assert retrieved.hits[0].source == "ibuprofen.md"
        assert answer.citations and answer.citations[0].source == "ibuprofen.md"
        # Turned off, the model is not asked and the dictionary alone bridges the languages.
        kb.config.retrieval.model_translate = False
        off = Translator()
        _ask(kb, off, "How many capsules come in one box of the ibuprofen?")
        assert off.asked == []
    finally:
        kb.close()


def test_a_library_of_the_questions_language_only_never_calls_the_model_to_translate(tmp_path, minilm):
    kb = _kb(tmp_path, minilm, {"carbonara.md": RECIPE})
    try:
        model = Translator()
        _ask(kb, model, "How much spaghetti for four?")
        assert model.asked == []
    finally:
        kb.close()


class Failing:
    def stream(self, messages, **kwargs):
        raise LLMError("the server went away", "connection")
        yield ""


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('"一盒有多少粒布洛芬"\n(This asks how many capsules.)', "一盒有多少粒布洛芬"),
        ("How many capsules", ""),  # nothing new: the query as asked
        ("", ""),
    ],
)
def test_the_translation_is_its_first_line_unquoted(reply, expected):
    class Reply:
        def stream(self, messages, **kwargs):
            yield reply

    assert translate_query(Reply(), "How many capsules", "zh") == expected


def test_a_failed_model_leaves_the_query_as_asked():
    assert translate_query(Failing(), "How many capsules", "zh") == ""
