"""The knowledge panel's results show the latest batch only; Remove asks first, in both languages."""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from desktop_app.core.config import Config
from desktop_app.gui.i18n import set_language
from desktop_app.gui.operations import JobKind, Operation
from desktop_app.gui.tasks import Failure

BATCH_MS = 120_000


def _outcomes(window) -> list[str]:
    errors = window.knowledge.errors
    return [errors.item(i).text() for i in range(errors.count())] if errors.isVisible() else []


def _batch(window, qtbot, start) -> object:
    with qtbot.waitSignal(window.knowledge.batch_finished, timeout=BATCH_MS) as blocker:
        start()
    window.ctx.runner.wait_idle(BATCH_MS)
    return blocker.args[0]


def test_a_later_batch_replaces_an_earlier_failure(make_window, qtbot, drop, tmp_path):
    window = make_window(Config())
    panel = window.knowledge
    panel.watcher.timer.setInterval(600_000)  # the test starts the watcher's sync itself, below
    (tmp_path / "empty.png").write_bytes(b"")
    good = tmp_path / "good.md"
    good.write_text("# Good\nA kea opened the bin.\n", encoding="utf-8")

    _batch(window, qtbot, lambda: drop(panel, [tmp_path / "empty.png"]))
    assert _outcomes(window) == ["empty.png: the image file is empty"]  # named once
    assert panel.result_label.text() == "1 failed"

    _batch(window, qtbot, lambda: drop(panel, [good]))
    assert _outcomes(window) == ["good.md: 1 chunk"] and panel.result_label.text() == "1 added"
    # The watcher's sync of the copied file tries the unchanged failed file again: that is no news,
    # so the panel keeps the latest batch's result instead of the old failure.
    _batch(window, qtbot, panel.sync)
    assert _outcomes(window) == ["good.md: 1 chunk"] and panel.result_label.text() == "1 added"

    # A cancelled batch and a failed one replace the results too: no old lines stay under them.
    panel._batch_cancelled(JobKind.ADD)
    assert (
        _outcomes(window) == [] and panel.result_label.text() == "Cancelled. Files already indexed are kept."
    )


def test_a_failed_batch_clears_the_last_results(make_window, qtbot, drop, tmp_path):
    window = make_window(Config())
    panel = window.knowledge
    (tmp_path / "empty.png").write_bytes(b"")
    _batch(window, qtbot, lambda: drop(panel, [tmp_path / "empty.png"]))
    assert _outcomes(window)
    panel._batch_failed(Failure(Operation.SYNC, RuntimeError("the index is locked")), JobKind.SYNC)
    assert _outcomes(window) == []
    assert panel.result_label.text() == (
        "Could not check the knowledge folder for changes: RuntimeError: the index is locked"
    )
    set_language("zh_CN")  # a language switch does not bring the old batch's lines back
    assert _outcomes(window) == []


def _select(window, name: str) -> None:
    panel = window.knowledge
    row = next(i for i, d in enumerate(panel.model.rows) if d.name == name)
    panel.table.selectionModel().select(
        panel.model.index(row, 0), QItemSelectionModel.ClearAndSelect | QItemSelectionModel.Rows
    )


def test_remove_asks_first_in_both_languages(make_window, qtbot, drop, tmp_path, monkeypatch):
    window = make_window(Config())
    panel = window.knowledge
    panel.watcher.timer.setInterval(600_000)
    for name in ("kea.md", "galah.md"):
        (tmp_path / name).write_text(f"# {name}\nA parrot.\n", encoding="utf-8")
    _batch(window, qtbot, lambda: drop(panel, [tmp_path / "kea.md", tmp_path / "galah.md"]))
    qtbot.waitUntil(lambda: len(panel.model.rows) == 2, timeout=10_000)
    asked: list[tuple[str, str]] = []
    answer = QMessageBox.No
    monkeypatch.setattr(
        QMessageBox, "question", lambda _parent, title, text: asked.append((title, text)) or answer
    )

    _select(window, "kea.md")
    qtbot.mouseClick(panel.remove_button, Qt.LeftButton)
    assert asked == [
        (
            "Remove documents",
            "Remove “kea.md”? The file is deleted from the knowledge folder and its passages from the "
            "index. This cannot be undone.",
        )
    ]
    window.ctx.runner.wait_idle(BATCH_MS)
    assert (window.ctx.knowledge_dir / "kea.md").is_file()  # No: nothing deleted
    assert {d.name for d in window.ctx.kb.list_documents()} == {"kea.md", "galah.md"}

    set_language("zh_CN")
    panel.table.selectAll()
    qtbot.mouseClick(panel.remove_button, Qt.LeftButton)
    assert asked[-1] == (
        "移除文档",
        "移除 2 个文档？这些文件将从知识文件夹中删除，其段落也会从索引中删除。此操作无法撤销。",
    )
    answer = QMessageBox.Yes
    _select(window, "kea.md")
    with qtbot.waitSignal(window.ctx.knowledge_changed, timeout=BATCH_MS):
        qtbot.mouseClick(panel.remove_button, Qt.LeftButton)
    window.ctx.runner.wait_idle(BATCH_MS)
    assert not (window.ctx.knowledge_dir / "kea.md").exists()
    assert {d.name for d in window.ctx.kb.list_documents()} == {"galah.md"}
    QApplication.processEvents()


def test_a_damaged_manifest_is_said_first_among_the_outcomes_in_the_window_language(make_window, qtbot, tmp_path):
    """The library opens on a damaged index manifest: the window lists what was set aside and
    rebuilt (in Chinese here), and the documents are still listed and searchable."""
    from desktop_app.core.library.knowledge import KnowledgeBase

    data = tmp_path / "data"
    kb = KnowledgeBase(data, config=Config(), embedder=None)
    (kb.knowledge_dir / "kea.md").write_text("# Kea\nThe kea is an alpine parrot.\n", encoding="utf-8")
    manifest = kb.collection_dir / "manifest.sqlite3"
    kb.close()
    window = make_window(Config())  # indexes kea.md (the watcher's first sync)
    qtbot.waitUntil(lambda: [d.status for d in window.knowledge.model.rows] == ["indexed"], timeout=BATCH_MS)
    window.ctx.close()
    with open(manifest, "r+b") as f:  # SQLite's own kind of damage: the schema page overwritten
        f.seek(100)
        f.write(b"\xab" * 6000)

    chinese = Config()
    chinese.ui.language = "zh_CN"
    window = make_window(chinese)
    qtbot.waitUntil(lambda: any("索引清单" in line for line in _outcomes(window)), timeout=BATCH_MS)
    line = _outcomes(window)[0]
    assert str(manifest) in line and ".damaged-" in line, line
    assert [d.name for d in window.knowledge.model.rows] == ["kea.md"]
    assert window.ctx.kb.search("alpine parrot")[0].source == "kea.md"
