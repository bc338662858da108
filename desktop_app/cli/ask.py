"""`kdesk ask QUESTION`: route, retrieve, answer with citations; the LLM flags other commands share."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from desktop_app.cli.argtypes import positive_float
from desktop_app.cli.common import common_flags, emit_json, eprint, load_cfg, open_desk
from desktop_app.core.ask.conversation import Conversation
from desktop_app.core.desk import Desk
from desktop_app.core.library.documents import page_label


def add_llm_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("language model (override config.toml's [llm])")
    g.add_argument(
        "--llm-url", metavar="URL", help="OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1"
    )
    g.add_argument("--llm-model", metavar="NAME", help="model name on that server")
    g.add_argument(
        "--llm-gguf", metavar="PATH", help="a GGUF file (or a name under models/) served in-process"
    )
    g.add_argument(
        "--llm-timeout", type=positive_float, metavar="SECONDS", help="limit for one model request"
    )
    g.add_argument("--no-llm", action="store_true", help="no language model: extractive answers")


def apply_llm_flags(cfg: Any, args: argparse.Namespace) -> Any:
    """Config with the command line's LLM choice applied (flags win over config.toml)."""
    if getattr(args, "no_llm", False):
        cfg.llm.backend = "none"
    elif getattr(args, "llm_gguf", None):
        cfg.llm.backend, cfg.llm.gguf = "gguf", str(Path(args.llm_gguf).expanduser())
    elif getattr(args, "llm_url", None):
        cfg.llm.backend, cfg.llm.url = "openai", args.llm_url
    if getattr(args, "llm_model", None):
        cfg.llm.model = args.llm_model
    if getattr(args, "llm_timeout", None):
        cfg.llm.timeout = args.llm_timeout
        cfg.router.timeout = args.llm_timeout
    return cfg


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "ask", parents=[common_flags()], help="ask a question; the answer cites your documents"
    )
    p.add_argument("question")
    p.add_argument(
        "--mode",
        choices=("auto", "always", "never"),
        default=None,
        help="retrieval: router decides, always, never",
    )
    p.add_argument("--scope", default=None, help="also search this assistant's scope")
    p.add_argument("--subject", default=None, help="the last subject, for follow-ups ('what does it eat?')")
    p.add_argument(
        "--chat",
        metavar="NAME",
        default=None,
        help="continue the saved conversation NAME (created when new); see `kdesk chats`",
    )
    add_llm_flags(p)
    p.set_defaults(func=cmd_ask)


def open_desk_with_llm(args: argparse.Namespace, warn: bool = True) -> Desk:
    """The Desk for a command that may use an LLM (the flags override config.toml); a configured
    but unusable LLM is a warning on stderr (the command goes on without it)."""
    desk = open_desk(args, apply_llm_flags(load_cfg(args), args))
    if warn and not desk.chat.active and desk.config.llm.backend not in ("none", ""):
        eprint(f"warning: {desk.chat.reason}")
    return desk


def _hit_json(h: Any) -> dict:
    from desktop_app.core.library.names import name_fields

    d = h.to_dict() | name_fields(h.source, "source")  # as shown, and whether it is UTF-8
    d["text"] = d["text"][:1000]
    return d


def _citation_json(c: Any) -> dict:
    from desktop_app.core.library.names import name_fields

    return {"n": c.n, **name_fields(c.source, "source"), "page": c.page}


def chat_conversation(desk: Desk, args: argparse.Namespace, out: dict[str, Any]) -> Conversation | None:
    """The saved conversation ``--chat`` names, restored (turns, subject, scope), or a new one of
    that name; None (a usage error, said on stderr) when ``--scope`` contradicts the saved one."""
    store = desk.conversations
    found = store.find(args.chat)
    if found is None:
        conv = Conversation(scope=args.scope, last_subject=getattr(args, "subject", None))
    else:
        if args.scope is not None and args.scope != found.scope:
            searched = f"collection {found.scope!r}" if found.scope else "the shared documents"
            eprint(f"error: chat {args.chat!r} searches {searched}; leave out --scope or start another chat")
            return None
        chat = store.load(found.id)
        conv = chat.conversation() if chat is not None else Conversation(id=found.id, scope=found.scope)
        if getattr(args, "subject", None):
            conv.last_subject = args.subject
    out["chat"] = {"id": conv.id, "title": found.title if found else args.chat, "new": found is None}
    return conv


def cmd_ask(args: argparse.Namespace) -> int:
    from desktop_app.core.events import Answer, Error, Progress, Retrieved, RouteDecided, Token, Warning

    desk = open_desk_with_llm(args)
    choice = desk.chat
    out: dict[str, Any] = {
        "question": args.question,
        "route": None,
        "hits": [],
        "answer": "",
        "answer_by": None,
        "citations": [],
        "refused": False,  # the documents do not seem to answer: "related" holds the nearest passages
        "related": [],
        "model": choice.name or None,
        "warnings": [],
    }
    code = 0
    streamed = False
    timing: dict[str, float] = {}
    t0 = time.perf_counter()

    def mark(name: str) -> None:
        timing.setdefault(name, round((time.perf_counter() - t0) * 1000, 1))

    with desk:
        conv = Conversation(scope=args.scope, last_subject=args.subject)
        if args.chat:
            conv = chat_conversation(desk, args, out)
            if conv is None:
                return 2
        events = desk.assistant.ask(args.question, conv, mode=args.mode)
        if args.chat:  # written to the conversation once its answer is complete
            events = desk.conversations.record(conv, events, question=args.question, title=args.chat)
        for ev in events:
            mark(f"{type(ev).__name__.lower()}_ms")
            if isinstance(ev, RouteDecided):
                out["route"] = {
                    "use_rag": ev.use_rag,
                    "search_query": ev.search_query,
                    "is_followup": ev.is_followup,
                    "by": ev.by,
                    "kind": ev.kind,  # none | passages | document | library
                    "reason": ev.reason,
                }
            elif isinstance(ev, Retrieved):
                out["hits"] = [_hit_json(h) for h in ev.hits]
            elif isinstance(ev, Token):
                if not args.json:
                    sys.stdout.write(ev.text)
                    sys.stdout.flush()
                    streamed = True
            elif isinstance(ev, Answer):
                out["answer"] = ev.text
                out["answer_by"] = ev.by
                out["citations"] = [_citation_json(c) for c in ev.citations]
                out["refused"] = ev.refused
                out["related"] = [_citation_json(c) for c in ev.related]
            elif isinstance(ev, Warning):
                out["warnings"].append(str(ev.message))  # JSON renders English
                if streamed:
                    print(file=sys.stdout)
                    streamed = False
                eprint(f"warning: {ev.message}")
            elif isinstance(ev, Progress):  # a whole document read part by part
                eprint(f"{ev.what}")
            elif isinstance(ev, Error):
                out["error"] = str(ev.message)
                eprint(f"error: {ev.message}")
                code = 1
    # Milliseconds from the question to each first event of a kind (model start-up included).
    out["timing"] = {
        k.replace("routedecided", "route").replace("token", "first_token"): v for k, v in timing.items()
    }
    if args.json:
        emit_json(out)
        return code
    if out["answer_by"] == "extractive" or not streamed:
        print(out["answer"])
    elif streamed:
        print()
    for title, refs in (("", out["citations"]), ("Related:", out.get("related") or [])):
        if refs:
            print()
            if title:
                print(title)
            for c in refs:
                where = page_label(c["source"], c["page"]) if c["page"] else ""
                print(f"[{c['n']}] {c['source']}" + (f", {where}" if where else ""))
    return code
