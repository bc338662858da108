"""Conversations that outlast the process: one SQLite file, ``<data-dir>/conversations.sqlite3``.

The assistant's events stay the one source: ``ConversationStore.record`` passes a question's (or a
photo's) events through unchanged and, once the turn is complete (its ``Answer`` arrived and the
stream ended), writes it as one message in one transaction, with the conversation's follow-up state
(``last_subject``, ``last_query``). A crash mid-answer therefore loses at most that answer. The
window and ``kdesk ask --chat`` both record through it; ``load`` gives back the messages (replayable
as events for display) and the ``Conversation`` a follow-up continues from.

WAL mode lets the window read while a ``kdesk`` process writes. Each call opens its own short
connection, so any thread may use the store.

A damaged file (it does not open as SQLite, ``PRAGMA quick_check`` finds a fault, or a read meets
SQLITE_CORRUPT while the app runs) is set aside beside itself, never deleted, and every row that can
still be read is copied into a new file (``core/sqlite_repair.py``); ``on_repaired`` is told, with
the message naming both files and how many conversations were kept.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from desktop_app.core import messages, sqlite_repair
from desktop_app.core.ask import notes
from desktop_app.core.ask.conversation import Conversation
from desktop_app.core.events import (
    Answer,
    Candidate,
    Citation,
    Classified,
    Decision,
    Event,
    FeatureQueries,
    Retrieved,
    RouteDecided,
    Warning,
)
from desktop_app.core.formats import (
    STORE_CONVERSATIONS,
    FormatTooNew,
    check_readable,
    check_sqlite_file,
    user_version,
)
from desktop_app.core.identify.names import pretty_name
from desktop_app.core.identify.result import UNCERTAIN, IdentifyResult, decision_json
from desktop_app.core.library.documents import Hit
from desktop_app.core.library.names import fs_path
from desktop_app.core.messages import (
    Message,
    Text,
    UserError,
    from_english,
    from_json,
    lines_from_json,
    to_json,
)

log = logging.getLogger(__name__)

FILE_NAME = "conversations.sqlite3"
# 2: citations.sha256; 3: warnings (and a card's) as {code, params}, not English; 4: a card's
# reasoning, follow-up, queries, description and answer lines as {code, params} too; 5: a
# conversation's system prompt, temperature and where its title came from (title_source)
SCHEMA_VERSION = 5
TITLE_CHARS = 60  # a title taken from the first question is cut here
# PRAGMA quick_check reads the whole file: 65 MB (2000 conversations, 20000 answers) took 0.27-0.6 s
# at load 5. Above this size only the open (header, schema, version) and each read look for damage.
QUICK_CHECK_MAX_BYTES = 32 * 1024 * 1024

SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id           TEXT PRIMARY KEY,
    title        TEXT NOT NULL,
    scope        TEXT,              -- the collection searched; NULL: shared documents only
    last_subject TEXT,              -- what follow-ups resolve against (a named species, a topic)
    last_query   TEXT,              -- the last search's key terms, the fallback subject
    created      TEXT NOT NULL,     -- ISO 8601 UTC
    updated      TEXT NOT NULL,
    system_prompt TEXT NOT NULL DEFAULT '',  -- the user's instructions for this chat ('' : none)
    temperature  REAL,              -- the sampling temperature for this chat (NULL: the settings')
    title_source TEXT NOT NULL DEFAULT 'auto'  -- 'auto' | 'file' (a photo's file name) | 'user'
);
CREATE INDEX IF NOT EXISTS conversations_updated ON conversations(updated);
CREATE TABLE IF NOT EXISTS messages (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    kind            TEXT NOT NULL,  -- 'ask' | 'identify'
    question        TEXT NOT NULL,  -- may be '' for a photo sent without one
    answer          TEXT NOT NULL,
    answer_by       TEXT NOT NULL,  -- 'llm' | 'extractive' | 'evidence'
    refused         INTEGER NOT NULL DEFAULT 0,
    route           TEXT,           -- JSON of RouteDecided, NULL when none was made
    image           TEXT,           -- identify: the photo's absolute path
    card            TEXT,           -- identify: JSON of IdentifyResult without hits and timings
    turn            TEXT,           -- JSON [user, assistant]: what entered the model's history, or NULL
    warnings        TEXT NOT NULL DEFAULT '[]',
    created         TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_conversation ON messages(conversation_id, id);
CREATE TABLE IF NOT EXISTS citations (
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    role       TEXT NOT NULL,       -- 'cited' | 'related' (a refusal's nearest) | 'evidence' (a card's hits)
    ord        INTEGER NOT NULL,
    n          INTEGER NOT NULL,
    source     TEXT NOT NULL,       -- the document's name, relative to the knowledge folder
    page       INTEGER,
    chunk_id   TEXT NOT NULL,
    text       TEXT NOT NULL,       -- the passage, so the viewer can find and highlight it again
    sha256     TEXT NOT NULL DEFAULT '',  -- the file's hash at answer time ('' before version 2)
    PRIMARY KEY (message_id, role, ord)
);
"""


