"""The chat wraps to its column at every window width, source viewer open or not: no horizontal
scrollbar, nothing cut off on the right. Long names are elided in the middle, whole in tooltips."""

from __future__ import annotations

import contextlib
from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QPushButton, QWidget

from desktop_app.gui.identify.card import IdentifyCard
from desktop_app.gui.widgets import CiteChip

NOTES = Path(__file__).resolve().parents[2] / "knowledge" / "parrots"
LONG_URL = "https://example.org/" + "parrot-care-and-feeding-guide-" * 9 + "x" * 10  # 300 characters


def _overflow(window) -> list[str]:
    """Every visible widget in the chat whose right edge is beyond the scroll area's viewport."""
    viewport = window.chat.scroll.viewport()
    out = []
    for message in window.chat.messages:
        for widget in [message, *message.findChildren(QWidget)]:
            if not widget.isVisibleTo(window.chat.list_widget) or widget.parent() is None:
                continue
            right = widget.mapTo(viewport, QPoint(widget.width(), 0)).x()
            if right > viewport.width():
                out.append(
                    f"{type(widget).__name__}#{widget.objectName()} ends at {right} > {viewport.width()}"
                )
    return out


def _assert_fits(window, qtbot, width: int) -> None:
    window.resize(width, 800)
    qtbot.waitUntil(lambda: window.width() == width, timeout=5_000)
    bar = window.chat.scroll.horizontalScrollBar()
    # The scroll area and the wrapped labels settle over a few layout passes.
    with contextlib.suppress(qtbot.TimeoutError):
        qtbot.waitUntil(lambda: bar.maximum() == 0 and not _overflow(window), timeout=3_000)
    assert bar.maximum() == 0 and not bar.isVisible(), f"horizontal scroll at {width} px"
    assert _overflow(window) == [], f"cut off at {width} px"


def test_the_chat_wraps_at_every_width_with_the_viewer_open(
    make_window, qtbot, drop, shared_data, screenshot
):
    window = make_window()
    notes = [NOTES / f"{name}.md" for name in ("african-grey-pale", "african-grey-parrot", "scarlet-macaw")]
    with qtbot.waitSignal(window.knowledge.batch_finished, timeout=120_000):
        drop(window.knowledge, notes)
    window.ctx.runner.wait_idle(30_000)

    with qtbot.waitSignal(window.chat.answer_finished, timeout=60_000) as blocker:
        # A question two notes answer: two chips to lay out (a colour question about one species is
        # now answered from that species' colour line alone, with one citation).
        window.chat.ask("Which parrots have a red tail?")
    answer = blocker.args[0]
    assert len(answer.citations) >= 2, answer.text
    with qtbot.waitSignal(window.chat.answer_finished, timeout=60_000):
        window.chat.ask(f"Is this page about parrots? {LONG_URL}")
    with qtbot.waitSignal(window.chat.identify_finished, timeout=240_000) as blocker:
        window.chat.identify(shared_data / "images" / "coral" / "parrot.jpg")
    card = blocker.args[0]
    assert isinstance(card, IdentifyCard) and card.candidates and card.evidence
    with qtbot.waitSignal(window.ctx.runner.job_finished, timeout=10_000):
        qtbot.mouseClick(answer.chips[0], Qt.LeftButton)
    assert window.viewer.isVisible()

    for width in (900, 1200, 1600):
        _assert_fits(window, qtbot, width)
    # In the narrowest column the photo sits above the candidates; in a wide one beside them.
    window.resize(900, 800)
    qtbot.waitUntil(lambda: card.photo.y() < card.title.y(), timeout=5_000)
    screenshot(window, "chat-layout-900")
    window.viewer.hide()
    for width in (900, 1600):
        _assert_fits(window, qtbot, width)
        if width == 900:
            screenshot(window, "chat-layout-900-no-viewer")
    qtbot.waitUntil(lambda: card.photo.x() < card.title.x(), timeout=5_000)  # beside again
    # The question's URL is whole in the message (the break points are display-only).
    assert LONG_URL in window.chat.messages[2].text


