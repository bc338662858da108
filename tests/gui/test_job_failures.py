"""A job that fails says in the window what could not be done and why, in the window's language:
an answer, an identification, and a job with no handler of its own (the status bar)."""

from __future__ import annotations

from PySide6.QtGui import QColor, QImage

from desktop_app.gui.i18n import set_language
from desktop_app.gui.operations import JobKind, Operation


def _raise(*_args):
    raise RuntimeError("the model server hung up")


def test_failed_jobs_say_what_could_not_be_done_in_the_window_language(make_window, qtbot, tmp_path):
    window = make_window()
    window.ctx.call_ask = _raise
    window.ctx.call_identify = _raise

    with qtbot.waitSignal(window.chat.answer_finished, timeout=30_000) as finished:
        window.chat.ask("Which parrot lives in the mountains?")
    answer = finished.args[0]
    assert answer.notes.text() == "Could not answer the question: RuntimeError: the model server hung up"

    photo = tmp_path / "bird.png"
    image = QImage(32, 32, QImage.Format_RGB32)
    image.fill(QColor("red"))
    assert image.save(str(photo))
    with qtbot.waitSignal(window.chat.identify_finished, timeout=30_000) as identified:
        window.chat.identify(photo)
    card = identified.args[0]
    assert card.status.text() == "Could not identify the photo: RuntimeError: the model server hung up"

    # A job started without on_failure (a rename, the folder watcher): the status bar says it.
    window.ctx.runner.run(JobKind.CHATS, _raise, operation=Operation.RENAME_CONVERSATION)
    window.ctx.runner.wait_idle(30_000)
    said = "Could not rename the conversation: RuntimeError: the model server hung up"
    assert window.statusBar().currentMessage() == said

    try:
        set_language("zh_CN")  # everything already shown follows the switch
        assert answer.notes.text() == "无法回答问题：RuntimeError: the model server hung up"
        assert card.status.text() == "无法识别照片：RuntimeError: the model server hung up"
        assert window.statusBar().currentMessage() == "无法重命名对话：RuntimeError: the model server hung up"
    finally:
        set_language("en")
