"""The viewer reads like the document: a Markdown note rendered (not its `**markup**`), only the
cited passage washed and the sentence the answer rests on marked apart; a PDF page at a readable
size with zoom in, out, fit width, Ctrl+wheel and Ctrl +/-."""

from __future__ import annotations

import shutil
from pathlib import Path

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from desktop_app.core.ask.citations import sentence_spans
from desktop_app.core.events import Citation
from desktop_app.gui.i18n import set_language
from desktop_app.gui.viewer.page_view import MARGIN, READABLE_SCALE, ZOOM_STEP

REPO = Path(__file__).resolve().parents[2]
MACAW = REPO / "knowledge" / "parrots" / "blue-and-yellow-macaw.md"
VICKSBURG = "docs/pypdf/resources/Seige_of_Vicksburg_Sample_OCR.pdf"
BATCH_MS = 120_000


def _add(window, qtbot, drop, paths) -> None:
    with qtbot.waitSignal(window.knowledge.batch_finished, timeout=BATCH_MS):
        drop(window.knowledge, paths)
    window.ctx.runner.wait_idle(30_000)


def _citation(window, source: str, query: str) -> Citation:
    kb = window.ctx.kb
    hit = next(h for h in kb.search(query, top_k=20) if h.source == source)
    return Citation(1, hit.source, hit.page, hit.chunk_id, hit.text[:500], kb.manifest.get(source).sha256)


def test_a_markdown_note_is_rendered_with_the_cited_sentence_marked(
    make_window, qtbot, drop, tmp_path, screenshot
):
    window = make_window()
    note = tmp_path / "notes" / "macaw.md"
    note.parent.mkdir()
    shutil.copy(MACAW, note)
    source_text = note.read_text(encoding="utf-8")
    assert "**" in source_text  # the note has Markdown emphasis
    _add(window, qtbot, drop, [note])
    cite = _citation(window, "macaw.md", "blue-and-yellow macaw colours")
    chunk = window.ctx.kb.get_chunk(cite.chunk_id).text
    sentence = next(line for line in chunk.splitlines() if len(line.split()) > 6).strip()
    claim = f"{sentence.replace('**', '')} [1]"  # an extractive answer quotes the sentence

    viewer = window.viewer
    viewer.open_citation(cite, claim)
    qtbot.waitUntil(lambda: viewer.highlighted, timeout=10_000)
    shown = viewer.text_view.toPlainText()
    assert viewer.rendered and "**" not in shown  # rendered, not raw
    assert viewer.highlighted_text == chunk
    assert viewer.highlighted_sentence  # the sentence is told apart ...
    assert viewer.highlighted_sentence in shown and len(viewer.highlighted_sentence) < len(shown.strip())
    words = set(sentence.replace("*", "").split())
    assert words & set(viewer.highlighted_sentence.split())
    selections = viewer.text_view.extraSelections()
    strong = [s for s in selections if s.format.fontUnderline()]
    assert len(strong) == 1  # ... by a stronger mark of its own
    assert strong[0].cursor.selectedText().strip() == viewer.highlighted_sentence.strip()
    window.viewer.resize(600, 700)
    screenshot(viewer, "viewer-markdown")


def test_a_pdf_page_opens_readable_and_zooms(make_window, qtbot, drop, shared_data):
    window = make_window()
    _add(window, qtbot, drop, [shared_data / VICKSBURG])
    source = Path(VICKSBURG).name
    viewer = window.viewer
    window.open_citation(_citation(window, source, "Vicksburg siege"))
    qtbot.waitUntil(lambda: viewer.changed is not None, timeout=10_000)
    view = viewer.pdf_view
    assert viewer.mode == "pdf" and viewer.zoom_in_button.isVisible()
    assert view.scale() >= READABLE_SCALE * 0.99  # readable, even in a narrow column
    assert viewer.zoom_label.text().endswith("%")

    before = view.scale()
    viewer.zoom_in_button.click()
    assert abs(view.scale() - before * ZOOM_STEP) < 0.02
    viewer.zoom_out_button.click()
    assert abs(view.scale() - before) < 0.02

    # Ctrl+wheel zooms in; the plain wheel scrolls
    centre = QPointF(view.viewport().rect().center())
    wheel = QWheelEvent(
        centre,
        QPointF(view.viewport().mapToGlobal(QPoint(10, 10))),
        QPoint(0, 0),
        QPoint(0, 120),
        Qt.NoButton,
        Qt.ControlModifier,
        Qt.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(view.viewport(), wheel)
    assert view.scale() > before * 1.2

    # Ctrl+- zooms out (a shortcut of the viewer)
    view.setFocus()
    qtbot.keyClick(view, Qt.Key_Minus, Qt.ControlModifier)
    assert abs(view.scale() - before) < 0.02

    viewer.fit_button.click()
    assert view.canvas.width() == view.viewport().width() - 2 * MARGIN
    qtbot.waitUntil(lambda: not view.horizontalScrollBar().isVisible(), timeout=2_000)

    # An answer's claim: its sentence is marked apart from the rest of the passage on the page.
    cite = _citation(window, source, "Cannister shot is a tin cylinder")
    spans = sentence_spans(cite.text)
    start, end = max(spans, key=lambda span: span[1] - span[0])
    claim = cite.text[start:end]
    viewer.open_citation(cite, claim)
    qtbot.waitUntil(lambda: bool(viewer.sentence_rects), timeout=10_000)
    assert len(viewer.sentence_rects) < len(viewer.highlight_rects)
    assert set(claim.split()[:3]) & set(viewer.highlighted_sentence.split())

    set_language("zh_CN")
    try:
        assert viewer.fit_button.text() == "适合宽度"
    finally:
        set_language("en")
