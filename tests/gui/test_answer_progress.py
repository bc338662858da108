"""A long reading's Progress shows in the answer while no text has come yet, then gives way to it."""

from __future__ import annotations

from desktop_app.core import events as ev
from desktop_app.core.ask import notes
from desktop_app.core.messages import message
from desktop_app.gui.chat.messages import AnswerMessage


def test_progress_shows_which_part_is_read_until_the_answer_streams(qtbot):
    answer = AnswerMessage()
    qtbot.addWidget(answer)
    answer.show()
    what = message(notes.READING_PARTS, name="report.pdf", done=2, total=9)
    answer.handle_event(ev.Progress(2, 9, what))
    assert answer.typing.isVisible() and answer.typing.text() == "reading report.pdf: part 2 of 9"
    answer.handle_event(ev.Answer("The report covers treatment [1].", [], by="llm"))
    assert not answer.typing.isVisible()
