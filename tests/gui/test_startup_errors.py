"""A data folder the window cannot open (a bad config.toml value, a store written by a newer
Knowledge Desk) is said in a message box, in the user's language, instead of opening the window."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import pytest
from PySide6.QtWidgets import QMessageBox

from desktop_app.cli.main import main
from desktop_app.core.ask.conversation_store import FILE_NAME, SCHEMA_VERSION, ConversationStore
from desktop_app.core.config import Config
from desktop_app.gui import app as gui_app
from desktop_app.gui.i18n import set_language


@pytest.fixture
def shown(qapp, monkeypatch):
    """The texts of the message boxes the app would have shown (exec() answers at once)."""
    texts: list[str] = []

    def answer(box: QMessageBox) -> int:
        texts.append(box.text())
        return 0

    monkeypatch.setattr(QMessageBox, "exec", answer)
    monkeypatch.setattr("desktop_app.core.system_libs.xcb_problem", lambda: None)
    style = qapp.style().name()
    yield texts
    qapp.setStyle(style)  # run() sets Fusion on Linux
    set_language("en")


def test_a_bad_config_value_is_shown_in_a_window_and_kdesk_exits_1(tmp_path, shown, capsys):
    (tmp_path / "config.toml").write_text('[llm]\nagentic = "maybe"\n', encoding="utf-8")
    assert main(["--data-dir", str(tmp_path)]) == 1
    expected = f'{tmp_path / "config.toml"}: llm.agentic must be true or false, not "maybe"'
    assert shown == [expected]
    assert f"error: {expected}" in capsys.readouterr().err


def test_the_config_error_is_in_the_language_the_file_asks_for(tmp_path, shown):
    (tmp_path / "config.toml").write_text('[ui]\nlanguage = "zh_CN"\n[retrieval]\ntop_k = 2.5\n', "utf-8")
    assert main(["--data-dir", str(tmp_path)]) == 1
    assert shown == [f"{tmp_path / 'config.toml'}：retrieval.top_k 必须是整数，而不是 2.5"]


def test_a_data_folder_from_a_newer_version_is_shown_instead_of_the_window(tmp_path, shown, capsys):
    ConversationStore(tmp_path / FILE_NAME, tmp_path / "knowledge").create("a trip")
    with closing(sqlite3.connect(tmp_path / FILE_NAME)) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        db.commit()
    config = Config()
    config.ui.language = "zh_CN"
    assert gui_app.run(tmp_path, config) == 1
    assert len(shown) == 1
    assert shown[0].startswith(
        f"此数据文件夹由更新版本的知识桌面写入（对话格式 {SCHEMA_VERSION + 1}；此版本最高只能读取 {SCHEMA_VERSION}）。"
    )
    assert "This data folder was written by a newer Knowledge Desk" in capsys.readouterr().err
