"""Assistant: question -> route -> retrieval -> cited answer, as a stream of typed events.

One pipeline for every front end: the GUI renders events as they come, `kdesk ask --json` prints
their aggregate, tests assert on them. Nothing here raises for an LLM problem: failures become a
Warning and an extractive answer, so a conversation always stays usable.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

import numpy as np

from desktop_app.core.ask import notes, whole
from desktop_app.core.ask.agent import ask_agentic
from desktop_app.core.ask.budget import Budget, ContextBlock, fit_blocks, render_blocks
from desktop_app.core.ask.citations import (
    CITATION_MARK,
    check_citations,
    citations_for,
    parse_citations,
    stamp_hashes,
)
from desktop_app.core.ask.conversation import Conversation, key_terms, topic_of
from desktop_app.core.ask.evidence import Evidence, judge
from desktop_app.core.ask.extractive import (
    FACT_KINDS,
    Meaning,
    extractive_answer,
    fact_answerable,
    key_sentences,
    named_subject,
    subject_blocks,
    subject_fact,
)
from desktop_app.core.ask.holdings import Holding, read_holdings, resolve
from desktop_app.core.ask.library_answers import library_answer
from desktop_app.core.ask.prompts import CHAT_SYSTEM, answer_system, says_not_in_context
from desktop_app.core.ask.question import Question, as_question
from desktop_app.core.ask.router import (
    COMPARE,
    Route,
    Router,
    is_followup_message,
    rewrite_followup,
    translate_query,
)
from desktop_app.core.config import Config
from desktop_app.core.events import (
    Answer,
    Citation,
    Classified,
    Decision,
    Error,
    Event,
    Retrieved,
    RouteDecided,
    Token,
    Warning,
)
from desktop_app.core.library.documents import Hit
from desktop_app.core.library.knowledge import EMPTY_LIBRARY
from desktop_app.core.library.languages import has_cjk, is_multilingual, multilingual_family, reads, text_lang
from desktop_app.core.messages import Text, message, render_lines
from desktop_app.core.models.embeddings.default import FP32_MODEL_ID as MINILM_FP32
from desktop_app.core.models.embeddings.minilm_onnx import MODEL_ID as MINILM_INT8
from desktop_app.core.models.llm.base import ChatModel, LLMError, Message, ToolChatModel
from desktop_app.core.tasks import STOPPED, Cancelled, TaskState

if TYPE_CHECKING:
    from desktop_app.core.identify.flow import Identifier
    from desktop_app.core.library.images import ImageSource
    from desktop_app.core.library.knowledge import KnowledgeBase

log = logging.getLogger(__name__)

# The candidates a follow-up to a photo left open is answered for (in the identification's order):
# more would read as a list of notes, not an answer.
MAX_SUBJECT_OPTIONS = 3
# The share of the question's words a candidate's line must hold to answer a question of no fact
# kind ("Is it endangered?"): below it the note's best line is only about the candidate.
CANDIDATE_COVERAGE = 0.5
# A group compared with nothing else ("compare the corellas") is compared note by note up to this.
MAX_COMPARED = 6


def _other_language(lang: str, text: str) -> bool:
    """A passage a reader of ``lang`` ("en" or "zh") would need translated."""
    found = text_lang(text)
    return found == "latin" if lang == "zh" else found in ("zh", "ja", "ko")


_NON_WORD = re.compile(r"[\W_]+")


def quoted_in(text: str, blocks: Sequence[ContextBlock]) -> int | None:
    """The number of the first block holding ``text`` word for word (case, spaces and punctuation
    aside), None when none does or the text is under two characters."""
    quote = _NON_WORD.sub("", text.lower())
    if len(quote) < 2:
        return None
    return next((b.n for b in blocks if quote in _NON_WORD.sub("", b.text.lower())), None)


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def figures_in(text: str, blocks: Sequence[ContextBlock], most_chars: int = 120) -> int | None:
    """The number of the first block holding every figure of a short answer ("75毫升" over "use
    about 75 ml"; "1421" over "moved the capital to Beijing in 1421"): the answer restates it in
    other words or the other language. None for a long answer, one without figures, or no block."""
    figures = {f.replace(",", "") for f in _NUMBER.findall(text)}
    if not figures or len(text) > most_chars:
        return None
    for b in blocks:
        held = {f.replace(",", "") for f in _NUMBER.findall(b.text)}
        if figures <= held:
            return b.n
    return None


def subject_options(decision: Decision) -> list[str]:
    """What a photo may be when the decision leaves it open (its class fitted several notes
    equally, or it named nothing and gave its nearest guesses): a follow-up then asks which one
    instead of searching for a class, or for the words of the last question."""
    from desktop_app.core.identify.names import pretty_name

    if not decision.need_more_info:
        return []
    return [decision.titles.get(g) or pretty_name(g) for g in decision.guesses]


def evidence_score(hit: Hit) -> float:
    """The score the router's evidence threshold is calibrated on: cosine similarity when known."""
    return hit.vector_score if hit.vector_score is not None else hit.score


class Assistant:
    """``ask()`` yields RouteDecided, Retrieved, Token..., Answer, with Warning/Error as needed."""

    def __init__(
        self,
        kb: KnowledgeBase | None,
        chat_model: ChatModel | None,
        config: Config | None = None,
        router: Router | None = None,
        identifier: Callable[[], Identifier] | None = None,
    ) -> None:
        self.kb = kb
        self.chat_model = chat_model
        self.config = config or getattr(kb, "config", None) or Config()
        self.router = router or Router(
            chat_model, self.config.router, probe=self._probe, coverage=self._coverage
        )
        self.conversation = Conversation()  # used when a call names none (kdesk, tests)
        self._probe_cache: tuple[str, str | None, list[Hit]] | None = None
        self._scope: str | None = None
        # The photo flow; the Desk hands over its own (one per app), else one is built on first use.
        self._identifier_of = identifier
        self._own_identifier: Identifier | None = None

    # ------------------------------------------------------------------ public
    def ask(
        self,
        question: str,
        conversation: Conversation | None = None,
        mode: str | None = None,
        cancel: TaskState | None = None,
    ) -> Iterator[Event]:
        """Answer ``question`` in ``conversation`` (default: the assistant's own), as events."""
        events = self._ask(question, conversation, mode, cancel)
        conv = conversation if conversation is not None else self.conversation
        try:
            for event in events:
                if isinstance(event, Answer):
                    self._stamp(event)
                    if event.citations:  # what a later "summarise it" reads
                        conv.last_sources = list(dict.fromkeys(c.source for c in event.citations))
                yield event
        finally:
            events.close()  # a consumer that stops early stops the answer at once

    def _stamp(self, answer: Answer) -> None:
        """Each citation keeps its file's hash, so the viewer can tell later if the file changed."""
        if self.kb is None or not (answer.citations or answer.related):
            return
        kb = self.kb

        def sha_of(source: str) -> str | None:
            entry = kb.manifest.get(source)
            return entry.sha256 if entry is not None else None

        try:
            stamp_hashes(answer, sha_of)
        except Exception as exc:  # noqa: BLE001 - the answer stands; without a hash nothing is claimed
            log.warning("citation hashes not read: %s", exc)

    def _ask(
        self,
        question: str,
        conversation: Conversation | None,
        mode: str | None,
        cancel: TaskState | None,
    ) -> Iterator[Event]:
        conv = conversation if conversation is not None else self.conversation
        if not question.strip():
            yield Error(message(notes.EMPTY_QUESTION))
            return
        q = Question.read(question.strip())  # read once: every step below shares its language and kind
        self._scope = conv.scope
        if self.kb is not None and self.kb.is_empty():
            # Nothing to search: say so at once instead of loading models to search nothing.
            yield RouteDecided(False, "", False, "empty library", reason="the library has no documents")
            if self.chat_model is None:
                yield Answer(EMPTY_LIBRARY.render(), by="extractive")  # an answer's text is English words
                return
            yield Warning(EMPTY_LIBRARY)
            yield from self.answer_from_hits(q, [], conv, None, cancel)
            return
        try:
            if (
                self.config.llm.agentic
                and mode in (None, "auto")
                and isinstance(self.chat_model, ToolChatModel)
            ):
                yield from ask_agentic(self, self.chat_model, q, conv, cancel)
                return
            if conv.subject_options:
                if is_followup_message(q.text):
                    yield from self._which_subject(q, conv)
                    return
                conv.subject_options = []  # the question names its own subject
            try:
                route = self.router.route(
                    q,
                    last_subject=conv.subject(),
                    recent=conv.recent_user_messages(),
                    mode=mode,
                    cancel=cancel,
                )
            except ValueError as exc:  # an unknown mode
                yield Error(str(exc))
                return
            yield route.event()
            if route.kind == "library" and self.kb is not None:
                yield from self._library(q, conv, route, cancel)
                return
            if route.kind == "document" and self.kb is not None:
                yield from self._document(q, conv, cancel)
                return
            hits: list[Hit] = []
            if route.use_rag:
                if translated := self._translated(q, route.search_query, cancel):
                    route = replace(route, translated=translated)
                hits, warning = self.retrieve(route.search_query, conv.scope, also=[translated] if translated else [])
                if warning:
                    yield warning
                yield Retrieved(hits, route.search_query)
                conv.last_query = self.subject_of(route.search_query)
                # The note a fact question names ("Where does the kea live?") is what "it" means
                # next (other questions keep the searched words, which find a passage better).
                named = q.kind in FACT_KINDS and named_subject(
                    q, fit_blocks(hits, self.config.llm.context_window), route.search_query
                )
                if named:
                    conv.last_subject = named
                # What the answerer looks for: the note named, else the subject "it" resolved to.
                subject = named or (conv.last_subject if route.is_followup else None)
                if subject:
                    q = replace(q, subject=subject)
            yield from self.answer_from_hits(q, hits, conv, route, cancel)
        except Cancelled:
            yield Warning(message(STOPPED))

    # ------------------------------------------------------------------ kinds of reading (issue 37)
    def _library(self, q: Question, conv: Conversation, route: Route, cancel: TaskState | None) -> Iterator[Event]:
        """The library's own answer (which files, how many, what is new, a collection's): from the
        index, no passages and no model."""
        try:
            answer = library_answer(self.kb, q, conv.scope, floor=self._cosine_floor(), meaning=self.meaning())
        except Exception as exc:  # noqa: BLE001 - an unreadable index is a note, never a traceback
            log.warning("library answer failed: %s", exc)
            yield Warning(message(notes.SEARCH_FAILED, error=exc))
            yield from self.answer_from_hits(q, [], conv, route, cancel)
            return
        conv.add_turn(q.text, answer.text)
        yield answer

    def _document(self, q: Question, conv: Conversation, cancel: TaskState | None) -> Iterator[Event]:
        """Whole documents: the ones the question names (title, file name, a group such as "the
        macaws"), or the file the conversation is about, read by ``whole.read_whole``; naming
        none found, an answer that says so and which documents came close."""
        holdings = read_holdings(self.kb, conv.scope)
        resolved = resolve(q.text, holdings)
        sides = [whole.Side(m.label, [h.source for h in m.holdings]) for m in resolved.matches]
        compare = bool(COMPARE.search(q.text))
        if not sides or (compare and len(sides) == 1 and is_followup_message(q.text)):
            own = self._conversation_side(conv, holdings)
            if own is not None:
                sides.insert(0, own)
        if compare and len(sides) == 1 and 2 <= len(sides[0].sources) <= MAX_COMPARED:
            # "Compare the three corellas": each note of the group is a side.
            by_source = {h.source: h for h in holdings}
            sides = [whole.Side(by_source[s].title, [s]) for s in sides[0].sources]
        if not sides:
            yield self._not_found(q, conv, resolved.close)
            return
        yield from whole.read_whole(self, q, sides, conv, cancel)

    def _conversation_side(self, conv: Conversation, holdings: Sequence[Holding]) -> whole.Side | None:
        """The document the conversation is about: the files the last answer cited, else the one
        its subject names (a photo's species note)."""
        known = {h.source: h for h in holdings}
        cited = [s for s in conv.last_sources if s in known]
        if cited:
            return whole.Side(known[cited[0]].title, cited[:1])
        subject = conv.subject()
        if subject:
            found = resolve(subject, holdings).matches
            if found:
                return whole.Side(subject, [h.source for h in found[0].holdings])
        return None

    def _not_found(self, q: Question, conv: Conversation, close: Sequence[Holding]) -> Answer:
        """No document the question names: say so, with the closest documents as related."""
        sources = [h.source for h in close]
        if not sources:
            hits, _warning = self.retrieve(q.text, conv.scope)
            sources = list(dict.fromkeys(h.source for h in hits))[:3]
        lines: list[Text] = [message(notes.DOCUMENT_NOT_FOUND)]
        if sources:
            lines.append(message(notes.DOCUMENT_CLOSEST, names=", ".join(sources)))
            lines.append(message(notes.DOCUMENT_NAME_IT, example=PurePosixPath(sources[0]).name))
        related = [Citation(i, s, None) for i, s in enumerate(sources, 1)]
        text = render_lines(lines, notes.answer_language(q.language))
        answer = Answer(text, [], by="extractive", refused=True, related=related, lines=lines)
        conv.add_turn(q.text, answer.text)
        return answer

    def _which_subject(self, q: Question, conv: Conversation) -> Iterator[Event]:
        """A follow-up ("how big is it?") to a photo that could be several of the notes: answered
        from each of the first candidates' own notes ("If it is the Scarlet Macaw: ... [1]"), each
        part cited, then asks which one it is. Without a library it only names them and asks."""
        lang = q.language
        names = ", ".join(conv.subject_options)
        options = conv.subject_options[:MAX_SUBJECT_OPTIONS]
        if self.kb is None or not options:
            yield RouteDecided(False, "", True, "heuristic", reason="the photo's species is not settled")
            text = notes.written(message(notes.WHICH_SUBJECT, names=names), lang)
            answer = Answer(text, [], by="extractive")
            conv.add_turn(q.text, answer.text)
            yield answer
            return
        queries = [rewrite_followup(q.text, name) for name in options]
        reason = "the photo's species is not settled: each candidate's note is searched"
        yield RouteDecided(True, " / ".join(queries), True, "heuristic", reason=reason)
        quoted: list[ContextBlock] = []  # the cited blocks, numbered anew across the candidates
        parts: list[str] = []
        for name, query in zip(options, queries, strict=True):
            hits, warning = self.retrieve(query, conv.scope)
            if warning:
                yield warning
            yield Retrieved(hits, query)
            text, block = self._candidate_answer(replace(q, subject=name), hits, query)
            if block is not None:
                n = next((b.n for b in quoted if b.hit.chunk_id == block.hit.chunk_id), len(quoted) + 1)
                if n > len(quoted):
                    quoted.append(replace(block, n=n))
                text = f"{text} [{n}]"
            parts.append("- " + notes.written(message(notes.IF_IT_IS, name=name, answer=text), lang))
        could_be = notes.written(message(notes.COULD_BE, names=names), lang)
        text = "\n\n".join([could_be, "\n".join(parts), notes.written(message(notes.WHICH_ONE), lang)])
        # No candidate's note answers: a refusal, as for one subject.
        answer = Answer(
            text, citations_for([b.n for b in quoted], quoted), by="extractive", refused=not quoted
        )
        conv.add_turn(q.text, answer.text)
        yield answer

    def _candidate_answer(
        self, q: Question, hits: Sequence[Hit], query: str
    ) -> tuple[str, ContextBlock | None]:
        """One candidate's part of an answer over several (``q.subject``: the candidate): what its
        note gives of the fact asked or that it lacks it, else (another kind of question) its
        note's best line; with the block to cite (None: nothing quoted)."""
        blocks = fit_blocks(hits, self.config.llm.context_window)
        fact = subject_fact(q, blocks)
        if fact is not None and fact.cited:
            return fact.short or fact.lead, next(b for b in blocks if b.n == fact.cited[0])
        own = [blocks[i] for i in subject_blocks(blocks, q.subject)]
        if not own:
            return notes.written(message(notes.NO_NOTE_FOUND), q.language), None
        ex = extractive_answer(q, own, note="", max_sentences=1, about=query)
        if ex.coverage < CANDIDATE_COVERAGE:  # its best line is about the candidate, not what is asked
            return notes.written(message(notes.NOTE_DOES_NOT_ANSWER), q.language), None
        block = next((b for b in own if ex.cited and b.n == ex.cited[0]), None)
        return ex.lead, block

    @property
    def identifier(self) -> Identifier:
        if self._identifier_of is not None:
            return self._identifier_of()
        if self._own_identifier is None:
            from desktop_app.core.identify.flow import Identifier

            self._own_identifier = Identifier(self.kb, self.chat_model, self.config)
        return self._own_identifier

    def identify(
        self,
        image: ImageSource,
        question: str | None = None,
        conversation: Conversation | None = None,
        cancel: TaskState | None = None,
    ) -> Iterator[Event]:
        """Identify a photo (identify/flow.py): Classified, FeatureQueries, Retrieved, Decision,
        Answer. A named species (never "uncertain") becomes the conversation's ``last_subject``,
        so "what does it eat?" resolves to it; this is the one place a photo sets the subject."""
        from desktop_app.core.identify.names import pretty_name
        from desktop_app.core.identify.result import UNCERTAIN

        conv = conversation if conversation is not None else self.conversation
        final = None
        options: list[str] = []
        answer = ""
        classes: set[str] = set()  # the classifier's own labels (ImageNet's), not the library's names
        title = ""
        try:
            for event in self.identifier.run(image, question=question, scope=conv.scope, cancel=cancel):
                if isinstance(event, Classified):
                    classes = {c.name for c in event.candidates if c.source == "imagenet"}
                elif isinstance(event, Decision):
                    final = event.final_name
                    options = subject_options(event)
                    title = event.titles.get(final, "")
                elif isinstance(event, Answer):
                    answer = event.text
                    self._stamp(event)
                yield event
        except Cancelled:
            yield Warning(message(STOPPED))
            return
        conv.subject_options = options
        if final == UNCERTAIN:
            # A photo that names nothing replaces the subject too: "it" is no longer the last one.
            conv.last_subject = conv.last_query = None
        elif final:
            # ImageNet's "African grey" is searched as the one note it names ("African Grey Parrot"),
            # which a page in another language gives as its English name; the library's own labels
            # stay as they are (a Chinese page's title finds that page best).
            conv.last_subject = title if title and final in classes else pretty_name(final)
            label = getattr(image, "name", None) or "photo"
            conv.add_turn(question or f"[photo: {label}] What is this?", answer)

    def retrieve(
        self, query: str, scope: str | None = None, also: Sequence[str] = ()
    ) -> tuple[list[Hit], Warning | None]:
        """Hits for ``query`` (and the queries ``also``, merged: the question in the library's other
        language); a search failure becomes a Warning and no hits, never an exception."""
        if not also and self._probe_cache and self._probe_cache[:2] == (query, scope):
            return list(self._probe_cache[2]), None
        try:
            top_k = self.config.retrieval.top_k
            hits = list(
                self.kb.search_many([query, *also], top_k=top_k, scope=scope)
                if also
                else self.kb.search(query, top_k=top_k, scope=scope)
            )
            # Chunks that failed their integrity check (a store without seals, as tests' fakes, has none).
            left_out = getattr(self.kb, "search_notes", None) or getattr(self.kb, "search_warnings", list)
            told = left_out()
            if len(told) == 1:  # one message (a model that failed) stays one, to be translated
                return hits, Warning(told[0])
            return hits, Warning(" ".join(str(n) for n in told)) if told else None
        except Exception as exc:  # the index may be missing, locked or mid-rebuild
            log.warning("search failed: %s", exc)
            return [], Warning(message(notes.SEARCH_FAILED, error=exc))

    def answer_from_hits(
        self,
        question: str | Question,
        hits: Sequence[Hit],
        conv: Conversation,
        route: Route | None = None,
        cancel: TaskState | None = None,
    ) -> Iterator[Event]:
        """Stream an answer from ``hits`` (LLM if any, else extractive) and record the turn."""
        q = as_question(question)
        question, lang = q.text, q.language
        use_rag = route.use_rag if route is not None else True
        about = route.search_query if route is not None else ""
        if (
            use_rag
            and hits
            and not fact_answerable(q, fit_blocks(hits, self.config.llm.context_window), about)
            and self.weak_evidence(route.search_query if route else question, hits, route.translated if route else "")
        ):
            answer = self._refusal(lang, fit_blocks(hits, self.config.llm.context_window))
            conv.add_turn(question, answer.text)
            yield answer
            return
        if self.chat_model is None:
            if use_rag:
                blocks = fit_blocks(hits, self.config.llm.context_window)
                answer = self._extractive(q, blocks, None, route.search_query if route else "")
                answer.refused = answer.refused or not blocks  # "no relevant passages were found"
            else:
                answer = Answer(notes.written(message(notes.NO_MODEL_CHAT), lang), [], by="extractive")
            conv.add_turn(question, answer.text)
            yield answer
            return
        budget = Budget(
            self.chat_model.context_window,
            self.config.llm.max_tokens,
            getattr(self.chat_model, "count_tokens", None),
        )
        base = answer_system("", lang) if use_rag else CHAT_SYSTEM[lang]
        history = self._fit_history(conv.history, budget, base, question)
        room = budget.available([base, question] + [m["content"] for m in history])
        blocks = fit_blocks(hits, room, budget) if use_rag else []
        if blocks and self._sentences_only():
            llm = self.config.llm
            blocks = key_sentences(
                q,
                blocks[: llm.context_passages or None],
                most=llm.context_sentences,
                meaning=self.meaning(),
                translate=self.config.retrieval.translate,
            )
        if use_rag and hits and len(blocks) < len(hits):
            log.info("context window fits %d of %d hits", len(blocks), len(hits))
        translate = bool(blocks) and _other_language(lang, blocks[0].hit.text)  # the likely answer's
        sys_text = answer_system(render_blocks(blocks), lang, translate) if use_rag else base
        if conv.system_prompt.strip():  # the chat's own instructions come first, the rules after
            sys_text = f"{conv.system_prompt.strip()}\n\n{sys_text}"
        messages: list[Message] = [{"role": "system", "content": sys_text}, *history]
        messages.append({"role": "user", "content": question})
        parts: list[str] = []
        try:
            for piece in self.chat_model.stream(
                messages, max_tokens=self.config.llm.max_tokens, temperature=conv.temperature, cancel=cancel
            ):
                parts.append(piece)
                yield Token(piece)
            if not "".join(parts).strip():
                raise LLMError(message(notes.EMPTY_ANSWER), "bad_output")
            if not CITATION_MARK.sub("", "".join(parts)).strip(" \t\n.,;:。，；："):
                # "[1]" alone: a small model pointing at a passage instead of answering from it.
                raise LLMError(message(notes.CITATION_ONLY), "bad_output")
        except Cancelled:
            text = "".join(parts)
            conv.add_turn(question, text)
            yield Warning(message(STOPPED))
            yield Answer(text, citations_for(parse_citations(text, blocks)[0], blocks))
            return
        except LLMError as exc:
            yield from self.fallback(q, exc, blocks, hits, conv, use_rag, partial="".join(parts))
            return
        text, citations, warning = check_citations("".join(parts).strip(), blocks)
        if warning:
            yield warning
        conv.add_turn(question, text)
        if use_rag and not citations and says_not_in_context(text):
            # The model read the passages and found no answer: a refusal, with them as related.
            yield Answer(text, [], by="llm", refused=True, related=self._related(blocks))
            return
        if use_rag and not citations and (n := quoted_in(text, blocks) or figures_in(text, blocks)) is not None:
            # A short answer copied from a passage but left unmarked (the 1.5B model does so in
            # most Chinese answers): cite the passage that holds it word for word, or that holds
            # its every figure (the answer in other words, or in the question's language).
            text = f"{text} [{n}]"
            citations = citations_for([n], blocks)
        yield Answer(text, citations, by="llm")

    def fallback(
        self,
        question: str | Question,
        exc: LLMError,
        blocks: list[ContextBlock],
        hits: Sequence[Hit],
        conv: Conversation,
        use_rag: bool,
        partial: str = "",
    ) -> Iterator[Event]:
        """A Warning and an extractive answer in place of the LLM's (``partial``: what it had said)."""
        q = as_question(question)
        question, lang = q.text, q.language
        when = message(notes.MID_ANSWER if partial else notes.BEFORE_ANSWERING)
        yield Warning(message(notes.FALLBACK, error=exc, when=when))
        if not use_rag:  # the router said no documents; passages are still better than nothing
            hits, warning = self.retrieve(question, conv.scope)
            if warning:
                yield warning
            yield Retrieved(list(hits), question)
        if not blocks:
            blocks = fit_blocks(hits, self.config.llm.context_window)
        if not blocks:
            text = notes.written(message(notes.MODEL_FAILED_NOTHING_FOUND), lang)
            answer = Answer(text, [], by="extractive")
        else:
            answer = self._extractive(q, blocks, message(notes.MODEL_FAILED_PASSAGES))
        conv.add_turn(question, answer.text)
        yield answer

    def subject_of(self, query: str) -> str:
        """What a follow-up to ``query`` refers back to: its rarest words in the library."""
        if self.kb is None:
            return topic_of(query)
        try:
            return key_terms(query, self.kb.keyword.doc_freq)
        except Exception as exc:  # the keyword index may be missing or mid-rebuild
            log.warning("subject terms failed: %s", exc)
            return topic_of(query)

    def weak_evidence(self, query: str, hits: Sequence[Hit], translated: str = "") -> bool:
        """True when no top passage holds enough of the query's rare terms to answer it. The
        model's translation of the query (``translated``) can show a passage holds them, but never
        outweighs a word named nowhere in the library in either language ("calories")."""
        why = self._weakness(query, hits)
        if why is None or why == "absent" or not translated:
            return why is not None
        return self._weakness(translated, hits) is not None

    def _weakness(self, query: str, hits: Sequence[Hit]) -> str | None:
        """Why the passages do not answer ``query``: "coverage" (its rare terms are not in them),
        "absent" (what it asks about is named nowhere), "far" (MiniLM's cosine); None when they may."""
        cfg = self.config.answer
        if self.kb is None:
            return None
        try:
            name = self.kb.embedder_name
            found = self._judge(query, hits, True, cross_lingual=multilingual_family(name) is not False)
        except Exception as exc:  # a judge failure must not cost the answer
            log.warning("evidence check failed: %s", exc)
            return None
        log.info("evidence for %r: %s", query, found.to_dict())
        if cfg.max_absent > 0 and found.absent >= cfg.max_absent and found.coverage < cfg.covered:
            return "absent"  # what it asks about is named nowhere in the library ("calories")
        if found.coverage < cfg.min_coverage:
            return "coverage"
        # The similarity floor means nothing for a language MiniLM cannot read.
        top = hits[: max(1, cfg.judge_passages)]
        far = (
            self._cosine_floor() is not None
            and not has_cjk(query)  # MiniLM reads no Chinese: its cosine says nothing of a name in it
            # nor of a Chinese page an English question found by its words' translations
            and not any(has_cjk(h.text) for h in top)
            and found.vector is not None
            and found.vector < cfg.min_similarity
        )
        return "far" if far else None

    def _translated(self, q: Question, query: str, cancel: TaskState | None) -> str:
        """``query`` in the library's other language, written by the model (``retrieval.
        model_translate``): "" without a model, or where the library holds the question's language
        only (an English library is never asked about, nor the model called)."""
        if self.chat_model is None or self.kb is None or not self.config.retrieval.model_translate:
            return ""
        try:
            held = self.kb.keyword.languages()
        except Exception as exc:  # noqa: BLE001 - an unreadable index searches the question as asked
            log.warning("library languages not read: %s", exc)
            return ""
        target = "zh" if q.language == "en" and "zh" in held else "en" if q.language == "zh" and "latin" in held else ""
        return translate_query(self.chat_model, query, target, cancel) if target else ""

    def _cosine_floor(self) -> float | None:
        """The cosine under which a passage is far from a question (``answer.min_similarity``):
        calibrated on MiniLM's cosines only, so None for any other encoder (or none set)."""
        if self.kb is None or self.kb.embedder_name not in (MINILM_FP32, MINILM_INT8):
            return None
        return self.config.answer.min_similarity or None

    def meaning(self) -> Meaning | None:
        """The library's encoder as a judge of how close sentences are to a question by meaning
        (cosine; None for a text in a language it cannot read), for the extractive answer and the
        sentences a small model reads; None with no library."""
        try:
            embedder = getattr(self.kb, "embedder", None)
        except Exception as exc:  # noqa: BLE001 - an encoder that cannot load leaves the words alone
            log.warning("no encoder for the extractive answer: %s", exc)
            return None
        if embedder is None:
            return None
        multilingual = is_multilingual(embedder)

        def cosines(question: str, sentences: Sequence[str]) -> list[float | None]:
            if not reads(multilingual, text_lang(question)):
                return [None] * len(sentences)
            readable = [i for i, s in enumerate(sentences) if reads(multilingual, text_lang(s))]
            if not readable:
                return [None] * len(sentences)
            q = np.asarray(embedder.embed_queries([question]), dtype=np.float32)[0]
            docs = np.asarray(embedder.embed_documents([sentences[i] for i in readable]), dtype=np.float32)
            norms = np.linalg.norm(docs, axis=1) * (np.linalg.norm(q) or 1.0)
            sims = docs @ q / np.where(norms > 0, norms, 1.0)
            out: list[float | None] = [None] * len(sentences)
            for i, sim in zip(readable, sims, strict=True):
                out[i] = float(sim)
            return out

        return cosines

    # ------------------------------------------------------------------ internals
    def _sentences_only(self) -> bool:
        """Whether the model reads the passages' best sentences rather than whole passages."""
        context = self.config.llm.context
        return context == "sentences" or (context == "auto" and self.config.llm.backend == "gguf")

    @staticmethod
    def _related(blocks: Sequence[ContextBlock], n: int = 3) -> list[Citation]:
        return citations_for([b.n for b in blocks[:n]], blocks)

    def _refusal(self, lang: str, blocks: Sequence[ContextBlock]) -> Answer:
        """Refuse: "your documents do not seem to answer this", the nearest passages as related."""
        by = "extractive" if self.chat_model is None else "evidence"
        text = notes.written(message(notes.NOT_ANSWERED), lang)
        return Answer(text, [], by=by, refused=True, related=self._related(blocks))

    def _judge(
        self, query: str, hits: Sequence[Hit], with_vectors: bool = False, cross_lingual: bool = False
    ) -> Evidence:
        """The evidence check over the top ``answer.judge_passages`` hits."""
        top = hits[: max(1, self.config.answer.judge_passages)]
        vectors = [h.vector_score for h in top] if with_vectors else []
        languages = getattr(self.kb.keyword, "languages", set)() if self.config.retrieval.translate else set()
        return judge(query, [h.text for h in top], self.kb.keyword.doc_freq, vectors, cross_lingual, languages)

    def _coverage(self, query: str) -> float | None:
        """The evidence check's coverage of ``query`` by the probe's hits (searched if need be)."""
        if self.kb is None:
            return None
        hits, _warning = self.retrieve(query, self._scope)
        if not hits:
            return 0.0
        try:
            return self._judge(query, hits).coverage
        except Exception as exc:  # a judge failure only means the model is asked
            log.warning("evidence check failed: %s", exc)
            return None

    def _probe(self, query: str) -> float | None:
        """The router's retrieval evidence: best hit's score (hits kept for the real retrieval)."""
        try:
            hits = list(self.kb.search(query, top_k=self.config.retrieval.top_k, scope=self._scope))
        except Exception as exc:
            log.warning("evidence search failed: %s", exc)
            return None
        self._probe_cache = (query, self._scope, hits)
        return max((evidence_score(h) for h in hits), default=0.0)

    def _extractive(
        self, q: Question, blocks: Sequence[ContextBlock], note: Text | None, about: str = ""
    ) -> Answer:
        meaning = self.meaning()
        translate = self.config.retrieval.translate
        ex = extractive_answer(q, blocks, note=note, about=about, meaning=meaning, translate=translate)
        lang = q.language
        quoted = [b for b in blocks if b.n in ex.cited]
        if note is None and quoted and all(_other_language(lang, b.hit.text) for b in quoted):
            # Say why the answer is not in the user's language.
            note = message(notes.NO_MODEL_OTHER_LANGUAGE)
            ex = extractive_answer(q, blocks, note=note, about=about, meaning=meaning, translate=translate)
        return Answer(ex.text, citations_for(ex.cited, blocks), by="extractive", refused=ex.refused)

    def _fit_history(self, history: list[Message], budget: Budget, base: str, question: str) -> list[Message]:
        """Recent turns that fit in a third of what is left after the fixed prompt."""
        room = budget.available([base, question]) // 3
        kept: list[Message] = []
        # A refused turn tells the model nothing, and a small one copies it: after two refusals
        # SmolLM2 refused an answerable question in the same words. Drop the question with it.
        refused = notes.written_forms(notes.NOT_ANSWERED)
        drop = {
            j
            for i, m in enumerate(history)
            if m["role"] == "assistant" and m["content"].startswith(refused)
            for j in (i - 1, i)
        }
        history = [m for i, m in enumerate(history) if i not in drop]
        for msg in reversed(history):
            cost = budget.count(msg["content"]) + 8
            if cost > room:
                break
            kept.insert(0, msg)
            room -= cost
        if kept and kept[0]["role"] == "assistant":
            kept.pop(0)
        return kept
