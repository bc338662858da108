"""Where data and models live, and the content hash both the library and model downloads use."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path
from typing import BinaryIO

import platformdirs

REPO_ROOT = Path(__file__).resolve().parents[2]


def platform_data_dir() -> Path:
    """The platform's user data folder (the default when nothing else is chosen)."""
    return Path(platformdirs.user_data_dir("kdesk", "KnowledgeDesk"))


def data_dir_pointer() -> Path:
    """Where the app remembers a data folder chosen in Settings (outside any data folder)."""
    env = os.environ.get("KDESK_CONFIG_DIR")
    base = Path(env).expanduser() if env else Path(platformdirs.user_config_dir("kdesk", "KnowledgeDesk"))
    return base / "data-dir.txt"


def default_data_dir() -> Path:
    """$KDESK_DATA_DIR, else the folder chosen in Settings, else the platform's user data folder."""
    env = os.environ.get("KDESK_DATA_DIR")
    if env:
        return Path(env).expanduser()
    try:
        chosen = data_dir_pointer().read_text(encoding="utf-8").strip()
    except OSError:
        chosen = ""
    return Path(chosen).expanduser() if chosen else platform_data_dir()


def choose_data_dir(folder: Path | None) -> None:
    """Remember ``folder`` as the data folder for the next start (None: back to the default)."""
    pointer = data_dir_pointer()
    if folder is None or Path(folder).expanduser().resolve() == platform_data_dir().resolve():
        pointer.unlink(missing_ok=True)
        return
    pointer.parent.mkdir(parents=True, exist_ok=True)
    tmp = pointer.with_suffix(".tmp")
    tmp.write_text(str(Path(folder).expanduser().resolve()), encoding="utf-8")
    os.replace(tmp, pointer)


def log_file(data_dir: Path) -> Path:
    """Where the window writes its log (what went wrong, with tracebacks): <data-dir>/logs/kdesk.log."""
    return Path(data_dir) / "logs" / "kdesk.log"


def models_dirs(data_dir: Path | None = None) -> list[Path]:
    """Folders searched for models, in order: $KDESK_MODELS, <data-dir>/models, the repo's models/."""
    dirs: list[Path] = []
    env = os.environ.get("KDESK_MODELS")
    if env:
        dirs.append(Path(env).expanduser())
    if data_dir is not None:
        dirs.append(Path(data_dir) / "models")
    dirs.append(REPO_ROOT / "models")
    return dirs


def find_model(name: str, data_dir: Path | None = None) -> Path | None:
    """A model folder or file by name (or an absolute path), searched in models_dirs()."""
    p = Path(name).expanduser()
    if p.is_absolute():
        return p if p.exists() else None
    for d in models_dirs(data_dir):
        candidate = d / name
        if candidate.exists():
            return candidate
    return None


class NotRegularFile(OSError):
    """A path that is a named pipe, a socket or a device: never read (a read could block forever)."""

    def __init__(self, path: Path | str, kind: str) -> None:
        super().__init__(errno.EINVAL, f"not a regular file ({kind})", str(path))
        self.kind = kind  # "pipe", "socket", "device" or "other"


def file_kind(mode: int) -> str:
    """What a non-regular file is, for NotRegularFile: "pipe", "socket", "device" or "other"."""
    if stat.S_ISFIFO(mode):
        return "pipe"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "other"


def ensure_regular(path: Path | str) -> os.stat_result:
    """The file's stat (symlinks followed), or NotRegularFile; never opens it."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFile(path, "folder" if stat.S_ISDIR(st.st_mode) else file_kind(st.st_mode))
    return st


class OutsideFolder(OSError):
    """A path that leads, through a link, to a file outside the folder it must stay in: never read."""

    def __init__(self, path: Path | str, target: Path | str) -> None:
        super().__init__(errno.EACCES, "a link to outside the folder", str(path))
        self.target = str(target)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def resolve_inside(path: Path | str, root: Path | str) -> Path:
    """``path`` with every link in it resolved (chains, ``..``), or OutsideFolder when that leaves
    ``root`` (resolved by the caller). A link loop stays unresolved: opening it fails (ELOOP)."""
    lexical, top = os.fspath(path), os.fspath(root)
    if _within(lexical, top):  # the usual case: only what lies below root (resolved) can be a link
        here = top
        for part in lexical[len(top) :].split(os.sep):
            if part in (".", ".."):
                break
            here = os.path.join(here, part)
            if part and os.path.islink(here):
                break
        else:
            return Path(lexical)  # no link on the way: a few lstat calls, not a realpath (~10x less)
    real = os.path.realpath(lexical)
    if not _within(real, top):
        raise OutsideFolder(path, real)
    return Path(real)


def open_regular(path: Path | str, *, nofollow: bool = False, inside: Path | None = None) -> BinaryIO:
    """Open a file for reading only if it is a regular file, without ever blocking: opened with
    O_NONBLOCK (opening a FIFO with no writer would wait forever), its type checked on the open
    descriptor (so a file swapped for a pipe after a stat is still caught), then read as usual.
    ``nofollow``: refuse a symlink as the last component (O_NOFOLLOW). Raises NotRegularFile.
    ``inside`` (a resolved folder): the file opened must be one inside it, or OutsideFolder is
    raised before a byte is read; checked after the open, on the descriptor (the resolved path
    names the very file opened: same device and inode), so a link swapped at any time is caught."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    if nofollow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(path, "folder" if stat.S_ISDIR(st.st_mode) else file_kind(st.st_mode))
        if inside is not None:
            real = resolve_inside(path, inside)
            try:
                there = os.stat(real)
            except OSError:
                there = None
            if there is None or (there.st_dev, there.st_ino) != (st.st_dev, st.st_ino):
                raise OutsideFolder(path, real)  # the link changed under us: what was opened is unknown
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def sha256_file(path: Path, inside: Path | None = None) -> str:
    """A file's sha256 (hex), read in 1 MiB blocks so a large file never sits in memory whole.
    Only a regular file is read (``open_regular``): a pipe raises NotRegularFile, never blocks;
    with ``inside``, a file outside that folder raises OutsideFolder."""
    h = hashlib.sha256()
    with open_regular(path, inside=inside) as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()
