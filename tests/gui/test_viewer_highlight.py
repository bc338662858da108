"""The source viewer highlights every line of the cited passage on the PDF page, follows the latest
citation clicked (whatever an earlier one was still loading), and says when the cited file has
changed since the answer."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from desktop_app.core.events import Citation
from desktop_app.gui.i18n import set_language, tr
from desktop_app.gui.viewer.viewer import CHANGED

BATCH_TIMEOUT_MS = 120_000
VICKSBURG = "Seige_of_Vicksburg_Sample_OCR.pdf"  # 6 pages of text


@pytest.fixture
def window(make_window, qtbot, drop, shared_data: Path, tmp_path: Path):
    window = make_window()
    notes = tmp_path / "src" / "kakapo.md"
    notes.parent.mkdir()
    filler = "Filler paragraph about weather and seasons on the islands. " * 25
    notes.write_text(
        f"# Kakapo\n\n{filler}\n\nThe kakapo is a flightless nocturnal parrot that feeds on rimu fruit.\n\n{filler}",
        encoding="utf-8",
    )
    docs = shared_data / "docs"
    paths = [
        docs / "pypdf/resources" / VICKSBURG,
        docs / "unstructured/example-docs/fake.docx",
        notes,
    ]
    with qtbot.waitSignal(window.knowledge.batch_finished, timeout=BATCH_TIMEOUT_MS):
        drop(window.knowledge, paths)
    window.ctx.runner.wait_idle(30_000)
    return window


def _cite(window, query: str, source: str, page: int | None = None, n: int = 1) -> Citation:
    """A citation as an answer gives it: the first 500 characters and the file's hash."""
    kb = window.ctx.kb
    hit = next(
        h for h in kb.search(query, top_k=20) if h.source == source and (page is None or h.page == page)
    )
    return Citation(n, hit.source, hit.page, hit.chunk_id, hit.text[:500], kb.manifest.get(source).sha256)


def _lines(viewer) -> set[int]:
    return {round(r.center().y()) for r in viewer.highlight_rects}


def _settled(qtbot, window) -> None:
    qtbot.waitUntil(lambda: window.viewer.changed is not None, timeout=10_000)


def test_a_pdf_citation_highlights_all_lines_of_the_passage_on_its_page(window, qtbot, screenshot):
    window.chat.input.setText("What is a cannister shot made of?")
    with qtbot.waitSignal(window.chat.answer_finished, timeout=60_000) as blocker:
        qtbot.mouseClick(window.chat.send_button, Qt.LeftButton)
    answer = blocker.args[0]
    target = next(c for c in answer.citations if c.source == VICKSBURG)
    assert target.page == 3
    # The answer kept the file's hash (the manifest's at answer time).
    assert target.sha256 == window.ctx.kb.manifest.get(VICKSBURG).sha256

    qtbot.mouseClick(answer.chips[answer.citations.index(target)], Qt.LeftButton)
    viewer = window.viewer
    assert viewer.isVisible() and viewer.mode == "pdf" and viewer.current_page() == 3
    qtbot.waitUntil(lambda: viewer.highlighted, timeout=10_000)
    chunk = window.ctx.kb.get_chunk(target.chunk_id).text
    # Every line of the passage, not a few words: many lines, and the passage's own words.
    assert len(_lines(viewer)) >= 8, viewer.highlight_rects
    shown = " ".join(viewer.highlighted_text.split())
    assert len(shown) > 0.8 * len(" ".join(chunk.split())), shown
    assert "Cannister shot is a tin cylinder" in shown
    # Painted on the page the viewer shows, inside it.
    page_size = viewer.pdf.pagePointSize(2)
    assert all(0 <= r.top() and r.bottom() <= page_size.height() + 2 for r in viewer.highlight_rects)
    assert viewer.pdf_view.highlights_of(2) == viewer.highlight_rects
    assert viewer.changed is False and not viewer.banner.isVisible()
    screenshot(window, "viewer-highlight")

    # Next and back: the highlight belongs to its page.
    qtbot.mouseClick(viewer.next_button, Qt.LeftButton)
    assert viewer.current_page() == 4 and viewer.pdf_view.highlights_of(3) == []
    qtbot.mouseClick(viewer.prev_button, Qt.LeftButton)
    assert viewer.current_page() == 3 and viewer.pdf_view.highlights_of(2)


