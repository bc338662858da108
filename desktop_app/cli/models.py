"""`kdesk models [--json]` and `kdesk models fetch ROLE|all [--endpoint URL]`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from desktop_app.cli.common import common_flags, data_dir_of, open_desk


def register(subparsers) -> None:
    """Add the `models` command (and its `fetch` sub-command) to kdesk's argument parser."""
    p = subparsers.add_parser(
        "models",
        parents=[common_flags()],
        help="active and missing models, and why; `models fetch` downloads them",
        description="Show, for each role (embedding, reranker, chat, classifier, image), which model is active, "
        "which are missing and the command that installs them.",
    )
    p.set_defaults(func=status_command)
    sub = p.add_subparsers(dest="models_command", metavar="fetch")
    f = sub.add_parser(
        "fetch",
        parents=[common_flags()],
        help="download models listed in models/manifest.toml (resumable, sha256-checked)",
        description="Download a role's model (embedding, reranker, chat, image), a model id, or all of them from "
        "the Hugging Face hub or a mirror ($HF_ENDPOINT / --endpoint) into the models folder.",
    )
    f.add_argument("target", metavar="ROLE|all", help="embedding, reranker, chat, image, a model id, or all")
    f.add_argument("--endpoint", help="hub or mirror URL (default: $HF_ENDPOINT or https://huggingface.co)")
    f.add_argument(
        "--dest",
        type=Path,
        help="models folder to install into (default: $KDESK_MODELS or <data-dir>/models)",
    )
    f.add_argument("--force", action="store_true", help="download again even if already installed")
    f.set_defaults(func=fetch_command)


def status_command(args: argparse.Namespace) -> int:
    from desktop_app.core.models.registry import ManifestError
    from desktop_app.core.models.status import format_status

    try:
        with open_desk(args) as desk:  # what the app would run with this data folder's settings
            statuses = desk.model_status()
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

    dest = args.dest or default_dest(data_dir_of(args))
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