def _migrate(db: sqlite3.Connection) -> None:
    """Bring a file written by an older version up to SCHEMA_VERSION (idempotent; a new column has a
    default, so an older version of the app still reads and writes the file)."""
    db.execute("BEGIN IMMEDIATE")  # two processes opening an old file at once migrate it once
    try:
        columns = {r[1] for r in db.execute("PRAGMA table_info(citations)")}
        if "sha256" not in columns:
            db.execute("ALTER TABLE citations ADD COLUMN sha256 TEXT NOT NULL DEFAULT ''")
        if db.execute("PRAGMA user_version").fetchone()[0] < 5:
            _conversation_options(db)
        if db.execute("PRAGMA user_version").fetchone()[0] < 3:
            _warnings_as_messages(db)
        if db.execute("PRAGMA user_version").fetchone()[0] < 4:
            _cards_as_messages(db)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _conversation_options(db: sqlite3.Connection) -> None:
    """Schema 5: a system prompt, a temperature and the title's source per conversation; an old
    conversation titled by its first photo's file name ("2.jpg") is marked 'file', not 'auto'."""
    columns = {r[1] for r in db.execute("PRAGMA table_info(conversations)")}
    if "system_prompt" not in columns:
        db.execute("ALTER TABLE conversations ADD COLUMN system_prompt TEXT NOT NULL DEFAULT ''")
    if "temperature" not in columns:
        db.execute("ALTER TABLE conversations ADD COLUMN temperature REAL")
    if "title_source" not in columns:
        db.execute("ALTER TABLE conversations ADD COLUMN title_source TEXT NOT NULL DEFAULT 'auto'")
    rows = db.execute(
        "SELECT c.id, c.title, m.image FROM conversations c JOIN messages m ON m.id ="
        " (SELECT MIN(id) FROM messages WHERE conversation_id = c.id) WHERE m.kind = 'identify'"
    ).fetchall()
    for conv_id, title, image in rows:
        if image and title == _title_of(Path(image).name):
            db.execute("UPDATE conversations SET title_source = 'file' WHERE id = ?", (conv_id,))


def _warnings_as_messages(db: sqlite3.Connection) -> None:
    """Schema 3: the English warnings (and a card's warnings and error) older versions stored become
    their ``{code, params}``, parsed back once here; a text that is no message stays a text."""
    for row_id, warnings, card in db.execute("SELECT id, warnings, card FROM messages").fetchall():
        new = json.dumps([_english_json(w) for w in json.loads(warnings or "[]")], ensure_ascii=False)
        if card:
            data = json.loads(card)
            data["warnings"] = [_english_json(w) for w in data.get("warnings", [])]
            if data.get("error"):
                data["error"] = _english_json(data["error"])
            card = json.dumps(data, ensure_ascii=False)
        db.execute("UPDATE messages SET warnings = ?, card = ? WHERE id = ?", (new, card, row_id))


def _english_json(value: Any) -> Any:
    return to_json(from_english(value)) if isinstance(value, str) else value


def _cards_as_messages(db: sqlite3.Connection) -> None:
    """Schema 4: an identification card's English texts (reasoning, follow-up, feature queries,
    visual description) and its answer's lines become their ``{code, params}``, parsed back once
    here, so the window shows an old card in its language; a line that is no message (a model's
    words, a quoted note) stays a text."""
    rows = db.execute("SELECT id, answer, card FROM messages WHERE card IS NOT NULL").fetchall()
    for row_id, answer, card in rows:
        data = json.loads(card)
        decision = data.get("decision") or None
        if decision and isinstance(decision.get("reasoning"), str):
            decision["reasoning"] = [to_json(t) for t in _english_lines(decision["reasoning"])]
            decision["followup"] = _english_json(decision.get("followup", ""))
        data["feature_queries"] = [_english_json(q) for q in data.get("feature_queries", [])]
        data["visual_description"] = _english_json(data.get("visual_description", ""))
        if "answer_lines" not in data:
            data["answer_lines"] = [to_json(t) for t in _english_lines(answer or "")]
        db.execute("UPDATE messages SET card = ? WHERE id = ?", (json.dumps(data, ensure_ascii=False), row_id))


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def _english_lines(text: str) -> list[Text]:
    """An English text of the identify flow as its lines' messages. A card saved before the flow
    wrote one sentence per line has several on one line: split them where that finds messages."""
    out: list[Text] = []
    for line in (line.strip() for line in text.splitlines()):
        if not line:
            continue
        found = from_english(line)
        # A field spanning sentences means several sentences on one line (an old card).
        if isinstance(found, messages.Message) and not _SENTENCE.search(_params_text(found)):
            out.append(found)
            continue
        parts = [from_english(p) for p in _SENTENCE.split(line)]
        if len(parts) > 1 and any(isinstance(p, messages.Message) for p in parts):
            out += parts
        else:
            out.append(found)
    return out


def _params_text(msg: messages.Message) -> str:
    return " ".join(str(v) for v in msg.params.values())


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _title_of(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1].rstrip() + "…"


