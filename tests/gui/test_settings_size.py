"""Settings opens at a size where every tab fits, remembers the size the user gives it, and the
Models tab never scrolls sideways (long folders wrap, licences are shown whole)."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QScrollArea


def _models_ready(qtbot, page) -> None:
    qtbot.waitUntil(lambda: bool(page.rows), timeout=20_000)


def test_settings_opens_at_a_size_where_the_models_tab_needs_no_sideways_scroll(
    make_window, qtbot, screenshot
):
    window = make_window()
    dialog = window.open_settings()
    qtbot.waitExposed(dialog)
    assert dialog.width() >= 760 and dialog.height() >= 560  # not 520x317
    room = dialog.tabs.currentWidget().size()
    for index in range(dialog.tabs.count()):  # every tab fits without being squeezed
        need = dialog.tabs.widget(index).minimumSizeHint()
        assert need.width() <= room.width() and need.height() <= room.height(), dialog.tabs.tabText(index)
    page = dialog.show_models()
    _models_ready(qtbot, page)
    qtbot.wait(50)  # the rebuilt rows are laid out
    scroll = page.findChild(QScrollArea)
    assert not scroll.horizontalScrollBar().isVisible()
    # Every row's widgets lie inside the visible width: nothing is cut at the right edge.
    right = scroll.viewport().mapToGlobal(scroll.viewport().rect().topRight()).x()
    for row in page.rows.values():
        for label in (row.state_label, row.size_label, row.path_label):
            assert label.mapToGlobal(label.rect().topRight()).x() <= right + 1, label.text()
    licences = [lbl for lbl in page.roles.findChildren(type(row.size_label)) if lbl.text() == "Apache-2.0"]
    assert licences, "the licence Apache-2.0 is shown whole"
    for label in licences:
        assert label.width() >= label.fontMetrics().horizontalAdvance("Apache-2.0")
        assert label.mapToGlobal(label.rect().topRight()).x() <= right + 1
    screenshot(dialog, "settings-models")


def test_a_settings_size_the_user_gives_is_used_when_it_opens_again(make_window, qtbot):
    window = make_window()
    dialog = window.open_settings()
    qtbot.waitExposed(dialog)
    dialog.resize(780, 760)  # within the offscreen screen (800x800)
    qtbot.waitUntil(lambda: dialog.size() == QSize(780, 760), timeout=5_000)
    dialog.reject()

    again = window.open_settings()
    qtbot.waitExposed(again)
    assert again.size() == QSize(780, 760)
    assert (window.ctx.data_dir / "window-state.ini").is_file()
    again.reject()
