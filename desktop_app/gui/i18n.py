"""One ``tr()`` for every UI string, and live language switching.

The English text is the key; ``ZH_CN`` maps it to Simplified Chinese. A Python dict (not .ts/.qm)
keeps the table reviewable in a diff and needs no build step. Widgets connect ``retranslate``
methods to ``language_changed`` and re-read their labels when the user switches language.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from desktop_app.gui.i18n_zh import ZH_CN

LANGUAGES = {"en": "English", "zh_CN": "简体中文"}


class _Language(QObject):
    changed = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.code = "en"


_language: _Language | None = None


def language() -> _Language:
    """The process-wide language holder (created on first use, after QApplication exists)."""
    global _language
    if _language is None:
        _language = _Language()
    return _language


def current_language() -> str:
    return language().code


def set_language(code: str) -> None:
    """Switch the UI language; every widget connected to ``changed`` retranslates itself."""
    code = code if code in LANGUAGES else "en"
    holder = language()
    if code != holder.code:
        holder.code = code
        holder.changed.emit(code)


def on_language_changed(slot) -> None:
    """Connect a widget's ``retranslate`` method (auto-disconnected when the widget dies)."""
    language().changed.connect(slot)


def tr(text: str) -> str:
    """Translate a UI string; unknown strings fall back to English."""
    if _language is not None and _language.code == "zh_CN":
        return ZH_CN.get(text, text)
    return text
