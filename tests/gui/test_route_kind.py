"""The answer's route line says which kind of reading the router chose, its tooltip why."""

from __future__ import annotations

from desktop_app.core import events as ev
from desktop_app.gui.chat.messages import AnswerMessage


def test_the_route_line_names_the_kind_and_its_tooltip_the_reason(qtbot):
    message = AnswerMessage()
    qtbot.addWidget(message)
    message.handle_event(
        ev.RouteDecided(True, "", False, "heuristic", reason="asks about the library's files", kind="library")
    )
    assert message.route_label.text() == "Answered from the list of your documents"
    assert message.route_label.toolTip() == "Chose library (heuristic): asks about the library's files"
    message.handle_event(ev.RouteDecided(True, "kea", False, "llm", kind="document"))
    assert message.route_label.text() == "Read whole documents" and message.route_label.toolTip() == ""
