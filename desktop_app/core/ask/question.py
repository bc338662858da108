"""The question, read once: its text, language, kind and subject, shared by the router, the
retrieval and the answerer (instead of each working its language and kind out of the bare string).

``question_type`` is the one classifier of question kinds: the facts a species note gives (where
it lives, its size, diet, colours, names) and the general types (when, how many, who, where, why,
which).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from desktop_app.core.library.languages import question_lang


@dataclass(frozen=True)
class Question:
    """A question as asked and as read: ``language`` "en" or "zh" (of its grammar words),
    ``kind`` (``question_type``), ``subject`` the note or thing it is about when known (the
    species it names, or after routing the conversation's subject a follow-up refers to)."""

    text: str
    language: str
    kind: str
    subject: str = ""

    @classmethod
    def read(cls, text: str, subject: str = "") -> Question:
        """Read ``text`` once: its language and kind."""
        return cls(text, question_lang(text), question_type(text), subject)

    def __str__(self) -> str:
        return self.text


def as_question(question: str | Question) -> Question:
    """``question`` as a Question, read now when given as a string (callers outside the ask flow)."""
    return question if isinstance(question, Question) else Question.read(question)


# ------------------------------------------------------------------------------ question kinds
_TYPES: list[tuple[str, re.Pattern[str]]] = [
    (
        "date",
        re.compile(
            r"^\s*when\b|\bwhat (?:year|date|month|day|century|decade|time)\b|\bin which year\b|"
            r"哪一年|哪年|何时|什么时候|哪一天|几月|几号|哪个朝代|什么年代|哪个世纪"
        ),
    ),
    (
        "number",
        re.compile(
            r"\bhow (?:many|much|long|old|big|large|tall|far|high|deep|wide|heavy)\b|"
            r"\bwhat (?:percentage|number|proportion)\b|多少|几[个位次种名岁座部条只家本]|多[大长高远重久]"
        ),
    ),
    ("person", re.compile(r"\bwho(?:m|se)?\b|\bwhat (?:person|man|woman)\b|是谁|谁|何人|哪位|哪个人")),
    (
        "place",
        re.compile(
            r"^\s*where\b|\bin what (?:country|city|state|place|region)\b|"
            r"哪里|哪儿|在哪|何地|何处|(?:哪个|哪些|什么)(?:国家|城市|省|地方|地区|海域|区域)"
        ),
    ),
    ("reason", re.compile(r"^\s*why\b|\bwhat (?:caused|causes)\b|为什么|为何|原因")),
    ("which", re.compile(r"\bwhich\b|哪个|哪些|哪一")),
]


# The facts a species note gives, asked for by kind; read before the general types ("how big" is a
# size before it is a number). "name" asks for a page's own name (学名为 X 的鹦鹉叫什么名字),
# "latin" for its scientific name.
_FACT_TYPES: list[tuple[str, re.Pattern[str]]] = [
    # What a page is called, given its Latin name (the binomial itself is checked in question_type).
    ("name", re.compile(r"叫什么|什么名字|名字是什么|\bcalled\b|\bname of (?:the|this|a) \w+ with\b")),
    ("latin", re.compile(r"\b(?:scientific|latin|binomial) name\b|学名")),
    (
        "range",
        re.compile(
            r"\bwhere\b.*\b(?:live|lives|living|found|occur|occurs|native|range|come from|distributed)\b|"
            r"\b(?:range|habitat|distribution)\b|分布|栖息|生活在哪|产于|原产|哪里能见到|在哪里生活"
        ),
    ),
    (
        "size",
        re.compile(
            r"\bhow (?:big|large|tall|heavy|long is)\b|\bsize\b|\blength\b|\bwingspan\b|"
            r"多大|多长|多重|体长|大小|体型|个头|尺寸"
        ),
    ),
    (
        "diet",
        re.compile(
            r"\bwhat (?:do|does|did|will|can) .*\beat\b|\bfeeds? on\b|\bdiet\b|\bwhat food\b|"
            r"\beats? what\b|吃什么|吃哪些|吃些什么|食性|以什么为食|食物是什么"
        ),
    ),
    ("colour", re.compile(r"\bcolou?rs?\b|\bplumage\b|颜色|羽色|什么色|体色")),
]
# A size question is not one about time or age ("寿命有多长", "how long did he live").
_NOT_SIZE = re.compile(r"寿命|多久|时间|年龄|岁|\bold\b|\blifespan\b|\byears?\b")
_BINOMIAL = re.compile(r"\b[A-Z][a-z]{2,} [a-z]{3,}\b")
FACT_KINDS = tuple(name for name, _ in _FACT_TYPES)


def question_type(question: str) -> str:
    """'name', 'latin', 'range', 'size', 'diet', 'colour' (a fact of a species note), else 'date',
    'number', 'person', 'place', 'reason', 'which' or 'other'."""
    low = question.lower()
    for name, pattern in [*_FACT_TYPES, *_TYPES]:
        if not pattern.search(low):
            continue
        if name == "name" and not _BINOMIAL.search(question):
            continue  # "what is her husband called?" asks for no page's name
        if name == "size" and _NOT_SIZE.search(low):
            continue
        return name
    return "other"


# "How much guanciale", "how many watts", "what ratio": the word after the question word names the
# thing asked for (the answering sentence must hold it; a library that names it nowhere cannot answer).
_ASKED = re.compile(
    r"\b(?:how (?:much|many)|what|which)\s+(?:of\s+)?(?:the\s+|a\s+|an\s+|my\s+|your\s+)?"
    r"(?!(?:is|are|was|were|do|does|did|should|can|could|would|will|has|have|had|i|you|we|they|it|he|she)\b)"
    r"([A-Za-z][\w-]*)",
    re.I,
)


def asked_words(question: str) -> list[str]:
    """The words an English question asks for ("how many calories" -> calories), as written."""
    return [m.group(1) for m in _ASKED.finditer(question)]
