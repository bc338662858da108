"""The document list keeps a usable height while a real sync indexes (the progress and the last
outcome do not take its rows), and names are cut from the folder first, never twice alike."""

from __future__ import annotations

import shutil
from pathlib import Path

from PySide6.QtGui import QFontMetrics

from desktop_app.gui.knowledge.panel import MIN_TABLE_ROWS
from desktop_app.gui.knowledge.path_delegate import elide_path

REPO = Path(__file__).resolve().parents[2]
PARROTS = REPO / "knowledge" / "parrots"
BATCH_MS = 120_000


def _rows_in_sight(panel) -> float:
    return panel.table.viewport().height() / panel.table.verticalHeader().defaultSectionSize()


def test_the_document_list_keeps_its_rows_during_a_second_sync_at_the_default_size(
    make_window, qtbot, screenshot
):
    window = make_window()  # 1280x800, as the app opens
    panel = window.knowledge
    knowledge = window.ctx.knowledge_dir
    shutil.copytree(PARROTS, knowledge / "parrots")
    with qtbot.waitSignal(panel.batch_finished, timeout=BATCH_MS):
        panel.sync()
    qtbot.waitUntil(lambda: panel.errors.isVisible(), timeout=5_000)  # the outcome: what was added
    assert _rows_in_sight(panel) >= MIN_TABLE_ROWS - 0.5

    for note in (REPO / "knowledge").glob("*.md"):
        shutil.copy(note, knowledge / note.name)
    with qtbot.waitSignal(panel.batch_finished, timeout=BATCH_MS):
        panel.sync()
        qtbot.waitUntil(lambda: panel.progress.isVisible(), timeout=20_000)
        assert panel.errors.height() <= 6 * panel.errors.fontMetrics().lineSpacing()  # capped
        assert _rows_in_sight(panel) >= MIN_TABLE_ROWS - 0.5
        screenshot(window, "indexing")
    assert _rows_in_sight(panel) >= MIN_TABLE_ROWS - 0.5


def test_names_keep_the_file_name_whole_at_1600_px_with_the_full_path_on_hover(make_window, qtbot):
    window = make_window()
    window.resize(1600, 900)
    panel = window.knowledge
    shutil.copytree(PARROTS, window.ctx.knowledge_dir / "parrots")
    with qtbot.waitSignal(panel.batch_finished, timeout=BATCH_MS):
        panel.sync()
    qtbot.wait(50)
    model, table = panel.model, panel.table
    shown = {}
    for row, doc in enumerate(model.rows):
        index = model.index(row, 0)
        shown[doc.name] = panel.name_delegate.shown_text(table, index)
        assert model.data(index, 3).endswith(doc.name.split("/")[-1]) or doc.name in model.data(index, 3)
    assert shown["parrots/blue-and-yellow-macaw.md"] == "parrots/blue-and-yellow-macaw.md"
    for name, text in shown.items():
        assert text.endswith(name.rsplit("/", 1)[-1]), (name, text)  # the file name stays whole
    assert len(set(shown.values())) == len(shown)  # no two rows read alike

    tooltip = model.data(model.index(0, 0), 3)  # Qt.ToolTipRole
    assert str(window.ctx.knowledge_dir) in tooltip


def test_a_narrow_name_column_cuts_the_folder_before_the_file_name(qapp):
    fm = QFontMetrics(qapp.font())
    name = "parrots/blue-and-yellow-macaw.md"
    whole = fm.horizontalAdvance(name)
    assert elide_path(name, fm, whole) == name
    cut = elide_path(name, fm, whole - fm.horizontalAdvance("s"))
    assert cut.endswith("…/blue-and-yellow-macaw.md") and cut.startswith("par")
    assert (
        elide_path(name, fm, fm.horizontalAdvance("…/blue-and-yellow-macaw.md"))
        == "…/blue-and-yellow-macaw.md"
    )
    tiny = elide_path(name, fm, fm.horizontalAdvance("blue…macaw.md"))
    assert tiny.endswith(".md") and "…" in tiny
