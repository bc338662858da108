"""The model fetcher against a fake Hugging Face hub served on 127.0.0.1 (no real hub is reachable).

The fake implements what huggingface_hub's ``hf_hub_download`` needs: HEAD and GET on
``/{repo}/resolve/{revision}/{path}`` with ``X-Repo-Commit``, ``ETag`` and ``Content-Length``, and
HTTP Range requests for resuming. It can drop the connection part-way through a file once.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from desktop_app.core.models.fetch import FetchError, fetch, partial_dir
from desktop_app.core.models.registry import FETCH_RECORD, load_manifest
from desktop_app.core.tasks import Cancelled

REPO = "kdesk-test/tiny-chat"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


class FakeHub:
    """A minimal HF hub for one repository, recording every request."""

    def __init__(self, repo_id: str, files: dict[str, bytes]) -> None:
        self.repo_id = repo_id
        self.files = files
        self.requests: list[tuple[str, str, str | None]] = []
        self.drop_after: dict[str, int] = {}  # path -> bytes sent before the connection drops (once)
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_HEAD(self) -> None:
                hub._serve(self, head=True)

            def do_GET(self) -> None:
                hub._serve(self, head=False)

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address) -> None:
                pass  # clients hanging up mid-body are part of the tests

        self._server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def ranges(self, path: str) -> list[int]:
        """Start offsets of the Range GETs received for `path`."""
        out = []
        for method, url, rng in self.requests:
            if method == "GET" and url.endswith("/" + path) and rng:
                out.append(int(rng.split("=")[1].split("-")[0]))
        return out

    def _not_found(self, h: BaseHTTPRequestHandler, code: str) -> None:
        h.send_response(404)
        h.send_header("X-Error-Code", code)
        h.send_header("Content-Length", "0")
        h.end_headers()

    def _serve(self, h: BaseHTTPRequestHandler, head: bool) -> None:
        self.requests.append((h.command, h.path, h.headers.get("Range")))
        prefix = f"/{self.repo_id}/resolve/"
        if not h.path.startswith(prefix):
            return self._not_found(h, "RepoNotFound")
        _rev, _, path = h.path[len(prefix) :].partition("/")
        data = self.files.get(path)
        if data is None:
            return self._not_found(h, "EntryNotFound")
        start = 0
        if not head and h.headers.get("Range"):
            start = int(h.headers["Range"].split("=")[1].split("-")[0])
        body = data[start:]
        h.send_response(206 if start else 200)
        h.send_header("X-Repo-Commit", COMMIT)
        h.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
        h.send_header("Accept-Ranges", "bytes")
        h.send_header("Content-Length", str(len(data) if head else len(body)))
        if start:
            h.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        h.end_headers()
        if head:
            return
        cut = self.drop_after.pop(path, None)
        if cut is not None:
            h.wfile.write(body[:cut])
            h.wfile.flush()
            h.close_connection = True
            try:
                h.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        h.wfile.write(body)


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
def hub():
    h = FakeHub(REPO, {"tiny.gguf": WEIGHTS, "sub/config.json": CONFIG})
    yield h
    h.close()


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
