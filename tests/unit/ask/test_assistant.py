"""Assistant.ask: the event stream, citations, conversation state, fallbacks and agentic mode.
Retrieval is a hand-made list of hits; chat models are scripted in Python."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from desktop_app.core.ask.assistant import Assistant, Conversation
from desktop_app.core.ask.budget import fit_blocks
from desktop_app.core.ask.citations import check_citations, parse_citations, strip_citations
from desktop_app.core.ask.conversation import topic_of
from desktop_app.core.config import Config
from desktop_app.core.events import Answer, Error, Retrieved, RouteDecided, Token, Warning
from desktop_app.core.library.documents import Hit
from desktop_app.core.models.llm.base import ChatTurn, LLMError, ToolCall
from desktop_app.core.tasks import SimpleTask

HITS = [
    Hit(
        "a-chunk-0",
        "a",
        "African grey parrots eat palm nuts, seeds and fruit. They sometimes eat snails.",
        "parrots/african-grey.md",
        None,
        0,
        3,
        0.82,
        vector_score=0.82,
    ),
    Hit(
        "b-chunk-2",
        "b",
        "The scarlet macaw lives in humid evergreen forests of South America.",
        "macaw.pdf",
        7,
        2,
        5,
        0.61,
        vector_score=0.61,
    ),
]


class FakeKB:
    def __init__(self, hits=HITS, fail: bool = False) -> None:
        self.config = Config()
        self.hits = hits
        self.fail = fail
        self.queries: list[tuple[str, str | None]] = []

    def search(self, query, top_k=None, scope=None):
        self.queries.append((query, scope))
        if self.fail:
            raise RuntimeError("index is locked")
        return list(self.hits)

    def is_empty(self) -> bool:
        return False


class Model:
    """Streams a scripted answer; the router's JSON requests get ``route``."""

    name = "scripted"
    context_window = 4096

    def __init__(
        self,
        answer="Palm nuts and seeds [1].",
        route='{"is_followup": false, "use_rag": true, "search_query": "African grey parrot food"}',
        fail_after: int | None = None,
    ) -> None:
        self.answer, self.route, self.fail_after = answer, route, fail_after
        self.sent: list[list[dict]] = []

    def stream(
        self, messages, json_schema=None, max_tokens=None, temperature=None, cancel=None, timeout=None
    ):
        if json_schema is not None:
            yield self.route
            return
        self.sent.append(messages)
        for i, word in enumerate(self.answer.split(" ")):
            if self.fail_after is not None and i >= self.fail_after:
                raise LLMError("the connection to the language model was lost mid-answer", "protocol")
            if cancel is not None and cancel.cancelled():
                from desktop_app.core.tasks import Cancelled

                raise Cancelled()
            yield word if i == 0 else " " + word

    def close(self) -> None:
        pass


def run(assistant, question, **kw):
    events = list(assistant.ask(question, **kw))
    answers = [e for e in events if isinstance(e, Answer)]
    return events, answers[-1] if answers else None


def test_llm_answer_streams_tokens_and_maps_citations_to_file_and_page():
    kb = FakeKB()
    kb.config.router.decisive_hit_score = 0  # the model routes (its search_query is checked)
    assistant = Assistant(kb, Model(answer="Palm nuts [1]; macaws live in forests [2]."), kb.config)
    events, answer = run(assistant, "What do African grey parrots eat?")
    kinds = [type(e).__name__ for e in events]
    assert kinds[:2] == ["RouteDecided", "Retrieved"] and kinds[-1] == "Answer" and "Token" in kinds
    assert events[0].by == "llm" and kb.queries == [("African grey parrot food", None)]
    assert "".join(e.text for e in events if isinstance(e, Token)) == answer.text
    assert [(c.n, c.source, c.page) for c in answer.citations] == [
        (1, "parrots/african-grey.md", None),
        (2, "macaw.pdf", 7),
    ]
    assert answer.citations[1].chunk_id == "b-chunk-2"


def test_the_prompt_holds_numbered_blocks_and_the_answer_only_instruction():
    kb = FakeKB()
    model = Model()
    list(Assistant(kb, model, kb.config).ask("What do African grey parrots eat?"))
    system = model.sent[-1][0]["content"]
    assert "[1] parrots/african-grey.md\nAfrican grey parrots eat" in system
    assert "[2] macaw.pdf, p. 7\n" in system
    # The fixed instructions and example come first (llama.cpp reuses them), the passages after.
    assert system.startswith("Answer the question from the numbered passages below")
    assert system.index("A: April 1865 [2]") < system.index("Passages:\n[1] parrots/african-grey.md")
    assert model.sent[-1][-1] == {"role": "user", "content": "What do African grey parrots eat?"}


