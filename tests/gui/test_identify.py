"""A photo dropped on the chat becomes an identification card: photo, candidates, level, decision."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QLabel, QProgressBar


@pytest.mark.slow
def test_dropped_photo_shows_an_identification_card(make_window, qtbot, drop, shared_data, screenshot):
    window = make_window()
    assert window.ctx.assistant is not None  # loaded: photos go straight to the identify flow
    photo = shared_data / "images" / "coral" / "parrot.jpg"  # a scarlet macaw
    with qtbot.waitSignal(window.chat.identify_finished, timeout=240_000) as blocker:
        drop(window.chat, [photo])
    card = blocker.args[0]
    assert card.image == photo
    assert card.photo.pixmap() is not None and not card.photo.pixmap().isNull()
    # Candidates with bars, best first, and a confidence level badge.
    assert card.candidates and card.candidates[0].name.lower() == "macaw"
    bars = card.findChildren(QProgressBar, "candidateBar")
    assert len(bars) == min(5, len(card.candidates))
    assert bars[0].value() == round(card.candidates[0].score * 100)
    assert card.level in ("High", "Medium", "Low")
    assert card.level_badge.isVisible() and card.level in card.level_badge.text()
    # The final decision with its reasoning.
    assert card.decision is not None and card.decision.final_name.lower() == "macaw"
    assert card.decision_name.text().lower() == "macaw"
    assert card.reasoning.text()
    assert "failed" not in card.status.text().lower()
    # Nothing was added to the knowledge base: a photo on the chat is a question, not a document.
    assert not any(p.is_file() for p in window.ctx.knowledge_dir.rglob("*.jpg"))
    # The name becomes the subject of follow-up questions in the same chat.
    assert window.chat.conversation is not None
    assert window.chat.conversation.last_subject.lower() == "macaw"
    screenshot(window, "05-identification-card")


def test_a_photo_of_none_of_your_species_says_so_first_and_guesses_second(qtbot, shared_data):
    from desktop_app.core.events import Decision
    from desktop_app.gui.identify.card import IdentifyCard

    card = IdentifyCard(shared_data / "images" / "coral" / "owl.jpg")
    qtbot.addWidget(card)
    card.handle_event(
        Decision(
            "uncertain",
            ["Not one of the species in your knowledge base."],
            True,
            "Please send a sharper photo.",
            guesses=["cokatoo_White-tailed_Black", "Kakapo"],
        )
    )
    assert (
        card.decision_name.text()
        == "Not one of your species (nearest guesses: cokatoo White-tailed Black, Kakapo)"
    )
    assert card.followup.text() == "Please send a sharper photo."


def _unsure_galah_events():
    """What the flow yields for a photo unlike every reference photo whose notes offer the Galah."""
    from desktop_app.core.events import Candidate, Classified, FeatureQueries, Retrieved
    from desktop_app.core.identify.colours import ColourProfile
    from desktop_app.core.identify.flow import _answer, supporting
    from desktop_app.core.identify.vote import evidence_vote, unsure_reasoning
    from desktop_app.core.library.documents import Hit

    def hit(slug: str, text: str) -> Hit:
        return Hit(
            f"{slug}-0",
            slug,
            text,
            f"parrots/{slug}.md",
            None,
            0,
            1,
            1.0,
            heading_path=[text[2:].split("\n")[0]],
        )

    galah = hit(
        "galah",
        "# Galah\n\nChinese: 粉红凤头鹦鹉. Gallery label: cokatoo_galah.\n\n"
        "**Colours:** rose pink face and breast; grey back and wings.",
    )
    kea = hit("kea", "# Kea\n\n**Colours:** olive green; orange under the wings.")
    candidates = [Candidate("macaw", 0.004, "gallery"), Candidate("hen", 0.003, "gallery")]
    profile = ColourProfile({"pink": 0.6, "grey": 0.4})
    decision = evidence_vote(candidates, profile, [], reject=0.995)
    decision.also_possible = ["Galah"]
    decision.reasoning = unsure_reasoning(profile, decision.guesses, notes_offer=True)
    decision.zh_names = {"Galah": "粉红凤头鹦鹉"}
    hits = supporting([kea, galah], decision, {"Galah": [galah]})
    return [
        Classified(candidates, "Low", True),
        FeatureQueries(
            ["macaw / hen: differences and identification keys"], "a bird with pink and grey plumage"
        ),
        Retrieved(hits, ""),
        decision,
        _answer(decision, hits, by="vote"),
    ]


def test_an_unsure_card_whose_notes_offer_a_species_names_it_in_the_headline(qtbot, shared_data, tmp_path):
    from desktop_app.gui.i18n import set_language
    from desktop_app.gui.identify.card import IdentifyCard

    photo = shared_data / "images" / "parrots" / "cokatoo_galah" / "Galah.jpg"
    card = IdentifyCard(photo)
    qtbot.addWidget(card)
    for event in _unsure_galah_events():
        card.handle_event(event)
    card.resize(560, card.heightForWidth(560) if card.hasHeightForWidth() else 900)
    headline = card.decision_name.text()
    assert headline == "Possibly Galah (known only from your notes)"
    assert "Not one of" not in card.reasoning.text() and "Not one of" not in card.summary.toPlainText()
    assert "Also possible, known only from your notes" in card.summary.toPlainText()
    # The photo is sharp: another view is asked for, not "a sharper photo".
    assert card.followup.text() and "sharper" not in card.followup.text()
    # Evidence: the Galah's note only, not the kea's that the queries also found.
    assert [h.source for h in card.evidence] == ["parrots/galah.md"]
    snippets = [w.text() for w in card.findChildren(QLabel, "snippet")]
    assert snippets == ["Colours: rose pink face and breast; grey back and wings."]  # no raw labels
    assert card.queries_title.text() == "Observed features"
    card.grab().save(str(tmp_path / "unsure-en.png"))
    try:
        set_language("zh_CN")
        assert card.decision_name.text() == "可能是粉红凤头鹦鹉（仅见于你的笔记）"
        assert "不是知识库中的物种" not in card.reasoning.text()
        assert card.queries_title.text() == "观察到的特征"
        card.grab().save(str(tmp_path / "unsure-zh.png"))
    finally:
        set_language("en")


def test_the_features_section_has_one_name_with_or_without_queries(qtbot, shared_data):
    from desktop_app.core.events import FeatureQueries
    from desktop_app.gui.identify.card import IdentifyCard

    titles = []
    for queries in ([], ["Scarlet Macaw: appearance, colours and identification traits"]):
        card = IdentifyCard(shared_data / "images" / "coral" / "parrot.jpg")
        qtbot.addWidget(card)
        card.handle_event(FeatureQueries(queries, "a bird with red plumage"))
        titles.append(card.queries_title.text())
    assert titles == ["Observed features", "Observed features"]


def _card_events():
    """A real flow's texts for a scarlet macaw: candidates, description, queries, vote, answer."""
    from desktop_app.core.events import Candidate, Classified, FeatureQueries
    from desktop_app.core.identify.classifier import LabelScore
    from desktop_app.core.identify.colours import ColourProfile, describe
    from desktop_app.core.identify.flow import Identifier, _answer
    from desktop_app.core.identify.vote import evidence_vote

    candidates = [
        Candidate("ara_macao", 0.34, "gallery", zh="绯红金刚鹦鹉"),
        Candidate("ara_ararauna", 0.33, "gallery", zh="蓝黄金刚鹦鹉"),
        Candidate("macaw", 0.86, "imagenet", zh="金刚鹦鹉"),
        Candidate("bee eater", 0.06, "imagenet", zh="蜂虎"),
    ]
    profile = ColourProfile({"red": 0.5, "yellow": 0.3, "blue": 0.2}, "pale")
    labels = [
        LabelScore("macaw", 0.86, 88, "金刚鹦鹉", "parrot"),
        LabelScore("bee eater", 0.06, 92, "蜂虎", "bird"),
    ]
    description = describe(profile, labels)
    queries = Identifier.feature_queries([c.name for c in candidates], description, "ara_macao")
    decision = evidence_vote(candidates, profile, [])  # a near tie: a name and a request for a photo
    decision.zh_names = {"ara_macao": "绯红金刚鹦鹉", "ara_ararauna": "蓝黄金刚鹦鹉"}
    return [
        Classified(candidates, "Low", True),
        FeatureQueries(queries, description),
        decision,
        _answer(decision, [], by="vote"),
    ]


