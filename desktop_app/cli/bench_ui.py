"""`kdesk bench ui`: UI stalls while files index in the background (see desktop_app/bench/ui.py)."""

from __future__ import annotations

import argparse

from desktop_app.cli.argtypes import positive_int
from desktop_app.cli.bench import common_parent, get_bench_subparsers


def register(subparsers) -> None:
    p = get_bench_subparsers(subparsers).add_parser(
        "ui",
        parents=[common_parent()],
        help="UI heartbeat gaps while N small files index (goal: worst gap <= 100 ms)",
        description="Opens the real main window (offscreen without a display), runs a heartbeat timer on "
        "the UI thread and adds N generated text files through the knowledge panel in the background; "
        "prints the worst and 99th-percentile gap between heartbeats. Works in a temporary folder; "
        "--data-dir only supplies config.toml (embedding model and index settings).",
    )
    p.add_argument("--files", type=positive_int, default=1000, help="how many small files to index (default 1000)")
    p.add_argument("--interval-ms", type=positive_int, default=10, help="heartbeat interval (default 10)")
    p.set_defaults(func=cmd_bench_ui)


def cmd_bench_ui(args: argparse.Namespace) -> int:
    from desktop_app.bench.ui import format_result, run_ui_bench
    from desktop_app.cli.main import emit_json, load_cfg

    if args.files < 1 or args.interval_ms < 1:
        print("--files and --interval-ms must be positive")
        return 2
    config = load_cfg(args) if args.data_dir else None
    result = run_ui_bench(args.files, interval_ms=args.interval_ms, config=config)
    if args.json:
        emit_json(result.to_dict())
    else:
        print(format_result(result))
    return 0 if result.indexed == result.files else 1
