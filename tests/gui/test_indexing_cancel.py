"""The knowledge panel while one large file is indexed: the progress line names the page being
read out of how many, Cancel stops the batch within 2 s and leaves nothing of the file indexed;
failed files can be read again with Retry."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt

from desktop_app.core.library.manifest import INDEXED

DA_619 = "docs/unstructured/example-docs/pdf/DA-619p.pdf"
BATCH_TIMEOUT_MS = 120_000


def test_cancel_during_a_619_page_pdf_stops_within_two_seconds_and_indexes_none_of_it(
    make_window, qtbot, shared_data
):
    window = make_window()
    panel = window.knowledge
    panel.add_paths([shared_data / DA_619])
    qtbot.waitUntil(lambda: "reading page" in panel.progress_label.text(), timeout=BATCH_TIMEOUT_MS)
    assert "DA-619p.pdf: reading page" in panel.progress_label.text()
    assert "of 619" in panel.progress_label.text()
    assert panel.model.rows[-1].name == "DA-619p.pdf"  # the row, not the progress line, is marked
    assert panel.model.rows[-1].status == "indexing"

    clicked = time.monotonic()
    with qtbot.waitSignal(panel.batch_finished, timeout=10_000) as blocker:
        qtbot.mouseClick(panel.cancel_button, Qt.LeftButton)
    assert time.monotonic() - clicked < 2.0
    assert blocker.args == [None]  # cancelled
    assert "Cancelled" in panel.result_label.text()
    kb = window.ctx.kb
    assert all(row.status != INDEXED for row in kb.manifest.all().values())
    assert kb.store.count() == 0


def test_retry_reads_a_failed_file_again(make_window, qtbot, tmp_path):
    window = make_window()
    panel = window.knowledge
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"%PDF-1.4 this is not really a PDF")
    with qtbot.waitSignal(panel.batch_finished, timeout=BATCH_TIMEOUT_MS) as blocker:
        panel.add_paths([bad])
    assert [name for name, _ in blocker.args[0].failed] == ["bad.pdf"]
    qtbot.waitUntil(lambda: panel.retry_button.isVisible(), timeout=10_000)

    with qtbot.waitSignal(panel.batch_finished, timeout=BATCH_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(panel.retry_button, Qt.LeftButton)
    report = blocker.args[0]
    assert report.updated == ["bad.pdf"]  # read again, not left as unchanged
    assert str(dict(report.failed)["bad.pdf"]).startswith("corrupt PDF")
    qtbot.waitUntil(lambda: panel.retry_button.isVisible(), timeout=10_000)  # still failed: offered again


def test_a_window_opened_on_a_library_with_failed_files_offers_retry(make_window, qtbot, tmp_path):
    window = make_window()
    panel = window.knowledge
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"%PDF-1.4 this is not really a PDF")
    with qtbot.waitSignal(panel.batch_finished, timeout=BATCH_TIMEOUT_MS):
        panel.add_paths([bad])
    window.ctx.close()

    # Reopened: the start-up sync only repeats the known failure, yet Retry is offered.
    again = make_window().knowledge
    qtbot.waitUntil(lambda: again.retry_button.isVisible(), timeout=10_000)
    assert again.errors.wordWrap()  # a reason is wrapped, not cut at the panel's edge
