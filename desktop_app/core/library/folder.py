"""The knowledge folder: which of its files are indexed, and what may be added to it.

The knowledge folder (<data-dir>/knowledge) is the source of truth of the library. Hidden and
temporary files, symlinks into the derived index and data folders copied in are never indexed;
adding the data folder itself (or its derived part) is refused, and files that could not be
indexed anyway are screened out before anything is copied.
"""

from __future__ import annotations

import fnmatch
import logging
import os
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from desktop_app.core.library import reasons
from desktop_app.core.library.datafolder import inside, is_data_folder
from desktop_app.core.library.fileops import ImportReport, import_paths, sanitize_component
from desktop_app.core.library.names import display_name, escape_name, fs_path
from desktop_app.core.library.scopes import SHARED
from desktop_app.core.messages import Text, message

log = logging.getLogger(__name__)

# Files in the knowledge folder that are never indexed.
_SKIP_NAMES = {"README.md", "readme.md"}
_TEMP_SUFFIXES = (".tmp", ".part", ".crdownload", ".swp", "~")
# Formats whose text is much smaller than the file: their size is checked after parsing instead.
PARSED_SIZE_SUFFIXES = (".pdf", ".docx", ".pptx", ".xlsx", ".epub")


class Scan(dict[str, Path]):
    """The knowledge folder's files to index, by relative posix path, and the ones left out on
    purpose with why (``skipped``: a second name of a file, through a link)."""

    def __init__(self, items: Iterator[tuple[str, Path]] = iter(())) -> None:
        super().__init__(items)
        self.skipped: list[tuple[str, Text]] = []


@dataclass
class Placement:
    """Paths given to ``add`` sorted: already in the knowledge folder, to copy in, or refused."""

    inside: dict[str, Path] = field(default_factory=dict)  # by relative posix path, indexed in place
    outside: list[Path] = field(default_factory=list)
    refused: list[tuple[str, Text]] = field(default_factory=list)  # (path, why)


def screen_file(src: Path, st: os.stat_result, limit: float) -> Text | None:
    """Why a file is not copied in at all (checked before any copy); ``limit``: index.max_document_mb."""
    from desktop_app.core.library.parsers import IMAGE_SUFFIXES, SUPPORTED_SUFFIXES

    suffix = src.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES and suffix not in IMAGE_SUFFIXES:
        return message(reasons.UNSUPPORTED, suffix=suffix or message(reasons.NO_EXTENSION))
    if limit > 0 and suffix not in PARSED_SIZE_SUFFIXES and suffix not in IMAGE_SUFFIXES:
        if st.st_size / 1e6 > limit:
            return message(reasons.TOO_LARGE_FILE, mb=st.st_size / 1e6, limit_mb=limit)
    return None


class AmbiguousName(ValueError):
    """A shown name (U+FFFD in it) that stands for several documents; ``names``: their stored names."""

    def __init__(self, name: str, names: list[str]) -> None:
        super().__init__(name)
        self.name, self.names = name, sorted(names)


def matching(names: Sequence[str], documents: Collection[str]) -> list[str]:
    """The documents that names designate, sorted: a document's relative path (as stored, see
    names.py, or as shown, with U+FFFD for bytes that are not UTF-8), a folder's (all of the
    documents under it), or a glob (``*.txt``, ``notes/*``) over either form."""
    return sorted({n for name in names for n in match_one(name, documents)})


def match_one(name: str, documents: Collection[str]) -> list[str]:
    """The documents one name designates (``matching``)."""
    key = name.strip("/").replace("\\", "/")
    if key in documents:
        return [key]
    under = [n for n in documents if n.startswith(key + "/")]
    if under:
        return under
    same = [n for n in documents if display_name(n) == key]
    if len(same) > 1:  # two names that are not UTF-8 shown alike: never guess which to delete
        raise AmbiguousName(key, same)
    shown = same or [n for n in documents if display_name(n).startswith(key + "/")]
    if shown:
        return shown
    if any(c in key for c in "*?["):
        return [n for n in documents if fnmatch.fnmatchcase(n, key) or fnmatch.fnmatchcase(display_name(n), key)]
    return []


