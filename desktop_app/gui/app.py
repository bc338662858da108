"""Entry point of the desktop app: ``run(data_dir, config) -> int`` (called by ``kdesk``)."""

from __future__ import annotations

import logging
import sys
import tomllib
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFontDatabase, QPalette
from PySide6.QtWidgets import QApplication, QMessageBox, QStyleFactory

from desktop_app.core.config import Config
from desktop_app.core.messages import UserError
from desktop_app.gui.context import AppContext
from desktop_app.gui.i18n import set_language, tr
from desktop_app.gui.main_window import MainWindow

# Colours come from the palette, so they follow the theme (apply_theme) and the system's.
STYLE_SHEET = """
QLabel#panelTitle { font-size: 15px; font-weight: 600; padding: 2px 0 4px 0; }
QFrame#dropZone { border: 2px dashed palette(mid); border-radius: 10px; min-height: 44px; }
QFrame#dropZone[active="true"] { border-color: palette(highlight); background: palette(alternate-base); }
QFrame#userMessage { background: palette(highlight); border-radius: 12px; }
QFrame#userMessage QLabel { color: palette(highlighted-text); }
QFrame#answerMessage { background: palette(alternate-base); border: 1px solid palette(midlight);
    border-radius: 12px; }
QFrame#answerMessage QTextBrowser { background: transparent; }
QFrame#identifyCard { background: palette(alternate-base); border: 1px solid palette(midlight);
    border-radius: 12px; }
QFrame#identifyCard QTextBrowser { background: transparent; }
QLabel#cardTitle { font-size: 14px; font-weight: 600; }
QLabel#decisionName { font-size: 16px; font-weight: 600; }
QLabel#sectionTitle { font-weight: 600; margin-top: 6px; }
QLabel#muted, QLabel#snippet { color: palette(placeholder-text); }
QLabel#warning { color: #b26a00; }
QLabel#followup { font-style: italic; }
QLabel#photo { border-radius: 8px; background: palette(base); }
QPushButton#citeChip { border: 1px solid palette(highlight); border-radius: 10px; padding: 2px 10px;
    color: palette(highlight); background: palette(base); }
QPushButton#citeChip:hover { background: palette(highlight); color: palette(highlighted-text); }
QPushButton#messageAction { border: none; padding: 1px 6px; color: palette(placeholder-text); }
QPushButton#messageAction:hover { color: palette(highlight); }
QPushButton#sendButton { font-weight: 600; padding: 5px 16px; }
QLineEdit#questionInput { padding: 6px 8px; border-radius: 6px; }
QLabel#statusItem { padding: 0 8px; }
QLabel#statusItem[missing="true"] { color: palette(placeholder-text); }
QProgressBar#candidateBar { border-radius: 4px; text-align: center; }
"""


THEMES = ("system", "light", "dark")  # ui.theme
_DARK = {
    QPalette.Window: "#2b2b2b",
    QPalette.WindowText: "#e6e6e6",
    QPalette.Base: "#1f1f1f",
    QPalette.AlternateBase: "#333333",
    QPalette.ToolTipBase: "#3a3a3a",
    QPalette.ToolTipText: "#e6e6e6",
    QPalette.PlaceholderText: "#9a9a9a",
    QPalette.Text: "#e6e6e6",
    QPalette.Button: "#353535",
    QPalette.ButtonText: "#e6e6e6",
    QPalette.BrightText: "#ff6b6b",
    QPalette.Light: "#4a4a4a",
    QPalette.Midlight: "#3f3f3f",
    QPalette.Mid: "#5a5a5a",
    QPalette.Dark: "#1a1a1a",
    QPalette.Shadow: "#000000",
    QPalette.Highlight: "#3d7bd9",
    QPalette.HighlightedText: "#ffffff",
    QPalette.Link: "#6ea8fe",
    QPalette.LinkVisited: "#b197fc",
}
_DARK_DISABLED = {
    QPalette.WindowText: "#7f7f7f",
    QPalette.Text: "#7f7f7f",
    QPalette.ButtonText: "#7f7f7f",
}


def _dark_palette() -> QPalette:
    palette = QPalette()
    for role, colour in _DARK.items():
        palette.setColor(role, QColor(colour))
    for role, colour in _DARK_DISABLED.items():
        palette.setColor(QPalette.Disabled, role, QColor(colour))
    return palette


def apply_theme(theme: str) -> None:
    """ui.theme, live: "light" / "dark" use the Fusion style with its light or a dark palette;
    "system" (and any unknown value) goes back to the platform's style and palette as they were
    before the first change."""
    app = QApplication.instance()
    theme = theme if theme in THEMES else "system"
    if app is None or app.property("kdesk_theme") == theme:
        return
    app.setProperty("kdesk_theme", theme)
    if app.property("kdesk_system_style") is None:  # remember what "system" means, once
        app.setProperty("kdesk_system_style", app.style().name())
        app.setProperty("kdesk_system_palette", QPalette(app.palette()))
    if theme == "dark":
        app.setStyle("Fusion")
        app.setPalette(_dark_palette())
    elif theme == "light":
        app.setStyle("Fusion")
        app.setPalette(QStyleFactory.create("Fusion").standardPalette())
    else:
        app.setStyle(app.property("kdesk_system_style"))
        app.setPalette(app.property("kdesk_system_palette"))
    # Widgets polished under a style sheet keep the palette they were polished with: polish again.
    sheet = app.styleSheet()
    if sheet:
        app.setStyleSheet("")
        app.setStyleSheet(sheet)


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


def run(data_dir: Path, config: Config) -> int:
    """Open the desktop app; returns the process exit code."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    from desktop_app.core.secrets import install_log_redaction

    install_log_redaction()  # also when run() is called without the CLI in front (idempotent)
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
