"""GUI fixtures: a real main window over a real knowledge base in tmp_path, sharing one embedder."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QWidget

from desktop_app.core.config import Config
from desktop_app.gui.i18n import set_language

LOAD_TIMEOUT_MS = 60_000


def shoot(widget: QWidget, name: str) -> Path | None:
    """Save a screenshot when $KDESK_SCREENSHOTS names a folder (a no-op otherwise)."""
    folder = os.environ.get("KDESK_SCREENSHOTS")
    if not folder:
        return None
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    QApplication.processEvents()
    path = out / f"{name}.png"
    widget.grab().save(str(path))
    return path


def drop_files(target: QWidget, paths: list[Path]) -> None:
    """Simulate dragging local files onto a widget: DragEnter then Drop with URL mime data."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    center = target.rect().center()
    enter = QDragEnterEvent(QPoint(center), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    QApplication.sendEvent(target, enter)
    assert enter.isAccepted(), "the widget refused the drag"
    drop = QDropEvent(QPointF(center), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    QApplication.sendEvent(target, drop)
    assert drop.isAccepted(), "the widget refused the drop"


@pytest.fixture
def screenshot() -> Callable[[QWidget, str], Path | None]:
    return shoot


@pytest.fixture
def drop() -> Callable[[QWidget, list[Path]], None]:
    return drop_files


@pytest.fixture
def make_window(qtbot, tmp_path, minilm) -> Iterator[Callable[..., object]]:
    """Build the real main window over <tmp>/data with the session's MiniLM; waits for loading."""
    from desktop_app.gui.app import create_window

    windows = []

    def factory(config: Config | None = None, *, wait: bool = True, embedder=minilm):
        window = create_window(tmp_path / "data", config or Config(), embedder=embedder)
        qtbot.addWidget(window)
        window.resize(1280, 800)
        window.show()
        windows.append(window)
        if wait:
            if window.ctx.kb is None and not window.ctx.load_error:
                with qtbot.waitSignal(window.ctx.kb_ready, timeout=LOAD_TIMEOUT_MS):
                    pass
            window.ctx.runner.wait_idle(LOAD_TIMEOUT_MS)
        return window

    yield factory
    for window in windows:
        window.ctx.close()
    set_language("en")