class KnowledgeFolder:
    """<data-dir>/knowledge: scanning it, adding to it and deleting from it (never the index)."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir  # resolved by the caller
        self.path = data_dir / "knowledge"

    def never_indexed(self, folder: Path) -> Text | None:
        """Why a folder (resolved) must never be indexed: this data folder or another one."""
        if folder == self.data_dir:
            return message(reasons.OWN_DATA_FOLDER)
        if is_data_folder(folder):
            return message(reasons.OTHER_DATA_FOLDER)
        return None

    def scan(self) -> Scan:
        """Every candidate file, by relative posix path. Symlinked folders are not followed (no
        loops); hidden and temporary files are skipped. A file link whose target is itself a
        candidate is left out (``skipped``): the file is indexed once, under its own name. A link
        leading out of the knowledge folder stays in: the sync refuses it with its reason, so it
        shows in the list and an older version's chunks of it leave the index."""
        found = Scan(self._candidates())
        root = self.path.resolve()
        links = [rel for rel, path in found.items() if path.is_symlink()]
        for rel in links:
            try:
                real = Path(os.path.realpath(found[rel])).relative_to(root)
            except ValueError:
                continue  # outside: the sync's to refuse
            target = escape_name(real.as_posix())
            if target != rel and target in found and not found[target].is_symlink():
                del found[rel]
                found.skipped.append((rel, message(reasons.LINK_DUPLICATE, name=display_name(target))))
        return found

    def is_empty(self) -> bool:
        """No file to index at all (stops at the first one)."""
        return next(self._candidates(), None) is None

    def _candidates(self) -> Iterator[tuple[str, Path]]:
        for root, dirs, files in os.walk(self.path, followlinks=False):
            # A data folder copied in by an older version (or by hand) is never indexed.
            dirs[:] = sorted(
                d for d in dirs if not d.startswith(".") and not self.never_indexed(Path(root, d).resolve())
            )
            rel_root = Path(root).relative_to(self.path)
            for name in sorted(files):
                if name.startswith(".") or name.startswith("~$") or name.endswith(_TEMP_SUFFIXES):
                    continue
                rel = escape_name((rel_root / name).as_posix())  # names.py: how names are stored
                if rel in _SKIP_NAMES:
                    continue
                path = Path(root) / name
                if path.is_symlink() and self._into_index(path):
                    continue
                yield rel, path

    def _into_index(self, path: Path) -> bool:
        """A symlink in the knowledge folder that leads into the data folder's derived state."""
        try:
            real = path.resolve()
        except (OSError, RuntimeError):
            return False
        return inside(real, self.data_dir) and not inside(real, self.path.resolve())

    def place(self, paths: Sequence[Path | str]) -> Placement:
        """Sort paths to add: files and folders already in the knowledge folder are indexed in
        place, the rest copied in; the data folder and its derived part are refused."""
        placement = Placement()
        knowledge = self.path.resolve()
        for raw in paths:
            src = Path(raw).expanduser()
            try:
                real = src.resolve()
            except (OSError, RuntimeError):
                placement.outside.append(src)  # import_paths reports why it cannot be read
                continue
            if inside(real, self.data_dir) and not inside(real, knowledge):
                placement.refused.append((str(src), self._refusal(real)))
                continue
            if not inside(real, knowledge):
                # A link in the knowledge folder to outside it is never read, even when named
                # (the link itself, or a path through a linked folder in it).
                if any(inside(up.resolve(), knowledge) for up in Path(os.path.abspath(src)).parents):
                    why = message(reasons.LINK_OUTSIDE, target=display_name(escape_name(str(real))))
                    placement.refused.append((str(src), why))
                else:
                    placement.outside.append(src)
                continue
            rel_in = escape_name(real.relative_to(knowledge).as_posix())
            if src.is_dir():
                placement.inside.update(
                    (r, p) for r, p in self.scan().items() if rel_in == "." or r.startswith(rel_in + "/")
                )
            else:
                placement.inside[rel_in] = real  # the file itself, not a link to it
        return placement

    def _refusal(self, real: Path) -> Text:
        if real == self.data_dir:
            return message(reasons.REFUSE_DATA_FOLDER, folder=self.path)
        return message(reasons.REFUSE_INSIDE_DATA_FOLDER)

    def copy_in(self, paths: list[Path], scope: str, max_document_mb: float) -> ImportReport:
        """Copy files and folders in (under @scope/ for a non-shared scope), leaving out what would
        never be indexed."""
        prefix = "" if scope in ("", SHARED) else "@" + sanitize_component(scope)
        return import_paths(
            self.path,
            paths,
            prefix=prefix,
            screen_file=lambda src, st: screen_file(src, st, max_document_mb),
            screen_folder=self.never_indexed,
        )

    def relative(self, path: Path) -> str:
        """A path in the knowledge folder as the relative posix name documents go by."""
        return escape_name(path.resolve().relative_to(self.path.resolve()).as_posix())

    def delete(self, names: Sequence[str]) -> None:
        """Delete documents' files (not their chunks), then the folders left empty."""
        for rel in names:
            path = fs_path(self.path, rel)
            try:
                if path.is_file() or path.is_symlink():
                    path.unlink()
            except OSError as exc:
                log.warning("could not delete %s: %s", path, exc)
        self._prune_empty_dirs()

    def _prune_empty_dirs(self) -> None:
        for root, dirs, files in os.walk(self.path, topdown=False):
            p = Path(root)
            if p != self.path and not dirs and not files:
                try:
                    p.rmdir()
                except OSError:
                    pass
