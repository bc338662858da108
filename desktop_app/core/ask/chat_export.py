"""A saved conversation as Markdown: each answer's citation markers become footnotes that name the
file and page, quote the passage and link to the file (`kdesk chats export`)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import quote

from desktop_app.core.ask.citations import _SEP, CITATION_MARK  # the markers answers are checked with
from desktop_app.core.ask.conversation_store import StoredChat, StoredCitation, StoredMessage
from desktop_app.core.library.names import display_name, fs_path

PASSAGE_CHARS = 160


def _link(path: Path, base: Path | None) -> str:
    """A link target for ``path``: relative to ``base`` (the export's folder) when there is one and
    both are on one drive, else a file:// URL; percent-encoded so spaces keep the link whole."""
    if base is not None:
        try:
            return quote(os.fsencode(Path(os.path.relpath(path, base)).as_posix()))  # bytes: any name
        except ValueError:  # another drive (Windows)
            pass
    return path.resolve().as_uri()


def _footnote(label: int, c: StoredCitation, knowledge_dir: Path, base: Path | None) -> str:
    name = display_name(c.source).replace("[", "\\[").replace("]", "\\]")
    where = name if c.gone else f"[{name}]({_link(fs_path(knowledge_dir, c.source), base)})"
    if c.page:
        where += f", page {c.page}"
    if c.gone:
        where += " (removed from the knowledge folder)"
    passage = " ".join(c.text.split())
    if len(passage) > PASSAGE_CHARS:
        passage = passage[: PASSAGE_CHARS - 1].rstrip() + "…"
    return f"[^{label}]: {where}" + (f' — "{passage}"' if passage else "")


def _answer(message: StoredMessage, first: int) -> tuple[str, dict[int, int]]:
    """The answer with its ``[n]`` markers as ``[^k]`` footnote references, k counted from ``first``
    across the whole document (each answer numbers its passages from 1)."""
    labels = {c.n: first + i for i, c in enumerate(message.citations)}

    def refs(m: re.Match[str]) -> str:
        numbers = [int(p) for p in _SEP.split(m.group(1))]
        if not all(n in labels for n in numbers):
            return m.group(0)
        return "".join(f"[^{labels[n]}]" for n in numbers)

    return CITATION_MARK.sub(refs, message.answer), labels


def to_markdown(chat: StoredChat, knowledge_dir: Path, out_dir: Path | None = None) -> str:
    """The conversation as Markdown; links are relative to ``out_dir`` when the export goes to a
    file there, else file:// URLs."""
    lines = [f"# {chat.title}", ""]
    scope = f"collection {chat.scope}" if chat.scope else "shared documents"
    lines += [f"*{len(chat.messages)} message(s), {scope}, started {chat.created[:10]}*", ""]
    notes: list[str] = []
    for message in chat.messages:
        if message.kind == "identify":
            image = Path(message.image or "photo")
            lines.append(f"## Photo: {image.name}")
            lines.append("")
            if not message.image_gone:
                lines += [f"![{image.name}]({_link(image, out_dir)})", ""]
            if message.question:
                lines += [f"> {message.question}", ""]
            decision = message.card.decision if message.card is not None else None
            if decision is not None:
                lines += [f"**Decision:** {decision.final_name}", ""]
        else:
            lines += [f"## {message.question}", ""]
        text, labels = _answer(message, len(notes) + 1)
        lines += [text.strip(), ""]
        notes += [_footnote(labels[c.n], c, knowledge_dir, out_dir) for c in message.citations]
        if message.related:
            lines.append("Related passages:")
            lines += [
                f"- {c.source}" + (f", page {c.page}" if c.page else "") + (" (removed)" if c.gone else "")
                for c in message.related
            ]
            lines.append("")
    if notes:
        lines += notes + [""]
    return "\n".join(lines)


def write_markdown(chat: StoredChat, knowledge_dir: Path, out: Path) -> Path:
    """Write the conversation's Markdown to ``out`` (UTF-8; links relative to its folder), as
    `kdesk chats export --out` and the window's Export do; returns the file written."""
    out = Path(out).expanduser()
    text = to_markdown(chat, knowledge_dir, out.resolve().parent)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return out
