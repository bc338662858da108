"""Table model of the knowledge base's documents: name, status, chunks, size, error."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from desktop_app.core.library.documents import DocumentInfo
from desktop_app.core.library.names import display_name, escape_name, fs_path
from desktop_app.core.messages import N_
from desktop_app.gui.i18n import tr, tr_core
from desktop_app.gui.markdown import plain_tooltip

COLUMNS = (N_("Document"), N_("Status"), N_("Chunks"), N_("Size"), N_("Error"))
# A row's status, shown as tr(doc.status): marked here for the extractor.
STATUSES = (N_("indexed"), N_("failed"), N_("pending"), N_("indexing"), N_("processed"))

# Looked up once: the view calls data() ~800 times per repaint, and PySide6 resolves a short enum
# name such as ``Qt.DisplayRole`` in ~10 us, which made one repaint of the table cost ~45 ms.
_DISPLAY = Qt.ItemDataRole.DisplayRole
_TOOLTIP = Qt.ItemDataRole.ToolTipRole
_ALIGN = Qt.ItemDataRole.TextAlignmentRole
_FOREGROUND = Qt.ItemDataRole.ForegroundRole
_USER = Qt.ItemDataRole.UserRole
_HANDLED = frozenset((_DISPLAY, _TOOLTIP, _ALIGN, _FOREGROUND, _USER))
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_FAILED_BRUSH: QBrush | None = None


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


class DocumentsModel(QAbstractTableModel):
    def __init__(self, parent=None, root: Path | None = None) -> None:
        super().__init__(parent)
        self.rows: list[Any] = []  # DocumentInfo
        self.root = root  # the knowledge folder: tooltips name a document by its full path

    def set_documents(self, docs: list[Any]) -> None:
        self.beginResetModel()
        self.rows = sorted(docs, key=lambda d: (d.status != "failed", d.name.lower()))
        self.endResetModel()

    def mark_progress(self, name: str) -> None:
        """A batch reached ``name``: show it as indexing, the previous one as processed."""
        for row, doc in enumerate(self.rows):
            if doc.status == "indexing" and doc.name != name:
                self.rows[row] = replace(doc, status="processed")
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMNS) - 1))
        for row, doc in enumerate(self.rows):
            if doc.name == name:
                self.rows[row] = replace(doc, status="indexing", error=None)
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMNS) - 1))
                return
        placeholder = DocumentInfo(name=name, doc_id="", sha256="", size=0, chunks=0, status="indexing")
        self.beginInsertRows(QModelIndex(), len(self.rows), len(self.rows))
        self.rows.append(placeholder)
        self.endInsertRows()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.DisplayRole):  # noqa: N802
        if orientation == Qt.Horizontal and role == Qt.DisplayRole:
            return tr(COLUMNS[section])
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = _DISPLAY) -> Any:
        global _FAILED_BRUSH
        if role not in _HANDLED or not index.isValid():
            return None
        doc = self.rows[index.row()]
        col = index.column()
        if role == _DISPLAY:
            if col == 0:
                return display_name(doc.name)  # U+FFFD for bytes that are not UTF-8 (names.py)
            if col == 1:
                return tr(doc.status)
            if col == 2:
                return str(doc.chunks) if doc.status == "indexed" else ""
            if col == 3:
                return human_size(doc.size) if doc.doc_id else ""
            if col == 4:
                return tr_core(doc.error) if doc.error else ""
        if role == _TOOLTIP:
            # The view elides long names in the middle; the tooltip has the whole path, and the
            # whole reason on the error column.
            if col == 4 and doc.error:
                return plain_tooltip(tr_core(doc.error))
            whole = escape_name(str(fs_path(self.root, doc.name))) if self.root is not None else doc.name
            return plain_tooltip(display_name(whole))
        if role == _ALIGN and col in (2, 3):
            return _RIGHT
        if role == _FOREGROUND and doc.status == "failed" and col in (1, 4):
            if _FAILED_BRUSH is None:
                _FAILED_BRUSH = QBrush(QColor("#c62828"))
            return _FAILED_BRUSH
        if role == _USER:
            return doc
        return None

    def retranslate(self) -> None:
        self.headerDataChanged.emit(Qt.Horizontal, 0, len(COLUMNS) - 1)
        if self.rows:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self.rows) - 1, len(COLUMNS) - 1))
