"""Copying dropped files into the knowledge folder without ever writing outside it.

Threats handled: names with ``..`` or absolute paths, control characters (newlines) in names, symlinked
folders (loops, escapes), FIFOs/devices that would block a read, two different files with the same
name, and a crash mid-copy (write to a temp file beside the target, fsync, then ``os.replace``).
Emoji and other printable Unicode are kept: they are legitimate names.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from desktop_app.core.library import reasons
from desktop_app.core.library.datafolder import inside
from desktop_app.core.library.names import escape_name
from desktop_app.core.messages import Text, message, message_of
from desktop_app.core.paths import NotRegularFile, file_kind, open_regular, sha256_file

# Why a file or folder is not copied ("" or None: copy it). Files get their stat (size, before any copy).
FileScreen = Callable[[Path, os.stat_result], Text | None]
FolderScreen = Callable[[Path], Text | None]

TMP_PREFIX = ".kdesk-tmp-"  # in-progress copies; sync must ignore names starting with this
_MAX_COMPONENT_BYTES = 200  # below every common filesystem's 255-byte limit, room for " (99)"
_BREAKS = re.compile(r"[\t\n\r\v\f\u2028\u2029]+")  # word separators: become a space
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")  # the rest (bell, escape, NUL...): dropped
_WINDOWS_RESERVED = re.compile(r'[<>:"|?*]')


class FileOpsError(ValueError):
    """A file could not be copied into the knowledge folder; the message is shown to the user as is."""


class NotRegularSource(FileOpsError):
    """A named pipe, socket or device: never read, left out with its reason (skipped, not failed)."""


_KINDS = {"pipe": reasons.KIND_PIPE, "socket": reasons.KIND_SOCKET, "device": reasons.KIND_DEVICE}


def not_regular_reason(kind: str) -> Text:
    """Why a file that is not a regular one is never read (NotRegularFile.kind: pipe, socket...)."""
    if kind not in _KINDS:
        return message(reasons.NOT_REGULAR)
    return message(reasons.NOT_REGULAR_KIND, kind=message(_KINDS[kind]))


@dataclass
class ImportReport:
    """What ``import_paths`` did: destination paths written (or already present) and per-file failures."""

    copied: list[Path] = field(default_factory=list)
    failed: list[tuple[str, Text]] = field(default_factory=list)  # (source path, reason)
    # Left out on purpose (hidden, too large, unsupported, symlinks, a data folder), with the reason.
    skipped: list[tuple[str, Text]] = field(default_factory=list)


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
    # Bytes as the file system counts them: a name that is not UTF-8 has surrogates (os.fsdecode).
    if len(os.fsencode(name)) <= _MAX_COMPONENT_BYTES:
        return name
    stem, dot, suffix = name.rpartition(".")
    if not dot or len(suffix) > 16:
        stem, suffix = name, ""
    budget = _MAX_COMPONENT_BYTES - len(os.fsencode(suffix)) - (1 if suffix else 0)
    kept, used = [], 0
    for ch in stem:  # whole characters only; a byte that is not UTF-8 is one (a surrogate)
        used += len(os.fsencode(ch))
        if used > budget:
            break
        kept.append(ch)
    cut = "".join(kept)
    return f"{cut}.{suffix}" if suffix else cut


def sanitize_relpath(rel: str) -> str:
    """A relative, "/"-separated path with no way up: absolute roots, drives, ``..`` and ``.`` dropped."""
    rel = rel.replace("\\", "/")
    rel = re.sub(r"^[A-Za-z]:", "", rel)  # C:\... typed on Windows
    parts = [sanitize_component(p) for p in PurePosixPath(rel).parts if p not in ("/", "//")]
    parts = [p for p in parts if p]
    return "/".join(parts)


def _same_content(a: Path, b: Path) -> bool:
    try:
        return a.stat().st_size == b.stat().st_size and sha256_file(a) == sha256_file(b)
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
        raise FileOpsError(message(reasons.NO_SUCH_FILE)) from exc
    except OSError as exc:
        raise FileOpsError(message(reasons.CANNOT_READ_SOURCE, reason=exc.strerror or exc)) from exc
    if stat.S_ISDIR(st.st_mode):
        raise FileOpsError(message(reasons.IS_A_FOLDER))
    if not stat.S_ISREG(st.st_mode):  # FIFOs and devices would block or never end
        raise NotRegularSource(not_regular_reason(file_kind(st.st_mode)))
    return st


def _atomic_copy(src: Path, dest: Path) -> None:
    tmp = dest.with_name(f"{TMP_PREFIX}{uuid.uuid4().hex}")
    try:
        with open_regular(src) as fin, open(tmp, "xb") as fout:  # a pipe swapped in never blocks
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
    if not inside(real_parent, root):
        raise FileOpsError(message(reasons.OUTSIDE_KNOWLEDGE, name=rel))
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


def import_paths(
    knowledge_dir: Path,
    paths: list[Path],
    prefix: str = "",
    *,
    screen_file: FileScreen | None = None,
    screen_folder: FolderScreen | None = None,
) -> ImportReport:
    """Copy files and folders into ``knowledge_dir/prefix``; folders keep their own layout.

    Folders are walked without following symlinked sub-folders (no loops, no escapes); a symlinked
    file is copied only if it points inside the dropped folder. Hidden files and folders are left
    out, and so is whatever ``screen_file`` / ``screen_folder`` give a reason for (checked before
    anything is copied); each is listed in ``skipped``. Per-file failures are reported, the rest of
    the batch goes on.
    """
    report = ImportReport()
    base = sanitize_relpath(prefix)

    def dest_for(rel: str) -> str:
        return f"{base}/{rel}" if base else rel

    for raw in paths:
        src = Path(raw)
        try:
            if src.is_dir():
                why = screen_folder(src.resolve()) if screen_folder else None
                if why:
                    report.skipped.append((escape_name(str(src)), why))
                else:
                    _import_folder(knowledge_dir, src, dest_for, report, screen_file, screen_folder)
            else:
                why = screen_file(src, _regular_source(src)) if screen_file else None
                if why:
                    report.skipped.append((escape_name(str(src)), why))
                else:
                    report.copied.append(safe_copy_into(knowledge_dir, src, dest_for(src.name)))
        except NotRegularSource as exc:
            report.skipped.append((escape_name(str(src)), message_of(exc)))
        except FileOpsError as exc:
            report.failed.append((escape_name(str(src)), message_of(exc)))
        except NotRegularFile as exc:  # swapped for a pipe between the check and the copy
            report.skipped.append((escape_name(str(src)), not_regular_reason(exc.kind)))
        except OSError as exc:
            report.failed.append((escape_name(str(src)), exc.strerror or str(exc)))
    return report


def _import_folder(
    knowledge_dir: Path,
    folder: Path,
    dest_for,
    report: ImportReport,
    screen_file: FileScreen | None,
    screen_folder: FolderScreen | None,
) -> None:
    top = folder.resolve()
    name = sanitize_component(top.name) or "folder"
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        here = Path(dirpath)
        keep = []
        for d in sorted(dirnames):
            sub = here / d
            if d.startswith("."):  # .git, .cache: never indexed, so not copied either
                report.skipped.append((escape_name(str(sub)), message(reasons.HIDDEN_FOLDER)))
            elif sub.is_symlink():
                report.skipped.append((escape_name(str(sub)), message(reasons.SYMLINKED_FOLDER)))
            elif screen_folder and (why := screen_folder(sub.resolve())):
                report.skipped.append((escape_name(str(sub)), why))
            else:
                keep.append(d)
        dirnames[:] = keep
        for fname in sorted(filenames):
            src = here / fname
            rel_in = src.relative_to(top).as_posix()
            if fname.startswith("."):  # .DS_Store, editor swap files
                report.skipped.append((escape_name(str(src)), message(reasons.HIDDEN_FILE)))
                continue
            try:
                if src.is_symlink():
                    target = src.resolve()
                    if not inside(target, top):
                        report.skipped.append((escape_name(str(src)), message(reasons.SYMLINK_OUTSIDE)))
                        continue
                if screen_file and (why := screen_file(src, _regular_source(src))):
                    report.skipped.append((escape_name(str(src)), why))
                    continue
                report.copied.append(safe_copy_into(knowledge_dir, src, dest_for(f"{name}/{rel_in}")))
            except NotRegularSource as exc:
                report.skipped.append((escape_name(str(src)), message_of(exc)))
            except FileOpsError as exc:
                report.failed.append((escape_name(str(src)), message_of(exc)))
            except NotRegularFile as exc:  # swapped for a pipe between the check and the copy
                report.skipped.append((escape_name(str(src)), not_regular_reason(exc.kind)))
            except (OSError, RuntimeError) as exc:  # RuntimeError: symlink loop in resolve() on 3.10
                report.failed.append((escape_name(str(src)), getattr(exc, "strerror", None) or str(exc)))
