"""Tamper detection for the vector store, at each sync: the collection's chunk counts against the
manifest, and one page of chunk seals (seals.py) in turn; what does not match is re-embedded from the
knowledge folder.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from desktop_app.core.library import reasons
from desktop_app.core.library.manifest import FAILED, INDEXED, PENDING, Manifest
from desktop_app.core.library.seals import Sealer
from desktop_app.core.library.store import ChromaStore
from desktop_app.core.messages import Text, message

log = logging.getLogger(__name__)

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
    """Embedded Chroma in two processes: vectors the other is still writing stayed unreadable
    through the store's refreshed retries (the text and metadata are not); a later sync checks them."""
    return type(exc).__name__ == "InternalError" and "Error finding id" in str(exc)


def check_store(store: ChromaStore, manifest: Manifest, collection_dir: Path) -> list[tuple[str, Text]]:
    """Compare the vector store with the manifest (the caller holds the writer lock): chunk counts
    every time, one page of seals in turn. Documents with missing, extra or altered chunks go back to
    pending, so this sync re-embeds them from the knowledge folder; chunks of no indexed document are
    deleted. Returns (name, why) of each document sent back.

    The first check of a collection written before seals existed seals its chunks as they are
    (trusted once, like the rest of that older release's store)."""
    sealer = store.sealer
    if sealer is None:
        return []
    state_path = collection_dir / STATE_FILE
    state = _read_state(state_path)
    entries = manifest.all()
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
    manifest.put_many([replace(indexed[d], status=PENDING) for d in why])
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
