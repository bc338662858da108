"""Settings > Models: every role as `kdesk models` reports it, the offline line, a real fetch (the
same code as `kdesk models fetch`) with progress and Cancel against a hub served on 127.0.0.1, and
Open folder."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QDesktopServices

from desktop_app.core.models.registry import FETCH_RECORD, ROLES
from desktop_app.core.packages import pip_command
from desktop_app.gui.settings.models_page import human_size, model_state

REPO = "kdesk-test/tiny-chat"
WEIGHTS = os.urandom(3 * 1024 * 1024 + 123)  # several of the fetcher's 1 MiB chunks
CONFIG = b'{"architectures": ["Tiny"]}\n'
PIECE = 256 * 1024  # the hub sends this much at a time, so progress arrives in steps


def write_manifest(path: Path) -> Path:
    sha = lambda b: hashlib.sha256(b).hexdigest()  # noqa: E731
    path.write_text(
        f"""
schema = 1
[[model]]
id = "tiny-chat"
role = "chat"
source = "huggingface"
repo_id = "{REPO}"
revision = "main"
folder = "Tiny-Chat"
license = "Apache-2.0"
[[model.files]]
path = "tiny.gguf"
size = {len(WEIGHTS)}
sha256 = "{sha(WEIGHTS)}"
[[model.files]]
path = "config.json"
size = {len(CONFIG)}
sha256 = "{sha(CONFIG)}"
[[model]]
id = "tiny-packaged"
role = "classifier"
source = "pypi"
package = "kdesk-test-absent-package"
module = "kdesk_test_absent_package"
folder = "weights"
license = "MIT"
[[model.files]]
path = "weights/tiny.pth"
size = 1000
""",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def hub(fake_hub):
    return fake_hub(REPO, {"tiny.gguf": WEIGHTS, "config.json": CONFIG}, piece=PIECE)


def _ready(qtbot, page) -> None:
    qtbot.waitUntil(lambda: bool(page.statuses) and page.online is not None, timeout=20_000)


def test_models_tab_lists_every_role_as_kdesk_models_does(make_window, qtbot, monkeypatch, screenshot):
    window = make_window()
    dialog = window.open_settings()
    page = dialog.show_models()
    assert dialog.tabs.currentWidget() is page
    _ready(qtbot, page)

    expected = window.ctx.desk.model_status()  # what `kdesk models` prints
    assert [s.role for s in page.statuses] == [s.role for s in expected] == list(ROLES)
    for status in expected:
        assert page.role_boxes[status.role].isVisible()
        active = page.active_labels[status.role].text()
        assert active.startswith("In use:") if status.active else active == "Nothing in use"
        for a in status.models:
            row = page.rows[a.id]
            state = model_state(status, a)
            assert row.state == state, a.id
            assert row.state_label.text() == {"active": "Active", "installed": "Installed"}.get(
                state, "Missing"
            )
            assert human_size(a.size) in row.size_label.text()
            assert (row.fetch is not None) == (not a.installed and a.source == "huggingface")
            if a.installed:
                assert row.path_label.toolTip() == a.path
    # This environment: the bundled MiniLM and classifier serve, the downloadable ones are missing.
    assert page.rows["all-minilm-l6-v2"].state == "active"
    assert page.rows["efficientnet-lite0"].state == "active"
    assert page.rows["qwen2.5-1.5b-instruct-q4_k_m"].state == "missing"
    assert "1.12 GB to download" in page.rows["qwen2.5-1.5b-instruct-q4_k_m"].size_label.text()
    qwen_home = page.dest / "Qwen2.5-1.5B-Instruct-GGUF"
    assert page.rows["qwen2.5-1.5b-instruct-q4_k_m"].path_label.toolTip() == str(qwen_home)

    # This machine reaches only PyPI: the page says so, and no Fetch can start.
    if page.online:
        pytest.skip("huggingface.co is reachable from this machine")
    assert page.network.isVisible()
    assert "cannot reach huggingface.co" in page.network.text()
    assert str(page.dest) in page.network.text()
    fetches = [row.fetch for row in page.rows.values() if row.fetch is not None]
    assert fetches and all(not b.isEnabled() and b.toolTip() == page.offline_text() for b in fetches)
    screenshot(dialog, "10-settings-models")

    # Open folder shows the models folder (created if a fresh data folder has none).
    opened = []
    monkeypatch.setattr(QDesktopServices, "openUrl", staticmethod(lambda url: opened.append(url) or True))
    qtbot.mouseClick(page.open_folder, Qt.LeftButton)
    assert [u.toLocalFile() for u in opened] == [str(window.ctx.data_dir / "models")]
    assert (window.ctx.data_dir / "models").is_dir()

    # The Assistant tab suggests the manifest's local chat model and leads here.
    dialog.tabs.setCurrentIndex(1)
    assert dialog.backend.currentData() == "none"
    assert dialog.suggestion.isVisible()
    assert "Qwen2.5-1.5B-Instruct Q4_K_M (1.12 GB), not installed" in dialog.suggestion.text()
    assert not dialog.use_suggested.isVisible()
    qtbot.mouseClick(dialog.to_models, Qt.LeftButton)
    assert dialog.tabs.currentWidget() is page


def test_fetch_shows_progress_installs_and_offers_the_model(make_window, qtbot, hub, tmp_path):
    window = make_window()
    dialog = window.open_settings()
    page = dialog.show_models()
    page.manifest, page.endpoint = write_manifest(tmp_path / "manifest.toml"), hub.url
    page.refresh()
    page.check_network()
    qtbot.waitUntil(lambda: "tiny-chat" in page.rows and page.online is True, timeout=20_000)
    assert not page.network.isVisible()
    fetch = page.rows["tiny-chat"].fetch
    assert fetch is not None and fetch.isEnabled()
    packaged = page.rows["tiny-packaged"]  # shipped in a PyPI package: its pip command, no Fetch
    assert packaged.fetch is None and packaged.state == "missing"
    assert pip_command("kdesk-test-absent-package") in packaged.command.text()

    values: list[int] = []
    page.progress.valueChanged.connect(values.append)
    with qtbot.waitSignal(page.fetch_finished, timeout=60_000) as outcome:
        qtbot.mouseClick(fetch, Qt.LeftButton)
        assert page.progress.isVisible() and page.cancel_button.isVisible()
    assert outcome.args == ["installed"]
    assert any(0 < v < 1000 for v in values), values  # it moved while downloading
    assert values == sorted(values) and values[-1] == 1000
    folder = page.dest / "Tiny-Chat"
    assert (folder / "tiny.gguf").read_bytes() == WEIGHTS
    assert (folder / "config.json").read_bytes() == CONFIG
    assert (folder / FETCH_RECORD).is_file()
    assert "tiny-chat is installed: choose it on the Assistant tab." in page.progress_label.text()
    assert not page.progress.isVisible()

    qtbot.waitUntil(lambda: page.rows["tiny-chat"].state == "installed", timeout=20_000)
    assert page.rows["tiny-chat"].fetch is None
    # Installed now: the Assistant tab offers it in one click.
    dialog.tabs.setCurrentIndex(1)
    assert "tiny-chat" in dialog.suggestion.text() and "installed." in dialog.suggestion.text()
    assert dialog.use_suggested.isVisible()
    qtbot.mouseClick(dialog.use_suggested, Qt.LeftButton)
    assert dialog.backend.currentData() == "gguf"
    assert dialog.gguf.text() == str(folder)
    assert not dialog.suggestion.isVisible()
    cfg = dialog.collect()
    assert (cfg.llm.backend, cfg.llm.gguf) == ("gguf", str(folder))


def test_cancel_stops_a_fetch_and_installs_nothing(make_window, qtbot, hub, tmp_path):
    window = make_window()
    dialog = window.open_settings()
    page = dialog.show_models()
    page.manifest, page.endpoint = write_manifest(tmp_path / "manifest.toml"), hub.url
    page.refresh()
    page.check_network()
    qtbot.waitUntil(lambda: "tiny-chat" in page.rows and page.online is True, timeout=20_000)

    hub.gate, hub.pause_at = threading.Event(), 2 * 1024 * 1024 + PIECE  # hold the weights mid-way
    with qtbot.waitSignal(page.fetch_finished, timeout=60_000) as outcome:
        qtbot.mouseClick(page.rows["tiny-chat"].fetch, Qt.LeftButton)
        qtbot.waitUntil(lambda: page.progress.value() > 0, timeout=20_000)
        assert "Downloading tiny-chat" in page.progress_label.text()
        qtbot.mouseClick(page.cancel_button, Qt.LeftButton)
        hub.gate.set()
    assert outcome.args == ["cancelled"]
    assert "was stopped" in page.progress_label.text()
    assert not (page.dest / "Tiny-Chat").exists()  # the half-done work stays in the hidden .partial
    qtbot.waitUntil(lambda: page.rows["tiny-chat"].fetch is not None, timeout=20_000)
    assert page.rows["tiny-chat"].state == "missing" and page.rows["tiny-chat"].fetch.isEnabled()


def test_a_fetched_reranker_is_used_from_the_next_question(
    make_window, qtbot, tmp_path, fake_hub, tiny_cross_encoder
):
    # Served by the hub as its files; the test builds it (random weights), never a hub id.
    files = {p.name: p.read_bytes() for p in sorted(tiny_cross_encoder.iterdir()) if p.is_file()}
    entries = "".join(
        f'[[model.files]]\npath = "{name}"\nsize = {len(data)}\nsha256 = "{hashlib.sha256(data).hexdigest()}"\n'
        for name, data in files.items()
    )
    manifest = tmp_path / "manifest.toml"
    manifest.write_text(
        f'schema = 1\n[[model]]\nid = "tiny-reranker"\nrole = "reranker"\nsource = "huggingface"\n'
        f'repo_id = "{REPO}"\nrevision = "main"\nfolder = "tiny-reranker"\nlicense = "MIT"\n{entries}',
        encoding="utf-8",
    )
    hub = fake_hub(REPO, files)
    window = make_window()
    assert window.ctx.kb.retriever.reranker is None  # none installed at start
    assert window.status_labels["reranker"].text().endswith("none")
    page = window.open_settings().show_models()
    page.manifest, page.endpoint = manifest, hub.url
    page.refresh()
    page.check_network()
    qtbot.waitUntil(lambda: "tiny-reranker" in page.rows and page.online is True, timeout=20_000)
    with qtbot.waitSignal(window.ctx.status_changed, timeout=60_000):
        qtbot.mouseClick(page.rows["tiny-reranker"].fetch, Qt.LeftButton)
    # Loaded off the UI thread after the download: the running app reranks with it now.
    assert window.ctx.kb.retriever.reranker is not None
    assert "reranks the results from the next question" in page.progress_label.text()
    # and with its ONNX export, made by the same fetch and chosen on this CPU
    assert (Path(page.dest) / "tiny-reranker" / "onnx" / "model.onnx").is_file()
    assert window.ctx.kb.retriever.reranker.runtime.engine == "onnxruntime"
    assert "Reranker: tiny-reranker" in window.status_labels["reranker"].text()
    # What retrieval.rerank_budget_ms allows on this machine, as `kdesk models` says it.
    page.refresh()
    qtbot.waitUntil(lambda: page.budget_label is not None, timeout=20_000)
    assert "measured at the first search" in page.budget_label.text()
