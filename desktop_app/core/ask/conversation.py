"""One chat's state (recent turns and the subject follow-ups refer to), shared by the ask and photo
flows."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field

from desktop_app.core.ask.evidence import DocFreq, is_question_word
from desktop_app.core.library.languages import has_cjk
from desktop_app.core.library.text_analysis import idf, surface_words
from desktop_app.core.models.llm.base import Message

_LEAD_WORDS = re.compile(
    r"^\s*(what|how|why|which|when|where|who|does|do|did|is|are|was|were|can|could|should|would|tell|me|"
    r"more|about|describe|explain|give|show|list|please|the|a|an)\b[\s,]*",
    re.I,
)
_ZH_DROP = re.compile(r"请问|请|介绍一下|介绍|什么是|是什么|什么|怎么样|吗|呢")


@dataclass
class Conversation:
    """One chat's state: recent turns for the model, and the subject follow-ups refer to."""

    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    history: list[Message] = field(default_factory=list)  # {"role": "user"|"assistant", "content"}
    last_subject: str | None = None  # e.g. the species just identified, or the topic asked about
    last_query: str | None = None  # the last search query, a fallback subject for text follow-ups
    scope: str | None = None  # the assistant's knowledge scope (None: shared only)
    # A photo's class fitted several notes equally: what "it" may be, until a question names one.
    subject_options: list[str] = field(default_factory=list)
    # The files the last answer cited: the document "summarise it" / "总结一下这份文件" means.
    last_sources: list[str] = field(default_factory=list)
    max_turns: int = 10
    # The user's own instructions and sampling temperature for this chat ("" / None: the app's).
    system_prompt: str = ""
    temperature: float | None = None

    def add_turn(self, question: str, answer: str) -> None:
        self.history += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
        del self.history[: max(0, len(self.history) - 2 * self.max_turns)]

    def recent_user_messages(self, n: int = 3) -> list[str]:
        return [m["content"] for m in self.history if m["role"] == "user"][-n:]

    def subject(self) -> str | None:
        return self.last_subject or self.last_query

    def reset(self) -> None:
        self.history.clear()
        self.last_subject = self.last_query = None
        self.subject_options = []
        self.last_sources = []


def key_terms(query: str, doc_freq: DocFreq, most: int = 6) -> str:
    """The words of ``query`` a follow-up should search with: those the library holds (a word no
    document has cannot find one), the ``most`` rarest (IDF), in their order, never a question
    word. "Who wrote the Emancipation Proclamation and when" -> "wrote Emancipation Proclamation";
    "徐夫人最先嫁给了谁" -> "徐夫人最先嫁给". (Keeping only the rarest one to three words found
    the right page first less often: docs/chat-benchmarks.md.)"""
    words = [(w, t) for w, t in surface_words(query) if not is_question_word(t)]
    docs, df = doc_freq({t for _, t in words})
    rarity = {t: idf(docs, n) for t, n in df.items() if n > 0}
    keep = set(sorted(rarity, key=lambda t: (-rarity[t], t))[:most])  # ties: the same every run
    seen: set[str] = set()
    picked = []
    for word, term in words:
        if term in keep and term not in seen:
            seen.add(term)
            picked.append(word)
    if not picked:
        return topic_of(query)
    return ("" if all(has_cjk(w) for w in picked) else " ").join(picked)


def topic_of(query: str) -> str:
    """A query stripped of question words, kept as the subject of later follow-ups."""
    topic = _ZH_DROP.sub("", query).strip().strip("?？!！。.")
    while True:
        shorter = _LEAD_WORDS.sub("", topic, count=1)
        if shorter == topic:
            break
        topic = shorter
    return re.sub(r"\s+", " ", topic).strip() or query.strip()
