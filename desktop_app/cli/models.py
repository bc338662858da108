"""`kdesk models [--json]` and `kdesk models fetch ROLE|all [--endpoint URL]`."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_app.cli.common import common_flags, data_dir_of, open_desk

if TYPE_CHECKING:  # imported when the command runs: every kdesk command imports this module
    from desktop_app.core.models.embeddings import EmbeddingChoice

OPENAI_CHOICE = (
    "a model on an OpenAI-compatible /v1/embeddings server at embedding.url, on this machine or another "
    "(llama.cpp's llama-server --embeddings, Ollama, vLLM, TEI, Infinity)"
)


def register(subparsers) -> None:
    """Add the `models` command (and its `fetch` sub-command) to kdesk's argument parser."""
    p = subparsers.add_parser(
        "models",
        parents=[common_flags()],
        help="active and missing models, and why; `models fetch` downloads them",
        description="Show, for each role (embedding, reranker, chat, classifier, image), which model is active, "
        "which are missing and the command that installs them, then the embedding models to choose from.",
    )
    p.set_defaults(func=status_command)
    sub = p.add_subparsers(dest="models_command", metavar="fetch|use|pause")
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
    f.add_argument(
        "--no-export",
        action="store_true",
        help="leave a reranker without its ONNX export (made once after the download: 1.9-2.3x cheaper "
        "pairs on a CPU, checked against torch float32)",
    )
    f.set_defaults(func=fetch_command)
    u = sub.add_parser(
        "use",
        parents=[common_flags()],
        help="switch to another embedding model: its index fills while the one in use answers",
        description="Choose another embedding model. Its index is filled in the background of searches, which the "
        "model in use answers until the new index is complete; then config.toml names the new model. Ctrl-C stops "
        "the fill; `kdesk reindex` continues it. Choosing the model in use withdraws a pending switch.",
    )
    u.add_argument("model", metavar="MODEL", help="an embedding.model value (`kdesk models` lists them)")
    u.add_argument("--url", default="", help="embedding.url, for an openai:<model>")
    u.add_argument(
        "--no-fill", action="store_true", help="only record the choice (the app or `kdesk reindex` fills)"
    )
    u.set_defaults(func=use_command)
    pause = sub.add_parser(
        "pause",
        parents=[common_flags()],
        help="pause filling the next embedding model's index (reindex resumes)",
    )
    pause.set_defaults(func=pause_command)


def status_command(args: argparse.Namespace) -> int:
    from desktop_app.core.models.embeddings import embedding_choices
    from desktop_app.core.models.registry import ManifestError
    from desktop_app.core.models.status import format_status

    try:
        with open_desk(args) as desk:  # what the app would run with this data folder's settings
            statuses = desk.model_status()
            config, data_dir = desk.config, desk.data_dir
            switch = desk.switch_progress()
    except (ManifestError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    choices = embedding_choices(data_dir)
    setting = config.embedding.model.strip() or "default"
    if getattr(args, "json", False):
        report = {"roles": [s.to_dict() for s in statuses], "embedding": embedding_report(setting, choices)}
        report["embedding"]["switch"] = switch.to_dict() if switch else None
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print(format_status(statuses))
        print()
        print(format_embedding_choices(setting, choices))
        if switch is not None:  # another model is filling its index: which one answers meanwhile
            print()
            print(switch.status())
    return 0


def use_command(args: argparse.Namespace) -> int:
    from desktop_app.cli.library import run_fill

    with open_desk(args) as desk:
        if not desk.choose_embedder(args.model, args.url):
            print(f"{desk.kb.embedder_name} is the embedding model in use")
            return 0
    return 0 if args.no_fill else run_fill(args)


def pause_command(args: argparse.Namespace) -> int:
    with open_desk(args) as desk:
        desk.pause_switch(True)
        state = desk.switch_progress()
    print(state.status() if state is not None else "no embedding model is being filled")
    return 0


def _in_use(setting: str, choice: EmbeddingChoice) -> bool:
    return setting == choice.value or (choice.path is not None and Path(setting) == choice.path)


def embedding_report(setting: str, choices: list[EmbeddingChoice]) -> dict[str, Any]:
    """The embedding setting and what it can be set to (`kdesk models --json`)."""
    return {
        "setting": setting,
        "choices": [
            {
                "value": c.value,
                "summary": c.summary,
                "multilingual": c.multilingual,
                "installed": c.installed,
                "install_command": c.install_command or None,
                "path": str(c.path) if c.path else None,
                "in_use": _in_use(setting, c),
            }
            for c in choices
        ],
        "custom": {"value": "openai:<model>", "summary": OPENAI_CHOICE},
    }


def format_embedding_choices(setting: str, choices: list[EmbeddingChoice], width: int = 100) -> str:
    """A few lines on the embedding setting: what each choice is for, which is in use, how to switch."""
    rows: list[tuple[str, str, str]] = []  # (in-use mark, value, what it is)
    for c in choices:
        language = {True: " (multilingual)", False: " (English)"}.get(c.multilingual, "") if c.path else ""
        missing = "" if c.installed else f" (not installed: {c.install_command})"
        rows.append(("*" if _in_use(setting, c) else " ", c.value, c.summary + language + missing))
    rows.append(("*" if setting.startswith("openai:") else " ", "openai:<model>", OPENAI_CHOICE))
    name_width = max(len(name) for _, name, _ in rows)
    indent = " " * (name_width + 6)
    lines = [f'embedding.model = "{setting}" (* in use) turns documents and questions into vectors:']
    for mark, name, text in rows:
        lines += textwrap.wrap(
            text, width, initial_indent=f"  {mark} {name:<{name_width}}  ", subsequent_indent=indent
        )
    lines += textwrap.wrap(
        "Switch in Settings > Retrieval > Embedding model (the app then indexes your documents again), "
        "or run `kdesk models use MODEL`: the model in use answers until the new one's index is complete. "
        "Each model keeps its own index: switching back re-embeds only the files changed since.",
        width,
    )
    return "\n".join(lines)


def fetch_command(args: argparse.Namespace) -> int:
    from desktop_app.core.models.fetch import FetchError, default_dest, fetch
    from desktop_app.core.models.registry import ManifestError
    from desktop_app.core.tasks import Cancelled

    dest = args.dest or default_dest(data_dir_of(args))
    try:
        results = fetch(args.target, dest, endpoint=args.endpoint, force=args.force, export=not args.no_export)
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
            if r.export:
                print(f"  {r.export}")
    return 0
