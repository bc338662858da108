"""The most specific subject: a classifier's class that several notes share, narrowed by colour."""

from __future__ import annotations

from desktop_app.core.events import Decision
from desktop_app.core.identify.colours import ColourProfile
from desktop_app.core.identify.specific import class_notes, colour_text, rank_class
from desktop_app.core.library.documents import Hit


def _note(source: str, text: str) -> Hit:
    title = text.splitlines()[0].lstrip("# ").strip()
    return Hit(f"{source}#0", source, text, source, None, 0, 1, 0.0, heading_path=[title])


SCARLET = _note(
    "scarlet.md",
    "# Scarlet Macaw (Ara macao)\n\nChinese: 绯红金刚鹦鹉.\n\n**Colours:** Scarlet red head, body and tail; a "
    "yellow band on the upper wing; blue flight feathers.",
)
BLUE_YELLOW = _note(
    "blue-yellow.md",
    "# Blue-and-yellow Macaw (Ara ararauna)\n\nChinese: 蓝黄金刚鹦鹉.\n\n**Colours:** Blue back and wings; "
    "golden yellow breast; green forehead.",
)
HYACINTH = _note(
    "hyacinth.md",
    "# Hyacinth Macaw (Anodorhynchus hyacinthinus)\n\n**Colours:** Cobalt blue all over; yellow eye ring.",
)
GALAH = _note(
    "galah.md", "# Galah (Eolophus roseicapilla)\n\n**Colours:** Rose pink face and breast; grey back."
)
RED_PHOTO = ColourProfile({"red": 0.55, "blue": 0.2, "yellow": 0.1, "green": 0.05})


def test_a_class_several_notes_share_is_ranked_by_the_colours_seen():
    ranking = rank_class("macaw", "金刚鹦鹉", 0.86, RED_PHOTO, [GALAH, HYACINTH, BLUE_YELLOW, SCARLET])
    assert ranking is not None and ranking.narrowed
    assert [f.title for f in ranking.fits] == ["Scarlet Macaw", "Blue-and-yellow Macaw", "Hyacinth Macaw"]
    assert ranking.best.colours[:2] == ["red", "blue"]  # the evidence: colours seen that the note gives
    # The badge is the confidence in the species named, below the classifier's in the class.
    assert 0 < ranking.confidence() < 0.86


def test_a_label_only_one_note_has_is_not_a_class_to_narrow():
    assert rank_class("galah", "", 0.9, RED_PHOTO, [GALAH, SCARLET, HYACINTH]) is None
    assert rank_class("macaw", "", 0.9, RED_PHOTO, [GALAH, SCARLET]) is None


def test_notes_whose_colours_fit_equally_leave_the_class_open():
    twin = _note("twin.md", SCARLET.text.replace("Scarlet Macaw", "Twin Macaw"))
    ranking = rank_class("macaw", "", 0.86, RED_PHOTO, [SCARLET, twin, HYACINTH])
    assert ranking is not None and not ranking.narrowed
    assert {f.title for f in ranking.tied()} == {"Scarlet Macaw", "Twin Macaw"}


def test_chinese_field_notes_join_the_class_by_their_chinese_or_english_name():
    zh = _note(
        "zh/绯红.md",
        "# 绯红金刚鹦鹉\n\n- 英文名：Scarlet Macaw\n- 学名：Ara macao\n- 羽色：全身鲜红，翼上有黄色带",
    )
    zh2 = _note(
        "zh/紫蓝.md", "# 紫蓝金刚鹦鹉\n\n- 学名：Anodorhynchus hyacinthinus\n- 羽色：全身钴蓝色，眼圈黄色"
    )
    assert {h.source for h in class_notes("macaw", "金刚鹦鹉", [zh, zh2, GALAH])} == {
        "zh/绯红.md",
        "zh/紫蓝.md",
    }
    ranking = rank_class("macaw", "金刚鹦鹉", 0.8, RED_PHOTO, [zh, zh2])
    assert ranking is not None and ranking.best.title == "绯红金刚鹦鹉"


def test_a_chinese_name_is_not_read_as_a_colour_seen():
    # 绯红 (scarlet) and 蓝黄 (blue-yellow) are names here, not descriptions.
    assert "绯红" not in colour_text(SCARLET.text) and "Chinese" not in colour_text(SCARLET.text)
    prose = "# Kea\n\nChinese: 啄羊鹦鹉.\n\nAn olive green parrot of the mountains."
    assert colour_text(prose).strip() == "An olive green parrot of the mountains."


def test_a_follow_up_to_a_photo_left_open_asks_which_one(tmp_path):
    from desktop_app.core.ask.assistant import Assistant, subject_options
    from desktop_app.core.ask.conversation import Conversation
    from desktop_app.core.events import Answer, Retrieved, RouteDecided

    decision = Decision(
        "macaw", ["A macaw; ..."], True, "Which one is it?", guesses=["Scarlet Macaw", "Twin Macaw"]
    )
    conv = Conversation(subject_options=subject_options(decision))
    events = list(Assistant(None, None).ask("How big is it?", conv))
    assert isinstance(events[0], RouteDecided) and not events[0].use_rag
    assert not any(isinstance(e, Retrieved) for e in events)
    answer = events[-1]
    assert (
        isinstance(answer, Answer)
        and "Scarlet Macaw, Twin Macaw" in answer.text
        and answer.text.endswith("?")
    )
    chinese = list(Assistant(None, None).ask("它有多大？", conv))[-1]
    assert "你指的是哪一种" in chinese.text
    # An uncertain photo offers its nearest guesses, by their notes' titles where known.
    unsure = Decision("uncertain", [], True, "", guesses=["cokatoo_galah"], titles={"cokatoo_galah": "Galah"})
    assert subject_options(unsure) == ["Galah"]
    assert subject_options(Decision("Galah", [], False, "", guesses=["Major Mitchell's Cockatoo"])) == []


