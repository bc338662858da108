"""A reranker that fails at search time: the answer comes (fused ranking), its note says which model
failed and why, and the status bar shows the reranker as none with that reason (issue 36 item 7)."""

from __future__ import annotations

from desktop_app.core.config import Config
from desktop_app.core.models import failures


def test_status_bar_shows_a_reranker_that_failed_during_a_question(make_window, qtbot, mismatched_reranker):
    failures.forget_session()
    cfg = Config()
    cfg.retrieval.reranker = str(mismatched_reranker)
    window = make_window(cfg)
    assert window.status_text()["reranker"].startswith("●")  # found, not yet tried
    kb = window.ctx.kb
    (kb.knowledge_dir / "kea.md").write_text("# Kea\n\nThe kea is an alpine parrot that eats roots.\n")
    kb.sync()
    with qtbot.waitSignal(window.chat.answer_finished, timeout=60_000) as blocker:
        window.chat.ask("What does the kea eat?")
    answer = blocker.args[0]
    assert "kea" in answer.text.lower()
    assert "broken-reranker failed (IndexError" in answer.notes.text()  # the answer's note
    qtbot.waitUntil(lambda: window.status_text()["reranker"].startswith("○"), timeout=10_000)
    shown = window.status_text()["reranker"]
    assert "broken-reranker failed (IndexError: index out of range in self)" in shown
    failures.forget_session()
