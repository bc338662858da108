"""Chroma in a child process (what the desktop app uses): a real `chroma run` server, real HTTP."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from desktop_app.core.config import Config
from desktop_app.core.library import chroma_server
from desktop_app.core.library.chroma_server import ChromaServer, ChromaServerError
from desktop_app.core.library.knowledge import KnowledgeBase

NOTES = {
    "macaw.md": "# Scarlet macaw\n\nThe scarlet macaw has red, yellow and blue plumage and a pale face.\n",
    "grey.md": "# African grey\n\nThe African grey parrot is grey with a red tail and mimics speech.\n",
}


def _write(folder, files):
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_knowledge_base_indexes_and_searches_through_its_own_chroma_process(tmp_path, counting_embedder):
    src = _write(tmp_path / "src", NOTES)
    kb = KnowledgeBase(tmp_path / "data", config=Config(), embedder=counting_embedder, own_process=True)
    report = kb.add([src])
    assert sorted(report.added) == [f"src/{n}" for n in sorted(NOTES)]
    server = kb.chroma_process
    assert server is not None and server.alive(), kb.store_note
    assert kb.store_note == ""
    hits = kb.search("which parrot has a red tail?", top_k=2)
    assert hits and hits[0].source == "src/grey.md"
    pid = server.proc.pid
    kb.close()
    assert not server.alive()
    with pytest.raises(ProcessLookupError):  # the child is gone, not orphaned
        _wait_gone(pid)

    # The embedded client (the CLI) opens what the server wrote: same format, nothing lost.
    again = KnowledgeBase(tmp_path / "data", config=Config(), embedder=counting_embedder)
    assert again.store.count() == sum(d.chunks for d in again.list_documents()) > 0
    assert again.search("scarlet macaw plumage", top_k=1)[0].source == "src/macaw.md"
    again.close()


def _wait_gone(pid: int, timeout: float = 5.0) -> None:
    import os

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        os.kill(pid, 0)  # raises ProcessLookupError once the process has been reaped
        time.sleep(0.05)


@pytest.mark.skipif(sys.platform == "win32", reason="uses os.kill(pid, 0)")
def test_server_exits_when_its_parent_closes_the_pipe(tmp_path):
    """A crashed app closes the child's stdin (the OS does): the child must exit by itself."""
    server = ChromaServer(tmp_path / "chroma")
    server.start()
    proc = server.proc
    assert proc is not None
    proc.stdin.close()  # what the kernel does when the parent dies
    assert proc.wait(timeout=10) == 0
    server.proc = None


def test_a_server_that_cannot_start_falls_back_to_the_embedded_store(
    tmp_path, counting_embedder, monkeypatch
):
    calls = []

    def broken(path, port):
        calls.append(port)
        return [sys.executable, "-c", "import sys; sys.exit(3)"]

    monkeypatch.setattr(chroma_server, "child_command", broken)
    with pytest.raises(ChromaServerError, match="exited at start"):
        ChromaServer(tmp_path / "direct").start()
    assert len(calls) == 3  # a port taken in between gets retried

    kb = KnowledgeBase(tmp_path / "data", config=Config(), embedder=counting_embedder, own_process=True)
    kb.add([_write(tmp_path / "src", NOTES)])
    assert kb.chroma_process is None
    assert "in-process" in kb.store_note
    assert kb.store.upsert_slice == 32  # embedded beside a window: short GIL holds
    assert kb.search("red tail", top_k=1)[0].source == "src/grey.md"
    kb.close()


def test_the_child_entry_point_refuses_bad_arguments():
    out = subprocess.run(
        [sys.executable, "-m", "desktop_app.core.library.chroma_server", "only-one-arg"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "usage" in out.stderr
