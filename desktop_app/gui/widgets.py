"""Small widgets shared by the panels; all of them treat content as untrusted text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QFrame, QLabel, QSizePolicy

from desktop_app.core.library.documents import page_label
from desktop_app.gui.chat.markdown import SafeTextBrowser


def plain_label(text: str = "", *, wrap: bool = True, object_name: str = "") -> QLabel:
    """A label that never interprets its text as HTML (untrusted content)."""
    label = QLabel()
    label.setTextFormat(Qt.PlainText)
    label.setWordWrap(wrap)
    label.setTextInteractionFlags(Qt.TextSelectableByMouse)
    if object_name:
        label.setObjectName(object_name)
    label.setText(text)
    return label


def citation_label(citation: Any) -> str:
    where = Path(citation.source).name
    if citation.page:
        where += f" · {page_label(citation.source, citation.page)}"
    return f"[{citation.n}] {where}"


class AutoHeightBrowser(SafeTextBrowser):
    """A text browser as tall as its content, so messages stack in the scroll area."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        self.document().contentsChanged.connect(self._fit)
        self.document().setDocumentMargin(2)

    def _fit(self) -> None:
        self.document().setTextWidth(self.viewport().width())
        height = int(self.document().size().height()) + 6
        if height != self.height():
            self.setFixedHeight(height)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._fit()

    def sizeHint(self) -> QSize:  # noqa: D102
        return QSize(400, int(self.document().size().height()) + 6)
