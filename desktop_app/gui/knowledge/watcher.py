"""Watches the knowledge folder and asks for an incremental sync, debounced.

Edits made outside the app (a file saved, copied or deleted in the folder) arrive as bursts of
events; one sync runs after the folder has been quiet for ``delay_ms``. The folder tree is listed on
a pool thread so a large library does not stall the UI.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

from desktop_app.core.library.names import escape_name, is_utf8
from desktop_app.gui.operations import INDEXING, JobKind, Operation

MAX_WATCHED_FILES = 4000  # inotify watches are a limited resource; folders are always watched


def _scan(root: Path) -> tuple[list[str], list[str]]:
    """The folders and regular files to watch. Nothing is opened; a pipe, socket or device is
    left to its folder's watch, and so is a name Qt cannot hold (not UTF-8: names.py). Nothing
    outside the folder is watched: a linked folder is not walked (the sync does not follow it)
    and a file link is watched only when its target is inside (the sync reads no other)."""
    real_root = os.path.realpath(root)
    dirs, files = [str(root)], []
    for current, subdirs, names in os.walk(root):
        subdirs[:] = [
            d for d in subdirs if not d.startswith(".") and not os.path.islink(os.path.join(current, d))
        ]
        dirs.extend(os.path.join(current, d) for d in subdirs)
        if len(files) < MAX_WATCHED_FILES:
            for n in names:
                path = os.path.join(current, n)
                if n.startswith(".") or not is_utf8(escape_name(path)) or not os.path.isfile(path):
                    continue
                if os.path.islink(path) and not _inside(os.path.realpath(path), real_root):
                    continue  # a change there is no change of the library: its sync reads nothing
                files.append(path)
    return dirs, files[:MAX_WATCHED_FILES]


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class KnowledgeWatcher(QObject):
    changed = Signal()  # the folder has been quiet for delay_ms after a change

    def __init__(self, panel, delay_ms: int = 1500) -> None:
        super().__init__(panel)
        self._runner = panel.ctx.runner
        self.root: Path | None = None
        self.fs = QFileSystemWatcher(self)
        self.fs.directoryChanged.connect(self._on_event)
        self.fs.fileChanged.connect(self._on_event)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(delay_ms)
        self.timer.timeout.connect(self._fire)

    def watch(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._rescan()

    def schedule(self) -> None:
        """(Re)start the quiet-period timer."""
        self.timer.start()

    def _on_event(self, _path: str) -> None:
        self.schedule()

    def _fire(self) -> None:
        if any(self._runner.is_busy(kind) for kind in INDEXING):
            self.schedule()  # a batch is writing the folder: wait until it is done
            return
        self._rescan()  # new sub-folders need watches too
        self.changed.emit()

    def _rescan(self) -> None:
        if self.root is None:
            return
        root = self.root
        self._runner.run(
            JobKind.WATCH_SCAN,
            lambda state: _scan(root),
            operation=Operation.WATCH_FOLDER,  # a failure: the window's status bar says it
            on_success=self._apply,
        )

    def _apply(self, result: tuple[list[str], list[str]]) -> None:
        dirs, files = result
        wanted = set(dirs) | set(files)
        current = set(self.fs.directories()) | set(self.fs.files())
        stale = [p for p in current if p not in wanted]
        if stale:
            self.fs.removePaths(stale)
        new = [p for p in wanted if p not in current and os.path.exists(p)]
        if new:
            self.fs.addPaths(new)
