"""Issue 38's parts of the conversation store: a chat's system prompt and temperature (schema 5,
migrated from 4), cutting a conversation at a turn (edit and send again), and a photo chat's
title from the species it named."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from desktop_app.core.ask.conversation import Conversation
from desktop_app.core.ask.conversation_store import SCHEMA_VERSION, ConversationStore, photo_title
from desktop_app.core.events import Answer, Classified, Decision, RouteDecided
from desktop_app.core.messages import render


@pytest.fixture
def store(tmp_path: Path) -> ConversationStore:
    (tmp_path / "knowledge").mkdir()
    return ConversationStore(tmp_path / "conversations.sqlite3", tmp_path / "knowledge")


def ask(store: ConversationStore, conv: Conversation, question: str) -> None:
    def events():
        yield RouteDecided(False, "", False, "heuristic")
        conv.add_turn(question, f"answer to {question}")
        yield Answer(f"answer to {question}", by="llm")

    list(store.record(conv, events(), question=question))


def photo(store: ConversationStore, conv: Conversation, image: Path, decision: Decision | None) -> None:
    def events():
        yield Classified([], "High", False)
        if decision is not None:
            yield decision
        yield Answer("It looks like a kea.", by="extractive")

    list(store.record(conv, events(), image=image))


def test_a_chats_system_prompt_and_temperature_are_saved_and_continue_after_reopening(store):
    conv = Conversation(system_prompt="Be brief.", temperature=0.7)
    ask(store, conv, "What do keas eat?")
    chat = store.load(conv.id)
    assert (chat.system_prompt, chat.temperature) == ("Be brief.", 0.7)
    again = chat.conversation()
    assert (again.system_prompt, again.temperature) == ("Be brief.", 0.7)
    assert store.set_options(conv.id, "", None)
    assert (store.load(conv.id).system_prompt, store.load(conv.id).temperature) == ("", None)
    assert not store.set_options("not-saved-yet", "x", 1.0)  # its first answer saves them
    assert store.load(conv.id).to_dict()["system_prompt"] == ""


def test_a_schema_4_file_keeps_its_conversations_and_gains_the_options(store, tmp_path):
    conv = Conversation()
    ask(store, conv, "What do keas eat?")
    kea = tmp_path / "2.jpg"
    old_photo = Conversation()
    photo(store, old_photo, kea, None)  # titled "2.jpg" like the versions before this one
    with sqlite3.connect(store.path) as db:
        for column in ("system_prompt", "temperature", "title_source"):
            db.execute(f"ALTER TABLE conversations DROP COLUMN {column}")
        db.execute("PRAGMA user_version = 4")

    reopened = ConversationStore(store.path, store.knowledge_dir)
    chat = reopened.load(conv.id)
    assert chat.title == "What do keas eat?" and len(chat.messages) == 1
    assert (chat.system_prompt, chat.temperature, chat.title_source) == ("", None, "auto")
    assert reopened.load(old_photo.id).title_source == "file"  # named by its species when known
    with sqlite3.connect(store.path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 5


def test_truncating_keeps_the_first_turns_and_drops_the_rest(store):
    conv = Conversation()
    for q in ("one?", "two?", "three?"):
        ask(store, conv, q)
    assert store.truncate(conv.id, 1) == 2
    chat = store.load(conv.id)
    assert [m.question for m in chat.messages] == ["one?"]
    assert chat.conversation().history == [
        {"role": "user", "content": "one?"},
        {"role": "assistant", "content": "answer to one?"},
    ]
    assert store.truncate(conv.id, 1) == 0
    assert store.truncate(conv.id, 0) == 1 and store.load(conv.id).messages == []


KEA = Decision("kea", [], False, "", zh_names={"kea": "啄羊鹦鹉"}, titles={"kea": "Kea"})
OPEN = Decision(
    "uncertain", [], True, "", guesses=["kea", "kaka"], zh_names={"kea": "啄羊鹦鹉"}, titles={"kea": "Kea"}
)


def test_a_photo_title_is_the_named_species_in_the_windows_language_or_uncertain_between_two():
    assert photo_title(KEA) == "Kea" and photo_title(KEA, chinese=True) == "啄羊鹦鹉"
    assert render(photo_title(OPEN)) == "Uncertain: Kea or kaka"
    assert render(photo_title(OPEN, chinese=True)) == "Uncertain: 啄羊鹦鹉 or kaka"  # the window translates
    assert photo_title(Decision("uncertain", [], True, "")) == ""
    assert photo_title(None) == ""


def test_a_conversation_started_with_a_photo_is_titled_by_its_species_not_the_file_name(store, tmp_path):
    conv = Conversation()
    photo(store, conv, tmp_path / "2.jpg", KEA)
    assert store.load(conv.id).title == "Kea"
    assert store.name_by_photo(conv.id, "啄羊鹦鹉") and store.load(conv.id).title == "啄羊鹦鹉"

    unnamed = Conversation()
    photo(store, unnamed, tmp_path / "3.jpg", None)
    assert store.load(unnamed.id).title == "3.jpg"


def test_a_users_own_title_and_a_questions_title_are_never_replaced_by_a_species(store, tmp_path):
    conv = Conversation()
    photo(store, conv, tmp_path / "2.jpg", KEA)
    store.rename(conv.id, "My garden bird")
    assert not store.name_by_photo(conv.id, "Kaka")
    assert store.load(conv.id).title == "My garden bird"

    asked = Conversation()
    ask(store, asked, "What do keas eat?")
    photo(store, asked, tmp_path / "4.jpg", KEA)
    assert not store.name_by_photo(asked.id, "Kea")
    assert store.load(asked.id).title == "What do keas eat?"
