"""The model fetcher against a fake Hugging Face hub served on 127.0.0.1 (no real hub is reachable):
tests/conftest.py's FakeHub, which can drop the connection part-way through a file once."""

from __future__ import annotations

import hashlib
import json
import os
import socket
from pathlib import Path

import pytest

from desktop_app.core.models.fetch import FetchError, fetch, partial_dir
from desktop_app.core.models.registry import FETCH_RECORD, load_manifest
from desktop_app.core.tasks import Cancelled

REPO = "kdesk-test/tiny-chat"
WEIGHTS = os.urandom(3 * 1024 * 1024 + 123)  # > 1 MiB chunks, so a drop can resume mid-file
CONFIG = b'{"architectures": ["Tiny"]}\n'


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def write_manifest(path: Path, *, weights_sha: str | None = None, config_sha: str | None = None) -> Path:
    text = f"""
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
sha256 = "{sha(WEIGHTS) if weights_sha is None else weights_sha}"
[[model.files]]
path = "sub/config.json"
size = {len(CONFIG)}
sha256 = "{sha(CONFIG) if config_sha is None else config_sha}"
"""
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def hub(fake_hub):
    return fake_hub(REPO, {"tiny.gguf": WEIGHTS, "sub/config.json": CONFIG})


class RecordingTask:
    def __init__(self, cancel_after: int | None = None) -> None:
        self.calls: list[tuple[int, int, str]] = []
        self.cancel_after = cancel_after

    def progress(self, done: int, total: int, message: str = "") -> None:
        self.calls.append((done, total, message))

    def cancelled(self) -> bool:
        return self.cancel_after is not None and bool(self.calls) and self.calls[-1][0] >= self.cancel_after


def test_fetch_installs_verified_model_and_reports_progress(hub, tmp_path):
    manifest = write_manifest(tmp_path / "manifest.toml")
    dest = tmp_path / "models"
    task = RecordingTask()
    [result] = fetch("chat", dest, endpoint=hub.url, task=task, manifest=manifest, show_progress=False)

    target = dest / "Tiny-Chat"
    assert result.status == "installed" and Path(result.folder) == target
    assert (target / "tiny.gguf").read_bytes() == WEIGHTS
    assert (target / "sub" / "config.json").read_bytes() == CONFIG
    assert sorted(p.name for p in dest.iterdir()) == ["Tiny-Chat"]  # no work folder left behind
    assert not (target / ".cache").exists()
    record = json.loads((target / FETCH_RECORD).read_text())
    assert record["verified"] is True and record["revision"] == "main"
    assert {f["path"]: f["sha256"] for f in record["files"]} == {
        "tiny.gguf": sha(WEIGHTS),
        "sub/config.json": sha(CONFIG),
    }

    total = len(WEIGHTS) + len(CONFIG)
    dones = [d for d, t, _ in task.calls]
    assert all(t == total for _, t, _ in task.calls)
    assert dones == sorted(dones) and len(dones) > 3  # several increments, never backwards
    assert task.calls[-1] == (total, total, "tiny-chat: installed")


def test_checksum_mismatch_is_rejected_and_leaves_models_folder_empty(hub, tmp_path):
    manifest = write_manifest(tmp_path / "manifest.toml", weights_sha="0" * 64)
    dest = tmp_path / "models"
    with pytest.raises(FetchError, match="checksum mismatch") as info:
        fetch("chat", dest, endpoint=hub.url, manifest=manifest, show_progress=False)
    assert "0" * 64 in str(info.value) and sha(WEIGHTS) in str(info.value)
    assert list(dest.iterdir()) == []  # neither the model folder nor the work folder


def test_dropped_connection_resumes_with_a_range_request(hub, tmp_path):
    manifest = write_manifest(tmp_path / "manifest.toml")
    hub.drop_after["tiny.gguf"] = 1_500_000
    [result] = fetch("chat", tmp_path / "models", endpoint=hub.url, manifest=manifest, show_progress=False)
    assert result.status == "installed"
    assert (Path(result.folder) / "tiny.gguf").read_bytes() == WEIGHTS
    assert hub.ranges("tiny.gguf") == [1024 * 1024]  # the first full MiB chunk was kept