def test_the_card_speaks_the_windows_language_with_the_notes_chinese_names(qtbot, shared_data):
    import re

    from desktop_app.gui.i18n import set_language
    from desktop_app.gui.identify.card import IdentifyCard

    card = IdentifyCard(shared_data / "images" / "coral" / "parrot.jpg")
    qtbot.addWidget(card)
    for event in _card_events():
        card.handle_event(event)
    english = {w: w.text() for w in (card.decision_name, card.reasoning, card.followup, card.queries_label)}
    assert card.decision_name.text() == "ara macao"
    assert card.reasoning.text().startswith(
        "Observed red, yellow, blue. The reference photos point to ara macao"
    )
    assert card.queries_label.text().startswith("Seen: a bird with red, yellow and blue plumage, pale face;")
    try:
        set_language("zh_CN")
        assert card.decision_name.text() == "绯红金刚鹦鹉" and "ara macao" in card.decision_name.toolTip()
        assert [label.text() for label, _, _ in card._names] == [
            "绯红金刚鹦鹉",
            "蓝黄金刚鹦鹉",
            "金刚鹦鹉",
            "蜂虎",
        ]
        assert card.reasoning.text().startswith(
            "观察到的颜色：红、黄、蓝。参考照片指向绯红金刚鹦鹉（34%；其次是蓝黄金刚鹦鹉 33%）。"
        )
        assert "绯红金刚鹦鹉与蓝黄金刚鹦鹉几乎不分上下。" in card.reasoning.text()
        assert "区分绯红金刚鹦鹉与蓝黄金刚鹦鹉的特征" in card.followup.text()
        assert card.queries_label.text().splitlines() == [
            "观察到：一只红、黄和蓝色羽毛、浅色脸部的鸟；分类器认为可能是金刚鹦鹉 (86%)、蜂虎 (6%)",
            "• 绯红金刚鹦鹉 / 蓝黄金刚鹦鹉 / 金刚鹦鹉：区别与识别要点",
            "• 一只红、黄和蓝色羽毛、浅色脸部的鸟；分类器认为可能是金刚鹦鹉 (86%)、蜂虎 (6%)",
            "• 绯红金刚鹦鹉：外观、颜色与识别特征",
        ]
        assert card.summary.toPlainText().startswith("这看起来是绯红金刚鹦鹉。观察到的颜色")
        for widget in (card.decision_name, card.reasoning, card.followup, card.queries_label, card.summary):
            text = widget.toPlainText() if hasattr(widget, "toPlainText") else widget.text()
            assert not re.search(r"[A-Za-z]{3,}", text), text  # nothing English is left
        set_language("en")
        assert {w: w.text() for w in english} == english  # and back, word for word
    finally:
        set_language("en")


