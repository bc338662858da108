"""A passage read by OCR from a scanned PDF opens in the PDF viewer at its page, like any PDF's."""

from __future__ import annotations

from kdesk_lab.ocr import draw_pages, paragraphs, save_image_pdf


def test_an_ocr_citation_opens_the_scanned_pdf_at_its_page(make_window, qtbot, tmp_path, drop, shared_data):
    window = make_window()
    pages = [draw_pages([text[:120]], size=(827, 500), margin=40)[0][0] for text in paragraphs("en", 2)]
    folder = tmp_path / "src"
    folder.mkdir()
    save_image_pdf(pages, folder / "scan.pdf", bilevel=True)
    with qtbot.waitSignal(window.knowledge.batch_finished, timeout=120_000):
        drop(window.knowledge, [folder / "scan.pdf"])
    kb = window.ctx.kb
    assert {d.name: d.status for d in kb.list_documents()} == {"scan.pdf": "indexed"}

    [hit] = kb.search(paragraphs("en", 2)[1][:60], top_k=1)
    assert (hit.source, hit.page, hit.ocr) == ("scan.pdf", 2, True)
    window.viewer.open_citation(hit)
    assert window.viewer.mode == "pdf" and window.viewer.title.text() == "scan.pdf · page 2"
    qtbot.waitUntil(lambda: window.viewer.current_page() == 2, timeout=10_000)
