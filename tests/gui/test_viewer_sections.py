"""The source viewer opens a slide, a sheet's rows or a book's chapter as text at the cited section."""

from __future__ import annotations

import zipfile

import openpyxl
from pptx import Presentation
from pptx.util import Inches


def test_citations_into_slides_sheets_and_chapters_open_at_their_section(make_window, qtbot, tmp_path, drop):
    window = make_window()
    folder = tmp_path / "src"
    folder.mkdir()
    prs = Presentation()
    for title, body in [
        ("Welcome", "Agenda for the day"),
        ("Parrot diets", "Kea dig for grubs in alpine scree"),
    ]:
        slide = prs.slides.add_slide(prs.slide_layouts[5])
        slide.shapes.title.text = title
        slide.shapes.add_textbox(Inches(1), Inches(2), Inches(6), Inches(1)).text_frame.text = body
    prs.save(folder / "deck.pptx")
    wb = openpyxl.Workbook()
    wb.active.title = "Counts"
    wb.active.append(["Site", "Count"])
    for i in range(80):
        wb.active.append([f"Lake number {i}", i])
    wb.save(folder / "counts.xlsx")
    with zipfile.ZipFile(folder / "book.epub", "w") as zf:
        zf.writestr(
            "META-INF/container.xml",
            '<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="book.opf"/></rootfiles></container>',
        )
        zf.writestr(
            "book.opf",
            '<package xmlns="http://www.idpf.org/2007/opf"><manifest>'
            '<item id="a" href="a.xhtml" media-type="application/xhtml+xml"/>'
            '<item id="b" href="b.xhtml" media-type="application/xhtml+xml"/>'
            '</manifest><spine><itemref idref="a"/><itemref idref="b"/></spine></package>',
        )
        zf.writestr(
            "a.xhtml", "<html><body><h1>Arrival</h1><p>The ship reached the harbour.</p></body></html>"
        )
        zf.writestr(
            "b.xhtml", "<html><body><h1>Storm</h1><p>Waves broke over the lighthouse.</p></body></html>"
        )
    with qtbot.waitSignal(window.knowledge.batch_finished, timeout=60_000):
        drop(window.knowledge, sorted(folder.iterdir()))
    with qtbot.waitSignal(window.knowledge.documents_refreshed, timeout=10_000):
        pass
    kb = window.ctx.kb
    assert {d.name: d.status for d in kb.list_documents()} == dict.fromkeys(
        ["book.epub", "counts.xlsx", "deck.pptx"], "indexed"
    )

    for query, source, title, first_line in [
        ("kea grubs alpine scree", "deck.pptx", "deck.pptx · slide 2", "Slide 2: Parrot diets"),
        ("Lake number 61", "counts.xlsx", "counts.xlsx", "Sheet: Counts (rows "),
        ("waves over the lighthouse", "book.epub", "book.epub", "Storm"),
    ]:
        [hit] = kb.search(query, top_k=1)
        assert hit.source == source
        with qtbot.waitSignal(window.ctx.runner.job_finished, timeout=10_000):
            window.viewer.open_citation(hit)
        assert window.viewer.mode == "text" and window.viewer.title.text() == title
        qtbot.waitUntil(lambda hit=hit: window.viewer.highlighted_text == hit.text, timeout=10_000)
        assert window.viewer.highlighted_text.startswith(first_line)
        # The view is scrolled to the cited section: its cursor sits where the section starts.
        shown = window.viewer.text_view.toPlainText()
        assert window.viewer.text_view.textCursor().position() == shown.index(hit.text)