@pytest.mark.parametrize(
    "reply, text, cited",
    [
        # Copied from passage 1 but unmarked: cited for it.
        ("palm nuts, seeds and fruit", "palm nuts, seeds and fruit [1]", [1]),
        ("Humid evergreen forests.", "Humid evergreen forests. [2]", [2]),
        ("Mostly nuts and fruit.", "Mostly nuts and fruit.", []),  # reworded: nothing is claimed
        ("Seeds [2].", "Seeds [2].", [2]),  # the model's own marker stands
    ],
)
def test_an_unmarked_answer_copied_from_a_passage_cites_it(reply, text, cited):
    kb = FakeKB()
    events, answer = run(Assistant(kb, Model(answer=reply), kb.config), "What do parrots eat?", mode="always")
    assert answer.text == text and [c.n for c in answer.citations] == cited


def test_no_llm_gives_an_extractive_answer_with_the_note_and_citations():
    kb = FakeKB()
    events, answer = run(Assistant(kb, None, kb.config), "What do African grey parrots eat?")
    assert answer.by == "extractive"
    assert answer.text.startswith("No language model is configured; these are the most relevant passages.")
    assert answer.citations and answer.citations[0].source == "parrots/african-grey.md"
    assert not any(isinstance(e, Token) for e in events)


def test_no_llm_and_small_talk_says_what_it_can_do_without_searching():
    kb = FakeKB()
    events, answer = run(Assistant(kb, None, kb.config), "你好")
    assert answer.text.startswith("未配置语言模型") and kb.queries == []
    assert not any(isinstance(e, Retrieved) for e in events)


def test_followup_uses_the_conversations_last_subject():
    kb = FakeKB()
    assistant = Assistant(kb, None, kb.config)
    conv = Conversation(last_subject="scarlet macaw")
    events, _ = run(assistant, "Where does it live?", conversation=conv)
    route = events[0]
    assert isinstance(route, RouteDecided) and route.is_followup
    assert kb.queries[0][0] == "Where does scarlet macaw live"


def test_text_followups_fall_back_to_the_last_search_topic():
    kb = FakeKB()
    assistant = Assistant(kb, None, kb.config)
    run(assistant, "Tell me about kakapos")
    assert assistant.conversation.last_query == "kakapos"
    run(assistant, "What do they eat?")
    assert kb.queries[-1][0] == "What do kakapos eat"
    assert len(assistant.conversation.history) == 4


def test_mode_never_answers_without_retrieval():
    kb = FakeKB()
    model = Model(answer="Hello!")
    events, answer = run(Assistant(kb, model, kb.config), "What do parrots eat?", mode="never")
    assert events[0].by == "mode" and not events[0].use_rag
    assert kb.queries == [] and answer.text == "Hello!" and answer.citations == []


def test_llm_failure_mid_answer_falls_back_to_extractive_with_a_warning():
    kb = FakeKB()
    events, answer = run(
        Assistant(kb, Model(answer="one two three four", fail_after=2), kb.config), "What do parrots eat?"
    )
    warning = next(e for e in events if isinstance(e, Warning))
    assert "lost mid-answer" in str(warning.message) and "(mid-answer)" in str(warning.message)
    assert answer.by == "extractive" and answer.citations


def test_llm_failure_on_a_no_retrieval_route_still_searches_for_passages():
    kb = FakeKB()
    model = Model(
        route='{"is_followup": false, "use_rag": false, "search_query": ""}', answer="x", fail_after=0
    )
    events, answer = run(Assistant(kb, model, kb.config), "Tell me something about parrots")
    assert any(isinstance(e, Retrieved) for e in events) and answer.by == "extractive"


def test_search_failure_is_a_warning_not_a_crash():
    kb = FakeKB(fail=True)
    events, answer = run(
        Assistant(kb, Model(answer="The documents do not say."), kb.config), "What do parrots eat?"
    )
    assert any(isinstance(e, Warning) and "index is locked" in str(e.message) for e in events)
    assert answer.text == "The documents do not say."


def test_cancel_mid_answer_keeps_the_partial_text():
    kb = FakeKB()
    task = SimpleTask()
    assistant = Assistant(kb, Model(answer="a b c d e f"), kb.config)
    got = []
    for ev in assistant.ask("What do parrots eat?", cancel=task):
        got.append(ev)
        if isinstance(ev, Token) and len([e for e in got if isinstance(e, Token)]) == 2:
            task.cancel()
    assert any(isinstance(e, Warning) and str(e.message) == "stopped" for e in got)
    assert isinstance(got[-1], Answer) and got[-1].text == "a b"


