"""Files read in a child process the sync can stop: a deadline per unit of progress, a memory cap,
and a cancel that does not wait for the parser.

Why a process: a parser stuck inside one huge XML part, or an OCR page that never ends, cannot be
interrupted in a thread; a process can be killed. One long-lived worker reads a sync's files one
at a time (and later syncs' too: the KnowledgeBase keeps it, so the OCR model stays loaded). It is
a fresh interpreter (``python -m desktop_app.core.library.parse_worker``, or ``kdesk
--parse-worker`` in the frozen build), started as chroma_server.py starts Chroma's: the app is
multi-threaded with Qt, so it is never forked, and not through multiprocessing's ``spawn`` either,
which runs the parent's main script again in the child (a script without a ``__main__`` guard
indexed its folder a second time there). It is started again after a kill, and exits by itself
after ``IDLE_SECONDS`` without a file or when the app's end of its pipe closes (a crash, a kill).

Heartbeat: the parsers call ``parsers.progress.unit(kind, number, count)`` before each page,
slide, chapter, sheet block or XML part, and the worker before each OCR page; each unit is written
into a small file both processes map (no message per unit: a book of 100k chapters sends none).
The parent looks at it every ``POLL`` seconds: a new unit restarts the deadline and gives a
progress line; when none comes within ``index.max_seconds_per_unit`` the worker is killed and the
file fails with "took longer than N s at slide 3".

Memory: on the same poll the parent reads the worker's resident size (Linux: /proc/PID/statm) and
kills it above ``index.max_parse_memory_mb``: "too large: it needed more than N MB to read". Not
RLIMIT_AS or RLIMIT_DATA set in the worker: onnxruntime and OpenBLAS reserve address space they do
not use (after one OCR page: VmData 655 MB for 452 MB resident), and the MemoryError a limit raises
inside a parser's own ``except Exception`` would be reported as a corrupt file. The parsers' own
limits (parsers/*.py) come first; this is the backstop. Other systems have no /proc: there only
the parsers' limits and the deadline hold.
"""

from __future__ import annotations

import logging
import mmap
import os
import pickle
import queue
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from desktop_app.core.config import IndexConfig
from desktop_app.core.library import reasons
from desktop_app.core.library.documents import Chunk, ParseError
from desktop_app.core.library.ocr import OcrJob
from desktop_app.core.library.reading import chunk_file
from desktop_app.core.messages import Message, message
from desktop_app.core.tasks import Cancelled

log = logging.getLogger(__name__)

POLL = 0.05  # seconds between the parent's looks at the heartbeat, the memory and a cancel
IDLE_SECONDS = 300.0  # a worker without a file this long exits (the OCR model's memory comes back)
START_SECONDS = 120.0  # a new worker that has not taken its file by then did not start
FROZEN_FLAG = "--parse-worker"
# Unit kinds by their index in the heartbeat (0: no unit yet); any other kind is a "part".
KINDS = ("", "page", "slide", "chapter", "sheet", "part", "OCR page", "paragraph", "row")
_KIND_INDEX = {kind: i for i, kind in enumerate(KINDS) if kind}
# Modules every file needs, imported once at start so the first file's deadline does not pay them.
_PRELOAD = ("desktop_app.core.library.sync", "desktop_app.core.library.chunking")
# The heartbeat: units so far, kind, number, count (0: unknown), as four int64 in a mapped file.
_BEAT = struct.Struct("<4q")

Unit = tuple[str, int, "int | None"]  # (kind, number, count)


@dataclass
class ParseRequest:
    """One file to read: ``reading.chunk_file``'s arguments."""

    cfg: IndexConfig
    size: int
    path: Path
    rel: str
    doc_id: str
    nbytes: int


class ReaderStopped(ParseError):
    """The worker was stopped for the file (deadline, memory) or died: the file fails, even an
    image (which a parser's refusal would make a reference photo)."""


class ParserBug(Exception):
    """An exception other than ParseError in the worker: a bug, reported with its type and text."""

    def __init__(self, error_type: str, error: str, trace: str) -> None:
        super().__init__(error)
        self.error_type = error_type
        self.trace = trace


def child_command(beat: str) -> list[str]:
    if getattr(sys, "frozen", False):  # PyInstaller: sys.executable is kdesk itself
        return [sys.executable, FROZEN_FLAG, beat]
    return [sys.executable, "-m", "desktop_app.core.library.parse_worker", beat]


