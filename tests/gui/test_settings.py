"""Settings: every section edits config.toml; the language switches live, labels included."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from desktop_app.core.config import load_config
from desktop_app.gui.i18n import set_language


def test_language_switches_live_and_settings_are_saved(make_window, qtbot, screenshot):
    window = make_window()
    dialog = window.open_settings()
    qtbot.waitExposed(dialog)
    assert dialog.label_for(dialog.language) == "Language"
    assert window.chat.send_button.text() == "Send"
    screenshot(dialog, "06-settings")

    dialog.language.setCurrentIndex(dialog.language.findData("zh_CN"))
    # Everything already on screen is retranslated at once, the dialog itself too.
    assert dialog.label_for(dialog.language) == "语言"
    assert dialog.windowTitle() == "设置"
    assert window.chat.send_button.text() == "发送"
    assert window.knowledge.title.text() == "知识库"
    assert window.knowledge.model.headerData(0, Qt.Horizontal) == "文档"
    screenshot(window, "07-main-window-zh")
    screenshot(dialog, "08-settings-zh")

    dialog.backend.setCurrentIndex(dialog.backend.findData("openai"))
    assert dialog.llm_form.isRowVisible(dialog.url) and not dialog.llm_form.isRowVisible(4)
    dialog.url.setText("http://127.0.0.1:11434/v1")
    dialog.model.setText("qwen2.5:0.5b")
    dialog.router_mode.setCurrentIndex(dialog.router_mode.findData("always"))
    dialog.top_k.setValue(7)
    dialog.keyword_weight.setValue(0.3)
    dialog.high.setValue(0.9)
    with qtbot.waitSignal(window.ctx.runner.job_finished, timeout=10_000):
        dialog.accept()
    window.ctx.runner.wait_idle(30_000)

    saved = load_config(window.ctx.data_dir / "config.toml")
    assert saved.ui.language == "zh_CN"
    assert saved.llm.backend == "openai"
    assert saved.llm.url == "http://127.0.0.1:11434/v1"
    assert saved.llm.model == "qwen2.5:0.5b"
    assert saved.router.mode == "always"
    assert saved.retrieval.top_k == 7
    assert abs(saved.retrieval.keyword_weight - 0.3) < 1e-9
    assert abs(saved.identify.high - 0.9) < 1e-9
    assert window.ctx.config.router.mode == "always"  # live, no restart
    assert window.chat.send_button.text() == "发送"  # the accepted language stays
    set_language("en")


def test_cancel_reverts_a_live_language_change(make_window, qtbot):
    window = make_window()
    dialog = window.open_settings()
    dialog.language.setCurrentIndex(dialog.language.findData("zh_CN"))
    assert window.chat.send_button.text() == "发送"
    dialog.reject()
    assert window.chat.send_button.text() == "Send"
    assert not (window.ctx.data_dir / "config.toml").exists()


def test_a_data_folder_chosen_in_settings_is_used_from_the_next_start(
    make_window, qtbot, tmp_path, monkeypatch
):
    from desktop_app.core.paths import data_dir_pointer, default_data_dir

    monkeypatch.delenv("KDESK_DATA_DIR", raising=False)
    before = default_data_dir()
    window = make_window()
    dialog = window.open_settings()
    assert dialog.data_dir.text() == str(window.ctx.data_dir)
    elsewhere = tmp_path / "library on another disk"
    dialog.set_data_dir(elsewhere)
    assert "next start" in dialog.data_hint.text()
    with qtbot.waitSignal(window.ctx.runner.job_finished, timeout=10_000):
        dialog.accept()
    window.ctx.runner.wait_idle(30_000)
    assert data_dir_pointer().read_text(encoding="utf-8") == str(elsewhere.resolve())
    assert default_data_dir() == elsewhere.resolve() != before
    assert window.ctx.data_dir != elsewhere  # this session keeps its folder
    data_dir_pointer().unlink()
    assert default_data_dir() == before


def _ask(window, qtbot, question: str):
    window.chat.input.setText(question)
    with qtbot.waitSignal(window.chat.answer_finished, timeout=60_000) as blocker:
        window.chat.send()
    return blocker.args[0]


def test_settings_apply_to_the_next_question_in_the_same_window(make_window, qtbot, drop, minilm):
    """Weights and router mode chosen in Settings are what the running window's next search and
    route use: the same hits a restart with the saved config.toml gives, not the old ones."""
    from desktop_app.core.events import Retrieved
    from desktop_app.core.library.knowledge import KnowledgeBase

    window = make_window()
    notes = sorted((Path(__file__).resolve().parents[2] / "knowledge" / "parrots").glob("*.md"))[:12]
    with qtbot.waitSignal(window.knowledge.batch_finished, timeout=120_000):
        drop(window.knowledge, notes)
    window.ctx.runner.wait_idle(30_000)
    question = "Which parrot lives in the mountains of New Zealand?"

    def retrieved(answer) -> tuple[str, list[tuple[str, float]]]:
        event = next(e for e in answer.events if isinstance(e, Retrieved))
        return event.query, [(h.chunk_id, round(h.fused_score or 0.0, 6)) for h in event.hits]

    _, before = retrieved(_ask(window, qtbot, question))

    dialog = window.open_settings()
    dialog.dense_weight.setValue(1.0)
    dialog.keyword_weight.setValue(0.0)
    with qtbot.waitSignal(window.ctx.kb_ready, timeout=60_000):  # the Desk rebuilt what changed
        dialog.accept()
    window.ctx.runner.wait_idle(30_000)
    query, after = retrieved(_ask(window, qtbot, question))
    saved = load_config(window.ctx.data_dir / "config.toml")
    assert (saved.retrieval.dense_weight, saved.retrieval.keyword_weight) == (1.0, 0.0)
    with KnowledgeBase(window.ctx.data_dir, saved, embedder=minilm) as restarted:
        expected = [(h.chunk_id, round(h.fused_score or 0.0, 6)) for h in restarted.search(query)]
    assert after == expected  # what a restart would give...
    assert after != before  # ...and not what the old weights gave

    dialog = window.open_settings()
    dialog.router_mode.setCurrentIndex(dialog.router_mode.findData("never"))
    with qtbot.waitSignal(window.ctx.kb_ready, timeout=60_000):
        dialog.accept()
    window.ctx.runner.wait_idle(30_000)
    route = _ask(window, qtbot, question).route
    assert (route.use_rag, route.by) == (False, "mode")