def test_a_long_chip_label_is_elided_in_the_middle_with_the_full_path_in_its_tooltip(qtbot):
    source = "parrots/african-grey-parrots-of-the-congo-basin-field-notes-volume-two.md"
    chip = CiteChip(f"[1] {Path(source).name} · p. 4", source, 4, "Grey body with a red tail.")
    holder = QWidget()
    qtbot.addWidget(holder)
    chip.setParent(holder)
    holder.show()
    chip.resize(180, chip.sizeHint().height())
    visible = QPushButton.text(chip)
    assert "…" in visible and visible.startswith("[1] afr") and visible.endswith("p. 4")
    assert chip.text() == f"[1] {Path(source).name} · p. 4"  # the whole label for code and tests
    assert source in chip.toolTip() and "p. 4" in chip.toolTip()
    chip.resize(chip.sizeHint())
    assert QPushButton.text(chip) == chip.text()  # room enough: shown whole


def test_long_document_names_keep_both_ends_with_the_full_path_in_a_tooltip(make_window, qtbot):
    """Two notes whose names start alike stay apart in the table: the folder is cut first, then
    the file name in the middle, so both ends stay."""
    window = make_window()
    folder = window.ctx.knowledge_dir / "parrots"
    folder.mkdir(parents=True, exist_ok=True)
    names = [
        "african-grey-parrot-field-notes-from-the-congo-basin-survey-congo.md",
        "african-grey-parrot-field-notes-from-the-congo-basin-survey-timneh.md",
    ]
    for name in names:
        (folder / name).write_text(f"# {name}\n\nGrey parrots with red or maroon tails.\n", encoding="utf-8")
    with qtbot.waitSignal(window.knowledge.batch_finished, timeout=120_000):
        window.knowledge.sync()
    table, model = window.knowledge.table, window.knowledge.model
    qtbot.waitUntil(
        lambda: sorted(d.name for d in model.rows) == [f"parrots/{n}" for n in names], timeout=10_000
    )
    room = table.columnWidth(0) - 12  # the cell's text margins
    shown = []
    for row in range(model.rowCount()):
        name = model.index(row, 0).data()
        assert table.fontMetrics().horizontalAdvance(name) > room  # too long for the column...
        shown.append(window.knowledge.name_delegate.shown_text(table, model.index(row, 0)))
        tip = model.index(row, 0).data(Qt.ToolTipRole)
        assert str(window.ctx.knowledge_dir / name) in tip  # ...whole in the tooltip
    assert shown[0] != shown[1] and shown[0].endswith("congo.md") and shown[1].endswith("timneh.md")
    assert all("…" in text for text in shown)
    assert window.conversations.list.textElideMode() == Qt.ElideMiddle


def test_a_narrow_window_gives_the_knowledge_column_to_the_viewer_while_it_is_open(make_window, qtbot, drop):
    window = make_window()
    with qtbot.waitSignal(window.knowledge.batch_finished, timeout=120_000):
        drop(window.knowledge, [NOTES / "scarlet-macaw.md"])
    window.ctx.runner.wait_idle(30_000)
    with qtbot.waitSignal(window.chat.answer_finished, timeout=60_000) as blocker:
        window.chat.ask("What colour is the Scarlet Macaw?")
    answer = blocker.args[0]
    window.resize(900, 800)
    qtbot.waitUntil(lambda: window.width() == 900, timeout=5_000)
    qtbot.mouseClick(answer.chips[0], Qt.LeftButton)
    qtbot.waitUntil(lambda: window.viewer.isVisible(), timeout=5_000)
    left, chat, viewer = window.splitter.sizes()
    # Three columns at 900 px left the chat ~300 px and the page ~150 px.
    assert left == 0 and chat >= 400 and viewer >= 350, window.splitter.sizes()
    _assert_fits(window, qtbot, 900)
    qtbot.mouseClick(window.viewer.close_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: window.splitter.sizes()[0] > 0, timeout=5_000)
    assert window.splitter.sizes()[0] >= window.left.minimumSizeHint().width()
    assert window.knowledge.isVisible() and not window.viewer.isVisible()
