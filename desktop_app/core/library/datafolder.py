"""The data folder: recognising one (so it is never indexed), one writer at a time across processes,
and files that several processes may create at once put in place by whichever is first.

The app and any number of `kdesk` commands may use one data folder at once. Readers never wait.
Writers (add, sync, reindex, remove) take an operating-system lock on ``index/writer.lock``: the
kernel releases it when its process ends, however it ends, so a lock left by a killed process is
simply free for the next writer (nothing to detect, no race to take it over). Who holds it is
written into the lock file, so a waiting writer can say whom it waits for.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from desktop_app.core import messages
from desktop_app.core.library import reasons
from desktop_app.core.tasks import TaskState, check

LOCK_NAME = "writer.lock"
# Files whose presence under index/ says "a Knowledge Desk index lives here" (embedded Chroma's
# database, the GUI's Chroma child folder, the embedder-dimension cache).
_INDEX_SIGNS = ("embedders.json", "chroma.sqlite3", "chroma")


def is_data_folder(folder: Path) -> bool:
    """Does `folder` look like a Knowledge Desk data folder (this library's or another's)?"""
    index = folder / "index"
    try:
        return (folder / "knowledge").is_dir() and (
            (folder / "library-id").is_file() or any((index / s).exists() for s in _INDEX_SIGNS)
        )
    except OSError:
        return False


def file_stamp(path: Path) -> tuple[int, int, int] | None:
    """What changes when another process replaces a file (os.replace gives a new inode): readers
    compare it with what they last read to notice another writer's flush."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def inside(path: Path, folder: Path) -> bool:
    """Is `path` `folder` or anything under it (both resolved by the caller)?"""
    return path == folder or folder in path.parents


def write_whole(path: Path, tmp: Path, write: Callable[[Any], None], *, binary: bool = False) -> None:
    """Write ``path`` through ``tmp``: ``write`` fills it, it is synced to disk and renamed over
    ``path`` (a reader sees the old file or the new one). A failed write (a full disk) leaves no
    half-written copy behind to take more room."""
    try:
        with open(tmp, "wb") if binary else open(tmp, "w", encoding="utf-8") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def place_once(tmp: Path, path: Path) -> bool:
    """Move a finished file to `path` unless a file is already there (another process was first; its
    copy may be in use): atomic, never replaces. True when ours went in; `tmp` is gone either way."""
    try:
        os.link(tmp, path)  # fails rather than replace
        return True
    except FileExistsError:
        return False
    except OSError:  # no hard links on this file system (FAT, some network shares)
        if path.exists():
            return False
        os.replace(tmp, path)
        return True
    finally:
        tmp.unlink(missing_ok=True)


class DataFolderBusy(Exception):
    """Another process writes to the data folder and the caller chose not to wait."""


def _lock_file(fh) -> bool:
    """Try to take the OS lock on an open file; True when taken."""
    try:
        if sys.platform == "win32":
            import msvcrt

            fh.seek(0)
            msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False


def _unlock_file(fh) -> None:
    if sys.platform == "win32":
        import msvcrt

        fh.seek(0)
        msvcrt.locking(fh.fileno(), msvcrt.LK_UNLCK, 1)
    else:
        import fcntl

        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


WINDOW = "window"  # the command the app's window records: named in the waiting reader's language
_process_name = ""


def name_this_process(command: str) -> None:
    """What this process's writes are called to another process that waits for them: the CLI sets
    "kdesk add", the app WINDOW. (Its own argv says neither: ``kdesk --data-dir D add``.)"""
    global _process_name
    _process_name = command


def describe_holder(info: dict) -> messages.Message:
    """Who holds the lock, from what it wrote: "kdesk add (process 4242, since 10:31:07)"."""
    command = info.get("command") or ""
    what: str | messages.Message = (
        messages.message(reasons.HOLDER_WINDOW)
        if command == WINDOW
        else command or messages.message(reasons.HOLDER_UNKNOWN)
    )
    try:  # written in UTC: shown in the reader's local time
        since = datetime.fromisoformat(info.get("since", "")).astimezone().strftime("%H:%M:%S")
    except (TypeError, ValueError):
        since = "?"
    pid, host = info.get("pid", "?"), info.get("host", "")
    if host and host != socket.gethostname():
        return messages.message(reasons.HOLDER_ON_HOST, what=what, pid=pid, host=host, since=since)
    return messages.message(reasons.HOLDER, what=what, pid=pid, since=since)


class WriterLock:
    """The data folder's cross-process writer lock. Not reentrant: KnowledgeBase counts its own
    nested writes and takes this once for the outermost one."""

    def __init__(self, index_dir: Path, command: str = "") -> None:
        self.path = Path(index_dir) / LOCK_NAME
        self.command = command  # else the process's name, when the lock is taken
        self._fh = None
        self._guard = threading.Lock()

    @property
    def held(self) -> bool:
        return self._fh is not None

    def holder(self) -> dict:
        """Who wrote the lock file last (the current holder while it is held); {} if unknown."""
        try:
            return json.loads(self.path.read_text(encoding="utf-8") or "{}")
        except (OSError, ValueError):
            return {}

    def acquire(
        self,
        *,
        wait: bool = True,
        on_wait: Callable[[str], None] | None = None,
        task: TaskState | None = None,
        poll: float = 0.2,
    ) -> None:
        """Take the lock, waiting (and saying once whom for) while another process holds it.
        Raises DataFolderBusy when `wait` is False, Cancelled when `task` is cancelled meanwhile."""
        with self._guard:
            if self._fh is not None:
                raise RuntimeError("WriterLock is not reentrant")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fh = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held open while locked
            told = False
            try:
                while not _lock_file(fh):
                    holder = describe_holder(self.holder())
                    message = messages.message(reasons.WAITING_FOR_WRITER, holder=holder)
                    if not wait:
                        raise DataFolderBusy(messages.message(reasons.BUSY_WRITER, holder=holder))
                    if not told and on_wait is not None:
                        on_wait(message)
                        told = True
                    check(task)
                    time.sleep(poll)
                info = {
                    "pid": os.getpid(),
                    "host": socket.gethostname(),
                    "command": self.command or _process_name or _command_line(),
                    "since": datetime.now(UTC).isoformat(timespec="seconds"),
                }
                fh.seek(0)
                fh.truncate()
                fh.write(json.dumps(info))
                fh.flush()
            except BaseException:
                fh.close()
                raise
            self._fh = fh

    def release(self) -> None:
        with self._guard:
            fh, self._fh = self._fh, None
            if fh is None:
                return
            try:
                _unlock_file(fh)
            finally:
                fh.close()


def _command_line() -> str:
    """A process that did not name itself (a script using the core): its program."""
    argv0 = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    return "kdesk" if argv0.startswith("kdesk") else argv0 or "python"