def photo_title(decision: Decision | None, chinese: bool = False) -> Text:
    """A photo conversation's title: the species the decision named (its notes' Chinese name for a
    Chinese window, else their English title), "Uncertain: A or B" with its nearest guesses, or ""
    when it named nothing (the file name then stays)."""
    if decision is None:
        return ""
    names = decision.zh_names if chinese else decision.titles

    def shown(label: str) -> str:
        return names.get(label) or decision.titles.get(label) or pretty_name(label)

    if decision.final_name and decision.final_name != UNCERTAIN:
        return shown(decision.final_name)
    options = list(dict.fromkeys([*decision.guesses, *decision.also_possible]))[:2]
    if len(options) == 2:
        return messages.message(notes.PHOTO_UNCERTAIN_TWO, a=shown(options[0]), b=shown(options[1]))
    if options:
        return messages.message(notes.PHOTO_UNCERTAIN_ONE, a=shown(options[0]))
    return ""


@dataclass
class StoredCitation:
    """A citation as stored; ``gone`` is True when its file has left the knowledge folder since."""

    n: int
    source: str
    page: int | None
    chunk_id: str = ""
    text: str = ""
    gone: bool = False
    sha256: str = ""  # the file's hash when the answer was given ("" when unknown)

    def citation(self) -> Citation:
        return Citation(self.n, self.source, self.page, self.chunk_id, self.text, self.sha256)

    def hit(self) -> Hit:
        """An identification card's evidence passage, as the card shows hits."""
        return Hit(self.chunk_id, "", self.text, self.source, self.page, 0, 0, 0.0)


@dataclass
class StoredMessage:
    """One completed turn: a question and its answer, or a photo and its identification."""

    kind: str  # "ask" | "identify"
    question: str
    answer: str
    answer_by: str = "llm"
    refused: bool = False
    route: RouteDecided | None = None
    citations: list[StoredCitation] = field(default_factory=list)
    related: list[StoredCitation] = field(default_factory=list)
    image: str | None = None
    card: IdentifyResult | None = None  # identify: candidates, level, queries, decision (hits below)
    evidence: list[StoredCitation] = field(default_factory=list)
    turn: tuple[str, str] | None = None  # what the model's history got from this turn
    warnings: list[Text] = field(default_factory=list)
    created: str = ""
    id: int = 0

    @property
    def image_gone(self) -> bool:
        return self.image is not None and not Path(self.image).exists()

    def answer_event(self) -> Answer:
        return Answer(
            self.answer,
            [c.citation() for c in self.citations],
            by=self.answer_by,
            refused=self.refused,
            related=[c.citation() for c in self.related],
            lines=list(self.card.answer_lines) if self.card is not None else [],
        )

    def events(self) -> list[Event]:
        """The turn replayed as the events that produced it (what a view renders)."""
        out: list[Event] = []
        if self.card is not None:
            card = self.card
            out.append(Classified(list(card.candidates), card.confidence_level, card.low_confidence))
            if card.feature_queries or card.visual_description:
                out.append(FeatureQueries(list(card.feature_queries), card.visual_description))
            if self.evidence:
                out.append(Retrieved([c.hit() for c in self.evidence]))
            if card.decision is not None:
                out.append(card.decision)
        elif self.route is not None:
            out.append(self.route)
        out += [Warning(w) for w in self.warnings]
        out.append(self.answer_event())
        return out

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "question": self.question,
            "answer": self.answer,
            "answer_by": self.answer_by,
            "refused": self.refused,
            "route": asdict(self.route) if self.route is not None else None,
            "citations": [asdict(c) for c in self.citations],
            "related": [asdict(c) for c in self.related],
            "warnings": [str(w) for w in self.warnings],  # JSON renders English
            "created": self.created,
        }
        if self.kind == "identify":
            out["image"] = self.image
            out["image_gone"] = self.image_gone
            out["card"] = _card_english(self.card) if self.card is not None else None
            out["evidence"] = [asdict(c) for c in self.evidence]
        return out


@dataclass
class ChatSummary:
    """One row of the conversation list."""

    id: str
    title: str
    scope: str | None
    created: str
    updated: str
    messages: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class StoredChat:
    """A whole conversation as loaded: its row, its messages and its follow-up state."""

    id: str
    title: str
    scope: str | None
    last_subject: str | None
    last_query: str | None
    created: str
    updated: str
    messages: list[StoredMessage] = field(default_factory=list)
    system_prompt: str = ""
    temperature: float | None = None
    title_source: str = "auto"  # "auto" | "file" (a photo's file name) | "user" (renamed)

    def conversation(self, max_turns: int = 10) -> Conversation:
        """The live state a follow-up continues from: same id, recent turns, subject, scope and
        the chat's own system prompt and temperature."""
        conv = Conversation(
            id=self.id,
            last_subject=self.last_subject,
            last_query=self.last_query,
            scope=self.scope,
            max_turns=max_turns,
            system_prompt=self.system_prompt,
            temperature=self.temperature,
        )
        for message in self.messages:
            if message.turn is not None:
                conv.add_turn(*message.turn)
        last = self.messages[-1] if self.messages else None
        if last is not None and last.card is not None and last.card.decision is not None:
            from desktop_app.core.ask.assistant import subject_options

            conv.subject_options = subject_options(last.card.decision)  # the photo left it open
        return conv

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "scope": self.scope,
            "last_subject": self.last_subject,
            "last_query": self.last_query,
            "created": self.created,
            "updated": self.updated,
            "system_prompt": self.system_prompt,
            "temperature": self.temperature,
            "messages": [m.to_dict() for m in self.messages],
        }


