"""Drive the real window like a user: drop documents, ask, follow a citation, edit the folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QUrl

from desktop_app.core import events as ev
from desktop_app.gui.markdown import anchors_of

BATCH_TIMEOUT_MS = 120_000


@pytest.fixture
def docs(shared_data: Path) -> dict[str, Path]:
    base = shared_data / "docs"
    return {
        "vicksburg": base / "pypdf/resources/Seige_of_Vicksburg_Sample_OCR.pdf",  # 6 pages
        "crazyones": base / "pypdf/resources/crazyones.pdf",
        "encrypted": base / "pypdf/resources/encrypted-file.pdf",
        "docx": base / "unstructured/example-docs/fake.docx",
    }


def _rows(window) -> dict[str, object]:
    return {doc.name: doc for doc in window.knowledge.model.rows}


def _index(window, qtbot, drop, paths: list[Path]):
    with qtbot.waitSignal(window.knowledge.batch_finished, timeout=BATCH_TIMEOUT_MS) as blocker:
        drop(window.knowledge, paths)
        assert window.knowledge.progress.isVisible()  # the batch shows its progress at once
    with qtbot.waitSignal(window.knowledge.documents_refreshed, timeout=10_000):
        pass
    return blocker.args[0]


def test_dropped_documents_are_indexed_and_failures_show_inline(make_window, qtbot, drop, docs, screenshot):
    window = make_window()
    with qtbot.waitSignal(window.knowledge.batch_finished, timeout=BATCH_TIMEOUT_MS) as blocker:
        drop(window.knowledge, list(docs.values()))
        qtbot.wait(400)
        screenshot(window, "02-indexing")
    report = blocker.args[0]
    # The batch's progress rows ("indexing", "processed") are replaced by the refreshed list,
    # which is read off the UI thread after the batch: wait for it, not just for four rows.
    qtbot.waitUntil(
        lambda: (
            len(window.knowledge.model.rows) == 4
            and all(d.status in ("indexed", "failed") for d in window.knowledge.model.rows)
        ),
        timeout=10_000,
    )
    rows = _rows(window)
    # Copied into the knowledge folder, then indexed; the encrypted PDF fails with a reason.
    for name in ("Seige_of_Vicksburg_Sample_OCR.pdf", "crazyones.pdf", "fake.docx"):
        assert rows[name].status == "indexed" and rows[name].chunks > 0, rows[name]
        assert (window.ctx.knowledge_dir / name).is_file()
    assert rows["encrypted-file.pdf"].status == "failed"
    assert "password" in str(rows["encrypted-file.pdf"].error)
    assert [name for name, _ in report.failed] == ["encrypted-file.pdf"]
    # The failure is listed inline under the table (no dialog), the rest went on.
    assert window.knowledge.errors.isVisible()
    failed_item = window.knowledge.errors.item(0)
    assert "encrypted-file.pdf" in failed_item.text()
    # Red only for the failure; the summary counts it as failed, not also as added.
    others = [window.knowledge.errors.item(i) for i in range(1, window.knowledge.errors.count())]
    assert failed_item.foreground().color().name() == "#c62828"
    assert others and all(item.foreground().color().name() != "#c62828" for item in others)
    assert window.knowledge.result_label.text() == "3 added, 1 failed"
    # The bar hides when the job ends (a signal after batch_finished), or after the folder
    # watcher's follow-up sync of the copied files: under load the test can get here first.
    qtbot.waitUntil(lambda: not window.knowledge.progress.isVisible(), timeout=10_000)
    # The table shows status, chunks, size and the error text.
    model = window.knowledge.model
    failed_row = model.rows.index(rows["encrypted-file.pdf"])
    assert model.index(failed_row, 1).data() == "failed"
    assert "password" in model.index(failed_row, 4).data()
    assert model.index(failed_row, 3).data().endswith("KB")


def test_question_streams_a_cited_answer_and_the_citation_opens_the_pdf_page(
    make_window, qtbot, drop, docs, screenshot
):
    window = make_window()
    _index(window, qtbot, drop, [docs["vicksburg"], docs["crazyones"]])
    window.chat.input.setText("What is a cannister shot made of?")
    with qtbot.waitSignal(window.chat.answer_finished, timeout=60_000) as blocker:
        qtbot.mouseClick(window.chat.send_button, Qt.LeftButton)
    answer = blocker.args[0]
    kinds = [type(e).__name__ for e in answer.events]
    assert kinds[0] == "RouteDecided" and "Retrieved" in kinds and kinds[-1] == "Answer", kinds
    assert answer.answer.by == "extractive"  # no LLM configured
    assert answer.body.isVisible() and answer.text.strip()
    assert answer.citations, "an extractive answer cites its passages"
    # Citations are numbered chips and inline cite: anchors, nothing else.
    assert [c.text().split("]")[0] + "]" for c in answer.chips] == [f"[{c.n}]" for c in answer.citations]
    assert set(anchors_of(answer.body.document())) <= {f"cite:{c.n}" for c in answer.citations}
    screenshot(window, "03-answer-with-citations")

    target = next(c for c in answer.citations if c.source.endswith("Vicksburg_Sample_OCR.pdf"))
    assert target.page == 3  # the cannister passage is on the third page
    chip = answer.chips[answer.citations.index(target)]
    qtbot.mouseClick(chip, Qt.LeftButton)
    assert window.viewer.isVisible()
    assert window.viewer.mode == "pdf"
    qtbot.waitUntil(lambda: window.viewer.current_page() == 3, timeout=10_000)
    qtbot.waitUntil(lambda: window.viewer.highlighted, timeout=10_000)
    qtbot.wait(1500)  # let QPdfView render the page before the screenshot
    assert window.viewer.current_page() == 3
    screenshot(window, "04-citation-in-pdf-viewer")

    # The inline [n] anchor does the same as the chip.
    window.viewer.hide()
    answer.body.anchorClicked.emit(QUrl(f"cite:{target.n}"))
    assert window.viewer.isVisible() and window.viewer.page == 3


def test_a_citation_into_a_text_document_shows_the_chunk_in_context(make_window, qtbot, tmp_path, drop):
    window = make_window()
    notes = tmp_path / "notes.md"
    body = ["# Kakapo notes", "", "Filler paragraph about weather and seasons. " * 30, ""]
    body += ["The kakapo is a flightless nocturnal parrot that feeds on rimu fruit.", ""]
    body += ["Another filler paragraph about islands and boats. " * 30]
    notes.write_text("\n".join(body), encoding="utf-8")
    _index(window, qtbot, drop, [notes])
    with qtbot.waitSignal(window.chat.answer_finished, timeout=60_000) as blocker:
        window.chat.ask("What does the kakapo feed on?")
    answer = blocker.args[0]
    cite = answer.citations[0]
    assert cite.source == "notes.md"
    with qtbot.waitSignal(window.ctx.runner.job_finished, timeout=10_000):
        qtbot.mouseClick(answer.chips[answer.citations.index(cite)], Qt.LeftButton)
    qtbot.waitUntil(lambda: "rimu fruit" in window.viewer.text_view.toPlainText(), timeout=10_000)
    assert window.viewer.mode == "text" and window.viewer.highlighted
    # The cited chunk is highlighted, with its neighbours around it for context.
    assert window.viewer.highlighted_text == window.ctx.kb.get_chunk(cite.chunk_id).text
    assert len(window.viewer.text_view.toPlainText()) > len(window.viewer.highlighted_text)
    # The sentence the answer quotes is marked apart from the rest of the passage.
    assert "rimu fruit" in window.viewer.highlighted_sentence, (answer.text, window.viewer.claim)
    assert len(window.viewer.text_view.extraSelections()) in (1, 2)


def test_files_changed_outside_the_app_are_synced_by_the_watcher(make_window, qtbot, drop, tmp_path):
    window = make_window()
    first = tmp_path / "first.txt"
    first.write_text("Macaws are large colourful parrots of the Americas.", encoding="utf-8")
    _index(window, qtbot, drop, [first])
    window.knowledge.watcher.timer.setInterval(200)  # the test need not wait for the real quiet period
    qtbot.waitUntil(lambda: bool(window.knowledge.watcher.fs.directories()), timeout=10_000)
    # A file saved into the folder by another program is picked up without any click.
    (window.ctx.knowledge_dir / "outside.txt").write_text(
        "Lorikeets feed on nectar and pollen with brush-tipped tongues.", encoding="utf-8"
    )
    qtbot.waitUntil(lambda: "outside.txt" in _rows(window), timeout=60_000)
    qtbot.waitUntil(lambda: _rows(window)["outside.txt"].status == "indexed", timeout=60_000)
    hits = window.ctx.kb.search("brush-tipped tongues nectar", top_k=1)
    assert hits and hits[0].source == "outside.txt"
    # Deleting it outside the app drops it from the index too.
    (window.ctx.knowledge_dir / "outside.txt").unlink()
    qtbot.waitUntil(lambda: "outside.txt" not in _rows(window), timeout=60_000)


def test_stop_cancels_a_running_question(make_window, qtbot):
    window = make_window()
    answer = window.chat.ask("anything at all")
    window.chat.stop()
    qtbot.waitUntil(lambda: answer.finished, timeout=30_000)
    assert not window.ctx.runner.is_busy("ask")
    # Either the stop landed first (a note says so) or the answer was already complete.
    assert answer.notes.text().endswith("Stopped.") or isinstance(answer.answer, ev.Answer)
