"""`kdesk models [--json]` and `kdesk models fetch ROLE|all [--endpoint URL]`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from desktop_app.core.config import load_config
from desktop_app.core.paths import default_data_dir


def _add_common(parser: argparse.ArgumentParser) -> None:
    # --json and --data-dir are global in cli.py too; SUPPRESS keeps a value given before the command.
    for flag, kwargs in (
        ("--json", {"action": "store_true", "help": "print one JSON object on stdout"}),
        ("--data-dir", {"help": "data folder (default: the user data folder)"}),
    ):
        try:
            parser.add_argument(flag, default=argparse.SUPPRESS, **kwargs)
        except argparse.ArgumentError:
            pass  # already added by a shared parent parser


def register(subparsers) -> None:
    """Add the `models` command (and its `fetch` sub-command) to kdesk's argument parser."""
    p = subparsers.add_parser(
        "models",
        help="active and missing models, and why; `models fetch` downloads them",
        description="Show, for each role (embedding, reranker, chat, classifier), which model is active, "
        "which are missing and the command that installs them.",
    )
    _add_common(p)
    p.set_defaults(func=status_command)
    sub = p.add_subparsers(dest="models_command", metavar="fetch")
    f = sub.add_parser(
        "fetch",
        help="download models listed in models/manifest.toml (resumable, sha256-checked)",
        description="Download a role's model (embedding, reranker, chat), a model id, or all of them from "
        "the Hugging Face hub or a mirror ($HF_ENDPOINT / --endpoint) into the models folder.",
    )
    f.add_argument("target", metavar="ROLE|all", help="embedding, reranker, chat, a model id, or all")
    f.add_argument("--endpoint", help="hub or mirror URL (default: $HF_ENDPOINT or https://huggingface.co)")
    f.add_argument(
        "--dest",
        type=Path,
        help="models folder to install into (default: $KDESK_MODELS or <data-dir>/models)",
    )
    f.add_argument("--force", action="store_true", help="download again even if already installed")
    _add_common(f)
    f.set_defaults(func=fetch_command)


def _data_dir(args: argparse.Namespace) -> Path:
    d = getattr(args, "data_dir", None)
    return Path(d).expanduser() if d else default_data_dir()


def status_command(args: argparse.Namespace) -> int:
    from desktop_app.core.models.registry import ManifestError, format_status, model_status

    data_dir = _data_dir(args)
    try:
        cfg = load_config(data_dir / "config.toml")
        statuses = model_status(data_dir, cfg)
    except (ManifestError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if getattr(args, "json", False):
        print(json.dumps({"roles": [s.to_dict() for s in statuses]}, ensure_ascii=False, indent=2))
    else:
        print(format_status(statuses))
    return 0


def fetch_command(args: argparse.Namespace) -> int:
    from desktop_app.core.models.fetch import FetchError, default_dest, fetch
    from desktop_app.core.models.registry import ManifestError
    from desktop_app.core.tasks import Cancelled

    dest = args.dest or default_dest(_data_dir(args))
    try:
        results = fetch(args.target, dest, endpoint=args.endpoint, force=args.force)
    except (FetchError, ManifestError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, Cancelled):
        print("interrupted: run the same command again to resume", file=sys.stderr)
        return 1
    if getattr(args, "json", False):
        print(json.dumps({"fetched": [r.to_dict() for r in results]}, ensure_ascii=False, indent=2))
    else:
        for r in results:
            unchecked = [f.path for f in r.files if not f.verified]
            note = (
                f" (no published sha256 for {', '.join(unchecked)}: recorded as observed)"
                if unchecked
                else ""
            )
            print(f"{r.model_id}: {r.status} in {r.folder}{note}")
    return 0
