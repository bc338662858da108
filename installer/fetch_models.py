#!/usr/bin/env python3
"""Download Knowledge Desk's optional models (the same as `kdesk models fetch ROLE|all`).

Usage: python installer/fetch_models.py ROLE|all [--endpoint URL] [--dest DIR] [--data-dir DIR] [--json]
ROLE is embedding, reranker, chat or image (or a model id from models/manifest.toml). Downloads are
resumable (run the same command again), checked against the manifest's sha256, and installed with
an atomic rename, so the app never loads a half-written model. HF_ENDPOINT selects a mirror.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

try:
    import desktop_app  # noqa: F401 - installed, or run from a checkout below
except ImportError:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from desktop_app.cli.models import fetch_command  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="fetch_models.py", description=__doc__.split("\n\n")[0])
    p.add_argument("target", metavar="ROLE|all", help="embedding, reranker, chat, image, a model id, or all")
    p.add_argument("--endpoint", help="hub or mirror URL (default: $HF_ENDPOINT or https://huggingface.co)")
    p.add_argument("--dest", type=Path, help="models folder (default: $KDESK_MODELS or <data-dir>/models)")
    p.add_argument("--data-dir", type=Path, help="the app's data folder (default: the platform's)")
    p.add_argument("--force", action="store_true", help="download again even if already installed")
    p.add_argument("--no-export", action="store_true", help="leave a reranker without its ONNX export")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    return fetch_command(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
