"""Every prompt the assistant sends, in English and Chinese. Pick by the question's ``language``
(question.py reads it once, with ``languages.question_lang(text)``)."""

from __future__ import annotations

import json
import re

from desktop_app.core.library.documents import page_label
from desktop_app.core.models.llm.base import Message

# ---------------------------------------------------------------------------- router
ROUTE_SCHEMA = {
    "type": "object",
    "properties": {
        "kind": {"type": "string", "enum": ["none", "passages", "document", "library"]},
        "is_followup": {"type": "boolean"},
        "use_rag": {"type": "boolean"},
        "search_query": {"type": "string"},
    },
    "required": ["kind", "is_followup", "use_rag", "search_query"],
    "additionalProperties": False,
}

ROUTER_SYSTEM = {
    "en": (
        "Route messages for an assistant that can search the user's documents. Reply with JSON only: "
        '{"kind":string,"is_followup":bool,"use_rag":bool,"search_query":string}. '
        'kind: "none" only for greetings, thanks, small talk, arithmetic, translation or writing tasks; '
        '"passages" (the usual case) for questions of fact, advice or how-to, answered from passages; '
        '"document" to summarise, '
        "outline or compare whole documents or subjects, or to say what a named file says; \"library\" "
        "for questions about the files themselves (which files or notes, how many, what is new, what a "
        'collection holds). use_rag: false only when kind is "none". is_followup: true if the message '
        "refers back (it, they, this) to last_subject or earlier messages. search_query: a short "
        'standalone query, pronouns replaced by the subject; "" if kind is "none".'
    ),
    "zh": (
        "为能检索用户文档的助手判断消息路由。只回复 JSON："
        '{"kind":string,"is_followup":bool,"use_rag":bool,"search_query":string}。'
        'kind：仅问候、感谢、闲聊、算术、翻译、写作任务为 "none"；事实、建议、方法类问题为 "passages"（最常见），从文档段落中回答；'
        '总结、概括、比较整篇文档或主题，或问某个文件讲了什么为 "document"；问文件本身（有哪些文件或笔记、'
        '多少、最近新增、某个集合里有什么）为 "library"。use_rag：仅当 kind 为 "none" 时为 false。'
        "is_followup：消息指代 last_subject 或前文（它、它们、这种）时为 true。"
        'search_query：简短独立的检索语句，代词换成具体对象；kind 为 "none" 时为 ""。'
    ),
}

