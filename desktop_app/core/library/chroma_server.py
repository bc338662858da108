"""A private Chroma server in a child process, for the desktop app.

Why: Chroma's embedded Rust core holds the GIL for a whole call (a 32-chunk upsert into a 10k-chunk
collection takes 50-180 ms), so a background indexing thread froze the window's event loop for that
long, again and again (``kdesk bench ui``: worst heartbeat gap 241-537 ms). A child process has its
own GIL: the app talks to it over HTTP on 127.0.0.1 (``chromadb.HttpClient``), where waiting for a
reply releases the GIL. The on-disk format is the same as the embedded ``PersistentClient`` (the CLI
keeps using that), so both open the same index.

The child watches its stdin and exits when our end closes: it never outlives the app, even after a
crash or a kill. ``python -m desktop_app.core.library.chroma_server PATH PORT`` (or ``kdesk
--chroma-server PATH PORT`` in the frozen build) is the child's entry point.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
FROZEN_FLAG = "--chroma-server"


class ChromaServerError(Exception):
    """The private Chroma server could not be started; the message says why."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def child_command(path: Path, port: int) -> list[str]:
    if getattr(sys, "frozen", False):  # PyInstaller: sys.executable is kdesk itself
        return [sys.executable, FROZEN_FLAG, str(path), str(port)]
    return [sys.executable, "-m", "desktop_app.core.library.chroma_server", str(path), str(port)]


class ChromaServer:
    """``chroma run --path PATH`` on a free localhost port, owned by this process."""

    def __init__(self, path: Path, *, start_timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.start_timeout = start_timeout
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.log_path = self.path.parent / "chroma-server.log"

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self) -> str:
        """Start the child and wait until it answers; returns its URL."""
        self.path.mkdir(parents=True, exist_ok=True)
        last = ""
        for _ in range(3):  # the free port can be taken between probing and binding: retry
            self.port = _free_port()
            with open(self.log_path, "ab") as err:
                self.proc = subprocess.Popen(
                    child_command(self.path, self.port),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=err,
                    creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
                )
            try:
                self._wait_ready()
                log.info("Chroma server for %s on %s (pid %s)", self.path, self.url, self.proc.pid)
                return self.url
            except ChromaServerError as exc:
                last = str(exc)
                self.stop()
        raise ChromaServerError(last)

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            assert self.proc is not None
            code = self.proc.poll()
            if code is not None:
                raise ChromaServerError(
                    f"the Chroma server exited at start (code {code}); see {self.log_path}"
                )
            try:
                with urllib.request.urlopen(f"{self.url}/api/v2/heartbeat", timeout=1.0) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.05)
        raise ChromaServerError(f"the Chroma server did not answer within {self.start_timeout:.0f} s")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the server to shut down (SIGTERM), then make sure it is gone."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        if proc.stdin is not None:
            try:
                proc.stdin.close()
            except OSError:
                pass

    def __del__(self) -> None:  # the stdin watchdog covers crashes; this covers forgotten servers
        try:
            self.stop(timeout=2.0)
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def start_or_explain(path: Path) -> tuple[ChromaServer | None, str]:
    """A started server for the index at ``path`` and "", or None and why it did not start (the
    caller then opens the index in its own process)."""
    server = ChromaServer(path)
    try:
        server.start()
    except (ChromaServerError, OSError) as exc:
        # Still works, embedded: the window may stutter while indexing.
        note = f"Chroma child process unavailable ({exc}); using it in-process"
        log.warning("%s", note)
        return None, note
    return server, ""


def _exit_when_parent_goes() -> None:
    try:
        while sys.stdin.buffer.read(65536):
            pass
    except (OSError, ValueError):
        pass
    os._exit(0)


def main(argv: list[str] | None = None) -> int:
    """The child: serve PATH on 127.0.0.1:PORT until stdin closes or a signal arrives."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        print("usage: chroma_server PATH PORT", file=sys.stderr)
        return 2
    path, port = args
    threading.Thread(target=_exit_when_parent_goes, daemon=True, name="parent-watch").start()
    import chromadb_rust_bindings

    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    chromadb_rust_bindings.cli(["chroma", "run", "--path", path, "--host", HOST, "--port", str(port)])
    # The server stopped (SIGTERM): leave without interpreter finalisation, which would abort on
    # the watcher thread still blocked reading stdin.
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
