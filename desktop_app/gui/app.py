"""Entry point of the desktop app: ``run(data_dir, config) -> int`` (called by ``kdesk``)."""

from __future__ import annotations

import logging
import sys
import tomllib
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QApplication, QMessageBox

from desktop_app.core.config import Config
from desktop_app.core.library.datafolder import WINDOW, name_this_process
from desktop_app.core.messages import UserError
from desktop_app.core.paths import log_file
from desktop_app.gui.context import AppContext
from desktop_app.gui.i18n import set_language, tr
from desktop_app.gui.main_window import MainWindow
from desktop_app.gui.theme import STYLE_SHEET, apply_theme


def ensure_chinese_font(*, force: bool = False) -> list[str]:
    """Register the bundled Noto Sans CJK when no installed font covers Simplified Chinese (a
    minimal Linux or a fresh container): without it every Chinese character is drawn as a box.
    Returns the families registered (none when the system has one). ~10 ms, once."""
    chinese = QFontDatabase.WritingSystem.SimplifiedChinese
    if QFontDatabase.families(chinese) and not force:
        return []
    try:
        from noto_cjk_sans_otc import FONT_PATH
    except ImportError:  # an install without it: Qt falls back to whatever it finds
        return []
    font_id = QFontDatabase.addApplicationFont(str(FONT_PATH))
    return QFontDatabase.applicationFontFamilies(font_id) if font_id >= 0 else []


def create_window(data_dir: Path, config: Config, *, embedder: Any = None, load: bool = True) -> MainWindow:
    """Build the main window (a QApplication must exist). Models load in the background."""
    app = QApplication.instance()
    # Background jobs run Python on pool threads; every call from Qt into Python (a table's
    # data(), a slot) must win the GIL back, which takes up to the switch interval (5 ms by
    # default) each time. 1 ms keeps repaints short while indexing (table repaint 27 -> 14 ms).
    sys.setswitchinterval(0.001)
    if app is not None and not app.property("kdesk_styled"):
        app.setStyleSheet(STYLE_SHEET)
        app.setProperty("kdesk_styled", True)
    ensure_chinese_font()
    set_language(config.ui.language)
    apply_theme(config.ui.theme)
    ctx = AppContext(Path(data_dir), config, embedder=embedder)
    window = MainWindow(ctx)
    ctx.setParent(window)
    if load:
        ctx.start_loading()
    return window


def language_in(config_path: Path) -> str:
    """``ui.language`` as written in a config.toml that cannot be loaded (a bad value elsewhere),
    so its error is shown in the user's language; "en" when even that cannot be read."""
    try:
        language = tomllib.loads(config_path.read_text(encoding="utf-8")).get("ui", {}).get("language")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
        return "en"
    return language if isinstance(language, str) else "en"


def startup_error_box(error: UserError, language: str = "en") -> QMessageBox:
    """What the window says instead of opening when the data folder cannot be opened (a bad
    config.toml, a store written by a newer Knowledge Desk), in ``language``."""
    set_language(language)
    box = QMessageBox(QMessageBox.Icon.Critical, tr("Knowledge Desk"), error.message.render(tr))
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return box


def show_startup_error(error: UserError, language: str = "en") -> int:
    """Show ``startup_error_box`` (creating the QApplication if needed); returns the exit code, 1."""
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Knowledge Desk")
    startup_error_box(error, language).exec()
    return 1


LOG_BYTES, LOG_BACKUPS = 2_000_000, 2  # the log file rolls over at 2 MB, two old ones kept


def log_to_file(data_dir: Path) -> Path | None:
    """Also write the log to <data-dir>/logs/kdesk.log (Help › About shows it); once per process.
    Returns the file, or None when the folder cannot be written (the log stays on stderr)."""
    import logging.handlers

    path = log_file(data_dir)
    root = logging.getLogger()
    for handler in root.handlers:
        if isinstance(handler, logging.FileHandler) and Path(handler.baseFilename) == path.resolve():
            return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=LOG_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8"
        )
    except OSError:
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    return path


def run(data_dir: Path, config: Config) -> int:
    """Open the desktop app; returns the process exit code."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    from desktop_app.core.secrets import install_log_redaction

    install_log_redaction()  # also when run() is called without the CLI in front (idempotent)
    name_this_process(WINDOW)  # a `kdesk add` waiting for the window's indexing says so
    log_to_file(Path(data_dir))
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Knowledge Desk")
    app.setOrganizationName("KnowledgeDesk")
    if sys.platform.startswith("linux"):
        app.setStyle("Fusion")  # follows the desktop's light/dark palette
    try:
        window = create_window(Path(data_dir), config)
    except UserError as exc:  # a data folder a newer Knowledge Desk migrated (core/formats.py)
        print(f"error: {exc}", file=sys.stderr)
        return show_startup_error(exc, config.ui.language)
    window.show()  # shown before any model loads
    return int(app.exec())
