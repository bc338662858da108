"""Tamper detection for the vector store: every chunk carries a keyed hash of what this library wrote.

Chroma does not keep one library's chunks from another client of the same server (a shared server
has no per-library access control, docs/shared-server.md), and an embedded store can be damaged on
disk. So each chunk's metadata carries ``kd_mac``: HMAC-SHA256, under a key that never leaves the
desktop (``<data-dir>/chunk-key``), of the chunk's id, its stored text, its other metadata and a
digest of its vector. A chunk read back whose MAC does not match (or, once the collection is sealed,
that has none) is not this library's: search leaves it out with a warning and the next sync
re-embeds its document from the knowledge folder.

The vector is covered by a digest of its components on a 2^-16 grid (of the unit vector), not of its
bytes: Chroma (cosine space) hands back a vector that differs from the one written by up to one
float32 ulp per component (measured: at most 1.3e-7 relative, embedded and over HTTP), so exact bytes
would fail on genuine chunks. A component closer to a rounding boundary than that drift could carry
is hashed by floor instead of round; their indices are stored (``kd_near``) and covered by the MAC.
The vector's length is hashed the same way. A forger can therefore move each unit-vector component
and the length by less than one grid step (1.5e-5), which changes a cosine by at most ~3e-4 at 384
dimensions: not enough to steer ranking.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from desktop_app.core.library import reasons
from desktop_app.core.library.chroma_client import StoreError
from desktop_app.core.library.datafolder import place_once
from desktop_app.core.messages import Text, message

if TYPE_CHECKING:
    from desktop_app.core.library.knowledge import KnowledgeBase
    from desktop_app.core.library.store import ChromaStore

log = logging.getLogger(__name__)

KEY_FILE = "chunk-key"  # in the data folder, beside library-id: not derived, never under index/
MAC_FIELD = "kd_mac"
NEAR_FIELD = "kd_near"
SEAL_FIELDS = (MAC_FIELD, NEAR_FIELD)
_VERSION = "kdesk-chunk-1"
_STEP = 2.0**-16  # grid of the unit vector's components in the vector digest
# Largest drift Chroma gives a component (relative 1.3e-7 measured; 8x that, plus an absolute floor).
_DRIFT_REL, _DRIFT_ABS = 1e-6, 1e-9


def chunk_key_of(data_dir: Path) -> bytes:
    """The library's chunk key: 32 random bytes made the first time (file mode 600), then only read."""
    path = Path(data_dir) / KEY_FILE
    if not path.exists():
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(secrets.token_hex(32) + "\n")
            f.flush()
            os.fsync(f.fileno())
        place_once(tmp, path)  # two processes starting at once agree on one key
    try:
        key = bytes.fromhex(path.read_text(encoding="ascii").strip())
    except (OSError, UnicodeDecodeError, ValueError):
        key = b""
    if len(key) != 32:  # never replaced behind the user's back: every chunk would look forged
        raise StoreError(message(reasons.CHUNK_KEY_DAMAGED, path=path))
    return key


def _vector_grid(vector: Any) -> np.ndarray:
    """The unit vector's components and the vector's length, in grid steps (float64). The length
    counts: the dense index (dense.py) takes stored vectors as they are, so a scaled one would
    scale its cosines."""
    v = np.asarray(vector, dtype=np.float64).ravel()
    norm = float(np.linalg.norm(v))
    return np.append(v / norm if norm > 0 else v, norm) / _STEP


def _near_boundary(grid: np.ndarray) -> list[int]:
    """Components that Chroma's drift could push across a rounding boundary (hashed by floor)."""
    margin = (_DRIFT_REL * np.abs(grid) * _STEP + _DRIFT_ABS) / _STEP
    gap = np.abs(np.abs(grid - np.floor(grid)) - 0.5)  # distance to k + 0.5, in steps
    return [int(i) for i in np.flatnonzero(gap <= margin)]


def _vector_digest(grid: np.ndarray, near: list[int]) -> bytes:
    ints = np.rint(grid)
    if near:
        ints[near] = np.floor(grid[near])
    return hashlib.sha256(ints.astype("<i8").tobytes()).digest()


