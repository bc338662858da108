"""`kdesk ask --chat NAME` across processes (a fresh Desk per call) and `kdesk chats`."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote

from desktop_app.cli.main import main

LINCOLN = "qa/cmu_wikiqa/storage/S08_set3_a4.txt.clean"  # Wikipedia's Abraham Lincoln
VICKSBURG = "docs/pypdf/resources/Seige_of_Vicksburg_Sample_OCR.pdf"  # cannister shot on page 3


def test_a_named_chat_continues_after_a_restart_and_exports_with_footnotes(tmp_path, shared_data, capsys):
    src = tmp_path / "src"
    src.mkdir()
    # The article's opening and its assassination section (the whole of it doubles the indexing).
    paragraphs = (shared_data / LINCOLN).read_text(encoding="utf-8").split("\n\n")
    excerpt = [p for i, p in enumerate(paragraphs) if i < 20 or 98 <= i <= 108]
    (src / "lincoln.txt").write_text("\n\n".join(excerpt), encoding="utf-8")
    data = tmp_path / "data"

    def kdesk(*argv: str) -> tuple[int, str, str]:
        code = main(["--data-dir", str(data), *argv])
        out = capsys.readouterr()
        return code, out.out, out.err

    assert kdesk("add", str(src / "lincoln.txt"), str(shared_data / VICKSBURG))[0] == 0
    code, out, _ = kdesk("ask", "--chat", "trip", "--no-llm", "--json", "Who was Abraham Lincoln?")
    first = json.loads(out)
    assert code == 0 and first["chat"]["new"] is True and first["chat"]["title"] == "trip"

    # Another process: nothing of the first question is in memory, only in the data folder.
    code, out, _ = kdesk("ask", "--chat", "trip", "--no-llm", "--json", "Who assassinated him?")
    second = json.loads(out)
    assert code == 0
    assert second["chat"] == {"id": first["chat"]["id"], "title": "trip", "new": False}
    assert second["route"]["is_followup"] and "Lincoln" in second["route"]["search_query"]
    assert second["citations"][0]["source"] == "lincoln.txt"
    assert "John Wilkes Booth" in " ".join(h["text"] for h in second["hits"][:3])

    code, out, _ = kdesk("ask", "--chat", "trip", "--no-llm", "What is a cannister shot made of?")
    assert code == 0 and "Seige_of_Vicksburg_Sample_OCR.pdf, p. 3" in out

    code, out, _ = kdesk("chats", "list", "--json")
    assert code == 0
    assert [(c["title"], c["messages"]) for c in json.loads(out)["chats"]] == [("trip", 3)]

    exported = tmp_path / "exports" / "trip.md"
    assert kdesk("chats", "export", "trip", "--out", str(exported))[0] == 0
    markdown = exported.read_text(encoding="utf-8")
    assert markdown.startswith("# trip\n") and "## Who assassinated him?" in markdown
    notes = [line for line in markdown.splitlines() if line.startswith("[^")]
    pdf_note = next(n for n in notes if "Seige_of_Vicksburg_Sample_OCR.pdf" in n)
    assert ', page 3 — "' in pdf_note and "Cannister shot" in pdf_note
    link = pdf_note.split("](", 1)[1].split(")", 1)[0]
    assert (exported.parent / unquote(link)).resolve() == (
        data / "knowledge" / Path(VICKSBURG).name
    ).resolve()
    assert any(n.startswith("[^1]: [lincoln.txt](") for n in notes)
    assert f"[^{len(notes)}]" in markdown.split("[^1]:")[0]  # every footnote is referenced

    # A chat's collection is fixed: a different --scope is a usage error, said on stderr.
    code, _, err = kdesk("ask", "--chat", "trip", "--scope", "birds", "hello")
    assert code == 2 and "trip" in err

    code, out, _ = kdesk("chats", "show", "trip", "--json")
    shown = json.loads(out)
    assert code == 0 and [m["question"] for m in shown["messages"]][1] == "Who assassinated him?"
    assert kdesk("chats", "delete", "trip")[0] == 0
    code, _, err = kdesk("chats", "show", "trip")
    assert code == 1 and "no conversation named 'trip'" in err


REPO = Path(__file__).resolve().parents[3]


def test_a_photo_in_a_named_chat_is_the_subject_of_its_follow_ups(tmp_path, shared_data, capsys):
    data = tmp_path / "data"

    def kdesk(*argv: str) -> tuple[int, str, str]:
        code = main(["--data-dir", str(data), *argv])
        out = capsys.readouterr()
        return code, out.out, out.err

    assert kdesk("add", str(REPO / "knowledge" / "parrots"))[0] == 0
    photo = shared_data / "images" / "coral" / "parrot.jpg"
    code, out, _ = kdesk("identify", "--chat", "walk", "--no-llm", "--json", str(photo))
    card = json.loads(out)
    assert code == 0 and card["chat"]["new"] is True and card["chat"]["title"] == "walk"
    # No reference photos: ImageNet says "macaw", which fifteen notes share; the photo's colours
    # name the red one (the badge is the confidence in that species, not in "macaw").
    subject = card["chat"]["subject"]
    assert subject == card["decision"]["final_name"] == "Scarlet Macaw"
    assert card["candidates"][0]["source"] == "notes" and card["confidence_level"] != "High"

    # A later process continues it: the follow-up searches for the photo's species.
    code, out, _ = kdesk("ask", "--chat", "walk", "--no-llm", "--json", "它有多大？")
    follow = json.loads(out)
    assert code == 0 and follow["chat"]["id"] == card["chat"]["id"]
    assert follow["route"]["is_followup"] and follow["route"]["search_query"] == "Scarlet Macaw有多大"
    assert follow["citations"][0]["source"] == "parrots/scarlet-macaw.md"

    code, out, _ = kdesk("chats", "show", "walk", "--json")
    shown = json.loads(out)
    assert [m["kind"] for m in shown["messages"]] == ["identify", "ask"]
    assert shown["messages"][0]["image"] == str(photo.resolve())
    assert shown["messages"][0]["card"]["decision"]["final_name"] == card["decision"]["final_name"]
    assert shown["last_subject"] == subject


def test_chats_show_prints_a_conversations_system_prompt_and_temperature(tmp_path, capsys):
    from desktop_app.core.ask.conversation import Conversation
    from desktop_app.core.ask.conversation_store import ConversationStore
    from desktop_app.core.events import Answer

    data = tmp_path / "data"
    store = ConversationStore(data / "conversations.sqlite3", data / "knowledge")
    conv = Conversation(system_prompt="Answer in one sentence.", temperature=0.3)
    conv.add_turn("Hi?", "Hello.")
    list(store.record(conv, iter([Answer("Hello.", by="llm")]), question="Hi?"))
    assert main(["--data-dir", str(data), "chats", "show", conv.id]) == 0
    out = capsys.readouterr().out
    assert "system prompt: Answer in one sentence.\ntemperature: 0.3\n" in out
    assert main(["--data-dir", str(data), "chats", "show", "--json", conv.id]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["system_prompt"], shown["temperature"]) == ("Answer in one sentence.", 0.3)
