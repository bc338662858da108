"""Saving Settings keeps what a newer version wrote into config.toml (core/config.py)."""

from __future__ import annotations

import tomllib

from desktop_app.core.config import load_config

NEWER = """\
[llm]
backend = "none"
profiles_default = "work"

[retrieval]
late_chunking = { enabled = true, window = 3 }

[sync_schedule]
every_minutes = 30
"""


def test_saving_settings_keeps_a_newer_versions_sections_and_keys(make_window, qtbot, tmp_path):
    path = tmp_path / "data" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(NEWER, encoding="utf-8")
    window = make_window(load_config(path))  # what `kdesk` does: the file's settings
    dialog = window.open_settings()
    dialog.top_k.setValue(7)
    with qtbot.waitSignal(window.ctx.runner.job_finished, timeout=10_000):
        dialog.accept()
    window.ctx.runner.wait_idle(30_000)

    saved = tomllib.loads(path.read_text(encoding="utf-8"))
    assert saved["retrieval"]["top_k"] == 7
    assert saved["retrieval"]["late_chunking"] == {"enabled": True, "window": 3}
    assert saved["llm"]["profiles_default"] == "work"
    assert saved["sync_schedule"] == {"every_minutes": 30}
