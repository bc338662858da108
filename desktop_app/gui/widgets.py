"""Small widgets shared by the panels; all of them treat content as untrusted text.

Everything here wraps or elides to the width it is given: the chat column can be ~300 px wide
(a 900 px window with the source viewer open), so no widget may ask for more than its content's
longest breakable piece.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import QContextMenuEvent, QGuiApplication, QKeyEvent, QKeySequence, QTextOption
from PySide6.QtWidgets import QFrame, QLabel, QLayout, QLayoutItem, QMenu, QPushButton, QSizePolicy, QWidget

from desktop_app.core.library.documents import page_label
from desktop_app.core.library.names import display_name
from desktop_app.gui.i18n import tr
from desktop_app.gui.markdown import SafeTextBrowser, plain_tooltip

# QLabel breaks lines only between words: a run this long with no space (a URL, a path) gets
# invisible break opportunities, or it would set the label's minimum width. Chinese and Japanese
# text breaks between any two characters already.
_LONG_RUN = re.compile(r"[^\s\u2e80-\uffff]{25,}")
_BREAK_EVERY = 20
ZWSP = "\u200b"


def breakable(text: str) -> str:
    """``text`` with a zero-width space every few characters inside long unbroken runs."""

    def split(m: re.Match[str]) -> str:
        run = m.group(0)
        return ZWSP.join(run[i : i + _BREAK_EVERY] for i in range(0, len(run), _BREAK_EVERY))

    return _LONG_RUN.sub(split, text)


class PlainLabel(QLabel):
    """A label that never interprets its text as HTML and wraps even inside long words.
    ``text()`` is the text as given (the break points are display-only)."""

    def __init__(self, text: str = "", wrap: bool = True) -> None:
        super().__init__()
        self._text = ""
        self.setTextFormat(Qt.PlainText)
        self.setWordWrap(wrap)
        self.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt override
        self._text = text
        super().setText(breakable(text) if self.wordWrap() else text)

    def text(self) -> str:  # noqa: D102
        return self._text

    def _copy_selection(self) -> None:
        QGuiApplication.clipboard().setText(self.selectedText().replace(ZWSP, ""))

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - copies without the break points
        if event.matches(QKeySequence.Copy) and self.hasSelectedText() and ZWSP in super().text():
            self._copy_selection()
            return
        super().keyPressEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802
        if not (self.hasSelectedText() and ZWSP in super().text()):
            super().contextMenuEvent(event)
            return
        menu = QMenu(self)
        menu.addAction(tr("Copy"), self._copy_selection)
        menu.exec(event.globalPos())

    def sizeHint(self) -> QSize:  # noqa: D102
        # A wrapping QLabel hints at half or a quarter of its text's width for short texts (a
        # "balanced" box), so a short question bubble wrapped onto three lines in a wide column.
        hint = super().sizeHint()
        if not self.wordWrap():
            return hint
        fm = self.fontMetrics()
        natural = max((fm.horizontalAdvance(line) for line in self._text.splitlines()), default=0)
        margins = self.contentsMargins()
        width = min(natural + 2, 80 * fm.averageCharWidth()) + margins.left() + margins.right()
        return QSize(max(width, hint.width()), hint.height())


def plain_label(text: str = "", *, wrap: bool = True, object_name: str = "") -> PlainLabel:
    """A label that never interprets its text as HTML (untrusted content)."""
    label = PlainLabel(text, wrap)
    if object_name:
        label.setObjectName(object_name)
    return label


def place_label(source: str, page: int | None) -> str:
    """The core's page_label ("p. 3", "slide 3") in the window's language."""
    if page is None:
        return ""
    slide = page_label(source, page).startswith("slide")
    return (tr("slide {page}") if slide else tr("p. {page}")).format(page=page)


def citation_label(citation: Any) -> str:
    where = Path(display_name(citation.source)).name  # U+FFFD for bytes that are not UTF-8
    if citation.page:
        where += f" · {place_label(citation.source, citation.page)}"
    return f"[{citation.n}] {where}"


def citation_reference(source: str, page: int | None) -> str:
    """How a copied citation names its place: "file, page N"."""
    shown = display_name(source)
    return f"{shown}, {place_label(source, page)}" if page else shown


class CiteChip(QPushButton):
    """A citation chip: its label is elided in the middle when the column is narrower than it
    (``text()`` stays the whole label), its tooltip names the file in full with the passage, and
    its context menu copies file, page and passage."""

    def __init__(self, label: str, source: str, page: int | None = None, passage: str = "") -> None:
        super().__init__(objectName="citeChip")
        self.source, self.page, self.passage = source, page, passage
        self._label = ""
        self._placed = False  # elided only once a layout gave it a width
        self.setProperty("source", source)  # mark_gone finds a chip by its file
        self.setCursor(Qt.PointingHandCursor)
        self.setSizePolicy(QSizePolicy.Maximum, QSizePolicy.Fixed)
        self.setText(label)
        where = citation_reference(source, page)
        flat = " ".join(passage.split())
        self.setToolTip(plain_tooltip(f"{where}\n\n{flat[:300]}" if flat else where))

    def setText(self, text: str) -> None:  # noqa: N802 - Qt override
        self._label = text
        self._elide()
        self.updateGeometry()

    def text(self) -> str:  # noqa: D102
        return self._label

    def _padding(self) -> int:
        """What the style adds around the shown text (frame, padding)."""
        return super().sizeHint().width() - self.fontMetrics().horizontalAdvance(super().text())

    def sizeHint(self) -> QSize:  # noqa: D102
        hint = super().sizeHint()
        # +2: elidedText measures with fractional advances and would cut a label given exactly this
        return QSize(self._padding() + self.fontMetrics().horizontalAdvance(self._label) + 2, hint.height())

    def minimumSizeHint(self) -> QSize:  # noqa: D102
        return QSize(
            min(self.sizeHint().width(), self._padding() + 6 * self.fontMetrics().averageCharWidth()),
            super().minimumSizeHint().height(),
        )

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._placed = True
        self._elide()

    def _elide(self) -> None:
        shown = self._label
        if self._placed:
            room = max(self.width() - self._padding(), 0)
            shown = self.fontMetrics().elidedText(self._label, Qt.ElideMiddle, room)
        if shown != super().text():
            super().setText(shown)

    def reference(self) -> str:
        """What Copy puts on the clipboard: file and page, then the passage."""
        where = citation_reference(self.source, self.page)
        return f"{where}\n\n{self.passage.strip()}" if self.passage.strip() else where

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.reference())

    def make_menu(self) -> QMenu:
        menu = QMenu(self)
        menu.addAction(tr("Copy citation"), self.copy)
        return menu

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802
        self.make_menu().exec(event.globalPos())


class FlowLayout(QLayout):
    """Lays its items out in rows, wrapping to the next row when one is full (citation chips)."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 6) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self.setContentsMargins(0, 0, 0, 0)
        self.setSpacing(spacing)

    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        return self._place(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802
        super().setGeometry(rect)
        self._place(rect, move=True)

    def sizeHint(self) -> QSize:  # noqa: N802
        return self.minimumSize()

    def minimumSize(self) -> QSize:  # noqa: N802
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        m = self.contentsMargins()
        return size + QSize(m.left() + m.right(), m.top() + m.bottom())

    def _place(self, rect: QRect, *, move: bool) -> int:
        m = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        x, y, row_height = area.x(), area.y(), 0
        for item in self._items:
            if item.isEmpty():
                continue
            hint = item.sizeHint()
            width = min(hint.width(), area.width())
            if x > area.x() and x + width > area.right() + 1:  # full: next row
                x, y = area.x(), y + row_height + self.spacing()
                row_height = 0
            if move:
                item.setGeometry(QRect(QPoint(x, y), QSize(width, hint.height())))
            x += width + self.spacing()
            row_height = max(row_height, hint.height())
        return y + row_height - rect.y() + m.bottom()


class AutoHeightBrowser(SafeTextBrowser):
    """A text browser as tall as its content, so messages stack in the scroll area. It wraps to
    any width, breaking inside a word only when the word alone is wider than the line."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        self.setWordWrapMode(QTextOption.WrapAtWordBoundaryOrAnywhere)
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

    def minimumSizeHint(self) -> QSize:  # noqa: D102
        return QSize(40, int(self.document().size().height()) + 6)