# (message, last_subject, expected route) — shown to the model as prior turns. Few and short on
# purpose: every prompt token is evaluated on each call, and small CPU models pay ~20 ms each.
ROUTER_FEWSHOT: list[tuple[str, str, dict[str, bool | str]]] = [
    ("Hi, how are you?", "", {"kind": "none", "is_followup": False, "use_rag": False, "search_query": ""}),
    (
        "What do African grey parrots eat?",
        "",
        {"kind": "passages", "is_followup": False, "use_rag": True, "search_query": "African grey parrot diet"},
    ),
    (
        "How long do they live?",
        "scarlet macaw",
        {"kind": "passages", "is_followup": True, "use_rag": True, "search_query": "scarlet macaw lifespan"},
    ),
    ("计算 17 乘以 23", "", {"kind": "none", "is_followup": False, "use_rag": False, "search_query": ""}),
    (
        "它吃什么？",
        "金刚鹦鹉",
        {"kind": "passages", "is_followup": True, "use_rag": True, "search_query": "金刚鹦鹉 食物"},
    ),
    (
        "Summarise the galah note",
        "",
        {"kind": "document", "is_followup": False, "use_rag": True, "search_query": "galah"},
    ),
    ("比较凤头鹦鹉和金刚鹦鹉", "", {"kind": "document", "is_followup": False, "use_rag": True, "search_query": "凤头鹦鹉 金刚鹦鹉"}),
    (
        "Which of my files are about lorikeets?",
        "",
        {"kind": "library", "is_followup": False, "use_rag": True, "search_query": "lorikeet"},
    ),
    ("我有多少篇文档？", "", {"kind": "library", "is_followup": False, "use_rag": True, "search_query": ""}),
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


# RAGFlow's cross-language search: the question searched again in the library's other language,
# translated by the configured model (one short call; retrieval.model_translate).
TRANSLATE_QUERY_SYSTEM = (
    "Translate the user's search query into {target}. Keep names, numbers and units as they are. "
    "Reply with the translation only: no quotes, no explanation."
)


def translate_query_messages(query: str, target: str) -> list[Message]:
    """The prompt that asks for ``query`` in ``target`` ("en" or "zh")."""
    language = "Simplified Chinese" if target == "zh" else "English"
    return [
        {"role": "system", "content": TRANSLATE_QUERY_SYSTEM.format(target=language)},
        {"role": "user", "content": query},
    ]


def router_messages(message: str, language: str, last_subject: str | None, recent: list[str]) -> list[Message]:
    """The router's prompt in ``language`` (the question's, as read once), with the few-shot turns."""
    msgs: list[Message] = [{"role": "system", "content": ROUTER_SYSTEM[language]}]
    for q, subject, out in ROUTER_FEWSHOT:
        msgs.append({"role": "user", "content": router_user(q, subject, [])})
        msgs.append({"role": "assistant", "content": _compact(out)})
    msgs.append({"role": "user", "content": router_user(message, last_subject, recent)})
    return msgs


# ---------------------------------------------------------------------------- answers
# One short instruction and two examples: a 1.5B model copied the first one's shape (the answer in
# the passage's words and its number) where a list of rules got reworded sentences, and without the
# second it answered what the passages do not say ("Tesla's blood type was O")
# (kdesk bench answers, docs/chat-benchmarks.md). The fixed text comes first so llama.cpp's prompt
# cache reuses it from one question to the next; the passages follow.
# The refusal line and the two examples every answer prompt ends with: a short answer in the
# passage's words with its number, and the refusal.
_ANSWER_TAIL = {
    "en": (
        "If the passages do not answer the question, reply: The documents do not say.\n\n"
        "Example:\nQ: When did the war end?\nA: April 1865 [2]\n\n"
        "Q: What was the general's favourite food?\nA: The documents do not say."
    ),
    "zh": (
        "段落中没有答案时，回答：文档中没有提到。\n\n"
        "示例：\n问：战争在哪一年结束？\n答：1865年4月 [2]\n\n"
        "问：将军最喜欢吃什么？\n答：文档中没有提到。"
    ),
}

ANSWER_SYSTEM = {
    "en": (
        "Answer the question from the numbered passages below, in English (translate a passage in "
        "another language).\n"
        "Reply with only the short answer, copied in the passage's own words, and the passage's "
        "number, like [2].\n" + _ANSWER_TAIL["en"]
    ),
    "zh": (
        "根据下面编号的段落用中文回答问题（段落是其他语言时译成中文）。\n"
        "只回答简短答案，照抄段落原文的词语，并注明段落编号，如 [2]。\n" + _ANSWER_TAIL["zh"]
    ),
}

# When the best passage is in the other language, "copied in the passage's own words" answers in
# the passages' language: the 1.5B model then quoted Chinese to English questions, or said the
# documents did not say (issue 22, item 6). This variant asks for the answer translated.
ANSWER_SYSTEM_TRANSLATE = {
    "en": (
        "Answer the question from the numbered passages below, in English.\n"
        "Reply with only the short answer, translated into English from the passage's language, and "
        "the passage's number, like [2].\n" + _ANSWER_TAIL["en"]
    ),
    "zh": (
        "根据下面编号的段落用中文回答问题。\n"
        "只回答简短答案，从段落的语言译成中文，并注明段落编号，如 [2]。\n" + _ANSWER_TAIL["zh"]
    ),
}

CONTEXT_HEADER = {"en": "Passages:", "zh": "段落："}

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

# The answer's own words (the note an answer without a model opens with, a refusal) are no prompts:
# catalogue messages in ask/notes.py.

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


_FIRST_SENTENCE = re.compile(r"^\s*(?:A|答)\s*[:：]\s*|(?<=[.!?])\s.*|(?<=[。！？]).+|\n.*", re.S)


def says_not_in_context(text: str) -> bool:
    """Whether the answer opens by saying the passages do not hold the answer. Only its first
    sentence counts: a small model that answers and then echoes the prompt's refusal example
    ("A: It eats seeds... The documents do not say.") has answered."""
    return bool(_SAYS_NOT_IN_CONTEXT.search(_FIRST_SENTENCE.sub("", text.strip())))


def block_header(n: int, source: str, page: int | None) -> str:
    """'[n] <source>, p. <page>' (a PPTX: 'slide <page>') — what the answer's citations refer to."""
    return f"[{n}] {source}" if page is None else f"[{n}] {source}, {page_label(source, page)}"


def answer_system(blocks_text: str, lang: str, translate: bool = False) -> str:
    """The answer prompt; ``translate``: the best passage is in the other language."""
    body = blocks_text or NO_CONTEXT_NOTE[lang]
    rules = (ANSWER_SYSTEM_TRANSLATE if translate else ANSWER_SYSTEM)[lang]
    return f"{rules}\n\n{CONTEXT_HEADER[lang]}\n{body}"


# ---------------------------------------------------------------------------- whole documents
# Map-then-reduce over a long document (whole.py): each group of passages, then the merge.
MAP_SYSTEM = {
    "summary": {
        "en": "You summarise one part of a longer document ({name}), given as numbered passages. "
        "Write at most {n} short sentences on its main points, using only the passages. End every "
        "sentence with the number of the passage it comes from in brackets, like [3].",
        "zh": "你在为一份较长文档（{name}）的一部分写摘要，这一部分以编号段落给出。只根据这些段落，"
        "用不超过{n}个短句写出要点。每句末尾用方括号注明出处段落的编号，例如 [3]。",
    },
    "about": {
        "en": "You read one part of a document ({name}), given as numbered passages, for this "
        "question: {question}\nWrite at most {n} short sentences on what the passages say about it, "
        "each ending with its passage number like [3]. If they say nothing about it, write only: NOTHING",
        "zh": "你在阅读文档（{name}）的一部分（编号段落），问题是：{question}\n用不超过{n}个短句写出这些段落"
        "对此说了什么，每句末尾注明段落编号，例如 [3]。如果完全没有提到，只写：NOTHING",
    },
}
REDUCE_SYSTEM = {
    "summary": {
        "en": "Below are summaries of the parts of {name}, in document order. Each sentence ends "
        "with the number of the passage it came from, like [3]. Write one summary of the whole "
        "document in {n} short paragraphs. Keep the bracketed numbers of the sentences you use; "
        "add nothing that is not in them.",
        "zh": "下面按文档顺序给出{name}各部分的摘要，每句末尾的方括号数字是出处段落编号，例如 [3]。"
        "请写出整份文档的摘要，分{n}个短段落。保留所用句子的方括号编号，不要添加其中没有的内容。",
    },
    "about": {
        "en": "Below is what the parts of {name} say about this question: {question}\nEach sentence "
        "ends with its passage number, like [3]. Answer the question from them in one or two short "
        "paragraphs, keeping the bracketed numbers; add nothing that is not in them.",
        "zh": "下面是{name}各部分对这个问题的说法：{question}\n每句末尾是段落编号，例如 [3]。请据此用一两个"
        "短段落回答问题，保留方括号编号，不要添加其中没有的内容。",
    },
    "compare": {
        "en": "Compare {name} side by side, from what is said of each below. Each sentence ends with "
        "its passage number, like [3]. For each point where they can be compared (for example "
        "appearance, where they live, size), write one line per side, each ending with its passage "
        "numbers; then one sentence on how they differ most. Add nothing that is not below.",
        "zh": "根据下面对各方的描述，并列比较{name}。每句末尾是段落编号，例如 [3]。对每个可比较的方面"
        "（例如外观、分布、体型），每一方写一行，行末注明段落编号；最后用一句话说明最大的不同。不要添加下面没有的内容。",
    },
}
OUTLINE_SYSTEM = {
    "en": "Below is the outline of {name} (its headings, each with the number of its first passage "
    "like [3]). Describe in a few sentences how the document is organised, keeping the numbers.",
    "zh": "下面是{name}的大纲（各标题及其首段编号，例如 [3]）。用几句话说明文档的结构，保留编号。",
}
SIDE_HEADER = {"en": "About {name}:", "zh": "关于{name}："}
# Repeated after the passages: small models follow the last instruction they read.
CITE_REMINDER = {
    "en": "End every sentence with the number of its passage in brackets, like [3].",
    "zh": "每句末尾用方括号注明段落编号，例如 [3]。",
}
