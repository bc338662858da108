"""Decide whether a message needs the documents, and rewrite follow-ups into standalone queries.

The LLM path asks for schema-constrained JSON ``{"kind", "is_followup", "use_rag", "search_query"}``
with few-shot examples in both languages; if the model is absent, fails, times out or returns
something unusable, the heuristic path decides (zh + en markers, then retrieval evidence) and
the result says so with ``by="heuristic"``.

A route's ``kind`` is the reading the question needs: "none" (no documents), "passages" (search,
answer from the best passages), "document" (read one or a few whole documents: summarise,
outline, compare, what a named file says) or "library" (the index itself: which files, how many,
what is new, what a collection holds). ``use_rag`` is ``kind != "none"``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace

from desktop_app.core import messages
from desktop_app.core.ask.prompts import ROUTE_SCHEMA, router_messages, translate_query_messages
from desktop_app.core.ask.question import Question, as_question
from desktop_app.core.config import RouterConfig
from desktop_app.core.events import RouteDecided
from desktop_app.core.library.languages import CJK_RE
from desktop_app.core.models import reasons as model_reasons
from desktop_app.core.models.llm.base import ChatModel, LLMError, complete
from desktop_app.core.models.llm.jsonx import as_bool, extract_json
from desktop_app.core.tasks import TaskState

log = logging.getLogger(__name__)

MODES = ("auto", "always", "never")
KINDS = ("none", "passages", "document", "library")
Probe = Callable[[str], float | None]  # best retrieval score for a query, None if unknown


@dataclass
class Route:
    use_rag: bool
    search_query: str
    is_followup: bool
    by: str  # "llm" | "heuristic" | "mode"
    reason: str = ""  # why the heuristic decided, or why the LLM path was not used
    kind: str = ""  # KINDS; "" is filled from use_rag ("passages" or "none")
    translated: str = ""  # search_query in the library's other language, as the model wrote it

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            self.kind = "passages" if self.use_rag else "none"
        self.use_rag = self.kind != "none"  # one decision, never two that disagree

    def to_dict(self) -> dict[str, bool | str]:
        d = asdict(self)
        d.pop("reason")
        return d

    def event(self) -> RouteDecided:
        return RouteDecided(
            self.use_rag, self.search_query, self.is_followup, self.by, reason=self.reason, kind=self.kind
        )


# ---------------------------------------------------------------------------- heuristics
def _rx(*parts: str) -> re.Pattern[str]:
    return re.compile("|".join(parts), re.I)


SMALL_TALK = _rx(
    r"^\s*(hi|hello|hey|yo|howdy|good (morning|afternoon|evening|night)|thanks?( you)?|thx|cheers|"
    r"bye|goodbye|see you|ok(ay)?|cool|great|nice|lol|haha|sorry)\b[\s!.,?]*(there|again|so much|a lot|"
    r"everyone|friend|bot)?[\s!.,?]*$",
    r"\bhow are you\b|\bhow('?s| is) it going\b|\bwho are you\b|\bwhat('?s| is) your name\b|"
    r"\bnice to meet\b|\btell me a joke\b|\bare you (a )?(bot|human|real)\b|\bwhat can you do\b",
    r"^\s*(你好|您好|嗨|哈喽|早上好|早安|中午好|下午好|晚上好|晚安|谢谢|多谢|感谢|再见|拜拜|好的|嗯+|哈哈+|辛苦了|在吗)"
    r"[\s!！。，,?？~呀啊呢吧]*$",
    r"你是谁|你叫什么|讲个笑话|说个笑话|你会做什么|你能做什么|你可以做什么|你好吗|最近怎么样|今天过得",
    # Chat and the clock: nothing a document answers.
    r"\btell me something (funny|interesting|nice)\b|^\W*let'?s (chat|talk)\W*$|\bwhat (day|time) is it\b|"
    r"\bwhat'?s (the date|the time) today\b|今天星期几|今天几号|现在几点|"
    r"^\W*(?:随便|我们|咱们)?(?:聊聊|聊天|闲聊)(?:天|吧|呗|一下)*\W*$",
)
ARITHMETIC = _rx(
    # a number glued to a name is a code ("Remington 11-87", "PM-220"), not a sum
    r"(?<![A-Za-z\u3400-\u4dbf\u4e00-\u9fff\d.-])\d+(\.\d+)?\s*[-+*/×÷^%]\s*\(?\d",
    r"\b(calculate|compute|evaluate)\b.*\d|\d.*\b(calculate|compute|evaluate)\b",
    r"\b(plus|minus|times|divided by|multiplied by|squared|cubed|square root of|percent of)\b\s*\d",
    r"\d\s*(加|减|乘以?|除以)\s*\d|等于(多少|几)|(?:计算(?!机)|平方根|开方).*\d|\d.*(?:计算(?!机)|平方根|开方)",
)
# Dates and ranges are no sums: "1998/7/18", "2010-2011 season", "2003/2004".
_DATES = re.compile(r"(?<!\d)(?:\d{4}\s*[-/–]\s*\d{1,4}(?:\s*[-/]\s*\d{1,2})?|\d{1,2}/\d{1,2}/\d{2,4})(?!\d)")
TASK_NO_DOCS = _rx(
    r"\btranslat(e|ion)\b|\bhow (do|would) you say\b|\bin (english|chinese|french|german|spanish|japanese)\b\s*[?.!]*$",
    r"\b(write|compose) (me )?an? (poem|haiku|story|song|limerick|joke)\b|\brephrase\b|\bparaphrase\b|"
    r"\bfix (the )?grammar\b",
    # 翻译 as a request, not a noun or a past deed ("有哪些经典翻译？", "又被译成什么？" ask the documents)
    r"^\s*(请|麻烦|帮我|请帮我)?\s*翻译|(把|将).{0,60}(翻译|译|翻)(成|为)|(翻译|译)(成|为)(中文|英文|英语|日语|法语|德语)",
    r"用(英文|中文|英语|日语|法语)|(英文|英语|中文)怎么说|写一首|写一个(故事|笑话)|作一首|改写|润色",
)
DOC_REFERENCE = _rx(
    r"\b(document|documents|file|files|pdf|report|manual|paper|notes|handbook|according to|knowledge base)\b",
    r"文档|文件|资料|手册|报告|笔记|根据|知识库",
)
QUESTION = _rx(
    r"^\s*(what|how|why|which|when|where|who|whom|whose|does|do|did|is|are|was|were|can|could|should|"
    r"would|will|list|explain|describe|tell me|summari[sz]e|compare|define|give me|show me|find)\b",
    r"\?\s*$|？\s*$",
    r"什么|怎么|怎样|为什么|为何|哪|吗|如何|多少|多久|多大|几|介绍|说明|解释|总结|概括|是否|区别|有没有|能否|可以.*吗|呢",
)
FOLLOWUP_EN = re.compile(
    r"\b(it|its|it's|they|them|their|theirs|this one|that one|these|those|this species|that species|"
    r"this bird|the same|he|she|him|his|her)\b",
    re.I,
)
FOLLOWUP_START_EN = re.compile(r"^\s*(and|what about|how about|also)\b", re.I)
# 他/她 alone too ("他的妻子是谁？"), but not inside 其他/吉他.
FOLLOWUP_ZH = re.compile(
    r"它们|它|牠|他们|她们|(?<![其吉])他|她|这种|那种|这个|那个|这只|那只|这类|该物种|此物种|^\s*那"
)
FOLLOWUP_END_ZH = re.compile(r"呢[？?]?\s*$")
# Chinese drops a subject the conversation already holds: "要炖多久？", "有什么副作用？", "可以给孩子吃吗？"
# after a question about a dish or a drug. A short question that opens on its verb or question word
# names nothing of its own; "怎么/如何" open new questions too ("怎么做卡邦尼？"), so they count only
# in the shortest ("怎么保存？").
_ZERO_SUBJECT_ZH = re.compile(
    r"^\s*(?:请问)?(?:那)?(?:要|需要|得|可以|能|能不能|会|会不会|该|应该|用|放|加|适合|还|一般|大概|最好|每天|每次|"
    r"多少|多久|多长|多大|几|有没有|有什么|有哪些|是不是|是什么|是哪|哪里|在哪|为什么)"
)
_ZERO_SUBJECT_HOW_ZH = re.compile(r"^\s*(?:请问)?(?:那)?(?:怎么|怎样|如何)")


def _zero_subject_zh(message: str) -> bool:
    """A short Chinese question with its subject left out (the conversation's)."""
    if re.search(r"[A-Za-z]", message):
        return False
    chars = len(CJK_RE.findall(message))
    if _ZERO_SUBJECT_HOW_ZH.search(message):
        return chars <= 4
    return chars <= 8 and bool(_ZERO_SUBJECT_ZH.search(message))

# Kinds of reading (issue 37). A library question asks about the files themselves (which, how
# many, what is new, what a collection holds); a document question asks for a whole document read
# (summary, outline, comparison, what a named file says). Library markers are read first: "which
# notes are about macaws?" names notes but wants a list of them, not their text.
_DOCS_EN = r"(?:files?|documents?|docs?|notes?|pdfs?|papers?|reports?|articles?|texts?|collections?)"
_DOCS_PL = r"(?:files|documents|docs|notes|pdfs|papers|reports|articles|texts|collections)"
_DOCS_ZH = r"(?:文档|文件|笔记|资料|论文|报告|notes?|files?|documents?)"
LIBRARY = _rx(
    rf"\b(?:what|which|wich|whcih)\s+(?:(?!(?:do|does|did)\b)\w+\s+){{0,2}}{_DOCS_PL}\b(?!\s+formats?)",
    rf"\b(?:what|which|wich)\s+of\s+(?:my|the|your)\s+(?:\w+\s+)?{_DOCS_PL}\b",
    # "Which of my recipes call for wine?": the user's own things are their documents.
    r"\bwhich\s+of\s+my\s+(?:\w+\s+)?\w+s\b",
    rf"\bhow\s+many\b(?:\s+[\w'-]+){{0,3}}?\s+{_DOCS_PL}\b|\bhow\s+many\s*{_DOCS_ZH}",
    r"\bhow\s+many\b.{0,30}\b(?:are about|are on|mention|talk about|cover|do i have|have i got)\b",
    rf"\b(?:list|show|display|count|enumerate|find)\b(?:\s+me)?(?:\s+(?:all|every|each))?(?:\s+of)?"
    rf"(?:\s+(?:my|the|your))?(?:\s+\w+)?\s+{_DOCS_PL}\b",
    rf"\b(?:is|are)\s+there\s+(?:a|an|any|some)?\s*(?:\w+\s+)?{_DOCS_EN}\b",
    rf"\b(?:do|did)\s+i\s+have\s+(?:a|an|any|some)?\s*(?:\w+\s+)?{_DOCS_EN}\b",
    r"\bwhat\s+(?:do\s+i\s+have|have\s+i\s+got|have\s+i)\s+(?:about|on|for)\b|"
    r"\b(?:do|did)\s+i\s+have\s+(?:anything|something|stuff)\b|"
    rf"^\W*any\s+(?:\w+\s+)?{_DOCS_PL}\b|\bhow\s+(?:big|large)\s+is\s+my\s+(?:library|knowledge\s*base|collection)\b",
    r"\bwhat(?:'s|\s+is)\s+new\b|\b(?:which|what)\b.{0,20}\b(?:are|is)\s+new\b|"
    r"\bwhat(?:'s|\s+has)?\s+changed\s*(?:[?.!]|$|\s+(?:in\s+my|since|recently|lately|today|this))|"
    rf"\b(?:new|recent|latest|newest)\s+(?:\w+\s+)?{_DOCS_PL}\b|"
    r"\b(?:added|changed|modified|updated)\s+(?:recently|lately|today|yesterday|this week)\b|"
    r"\b(?:recently|lately)\s+(?:added|changed|modified|updated)\b",
    r"\bwhat(?:'s|\s+is)\s+in\s+(?:my|the)\s+(?:knowledge\s*base|library|knowledge desk|folder|collection)\b|"
    r"\bcollections?\b.{0,40}\b(?:hold|holds|contain|contains|have|has|include|includes)\b|"
    r"\b(?:my|what|which)\s+collections\b|\bin\s+(?:my|the)\s+\w+\s+(?:folder|collection)\b",
    rf"(?:哪些|什么|几[个篇份本]|多少[个篇份本]?)\s*[\w\s]{{0,12}}?{_DOCS_ZH}(?!格式|类型|种类)",
    rf"我的.{{0,8}}?{_DOCS_ZH}(?:里|中|里面|当中)[，,\s]*.{{0,6}}?哪(?:些|几)|"
    rf"{_DOCS_ZH}(?:都|一共|总共)?有(?:哪些|什么|几[个篇份本]|多少)|有没有.{{0,20}}{_DOCS_ZH}|我有.{{0,20}}{_DOCS_ZH}吗|{_DOCS_ZH}.{{0,6}}(?:数量|总数|个数|一共|总共)",
    # A list verb, a change or a collection only with the documents it is about ("列出金刚鹦鹉的特征"
    # lists a note's facts; "鹦鹉集合成群" is a flock gathering).
    rf"统计.{{0,10}}{_DOCS_ZH}|(?:列出|列一下|新增|新加|新添).{{0,10}}{_DOCS_ZH}|最近.{{0,4}}(?:添加|加入|加了|新增|新加)|"
    rf"最近.{{0,4}}(?:改|修改|更新|变).{{0,8}}{_DOCS_ZH}",
    r"集合(?:里|中|有|包含)|(?:这个|那个|哪些|几个|哪个)集合|文件夹里|知识库里(?:有什么|有哪些|一共|都有)|"
    r"知识库.{0,4}(?:有什么|有哪些)",
)
# Asking for a summary, an outline or a comparison outweighs a list word ("列出……笔记的大纲").
READ_WHOLE = _rx(
    r"\bsu+m+[ae]?ri[sz]e?[sd]?\b|\bsummar(?:y|ies)\b|\btl;?\s*dr\b|\boutline\b|\bcompar(?:e|es|ed|ing|ison)\b",
    r"总结|概括|归纳|摘要|概述|大纲|提纲|比较|对比",
)
COMPARE = _rx(
    r"\bcompar(?:e|es|ed|ing|ison)\b|\bcontrast\b|\bversus\b|\bvs\.?\s|\bdiffer(?:s|ent)?\s+from\b|"
    r"\bdifferences?\s+between\b|\bside\s+by\s+side\b",
    r"比较|对比|区别|异同|有什么不同|有何不同|不同之处|不同点|不一样|差异|相比",
)
DOCUMENT = _rx(
    r"\bsu+m+[ae]?ri[sz]e?[sd]?\b|\bsummar(?:y|ies)\b|\btl;?\s*dr\b|\boutline\b|\boverview\s+of\b|"
    r"\b(?:main|key)\s+(?:points|ideas|takeaways)\b|\bgist\b|\brecap\b|\bdigest\s+of\b|\bsum\s+up\b|"
    r"\bsynopsis\b|\brundown\b|\bhighlights\b|\bin\s+a\s+nutshell\b",
    r"\bcompar(?:e|es|ed|ing|ison)\b|\bcontrast\b|\bversus\b|\bvs\.?\s|\bdiffer(?:s|ent)?\s+from\b|"
    r"\bdifferences?\s+between\b|\bside\s+by\s+side\b",
    rf"\bwhat\s+(?:does|do|did)\s+(?:the|this|that|my|your|these|those)?\s*.{{0,60}}?\b{_DOCS_EN}\s+(?:say|said|tell|cover)\b",
    r"\bwhat\s+(?:does|do)\s+\S+\.(?:md|txt|pdf|docx?|pptx?|html?|csv|epub|rtf|odt)\s+(?:say|cover)\b",
    rf"\bwhat(?:'s|\s+is)\s+in\s+(?:the|this|that)\s+.{{0,40}}?{_DOCS_EN}\b|"
    rf"\bwhat\s+is\s+(?:the|this|that)\s+(?:\w+\s+){{0,3}}{_DOCS_EN}\s+about\b",
    rf"\bread\s+(?:the|this|that|my)\s+.{{0,40}}?{_DOCS_EN}\b",
    r"\b[\w-]+\.(?:md|txt|pdf|docx?|pptx?|html?|csv|epub|rtf|odt)\b",
    r"总结|概括|归纳|摘要|概述|综述|大纲|提纲|要点|梗概|主要内容|讲了什么|讲的是什么|讲了哪些|讲些什么|"
    r"说了什么|写了什么|内容是什么|讲的什么|说的什么|说了啥|写了啥|讲了啥|比较|对比|区别|异同|有什么不同|有何不同|不同之处|不同点|不一样|差异|相比",
    rf"(?:这|那|该)(?:份|篇|个|本)\s*{_DOCS_ZH}",
)


# "How do I summarise a note?", "如何删除文件？": how the app works, which the guide's passages tell.
HOW_TO = _rx(r"^\W*(?:how\s+(?:do|can|should|would)\s+i|how\s+to)\b", r"^\W*(?:请问)?(?:我)?(?:如何|怎么(?!样)|怎样)")


def reading_kind(text: str) -> tuple[str, str] | None:
    """("library" | "document", why) when the message's markers ask for one, else None."""
    if HOW_TO.search(text):
        return None
    if LIBRARY.search(text) and not READ_WHOLE.search(text):
        return "library", "asks about the library's files"
    if DOCUMENT.search(text):
        return "document", "asks for a whole document read (summary, outline, comparison, a named file)"
    return None


_PRONOUN_SUB_EN = re.compile(
    r"\b(it|they|them|this one|that one|this species|that species|this bird|he|she|him)\b", re.I
)
_POSSESSIVE_EN = re.compile(r"\b(its|their|his|her)\b", re.I)
_PRONOUN_SUB_ZH = re.compile(
    r"它们|它|牠|他们|她们|(?<![其吉])他|她|这种鸟|那种鸟|这种|那种|这只|那只|这类|该物种|此物种"
)


_PLEASANTRY_START = re.compile(
    r"^\s*(hi|hello|hey|thanks|thank you|thx|cheers|bye|goodbye|ok|okay|cool|great|nice|perfect|awesome|"
    r"got it|sure|alright|good (morning|afternoon|evening|night))\b|^\s*(好的|好|谢谢|多谢|感谢|再见|拜拜|嗯|行|没问题|明白)",
    re.I,
)


def _short_pleasantry(text: str) -> bool:
    """'Thanks, that helps.', 'bye for now', '好的，谢谢': opens with a pleasantry, short, asks nothing."""
    short = len(re.findall(r"[A-Za-z]+", text)) <= 5 and len(CJK_RE.findall(text)) <= 8
    return short and bool(_PLEASANTRY_START.search(text)) and not QUESTION.search(text)


def _clean_query(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().strip("?？!！。.")


def rewrite_followup(message: str, subject: str) -> str:
    """Put the subject in place of the pronoun: 'What does it eat?' -> 'What does macaw eat'."""
    q = _PRONOUN_SUB_ZH.sub(subject, message, count=1)
    if q == message:
        q = _POSSESSIVE_EN.sub(f"{subject}'s", message, count=1)
        q = _PRONOUN_SUB_EN.sub(subject, q, count=1) if q == message else q
    if subject.lower() not in q.lower():
        q = f"{subject} {q}"
    return _clean_query(q)


def is_followup_message(message: str) -> bool:
    return bool(
        FOLLOWUP_EN.search(message)
        or FOLLOWUP_START_EN.search(message)
        or FOLLOWUP_ZH.search(message)
        or FOLLOWUP_END_ZH.search(message)
        or _zero_subject_zh(message)
    )


def heuristic_route(
    message: str,
    last_subject: str | None = None,
    probe: Probe | None = None,
    min_hit_score: float = 0.35,
) -> Route:
    """Markers first (small talk, arithmetic, translation: no retrieval), then follow-ups against
    the last subject, then question/document markers, then retrieval evidence."""
    text = message.strip()
    query = _clean_query(text)
    if not text:
        return Route(False, "", False, "heuristic", "empty message")
    doc_ref = bool(DOC_REFERENCE.search(text))
    if (SMALL_TALK.search(text) or _short_pleasantry(text)) and not doc_ref:
        return Route(False, "", False, "heuristic", "small talk")
    if ARITHMETIC.search(_DATES.sub(" ", text)) and not doc_ref:
        return Route(False, "", False, "heuristic", "arithmetic")
    if TASK_NO_DOCS.search(text) and not doc_ref:
        return Route(False, "", False, "heuristic", "translation or writing task")
    followup = bool(last_subject) and is_followup_message(text)
    if kind := reading_kind(text):
        search = rewrite_followup(text, last_subject) if followup and last_subject else query
        return Route(True, search, followup, "heuristic", kind[1], kind=kind[0])
    if followup and last_subject:
        return Route(
            True, rewrite_followup(text, last_subject), True, "heuristic", "follow-up on the last subject"
        )
    if doc_ref or QUESTION.search(text):
        return Route(True, query, False, "heuristic", "question or document marker")
    if probe is not None:
        score = probe(query)
        if score is not None:
            use = score >= min_hit_score
            return Route(use, query if use else "", False, "heuristic", f"retrieval evidence {score:.2f}")
    # No markers and no evidence to judge by: a few content words are most likely a search.
    use = len(re.findall(r"[A-Za-z0-9]+", text)) >= 2 or len(CJK_RE.findall(text)) >= 4
    return Route(use, query if use else "", False, "heuristic", "no markers")


def translate_query(
    model: ChatModel, query: str, target: str, cancel: TaskState | None = None, timeout: float = 20.0
) -> str:
    """``query`` in ``target`` ("en" | "zh"), as the model writes it (its first line, unquoted);
    "" when the model fails or answers with nothing new."""
    try:
        text = complete(
            model, translate_query_messages(query, target), max_tokens=64, temperature=0.0, cancel=cancel,
            timeout=timeout,
        )
    except LLMError as exc:
        log.warning("query not translated: %s", exc)
        return ""
    line = next((ln for ln in text.strip().splitlines() if ln.strip()), "")
    line = _clean_query(line.strip(" \"'“”‘’`"))
    return "" if line.lower() == query.strip().lower() else line[:300]


# ---------------------------------------------------------------------------- router
NO_DOC_REASONS = ("small talk", "arithmetic", "translation or writing task")


class RouteError(Exception):
    """The LLM's routing answer was unusable."""


def parse_route(text: str, message: str) -> Route:
    data = extract_json(text)
    if data is None:
        raise RouteError(f"no JSON object in the router's reply: {text[:80]!r}")
    use_rag = as_bool(data.get("use_rag"))
    is_followup = as_bool(data.get("is_followup"))
    if use_rag is None or is_followup is None:
        raise RouteError(f"router reply lacks use_rag/is_followup booleans: {str(data)[:80]}")
    kind = data.get("kind")
    if kind not in KINDS:  # an older prompt's answer, or a model that left it out: use_rag decides
        kind = "passages" if use_rag else "none"
    elif (kind != "none") != use_rag:
        # The two disagree: the named kind is the more specific answer of the two.
        use_rag = kind != "none"
    query = data.get("search_query")
    query = _clean_query(query) if isinstance(query, str) else ""
    if use_rag and not query:
        query = _clean_query(message)
    return Route(use_rag, query if use_rag else "", is_followup, "llm", kind=kind)


class Router:
    def __init__(
        self,
        chat_model: ChatModel | None,
        config: RouterConfig | None = None,
        probe: Probe | None = None,
        coverage: Probe | None = None,
    ) -> None:
        self.chat_model = chat_model
        self.config = config or RouterConfig()
        self.probe = probe
        # The share of the question's rare words the best passages hold (ask/evidence.py), for
        # questions the encoder cannot read (a Chinese one with the English MiniLM: cosine ~0.4).
        self.coverage = coverage

    def route(
        self,
        question: str | Question,
        *,
        last_subject: str | None = None,
        recent: Sequence[str] = (),
        mode: str | None = None,
        cancel: TaskState | None = None,
    ) -> Route:
        message = str(question)
        mode = (mode or self.config.mode or "auto").lower()
        if mode not in MODES:
            raise ValueError(f"unknown router mode {mode!r}; expected one of {', '.join(MODES)}")
        if mode == "never":
            return Route(False, "", False, "mode", "mode=never")
        if mode == "always":
            followup = bool(last_subject) and is_followup_message(message)
            query = (
                rewrite_followup(message, last_subject)
                if followup and last_subject
                else _clean_query(message)
            )
            return Route(True, query, followup, "mode", "mode=always")
        if self.chat_model is not None:
            if decided := self.decisive(message, last_subject):
                return decided
            try:
                route = self.llm_route(question, last_subject=last_subject, recent=recent, cancel=cancel)
            except (LLMError, RouteError) as exc:
                log.info("router LLM path failed, using heuristics: %s", exc)
                route = self.heuristic(message, last_subject)
                route.reason = f"LLM router failed ({exc}); {route.reason}"
                return route
            if self.config.markers_override:
                route = self.overridden(route, message)
            return self.with_evidence(route, message)
        return self.heuristic(message, last_subject)

    def with_evidence(self, route: Route, message: str) -> Route:
        """A small model sends document questions to chat too ("What is the life expectancy for
        men?" was answered from Qwen-1.5B's own memory, wrongly): a question the library holds
        evidence for (best hit >= router.min_hit_score) is searched. Weak evidence keeps the
        model's "chat", and the refusal check guards what is searched."""
        if route.use_rag or self.probe is None or route.by != "llm":
            return route
        marker = heuristic_route(message)
        if marker.reason != "question or document marker":
            return route
        score = self.probe(marker.search_query)
        if score is not None and score >= self.config.min_hit_score:
            why = f"the model said chat, but the library holds evidence {score:.2f} for this question"
            return Route(True, marker.search_query, False, "heuristic", why)
        # A question in the other language than its page scores low in the search; the best
        # passage holding most of its rare words (or their translations) is evidence too.
        held = self.coverage(marker.search_query) if self.coverage is not None else None
        if held is not None and held >= self.config.evidence_coverage:
            why = f"the model said chat, but the best passage holds {held:.2f} of this question's words"
            return Route(True, marker.search_query, False, "heuristic", why)
        return route

    def decisive(self, message: str, last_subject: str | None = None) -> Route | None:
        """The heuristics' route when asking the model could not change it: a no-documents marker
        (it would override the model anyway), or a first-hand question (no follow-up to rewrite)
        that retrieval answers strongly (the probe's hits are kept for the answer). None: ask."""
        threshold = self.config.decisive_hit_score
        if threshold <= 0:
            return None
        route = heuristic_route(message, last_subject)
        if self.config.markers_override and route.kind in ("document", "library"):
            route.reason = f"{route.reason} (decisive: the language model was not asked)"
            return route
        if not route.use_rag:
            if self.config.markers_override and route.reason in NO_DOC_REASONS:
                route.reason = f"{route.reason} (decisive: the language model was not asked)"
                return route
            return None
        if route.is_followup or route.reason != "question or document marker" or self.probe is None:
            return None
        score = self.probe(route.search_query)
        if score is not None and score >= threshold:
            route.reason = (
                f"a question with strong retrieval evidence {score:.2f} (the language model was not asked)"
            )
            return route
        held = self.coverage(route.search_query) if self.coverage is not None else None
        if held is not None and held >= self.config.decisive_coverage:
            route.reason = f"a question whose words the best passage holds ({held:.2f}; the language model was not asked)"
            return route
        return None

    def overridden(self, route: Route, message: str) -> Route:
        """Small CPU models send almost everything to retrieval (docs/chat-benchmarks.md); the
        no-documents markers are precise, so when one matches it wins over the LLM's use_rag; a
        document or library marker wins over its kind."""
        marker = heuristic_route(message)
        if marker.kind in ("document", "library") and route.kind != marker.kind:
            # Kind markers ("summarise", "which files", "总结") are as precise: a small model
            # calls most of these "passages".
            reason = f"{marker.reason}: the marker overrides the LLM's kind {route.kind!r}"
            query = route.search_query or marker.search_query
            return replace(
                route, kind=marker.kind, use_rag=True, search_query=query, by="heuristic", reason=reason
            )
        if route.kind in ("document", "library") and marker.kind not in ("document", "library"):
            if HOW_TO.search(message) or not DOC_REFERENCE.search(message):
                # The 1.5B model calls "Where can I find the lorikeet?" and "如何删除文件？" library
                # questions: a whole-document or library question names documents and asks no how-to.
                reason = f"the LLM's kind {route.kind!r} needs a document named, and no how-to"
                query = route.search_query or marker.search_query
                return replace(route, kind="passages", search_query=query, by="heuristic", reason=reason)
        if not route.use_rag or marker.use_rag or marker.reason not in NO_DOC_REASONS:
            return route
        return Route(False, "", False, "heuristic", f"{marker.reason} marker overrides the LLM's use_rag")

    def heuristic(self, message: str, last_subject: str | None = None) -> Route:
        return heuristic_route(message, last_subject, self.probe, self.config.min_hit_score)

    def llm_route(
        self,
        question: str | Question,
        *,
        last_subject: str | None = None,
        recent: Sequence[str] = (),
        cancel: TaskState | None = None,
    ) -> Route:
        """The LLM's decision; raises LLMError or RouteError when it cannot give a usable one."""
        if self.chat_model is None:
            raise LLMError(messages.message(model_reasons.LLM_NO_MODEL), "unreachable")
        q = as_question(question)
        text = complete(
            self.chat_model,
            router_messages(q.text, q.language, last_subject, list(recent)),
            json_schema=ROUTE_SCHEMA,
            max_tokens=96,
            temperature=0.0,
            cancel=cancel,
            timeout=self.config.timeout,
        )
        return parse_route(text, q.text)
