"""One ``tr()`` for every UI string, and live language switching.

The English text is the key; ``ZH_CN`` maps it to Simplified Chinese. A Python dict (not .ts/.qm)
keeps the table reviewable in a diff and needs no build step. Widgets connect ``retranslate``
methods to ``language_changed`` and re-read their labels when the user switches language.
"""

from __future__ import annotations

import functools

from PySide6.QtCore import QObject, Signal

from desktop_app.core.messages import render_text
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


def tr_core(text: str) -> str:
    """A text from the core (a file's failure reason, an answer's note, a model's status) in the
    UI language: parsed back to its catalogue message and rendered through ``tr``, line by line
    (a text of several sentences puts each on its own line). Text that is no message (a file
    name, a third-party error) is shown as it is."""
    return _tr_core(current_language(), text)


@functools.lru_cache(maxsize=4096)
def _tr_core(code: str, text: str) -> str:
    """Cached per language: the document table asks for each row's reason on every repaint, and
    parsing a text back tries every template of the catalogue."""
    return "\n".join(render_text(line, tr) for line in text.split("\n"))
