"""Copying dropped files into the knowledge folder without ever writing outside it.

Threats handled: names with ``..`` or absolute paths, control characters (newlines) in names, symlinked
folders (loops, escapes), FIFOs/devices that would block a read, two different files with the same
name, and a crash mid-copy (write to a temp file beside the target, fsync, then ``os.replace``).
Emoji and other printable Unicode are kept: they are legitimate names.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import uuid
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

TMP_PREFIX = ".kdesk-tmp-"  # in-progress copies; sync must ignore names starting with this
_MAX_COMPONENT_BYTES = 200  # below every common filesystem's 255-byte limit, room for " (99)"
_BREAKS = re.compile(r"[\t\n\r\v\f\u2028\u2029]+")  # word separators: become a space
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")  # the rest (bell, escape, NUL...): dropped
_WINDOWS_RESERVED = re.compile(r'[<>:"|?*]')


class FileOpsError(ValueError):
    """A file could not be copied into the knowledge folder; the message is shown to the user as is."""


@dataclass
class ImportReport:
    """What ``import_paths`` did: destination paths written (or already present) and per-file failures."""

    copied: list[Path] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (source path, reason)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # symlinks not followed, on purpose


def sanitize_component(name: str) -> str:
    """One path component made safe: line breaks become a space, other control characters go, no separators, no dot names."""
    name = _CONTROL.sub("", _BREAKS.sub(" ", name)).replace("/", "_").replace("\\", "_")
    if os.name == "nt":
        name = _WINDOWS_RESERVED.sub("_", name)
    # No leading dots (a hidden file is never indexed), no trailing ones (Windows drops them anyway).
    name = re.sub(r" {2,}", " ", name).strip().strip(".").strip()
    if name in ("", ".", ".."):
        return ""
    return _truncate(name)


def _truncate(name: str) -> str:
    if len(name.encode("utf-8")) <= _MAX_COMPONENT_BYTES:
        return name
    stem, dot, suffix = name.rpartition(".")
    if not dot or len(suffix) > 16:
        stem, suffix = name, ""
    budget = _MAX_COMPONENT_BYTES - len(suffix.encode("utf-8")) - (1 if suffix else 0)
    cut = stem.encode("utf-8")[:budget].decode("utf-8", errors="ignore")  # never split a character
    return f"{cut}.{suffix}" if suffix else cut


def sanitize_relpath(rel: str) -> str:
    """A relative, "/"-separated path with no way up: absolute roots, drives, ``..`` and ``.`` dropped."""
    rel = rel.replace("\\", "/")
    rel = re.sub(r"^[A-Za-z]:", "", rel)  # C:\... typed on Windows
    parts = [sanitize_component(p) for p in PurePosixPath(rel).parts if p not in ("/", "//")]
    parts = [p for p in parts if p]
    return "/".join(parts)


def _inside(root: Path, path: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _same_content(a: Path, b: Path) -> bool:
    try:
        return a.stat().st_size == b.stat().st_size and _sha256(a) == _sha256(b)
    except OSError:
        return False


def _numbered(path: Path, n: int) -> Path:
    suffix = "".join(path.suffixes[-1:])
    stem = path.name[: len(path.name) - len(suffix)] if suffix else path.name
    return path.with_name(f"{stem} ({n}){suffix}")


def _regular_source(src: Path) -> os.stat_result:
    try:
        st = src.stat()  # follows a symlink the user dropped on purpose
    except FileNotFoundError as exc:
        raise FileOpsError(f"{src}: no such file") from exc
    except OSError as exc:
        raise FileOpsError(f"{src}: cannot read ({exc.strerror or exc})") from exc
    if stat.S_ISDIR(st.st_mode):
        raise FileOpsError(f"{src}: is a folder (use import_paths for folders)")
    if not stat.S_ISREG(st.st_mode):  # FIFOs and devices would block or never end
        raise FileOpsError(f"{src}: not a regular file")
    return st


def _atomic_copy(src: Path, dest: Path) -> None:
    tmp = dest.with_name(f"{TMP_PREFIX}{uuid.uuid4().hex}")
    try:
        with open(src, "rb") as fin, open(tmp, "xb") as fout:
            shutil.copyfileobj(fin, fout, 1 << 20)
            fout.flush()
            os.fsync(fout.fileno())
        shutil.copystat(src, tmp, follow_symlinks=True)
        os.replace(tmp, dest)  # replaces a symlink at dest itself, never writes through it
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def safe_copy_into(knowledge_dir: Path, src: Path, dest_rel: str | None = None) -> Path:
    """Copy one file to ``knowledge_dir/dest_rel`` (default: its own name) and return the path written.

    ``dest_rel`` is sanitised (no ``..``, no absolute paths, no control characters). If a different file
    already has that name the copy gets a numeric suffix, ``name (2).ext``; the same content is not
    copied twice (the existing path is returned). Raises FileOpsError with a readable reason.
    """
    root = Path(knowledge_dir).resolve()
    root.mkdir(parents=True, exist_ok=True)
    src = Path(src)
    _regular_source(src)
    rel = sanitize_relpath(dest_rel if dest_rel is not None else src.name)
    if not rel or rel.split("/")[-1] == "":
        rel = sanitize_component(src.name) or "unnamed"
    dest = root.joinpath(*rel.split("/"))
    # A symlinked folder inside the knowledge folder could still point outside: check the real parent.
    parent = dest.parent
    parent.mkdir(parents=True, exist_ok=True)
    real_parent = parent.resolve()
    if not _inside(root, real_parent):
        raise FileOpsError(f"{rel}: refusing to write outside the knowledge folder (via a symlink)")
    dest = real_parent / dest.name
    if src.resolve() == dest.resolve() and dest.exists():
        return dest  # already in place (dropping a file that lives in the knowledge folder)
    n = 1
    candidate = dest
    while candidate.exists() or candidate.is_symlink():
        if not candidate.is_symlink() and candidate.is_file() and _same_content(src, candidate):
            return candidate
        n += 1
        candidate = _numbered(dest, n)
    _atomic_copy(src, candidate)
    return candidate


def import_paths(knowledge_dir: Path, paths: list[Path], prefix: str = "") -> ImportReport:
    """Copy files and folders into ``knowledge_dir/prefix``; folders keep their own layout.

    Folders are walked without following symlinked sub-folders (no loops, no escapes); a symlinked
    file is copied only if it points inside the dropped folder. Per-file failures are reported, the
    rest of the batch goes on.
    """
    report = ImportReport()
    base = sanitize_relpath(prefix)

    def dest_for(rel: str) -> str:
        return f"{base}/{rel}" if base else rel

    for raw in paths:
        src = Path(raw)
        try:
            if src.is_dir():
                _import_folder(knowledge_dir, src, dest_for, report)
            else:
                report.copied.append(safe_copy_into(knowledge_dir, src, dest_for(src.name)))
        except FileOpsError as exc:
            report.failed.append((str(src), str(exc)))
        except OSError as exc:
            report.failed.append((str(src), f"{src}: {exc.strerror or exc}"))
    return report


def _import_folder(knowledge_dir: Path, folder: Path, dest_for, report: ImportReport) -> None:
    top = folder.resolve()
    name = sanitize_component(top.name) or "folder"
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        # Hidden folders and files (.git, .DS_Store) are never indexed: do not copy them either.
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        here = Path(dirpath)
        for fname in sorted(f for f in filenames if not f.startswith(".")):
            src = here / fname
            rel_in = src.relative_to(top).as_posix()
            try:
                if src.is_symlink():
                    target = src.resolve()
                    if not _inside(top, target):
                        report.skipped.append((str(src), f"{rel_in}: symlink to outside the dropped folder"))
                        continue
                report.copied.append(safe_copy_into(knowledge_dir, src, dest_for(f"{name}/{rel_in}")))
            except FileOpsError as exc:
                report.failed.append((str(src), str(exc)))
            except (OSError, RuntimeError) as exc:  # RuntimeError: symlink loop in resolve() on 3.10
                report.failed.append((str(src), f"{rel_in}: {getattr(exc, 'strerror', None) or exc}"))
        for d in list(dirnames):
            if (here / d).is_symlink():
                rel_d = (here / d).relative_to(top).as_posix()
                report.skipped.append((str(here / d), f"{rel_d}: symlinked folder, not followed"))
        dirnames[:] = [d for d in dirnames if not (here / d).is_symlink()]
