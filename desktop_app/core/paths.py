"""Where data and models live, and the content hash both the library and model downloads use."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

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


def sha256_file(path: Path) -> str:
    """A file's sha256 (hex), read in 1 MiB blocks so a large file never sits in memory whole."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()
