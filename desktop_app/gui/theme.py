"""The window's look: its style sheet and the light, dark and system themes (``ui.theme``), applied
live by Settings and at start by app.py."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory

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