def test_a_small_window_fits_fewer_blocks():
    long_hits = [
        Hit(f"d{i}-chunk-0", f"d{i}", "parrot facts. " * 150, f"d{i}.md", None, 0, 1, 0.9) for i in range(4)
    ]
    kb = FakeKB(hits=long_hits)
    model = Model(answer="ok [1]")
    model.context_window = 1024
    kb.config.llm.max_tokens = 256
    list(Assistant(kb, model, kb.config).ask("What are parrot facts?"))
    system = model.sent[-1][0]["content"]
    assert "[1] d0.md" in system and "[3] d2.md" not in system


def test_empty_question_is_an_error_event():
    kb = FakeKB()
    assert isinstance(next(iter(Assistant(kb, None, kb.config).ask("  "))), Error)


def test_citation_parsing_accepts_lists_and_fullwidth_brackets():
    blocks = fit_blocks(HITS, 2000)
    assert parse_citations("a [1, 2] b 【2】 c [9] [1]", blocks) == ([1, 2], [9])
    assert strip_citations("x [1, 9] y [9].", [9]) == "x [1] y."
    assert topic_of("What do African grey parrots eat?") == "African grey parrots eat"


def test_check_citations_drops_out_of_range_numbers_with_one_warning():
    blocks = fit_blocks(HITS, 2000)
    text, citations, warning = check_citations("Nuts [1] and snails [2, 9].", blocks)
    assert text == "Nuts [1] and snails [2]." and [c.n for c in citations] == [1, 2]
    assert warning is not None and "[9]" in str(warning.message) and "2 source blocks were given" in str(warning.message)
    assert check_citations("Nuts [1].", blocks)[2] is None


class ToolModel(Model):
    def __init__(self, calls_first: bool = True) -> None:
        super().__init__()
        self.turns: list[list[dict]] = []
        self.calls_first = calls_first

    def chat(self, messages, tools, max_tokens=None, temperature=None, cancel=None):
        self.turns.append(list(messages))
        assert tools[0]["function"]["name"] == "search_knowledge"
        if self.calls_first and len(self.turns) == 1:
            return ChatTurn("", [ToolCall("c1", "search_knowledge", {"query": "grey parrot diet"})])
        return ChatTurn("They eat palm nuts [1] and live long [7].")


def test_agentic_mode_lets_the_model_call_search_knowledge():
    kb = FakeKB()
    kb.config.llm.agentic = True
    model = ToolModel()
    events, answer = run(Assistant(kb, model, kb.config), "What do grey parrots eat?")
    route = events[0]
    assert (
        isinstance(route, RouteDecided) and route.by == "agent" and route.search_query == "grey parrot diet"
    )
    assert kb.queries == [("grey parrot diet", None)]
    tool_msg = model.turns[1][-1]
    assert tool_msg["role"] == "tool" and tool_msg["content"].startswith("[1] parrots/african-grey.md")
    assert [c.n for c in answer.citations] == [1]
    assert any(isinstance(e, Warning) and "[7]" in str(e.message) for e in events)


def test_agentic_mode_answers_directly_when_the_model_does_not_search():
    kb = FakeKB()
    kb.config.llm.agentic = True
    events, answer = run(Assistant(kb, ToolModel(calls_first=False), kb.config), "hi")
    assert events[0].use_rag is False and kb.queries == []
    assert answer.by == "llm"


@pytest.mark.parametrize("agentic", [False, True])
def test_agentic_is_off_by_default_and_on_by_config(agentic):
    kb = FakeKB()
    kb.config.llm.agentic = agentic
    events, _ = run(Assistant(kb, ToolModel(), kb.config), "What do grey parrots eat?")
    assert (events[0].by == "agent") is agentic


def test_latency_bench_reports_first_token_for_both_modes():
    from kdesk_lab.latency import run_latency_bench

    kb = FakeKB()
    desk = SimpleNamespace(
        assistant=Assistant(kb, Model(answer="Palm nuts [1]."), kb.config)
    )  # only .assistant
    report = run_latency_bench(desk, ["What do parrots eat?"], runs=1)
    for mode in ("always", "auto"):
        assert report[mode]["first_token_ms_p50"] <= report[mode]["answer_ms_p50"]
        assert report[mode]["answers_by"] == ["llm"]