def _card_english(card: IdentifyResult) -> dict[str, Any]:
    """The card as `kdesk chats show --json` prints it: as `kdesk identify --json`, in English."""
    data = card.to_dict()
    del data["hits"], data["timings_ms"]
    return data


def _card_json(card: IdentifyResult) -> dict[str, Any]:
    data = card.to_dict()
    del data["hits"], data["timings_ms"]  # hits are rows of `citations`; timings say nothing later
    # stored as messages, rendered when shown (to_dict's English is for `kdesk identify --json`)
    data["warnings"] = [to_json(w) for w in card.warnings]
    data["error"] = to_json(card.error) if card.error is not None else None
    data["visual_description"] = to_json(card.visual_description)
    data["feature_queries"] = [to_json(q) for q in card.feature_queries]
    data["answer_lines"] = [to_json(line) for line in card.answer_lines]
    if card.decision is not None:
        data["decision"] = decision_json(card.decision, to_json)
    return data


def _card_from(data: dict[str, Any]) -> IdentifyResult:
    decision = dict(data.get("decision") or {})
    if decision:
        decision["reasoning"] = lines_from_json(decision.get("reasoning"))
        decision["followup"] = from_json(decision.get("followup", ""))
    return IdentifyResult(
        candidates=[Candidate(**c) for c in data.get("candidates", [])],
        confidence_level=data.get("confidence_level", "Low"),
        confidence_score=data.get("confidence_score", 0.0),
        low_confidence=data.get("low_confidence", True),
        visual_description=from_json(data.get("visual_description", "")),
        feature_queries=lines_from_json(data.get("feature_queries", [])),
        decision=Decision(**decision) if decision else None,
        answer=data.get("answer", ""),
        answer_lines=lines_from_json(data.get("answer_lines", [])),
        warnings=[from_json(w) for w in data.get("warnings", [])],
        error=from_json(data["error"]) if data.get("error") else None,
    )


def _stored(c: Citation) -> StoredCitation:
    return StoredCitation(c.n, c.source, c.page, c.chunk_id, c.text, sha256=c.sha256)


class _Turn:
    """Collects one turn's events into a StoredMessage."""

    def __init__(self, question: str, image: Path | None) -> None:
        self.question = question
        self.image = image
        self.events: list[Event] = []
        self.route: RouteDecided | None = None
        self.answer: Answer | None = None
        self.warnings: list[Text] = []

    def add(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, RouteDecided):
            self.route = event
        elif isinstance(event, Answer):
            self.answer = event
        elif isinstance(event, Warning):
            self.warnings.append(event.message)

    def message(self, turn: tuple[str, str] | None) -> StoredMessage:
        answer = self.answer
        assert answer is not None
        cite = [_stored(c) for c in answer.citations]
        related = [_stored(c) for c in answer.related]
        if self.image is None:
            return StoredMessage(
                "ask", self.question, answer.text, answer.by, answer.refused, self.route,
                cite, related, turn=turn, warnings=self.warnings,
            )  # fmt: skip
        card = IdentifyResult.from_events(self.events)
        evidence = [
            StoredCitation(i + 1, h.source, h.page, h.chunk_id, h.text) for i, h in enumerate(card.hits)
        ]
        return StoredMessage(
            "identify", self.question, answer.text, answer.by, answer.refused, None, cite, related,
            image=str(self.image), card=card, evidence=evidence, turn=turn, warnings=self.warnings,
        )  # fmt: skip


def _reattach(db: sqlite3.Connection) -> dict[str, int]:
    """Make the rows copied from a damaged file hold together: a message whose conversation row was
    lost gets it back (titled by its first question, or its photo's file name, as a new one would
    be); a message whose stored JSON no longer parses, and a citation whose message was lost, are
    dropped. Returns what was done, for the log."""
    garbled = []
    for row_id, route, card, turn, warnings in db.execute(
        "SELECT id, route, card, turn, warnings FROM messages"
    ):
        try:
            if route:
                RouteDecided(**json.loads(route))
            if card:
                _card_from(json.loads(card))
            if turn:
                tuple(json.loads(turn))
            [from_json(w) for w in json.loads(warnings or "[]")]
        except (ValueError, TypeError, KeyError, AttributeError):
            garbled.append((row_id,))
    db.executemany("DELETE FROM messages WHERE id = ?", garbled)
    lost = db.execute(
        "SELECT conversation_id, MIN(id), MAX(created) FROM messages"
        " WHERE conversation_id NOT IN (SELECT id FROM conversations) GROUP BY conversation_id"
    ).fetchall()
    for conv_id, first, last in lost:
        question, image, created = db.execute(
            "SELECT question, image, created FROM messages WHERE id = ?", (first,)
        ).fetchone()
        title, source = question, "auto"
        if not title:
            title, source = (Path(image).name, "file") if image else (conv_id, "auto")
        db.execute(
            "INSERT INTO conversations (id, title, created, updated, title_source) VALUES (?, ?, ?, ?, ?)",
            (conv_id, _title_of(title), created, last, source),
        )
    cites = db.execute("DELETE FROM citations WHERE message_id NOT IN (SELECT id FROM messages)").rowcount
    return {"garbled messages": len(garbled), "conversations rebuilt": len(lost), "citations dropped": cites}


