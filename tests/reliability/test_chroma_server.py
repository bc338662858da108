"""`index.chroma_url`: the index on a real Chroma server (`chroma run`, started here on 127.0.0.1).

Indexes and searches through `chromadb.HttpClient` via the real CLI, checks the vectors live on the
server (not in a local folder), then restarts the server under a long-lived KnowledgeBase (the GUI's
case): while it is down a search fails fast with a clear message, and once it is back the same
object searches again without being rebuilt.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from desktop_app.core.config import load_config
from desktop_app.core.library.chroma_client import StoreError
from desktop_app.core.library.knowledge import KnowledgeBase

pytestmark = [pytest.mark.integration, pytest.mark.slow]

DOCS = {
    "grey.md": "# African grey\nAfrican grey parrots eat palm nuts, seeds, fruit and snails.\n",
    "kea.md": "# Kea\nThe kea is an alpine parrot of New Zealand, curious and playful.\n",
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ChromaServer:
    def __init__(self, path: Path, port: int) -> None:
        self.path, self.port = path, port
        self.url = f"http://127.0.0.1:{port}"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        # chromadb is a dependency: its CLI sits beside this Python even when the venv is not activated.
        beside = Path(sys.executable).with_name("chroma")
        exe = str(beside) if beside.is_file() else shutil.which("chroma")
        assert exe, "the chroma CLI (from the chromadb dependency) is not installed"
        self.proc = subprocess.Popen(
            [exe, "run", "--path", str(self.path), "--host", "127.0.0.1", "--port", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/api/v2/heartbeat", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            assert self.proc.poll() is None, "chroma run exited at start-up"
            time.sleep(0.2)
        raise AssertionError("chroma server did not come up in 60 s")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def chroma_server(tmp_path):
    server = ChromaServer(tmp_path / "chroma-server", _free_port())
    server.start()
    yield server
    server.stop()


def test_index_and_search_through_a_chroma_server_survive_a_restart(
    chroma_server, tmp_path, kdesk_cls, shared_embeddings_server
):
    import chromadb

    kd = kdesk_cls(tmp_path / "data", shared_embeddings_server.url, index={"chroma_url": chroma_server.url})
    src = tmp_path / "src"
    src.mkdir()
    for name, text in DOCS.items():
        (src / name).write_text(text, encoding="utf-8")
    res = kd.run("add", str(src), "--json", timeout=300)
    assert res.rc == 0, res.stderr[-2000:]
    assert sorted(res.json()["added"]) == ["src/grey.md", "src/kea.md"]
    assert not (kd.data_dir / "index" / "chroma").exists()  # the vectors went to the server

    client = chromadb.HttpClient(host="127.0.0.1", port=chroma_server.port)
    counts = {c.name: c.count() for c in client.list_collections()}
    prefix = "lib-" + (kd.data_dir / "library-id").read_text().strip()  # the library's namespace
    assert sum(counts.values()) == 2 and all(n.startswith(prefix + "__chunks__openai-hash") for n in counts)

    hits = kd.run("search", "alpine parrot New Zealand", "--json", timeout=120).json()["hits"]
    assert hits and hits[0]["source"] == "src/kea.md"

    cfg = load_config(kd.data_dir / "config.toml")
    with KnowledgeBase(kd.data_dir, config=cfg) as kb:  # long-lived, like the desktop app
        assert kb.search("palm nuts")[0].source == "src/grey.md"

        chroma_server.stop()
        t0 = time.monotonic()
        with pytest.raises(StoreError) as info:  # names the server, not a bare socket error
            kb.search("palm nuts")
        down_for = time.monotonic() - t0
        message = str(info.value).lower()
        print(f"\nserver down: search failed in {down_for:.1f} s: {type(info.value).__name__}: {info.value}")
        assert down_for < 30
        assert any(w in message for w in ("connect", "chroma", "refused", "unreachable")), message

        chroma_server.start()  # same port, same data
        hits = kb.search("palm nuts")
        assert hits and hits[0].source == "src/grey.md"  # reconnected without rebuilding the KB

    # The restarted server still has everything: a sync finds nothing to do.
    res = kd.run("sync", "--json", timeout=300)
    assert res.rc == 0, res.stderr[-2000:]
    r = res.json()
    assert (r["added"], r["updated"], r["removed"]) == ([], [], [])


def test_unreachable_chroma_server_is_a_clear_cli_error(tmp_path, kdesk_cls, shared_embeddings_server):
    url = f"http://127.0.0.1:{_free_port()}"
    kd = kdesk_cls(tmp_path / "data", shared_embeddings_server.url, index={"chroma_url": url})
    # A library with a file (an empty one answers without opening the store at all).
    note = tmp_path / "data" / "knowledge" / "note.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text("Kea eat roots, leaves and insects.", encoding="utf-8")
    res = kd.run("search", "anything", "--json", timeout=120)
    assert res.rc == 1
    assert "Traceback" not in res.stderr
    assert "chroma" in res.stderr.lower() and url.split("//")[1] in res.stderr, res.stderr
    print(f"\nunreachable server: {res.stderr.strip()[-300:]}")
