"""Refusing on weak evidence and follow-ups that keep the subject, through a real KnowledgeBase
(bundled MiniLM, Chroma, BM25) and the real Assistant."""

from __future__ import annotations

import pytest

from desktop_app.core.ask.assistant import Assistant, Conversation
from desktop_app.core.ask.conversation import key_terms
from desktop_app.core.ask.evidence import judge, question_terms
from desktop_app.core.ask.prompts import says_not_in_context
from desktop_app.core.config import Config
from desktop_app.core.events import Answer, Retrieved
from desktop_app.core.library.knowledge import KnowledgeBase

# The refusal, written in the question's language (catalogue message ask.not_answered).
REFUSAL = {
    "en": "Your documents do not seem to answer this. The nearest passages are listed as related.",
    "zh": "你的文档似乎没有回答这个问题。下面列出的是最接近的相关段落。",
}
DOCS = {
    "lincoln.md": "# Abraham Lincoln\n\nAbraham Lincoln was the 16th President of the United States. "
    "He issued the Emancipation Proclamation on January 1, 1863, during the Civil War. "
    "Lincoln married Mary Todd in 1842; they had four sons.",
    "vicksburg.md": "# Siege of Vicksburg\n\nThe siege of Vicksburg ended on July 4, 1863, when "
    "Confederate forces surrendered to General Ulysses S. Grant after forty-seven days.",
    "macaw.md": "# Scarlet macaw\n\nThe scarlet macaw has red, yellow and blue plumage. It lives in "
    "humid evergreen forests of Central and South America and eats fruit, nuts and seeds.",
    "kakapo.md": "# Kakapo\n\nThe kakapo is a flightless, nocturnal parrot of New Zealand. Fewer than "
    "250 kakapo are alive today; each one is named and tracked by rangers.",
    "xu.md": "# 徐夫人\n\n徐夫人最先嫁给了陆尚，陆尚死后改嫁孙权。她生有两个儿子。",
    "macaw-zh.md": "# 金刚鹦鹉\n\n金刚鹦鹉的羽毛颜色鲜艳，生活在美洲的热带雨林，以种子和果实为食。",
    "qing.md": "# 清宁年间\n\n清宁五年，辽道宗下诏修订律令。清宁九年，皇太叔耶律重元发动叛乱。",
}


@pytest.fixture(scope="module")
def kb(tmp_path_factory, minilm):
    kb = KnowledgeBase(tmp_path_factory.mktemp("kb") / "data", config=Config(), embedder=minilm)
    for name, text in DOCS.items():
        (kb.knowledge_dir / name).write_text(text, encoding="utf-8")
    assert not kb.sync().failed
    yield kb
    kb.close()


def answer_of(events) -> Answer:
    return next(e for e in events if isinstance(e, Answer))


def test_question_terms_leave_out_question_words():
    assert set(question_terms("徐夫人最先嫁给了谁？")) >= {"徐夫人", "嫁给"}
    assert not set(question_terms("徐夫人最先嫁给了谁？")) & {"谁", "了谁"}
    assert set(question_terms("Who wrote the Emancipation Proclamation?")) == {"wrote", "emancip", "proclam"}


def test_coverage_is_weighted_by_rarity(kb):
    texts = [DOCS["lincoln.md"]]
    held = judge("When did Lincoln issue the Emancipation Proclamation?", texts, kb.keyword.doc_freq)
    lacking = judge("What was Lincoln's favourite ice cream flavour?", texts, kb.keyword.doc_freq)
    assert held.coverage > 0.9 and held.passage == 0
    assert lacking.coverage < 0.4  # only "Lincoln" of four rare terms
    assert judge("anything?", [], kb.keyword.doc_freq).coverage == 0.0


@pytest.mark.parametrize(
    ("question", "source"),
    [
        ("When did Lincoln issue the Emancipation Proclamation?", "lincoln.md"),
        ("What does the scarlet macaw eat?", "macaw.md"),
        ("徐夫人最先嫁给了谁？", "xu.md"),
        ("金刚鹦鹉生活在哪里？", "macaw-zh.md"),
    ],
)
def test_answerable_questions_are_answered_and_cited(kb, question, source):
    answer = answer_of(Assistant(kb, None).ask(question))
    assert not answer.refused and not answer.related
    assert source in [c.source for c in answer.citations]


