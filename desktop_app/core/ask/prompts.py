"""Every prompt the assistant sends, in English and Chinese. Pick with ``lang_of(text)``."""

from __future__ import annotations

import json
import re

from desktop_app.core.library.documents import page_label
from desktop_app.core.models.llm.base import Message

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def lang_of(text: str) -> str:
    """'zh' when the text is mostly Chinese characters, else 'en'."""
    cjk = len(_CJK.findall(text))
    latin = len(re.findall(r"[A-Za-z]+", text))
    return "zh" if cjk and cjk >= latin else "en"


# ---------------------------------------------------------------------------- router
ROUTE_SCHEMA = {
    "type": "object",
    "properties": {
        "is_followup": {"type": "boolean"},
        "use_rag": {"type": "boolean"},
        "search_query": {"type": "string"},
    },
    "required": ["is_followup", "use_rag", "search_query"],
    "additionalProperties": False,
}

ROUTER_SYSTEM = {
    "en": (
        "Route messages for an assistant that can search the user's documents. Reply with JSON only: "
        '{"is_followup":bool,"use_rag":bool,"search_query":string}. '
        "use_rag: true if answering needs facts from documents; false for greetings, thanks, small talk, "
        "arithmetic, translation or writing tasks. is_followup: true if the message refers back (it, they, "
        "this) to last_subject or earlier messages. search_query: a short standalone query, pronouns "
        'replaced by the subject; "" if use_rag is false.'
    ),
    "zh": (
        "为能检索用户文档的助手判断消息路由。只回复 JSON："
        '{"is_followup":bool,"use_rag":bool,"search_query":string}。'
        "use_rag：回答需要文档中的事实时为 true；问候、感谢、闲聊、算术、翻译、写作任务为 false。"
        "is_followup：消息指代 last_subject 或前文（它、它们、这种）时为 true。"
        'search_query：简短独立的检索语句，代词换成具体对象；use_rag 为 false 时为 ""。'
    ),
}

# (message, last_subject, expected route) — shown to the model as prior turns. Few and short on
# purpose: every prompt token is evaluated on each call, and small CPU models pay ~20 ms each.
ROUTER_FEWSHOT: list[tuple[str, str, dict[str, bool | str]]] = [
    ("Hi, how are you?", "", {"is_followup": False, "use_rag": False, "search_query": ""}),
    (
        "What do African grey parrots eat?",
        "",
        {"is_followup": False, "use_rag": True, "search_query": "African grey parrot diet"},
    ),
    (
        "How long do they live?",
        "scarlet macaw",
        {"is_followup": True, "use_rag": True, "search_query": "scarlet macaw lifespan"},
    ),
    ("计算 17 乘以 23", "", {"is_followup": False, "use_rag": False, "search_query": ""}),
    ("它吃什么？", "金刚鹦鹉", {"is_followup": True, "use_rag": True, "search_query": "金刚鹦鹉 食物"}),
]


def _compact(obj: dict[str, bool | str]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def router_user(message: str, last_subject: str | None, recent: list[str]) -> str:
    lines = []
    if recent:
        lines.append("earlier: " + " / ".join(m[:120] for m in recent[-2:]))
    if last_subject:
        lines.append(f"last_subject: {last_subject}")
    lines.append(f"message: {message}")
    return "\n".join(lines)


def router_messages(message: str, last_subject: str | None, recent: list[str]) -> list[Message]:
    lang = lang_of(message)
    msgs: list[Message] = [{"role": "system", "content": ROUTER_SYSTEM[lang]}]
    for q, subject, out in ROUTER_FEWSHOT:
        msgs.append({"role": "user", "content": router_user(q, subject, [])})
        msgs.append({"role": "assistant", "content": _compact(out)})
    msgs.append({"role": "user", "content": router_user(message, last_subject, recent)})
    return msgs


# ---------------------------------------------------------------------------- answers
ANSWER_SYSTEM = {
    "en": (
        "You are Knowledge Desk, an assistant that answers from the user's documents.\n"
        "Answer using ONLY the numbered context blocks below. After each statement, cite the "
        "block it comes from as [n], for example [1] or [2][3]. Cite only numbers that appear "
        "below. If the blocks do not contain the answer, say that the documents do not say, "
        "and do not guess. Answer briefly, in English, even when the blocks are in another language."
    ),
    "zh": (
        "你是 Knowledge Desk，一个依据用户文档回答问题的助手。\n"
        "只能根据下面编号的上下文块回答。每句话后用 [n] 标注出处，例如 [1] 或 [2][3]，"
        "只能引用下面出现的编号。如果上下文块中没有答案，就直说文档中没有提到，不要猜测。"
        "即使上下文块是英文或其他语言，也要用中文简洁作答。"
    ),
}

CONTEXT_HEADER = {"en": "Context blocks:", "zh": "上下文块："}

NO_CONTEXT_NOTE = {
    "en": "(No relevant passages were found in the documents.)",
    "zh": "（文档中没有找到相关段落。）",
}

CHAT_SYSTEM = {
    "en": "You are Knowledge Desk, a helpful, concise assistant. Answer in the language of the user.",
    "zh": "你是 Knowledge Desk，一个乐于助人、回答简洁的助手。用用户使用的语言回答。",
}

AGENT_SYSTEM = {
    "en": (
        "You are Knowledge Desk. You can call the search_knowledge tool to search the user's "
        "documents. Search when the question needs facts from them. Results come as numbered "
        "blocks; cite them as [n] after each statement and cite only numbers you were given. "
        "If the documents do not contain the answer, say so."
    ),
    "zh": (
        "你是 Knowledge Desk。你可以调用 search_knowledge 工具检索用户文档。问题需要文档中的事实时先检索。"
        "检索结果是编号的块；每句话后用 [n] 引用，只能引用给出的编号。文档中没有答案时要直说。"
    ),
}

SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "search_knowledge",
        "description": "Search the user's documents; returns numbered passages with source and page.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "a standalone search query"}},
            "required": ["query"],
        },
    },
}

