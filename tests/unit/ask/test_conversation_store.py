"""The conversation store: every field survives a round trip, each turn is written when it completes,
WAL, list/search/rename/delete, cited files that were removed, and the Markdown export."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest

from desktop_app.core.ask import notes
from desktop_app.core.ask.chat_export import to_markdown
from desktop_app.core.ask.conversation import Conversation
from desktop_app.core.ask.conversation_store import SCHEMA_VERSION, ConversationStore
from desktop_app.core.desk import Desk
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
    Token,
    Warning,
)
from desktop_app.core.library.documents import Hit
from desktop_app.core.messages import message
from desktop_app.core.tasks import STOPPED


@pytest.fixture
def knowledge(tmp_path: Path) -> Path:
    folder = tmp_path / "data" / "knowledge"
    (folder / "@trip").mkdir(parents=True)
    (folder / "lincoln.pdf").write_bytes(b"%PDF-1.4 stand-in")
    (folder / "@trip" / "notes 1.md").write_text("# Notes\n", encoding="utf-8")
    return folder


@pytest.fixture
def store(knowledge: Path) -> ConversationStore:
    return ConversationStore(knowledge.parent / "conversations.sqlite3", knowledge)


CITES = [
    Citation(1, "lincoln.pdf", 3, "d1-chunk-4", "Lincoln was shot by John Wilkes Booth at Ford's Theatre."),
    Citation(2, "@trip/notes 1.md", None, "d2-chunk-0", "Notes on the trip."),
]


def asked(conv: Conversation, question: str, answer: str = "Booth shot him [1][2].") -> Iterator[Event]:
    """What Assistant.ask yields, and the state it leaves in the conversation."""
    yield RouteDecided(True, "Lincoln assassinated", True, "heuristic", reason="pronoun")
    yield Retrieved([], "Lincoln assassinated")
    conv.last_query = "Lincoln"
    yield Token("Booth ")
    yield Warning("the language model is slow")
    yield Warning(message(notes.SEARCH_FAILED, error=message(STOPPED)))
    conv.add_turn(question, answer)
    yield Answer(answer, list(CITES), by="llm")


def identified(conv: Conversation) -> Iterator[Event]:
    """What Assistant.identify yields for a named species (the subject is set after the flow)."""
    yield Classified(
        [
            Candidate("scarlet macaw", 0.81, "gallery", photo="macaw/1.jpg"),
            Candidate("macaw", 0.1, "imagenet", zh="金刚鹦鹉"),
        ],
        "High",
        False,
    )
    yield FeatureQueries(["red parrot long tail"], "red, blue and yellow")
    yield Retrieved([Hit("d1-chunk-9", "d1", "Macaws eat nuts.", "lincoln.pdf", 7, 9, 12, 0.5)])
    yield Decision("scarlet macaw", ["the gallery agrees"], False, "", guesses=["macaw"], also_possible=["kea"])
    yield Answer("A scarlet macaw [1].", [CITES[0]], by="extractive")
    conv.last_subject = "Scarlet macaw"
    conv.add_turn("[photo: bird.jpg] What is this?", "A scarlet macaw [1].")


def test_every_field_survives_a_round_trip(store: ConversationStore, tmp_path: Path) -> None:
    photo = tmp_path / "bird.jpg"
    photo.write_bytes(b"jpeg")
    conv = Conversation(scope="trip")
    events = list(store.record(conv, asked(conv, "Who shot him?"), question="Who shot him?", title="trip"))
    assert [type(e).__name__ for e in events] == [
        "RouteDecided", "Retrieved", "Token", "Warning", "Warning", "Answer",
    ]  # fmt: skip  # passed through unchanged, nothing added
    list(store.record(conv, identified(conv), image=photo))

    chat = store.load(conv.id)
    assert chat is not None
    assert (chat.id, chat.title, chat.scope) == (conv.id, "trip", "trip")
    assert (chat.last_subject, chat.last_query) == ("Scarlet macaw", "Lincoln")
    ask, card = chat.messages
    assert (ask.kind, ask.question, ask.answer, ask.answer_by, ask.refused) == (
        "ask", "Who shot him?", "Booth shot him [1][2].", "llm", False,
    )  # fmt: skip
    assert ask.route == RouteDecided(True, "Lincoln assassinated", True, "heuristic", reason="pronoun")
    assert [c.citation() for c in ask.citations] == CITES
    # a warning is kept as its message, rendered when shown; a text that is none as it was
    assert ask.warnings == [
        "the language model is slow",
        message(notes.SEARCH_FAILED, error=message(STOPPED)),
    ]
    assert ask.to_dict()["warnings"][1] == "search failed: stopped"  # JSON renders English
    assert ask.turn == ("Who shot him?", "Booth shot him [1][2].")

    assert card.kind == "identify" and card.image == str(photo) and not card.image_gone
    assert card.question == "" and card.turn == ("[photo: bird.jpg] What is this?", "A scarlet macaw [1].")
    result = card.card
    assert result is not None
    assert [c.to_dict() for c in result.candidates] == [
        {"name": "scarlet macaw", "score": 0.81, "source": "gallery", "photo": "macaw/1.jpg"},
        {"name": "macaw", "score": 0.1, "source": "imagenet", "zh": "金刚鹦鹉"},
    ]
    assert (result.confidence_level, result.low_confidence) == ("High", False)
    assert result.feature_queries == ["red parrot long tail"]
    assert result.visual_description == "red, blue and yellow"
    assert result.decision == Decision(
        "scarlet macaw", ["the gallery agrees"], False, "", guesses=["macaw"], also_possible=["kea"]
    )
    assert [(e.source, e.page, e.chunk_id, e.text) for e in card.evidence] == [
        ("lincoln.pdf", 7, "d1-chunk-9", "Macaws eat nuts.")
    ]
    assert [c.citation() for c in card.citations] == [CITES[0]]
    # Replayed as the events a view draws.
    kinds = [type(e).__name__ for e in card.events()]
    assert kinds == ["Classified", "FeatureQueries", "Retrieved", "Decision", "Answer"]
    assert [type(e).__name__ for e in ask.events()] == ["RouteDecided", "Warning", "Warning", "Answer"]

    # The restored conversation continues where it stopped: turns, subject, scope, id.
    restored = chat.conversation()
    assert restored.id == conv.id and restored.scope == "trip"
    assert restored.history == conv.history
    assert restored.subject() == "Scarlet macaw"


def test_each_turn_is_written_when_its_answer_completes(store: ConversationStore) -> None:
    conv = Conversation()
    list(store.record(conv, asked(conv, "first?"), question="first?"))
    reader = sqlite3.connect(store.path)  # another process's view of the file

    def count() -> int:
        return reader.execute("SELECT COUNT(*) FROM messages").fetchone()[0]

    second = store.record(conv, asked(conv, "second?"), question="second?")
    for event in second:
        if isinstance(event, Token):
            break  # the process dies mid-answer: what is on disk is the first turn, whole
    assert count() == 1
    second.close()  # closed before its Answer: nothing half-written
    assert count() == 1

    cancelled = store.record(conv, asked(conv, "third?"), question="third?")
    for event in cancelled:
        if isinstance(event, Answer):
            break  # the window stops reading right after the answer (a cancelled job)
    cancelled.close()
    assert count() == 2
    assert [m.question for m in store.load(conv.id).messages] == ["first?", "third?"]


def test_the_file_is_in_wal_mode_and_the_desk_owns_the_store(tmp_path: Path) -> None:
    desk = Desk(tmp_path / "data")
    store = desk.conversations
    assert store is desk.conversations and store.path == tmp_path / "data" / "conversations.sqlite3"
    store.create("empty")
    with sqlite3.connect(store.path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_list_search_find_rename_and_delete(store: ConversationStore) -> None:
    a = store.create("Trip to Hawaii", scope="trip")
    b = store.create("Lincoln 100%_sure")
    conv = Conversation(id=a.id, scope="trip")
    list(store.record(conv, asked(conv, "q?"), question="q?"))
    assert [c.title for c in store.list_chats()] == ["Trip to Hawaii", "Lincoln 100%_sure"]  # recent first
    assert store.list_chats()[0].messages == 1
    assert [c.id for c in store.list_chats("hawaii")] == [a.id]
    assert [c.id for c in store.list_chats("100%_")] == [b.id]  # LIKE wildcards are literal
    assert store.list_chats("0_s") == []
    assert store.find("Trip to Hawaii").id == a.id and store.find(b.id).id == b.id
    assert store.find("nope") is None

    assert store.rename(a.id, "  Big   island  ") and store.find("Big island").id == a.id
    with pytest.raises(ValueError):
        store.rename(a.id, "   ")
    assert store.last().id == a.id

    assert store.delete(a.id) and not store.delete(a.id)
    assert store.load(a.id) is None
    list(store.record(conv, asked(conv, "late?"), question="late?"))  # was streaming when deleted
    assert store.load(a.id) is None
    with sqlite3.connect(store.path) as db:  # its messages and citations went with it
        assert db.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 0
        assert db.execute("SELECT COUNT(*) FROM citations").fetchone()[0] == 0
    assert [c.id for c in store.list_chats()] == [b.id]


def test_a_removed_cited_file_is_marked_gone_and_the_conversation_still_opens(
    store: ConversationStore, knowledge: Path
) -> None:
    conv = Conversation()
    list(store.record(conv, asked(conv, "Who shot him?"), question="Who shot him?"))
    (knowledge / "lincoln.pdf").unlink()
    chat = store.load(conv.id)
    assert [(c.source, c.gone) for c in chat.messages[0].citations] == [
        ("lincoln.pdf", True),
        ("@trip/notes 1.md", False),
    ]
    assert chat.messages[0].citations[0].text.startswith("Lincoln was shot")  # the passage is kept
    markdown = to_markdown(chat, knowledge)
    assert "[^1]: lincoln.pdf, page 3 (removed from the knowledge folder)" in markdown


def test_markdown_export_has_footnotes_with_file_page_passage_and_working_links(
    store: ConversationStore, knowledge: Path, tmp_path: Path
) -> None:
    conv = Conversation()
    list(store.record(conv, asked(conv, "Who shot him?"), question="Who shot him?", title="Lincoln"))
    list(store.record(conv, asked(conv, "Where?", "At Ford's Theatre [1]."), question="Where?"))
    out_dir = tmp_path / "exports"
    markdown = to_markdown(store.load(conv.id), knowledge, out_dir)
    assert markdown.startswith("# Lincoln\n")
    assert "Booth shot him [^1][^2]." in markdown
    assert "At Ford's Theatre [^3]." in markdown  # numbered across the whole document
    lines = markdown.splitlines()
    first = next(line for line in lines if line.startswith("[^1]:"))
    assert first.startswith('[^1]: [lincoln.pdf](../data/knowledge/lincoln.pdf), page 3 — "Lincoln was shot')
    second = next(line for line in lines if line.startswith("[^2]:"))
    link = second.split("](", 1)[1].split(")", 1)[0]
    assert " " not in link and (out_dir / unquote(link)).resolve() == knowledge / "@trip" / "notes 1.md"
    # Without a folder to be relative to (stdout), links are file:// URLs.
    assert (knowledge / "lincoln.pdf").as_uri() in to_markdown(store.load(conv.id), knowledge)


def test_a_reopened_chat_whose_photo_was_left_open_still_asks_which_one(tmp_path):
    from desktop_app.core.ask.conversation_store import StoredChat, StoredMessage
    from desktop_app.core.events import Decision
    from desktop_app.core.identify.result import IdentifyResult

    decision = Decision(
        "macaw", ["A macaw; ..."], True, "Which?", guesses=["Scarlet Macaw", "Green-winged Macaw"]
    )
    card = IdentifyResult(decision=decision)
    photo = StoredMessage("identify", "", "A macaw", "extractive", image=str(tmp_path / "m.jpg"), card=card)
    chat = StoredChat("c1", "walk", None, "macaw", None, "", "", [photo])
    assert chat.conversation().subject_options == ["Scarlet Macaw", "Green-winged Macaw"]
    answered = StoredMessage("ask", "Which is the Scarlet Macaw?", "...", "extractive")
    assert (
        StoredChat("c1", "walk", None, "macaw", None, "", "", [photo, answered])
        .conversation()
        .subject_options
        == []
    )


def test_a_schema_2_file_has_its_english_warnings_turned_into_messages_once(
    store: ConversationStore, tmp_path: Path
) -> None:
    """Older versions stored the English rendering; opening the file converts it to {code, params},
    nested reasons included, and a text that is no message stays a text."""
    conv = Conversation()
    list(store.record(conv, asked(conv, "Who shot him?"), question="Who shot him?", title="old"))
    english = ["search failed: stopped", "the language model is slow"]
    card = {"warnings": ["stopped"], "error": "search failed: stopped", "candidates": []}
    with sqlite3.connect(store.path) as db:
        db.execute("UPDATE messages SET warnings = ?, card = ?", (json.dumps(english), json.dumps(card)))
        db.execute("PRAGMA user_version = 2")

    reopened = ConversationStore(store.path, store.knowledge_dir)
    chat = reopened.load(conv.id)
    assert chat is not None
    assert chat.messages[0].warnings == [
        message(notes.SEARCH_FAILED, error=message(STOPPED)),
        "the language model is slow",
    ]
    assert chat.messages[0].card is not None
    assert chat.messages[0].card.warnings == [message(STOPPED)]
    with sqlite3.connect(store.path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        stored = json.loads(db.execute("SELECT warnings FROM messages").fetchone()[0])
    assert stored[0] == {
        "code": "ask.search_failed",
        "params": {"error": {"code": "task.stopped", "params": {}}},
    }


def test_a_schema_3_card_has_its_english_reasoning_and_answer_turned_into_messages_once(
    store: ConversationStore, tmp_path: Path
) -> None:
    """Cards saved before schema 4 carry the flow's English; opening the file converts each line
    to its message once (an old card's several sentences on one line split), and a line that is
    no message (a note quoted as written, a model's words) stays a text."""
    from desktop_app.core.identify import texts

    conv = Conversation()
    list(store.record(conv, identified(conv), image=tmp_path / "bird.jpg"))
    observed = message(texts.OBSERVED, colours="red, blue")
    tied = message(texts.TIED, name="Scarlet Macaw", runner="Hyacinth Macaw")
    followup = message(texts.FOLLOWUP_VIEW_PAIR, first="Scarlet Macaw", second="Hyacinth Macaw")
    looks = message(texts.LOOKS_LIKE, name="Scarlet Macaw")
    query = message(texts.QUERY_COMPARE, names="Scarlet Macaw / Hyacinth Macaw")
    quoted = "Macaws eat nuts. [1]"
    with sqlite3.connect(store.path) as db:
        card = json.loads(db.execute("SELECT card FROM messages").fetchone()[0])
        card["decision"]["reasoning"] = f"{observed} {tied}"  # before one sentence per line
        card["decision"]["followup"] = str(followup)
        card["feature_queries"] = [str(query), "red parrot"]
        del card["answer_lines"]
        answer = "\n".join([str(looks), str(observed), str(tied), quoted])
        db.execute("UPDATE messages SET card = ?, answer = ?", (json.dumps(card), answer))
        db.execute("PRAGMA user_version = 3")

    chat = ConversationStore(store.path, store.knowledge_dir).load(conv.id)
    assert chat is not None and chat.messages[0].card is not None
    result = chat.messages[0].card
    assert result.decision is not None
    assert result.decision.reasoning == [observed, tied]
    assert result.decision.followup == followup
    assert result.feature_queries == [query, "red parrot"]
    assert result.answer_lines == [looks, observed, tied, quoted]
    replayed = chat.messages[0].events()[-1]
    assert isinstance(replayed, Answer) and replayed.lines == [looks, observed, tied, quoted]
    assert replayed.text == answer  # the English the CLI and the model's history read
    with sqlite3.connect(store.path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        stored = json.loads(db.execute("SELECT card FROM messages").fetchone()[0])
    assert stored["decision"]["reasoning"][1] == {"code": "identify.tied", "params": tied.params}
    # migrated once: a second opening reads what the first wrote
    again = ConversationStore(store.path, store.knowledge_dir).load(conv.id)
    assert again is not None and again.messages[0].card == result