@pytest.mark.parametrize(
    ("question", "lang"),
    [
        ("What was Abraham Lincoln's favourite ice cream flavour?", "en"),  # on the subject
        ("How many moons does Jupiter have?", "en"),  # off-topic
        ("北京明天的天气怎么样？", "zh"),
        ("量子计算机如何纠错？", "zh"),
    ],
)
def test_unanswerable_questions_are_refused_with_related_passages(kb, question, lang):
    events = list(Assistant(kb, None).ask(question))
    answer = answer_of(events)
    assert answer.refused and answer.citations == []  # nothing is claimed, so nothing is cited
    hits = next(e for e in events if isinstance(e, Retrieved)).hits
    if hits:  # else "no relevant passages were found"
        assert answer.text == REFUSAL[lang]
        assert [c.source for c in answer.related] == [h.source for h in hits[: len(answer.related)]]


def test_refusal_can_be_turned_off(kb):
    cfg = Config()
    cfg.answer.min_coverage = cfg.answer.min_similarity = cfg.answer.max_absent = 0.0
    answer = answer_of(Assistant(kb, None, config=cfg).ask("What was Abraham Lincoln's favourite ice cream?"))
    assert not answer.refused and answer.citations


def test_key_terms_keep_the_words_the_library_holds(kb):
    # "wrote" is on no page here, so it cannot help a follow-up find one.
    assert key_terms("Who wrote the Emancipation Proclamation and when", kb.keyword.doc_freq) == (
        "Emancipation Proclamation"
    )
    assert key_terms("徐夫人最先嫁给了谁", kb.keyword.doc_freq) == "徐夫人最先嫁给"  # never 谁 or 了
    assert key_terms("In 1863 the scarlet macaw", kb.keyword.doc_freq, most=2) == "scarlet macaw"  # 1863: two pages
    assert key_terms("Who won?", kb.keyword.doc_freq) == "won"  # nothing the library holds


@pytest.mark.parametrize(
    ("first", "second", "source"),
    [
        ("Who issued the Emancipation Proclamation?", "Who was his wife?", "lincoln.md"),
        ("Tell me about the siege of Vicksburg.", "When did it end?", "vicksburg.md"),
        ("徐夫人最先嫁给了谁？", "她后来又嫁给了谁？", "xu.md"),
    ],
)
def test_a_followup_searches_with_the_previous_subject(kb, first, second, source):
    assistant = Assistant(kb, None)
    conv = Conversation()
    list(assistant.ask(first, conv))
    events = list(assistant.ask(second, conv))
    retrieved = next(e for e in events if isinstance(e, Retrieved))
    assert retrieved.hits[0].source == source, retrieved.query
    assert not answer_of(events).refused


class ScriptedModel:
    context_window = 4096

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.calls = 0

    def stream(self, messages, max_tokens=None, cancel=None, **_):
        if messages[0]["content"].startswith("Translate the user's search query"):
            yield "林肯最喜欢的冰淇淋口味"  # the library holds Chinese: the question is searched in it too
            return
        self.calls += 1  # the answers it was asked for
        self.messages = messages
        yield self.reply


def test_the_llm_is_not_asked_when_the_evidence_is_weak(kb):
    model = ScriptedModel("Mint chocolate chip [1].")
    cfg = Config()
    cfg.router.mode = "always"
    answer = answer_of(
        Assistant(kb, model, config=cfg).ask("What was Lincoln's favourite ice cream flavour?")
    )
    assert answer.refused and answer.by == "evidence" and model.calls == 0
    assert answer.related


def test_an_llm_saying_the_context_lacks_the_answer_is_a_refusal(kb):
    cfg = Config()
    cfg.router.mode = "always"
    said = "The provided documents do not mention how many sons Lincoln's brother had."
    answer = answer_of(
        Assistant(kb, ScriptedModel(said), config=cfg).ask("When did Lincoln marry Mary Todd?")
    )
    assert answer.refused and answer.text == said and answer.related and not answer.citations
    cited = "Lincoln married Mary Todd in 1842 [1]."
    answer = answer_of(
        Assistant(kb, ScriptedModel(cited), config=cfg).ask("When did Lincoln marry Mary Todd?")
    )
    assert not answer.refused and answer.citations