def test_interrupted_fetch_resumes_on_the_next_run(hub, tmp_path):
    manifest = write_manifest(tmp_path / "manifest.toml")
    dest = tmp_path / "models"
    with pytest.raises(Cancelled):
        fetch(
            "chat",
            dest,
            endpoint=hub.url,
            task=RecordingTask(cancel_after=2 * 1024 * 1024),
            manifest=manifest,
            show_progress=False,
        )
    spec = load_manifest(manifest)[0]
    assert not (dest / "Tiny-Chat").exists()  # the app never sees a half-written model
    assert partial_dir(dest, spec).is_dir()

    [result] = fetch("chat", dest, endpoint=hub.url, manifest=manifest, show_progress=False)
    assert result.status == "installed"
    assert (dest / "Tiny-Chat" / "tiny.gguf").read_bytes() == WEIGHTS
    assert hub.ranges("tiny.gguf") and hub.ranges("tiny.gguf")[0] >= 2 * 1024 * 1024
    assert not partial_dir(dest, spec).exists()


def test_second_fetch_of_an_installed_model_downloads_nothing(hub, tmp_path):
    manifest = write_manifest(tmp_path / "manifest.toml")
    fetch("all", tmp_path / "models", endpoint=hub.url, manifest=manifest, show_progress=False)
    before = len(hub.requests)
    [again] = fetch("all", tmp_path / "models", endpoint=hub.url, manifest=manifest, show_progress=False)
    assert again.status == "already installed"
    assert len(hub.requests) == before


def test_unknown_checksum_is_recorded_as_observed_not_verified(hub, tmp_path):
    manifest = write_manifest(tmp_path / "manifest.toml", weights_sha="")
    [result] = fetch("chat", tmp_path / "models", endpoint=hub.url, manifest=manifest, show_progress=False)
    files = {f.path: f for f in result.files}
    assert files["tiny.gguf"].sha256 == sha(WEIGHTS) and files["tiny.gguf"].verified is False
    assert files["sub/config.json"].verified is True
    record = json.loads((Path(result.folder) / FETCH_RECORD).read_text())
    assert record["verified"] is False


def test_hf_endpoint_environment_variable_selects_the_mirror(hub, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    manifest = write_manifest(tmp_path / "manifest.toml")
    [result] = fetch("chat", tmp_path / "models", manifest=manifest, show_progress=False)
    assert result.status == "installed"
    assert any(m == "GET" for m, _, _ in hub.requests)


def test_unreachable_endpoint_says_cannot_reach(tmp_path):
    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    endpoint = f"http://127.0.0.1:{port}"
    manifest = write_manifest(tmp_path / "manifest.toml")
    with pytest.raises(FetchError) as info:
        fetch("chat", tmp_path / "models", endpoint=endpoint, manifest=manifest, show_progress=False)
    assert str(info.value).startswith(f"cannot reach {endpoint}:")
    assert not (tmp_path / "models" / "Tiny-Chat").exists()


def test_missing_file_on_the_hub_is_a_readable_error(hub, tmp_path):
    del hub.files["sub/config.json"]
    manifest = write_manifest(tmp_path / "manifest.toml")
    with pytest.raises(FetchError, match=r"has no kdesk-test/tiny-chat@main/sub/config.json"):
        fetch("chat", tmp_path / "models", endpoint=hub.url, manifest=manifest, show_progress=False)
    assert not (tmp_path / "models" / "Tiny-Chat").exists()


def test_bundled_and_unknown_roles_are_refused(tmp_path):
    manifest = write_manifest(tmp_path / "manifest.toml")
    with pytest.raises(FetchError, match="bundled"):
        fetch("classifier", tmp_path / "models", manifest=manifest)
    with pytest.raises(FetchError, match="unknown model or role 'nope'"):
        fetch("nope", tmp_path / "models", manifest=manifest)
