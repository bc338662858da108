"""`kdesk identify IMAGE`: what a photo shows, grounded in the knowledge base."""

from __future__ import annotations

import argparse
from pathlib import Path

from desktop_app.cli.ask import add_llm_flags, chat_conversation, open_desk_with_llm
from desktop_app.cli.common import common_flags, emit_json, eprint


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "identify", parents=[common_flags()], help="identify a photo with the knowledge base's help"
    )
    p.add_argument("image", help="a photo (jpg, png, bmp, webp, gif, tiff)")
    p.add_argument("--question", default=None, help="what you want to know about it")
    p.add_argument("--scope", default=None, help="also use this scope's own documents and photos")
    p.add_argument(
        "--chat",
        metavar="NAME",
        default=None,
        help="put the result into the saved conversation NAME (created when new), as the window does;"
        " `kdesk ask --chat NAME` follow-ups then refer to the species named",
    )
    add_llm_flags(p)
    p.set_defaults(func=cmd_identify)


def cmd_identify(args: argparse.Namespace) -> int:
    from desktop_app.core.identify.result import IdentifyResult

    chat: dict = {}
    with open_desk_with_llm(args) as desk:
        if args.chat:
            # The window's path: Assistant.identify in the conversation (a named species becomes
            # the subject of follow-ups), recorded by the conversation store.
            conv = chat_conversation(desk, args, chat)
            if conv is None:
                return 2
            image = Path(args.image).resolve()
            events = desk.assistant.identify(image, args.question, conv)
            events = desk.conversations.record(
                conv, events, question=args.question or "", image=image, title=args.chat
            )
        else:
            events = desk.identifier.run(Path(args.image), args.question, args.scope)
        result = IdentifyResult.from_events(list(events))
        if args.chat:
            chat["chat"]["subject"] = conv.last_subject  # what `kdesk ask --chat` follow-ups refer to
    if result.error:
        eprint(f"error: {result.error}")
        if args.json:
            emit_json(result.to_dict())
        return 1
    for w in result.warnings:
        eprint(f"warning: {w}")
    if args.json:
        emit_json({**result.to_dict(), **chat})
        return 0
    print(f"confidence: {result.confidence_level} ({result.confidence_score:.0%})")
    for c in result.candidates:
        title = f" ({c.title})" if c.title else ""  # the note's English name for a terse label
        print(f"  {c.score:6.1%}  {c.name}{title}  [{c.source}]")
    print(f"seen: {result.visual_description}")
    if result.feature_queries:
        print("feature queries:")
        for q in result.feature_queries:
            print(f"  - {q}")
    print(f"\n{result.answer}")
    for i, h in enumerate(result.hits, 1):
        print(f"  [{i}] {h.source}" + (f", page {h.page}" if h.page else ""))
    return 0