@pytest.mark.parametrize(
    ("text", "refusal"),
    [
        ("The documents do not say what flavour he liked.", True),
        ("The context does not contain this information.", True),
        ("I cannot find that in the provided text.", True),
        ("文档中没有提到他喜欢的口味。", True),
        ("上下文中未提及此事。", True),
        ("根据资料，无法确定。", True),
        ("Lincoln married Mary Todd in 1842.", False),
        ("徐夫人最先嫁给了陆尚。", False),
        ("The macaw does not eat meat; it eats fruit and seeds.", False),
        ("The documents do not say. The passages are about parrots.", True),
        ("A: 文档中没有提到。", True),
        # An answer, then the prompt's refusal example echoed: answered.
        ("A: It eats palm nuts and seeds. The documents do not say how much.", False),
        ("它吃棕榈果和种子。\n文档中没有提到吃多少。", False),
        ("它吃棕榈果和种子。文档中没有提到吃多少。", False),
    ],
)
def test_says_not_in_context(text, refusal):
    assert says_not_in_context(text) is refusal


def test_the_model_is_told_to_answer_in_the_question_language_whatever_the_sources(kb):
    cfg = Config()
    cfg.router.mode = "always"
    model = ScriptedModel("林肯于1842年与玛丽·托德结婚 [1]。")
    answer = answer_of(Assistant(kb, model, config=cfg).ask("Lincoln 和 Mary Todd 哪一年结婚？"))
    assert "用中文" in model.messages[0]["content"] and "Mary Todd" in model.messages[0]["content"]
    assert answer.citations and answer.citations[0].source == "lincoln.md"
    model = ScriptedModel("She first married Lu Shang [1].")
    list(Assistant(kb, model, config=cfg).ask("Who did 徐夫人 marry first, and who after him?"))
    assert "in English" in model.messages[0]["content"]


def test_the_model_is_asked_to_translate_when_the_best_passage_is_in_the_other_language(kb):
    cfg = Config()
    cfg.router.mode = "always"
    model = ScriptedModel("现存不到250只 [1]。")
    answer_of(Assistant(kb, model, config=cfg).ask("kakapo 现存多少只？"))
    prompt = model.messages[0]["content"]
    assert prompt.split("段落：", 1)[1].startswith("\n[1] kakapo.md")
    assert "译成中文" in prompt and "照抄" not in prompt
    # The best passage in the question's language: the answer is copied in its own words.
    model = ScriptedModel("陆尚 [1]")
    answer_of(Assistant(kb, model, config=cfg).ask("徐夫人最先嫁给了谁？"))
    assert "照抄" in model.messages[0]["content"]


def test_extractive_answers_say_when_the_passages_are_in_the_other_language(kb):
    answer = answer_of(Assistant(kb, None).ask("Lincoln 和 Mary Todd 哪一年结婚？"))
    assert answer.text.startswith("未配置语言模型；以下是最相关的段落，按原文（英文）引用，翻译需要语言模型。")
    assert answer.citations
    # An English question naming its subject in Chinese is English: its note is in English.
    answer = answer_of(Assistant(kb, None).ask("Who did 徐夫人 marry?"))
    assert answer.text.startswith("No language model is configured") and "陆尚" in answer.text


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("What is 五羊新城?", "en"),  # the grammar is English, the name Chinese
        ("Who did 徐夫人 marry?", "en"),
        ("Where is 多伦多?", "en"),
        ("Abraham Lincoln 是哪一年出生的？", "zh"),  # the grammar is Chinese, the name English
        ("学名为 Ara macao 的鹦鹉叫什么名字？", "zh"),
        ("kea 生活在哪里？", "zh"),
        ("徐夫人", "zh"),
        ("DNA", "en"),
        ("Scarlet Macaw 绯红金刚鹦鹉", "zh"),  # no grammar either way: the script of most of it
    ],
)
def test_a_question_is_in_the_language_of_its_grammar(text, lang):
    from desktop_app.core.library.languages import question_lang

    assert question_lang(text) == lang


@pytest.mark.parametrize(
    ("question", "source"),
    [
        ("Which emperor revised the laws?", "qing.md"),  # 修订律令: an English question, a Chinese page
        ("陆尚死后她嫁给了谁？", "xu.md"),
        ("林肯哪一年结婚？", "lincoln.md"),  # 结婚 -> married: a Chinese question, an English page
    ],
)
def test_a_question_in_the_other_language_is_answered_from_the_page(kb, question, source):
    answer = answer_of(Assistant(kb, None).ask(question))
    assert not answer.refused
    assert source in [c.source for c in answer.citations]


def test_a_question_about_what_no_document_names_is_refused(kb):
    # "calories" is in no page, in either language: the kakapo page's words do not answer it.
    answer = answer_of(Assistant(kb, None).ask("How many calories does a kakapo eat a day?"))
    assert answer.refused
