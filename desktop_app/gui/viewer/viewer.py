"""Opens a cited source: a PDF at the cited page with every line of the cited passage highlighted;
other files (DOCX, slides, sheets, books, text) show the cited chunk in context, as plain text,
scrolled to it. Each click shows that citation, whatever an earlier one was still loading, and a
banner says when the file has changed since the answer was given."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QKeySequence, QShortcut, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QStackedWidget,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.ask.citations import changed_since_answer, cited_sentence, claim_for
from desktop_app.core.library.names import display_name, fs_path
from desktop_app.core.messages import N_
from desktop_app.gui.context import AppContext
from desktop_app.gui.i18n import on_language_changed, tr
from desktop_app.gui.markdown import SafeTextBrowser
from desktop_app.gui.operations import JobKind, Operation
from desktop_app.gui.tasks import Failure
from desktop_app.gui.viewer.locate import locate, utf16_index
from desktop_app.gui.viewer.page_view import PdfPageView, line_rects

try:  # QtPdf ships in the PySide6-Pdf wheel; without it PDFs show as text
    from PySide6.QtPdf import QPdfDocument

    HAVE_QTPDF = True
except ImportError:  # pragma: no cover - depends on the installed wheels
    HAVE_QTPDF = False

CONTEXT_CHUNKS = 3  # neighbours shown on each side of the cited chunk
MARKDOWN_SUFFIXES = (".md", ".markdown")  # notes shown rendered, not as their source
PASSAGE_TINT = QColor(255, 214, 0, 60)  # the cited passage: a light wash
SENTENCE_TINT = QColor(255, 176, 0, 150)  # the cited sentence in it: stronger, and underlined
WHOLE_SHARE = 0.9  # a passage that is (almost) all that is shown is not washed: nothing to tell apart


def answer_claim(messages: list[Any], citation: Any) -> str:
    """What the answer holding ``citation`` says with it (its sentences that cite it), from the
    chat's messages; "" for a citation no answer text carries (a search hit, a photo's evidence)."""
    for widget in messages:
        if any(c is citation for c in getattr(widget, "citations", ())):
            return claim_for(getattr(widget, "text", "") or "", getattr(citation, "n", 0))
    return ""
CHANGED = N_("This file has changed since this answer; the passage may have moved.")


@dataclass
class _Loaded:
    """What the background job found for one citation."""

    changed: bool  # the file is no longer the one the answer read
    span: tuple[int, int] | None = None  # PDF: the passage in the page's text
    context: str = ""  # text: the chunk with its neighbours
    start: int = 0
    end: int = 0


class SourceViewer(QWidget):
    opened = Signal(str, object)  # source, page (None for text)
    closed = Signal()

    def __init__(self, ctx: AppContext, parent=None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.citation: Any = None
        self.source = ""
        self.page: int | None = None
        self.mode = ""  # "pdf" | "text" | ""
        self.highlighted = False
        self.highlighted_text = ""  # the cited passage as found in the shown text or PDF page
        self.highlighted_sentence = ""  # the sentence of it the answer rests on, as shown
        self.claim = ""  # what the answer says with this citation ("" when not known)
        self.rendered = False  # a Markdown note shown rendered
        self.highlight_rects: list[Any] = []  # PDF: one QRectF per highlighted line, in points
        self.sentence_rects: list[Any] = []  # PDF: the cited sentence's lines, in points
        self.changed: bool | None = None  # None until the check ran
        self._generation = 0  # the latest open_citation; results of earlier ones are dropped
        self._loaded_pdf: tuple[Path, int, int] | None = None  # path, size, mtime of the open PDF
        self._cited_page = 0  # 0-based: the page whose text the passage is looked for in

        self.title = QLabel(objectName="panelTitle")
        self.title.setTextFormat(Qt.PlainText)
        self.title.setWordWrap(True)
        self.close_button = QPushButton("×", objectName="closeButton")
        self.close_button.setFixedWidth(28)
        self.close_button.clicked.connect(self._close)
        self.banner = QLabel(objectName="viewerBanner")
        self.banner.setTextFormat(Qt.PlainText)
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet(
            "QLabel#viewerBanner { background: #fff4d6; color: #5c4300; border: 1px solid #e6c15c;"
            " border-radius: 6px; padding: 6px 8px; }"
        )
        self.banner.hide()
        self.stack = QStackedWidget()
        self.message = QLabel(alignment=Qt.AlignCenter)
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.PlainText)
        # Plain text, or a Markdown note rendered safely (no HTML, no images, no links followed).
        self.text_view = SafeTextBrowser()
        self.text_view.setReadOnly(True)
        self.stack.addWidget(self.message)
        self.stack.addWidget(self.text_view)

        self.prev_button = QPushButton("‹")
        self.next_button = QPushButton("›")
        self.page_label = QLabel()
        self.prev_button.clicked.connect(lambda: self._step(-1))
        self.next_button.clicked.connect(lambda: self._step(1))
        # Zoom, as in a PDF reader: out, the level, in, fit width (Ctrl+wheel and Ctrl +/- too).
        self.zoom_out_button = QPushButton("−")
        self.zoom_label = QLabel()
        self.zoom_in_button = QPushButton("+")
        self.fit_button = QPushButton()
        # Compact: the bar must not widen the viewer (the chat beside it keeps its room).
        for button in (self.prev_button, self.next_button, self.zoom_out_button, self.zoom_in_button):
            button.setFixedWidth(32)
        self.fit_button.setSizePolicy(QSizePolicy.Maximum, QSizePolicy.Fixed)
        nav = QHBoxLayout()
        nav.addStretch(1)
        nav.addWidget(self.prev_button)
        nav.addWidget(self.page_label)
        nav.addWidget(self.next_button)
        nav.addSpacing(16)
        nav.addWidget(self.zoom_out_button)
        nav.addWidget(self.zoom_label)
        nav.addWidget(self.zoom_in_button)
        nav.addWidget(self.fit_button)
        nav.addStretch(1)
        self.nav = QWidget()
        self.nav.setLayout(nav)
        self.nav.hide()

        if HAVE_QTPDF:
            self.pdf = QPdfDocument(self)
            self.pdf_view = PdfPageView(self.pdf)
            self.pdf_view.page_changed.connect(self._page_changed)
            self.pdf_view.zoom_changed.connect(self._update_zoom_label)
            self.stack.addWidget(self.pdf_view)
            self.zoom_in_button.clicked.connect(self.pdf_view.zoom_in)
            self.zoom_out_button.clicked.connect(self.pdf_view.zoom_out)
            self.fit_button.clicked.connect(self.pdf_view.fit_width)
            keys = (
                (QKeySequence.ZoomIn, self.pdf_view.zoom_in),
                (QKeySequence("Ctrl+="), self.pdf_view.zoom_in),  # "+" without Shift
                (QKeySequence.ZoomOut, self.pdf_view.zoom_out),
            )
            self.zoom_shortcuts = []
            for key, slot in keys:
                shortcut = QShortcut(key, self, context=Qt.WidgetWithChildrenShortcut)
                shortcut.activated.connect(slot)
                self.zoom_shortcuts.append(shortcut)

        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addWidget(self.close_button, 0, Qt.AlignTop)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(10, 10, 10, 10)
        lay.addLayout(head)
        lay.addWidget(self.banner)
        lay.addWidget(self.stack, 1)
        lay.addWidget(self.nav)
        on_language_changed(self.retranslate)
        self.retranslate()

    def retranslate(self, *_: object) -> None:
        self._update_title()
        self.banner.setText(tr(CHANGED))
        self.zoom_in_button.setToolTip(tr("Zoom in (Ctrl++ or Ctrl+wheel)"))
        self.zoom_out_button.setToolTip(tr("Zoom out (Ctrl+- or Ctrl+wheel)"))
        self.fit_button.setText(tr("Fit width"))
        self.fit_button.setToolTip(tr("Show the whole width of the page"))
        self._update_page_label()

    def _update_title(self) -> None:
        if self.citation is None:
            self.title.setText(tr("Source"))
            return
        where = ""
        if self.page:  # a PPTX section's page is its slide number (parsers/pptx.py)
            slide = Path(self.source).suffix.lower() == ".pptx"
            where = " · " + (tr("slide {page}") if slide else tr("page {page}")).format(page=self.page)
        self.title.setText(display_name(self.source) + where)

    # -- opening -------------------------------------------------------------------------------
    def open_citation(self, citation: Any, claim: str = "") -> None:
        """Open a Citation (or a Hit): a PDF at its page, else the chunk in context. ``claim``:
        what the answer says with it, so the sentence it rests on is told apart."""
        self._generation += 1
        self.citation = citation
        self.claim = claim
        self.highlighted_sentence = ""
        self.source = citation.source
        self.ctx.desk.note_opened(citation.source)  # a model switch embeds it early
        self.page = citation.page
        self.highlighted = False
        self.highlighted_text = ""
        self.highlight_rects = []
        self.sentence_rects = []
        self.changed = None
        self.banner.hide()
        self.show()
        self._update_title()
        path = fs_path(self.ctx.knowledge_dir, citation.source)  # names.py: stored name to path
        if path.suffix.lower() == ".pdf" and HAVE_QTPDF and path.is_file():
            self._open_pdf(path, citation)
        else:
            self._open_text(path, citation)
        self.opened.emit(self.source, self.page)

    def _open_pdf(self, path: Path, citation: Any) -> None:
        self.mode = "pdf"
        self.nav.show()
        st = path.stat()
        key = (path, st.st_size, st.st_mtime_ns)
        if self._loaded_pdf != key:  # another file, or this one changed on disk
            self.pdf_view.clear()
            self.pdf.close()
            self._loaded_pdf = None
            error = self.pdf.load(str(path))
            if error != QPdfDocument.Error.None_:
                self.nav.hide()
                self._show_message(tr("This PDF cannot be shown: {error}").format(error=error.name))
                return
            self._loaded_pdf = key
        page = min(max((citation.page or 1) - 1, 0), self.pdf.pageCount() - 1)
        self._cited_page = page
        self.pdf_view.clear_highlights()  # only this citation's passage is marked
        self.stack.setCurrentWidget(self.pdf_view)
        self.pdf_view.show_page(page)
        page_text = self.pdf.getAllText(page).text()  # one page: a few ms
        self._load(path, citation, lambda passage: locate(passage, page_text) if page_text else None)

    def _open_text(self, path: Path, citation: Any) -> None:
        self.mode = "text"
        self.nav.hide()
        if self.ctx.kb is None:
            self._show_message(tr("The knowledge base is still opening."))
            return
        self.text_view.setExtraSelections([])
        self.text_view.setPlainText(tr("Loading…"))
        self.stack.setCurrentWidget(self.text_view)
        self._load(path, citation, None)

    def _load(self, path: Path, citation: Any, find: Any) -> None:
        """Off the UI thread: the cited chunk (a Citation keeps only its first 500 characters), its
        neighbours for a text file, whether the file changed since the answer, and where the
        passage is on a PDF page (``find``)."""
        kb = self.ctx.kb
        generation = self._generation
        stored = getattr(citation, "text", "") or ""
        chunk_id = getattr(citation, "chunk_id", "")
        source = citation.source
        sha256 = getattr(citation, "sha256", "")  # a Hit (search results) has none

        def load(_state: object) -> _Loaded:
            changed = kb is not None and changed_since_answer(sha256, path, kb.manifest.get(source))
            hit = kb.get_chunk(chunk_id) if kb is not None and chunk_id else None
            # After a change the chunk of that id holds the new text: find what the answer read.
            passage = stored if hit is None or (changed and stored) else hit.text
            if find is not None:
                return _Loaded(changed, span=find(passage))
            if hit is None or changed:
                return _Loaded(changed, context=passage, end=len(passage))
            neighbours = sorted(
                (
                    h
                    for h in kb.chunks_of(hit.doc_id)
                    if abs(h.chunk_index - hit.chunk_index) <= CONTEXT_CHUNKS
                ),
                key=lambda h: h.chunk_index,
            )
            parts, start, end, pos = [], 0, len(hit.text), 0
            for h in neighbours:
                if h.chunk_id == hit.chunk_id:
                    start, end = pos, pos + len(h.text)
                parts.append(h.text)
                pos += len(h.text) + 2
            return _Loaded(changed, context="\n\n".join(parts) or hit.text, start=start, end=end)

        def done(result: _Loaded) -> None:
            if generation == self._generation:  # a later click wins
                self._show_loaded(result)

        def failed(failure: Failure) -> None:
            if generation == self._generation:
                self._show_message(failure.text())

        self.ctx.runner.run(
            JobKind.VIEWER, load, operation=Operation.SHOW_PASSAGE, on_success=done, on_failure=failed
        )

    def _show_loaded(self, loaded: _Loaded) -> None:
        self.changed = loaded.changed
        self.banner.setVisible(loaded.changed)
        if self.mode == "pdf":
            self._highlight_pdf(loaded.span)
        else:
            self._show_text(loaded.context, loaded.start, loaded.end)

    def _highlight_pdf(self, span: tuple[int, int] | None) -> None:
        page = self._cited_page  # the user may have turned the page meanwhile
        if span is None:  # not on this page's text layer (a scanned page, a moved passage)
            return
        text = self.pdf.getAllText(page).text()
        start, end = utf16_index(text, span[0]), utf16_index(text, span[1])
        selection = self.pdf.getSelectionAtIndex(page, start, end - start)
        self.highlight_rects = line_rects(list(selection.bounds())) if selection.isValid() else []
        self.highlighted = bool(self.highlight_rects)
        self.highlighted_text = text[span[0] : span[1]]
        self.sentence_rects = []
        sentence = cited_sentence(self.highlighted_text, self.claim, wrapped=True)  # a page's lines
        if sentence is not None:  # the sentence the answer rests on, marked apart
            s_start, s_end = span[0] + sentence[0], span[0] + sentence[1]
            a, b = utf16_index(text, s_start), utf16_index(text, s_end)
            marked = self.pdf.getSelectionAtIndex(page, a, b - a)
            self.sentence_rects = line_rects(list(marked.bounds())) if marked.isValid() else []
            self.highlighted_sentence = text[s_start:s_end] if self.sentence_rects else ""
        self.pdf_view.set_highlights(page, self.highlight_rects, self.sentence_rects)

    def _show_text(self, text: str, start: int, end: int) -> None:
        """The passage in context: a Markdown note rendered, other text as it is; the passage
        washed (unless it is all there is), the cited sentence marked strongly, scrolled to."""
        view = self.text_view
        self.rendered = Path(self.source).suffix.lower() in MARKDOWN_SUFFIXES
        passage = text[start:end]
        if self.rendered:
            view.set_markdown(text)
            shown = view.toPlainText()
            span = locate(passage, shown, min_words=1) if passage.strip() else None
            start, end = span if span is not None else (0, 0)
        else:
            view.setPlainText(text)
            shown = text
            end = min(end, len(shown))
        selections = []
        if end > start and (end - start) < WHOLE_SHARE * len(shown.strip()):
            selections.append(self._selection(shown, start, end, PASSAGE_TINT))
        sentence = cited_sentence(shown[start:end], self.claim) if end > start else None
        focus = start
        if sentence is not None:
            s_start, s_end = start + sentence[0], start + sentence[1]
            selection = self._selection(shown, s_start, s_end, SENTENCE_TINT)
            selection.format.setFontUnderline(True)
            selections.append(selection)
            self.highlighted_sentence = shown[s_start:s_end]
            focus = s_start
        elif end > start and not selections:  # the whole note: the passage itself, lightly
            selections.append(self._selection(shown, start, end, PASSAGE_TINT))
        view.setExtraSelections(selections)
        self.highlighted = end > start
        self.highlighted_text = passage if self.highlighted else ""
        scroll = QTextCursor(view.document())
        scroll.setPosition(utf16_index(shown, focus))
        view.setTextCursor(scroll)
        self._center(view)

    def _selection(self, shown: str, start: int, end: int, colour: QColor) -> QTextEdit.ExtraSelection:
        cursor = QTextCursor(self.text_view.document())
        cursor.setPosition(utf16_index(shown, start))
        cursor.setPosition(utf16_index(shown, end), QTextCursor.KeepAnchor)
        selection = QTextEdit.ExtraSelection()
        fmt = QTextCharFormat()
        fmt.setBackground(colour)
        selection.format = fmt
        selection.cursor = cursor
        return selection

    @staticmethod
    def _center(view: QTextEdit) -> None:
        """Scroll the cursor's line to about a third of the view's height."""
        view.ensureCursorVisible()
        rect = view.cursorRect()
        bar = view.verticalScrollBar()
        bar.setValue(bar.value() + rect.top() - view.viewport().height() // 3)

    def _show_message(self, message: str) -> None:
        self.message.setText(message)
        self.stack.setCurrentWidget(self.message)

    # -- page navigation -----------------------------------------------------------------------
    def current_page(self) -> int | None:
        """1-based page shown in the PDF view, or None when no PDF is shown."""
        if self.mode != "pdf" or not HAVE_QTPDF or self.stack.currentWidget() is not self.pdf_view:
            return None
        return self.pdf_view.page() + 1

    def _step(self, delta: int) -> None:
        page = (self.current_page() or 1) - 1 + delta
        if HAVE_QTPDF and 0 <= page < self.pdf.pageCount():
            self.pdf_view.show_page(page)

    def _page_changed(self, _page: int) -> None:
        self._update_page_label()
        self._update_zoom_label()

    def _update_zoom_label(self) -> None:
        if self.mode == "pdf" and HAVE_QTPDF:
            self.zoom_label.setText(f"{self.pdf_view.zoom_percent()} %")

    def _update_page_label(self) -> None:
        if self.mode == "pdf" and HAVE_QTPDF:
            self.page_label.setText(
                tr("Page {page} of {count}").format(page=self.pdf_view.page() + 1, count=self.pdf.pageCount())
            )
            self.prev_button.setEnabled(self.pdf_view.page() > 0)
            self.next_button.setEnabled(self.pdf_view.page() + 1 < self.pdf.pageCount())

    def _close(self) -> None:
        self.hide()
        self.closed.emit()