def test_each_click_shows_that_citation_even_while_the_last_one_loads(window, qtbot):
    viewer = window.viewer
    page6 = _cite(window, "men to guard rebel prisoners", VICKSBURG, page=6)
    page3 = _cite(window, "Cannister shot is a tin cylinder", VICKSBURG, page=3)
    kakapo = _cite(window, "The kakapo is a flightless nocturnal parrot", "kakapo.md")
    docx = next(h for h in window.ctx.kb.chunks_of(window.ctx.kb.doc_id("fake.docx")))
    docx_cite = Citation(4, docx.source, docx.page, docx.chunk_id, docx.text)

    sequence = [(page3, 3), (page6, 6), (docx_cite, None), (kakapo, None), (page3, 3)]
    for cite, page in sequence:
        window.chat.citation_activated.emit(cite)
        assert viewer.source == cite.source and viewer.page == cite.page
        if page is not None:
            assert viewer.mode == "pdf" and viewer.current_page() == page
            qtbot.waitUntil(lambda: viewer.highlighted, timeout=10_000)
            assert len(_lines(viewer)) > 1
            assert viewer.highlighted_text.split()[0] in cite.text
        else:
            assert viewer.mode == "text"
            qtbot.waitUntil(
                lambda cite=cite: viewer.highlighted_text == window.ctx.kb.get_chunk(cite.chunk_id).text
            )
        assert viewer.title.text().startswith(cite.source)

    # Clicks faster than the loads: only the last one shows, on its page, highlighted.
    for cite in (page6, kakapo, docx_cite, page6, kakapo, page3):
        window.chat.citation_activated.emit(cite)
    qtbot.waitUntil(lambda: viewer.highlighted, timeout=10_000)
    window.ctx.runner.wait_idle(10_000)
    qtbot.wait(50)
    assert (viewer.source, viewer.mode, viewer.current_page()) == (VICKSBURG, "pdf", 3)
    assert "Cannister" in viewer.highlighted_text
    assert viewer.pdf_view.highlights_of(5) == []  # page 6's earlier highlight is gone
    window.chat.citation_activated.emit(page6)
    window.chat.citation_activated.emit(kakapo)
    window.ctx.runner.wait_idle(10_000)
    qtbot.waitUntil(lambda: "rimu fruit" in viewer.highlighted_text, timeout=10_000)
    assert viewer.mode == "text" and viewer.stack.currentWidget() is viewer.text_view
    assert viewer.highlight_rects == [] and not viewer.nav.isVisible()

    # A citation kept without its text (an old one, a Hit-like record): the chunk is fetched.
    bare = Citation(1, VICKSBURG, 6, page6.chunk_id)
    window.chat.citation_activated.emit(bare)
    qtbot.waitUntil(lambda: viewer.highlighted, timeout=10_000)
    assert viewer.current_page() == 6 and len(_lines(viewer)) > 1


