"""Models that failed when search called them (a reranker whose tokenizer and model disagree, an
embedder that cannot encode the question): search goes on without them for the rest of the
session, and the failure is remembered in the data folder so `kdesk models` and the status bar
say which model failed and why until its folder's files change or it works again."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

from desktop_app.core.messages import Text, message
from desktop_app.core.models import reasons

log = logging.getLogger(__name__)

FILE = "model_failures.json"
_MESSAGES = {"reranker": reasons.RERANKER_FAILED, "embedder": reasons.EMBEDDER_FAILED}
_lock = threading.Lock()
_session: dict[tuple[str, str], Text] = {}  # (role, model key) -> why, for this process


def describe(exc: BaseException) -> str:
    """The reason in one line: the exception's type and text, as the model library raised it."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _key(path: Path | str | None, name: str) -> str:
    return str(Path(path).resolve()) if path else name


def _stamp(path: Path | str | None) -> str:
    """The folder's files (name, size, mtime): a record holds only while they are unchanged."""
    if not path or not Path(path).is_dir():
        return ""
    try:
        files = sorted(p for p in Path(path).iterdir() if p.is_file())
        return ";".join(f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in files)
    except OSError:
        return ""


def _read(data_dir: Path | None) -> dict:
    if data_dir is None:
        return {}
    try:
        return json.loads((Path(data_dir) / FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _write(data_dir: Path | None, records: dict) -> None:
    if data_dir is None:
        return
    target = Path(data_dir) / FILE
    try:
        if not records:
            target.unlink(missing_ok=True)
            return
        tmp = target.with_suffix(".tmp")
        tmp.write_text(json.dumps(records, ensure_ascii=False, indent=1), encoding="utf-8")
        tmp.replace(target)
    except OSError as exc:  # a read-only data folder: the session still knows
        log.info("could not record a model failure in %s: %s", target, exc)


def record(role: str, name: str, path: Path | str | None, exc: BaseException, data_dir: Path | None) -> Text:
    """Mark ``role``'s model failed for this session and in the data folder; the reason users read."""
    error = describe(exc)
    why = message(_MESSAGES[role], model=name, error=error)
    key = _key(path, name)
    with _lock:
        _session[(role, key)] = why
        records = _read(data_dir)
        records[f"{role}:{key}"] = {"model": name, "error": error, "stamp": _stamp(path)}
        _write(data_dir, records)
    log.info("%s", why)  # the caller shows it: the answer's note, `kdesk search`, the status bar
    return why


def failure(role: str, name: str, path: Path | str | None, data_dir: Path | None) -> Text | None:
    """Why ``role``'s model failed, in this session or the last one that used it (files unchanged)."""
    key = _key(path, name)
    with _lock:
        if (role, key) in _session:
            return _session[(role, key)]
        rec = _read(data_dir).get(f"{role}:{key}")
    if not rec or rec.get("stamp", "") != _stamp(path):
        return None
    return message(_MESSAGES[role], model=rec.get("model", name), error=rec.get("error", ""))


def cleared(role: str, name: str, path: Path | str | None, data_dir: Path | None) -> None:
    """The model worked: forget a failure recorded by an earlier session."""
    key = f"{role}:{_key(path, name)}"
    with _lock:
        records = _read(data_dir)
        if key in records:
            del records[key]
            _write(data_dir, records)


def forget_session() -> None:
    """Tests: a new session."""
    with _lock:
        _session.clear()