def test_an_english_window_names_species_by_their_notes_titles(qtbot, shared_data):
    from desktop_app.core.events import Classified, Decision
    from desktop_app.gui.i18n import set_language
    from desktop_app.gui.identify.card import IdentifyCard

    events = _card_events()
    classified = next(e for e in events if isinstance(e, Classified))
    for cand in classified.candidates:
        cand.title = {"ara_macao": "Scarlet Macaw", "ara_ararauna": "Blue-and-yellow Macaw"}.get(cand.name)
    decision = next(e for e in events if isinstance(e, Decision))
    decision.titles = {"ara_macao": "Scarlet Macaw", "ara_ararauna": "Blue-and-yellow Macaw"}
    card = IdentifyCard(shared_data / "images" / "coral" / "parrot.jpg")
    qtbot.addWidget(card)
    for event in events:
        card.handle_event(event)
    assert card.decision_name.text() == "Scarlet Macaw" and "ara macao" in card.decision_name.toolTip()
    assert [label.text() for label, _, _ in card._names] == [
        "Scarlet Macaw",
        "Blue-and-yellow Macaw",
        "macaw",
        "bee eater",
    ]
    assert card.reasoning.text().startswith(
        "Observed red, yellow, blue. The reference photos point to Scarlet Macaw (34%; next Blue-and-yellow Macaw 33%)."
    )
    assert "ara macao" not in card.reasoning.text() and "ara ararauna" not in card.followup.text()
    assert card.summary.toPlainText().startswith("This looks like Scarlet Macaw.")
    try:
        set_language("zh_CN")  # the Chinese window keeps the notes' Chinese names
        assert card.decision_name.text() == "绯红金刚鹦鹉"
    finally:
        set_language("en")


