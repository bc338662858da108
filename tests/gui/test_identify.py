"""A photo dropped on the chat becomes an identification card: photo, candidates, level, decision."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QProgressBar


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
            "Not one of the species in your knowledge base.",
            True,
            "Please send a sharper photo.",
            guesses=["cokatoo_White-tailed_Black", "Kakapo"],
            also_possible=["Burrowing Owl"],
        )
    )
    assert (
        card.decision_name.text()
        == "Not one of your species (nearest guesses: cokatoo White-tailed Black, Kakapo)"
    )
    assert card.followup.text() == "Please send a sharper photo."
