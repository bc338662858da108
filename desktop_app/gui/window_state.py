"""Window sizes the user chose, remembered per data folder in ``<data-dir>/window-state.ini``
(QSettings' INI format): a window's size is the window's business, not a setting of config.toml."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

STATE_FILE = "window-state.ini"


def window_state(data_dir: Path) -> QSettings:
    """The remembered window state of the data folder ``data_dir``."""
    return QSettings(str(Path(data_dir) / STATE_FILE), QSettings.Format.IniFormat)


def fit_on_screen(widget: QWidget, size: QSize) -> QSize:
    """``size`` no larger than the screen's free area (a size saved on a bigger monitor)."""
    screen = widget.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        return size
    free = screen.availableGeometry().size()
    return QSize(min(size.width(), free.width()), min(size.height(), free.height()))


def restore_size(widget: QWidget, data_dir: Path, key: str, default: QSize) -> None:
    """Resize ``widget`` to the size saved under ``key``, else to ``default``; never below either
    its minimum or (for the default) what fits the screen."""
    saved = window_state(data_dir).value(f"{key}/size")
    size = saved if isinstance(saved, QSize) and saved.isValid() else default
    size = size.expandedTo(widget.minimumSize())
    widget.resize(fit_on_screen(widget, size))


def save_size(widget: QWidget, data_dir: Path, key: str) -> None:
    """Remember ``widget``'s size under ``key`` (best effort: a read-only folder keeps nothing)."""
    state = window_state(data_dir)
    state.setValue(f"{key}/size", widget.size())
    state.sync()