def check_format(path: Path | str) -> None:
    """Raise FormatTooNew when the conversations file at ``path`` is newer than this build reads."""
    check_sqlite_file(STORE_CONVERSATIONS, Path(path), SCHEMA_VERSION)


class StoreDamaged(UserError):
    """The conversation store is damaged and could not be repaired (set aside and rebuilt)."""

    def __init__(self, path: Path, error: object) -> None:
        self.path = path
        super().__init__(notes.STORE_DAMAGED, path=str(path), error=str(error))


_R = TypeVar("_R")
_P = ParamSpec("_P")


def _repairs(
    method: Callable[Concatenate[ConversationStore, _P], _R],
) -> Callable[Concatenate[ConversationStore, _P], _R]:
    """Run a store method; where the file turns out damaged while the app runs (SQLITE_CORRUPT),
    repair it (set aside, rows copied into a new file) and run the method again. Its transaction
    was rolled back, so running it again writes it once."""

    @functools.wraps(method)
    def call(self: ConversationStore, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        for attempt in range(3):
            try:
                return method(self, *args, **kwargs)
            except sqlite3.DatabaseError as exc:
                if not sqlite_repair.is_corruption(exc):
                    raise
                if attempt == 2:
                    raise StoreDamaged(self.path, exc) from exc
                # First as quick_check judges the file (another process may have repaired it
                # already); if the method fails again, repair on the strength of its error.
                self._damaged_in_use(exc, force=attempt == 1)
        raise AssertionError("unreachable")

    return call


class ConversationStore:
    """Create, list, search, rename, delete, load and append to the conversations of one data
    folder. ``knowledge_dir`` is where cited files are looked for when a conversation is loaded.
    ``on_repaired`` is told (from whichever thread used the store) when a damaged file was set aside
    and rebuilt; ``repaired`` keeps the last such message."""

    def __init__(
        self,
        path: Path | str,
        knowledge_dir: Path | str,
        on_repaired: Callable[[Message], None] | None = None,
    ) -> None:
        self.path = Path(path)
        self.knowledge_dir = Path(knowledge_dir)
        self.on_repaired = on_repaired
        self.repaired: Message | None = None
        self._ready = False
        self._setup = threading.Lock()  # one thread checks, repairs and migrates the file
        # Deleted here: an answer still streaming into one must not bring it back when it completes.
        self._deleted: set[str] = set()

    # ------------------------------------------------------------------ connection
    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        """A connection in one transaction (committed on success, rolled back on error)."""
        if not self._ready:
            self._open()
        with closing(sqlite3.connect(self.path, timeout=10)) as db:
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA foreign_keys = ON")
            with db:
                yield db

    def _open(self) -> None:
        """Check the file once per process (quick_check, up to QUICK_CHECK_MAX_BYTES), repairing
        it when damaged, then bring it to this version's schema."""
        with self._setup:
            if self._ready:
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                small = self.path.stat().st_size <= QUICK_CHECK_MAX_BYTES
            except OSError:
                small = True  # missing: nothing to check
            reason, recheck = (sqlite_repair.damage(self.path) if small else None), True
            if reason is None:
                try:
                    self._prepare()
                except sqlite3.DatabaseError as exc:  # quick_check passed, the schema's pages did not
                    if not sqlite_repair.is_corruption(exc):
                        raise
                    reason, recheck = str(exc), False
            if reason is not None:
                self._repair(reason, recheck)  # quick_check's verdict is looked at again under the lock
                self._prepare()
            self._ready = True

    def _prepare(self) -> None:
        with closing(sqlite3.connect(self.path, timeout=10)) as db:
            # A newer app's file: refused before anything below writes to it (formats.py).
            check_readable(STORE_CONVERSATIONS, user_version(db), SCHEMA_VERSION, self.path)
            db.execute("PRAGMA journal_mode = WAL")  # persistent: readers never wait on a writer
            db.executescript(SCHEMA)
            if db.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
                _migrate(db)

    def _damaged_in_use(self, exc: sqlite3.Error, force: bool) -> None:
        with self._setup:
            self._ready = False
            reason = str(exc) if force else sqlite_repair.damage(self.path)
            if reason is not None:
                log.error("conversation store %s failed while in use: %s", self.path, exc)
                self._repair(reason, not force)
        self._open()

    def _repair(self, reason: str, recheck: bool) -> None:
        """Set the damaged file aside and copy every row that can still be read into a new one."""
        try:
            with sqlite_repair.exclusive(self.path.parent):
                if not self.path.exists() or (recheck and sqlite_repair.damage(self.path) is None):
                    return  # another process repaired it while this one waited (or before)
                kept = self._rebuild(reason)
        except (OSError, sqlite3.Error) as exc:
            log.error(
                "conversation store %s is damaged (%s) and could not be repaired: %s", self.path, reason, exc
            )
            raise StoreDamaged(self.path, exc) from exc
        aside, count = kept
        notice = messages.message(notes.STORE_REPAIRED, path=str(self.path), aside=str(aside), count=count)
        self.repaired = notice
        # Said once: by whoever is told (the CLI's stderr, the window's status bar), else the log.
        log.log(logging.INFO if self.on_repaired else logging.WARNING, "%s (%s)", notice, reason)
        if self.on_repaired is not None:
            self.on_repaired(notice)

    def _rebuild(self, reason: str) -> tuple[Path, int]:
        """The new file, filled from the damaged one and put in its place; (where the damaged one
        went, how many conversations the new one holds)."""
        found = sqlite_repair.header_user_version(self.path)
        # A newer app's file is never rewritten in this version's format. Bytes a fault wrote over
        # the header read as a version too: only a plausible one counts (a random 32-bit number
        # lands below 1000 once in four million), the others as damage with the rest.
        if found is not None and SCHEMA_VERSION < found < 1000:
            raise FormatTooNew(STORE_CONVERSATIONS, found, SCHEMA_VERSION, self.path)
        if found is None or not 0 <= found <= SCHEMA_VERSION:
            found = SCHEMA_VERSION
        fresh = self.path.with_name(self.path.name + ".repairing")
        for suffix in ("", *sqlite_repair.SIDECARS):  # an interrupted repair's: this process's to redo
            Path(f"{fresh}{suffix}").unlink(missing_ok=True)
        try:
            copied, dropped, kept = self._fill(fresh, found)
            aside = sqlite_repair.set_aside(self.path)
        except BaseException:
            for suffix in ("", *sqlite_repair.SIDECARS):
                Path(f"{fresh}{suffix}").unlink(missing_ok=True)
            raise
        os.replace(fresh, self.path)
        log.info("conversation store %s (%s): rows read %s; %s", self.path, reason, copied, dropped)
        return aside, kept

    def _fill(self, fresh: Path, version: int) -> tuple[dict[str, int], dict[str, int], int]:
        with closing(sqlite3.connect(fresh)) as db:
            db.executescript(SCHEMA)
            # The rows keep the damaged file's format: the migrations bring them up when it opens.
            db.execute(f"PRAGMA user_version = {int(version)}")
            tables = {
                table: [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
                for table in ("conversations", "messages", "citations")  # parents first
            }
            copied = sqlite_repair.salvage_tables(self.path, db, tables)
            dropped = _reattach(db)
            db.commit()
            kept = db.execute("SELECT COUNT(*) FROM conversations").fetchone()[0]
        return copied, dropped, int(kept)

    # ------------------------------------------------------------------ conversations
    @_repairs
    def recent_sources(self, limit: int = 200) -> list[str]:
        """The documents cited in the latest answers, most recent first (a model switch embeds them first)."""
        if not self.path.exists():
            return []
        with self._db() as db:
            rows = db.execute(
                "SELECT source FROM citations WHERE role = 'cited' ORDER BY message_id DESC, ord LIMIT ?",
                (limit,),
            ).fetchall()
        return list(dict.fromkeys(r[0] for r in rows))

    @_repairs
    def create(self, title: str, scope: str | None = None, conv_id: str | None = None) -> ChatSummary:
        """A new, empty conversation (its id is the Conversation's, when one is given)."""
        now = _now()
        conv_id = conv_id or uuid.uuid4().hex[:12]
        with self._db() as db:
            db.execute(
                "INSERT INTO conversations (id, title, scope, created, updated) VALUES (?, ?, ?, ?, ?)",
                (conv_id, _title_of(title), scope, now, now),
            )
        return ChatSummary(conv_id, _title_of(title), scope, now, now, 0)

    @_repairs
    def list_chats(self, search: str = "") -> list[ChatSummary]:
        """Every conversation (or those whose title contains ``search``), most recent first."""
        sql = (
            "SELECT c.id, c.title, c.scope, c.created, c.updated, COUNT(m.id) AS n FROM conversations c"
            " LEFT JOIN messages m ON m.conversation_id = c.id"
        )
        args: tuple[str, ...] = ()
        if search.strip():
            like = search.strip().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            sql += " WHERE c.title LIKE ? ESCAPE '\\'"
            args = (f"%{like}%",)
        sql += " GROUP BY c.id ORDER BY c.updated DESC, c.rowid DESC"
        with self._db() as db:
            rows = db.execute(sql, args).fetchall()
        return [
            ChatSummary(r["id"], r["title"], r["scope"], r["created"], r["updated"], r["n"]) for r in rows
        ]

    @_repairs
    def find(self, name: str) -> ChatSummary | None:
        """The conversation with id ``name``, else the most recent one titled ``name``."""
        with self._db() as db:
            row = db.execute(
                "SELECT id FROM conversations WHERE id = ? UNION ALL SELECT id FROM"
                " (SELECT id FROM conversations WHERE title = ? ORDER BY updated DESC, rowid DESC)"
                " LIMIT 1",
                (name, name),
            ).fetchone()
        if row is None:
            return None
        return next(s for s in self.list_chats() if s.id == row["id"])

    @_repairs
    def rename(self, conv_id: str, title: str) -> bool:
        title = _title_of(title)
        if not title:
            raise ValueError("a conversation needs a title")
        with self._db() as db:
            sql = "UPDATE conversations SET title = ?, title_source = 'user' WHERE id = ?"
            return db.execute(sql, (title, conv_id)).rowcount > 0

    @_repairs
    def name_by_photo(self, conv_id: str, title: str) -> bool:
        """Title a conversation that began with a photo by what the photo was identified as (the
        window's language); a title the user gave is kept, and so is one taken from a question."""
        title = _title_of(title)
        if not title:
            return False
        with self._db() as db:
            first = db.execute(
                "SELECT kind FROM messages WHERE conversation_id = ? ORDER BY id LIMIT 1", (conv_id,)
            ).fetchone()
            if first is None or first["kind"] != "identify":
                return False
            sql = "UPDATE conversations SET title = ?, title_source = 'auto' WHERE id = ? AND title_source != 'user'"
            return db.execute(sql, (title, conv_id)).rowcount > 0

    @_repairs
    def set_options(self, conv_id: str, system_prompt: str, temperature: float | None) -> bool:
        """Save a conversation's system prompt and temperature (False: it is not saved yet; its
        first answer saves them)."""
        with self._db() as db:
            sql = "UPDATE conversations SET system_prompt = ?, temperature = ? WHERE id = ?"
            return db.execute(sql, (system_prompt, temperature, conv_id)).rowcount > 0

    @_repairs
    def truncate(self, conv_id: str, keep: int) -> int:
        """Keep the first ``keep`` messages of a conversation and delete the rest (a question
        edited and sent again replaces its turn and those after it); returns how many went.
        With none kept, follow-ups no longer refer to what the deleted turns were about."""
        with self._db() as db:
            ids = [
                r["id"]
                for r in db.execute(
                    "SELECT id FROM messages WHERE conversation_id = ? ORDER BY id", (conv_id,)
                ).fetchall()
            ]
            gone = ids[max(0, keep) :]
            if not gone:
                return 0
            db.execute("DELETE FROM messages WHERE conversation_id = ? AND id >= ?", (conv_id, gone[0]))
            if keep <= 0:
                db.execute(
                    "UPDATE conversations SET last_subject = NULL, last_query = NULL WHERE id = ?", (conv_id,)
                )
            db.execute("UPDATE conversations SET updated = ? WHERE id = ?", (_now(), conv_id))
        return len(gone)

    @_repairs
    def delete(self, conv_id: str) -> bool:
        """Remove a conversation with its messages and citations (the cascade)."""
        self._deleted.add(conv_id)
        with self._db() as db:
            return db.execute("DELETE FROM conversations WHERE id = ?", (conv_id,)).rowcount > 0

    def last(self) -> ChatSummary | None:
        """The most recently updated conversation (the window reopens it)."""
        chats = self.list_chats()
        return chats[0] if chats else None

    # ------------------------------------------------------------------ messages
    @_repairs
    def append(self, conv: Conversation, message: StoredMessage, title: str | None = None) -> int:
        """Write one completed turn and the conversation's follow-up state in one transaction; the
        conversation row is created on its first message (titled ``title`` or the question). A turn
        of a conversation deleted meanwhile is dropped (returns 0)."""
        if conv.id in self._deleted:
            return 0
        now = _now()
        message.created = message.created or now
        with self._db() as db:
            exists = db.execute("SELECT 1 FROM conversations WHERE id = ?", (conv.id,)).fetchone()
            if exists is None:
                name, source = title or message.question, "auto"
                if not name and message.card is not None:  # a photo: the species it named (English)
                    name = str(photo_title(message.card.decision))
                if not name:
                    name, source = Path(message.image or "photo").name, "file"
                db.execute(
                    "INSERT INTO conversations (id, title, scope, created, updated, title_source)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (conv.id, _title_of(name), conv.scope, now, now, source),
                )
            db.execute(
                "UPDATE conversations SET last_subject = ?, last_query = ?, scope = ?, updated = ?,"
                " system_prompt = ?, temperature = ? WHERE id = ?",
                (conv.last_subject, conv.last_query, conv.scope, now, conv.system_prompt, conv.temperature, conv.id),
            )
            cur = db.execute(
                "INSERT INTO messages (conversation_id, kind, question, answer, answer_by, refused,"
                " route, image, card, turn, warnings, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    conv.id,
                    message.kind,
                    message.question,
                    message.answer,
                    message.answer_by,
                    int(message.refused),
                    json.dumps(asdict(message.route)) if message.route is not None else None,
                    message.image,
                    json.dumps(_card_json(message.card), ensure_ascii=False) if message.card else None,
                    json.dumps(list(message.turn), ensure_ascii=False) if message.turn else None,
                    json.dumps([to_json(w) for w in message.warnings], ensure_ascii=False),
                    message.created,
                ),
            )
            message.id = int(cur.lastrowid or 0)
            db.executemany(
                "INSERT INTO citations (message_id, role, ord, n, source, page, chunk_id, text, sha256)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (message.id, role, i, c.n, c.source, c.page, c.chunk_id, c.text, c.sha256)
                    for role, group in (
                        ("cited", message.citations),
                        ("related", message.related),
                        ("evidence", message.evidence),
                    )
                    for i, c in enumerate(group)
                ],
            )
        return message.id

    @_repairs
    def load(self, conv_id: str) -> StoredChat | None:
        """A conversation with its messages; a cited file no longer in the knowledge folder (or a
        photo no longer on disk) is marked ``gone``, and the conversation still opens."""
        with self._db() as db:
            row = db.execute("SELECT * FROM conversations WHERE id = ?", (conv_id,)).fetchone()
            if row is None:
                return None
            rows = db.execute(
                "SELECT * FROM messages WHERE conversation_id = ? ORDER BY id", (conv_id,)
            ).fetchall()
            cites = db.execute(
                "SELECT c.* FROM citations c JOIN messages m ON m.id = c.message_id"
                " WHERE m.conversation_id = ? ORDER BY c.message_id, c.role, c.ord",
                (conv_id,),
            ).fetchall()
        present: dict[str, bool] = {}

        def stored(r: sqlite3.Row) -> StoredCitation:
            source = r["source"]
            if source not in present:
                present[source] = fs_path(self.knowledge_dir, source).is_file()  # names.py
            return StoredCitation(
                r["n"], source, r["page"], r["chunk_id"], r["text"], not present[source], r["sha256"]
            )

        groups: dict[tuple[int, str], list[StoredCitation]] = {}
        for r in cites:
            groups.setdefault((r["message_id"], r["role"]), []).append(stored(r))
        messages = []
        for r in rows:
            route = json.loads(r["route"]) if r["route"] else None
            messages.append(
                StoredMessage(
                    kind=r["kind"],
                    question=r["question"],
                    answer=r["answer"],
                    answer_by=r["answer_by"],
                    refused=bool(r["refused"]),
                    route=RouteDecided(**route) if route else None,
                    citations=groups.get((r["id"], "cited"), []),
                    related=groups.get((r["id"], "related"), []),
                    image=r["image"],
                    card=_card_from(json.loads(r["card"])) if r["card"] else None,
                    evidence=groups.get((r["id"], "evidence"), []),
                    turn=tuple(json.loads(r["turn"])) if r["turn"] else None,
                    warnings=[from_json(w) for w in json.loads(r["warnings"])],
                    created=r["created"],
                    id=r["id"],
                )
            )
        return StoredChat(
            row["id"], row["title"], row["scope"], row["last_subject"], row["last_query"],
            row["created"], row["updated"], messages,
            row["system_prompt"], row["temperature"], row["title_source"],
        )  # fmt: skip

    # ------------------------------------------------------------------ recording
    def record(
        self,
        conv: Conversation,
        events: Iterator[Event],
        *,
        question: str = "",
        image: Path | None = None,
        title: str | None = None,
    ) -> Iterator[Event]:
        """Pass ``events`` (from ``Assistant.ask`` or ``Assistant.identify``) through and write the
        turn once it is complete: after the stream ends, or when a consumer stops reading after
        the Answer (a cancelled job). A turn that never reached its Answer is not written. A
        failed write becomes a Warning: the answer on screen stays."""
        turn = _Turn(question, image)
        before = conv.history[-1] if conv.history else None
        completed = False
        try:
            for event in events:
                turn.add(event)
                yield event
            completed = True
        finally:
            if not completed and turn.answer is not None:  # closed early (cancelled) after its Answer
                self._save(conv, turn, before, title)
        if turn.answer is not None:
            problem = self._save(conv, turn, before, title)
            if problem:
                yield Warning(problem)

    def _save(self, conv: Conversation, turn: _Turn, before: object, title: str | None) -> Text:
        """Write the turn; a failure is logged and returned as a message ("" when written)."""
        # The assistant appends to the history what the model should see of this turn (for a
        # photo, a label in place of the question): keep exactly that.
        new = bool(conv.history) and conv.history[-1] is not before
        pair = (conv.history[-2]["content"], conv.history[-1]["content"]) if new else None
        try:
            self.append(conv, turn.message(pair), title=title)
        except (sqlite3.Error, StoreDamaged) as exc:
            log.error("conversation %s not saved: %s", conv.id, exc)
            return messages.message(notes.NOT_SAVED, error=exc)
        return ""
