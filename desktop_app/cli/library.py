"""`kdesk add|sync|reindex|list|remove|search`: the knowledge base from the command line."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from desktop_app.cli.argtypes import positive_int
from desktop_app.cli.common import CliTask, common_flags, emit_json, eprint, open_desk
from desktop_app.core.library.documents import page_label
from desktop_app.core.library.knowledge import KnowledgeBase, SyncReport
from desktop_app.core.library.names import display_name as shown
from desktop_app.core.library.names import name_fields


def register(subparsers: argparse._SubParsersAction) -> None:
    common = common_flags()
    p = subparsers.add_parser(
        "add", parents=[common], help="copy files/folders into the knowledge folder and index them"
    )
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--scope", default="shared", help="the scope (collection) to add to (default: shared)")
    p.set_defaults(func=cmd_add)

    p = subparsers.add_parser("sync", parents=[common], help="index new/changed files, drop removed ones")
    p.add_argument(
        "--retry-failed",
        action="store_true",
        help="read the files that failed again (otherwise they are retried only once they change)",
    )
    p.set_defaults(func=cmd_sync)

    p = subparsers.add_parser("list", parents=[common], help="documents with status, chunks, size and errors")
    p.set_defaults(func=cmd_list)

    p = subparsers.add_parser("remove", parents=[common], help="delete documents and their chunks")
    p.add_argument("names", nargs="+", metavar="NAME")
    p.set_defaults(func=cmd_remove)

    p = subparsers.add_parser("reindex", parents=[common], help="rebuild the index from the knowledge folder")
    p.set_defaults(func=cmd_reindex)

    p = subparsers.add_parser("search", parents=[common], help="search the knowledge base")
    p.add_argument("query")
    p.add_argument(
        "--top-k", type=positive_int, default=None, help="how many hits (default: retrieval.top_k)"
    )
    p.add_argument("--scope", default=None, help="also search this scope's own documents")
    p.set_defaults(func=cmd_search)


def _print_report(
    report: SyncReport, as_json: bool, verbose: bool = False, list_skipped: bool = False
) -> int:
    """Print what became of each file; skipped files are counted, and listed with their reason
    when ``list_skipped`` (add: the user named them just now) or ``verbose``."""
    verbose = verbose or list_skipped
    if as_json:
        emit_json(report.to_dict())
    else:
        failed = {name for name, _err in report.failed}
        for label, rels in (("added", report.added), ("updated", report.updated)):
            for rel in (r for r in rels if r not in failed):  # a failed one is said below, with why
                what = report.outcome(rel)
                print(f"{label:<9} {shown(rel)}" + (f"  ({what})" if what else ""))
        for rel in report.removed:
            print(f"removed   {shown(rel)}")
        skipped = f", {len(report.skipped)} skipped" if report.skipped else ""
        hint = " (--verbose lists them)" if report.skipped and not verbose else ""
        added = sum(r not in failed for r in report.added)
        updated = sum(r not in failed for r in report.updated)
        print(
            f"{added} added, {updated} updated, {len(report.removed)} removed, "
            f"{len(report.unchanged)} unchanged, {len(report.failed)} failed{skipped}{hint}"
        )
        if verbose:
            for name, why in report.skipped:
                eprint(f"skipped   {shown(name)}: {why}")
    for name, err in report.failed:
        eprint(f"failed    {shown(name)}: {err}")
    for name, why in report.repaired:  # chunks missing or altered in the vector store
        eprint(f"repaired  {shown(name)}: {why}")
    return 0


def _run_indexing(
    args: argparse.Namespace, label: str, op: Callable[[KnowledgeBase, CliTask], SyncReport]
) -> SyncReport:
    """Run an indexing operation with a progress bar; always closes what it opened."""
    task = CliTask(label)
    try:
        with open_desk(args) as desk:
            return op(desk.kb, task)
    finally:
        task.close()


def cmd_add(args: argparse.Namespace) -> int:
    paths = [Path(p) for p in args.paths]
    report = _run_indexing(args, "indexing", lambda kb, t: kb.add(paths, scope=args.scope, task=t))
    _print_report(report, args.json, args.verbose, list_skipped=True)
    # Per-file failures do not fail the batch; only "nothing could be added at all" does. A failed
    # file is in report.added (or unchanged) too, as the manifest lists it: it is not a success.
    failed = {name for name, _ in report.failed}
    ok = any(r not in failed for r in (*report.added, *report.updated, *report.unchanged))
    return 0 if ok or not (report.failed or report.skipped) else 1


def cmd_sync(args: argparse.Namespace) -> int:
    return _print_report(
        _run_indexing(args, "syncing", lambda kb, t: kb.sync(task=t, retry_failed=args.retry_failed)),
        args.json,
        args.verbose,
    )


def cmd_reindex(args: argparse.Namespace) -> int:
    with open_desk(args) as desk:
        switching = desk.switch_progress() is not None
    if switching:  # another embedding model was chosen: this continues filling its index
        return run_fill(args)
    report = _run_indexing(args, "re-indexing", lambda kb, t: kb.reindex(task=t))
    return _print_report(report, args.json, args.verbose)


def run_fill(args: argparse.Namespace) -> int:
    """Fill the pending embedding-model switch with a progress bar (library/switching.py); Ctrl-C
    or SIGTERM stops it after the step in flight, and running `kdesk reindex` again continues."""
    import signal

    from desktop_app.core.library import reasons
    from desktop_app.core.messages import message
    from desktop_app.core.tasks import Cancelled

    task = CliTask("switching")

    def stop(*_: object) -> None:
        if task.cancelled():  # asked twice (loading a model sees no step): stop at once
            raise KeyboardInterrupt
        task.stop()

    before = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with open_desk(args) as desk:

            def told(state) -> None:  # a line per batch where no bar is drawn (logs, pipes)
                if args.verbose and not task.enabled:
                    eprint(state.line())

            try:
                took_over = desk.fill_switch(task, on_batch=told) is not None
            except Cancelled:
                state = desk.switch_progress()
                task.close()
                if state is not None:
                    eprint(message(reasons.SWITCH_STOPPED, done=state.done, total=state.total))
                return 130
            state = desk.switch_progress()
            total = len(desk.kb.list_documents())
            name = desk.kb.embedder_name
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        task.close()
    if args.json:
        emit_json({"switched": took_over, "model": name, "pending": state.to_dict() if state else None})
    elif took_over:
        print(message(reasons.SWITCH_DONE, model=name, total=total))
    elif state is not None:
        print(state.status())
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    with open_desk(args) as desk:
        docs = desk.kb.list_documents()
    if args.json:
        # Names as shown (U+FFFD for bytes that are not UTF-8), with name_utf8 and the escaped form.
        emit_json({"documents": [d.to_dict() | name_fields(d.name) | {"scope": shown(d.scope)} for d in docs]})
        return 0
    if not docs:
        print(f"no documents (knowledge folder: {desk.knowledge_dir})")
        return 0
    width = min(60, max(len(shown(d.name)) for d in docs))
    print(f"{'name':<{width}}  {'status':<8} {'chunks':>6} {'bytes':>10}  error")
    for d in docs:
        print(f"{shown(d.name):<{width}}  {d.status:<8} {d.chunks:>6} {d.size:>10}  {d.error or ''}")
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    from desktop_app.core.library.folder import AmbiguousName, match_one
    from desktop_app.core.library.names import escape_name

    def designated(arg: str, names: list[str]) -> list[str]:
        # The file's own name first (bytes that are not UTF-8 arrive as os.fsdecode gives them, a
        # real "␛" is a real "␛"); then the escaped or shown form, a folder, a glob (folder.match_one).
        own = escape_name(arg)
        return (match_one(own, names) if own != arg else []) or match_one(arg, names)

    with open_desk(args) as desk:
        names = list(desk.kb.manifest.all())
        try:
            found = {n: designated(n, names) for n in args.names}
            missing = [shown(escape_name(n)) for n, got in found.items() if not got]
            removed = desk.kb.remove(sorted({d for got in found.values() for d in got}))
        except AmbiguousName as exc:
            eprint(f"error: {exc.name} names {len(exc.names)} documents; give one of these instead:")
            for n in exc.names:
                eprint(f"  {n}")
            return 2
    if args.json:
        emit_json({"removed": [shown(r) for r in removed], "not_found": missing})
    else:
        for r in removed:
            print(f"removed   {shown(r)}")
    for n in missing:
        eprint(f"not found: {n}")
    return 1 if missing else 0


def cmd_search(args: argparse.Namespace) -> int:
    from desktop_app.core.library import reasons
    from desktop_app.core.library.knowledge import EMPTY_LIBRARY

    with open_desk(args) as desk:
        empty = desk.kb.is_empty()  # then search loads nothing and finds nothing: say why
        hits = desk.kb.search(args.query, top_k=args.top_k, scope=args.scope)
        warnings = desk.kb.search_warnings()  # tampered chunks left out, failed models
        failed = [str(w) for w in desk.kb.model_failures()]  # search went on without them
        # ... and without Chroma, for a full disk (answered from what it had applied: store.py)
        failed += [
            str(w) for w in desk.kb.search_notes() if getattr(w, "code", "") == reasons.DISK_FULL_SEARCH
        ]
    if args.json:
        emit_json(
            {"query": args.query, "hits": [h.to_dict() | name_fields(h.source, "source") for h in hits]}
            | ({"note": str(EMPTY_LIBRARY)} if empty else {})
            | ({"warnings": warnings} if warnings else {})
        )
        return 0
    for w in warnings + [f for f in failed if f not in warnings]:
        eprint(f"warning: {w}")
    if empty:
        print(EMPTY_LIBRARY)
    elif not hits:
        print("no hits")
    for i, h in enumerate(hits, 1):
        where = shown(h.source) + (f", {page_label(h.source, h.page)}" if h.page else "")
        text = " ".join(h.text.split())
        print(f"[{i}] {where}  (score {h.score:.3f})\n    {text[:300]}")
    return 0
