"""Document names in the table: elided from the folder first, so the file name stays whole
("…/blue-and-yellow-macaw.md", not "parrots/bl…d-macaw.md"); the file name itself is cut in the
middle only when even it does not fit. The full path is the row's tooltip (DocumentsModel)."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QAbstractItemView, QStyle, QStyledItemDelegate, QStyleOptionViewItem

ELLIPSIS = "…"


def elide_path(text: str, fm: QFontMetrics, room: int) -> str:
    """``text`` (a relative posix path) shortened to ``room`` pixels: whole when it fits, else the
    folders cut from their end ("parr…/name.md"), else "…/name.md", else the name cut in the middle."""
    if fm.horizontalAdvance(text) <= room:
        return text
    folder, slash, name = text.rpartition("/")
    if slash:
        tail = "/" + name
        left = room - fm.horizontalAdvance(tail)
        if left >= fm.horizontalAdvance("ab" + ELLIPSIS):  # a few letters of the folder still help
            return fm.elidedText(folder, Qt.ElideRight, left) + tail
        if fm.horizontalAdvance(ELLIPSIS + tail) <= room:
            return ELLIPSIS + tail
        name = ELLIPSIS + tail
    return fm.elidedText(name, Qt.ElideMiddle, room)


class PathDelegate(QStyledItemDelegate):
    """Draws a name column's text through ``elide_path``."""

    def initStyleOption(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:  # noqa: N802
        super().initStyleOption(option, index)
        widget = option.widget
        style = widget.style() if widget is not None else None
        # QCommonStyle pads item text by the focus frame margin + 1 on each side.
        pad = (style.pixelMetric(QStyle.PM_FocusFrameHMargin, None, widget) + 1) if style else 4
        room = option.rect.width() - 2 * pad
        if option.features & QStyleOptionViewItem.HasDecoration:
            room -= option.decorationSize.width() + pad
        option.text = elide_path(option.text, option.fontMetrics, max(room, 0))

    def shown_text(self, view: QAbstractItemView, index: QModelIndex) -> str:
        """The text a cell shows at its current width (tests)."""
        option = QStyleOptionViewItem()
        option.initFrom(view.viewport())
        option.rect = view.visualRect(index)
        option.widget = view
        self.initStyleOption(option, index)
        return option.text