class ParseWorker:
    """The parent's handle on the worker process: ``chunk_file`` reads one file in it."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None
        self._replies: queue.Queue = queue.Queue()
        self._beat: mmap.mmap | None = None
        self._beat_path = ""
        self._jobs = 0
        self.starts = 0  # workers started so far (tests, the benchmark)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def chunk_file(
        self,
        request: ParseRequest,
        *,
        max_seconds: float,
        max_mb: float,
        on_unit: Callable[[str, int, int | None], None],
        stopped: Callable[[], bool],
    ) -> list[Chunk]:
        """The file's chunks, read in the worker. Raises ParseError (the parser's own, or the
        deadline, the memory cap, a dead worker), MissingPackage, ParserBug, or Cancelled as
        soon as ``stopped()`` (the worker is killed, not waited for). A worker killed by signal 9
        from outside (the kernel's OOM killer) is replaced and the file read once more."""
        idle = killed = False
        while True:
            self._start()
            try:
                return self._run(request, max_seconds, max_mb, on_unit, stopped)
            except _IdleExit:
                if idle:
                    raise ReaderStopped(reasons.READER_NO_START, reason="it exited at once") from None
                idle = True
            except _Killed:
                # SIGKILL from outside (the kernel's OOM killer, mostly): the memory was maybe the
                # whole system's, not the file's, so a new worker reads it once more.
                if killed:
                    raise ReaderStopped(reasons.READER_KILLED_TWICE) from None
                killed = True
                log.info("%s: the file reader was killed (signal 9): reading it again", request.rel)

    def _start(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            return
        self.kill()
        fd, self._beat_path = tempfile.mkstemp(prefix="kdesk-beat-")
        os.write(fd, bytes(_BEAT.size))
        self._beat = mmap.mmap(fd, _BEAT.size)
        os.close(fd)
        env = dict(os.environ)
        root = Path(__file__).resolve().parents[3]
        if root.name not in ("site-packages", "dist-packages"):  # a checkout: the child imports this code
            env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH", "")) if p)
        self._proc = subprocess.Popen(
            child_command(self._beat_path),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
        )
        self._replies = queue.Queue()
        threading.Thread(
            target=_receive, args=(self._proc.stdout, self._replies), name="kdesk-parse-replies", daemon=True
        ).start()
        self.starts += 1

    def _run(
        self,
        request: ParseRequest,
        max_seconds: float,
        max_mb: float,
        on_unit: Callable[[str, int, int | None], None],
        stopped: Callable[[], bool],
    ) -> list[Chunk]:
        assert self._proc is not None and self._beat is not None
        self._jobs += 1
        job, beat, proc = self._jobs, self._beat, self._proc
        sent = time.monotonic()
        try:
            _send(proc.stdin, (job, request))
        except OSError:  # it exited (idle) just now
            self._died(None)
        seen = _BEAT.unpack_from(beat)[0]
        started: float | None = None
        last = sent
        where: Unit | None = None
        while True:
            try:
                reply = self._replies.get(timeout=POLL)
            except queue.Empty:
                reply = ()
            if reply is None:  # its end of the pipe closed: it is gone
                self._died(started)
            now = time.monotonic()
            if reply and reply[1] == job:
                if reply[0] == "started":
                    started = last = now
                else:
                    return _result(reply)
            units, kind, number, count = _BEAT.unpack_from(beat)
            if started is not None and units != seen:
                seen, last = units, now
                if kind:
                    where = (KINDS[kind], number, count or None)
                    on_unit(*where)
            if stopped():
                self.kill()
                raise Cancelled()
            if started is None:
                if now - sent > START_SECONDS:
                    self.kill()
                    raise ReaderStopped(reasons.READER_NO_START, reason=f"no answer in {START_SECONDS:.0f} s")
            elif max_seconds > 0 and now - last > max_seconds:
                self.kill()
                if where is None:
                    raise ReaderStopped(reasons.TOO_SLOW_OPENING, seconds=max_seconds)
                unit = message(reasons.UNIT.get(where[0], reasons.UNIT["part"]), number=where[1])
                raise ReaderStopped(reasons.TOO_SLOW_AT, seconds=max_seconds, unit=unit)
            if max_mb > 0:
                resident = resident_mb(proc.pid)
                if resident is not None and resident > max_mb:
                    log.info("%s: the reader used %.0f MB > %g MB: killed", request.rel, resident, max_mb)
                    self.kill()
                    raise ReaderStopped(reasons.TOO_MUCH_MEMORY, mb=max_mb)

    def _died(self, started: float | None) -> None:
        """The worker is gone without an answer: an idle exit racing a new file, or a crash."""
        assert self._proc is not None
        try:
            code = self._proc.wait(5)
        except subprocess.TimeoutExpired:
            code = None
        self.kill()
        if started is None and code == 0:
            raise _IdleExit()
        if code == -_SIGKILL:  # not ours: the deadline, the memory cap and a cancel raise their own
            raise _Killed()
        reason = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        raise ReaderStopped(reasons.READER_DIED, reason=reason)

    def kill(self) -> None:
        """Stop the worker now (a new one starts for the next file)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            for pipe in (proc.stdin, proc.stdout):
                try:
                    pipe.close()
                except OSError:
                    pass
        if self._beat is not None:
            self._beat.close()
            self._beat = None
        if self._beat_path:
            try:
                os.unlink(self._beat_path)
            except OSError:
                pass
            self._beat_path = ""

    def close(self) -> None:
        """Ask the worker to leave, and make sure it did."""
        if self._proc is not None and self._proc.poll() is None:
            try:
                _send(self._proc.stdin, None)
                self._proc.wait(2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()


def _send(pipe: Any, obj: Any) -> None:
    pickle.dump(obj, pipe, protocol=pickle.HIGHEST_PROTOCOL)
    pipe.flush()


def _receive(pipe: BinaryIO, replies: queue.Queue) -> None:
    """The worker's answers into ``replies`` until its end closes (then None)."""
    try:
        while True:
            replies.put(pickle.load(pipe))
    except (EOFError, OSError, pickle.UnpicklingError, ValueError):
        replies.put(None)


class _IdleExit(Exception):
    """The worker left (idle) as a file was sent: start another and send it again."""


class _Killed(Exception):
    """The worker died of SIGKILL sent by someone else: read the file again, once."""


_SIGKILL = getattr(signal, "SIGKILL", 9)  # Windows has none: no exit code there is -9


def _result(reply: tuple[Any, ...]) -> list[Chunk]:
    kind = reply[0]
    if kind == "done":
        return reply[2]
    if kind == "refused":
        raise ParseError(reply[2], **reply[3])
    if kind == "missing":
        from desktop_app.core.packages import MissingPackage

        raise MissingPackage(reply[2], reply[3])
    raise ParserBug(reply[2], reply[3], reply[4])


def resident_mb(pid: int) -> float | None:
    """A process's resident memory in MB (1e6 bytes), or None where /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE / 1e6
    except (OSError, ValueError, IndexError):
        return None


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


# ------------------------------------------------------------------------------------ the worker
class _UnitOcr(OcrJob):
    """OCR inside the worker: each page is a unit (the parent shows it and times it; a cancel
    kills the worker, so no check here)."""

    def page(self, number: int, count: int) -> None:
        from desktop_app.core.library.parsers import progress

        progress.unit("OCR page", number, count)


def main(argv: list[str] | None = None) -> int:
    """The worker process: read the files the parent sends on stdin, answer on stdout, until it
    says stop, stdin closes, or ``IDLE_SECONDS`` go by without a file."""
    args = list(sys.argv[1:] if argv is None else argv)
    if hasattr(signal, "SIGINT"):
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent decides
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    # Recoverable PDF warnings are not for users (as in cli/main.py).
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a library's print() must not garble the answers
    with open(args[0], "r+b") as f:
        beat = mmap.mmap(f.fileno(), _BEAT.size)
    for name in _PRELOAD:
        __import__(name)
    requests = sys.stdin.buffer
    idle = _idle_exit()
    while True:
        try:
            request = pickle.load(requests)
        except (EOFError, OSError, pickle.UnpicklingError):
            return 0
        idle.cancel()
        if request is None:
            return 0
        job, req = request
        _BEAT.pack_into(beat, 0, _BEAT.unpack_from(beat)[0], 0, 0, 0)
        _send(answers, ("started", job))
        _send(answers, _read(job, req, beat))
        idle = _idle_exit()


def _idle_exit() -> threading.Timer:
    """Leave after ``IDLE_SECONDS`` unless cancelled (by the next file)."""
    timer = threading.Timer(IDLE_SECONDS, os._exit, (0,))
    timer.daemon = True
    timer.start()
    return timer


def _read(job: int, req: ParseRequest, beat: Any) -> tuple[Any, ...]:
    from desktop_app.core.library.parsers import progress
    from desktop_app.core.packages import MissingPackage

    def heard(kind: str, number: int, count: int | None) -> None:
        units = _BEAT.unpack_from(beat)[0] + 1
        _BEAT.pack_into(beat, 0, units, _KIND_INDEX.get(kind, _KIND_INDEX["part"]), number, count or 0)

    def parsed() -> None:  # chunking starts: a heartbeat of its own, at the same place
        units, kind, number, count = _BEAT.unpack_from(beat)
        _BEAT.pack_into(beat, 0, units + 1, kind, number, count)

    ocr = _UnitOcr(req.rel, req.cfg.ocr_max_pages)
    try:
        with progress.listening(heard):
            chunks = chunk_file(req.cfg, req.size, req.path, req.rel, req.doc_id, req.nbytes, ocr, parsed)
            return ("done", job, chunks)
    except ParseError as exc:
        return ("refused", job, exc.message.code, {k: _plain(v) for k, v in exc.message.params.items()})
    except MissingPackage as exc:
        return ("missing", job, exc.feature, exc.name)
    except Exception as exc:  # a parser bug: the parent records it against the file
        return ("bug", job, type(exc).__name__, str(exc), traceback.format_exc())


def _plain(value: Any) -> Any:
    """A reason's parameter as something that survives the pipe (an exception becomes its text)."""
    if isinstance(value, Message):
        return Message(value.code, {k: _plain(v) for k, v in value.params.items()})
    return value if isinstance(value, (str, int, float)) or value is None else str(value)


if __name__ == "__main__":
    sys.exit(main())
