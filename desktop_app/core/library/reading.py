"""A file's chunks: parsed (OCR within it), checked against the size limits, chunked. The sync runs it
on its reader thread, or in the parse worker's child process (parse_worker.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from desktop_app.core.config import IndexConfig
from desktop_app.core.library import reasons
from desktop_app.core.library.documents import Chunk, ParseError
from desktop_app.core.library.folder import PARSED_SIZE_SUFFIXES
from desktop_app.core.library.scopes import scope_of
from desktop_app.core.paths import NotRegularFile, OutsideFolder, ensure_regular, resolve_inside

if TYPE_CHECKING:
    from desktop_app.core.library.ocr import OcrJob


def chunk_file(
    cfg: IndexConfig,
    size: int,
    path: Path,
    rel: str,
    doc_id: str,
    nbytes: int,
    ocr: OcrJob | None = None,
    parsed: Callable[[], None] | None = None,
) -> list[Chunk]:
    """A file's chunks of at most ``size`` characters (the encoder's ``max_chars`` or less);
    ``ocr``: scanned pages and images are read by OCR within it; ``parsed`` is told when the
    parser is done and chunking starts (the parse worker's heartbeat)."""
    from desktop_app.core.library.chunking import chunk_sections
    from desktop_app.core.library.parsers import IMAGE_SUFFIXES, parse_file

    path = real_path(path, knowledge_root(path, rel))  # parsers open by path: never by a link
    try:  # swapped for a pipe since it was hashed: parsers open by path, and must never block
        ensure_regular(path)
    except NotRegularFile as exc:
        raise ParseError(reasons.NOT_REGULAR) from exc
    limit = cfg.max_document_mb
    suffix = path.suffix.lower()
    if limit > 0 and suffix not in PARSED_SIZE_SUFFIXES and suffix not in IMAGE_SUFFIXES:
        _check_size(nbytes, limit)  # plain text: refuse before reading it into memory
    sections = parse_file(path, ocr)
    if parsed is not None:
        parsed()
    if limit > 0:
        _check_size(sum(len(s.text.encode("utf-8")) for s in sections), limit)
    chunks = chunk_sections(
        sections,
        doc_id,
        rel,
        strategy=cfg.chunker,
        size=size,
        overlap=min(cfg.chunk_overlap, size // 3),
        scope=scope_of(rel),
    )
    if not chunks:
        raise ParseError(reasons.EMPTY)
    return chunks


def _check_size(nbytes: int, limit_mb: float) -> None:
    if nbytes / 1e6 > limit_mb:
        raise ParseError(reasons.TOO_LARGE_TEXT, mb=nbytes / 1e6, limit_mb=limit_mb)


def knowledge_root(path: Path, rel: str) -> Path:
    """The knowledge folder that ``path``, listed as ``rel``, lies in (resolved)."""
    return path.parents[rel.count("/")].resolve()


def real_path(path: Path, root: Path) -> Path:
    """``path`` with its links resolved, for the parsers to open: a link swapped after the sync
    hashed the file then changes nothing; one that leads out of ``root`` (resolved) is refused."""
    from desktop_app.core.library.names import display_name, escape_name

    try:
        return resolve_inside(path, root)
    except OutsideFolder as exc:
        raise ParseError(reasons.LINK_OUTSIDE, target=display_name(escape_name(exc.target))) from exc
