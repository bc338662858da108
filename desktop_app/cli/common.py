"""What every `kdesk` command shares: the common flags, the Desk, progress, JSON and stderr output."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

from desktop_app.core.config import Config, load_config
from desktop_app.core.desk import Desk


def common_flags() -> argparse.ArgumentParser:
    """--data-dir / --json / -v, accepted before or after any command (one parent parser for all).
    Their defaults are filled in by ``main`` (SUPPRESS keeps a value given before the command)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--data-dir", default=argparse.SUPPRESS, help="data folder (default: the user data folder)"
    )
    common.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print one JSON object"
    )
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS)
    return common


class CliTask:
    """TaskState drawing a tqdm progress bar on stderr (silent when stderr is not a terminal
    unless KDESK_PROGRESS=1)."""

    def __init__(self, desc: str, enabled: bool | None = None) -> None:
        self.desc = desc
        if enabled is None:
            enabled = sys.stderr.isatty() or os.environ.get("KDESK_PROGRESS") == "1"
        self.enabled = enabled
        self._bar = None
        self._stop = threading.Event()

    def progress(self, done: int, total: int, message: object = "") -> None:
        if not self.enabled or total <= 0:
            return
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=self.desc, unit="file", file=sys.stderr, leave=False)
        self._bar.total = total
        self._bar.n = done
        # A line inside a large file ("a.pdf: reading page 120 of 619, about 1 min left") whole,
        # a long one cut at its start. The CLI says it in English.
        message = str(message)
        self._bar.set_postfix_str(message if len(message) <= 72 else "…" + message[-71:], refresh=False)
        self._bar.refresh()

    def cancelled(self) -> bool:
        return self._stop.is_set()

    def stop(self) -> None:
        """Stop the work after the step in flight (Ctrl-C or SIGTERM, where a command asks for it)."""
        self._stop.set()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def eprint(*args: Any) -> None:
    print(*args, file=sys.stderr)


def emit_json(obj: Any) -> None:
    print(json.dumps(obj, ensure_ascii=False, indent=2, default=_json_default))


def _json_default(o: Any) -> Any:
    from desktop_app.core.messages import Message

    if isinstance(o, Message):  # the CLI's JSON says a message in English
        return str(o)
    if hasattr(o, "to_dict"):
        return o.to_dict()
    if hasattr(o, "__dataclass_fields__"):
        from dataclasses import asdict

        return asdict(o)
    if isinstance(o, Path):
        return str(o)
    try:
        import numpy as np

        if isinstance(o, np.generic):
            return o.item()
    except ImportError:
        pass
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def data_dir_of(args: argparse.Namespace) -> Path:
    from desktop_app.core.paths import default_data_dir

    given = getattr(args, "data_dir", None)  # the installer's fetch script passes its own namespace
    return Path(given).expanduser() if given else default_data_dir()


def load_cfg(args: argparse.Namespace) -> Config:
    return load_config(data_dir_of(args) / "config.toml")


def open_desk(args: argparse.Namespace, config: Config | None = None) -> Desk:
    """The Desk of the command's data folder (its config.toml unless ``config`` is given); every
    command gets its services from it. Use it as a context manager: it closes what it opened."""
    return Desk(
        data_dir_of(args),
        config if config is not None else load_cfg(args),
        on_wait=lambda message: eprint(f"{message}..."),  # another process holds the writer lock
        on_notice=lambda message: eprint(f"warning: {message}"),  # a damaged store set aside, rebuilt
    )