def test_the_banner_says_when_the_cited_file_changed_since_the_answer(window, qtbot, shared_data):
    viewer = window.viewer
    kakapo = _cite(window, "The kakapo is a flightless nocturnal parrot", "kakapo.md")
    pdf = _cite(window, "Cannister shot is a tin cylinder", VICKSBURG, page=3)
    window.chat.citation_activated.emit(kakapo)
    _settled(qtbot, window)
    assert viewer.changed is False and viewer.banner.isHidden()

    path = window.ctx.knowledge_dir / "kakapo.md"
    path.write_text(path.read_text(encoding="utf-8") + "\n\nKakapo also eat seeds.\n", encoding="utf-8")
    window.chat.citation_activated.emit(kakapo)
    _settled(qtbot, window)
    assert viewer.changed is True and viewer.banner.isVisible()
    assert viewer.banner.text() == CHANGED
    # The passage the answer read is still shown and highlighted.
    assert viewer.highlighted_text == kakapo.text

    # Another citation of an unchanged file: no banner.
    window.chat.citation_activated.emit(pdf)
    _settled(qtbot, window)
    assert viewer.changed is False and viewer.banner.isHidden()

    # Re-synced: the manifest has the new hash, the banner stays; and it speaks the user's language.
    # (A sync the watcher started on the edit is replaced by this one and reports None: wait for ours.)
    with qtbot.waitSignal(
        window.knowledge.batch_finished, timeout=BATCH_TIMEOUT_MS, check_params_cb=lambda report: report is not None
    ):
        window.knowledge.sync()
    assert window.ctx.kb.manifest.get("kakapo.md").sha256 != kakapo.sha256
    set_language("zh_CN")
    window.chat.citation_activated.emit(kakapo)
    _settled(qtbot, window)
    assert viewer.banner.isVisible() and viewer.banner.text() == tr(CHANGED) != CHANGED
    window.chat.citation_activated.emit(pdf)
    _settled(qtbot, window)
    assert viewer.banner.isHidden() and viewer.title.text() == f"{VICKSBURG} · 第 3 页"

    # The PDF replaced under the same name: the new file is shown (not the one loaded before),
    # at its last page as the cited one is past its end, with the banner.
    shutil.copy(shared_data / "docs/pypdf/resources/crazyones.pdf", window.ctx.knowledge_dir / VICKSBURG)
    window.chat.citation_activated.emit(pdf)
    _settled(qtbot, window)
    assert (viewer.pdf.pageCount(), viewer.current_page()) == (1, 1)
    assert viewer.changed is True and viewer.banner.isVisible() and not viewer.highlighted


def test_locate_finds_the_passage_across_hyphenation_headers_and_page_breaks():
    from desktop_app.gui.viewer.locate import locate, utf16_index

    page = (
        "THE SIEGE OF VICKSBURG. 53\r\nWe are doing all we can to expedite the glorious victory\r\n"
        "awaiting us here, yet there are grumblers in the North who are\r\ncomplaining of our slow "
        "pro\ufffegress, and treasonable articles are\r\npublished in some papers that come to us."
    )
    # The parser joined the hyphenated word, and the chunk runs on to the next page's header.
    chunk = (
        "yet there are grumblers in the North who are complaining of our slow progress, and "
        "treasonable articles are published in some papers that come to us. 54 THE SIEGE OF "
        "VICKSBURG. a good housekeeper, she can easily be accommodated"
    )
    start, end = locate(chunk, page)
    assert page[start:end].startswith("yet there are grumblers")
    assert page[start:end].endswith("come to us")
    # A chunk that starts with the running header, then skips a line: header and passage both on the page.
    start, end = locate("THE SIEGE OF VICKSBURG. 53 We are doing all we can to expedite", page)
    assert (start, page[start:end].endswith("expedite")) == (0, True)
    # Chinese: each character is a word; a passage from another page is not found.
    zh = "第一章\n金刚鹦鹉是大型鹦鹉，\n羽色鲜艳，以坚果为食。\n其他内容。"
    start, end = locate("金刚鹦鹉是大型鹦鹉，羽色鲜艳，以坚果为食。", zh)
    assert zh[start:end] == "金刚鹦鹉是大型鹦鹉，\n羽色鲜艳，以坚果为食"
    assert locate("Kakapo feed on rimu fruit at night", page) is None
    assert utf16_index("a😀b", 2) == 3  # Qt counts an astral character as two