def _near_text(near: list[int]) -> str:
    return ",".join(map(str, near))


def _parse_near(text: Any) -> list[int] | None:
    if not isinstance(text, str):
        return None
    try:
        return [int(i) for i in text.split(",")] if text else []
    except ValueError:
        return None


@dataclass(frozen=True)
class Sealer:
    """Seals chunks on the way into the store and checks them on the way out."""

    key: bytes

    @property
    def fingerprint(self) -> str:
        """Names the key without revealing it (kept beside the manifest: a changed key is noticed)."""
        return hmac.new(self.key, b"kdesk-chunk-key-fingerprint", hashlib.sha256).hexdigest()[:32]

    def _mac(self, chunk_id: str, text: str, meta: Mapping[str, Any], digest: bytes) -> str:
        rest = {k: v for k, v in meta.items() if k != MAC_FIELD}
        # The strings as stored (ensure_ascii: any code point, a lone surrogate too, has one spelling).
        head = json.dumps([_VERSION, chunk_id, text, rest], sort_keys=True, ensure_ascii=True)
        return hmac.new(self.key, head.encode("ascii") + b"\n" + digest, hashlib.sha256).hexdigest()

    def seal(self, chunk_id: str, text: str, meta: Mapping[str, Any], vector: Any) -> dict[str, Any]:
        """``meta`` with the seal fields added."""
        grid = _vector_grid(vector)
        near = _near_boundary(grid)
        out = {k: v for k, v in meta.items() if k not in SEAL_FIELDS}
        out[NEAR_FIELD] = _near_text(near)
        out[MAC_FIELD] = self._mac(chunk_id, text, out, _vector_digest(grid, near))
        return out

    def sealed(self, meta: Mapping[str, Any] | None) -> bool:
        """Whether the chunk carries a seal at all (right or wrong)."""
        return bool(meta) and MAC_FIELD in meta

    def check(self, chunk_id: str, text: Any, meta: Mapping[str, Any] | None, vector: Any) -> bool:
        """Whether the chunk is exactly what this library sealed (text, metadata and vector)."""
        if not meta or not isinstance(text, str) or vector is None:
            return False
        mac, near = meta.get(MAC_FIELD), _parse_near(meta.get(NEAR_FIELD))
        if not isinstance(mac, str) or near is None:
            return False
        grid = _vector_grid(vector)
        if any(not 0 <= i < len(grid) for i in near):
            return False
        want = self._mac(chunk_id, text, meta, _vector_digest(grid, near))
        return hmac.compare_digest(mac, want)


# -- the sync's check ----------------------------------------------------------------------------

SAMPLE_CHUNKS = 256  # seals checked per sync, in turn through the collection
STATE_FILE = "integrity.json"  # beside the manifest: the key's fingerprint once sealed, the next offset


def doc_of_chunk(chunk_id: str) -> str:
    """A chunk's document by its id (chunking.py's "<doc id>-chunk-<n>"): ids are what the library
    asked for, metadata is what the store says."""
    return chunk_id.rsplit("-chunk-", 1)[0]


def _read_state(path: Path) -> dict[str, Any]:
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
        return state if isinstance(state, dict) else {}
    except (OSError, ValueError):
        return {}


def _write_state(path: Path, state: dict[str, Any]) -> None:
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    tmp.write_text(json.dumps(state), encoding="utf-8")
    os.replace(tmp, path)


def is_sealed(store: ChromaStore, collection_dir: Path) -> bool:
    """Whether every chunk of the collection carries a seal under this key (unsealed ones are foreign).
    A new, empty collection is sealed from the start."""
    path = collection_dir / STATE_FILE
    state = _read_state(path)
    if store.sealer is None:
        return False
    if "sealed" not in state and store.count() == 0:
        collection_dir.mkdir(parents=True, exist_ok=True)
        _write_state(path, {"sealed": store.sealer.fingerprint, "next": 0})
        return True
    return state.get("sealed") == store.sealer.fingerprint


