"""Where data and models live."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

REPO_ROOT = Path(__file__).resolve().parents[2]


def default_data_dir() -> Path:
    """The platform's user data folder, overridable with $KDESK_DATA_DIR."""
    env = os.environ.get("KDESK_DATA_DIR")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir("kdesk", "KnowledgeDesk"))


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
