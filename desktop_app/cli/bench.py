"""The shared `kdesk bench` command: each benchmark adds its own sub-command to it.

Feature modules call ``get_bench_subparsers(subparsers)`` from their ``register`` and add a
parser to what it returns; the `bench` parser is created once, whichever module asks first.
"""

from __future__ import annotations

import argparse


def common_parent() -> argparse.ArgumentParser:
    """--data-dir / --json / -v accepted after a sub-command too (defaults stay the top level's)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir", default=argparse.SUPPRESS, help="data folder")
    common.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print one JSON object"
    )
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS)
    return common


def get_bench_subparsers(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """The `bench` command's sub-parsers, created on the first call and reused after."""
    existing = getattr(subparsers, "_kdesk_bench_subparsers", None)
    if existing is not None:
        return existing
    bench = subparsers.add_parser("bench", parents=[common_parent()], help="benchmarks (see docs/)")

    def no_benchmark(args: argparse.Namespace) -> int:
        bench.print_help()
        return 2

    bench.set_defaults(func=no_benchmark)
    nested = bench.add_subparsers(dest="benchmark", metavar="BENCHMARK")
    subparsers._kdesk_bench_subparsers = nested  # type: ignore[attr-defined]
    return nested
