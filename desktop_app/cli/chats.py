"""`kdesk chats list|show|export|rename|delete`: the conversations saved by the window and by
`kdesk ask --chat NAME` (``<data-dir>/conversations.sqlite3``). NAME is a title or an id."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from desktop_app.cli.common import common_flags, emit_json, eprint, open_desk
from desktop_app.core.library.documents import page_label
from desktop_app.core.library.names import display_name


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "chats", parents=[common_flags()], help="saved conversations: list, show, export, rename, delete"
    )
    sub = p.add_subparsers(dest="chats_command", metavar="ACTION", required=True)
    ls = sub.add_parser("list", parents=[common_flags()], help="conversations, most recent first")
    ls.add_argument("--search", default="", metavar="TEXT", help="only titles containing TEXT")
    ls.set_defaults(func=cmd_list)
    show = sub.add_parser("show", parents=[common_flags()], help="print a conversation")
    show.add_argument("name", metavar="NAME")
    show.set_defaults(func=cmd_show)
    export = sub.add_parser(
        "export", parents=[common_flags()], help="a conversation as Markdown, citations as footnotes"
    )
    export.add_argument("name", metavar="NAME")
    export.add_argument("--out", metavar="FILE", help="write to FILE (default: stdout)")
    export.set_defaults(func=cmd_export)
    rename = sub.add_parser("rename", parents=[common_flags()], help="give a conversation another title")
    rename.add_argument("name", metavar="NAME")
    rename.add_argument("title", metavar="TITLE")
    rename.set_defaults(func=cmd_rename)
    delete = sub.add_parser("delete", parents=[common_flags()], help="delete a conversation")
    delete.add_argument("name", metavar="NAME")
    delete.set_defaults(func=cmd_delete)


def _not_found(name: str) -> int:
    eprint(f"error: no conversation named {name!r} (see `kdesk chats list`)")
    return 1


def cmd_list(args: argparse.Namespace) -> int:
    with open_desk(args) as desk:
        chats = desk.conversations.list_chats(args.search)
    if args.json:
        emit_json({"chats": [c.to_dict() for c in chats]})
        return 0
    for c in chats:
        scope = f"  @{c.scope}" if c.scope else ""
        print(f"{c.updated[:16].replace('T', ' ')}  {c.messages:3d} msg  {c.title}{scope}  ({c.id})")
    if not chats:
        eprint("no saved conversations")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    with open_desk(args) as desk:
        store = desk.conversations
        found = store.find(args.name)
        chat = store.load(found.id) if found is not None else None
    if chat is None:
        return _not_found(args.name)
    if args.json:
        emit_json(chat.to_dict())
        return 0
    print(f"# {chat.title}" + (f"  @{chat.scope}" if chat.scope else ""))
    if chat.system_prompt:
        print(f"system prompt: {chat.system_prompt}")
    if chat.temperature is not None:
        print(f"temperature: {chat.temperature:g}")
    for m in chat.messages:
        print()
        asked = m.question or ""
        if m.kind == "identify":
            asked = f"[photo: {m.image}{' (gone)' if m.image_gone else ''}] {asked}".strip()
        print(f"> {asked}")
        print(m.answer)
        if m.citations:
            print()
        for c in m.citations:
            gone = "  (removed)" if c.gone else ""
            where = f", {page_label(c.source, c.page)}" if c.page else ""
            print(f"[{c.n}] {display_name(c.source)}{where}{gone}")
    if chat.last_subject or chat.last_query:
        print(f"\nfollow-ups refer to: {chat.last_subject or chat.last_query}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from desktop_app.core.ask.chat_export import to_markdown, write_markdown

    with open_desk(args) as desk:
        store = desk.conversations
        found = store.find(args.name)
        chat = store.load(found.id) if found is not None else None
        knowledge = desk.knowledge_dir
    if chat is None:
        return _not_found(args.name)
    out = Path(args.out).expanduser() if args.out else None
    text = ""
    if out is not None:
        write_markdown(chat, knowledge, out)  # the same file the window's Export writes
        eprint(f"wrote {out}")
    else:
        text = to_markdown(chat, knowledge, None)
    if args.json:  # one JSON object: the Markdown goes in it unless it went to a file
        emit_json({"id": chat.id, "title": chat.title, "out": str(out) if out else None,
                   "markdown": None if out else text})  # fmt: skip
    elif out is None:
        sys.stdout.write(text)
    return 0


def cmd_rename(args: argparse.Namespace) -> int:
    with open_desk(args) as desk:
        found = desk.conversations.find(args.name)
        if found is None:
            return _not_found(args.name)
        desk.conversations.rename(found.id, args.title)
    if args.json:
        emit_json({"id": found.id, "title": args.title})
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    with open_desk(args) as desk:
        found = desk.conversations.find(args.name)
        if found is None:
            return _not_found(args.name)
        desk.conversations.delete(found.id)
    if args.json:
        emit_json({"deleted": found.id, "title": found.title})
    else:
        eprint(f"deleted {found.title!r} ({found.id})")
    return 0