@pytest.mark.parametrize(
    ("backend", "context", "whole"),
    [
        ("gguf", "auto", False),
        ("openai", "auto", True),
        ("openai", "sentences", False),
        ("gguf", "passages", True),
    ],
)
def test_a_local_model_reads_the_best_sentences_of_each_passage(backend, context, whole):
    """The in-process model's CPU reads ~40-50 prompt tokens a second: it gets the sentences that
    match the question, each still numbered by its passage, instead of whole passages."""
    filler = " ".join(f"Sentence {i} is about the weather in the valley that year." for i in range(20))
    hits = [
        Hit(
            "a-chunk-0",
            "a",
            f"{filler} African grey parrots eat palm nuts and seeds. {filler}",
            "parrots/african-grey.md",
            None,
            0,
            3,
            0.82,
            vector_score=0.82,
        ),
        HITS[1],
    ]
    kb = FakeKB(hits)
    kb.config.llm.backend, kb.config.llm.context = backend, context
    model = Model(answer="Palm nuts and seeds [1].")
    events, answer = run(Assistant(kb, model, kb.config), "What do African grey parrots eat?", mode="always")
    prompt = model.sent[0][0]["content"]
    assert "African grey parrots eat palm nuts and seeds." in prompt
    assert ("Sentence 19 is about the weather" in prompt) is whole
    assert [(c.n, c.source) for c in answer.citations] == [(1, "parrots/african-grey.md")]
    assert answer.citations[0].text.startswith("Sentence 0")  # the citation keeps the whole chunk


def test_an_answer_that_is_only_a_citation_falls_back_to_the_passages():
    """Qwen-1.5B answered "When was Coolidge born?" with "[1]" alone: not an answer."""
    kb = FakeKB()
    events, answer = run(
        Assistant(kb, Model(answer="[1]"), kb.config), "What do African grey parrots eat?", mode="always"
    )
    warnings = [str(e.message) for e in events if isinstance(e, Warning)]
    assert any("citation only" in str(w) for w in warnings)
    assert answer.by == "extractive" and "palm nuts" in answer.text and answer.citations


@pytest.mark.parametrize(
    ("passages", "read"), [(3, ["[1]", "[2]", "[3]"]), (0, ["[1]", "[2]", "[3]", "[4]", "[5]"])]
)
def test_a_local_model_reads_only_the_top_passages(passages, read):
    """Every passage the model reads costs it prompt time: in sentences mode it reads the top
    ``llm.context_passages`` (0: all), each cut to its best sentences."""
    hits = [
        Hit(
            f"c{i}",
            f"d{i}",
            f"Parrot fact {i}: parrots eat seeds of tree {i}.",
            f"p{i}.md",
            None,
            0,
            1,
            0.8 - i / 20,
        )
        for i in range(5)
    ]
    kb = FakeKB(hits)
    kb.config.llm.backend, kb.config.llm.context_passages = "gguf", passages
    kb.config.llm.context_sentences = 6  # one a passage
    model = Model(answer="Seeds [1].")
    run(Assistant(kb, model, kb.config), "What do parrots eat?", mode="always")
    prompt = model.sent[0][0]["content"]
    assert [f"[{n}]" for n in range(1, 6) if f"[{n}] p" in prompt] == read


def test_the_conversations_system_prompt_and_temperature_reach_the_language_model():
    class Recording(Model):
        def stream(self, messages, json_schema=None, max_tokens=None, temperature=None, **kw):
            if json_schema is None:
                self.temperatures.append(temperature)
            return super().stream(messages, json_schema, max_tokens, temperature, **kw)

    kb = FakeKB()
    model = Recording()
    model.temperatures = []
    conv = Conversation(system_prompt="Answer like a pirate.", temperature=0.9)
    list(Assistant(kb, model, kb.config).ask("What do African grey parrots eat?", conversation=conv))
    system = model.sent[-1][0]
    assert system["role"] == "system" and system["content"].startswith("Answer like a pirate.\n\n")
    assert model.temperatures[-1] == 0.9
    list(Assistant(kb, model, kb.config).ask("What do African grey parrots eat?"))  # a chat without its own
    assert "pirate" not in model.sent[-1][0]["content"] and model.temperatures[-1] is None


@pytest.mark.parametrize(
    ("answer", "cited"),
    [
        ("75毫升", 2),  # the passage's "75 ml" in the question's language
        ("The Ming moved their capital to Beijing in 1421.", 1),
        ("£12,570", 2),  # "12570" and "12,570" are one figure
        ("About 80 ml.", None),  # a figure no passage holds: nothing is claimed
        ("Mostly nuts and fruit.", None),  # no figure
        ("In 1421 " + "the court moved north " * 10, None),  # long: a model's own account
    ],
)
def test_a_short_answer_is_cited_for_the_passage_holding_its_every_figure(answer, cited):
    from desktop_app.core.ask.assistant import figures_in
    from desktop_app.core.ask.budget import ContextBlock

    texts = ["In 1421 the Yongle Emperor moved the capital to Beijing.", "Use about 75 ml; allowance 12570."]
    blocks = [ContextBlock(i, HITS[0], t) for i, t in enumerate(texts, 1)]
    assert figures_in(answer, blocks) == cited
