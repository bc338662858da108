"""API keys and server tokens: in the system keyring where a real one exists, else in config.toml
with a warning.

Keys are never logged: ``install_log_redaction()`` wraps the log-record factory so every record, from
any logger and to any handler, has known keys and key-shaped strings masked before it is formatted.

Names are config fields, ``"llm.api_key"``, ``"embedding.api_key"``, ``"index.chroma_token"`` (a
shared Chroma server's token, docs/shared-server.md) and ``"retrieval.reranker_api_key"`` (a rerank
server's). A key typed into config.toml by hand still works
(the file wins, because it is what the user can see); ``set_api_key`` moves keys into the keyring and
blanks the file's copy when a keyring is there.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from pathlib import Path
from typing import Any

from desktop_app.core.config import Config, load_config, save_config

log = logging.getLogger(__name__)

SERVICE = "knowledge-desk"
KEY_FIELDS = ("llm.api_key", "embedding.api_key", "index.chroma_token", "retrieval.reranker_api_key")
MASK = "***"

# Shapes of keys worth masking even when we never saw the value (OpenAI/Anthropic/HF/Bearer tokens).
_KEY_PATTERNS = [
    re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_\-]{12,}"),
    re.compile(r"\bhf_[A-Za-z0-9]{20,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-~+/=]{8,}"),
    re.compile(r"(?i)((?:api[_-]?key|authorization|token|[?&]key)[\"']?\s*[:=]\s*[\"']?)[^\s\"',}&]{6,}"),
]

_known: set[str] = set()
_known_lock = threading.Lock()


def remember_secret(value: str) -> None:
    """Mask this exact value in every log record from now on (values shorter than 6 chars are ignored)."""
    if value and len(value) >= 6:
        with _known_lock:
            _known.add(value)


def redact(text: str) -> str:
    """The text with known keys and key-shaped strings replaced by ***."""
    if not text:
        return text
    with _known_lock:
        known = sorted(_known, key=len, reverse=True)
    for value in known:
        if value in text:
            text = text.replace(value, MASK)
    for pattern in _KEY_PATTERNS:
        if pattern.groups:
            text = pattern.sub(lambda m: (m.group(1) if m.lastindex else "") + MASK, text)
        else:
            text = pattern.sub(MASK, text)
    return text


def _redact_record(record: logging.LogRecord) -> None:
    """Mask keys in the record's message and traceback text, in place."""
    try:
        message = record.getMessage()
    except Exception:  # a bad format string is logging's problem, not ours
        return
    clean = redact(message)
    if clean != message:
        record.msg, record.args = clean, ()
    if record.exc_info and not record.exc_text:
        record.exc_text = logging.Formatter().formatException(record.exc_info)
    if record.exc_text:
        record.exc_text = redact(record.exc_text)


_installed = False


def install_log_redaction() -> None:
    """Mask keys in every log record, whatever logger or handler (idempotent; call at start-up)."""
    global _installed
    if _installed:
        return
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        _redact_record(record)
        return record

    logging.setLogRecordFactory(factory)
    _installed = True


# -- keyring -----------------------------------------------------------------------------------------


def keyring_available() -> bool:
    """True when keyring has a real backend (not the fail/null one a headless Linux box gets)."""
    if os.environ.get("KDESK_NO_KEYRING"):
        return False
    try:
        import keyring
        from keyring.backends import chainer, fail
    except ImportError:
        return False
    try:
        backend = keyring.get_keyring()
    except Exception:
        return False
    if isinstance(backend, fail.Keyring) or "null" in type(backend).__module__:
        return False
    if isinstance(backend, chainer.ChainerBackend) and not backend.backends:
        return False
    try:
        return float(getattr(backend, "priority", 0)) > 0
    except Exception:
        return True


def _section_field(name: str) -> tuple[str, str]:
    if name not in KEY_FIELDS:
        raise ValueError(f"unknown key name {name!r}; expected one of {', '.join(KEY_FIELDS)}")
    section, field = name.split(".", 1)
    return section, field


def get_api_key(cfg: Config, name: str) -> str:
    """The key for ``name``: config.toml if set there, else the keyring, else "". Remembered for redaction."""
    section, field = _section_field(name)
    value = str(getattr(getattr(cfg, section), field) or "")
    if not value and keyring_available():
        try:
            import keyring

            value = keyring.get_password(SERVICE, name) or ""
        except Exception as exc:
            log.warning("could not read %s from the system keyring: %s", name, type(exc).__name__)
            value = ""
    remember_secret(value)
    return value


def set_api_key(config_path: Path, name: str, value: str) -> str:
    """Store a key; returns where it went: "keyring" or "config". Blank value deletes it."""
    section, field = _section_field(name)
    remember_secret(value)
    cfg = load_config(config_path)
    where = "config"
    if keyring_available():
        try:
            import keyring

            if value:
                keyring.set_password(SERVICE, name, value)
            else:
                try:
                    keyring.delete_password(SERVICE, name)
                except Exception:  # nothing stored: fine
                    pass
            where = "keyring"
        except Exception as exc:
            log.warning(
                "the system keyring refused %s (%s); falling back to config.toml", name, type(exc).__name__
            )
    if where == "keyring":
        setattr(getattr(cfg, section), field, "")  # one copy only, in the safer place
    else:
        setattr(getattr(cfg, section), field, value)
        if value:
            log.warning(
                "no system keyring available: %s is stored in %s in plain text (readable by anyone who can "
                "read that file); install a keyring backend (e.g. gnome-keyring, KWallet) to keep it safer",
                name,
                config_path,
            )
    save_config(cfg, config_path)
    if where == "config":
        try:
            os.chmod(config_path, 0o600)  # at least not world-readable
        except OSError:
            pass
    return where


def redacted_config_dict(cfg: Config) -> dict[str, Any]:
    """cfg.to_dict() with every key field masked: for `--json` output, diagnostics and bug reports."""
    d = cfg.to_dict()
    for name in KEY_FIELDS:
        section, field = name.split(".", 1)
        if d.get(section, {}).get(field):
            d[section][field] = MASK
    return d
