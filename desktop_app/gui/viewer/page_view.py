"""One PDF page at a time, with the cited lines painted over it; zoomable (in, out, fit width,
Ctrl+wheel), at a readable size by default (the page's width, but never smaller than READABLE_SCALE).

QPdfView cannot paint arbitrary regions and keeps its page geometry private, so the page is
rendered here (``QPdfDocument.render``) and the highlight drawn in the same page coordinates the
text selection gives (points)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QImage,
    QPainter,
    QPaintEvent,
    QPalette,
    QPolygonF,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QScrollArea, QWidget

if TYPE_CHECKING:
    from PySide6.QtPdf import QPdfDocument

HIGHLIGHT = QColor(255, 196, 0, 90)  # translucent: the text stays readable under it
SENTENCE = QColor(255, 150, 0, 110)  # the cited sentence, over the passage's wash, underlined
MARGIN = 8  # pixels on each side of the page
RERENDER_MS = 80  # a small resize re-renders the page once it settles (the old image is scaled meanwhile)
POINT_PX = 96 / 72  # pixels per PDF point at "100 %" (a 96 dpi screen)
READABLE_SCALE = 0.9 * POINT_PX  # the smallest default: 10 pt text about 12 px high
ZOOM_STEP = 1.25
MIN_SCALE, MAX_SCALE = 0.25, 8.0  # pixels per point
AUTO, FIT = "auto", "fit"  # zoom modes: readable (the default), the viewer's width


def line_rects(bounds: list[QPolygonF]) -> list[QRectF]:
    """The word boxes of a text selection merged into one rectangle per line (per column on a
    multi-column page), in reading order."""
    lines: list[QRectF] = []
    for polygon in bounds:
        box = polygon.boundingRect()
        if box.isEmpty():
            continue
        last = lines[-1] if lines else None
        if last is not None:
            overlap = min(last.bottom(), box.bottom()) - max(last.top(), box.top())
            same_line = overlap >= 0.5 * min(last.height(), box.height())
            near = -box.height() <= box.left() - last.right() <= 3 * max(box.height(), last.height())
            if same_line and (near or last.intersects(box)):
                lines[-1] = last.united(box)
                continue
        lines.append(QRectF(box))
    return [r.adjusted(-1.5, -1.0, 1.5, 1.0) for r in lines]


class _Canvas(QWidget):
    def __init__(self, view: PdfPageView) -> None:
        super().__init__()
        self.view = view
        self.image: QImage | None = None

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802
        painter = QPainter(self)
        painter.fillRect(self.rect(), Qt.white)
        if self.image is not None:
            painter.setRenderHint(QPainter.SmoothPixmapTransform)
            painter.drawImage(QRectF(self.rect()), self.image)
        scale = self.view.scale()
        painter.setPen(Qt.NoPen)
        painter.setBrush(HIGHLIGHT)
        for r in self.view.highlights_of(self.view.page()):
            painter.drawRoundedRect(
                QRectF(r.x() * scale, r.y() * scale, r.width() * scale, r.height() * scale), 2, 2
            )
        painter.setBrush(SENTENCE)
        for r in self.view.sentence_of(self.view.page()):
            box = QRectF(r.x() * scale, r.y() * scale, r.width() * scale, r.height() * scale)
            painter.drawRoundedRect(box, 2, 2)
            painter.fillRect(QRectF(box.left(), box.bottom() - 1.5, box.width(), 1.5), QColor(160, 80, 0))
        painter.end()


class PdfPageView(QScrollArea):
    """Shows page ``page()`` of ``document``; ``set_highlights`` marks regions of any page."""

    page_changed = Signal(int)  # 0-based
    zoom_changed = Signal()

    def __init__(self, document: QPdfDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self._page = 0
        self._highlights: dict[int, list[QRectF]] = {}
        self._sentences: dict[int, list[QRectF]] = {}  # the cited sentence's lines, per page
        self._zoom: float | str = AUTO  # AUTO, FIT, or pixels per point
        self.canvas = _Canvas(self)
        self.setWidget(self.canvas)
        self.setWidgetResizable(False)
        self.setAlignment(Qt.AlignHCenter | Qt.AlignTop)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAsNeeded)  # zoomed past the width
        self.setBackgroundRole(QPalette.Dark)
        self._rerender = QTimer(self, singleShot=True, interval=RERENDER_MS)
        self._rerender.timeout.connect(self._render)

    def page(self) -> int:
        return self._page

    def highlights_of(self, page: int) -> list[QRectF]:
        return self._highlights.get(page, [])

    def sentence_of(self, page: int) -> list[QRectF]:
        return self._sentences.get(page, [])

    def clear(self) -> None:
        """Forget the page image and the highlights (another document is loading)."""
        self.clear_highlights()
        self.canvas.image = None

    def clear_highlights(self) -> None:
        self._highlights.clear()
        self._sentences.clear()
        self.canvas.update()

    def show_page(self, page: int) -> None:
        """Render ``page`` (0-based) and scroll to its highlight, or to its top."""
        self._page = max(0, min(page, self.document.pageCount() - 1))
        self._layout()
        self._render()
        self._reveal()
        self.page_changed.emit(self._page)

    def set_highlights(self, page: int, rects: list[QRectF], sentence: list[QRectF] | None = None) -> None:
        """Wash ``rects`` (the passage's lines) on ``page``; mark ``sentence``'s lines stronger."""
        self._highlights[page] = rects
        self._sentences[page] = sentence or []
        if page == self._page:
            self.canvas.update()
            self._reveal()

    def scale(self) -> float:
        """Pixels per PDF point at the current width."""
        width = self.document.pagePointSize(self._page).width()
        return self.canvas.width() / width if width > 0 else 1.0

    # -- zoom ------------------------------------------------------------------------------------
    def fit_scale(self) -> float:
        """Pixels per point that fit the page to the view's width."""
        width = self.document.pagePointSize(self._page).width()
        return max(self.viewport().width() - 2 * MARGIN, 50) / width if width > 0 else 1.0

    def target_scale(self) -> float:
        if self._zoom == FIT:
            return self.fit_scale()
        if self._zoom == AUTO:
            return max(self.fit_scale(), READABLE_SCALE)
        return float(self._zoom)

    def zoom_percent(self) -> int:
        """The zoom as a percentage of the page's printed size."""
        return round(self.target_scale() / POINT_PX * 100)

    def set_zoom(self, zoom: float | str) -> None:
        """AUTO, FIT, or pixels per point (clamped); the page is laid out and rendered again."""
        self._zoom = zoom if isinstance(zoom, str) else min(max(zoom, MIN_SCALE), MAX_SCALE)
        if self.document.pageCount():
            top = self.verticalScrollBar().value() / max(self.canvas.height(), 1)
            self._layout()
            self._render()
            self.verticalScrollBar().setValue(round(top * self.canvas.height()))
        self.zoom_changed.emit()

    def zoom_in(self) -> None:
        self.set_zoom(self.target_scale() * ZOOM_STEP)

    def zoom_out(self) -> None:
        self.set_zoom(self.target_scale() / ZOOM_STEP)

    def fit_width(self) -> None:
        self.set_zoom(FIT)

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802
        if event.modifiers() & Qt.ControlModifier:  # Ctrl+wheel zooms, as in every PDF reader
            delta = event.angleDelta().y()
            if delta:
                self.zoom_in() if delta > 0 else self.zoom_out()
            event.accept()
            return
        super().wheelEvent(event)

    def _layout(self) -> None:
        size = self.document.pagePointSize(self._page)
        scale = self.target_scale()
        width = max(round(size.width() * scale), 50)
        height = round(size.height() * scale) if size.width() > 0 else width
        self.canvas.setFixedSize(width, height)

    def _render(self) -> None:
        if self.document.pageCount() == 0:
            return
        ratio = self.devicePixelRatioF()
        target = QSize(round(self.canvas.width() * ratio), round(self.canvas.height() * ratio))
        image = self.document.render(self._page, target)
        image.setDevicePixelRatio(ratio)
        self.canvas.image = image
        self.canvas.update()

    def _reveal(self) -> None:
        rects = self.sentence_of(self._page) or self.highlights_of(self._page)
        if not rects:
            self.verticalScrollBar().setValue(0)
            return
        top = min(r.top() for r in rects) * self.scale()
        self.verticalScrollBar().setValue(max(0, round(top - self.viewport().height() / 5)))
        left = min(r.left() for r in rects) * self.scale()  # zoomed past the width: the lines' start
        self.horizontalScrollBar().setValue(max(0, round(left - MARGIN)))

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        if (
            self.document.pageCount()
            and event.size().width() != event.oldSize().width()
            and isinstance(self._zoom, str)  # a zoom the user chose stays
        ):
            self._layout()
            image = self.canvas.image
            if image is None or image.width() < 0.8 * self.canvas.width() * self.devicePixelRatioF():
                self._render()  # much wider (the viewer just opened): a blurred page would show
            else:
                self._rerender.start()
