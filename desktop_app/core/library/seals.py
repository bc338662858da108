"""Chunk seals: every chunk carries a keyed hash of what this library wrote (the store seals and checks
them; integrity.py checks a whole collection at each sync).

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
import os
import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from desktop_app.core.library import reasons
from desktop_app.core.library.chroma_client import StoreError
from desktop_app.core.library.datafolder import place_once
from desktop_app.core.messages import message

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