def test_a_card_saved_in_english_by_schema_3_opens_in_the_chinese_window_in_chinese(
    qtbot, shared_data, tmp_path
):
    """A conversation saved before schema 4 kept the card's English; the store converts it to its
    messages once, and the window shows them in its language (the model's own words as written)."""
    import json
    import sqlite3

    from desktop_app.core.ask.conversation import Conversation
    from desktop_app.core.ask.conversation_store import ConversationStore
    from desktop_app.core.events import Answer, Decision
    from desktop_app.gui.i18n import set_language
    from desktop_app.gui.identify.card import IdentifyCard

    photo = shared_data / "images" / "coral" / "parrot.jpg"
    store = ConversationStore(tmp_path / "conversations.sqlite3", tmp_path)
    conv = Conversation()
    events = [*_card_events()[:2], Decision("Scarlet Macaw", [], False, ""), Answer("", [], by="extractive")]
    list(store.record(conv, iter(events), image=photo))
    old = (
        "Observed red, blue. The reference photos point to Scarlet Macaw (34%; next Kakapo 2%)."
        " The model's own words [1]."
    )  # an older release: English, several sentences on one line
    with sqlite3.connect(store.path) as db:
        card = json.loads(db.execute("SELECT card FROM messages").fetchone()[0])
        card["decision"]["reasoning"] = old
        card["feature_queries"] = ["Scarlet Macaw: appearance, colours and identification traits"]
        card["visual_description"] = ""
        del card["answer_lines"]
        db.execute(
            "UPDATE messages SET card = ?, answer = ?", (json.dumps(card), "This looks like Scarlet Macaw.")
        )
        db.execute("PRAGMA user_version = 3")

    chat = ConversationStore(store.path, tmp_path).load(conv.id)
    assert chat is not None
    view = IdentifyCard(photo)
    qtbot.addWidget(view)
    for event in chat.messages[0].events():
        view.handle_event(event)
    try:
        set_language("zh_CN")
        assert (
            view.reasoning.text()
            == "观察到的颜色：红、蓝。参考照片指向Scarlet Macaw（34%；其次是Kakapo 2%）。The model's own words [1]."
        )
        assert view.queries_label.text() == "• Scarlet Macaw：外观、颜色与识别特征"
        assert view.summary.toPlainText().startswith("这看起来是Scarlet Macaw。")
    finally:
        set_language("en")
    assert view.reasoning.text() == old