NO_LLM_NOTE = {
    "en": "No language model is configured; these are the most relevant passages.",
    "zh": "未配置语言模型；以下是最相关的段落。",
}

# The passages are in the other language and there is no model to translate them.
NO_LLM_NOTE_OTHER_LANGUAGE = {
    "en": "No language model is configured; these are the most relevant passages, quoted in their "
    "own language (translating them needs a language model).",
    "zh": "未配置语言模型；以下是最相关的段落，按原文（英文）引用，翻译需要语言模型。",
}

NO_LLM_NOTHING_FOUND = {
    "en": "No language model is configured, and no relevant passages were found in your documents.",
    "zh": "未配置语言模型，文档中也没有找到相关段落。",
}

NO_LLM_CHAT = {
    "en": (
        "No language model is configured, so I can only answer from your documents. "
        "Ask about something in them, or set up a model in Settings."
    ),
    "zh": "未配置语言模型，只能根据文档回答。请询问文档中的内容，或在设置中配置模型。",
}

LLM_FAILED_NOTE = {
    "en": "The language model failed; these are the most relevant passages.",
    "zh": "语言模型出错；以下是最相关的段落。",
}


NOT_ANSWERED = {
    "en": "Your documents do not seem to answer this. The nearest passages are listed as related.",
    "zh": "你的文档似乎没有回答这个问题。下面列出的是最接近的相关段落。",
}

# An LLM answer that only says the context lacks the answer (and cites nothing) is a refusal.
_SAYS_NOT_IN_CONTEXT = re.compile(
    r"\b(documents?|context|blocks?|passages?|sources?|provided (text|information))\b[^.]{0,40}\b"
    r"(do|does|did)(n't| not) (say|mention|contain|provide|include|specify|state|answer)|"
    r"\bno (information|mention|details?)\b|\bnot (mentioned|provided|stated|specified|included)\b|"
    r"\b(can ?not|can't|could ?not|couldn't|unable to) (find|answer|determine)\b|"
    r"(文档|上下文|资料|段落|内容)[中里]?(并)?(没有|未|没)(提到|提及|说明|包含|给出|涉及|记载)|"
    r"(没有|未|没)(提到|提及|找到)(相关|有关)?(的)?(信息|内容|答案)?|无法(从|根据|确定|回答)",
    re.I,
)


def says_not_in_context(text: str) -> bool:
    return bool(_SAYS_NOT_IN_CONTEXT.search(text))


def block_header(n: int, source: str, page: int | None) -> str:
    """'[n] <source>, p. <page>' (a PPTX: 'slide <page>') — what the answer's citations refer to."""
    return f"[{n}] {source}" if page is None else f"[{n}] {source}, {page_label(source, page)}"


def answer_system(blocks_text: str, lang: str) -> str:
    body = blocks_text or NO_CONTEXT_NOTE[lang]
    return f"{ANSWER_SYSTEM[lang]}\n\n{CONTEXT_HEADER[lang]}\n{body}"
