"""`kdesk`: the command line over the same core as the desktop app.

Contract (DESIGN.md section 6): every command takes --data-dir and --json; --json prints one JSON
object on stdout; progress and errors go to stderr; exit 0 on success, 1 on failure, 2 on usage errors.
Feature modules add commands through `register(subparsers)` (see COMMAND_MODULES).
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from desktop_app.cli.argtypes import positive_int

# Feature modules that add subcommands; each exposes register(subparsers).
COMMAND_MODULES: list[str] = [
    "desktop_app.cli.models",
    "desktop_app.cli.ask",
    "desktop_app.cli.identify",
    "desktop_app.cli.bench_ui",
    "desktop_app.cli.bench_retrieval",
]

_EPILOG = """examples:
  kdesk                                   start the desktop app
  kdesk add ~/Documents/papers            copy a folder into the knowledge base and index it
  kdesk search "table of contents" --json
  kdesk list
"""


class CliTask:
    """TaskState drawing a tqdm progress bar on stderr (silent when stderr is not a terminal
    unless KDESK_PROGRESS=1)."""

    def __init__(self, desc: str, enabled: bool | None = None) -> None:
        self.desc = desc
        if enabled is None:
            enabled = sys.stderr.isatty() or os.environ.get("KDESK_PROGRESS") == "1"
        self.enabled = enabled
        self._bar = None

    def progress(self, done: int, total: int, message: str = "") -> None:
        if not self.enabled or total <= 0:
            return
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=self.desc, unit="file", file=sys.stderr, leave=False)
        self._bar.total = total
        self._bar.n = done
        self._bar.set_postfix_str(message[-40:], refresh=False)
        self._bar.refresh()

    def cancelled(self) -> bool:
        return False

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def eprint(*args: Any) -> None:
    print(*args, file=sys.stderr)


def emit_json(obj: Any) -> None:
    print(json.dumps(obj, ensure_ascii=False, indent=2, default=_json_default))


def _json_default(o: Any) -> Any:
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

    return Path(args.data_dir).expanduser() if args.data_dir else default_data_dir()


def load_cfg(args: argparse.Namespace):
    from desktop_app.core.config import load_config

    return load_config(data_dir_of(args) / "config.toml")


def open_kb(args: argparse.Namespace):
    from desktop_app.core.library.knowledge import KnowledgeBase

    kb = KnowledgeBase(data_dir_of(args), config=load_cfg(args))
    kb.on_wait = lambda message: eprint(f"{message}...")  # another process holds the writer lock
    return kb


# ---------------------------------------------------------------------------- commands
def _print_report(report, as_json: bool, verbose: bool = False) -> int:
    if as_json:
        emit_json(report.to_dict())
    else:
        for rel in report.added:
            print(f"added     {rel}")
        for rel in report.updated:
            print(f"updated   {rel}")
        for rel in report.removed:
            print(f"removed   {rel}")
        skipped = f", {len(report.skipped)} skipped" if report.skipped else ""
        hint = " (--verbose lists them)" if report.skipped and not verbose else ""
        print(
            f"{len(report.added)} added, {len(report.updated)} updated, {len(report.removed)} removed, "
            f"{len(report.unchanged)} unchanged, {len(report.failed)} failed{skipped}{hint}"
        )
        if verbose:
            for name, why in report.skipped:
                eprint(f"skipped   {name}: {why}")
    for name, err in report.failed:
        eprint(f"failed    {name}: {err}")
    return 0


def _run_indexing(args: argparse.Namespace, label: str, op) -> Any:
    """Run a KnowledgeBase indexing operation with a progress bar; always closes the KB."""
    kb = open_kb(args)
    task = CliTask(label)
    try:
        return op(kb, task)
    finally:
        task.close()
        kb.close()


def cmd_add(args: argparse.Namespace) -> int:
    paths = [Path(p) for p in args.paths]
    report = _run_indexing(args, "indexing", lambda kb, t: kb.add(paths, scope=args.scope, task=t))
    _print_report(report, args.json, args.verbose)
    # Per-file failures do not fail the batch; only "nothing could be added at all" does.
    ok = report.added or report.updated or report.unchanged
    return 0 if ok or not report.failed else 1


def cmd_sync(args: argparse.Namespace) -> int:
    return _print_report(_run_indexing(args, "syncing", lambda kb, t: kb.sync(task=t)), args.json, args.verbose)


def cmd_reindex(args: argparse.Namespace) -> int:
    report = _run_indexing(args, "re-indexing", lambda kb, t: kb.reindex(task=t))
    return _print_report(report, args.json, args.verbose)


def cmd_list(args: argparse.Namespace) -> int:
    kb = open_kb(args)
    try:
        docs = kb.list_documents()
    finally:
        kb.close()
    if args.json:
        emit_json({"documents": [d.to_dict() for d in docs]})
        return 0
    if not docs:
        print(f"no documents (knowledge folder: {kb.knowledge_dir})")
        return 0
    width = min(60, max(len(d.name) for d in docs))
    print(f"{'name':<{width}}  {'status':<8} {'chunks':>6} {'bytes':>10}  error")
    for d in docs:
        print(f"{d.name:<{width}}  {d.status:<8} {d.chunks:>6} {d.size:>10}  {d.error or ''}")
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    kb = open_kb(args)
    try:
        removed = kb.remove(args.names)
    finally:
        kb.close()
    missing = [
        n
        for n in args.names
        if not any(r == n.strip("/") or r.startswith(n.strip("/") + "/") for r in removed)
    ]
    if args.json:
        emit_json({"removed": removed, "not_found": missing})
    else:
        for r in removed:
            print(f"removed   {r}")
    for n in missing:
        eprint(f"not found: {n}")
    return 1 if missing else 0


def cmd_search(args: argparse.Namespace) -> int:
    kb = open_kb(args)
    try:
        hits = kb.search(args.query, top_k=args.top_k, scope=args.scope)
    finally:
        kb.close()
    if args.json:
        emit_json({"query": args.query, "hits": [h.to_dict() for h in hits]})
        return 0
    if not hits:
        print("no hits")
    for i, h in enumerate(hits, 1):
        where = h.source + (f", p. {h.page}" if h.page else "")
        text = " ".join(h.text.split())
        print(f"[{i}] {where}  (score {h.score:.3f})\n    {text[:300]}")
    return 0


def cmd_gui(args: argparse.Namespace) -> int:
    try:
        from desktop_app.gui.app import run
    except ImportError as exc:
        eprint(f"the desktop app is not available ({exc}); try `kdesk --help` for the commands")
        return 1
    return run(data_dir_of(args), load_cfg(args))


# ---------------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--data-dir", default=argparse.SUPPRESS, help="data folder (default: the user data folder)"
    )
    common.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print one JSON object"
    )
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS)

    parser = argparse.ArgumentParser(
        prog="kdesk",
        description="Knowledge Desk: a local knowledge assistant. With no command, starts the desktop app.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[common],
    )
    parser.set_defaults(func=cmd_gui)
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="index, search and answer in a temp folder, open the window, exit 0 if all work",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    parser._kdesk_common = common  # type: ignore[attr-defined]  # for feature modules

    p = sub.add_parser(
        "add", parents=[common], help="copy files/folders into the knowledge folder and index them"
    )
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--scope", default="shared", help="assistant scope (default: shared)")
    p.set_defaults(func=cmd_add)

    p = sub.add_parser("sync", parents=[common], help="index new/changed files, drop removed ones")
    p.set_defaults(func=cmd_sync)

    p = sub.add_parser("list", parents=[common], help="documents with status, chunks, size and errors")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("remove", parents=[common], help="delete documents and their chunks")
    p.add_argument("names", nargs="+", metavar="NAME")
    p.set_defaults(func=cmd_remove)

    p = sub.add_parser("reindex", parents=[common], help="rebuild the index from the knowledge folder")
    p.set_defaults(func=cmd_reindex)

    p = sub.add_parser("search", parents=[common], help="search the knowledge base")
    p.add_argument("query")
    p.add_argument("--top-k", type=positive_int, default=None, help="how many hits (default: retrieval.top_k)")
    p.add_argument("--scope", default=None, help="also search this assistant's scope")
    p.set_defaults(func=cmd_search)

    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["--chroma-server"]:  # the frozen build's entry for the GUI's Chroma child process
        from desktop_app.core.library.chroma_server import main as serve

        return serve(argv[1:])
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    # Global options may come before or after the command. Their defaults are filled in here, not
    # with set_defaults: parent parsers share Action objects, so a default set on the top-level
    # parser would overwrite a value given before the subcommand.
    for name, default in (("data_dir", None), ("json", False), ("verbose", False)):
        if not hasattr(args, name):
            setattr(args, name, default)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    from desktop_app.core.secrets import install_log_redaction

    install_log_redaction()  # API keys never reach a log line, whatever logs them
    if getattr(args, "self_test", False):
        from desktop_app.selftest import run_self_test

        return run_self_test()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    # Libraries' own chatter (weight-loading bars, recoverable PDF warnings) is not for users;
    # --verbose shows it.
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    if not args.verbose:
        for noisy in ("pypdf", "chromadb", "transformers", "sentence_transformers", "jieba", "bm25s"):
            logging.getLogger(noisy).setLevel(logging.ERROR)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        eprint("interrupted")
        return 130
    except BrokenPipeError:
        # The reader went away (`kdesk list --json | head`): stop quietly. Point stdout at devnull
        # so Python's own flush at exit does not complain about the closed pipe either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # a clear message, never a traceback, unless --verbose
        if args.verbose:
            raise
        from desktop_app.core.packages import MissingPackage

        eprint(f"error: {exc}" if isinstance(exc, MissingPackage) else f"error: {type(exc).__name__}: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
