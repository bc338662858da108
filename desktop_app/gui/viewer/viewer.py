"""Opens a cited source: PDFs in QtPdf at the cited page with the passage highlighted where the
text can be found; other files (DOCX, slides, sheets, books, text) show the cited chunk in context,
as plain text, scrolled to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QStackedWidget,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from desktop_app.gui.context import AppContext
from desktop_app.gui.i18n import on_language_changed, tr
from desktop_app.gui.operations import JobKind

try:  # QtPdf ships in the PySide6-Pdf wheel; without it PDFs show as text
    from PySide6.QtPdf import QPdfDocument, QPdfSearchModel
    from PySide6.QtPdfWidgets import QPdfView

    HAVE_QTPDF = True
except ImportError:  # pragma: no cover - depends on the installed wheels
    HAVE_QTPDF = False

CONTEXT_CHUNKS = 3  # neighbours shown on each side of the cited chunk


def search_phrase(text: str, words: int = 5) -> str:
    """A short phrase of the chunk to find on the PDF page (long strings rarely match exactly).

    Taken a little way in: a chunk often starts with the page's running header, which would
    highlight the header instead of the passage."""
    tokens = [t for t in text.split() if t.strip()]
    start = 6 if len(tokens) >= 6 + words + 4 else 0
    return " ".join(tokens[start : start + words])


class SourceViewer(QWidget):
    opened = Signal(str, object)  # source, page (None for text)
    closed = Signal()

    def __init__(self, ctx: AppContext, parent=None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.source = ""
        self.page: int | None = None
        self.mode = ""  # "pdf" | "text" | ""
        self.highlighted = False
        self._loaded_pdf: Path | None = None
        self.highlighted_text = ""  # the cited chunk as shown in a text document

        self.title = QLabel(objectName="panelTitle")
        self.title.setTextFormat(Qt.PlainText)
        self.title.setWordWrap(True)
        self.close_button = QPushButton("×", objectName="closeButton")
        self.close_button.setFixedWidth(28)
        self.close_button.clicked.connect(self._close)
        self.stack = QStackedWidget()
        self.message = QLabel(alignment=Qt.AlignCenter)
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.PlainText)
        self.text_view = QPlainTextEdit()
        self.text_view.setReadOnly(True)  # plain text: document content is never interpreted
        self.stack.addWidget(self.message)
        self.stack.addWidget(self.text_view)

        self.prev_button = QPushButton("‹")
        self.next_button = QPushButton("›")
        self.page_label = QLabel()
        self.prev_button.clicked.connect(lambda: self._step(-1))
        self.next_button.clicked.connect(lambda: self._step(1))
        nav = QHBoxLayout()
        nav.addStretch(1)
        nav.addWidget(self.prev_button)
        nav.addWidget(self.page_label)
        nav.addWidget(self.next_button)
        nav.addStretch(1)
        self.nav = QWidget()
        self.nav.setLayout(nav)
        self.nav.hide()

        if HAVE_QTPDF:
            self.pdf = QPdfDocument(self)
            self.pdf_view = QPdfView()
            self.pdf_view.setDocument(self.pdf)
            self.pdf_view.setPageMode(QPdfView.PageMode.MultiPage)
            self.pdf_view.setZoomMode(QPdfView.ZoomMode.FitToWidth)
            self.search = QPdfSearchModel(self)
            self.search.setDocument(self.pdf)
            self.pdf_view.setSearchModel(self.search)
            self.search.countChanged.connect(self._search_results)
            self.pdf_view.pageNavigator().currentPageChanged.connect(self._page_changed)
            self.stack.addWidget(self.pdf_view)

        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addWidget(self.close_button, 0, Qt.AlignTop)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(10, 10, 10, 10)
        lay.addLayout(head)
        lay.addWidget(self.stack, 1)
        lay.addWidget(self.nav)
        on_language_changed(self.retranslate)
        self.retranslate()

    def retranslate(self, *_: object) -> None:
        if not self.source:
            self.title.setText(tr("Source"))
        self._update_page_label()

    # -- opening -------------------------------------------------------------------------------
    def open_citation(self, citation: Any) -> None:
        """Open a Citation (or a Hit): PDF at its page, else the chunk in context."""
        self.source = citation.source
        self.page = citation.page
        self.highlighted = False
        self.show()
        path = self.ctx.knowledge_dir / citation.source
        where = ""
        if citation.page:  # a PPTX section's page is its slide number (parsers/pptx.py)
            where = tr("slide {page}") if path.suffix.lower() == ".pptx" else tr("page {page}")
            where = " · " + where.format(page=citation.page)
        self.title.setText(citation.source + where)
        chunk_text = getattr(citation, "text", "") or ""
        if path.suffix.lower() == ".pdf" and HAVE_QTPDF and path.exists():
            self._open_pdf(path, citation.page or 1, chunk_text)
        else:
            self._open_text(citation)
        self.opened.emit(self.source, self.page)

    def _open_pdf(self, path: Path, page: int, chunk_text: str) -> None:
        self.mode = "pdf"
        self.nav.show()
        if self._loaded_pdf != path:
            self.pdf.close()
            self._loaded_pdf = None
            error = self.pdf.load(str(path))
            if error != QPdfDocument.Error.None_:
                self._show_message(tr("This PDF cannot be shown: {error}").format(error=error.name))
                return
            self._loaded_pdf = path
        self.stack.setCurrentWidget(self.pdf_view)
        self.pdf_view.pageNavigator().jump(max(page - 1, 0), QPointF(), 0)
        self._update_page_label()
        phrase = search_phrase(chunk_text)
        self.search.setSearchString(phrase)  # results arrive asynchronously -> _search_results

    def _search_results(self) -> None:
        if self.mode != "pdf" or self.page is None:
            return
        for i in range(self.search.count()):
            link = self.search.resultAtIndex(i)
            if link.isValid() and link.page() == self.page - 1:
                self.pdf_view.setCurrentSearchResultIndex(i)
                self.highlighted = True
                # Selecting a result scrolls to it; stay on the cited page.
                if self.current_page() != self.page:
                    self.pdf_view.pageNavigator().jump(self.page - 1, QPointF(), 0)
                return

    def _open_text(self, citation: Any) -> None:
        self.mode = "text"
        self.nav.hide()
        kb = self.ctx.kb
        if kb is None:
            self._show_message(tr("The knowledge base is still opening."))
            return
        chunk_id = getattr(citation, "chunk_id", "")
        self.text_view.setPlainText(tr("Loading…"))
        self.stack.setCurrentWidget(self.text_view)

        def load(state) -> tuple[str, int, int]:
            hit = kb.get_chunk(chunk_id) if chunk_id else None
            if hit is None:
                text = getattr(citation, "text", "") or ""
                return text, 0, len(text)
            neighbours = [
                h for h in kb.chunks_of(hit.doc_id) if abs(h.chunk_index - hit.chunk_index) <= CONTEXT_CHUNKS
            ]
            neighbours.sort(key=lambda h: h.chunk_index)
            parts, start, end = [], 0, 0
            pos = 0
            for h in neighbours:
                if h.chunk_id == hit.chunk_id:
                    start, end = pos, pos + len(h.text)
                parts.append(h.text)
                pos += len(h.text) + 2
            if not parts:
                return hit.text, 0, len(hit.text)
            return "\n\n".join(parts), start, end

        self.ctx.runner.run(JobKind.VIEWER, load, on_success=self._show_text, on_failure=self._show_message)

    def _show_text(self, result: tuple[str, int, int]) -> None:
        text, start, end = result
        self.text_view.setPlainText(text)
        cursor = QTextCursor(self.text_view.document())
        cursor.setPosition(start)
        cursor.setPosition(min(end, len(text)), QTextCursor.KeepAnchor)
        selection = QTextEdit.ExtraSelection()
        fmt = QTextCharFormat()
        fmt.setBackground(QColor(255, 214, 0, 90))
        selection.format = fmt
        selection.cursor = cursor
        self.text_view.setExtraSelections([selection])
        self.highlighted = end > start
        self.highlighted_text = text[start:end]
        scroll = QTextCursor(self.text_view.document())
        scroll.setPosition(start)
        self.text_view.setTextCursor(scroll)
        self.text_view.centerCursor()

    def _show_message(self, message: str) -> None:
        self.message.setText(message)
        self.stack.setCurrentWidget(self.message)

    # -- page navigation -----------------------------------------------------------------------
    def current_page(self) -> int | None:
        """1-based page shown in the PDF view, or None when no PDF is open."""
        if self.mode != "pdf" or not HAVE_QTPDF:
            return None
        return self.pdf_view.pageNavigator().currentPage() + 1

    def _step(self, delta: int) -> None:
        page = (self.current_page() or 1) - 1 + delta
        if HAVE_QTPDF and 0 <= page < self.pdf.pageCount():
            self.pdf_view.pageNavigator().jump(page, QPointF(), 0)

    def _page_changed(self, _page: int) -> None:
        self._update_page_label()

    def _update_page_label(self) -> None:
        if self.mode == "pdf" and HAVE_QTPDF:
            self.page_label.setText(
                tr("Page {page} of {count}").format(page=self.current_page(), count=self.pdf.pageCount())
            )

    def _close(self) -> None:
        self.hide()
        self.closed.emit()