def test_a_second_photo_that_names_nothing_replaces_the_subject(tmp_path):
    from desktop_app.core.ask.assistant import Assistant
    from desktop_app.core.ask.conversation import Conversation
    from desktop_app.core.events import Answer

    class Unsure:
        def run(self, image, question=None, scope=None, cancel=None):
            yield Decision("uncertain", [], True, "", guesses=["bee eater"])
            yield Answer("I can't identify this with confidence.", [])

    conv = Conversation(last_subject="Scarlet Macaw", last_query="Scarlet Macaw")
    list(Assistant(None, None, identifier=Unsure).identify(tmp_path / "b.jpg", conversation=conv))
    assert conv.subject() is None and conv.subject_options == ["bee eater"]


def test_a_card_quotes_a_note_without_its_name_lines_or_field_markup():
    from desktop_app.core.identify.flow import note_summary

    note = (
        "# Scarlet Macaw (Ara macao)\n\nChinese: 绯红金刚鹦鹉. Gallery label: ara_macao.\n\n"
        "**Colours:** Scarlet red body; blue flight feathers.\n\n- 学名：Ara macao"
    )
    assert note_summary(note) == "Colours: Scarlet red body; blue flight feathers."


def test_a_best_guess_no_note_covers_gives_way_to_the_next_class_the_notes_cover(
    tmp_path, shared_data, capsys
):
    import json
    from pathlib import Path

    from desktop_app.cli.main import main

    data = tmp_path / "data"

    def identify(photo: Path, chat: str) -> dict:
        code = main(["--data-dir", str(data), "identify", "--chat", chat, "--no-llm", "--json", str(photo)])
        assert code == 0
        return json.loads(capsys.readouterr().out)

    repo = Path(__file__).resolve().parents[3]
    assert main(["--data-dir", str(data), "add", str(repo / "knowledge" / "parrots")]) == 0
    capsys.readouterr()
    # A blue-throated macaw ImageNet calls "bee eater" (32%), no note's class; "macaw" (22%) is next.
    card = identify(shared_data / "images" / "parrots" / "ara_blue-throated-macaw" / "8.jpg", "macaw")
    decision = card["decision"]
    assert "best guess is bee eater (32%), which none of your notes cover" in decision["reasoning"]
    assert "macaw fits next (22%)" in decision["reasoning"]
    assert decision["final_name"].endswith("Macaw") and card["candidates"][0]["source"] == "notes"
    assert card["confidence_level"] != "High"  # the class itself is the classifier's second
    assert card["chat"]["subject"] == decision["final_name"]
    # An owl's top five (ruffed grouse, kite, partridge, great grey owl, prairie chicken): no note
    # covers any of them, so nothing is named from the notes, and no parrot.
    owl = identify(shared_data / "images" / "coral" / "owl.jpg", "owl")
    assert all(c["source"] == "imagenet" for c in owl["candidates"])
    assert "best guess" not in owl["decision"]["reasoning"] and "arrot" not in owl["answer"]
    bird = identify(shared_data / "images" / "coral" / "bird.bmp", "bird")  # a chickadee (88%)
    assert all(c["source"] == "imagenet" for c in bird["candidates"]) and "arrot" not in bird["answer"]


def test_a_class_named_by_one_chinese_page_is_the_chats_subject_by_its_english_name(
    tmp_path, shared_data, capsys
):
    """ImageNet's "African grey" (74% on this photo) is the library's one page 非洲灰鹦鹉, whose
    English name line says "African Grey Parrot": the card names it so and an English follow-up
    searches that name, which the Chinese page holds, instead of the class's words."""
    import json

    from desktop_app.cli.main import main

    data, notes = tmp_path / "data", tmp_path / "notes"
    notes.mkdir()
    (notes / "african-grey-parrot.md").write_text(
        "# 非洲灰鹦鹉\n\n- 英文名：African Grey Parrot\n- 学名：Psittacus erithacus\n"
        "- 分布：赤道非洲的雨林，从科特迪瓦东南部到肯尼亚西部\n- 体长：约 33 厘米\n",
        encoding="utf-8",
    )
    (notes / "kea.md").write_text("# 啄羊鹦鹉\n\n- 英文名：Kea\n- 学名：Nestor notabilis\n", encoding="utf-8")
    assert main(["--data-dir", str(data), "add", str(notes)]) == 0
    photo = shared_data / "images" / "parrots" / "jako_grey" / "8.jpg"
    assert main(["--data-dir", str(data), "identify", "--chat", "grey", "--no-llm", str(photo)]) == 0
    capsys.readouterr()
    assert main(["--data-dir", str(data), "ask", "--chat", "grey", "--no-llm", "--json", "Where does it live?"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["route"]["search_query"] == "Where does African Grey Parrot live"
    assert [c["source"] for c in answer["citations"]][:1] == ["notes/african-grey-parrot.md"]
    assert "赤道非洲的雨林" in answer["answer"]
