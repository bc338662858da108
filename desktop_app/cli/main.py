"""`kdesk`: the command line over the same core as the desktop app.

Contract (docs/architecture.md): every command takes --data-dir and --json; --json prints one JSON
object on stdout; progress and errors go to stderr; exit 0 on success, 1 on failure, 2 on usage errors.
Each command group is a module with `register(subparsers)` (see COMMAND_MODULES); other packages add
commands the same way through the `kdesk.commands` entry points (the lab's `kdesk bench`), loaded only
when their command is run.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from importlib.metadata import EntryPoint, entry_points

from desktop_app.cli.common import common_flags, data_dir_of, eprint, load_cfg

# Feature modules that add subcommands; each exposes register(subparsers).
COMMAND_MODULES: list[str] = [
    "desktop_app.cli.library",
    "desktop_app.cli.ask",
    "desktop_app.cli.chats",
    "desktop_app.cli.identify",
    "desktop_app.cli.models",
]
# Entry-point group through which an installed package adds a command: NAME = "module:register".
COMMAND_ENTRY_POINTS = "kdesk.commands"

_EPILOG = """examples:
  kdesk                                   start the desktop app
  kdesk add ~/Documents/papers            copy a folder into the knowledge base and index it
  kdesk search "table of contents" --json
  kdesk list
  kdesk ask --chat trip "Who was Abraham Lincoln?"   continue (or start) the saved conversation 'trip'
  kdesk identify --chat walk bird.jpg  a photo into the conversation 'walk'; `ask --chat walk` follow-ups refer to it
  kdesk chats export trip --out trip.md
"""


def cmd_gui(args: argparse.Namespace) -> int:
    from desktop_app.core.system_libs import display_problem, xcb_problem

    # Before Qt, which would abort (exit 134): with no display to open on (a terminal over SSH), or
    # naming no package when a system library is missing.
    problem = display_problem() or xcb_problem()
    if problem is not None:
        eprint(f"error: {problem}")
        return 1
    try:
        from desktop_app.gui.app import language_in, run, show_startup_error
    except ImportError as exc:
        eprint(f"the desktop app is not available ({exc}); try `kdesk --help` for the commands")
        return 1
    from desktop_app.core.config import ConfigError

    try:
        config = load_cfg(args)
    except ConfigError as exc:  # said on stderr and in a window, in the file's ui.language
        eprint(f"error: {exc}")
        return show_startup_error(exc, language_in(data_dir_of(args) / "config.toml"))
    return run(data_dir_of(args), config)


# ---------------------------------------------------------------------------- parser
class _Commands(argparse._SubParsersAction):
    """The subcommands: an entry point's command is a placeholder until it is chosen, so that
    `kdesk --help` lists it (with its package's summary) without importing it."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.plugins: dict[str, EntryPoint] = {}

    def add_plugin(self, entry: EntryPoint) -> None:
        """A placeholder for `entry`'s command; its own parser replaces it when it is chosen."""
        if entry.name in self._name_parser_map:  # never shadow one of the app's commands
            return
        summary = (entry.dist.metadata["Summary"] if entry.dist else None) or f"from {entry.value}"
        self.add_parser(entry.name, help=summary, add_help=False)
        self.plugins[entry.name] = entry

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        entry = self.plugins.pop(values[0], None)
        if entry is not None:
            del self._name_parser_map[entry.name]
            self._choices_actions = [a for a in self._choices_actions if a.dest != entry.name]
            try:
                register = entry.load()
            except Exception as exc:  # an installed but broken package: a usage-style error, no traceback
                parser.error(f"the command {entry.name!r} ({entry.value}) could not be loaded: {exc}")
            register(self)
        super().__call__(parser, namespace, values, option_string)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kdesk",
        description="Knowledge Desk: a local knowledge assistant. With no command, starts the desktop app.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[common_flags()],
    )
    parser.set_defaults(func=cmd_gui)
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="index, search and answer in a temp folder, open the window, exit 0 if all work",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", action=_Commands)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    for entry in sorted(entry_points(group=COMMAND_ENTRY_POINTS), key=lambda e: e.name):
        sub.add_plugin(entry)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["--chroma-server"]:  # the frozen build's entry for the GUI's Chroma child process
        from desktop_app.core.library.chroma_server import main as serve

        return serve(argv[1:])
    if argv[:1] == ["--parse-worker"]:  # ... and for the sync's file reader (parse_worker.py)
        from desktop_app.core.library.parse_worker import main as read_files

        return read_files(argv[1:])
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
    if getattr(args, "command", None):  # what another writer waiting for this one is told
        from desktop_app.core.library.datafolder import name_this_process

        name_this_process(f"kdesk {args.command}")
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
        from desktop_app.core.messages import UserError
        from desktop_app.core.packages import MissingPackage

        readable = isinstance(exc, MissingPackage | UserError)  # its text says it all
        eprint(f"error: {exc}" if readable else f"error: {type(exc).__name__}: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