def test_every_identify_message_has_a_chinese_template_with_the_same_fields():
    import string

    from desktop_app.core.identify import texts  # noqa: F401 - defines the messages
    from desktop_app.core.messages import CATALOGUE, translations

    def fields(template: str) -> list[tuple[str, str]]:
        return sorted((n, spec) for _, n, spec, _ in string.Formatter().parse(template) if n is not None)

    identify = {code: t for code, t in CATALOGUE.items() if code.startswith("identify.")}
    assert len(identify) > 30
    zh = translations("zh_CN")
    for template in identify.values():
        assert zh.gettext(template) != template, template
        assert fields(zh.gettext(template)) == fields(template), template


def test_a_photo_then_two_follow_ups_stay_on_the_species_the_card_names(
    make_window, qtbot, drop, shared_data
):
    """The product's own flow in the real window: the repository's parrot notes, no reference
    photos, a red macaw; ImageNet says "macaw", the card names the Scarlet Macaw by its colours,
    and both follow-ups search for it and cite its note."""
    repo = Path(__file__).resolve().parents[2]
    window = make_window()
    with qtbot.waitSignal(window.knowledge.batch_finished, timeout=120_000):
        window.knowledge.add_paths([repo / "knowledge" / "parrots"])
    with qtbot.waitSignal(window.chat.identify_finished, timeout=240_000) as blocker:
        drop(window.chat, [shared_data / "images" / "coral" / "parrot.jpg"])
    card = blocker.args[0]
    assert card.decision is not None and card.decision.final_name == "Scarlet Macaw"
    assert card.candidates[0].source == "notes" and card.level != "High"
    assert "**" not in card.decision.reasoning

    with qtbot.waitSignal(window.chat.answer_finished, timeout=60_000) as blocker:
        window.chat.ask("它有多大？")
    size = blocker.args[0]
    assert size.route.is_followup and size.route.search_query == "Scarlet Macaw有多大"
    assert [c.source for c in size.citations] == ["parrots/scarlet-macaw.md"] and "85 cm" in size.text

    with qtbot.waitSignal(window.chat.answer_finished, timeout=60_000) as blocker:
        window.chat.ask("Where does it live?")
    where = blocker.args[0]
    assert where.route.search_query == "Where does Scarlet Macaw live"
    assert [c.source for c in where.citations] == ["parrots/scarlet-macaw.md"]
    assert "Lowland forests from Mexico to the Amazon" in where.text


def test_a_follow_up_to_a_photo_left_open_shows_each_candidates_answer_with_its_chip(
    make_window, qtbot, tmp_path
):
    """A photo whose class fitted two notes equally left the species open: "How big is it?" is
    answered in the window for each candidate from its own note, each part's note a chip."""
    repo = Path(__file__).resolve().parents[2]
    notes = tmp_path / "notes"
    notes.mkdir()
    for name in ("scarlet-macaw.md", "green-winged-macaw.md", "kea.md"):
        (notes / name).write_bytes((repo / "knowledge" / "parrots" / name).read_bytes())
    window = make_window()
    with qtbot.waitSignal(window.knowledge.batch_finished, timeout=120_000):
        window.knowledge.add_paths([notes])
    window.chat.conversation = window.ctx.new_conversation("shared")
    window.chat.conversation.subject_options = ["Scarlet Macaw", "Green-winged Macaw"]
    with qtbot.waitSignal(window.chat.answer_finished, timeout=60_000) as blocker:
        window.chat.ask("How big is it?")
    answer = blocker.args[0]
    assert "If it is the Scarlet Macaw: about 85 cm long. [1]" in answer.text
    assert "If it is the Green-winged Macaw: about 90 cm. [2]" in answer.text
    assert [c.source for c in answer.citations] == ["notes/scarlet-macaw.md", "notes/green-winged-macaw.md"]
    assert [chip.text() for chip in answer.chips] and all(chip.isVisible() for chip in answer.chips)
    assert len(answer.chips) == 2 and answer.chips_box.isVisible()
    assert "Searched your documents for" in answer.route_label.text()