def _unreadable_vectors(exc: BaseException) -> bool:
    """Embedded Chroma in two processes: one cannot read the vectors the other wrote until it
    reopens (the text and metadata it can); the seals are checked by a later sync."""
    return type(exc).__name__ == "InternalError" and "Error finding id" in str(exc)


def check_store(kb: KnowledgeBase) -> list[tuple[str, Text]]:
    """Compare the vector store with the manifest (the caller holds the writer lock): chunk counts
    every time, one page of seals in turn. Documents with missing, extra or altered chunks go back to
    pending, so this sync re-embeds them from the knowledge folder; chunks of no indexed document are
    deleted. Returns (name, why) of each document sent back.

    The first check of a collection written before seals existed seals its chunks as they are
    (trusted once, like the rest of that older release's store)."""
    from desktop_app.core.library.manifest import FAILED, INDEXED, PENDING

    store = kb.store
    sealer = store.sealer
    if sealer is None:
        return []
    state_path = kb.collection_dir / STATE_FILE
    state = _read_state(state_path)
    entries = kb.manifest.all()
    by_doc = {e.doc_id: e for e in entries.values()}
    indexed = {e.doc_id: e for e in entries.values() if e.kind == "text" and e.status == INDEXED}
    why: dict[str, Text] = {}
    foreign: list[str] = []  # chunk ids to delete

    sealed = state.get("sealed")
    if sealed not in (None, sealer.fingerprint):  # the key file was replaced
        why = dict.fromkeys(indexed, message(reasons.REPAIR_KEY))
    elif sealed is None:
        try:
            _seal_existing(store, sealer, foreign)
            sealed = sealer.fingerprint
        except Exception as exc:
            if not _unreadable_vectors(exc):
                raise
            log.info("chunk seals not checked this time: %s", exc)
    store.strict = sealed is not None

    n = store.count()
    if n != sum(e.chunks for e in indexed.values()):
        counts, undocumented = store.doc_counts()
        foreign += undocumented
        for doc, e in indexed.items():
            if counts.get(doc, 0) != e.chunks:
                why.setdefault(
                    doc, message(reasons.REPAIR_MISSING, found=counts.get(doc, 0), expected=e.chunks)
                )
        stray = [
            d
            for d in counts
            if d and (d not in by_doc or by_doc[d].status == FAILED or by_doc[d].kind != "text")
        ]
        if stray:
            store.delete_docs(stray)
    start = int(state.get("next", 0) or 0)
    start = start if 0 <= start < n else 0
    try:
        rows = store.page(start, SAMPLE_CHUNKS) if n and sealed else []
    except Exception as exc:
        if not _unreadable_vectors(exc):
            raise
        log.info("chunk seals not checked this time: %s", exc)
        rows = []
    for cid, text, meta, vec in rows:
        if not store.genuine(cid, text, meta, vec):
            foreign.append(cid)
    for cid in foreign:
        doc = doc_of_chunk(cid)
        if doc in indexed:
            why.setdefault(doc, message(reasons.REPAIR_CHANGED))
    if foreign:
        store.delete_ids(sorted(set(foreign)))
    following = start + len(rows)
    if sealed:
        _write_state(state_path, {"sealed": sealer.fingerprint, "next": following if following < n else 0})

    if not why:
        return []
    kb.manifest.put_many([replace(indexed[d], status=PENDING) for d in why])
    log.warning("%s", message(reasons.REPAIRED, count=len(why), location=store.location))
    return sorted((indexed[d].name, reason) for d, reason in why.items())


def _seal_existing(store: ChromaStore, sealer: Sealer, foreign: list[str], page: int = 1000) -> None:
    """Seal the chunks an older release wrote (no seal yet), as they are; a wrong seal is foreign."""
    offset = 0
    while True:
        rows = store.page(offset, page)
        ids, metas = [], []
        for cid, text, meta, vec in rows:
            if not sealer.sealed(meta):
                ids.append(cid)
                metas.append(sealer.seal(cid, text or "", meta, vec))
            elif not sealer.check(cid, text, meta, vec):
                foreign.append(cid)
        if ids:
            store.update_metadatas(ids, metas)
        if len(rows) < page:
            return
        offset += page
