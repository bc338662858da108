"""A refused answer ("your documents do not seem to answer this") offers its nearest passages as
chips under "Related:", which open like citations."""

from __future__ import annotations

from desktop_app.core import events as ev
from desktop_app.gui.chat.messages import AnswerMessage


def test_refusal_shows_related_passages_that_open(qtbot):
    message = AnswerMessage()
    qtbot.addWidget(message)
    related = [
        ev.Citation(n=1, source="lincoln.md", page=None, chunk_id="l-0", text="Abraham Lincoln was..."),
        ev.Citation(n=2, source="war.pdf", page=4, chunk_id="w-3", text="The siege..."),
    ]
    message.handle_event(
        ev.Answer("Your documents do not seem to answer this.", [], by="extractive", refused=True, related=related)
    )
    message.show()
    labels = [w.text() for w in message.chips]
    assert labels[0] == "Related:" and "lincoln.md" in labels[1] and "war.pdf" in labels[2]
    with qtbot.waitSignal(message.citation_clicked) as opened:
        message.chips[2].click()
    assert opened.args[0].source == "war.pdf" and opened.args[0].page == 4


def test_an_answer_with_citations_has_no_related_label(qtbot):
    message = AnswerMessage()
    qtbot.addWidget(message)
    cited = [ev.Citation(n=1, source="macaw.md", page=None, text="x")]
    message.handle_event(ev.Answer("Macaws eat seeds [1].", cited, by="extractive"))
    assert [w.text() for w in message.chips] == ["[1] macaw.md"]
