"""The window opens at once; models load in the background; the status bar says what is active."""

from __future__ import annotations

import time

from desktop_app.core.config import Config
from desktop_app.gui import app as gui_app


def test_run_is_the_cli_entry_point():
    assert callable(gui_app.run)
    assert list(gui_app.run.__code__.co_varnames[:2]) == ["data_dir", "config"]


def test_window_shows_within_two_seconds_and_loads_models_in_background(make_window, qtbot, screenshot):
    started = time.monotonic()
    window = make_window(Config(), wait=False, embedder=None)  # the real lazy model load
    qtbot.waitExposed(window)
    shown_after = time.monotonic() - started
    assert window.isVisible()
    assert shown_after < 2.0
    screenshot(window, "01-empty")
    with qtbot.waitSignal(window.ctx.kb_ready, timeout=60_000):
        pass
    status = window.status_text()
    assert "MiniLM" in status["embedder"] or "minilm" in status["embedder"].lower()
    # No LLM configured: the status bar says none, and why (tooltip).
    assert "none" in status["llm"].lower()
    assert "extractive" in status["llm"].lower()
    # The reranker is missing here and the tooltip says why.
    assert status["reranker"].startswith("○")
    assert "(" in status["reranker"] and len(status["reranker"]) > 30


def test_status_bar_names_a_removed_model_package_and_its_install_command(make_window, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "efficientnet_lite_pytorch", None)  # as if uninstalled
    window = make_window(Config())
    classifier = window.status_text()["classifier"]
    assert classifier.startswith("○")
    assert "efficientnet-lite-pytorch" in classifier
    assert f"{sys.executable} -m pip install efficientnet-lite-pytorch" in classifier
    assert "photo identification is unavailable" in classifier


def test_the_bundled_chinese_font_registers_when_asked(qapp):
    """A machine with no Chinese font gets Noto Sans CJK from the wheel (forced here: this one may
    have a system font); Chinese text then has a family to draw with, not boxes."""
    from PySide6.QtGui import QFontDatabase

    from desktop_app.gui.app import ensure_chinese_font

    families = ensure_chinese_font(force=True)
    assert "Noto Sans CJK SC" in families
    assert "Noto Sans CJK SC" in QFontDatabase.families(QFontDatabase.WritingSystem.SimplifiedChinese)
