"""Document names that are not UTF-8: one lossless escaping, one way to show them.

A file name is bytes on Linux (Latin-1 archives, old Samba shares hold names that are not UTF-8);
Python gives such a name as a str with lone surrogates (``os.fsdecode``: byte 0xE9 is U+DCE9),
which no UTF-8 store accepts (SQLite, Chroma, JSON files, a terminal). So a document's *name*, the
relative posix path every part of the library goes by (manifest rows, chunk ``source`` and
``scope`` metadata, doc and chunk ids, keyword index, saved citations, progress lines), is the
**escaped** form of its file-system name, made where a path is read from the file system
(folder.py, fileops.py) and turned back into a path only where a file is touched (``fs_path``):

- every byte that is not part of valid UTF-8 (a surrogate U+DC80..U+DCFF) becomes ``␛`` (U+241B
  SYMBOL FOR ESCAPE) followed by its two upper-case hex digits: ``b"\\xe9t\\xe9.txt"`` is
  ``"␛E9t␛E9.txt"``;
- a ``␛`` in a real name is doubled (``"a␛E9.txt"`` is stored as ``"a␛␛E9.txt"``), so no real
  name can look like an escaped one;
- any other lone surrogate (a Windows name of unpaired UTF-16) becomes ``␛u`` and four hex digits.

Every name that is valid UTF-8 without a ``␛`` (all of them in practice) is its own escaped form,
so manifests and indexes written before this escaping existed stay valid. Users see names through
``display_name``: the original bytes decoded with U+FFFD for what is not UTF-8 (``"�t�.txt"``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

ESCAPE = "\u241b"  # ␛
_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPED = re.compile(f"{ESCAPE}({ESCAPE}|[89A-F][0-9A-F]|u[0-9A-F]{{4}})")


def _escape_char(match: re.Match[str]) -> str:
    ch = match.group()
    if ch == ESCAPE:
        return ESCAPE + ESCAPE
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte, as os.fsdecode keeps it
        return f"{ESCAPE}{code - 0xDC00:02X}"
    return f"{ESCAPE}u{code:04X}"


def escape_name(fs_name: str) -> str:
    """The name stored and shown everywhere for a file-system name (``os.fsdecode`` form)."""
    if ESCAPE not in fs_name and not _SURROGATE.search(fs_name):
        return fs_name
    return re.sub(f"[{ESCAPE}\ud800-\udfff]", _escape_char, fs_name)


def _unescape_one(match: re.Match[str]) -> str:
    code = match.group(1)
    if code == ESCAPE:
        return ESCAPE
    if code[0] == "u":
        return chr(int(code[1:], 16))
    return chr(0xDC00 + int(code, 16))


def fs_name(name: str) -> str:
    """The file-system name (``os.fsdecode`` form) of a stored name; ``escape_name`` undone."""
    if ESCAPE not in name:
        return name
    return _ESCAPED.sub(_unescape_one, name)


def fs_path(root: Path, name: str) -> Path:
    """Where a document (by its stored name, relative posix) lives under ``root``."""
    return Path(root).joinpath(*fs_name(name).split("/"))


def is_utf8(name: str) -> bool:
    """Is the file-system name behind a stored name valid UTF-8?"""
    return ESCAPE not in name or not _SURROGATE.search(fs_name(name))


def display_name(name: str) -> str:
    """A stored name as users see it: its bytes decoded with U+FFFD for what is not UTF-8."""
    if ESCAPE not in name:
        return name
    raw = fs_name(name)
    if not _SURROGATE.search(raw):
        return raw
    return os.fsencode(raw).decode("utf-8", errors="replace") if os.name != "nt" else _SURROGATE.sub(
        "\ufffd", raw
    )


def name_fields(name: str, key: str = "name") -> dict[str, Any]:
    """A name for --json: ``key`` as shown, ``<key>_utf8``, and ``<key>_escaped`` (the stored form
    `kdesk remove` also accepts) when it is not UTF-8."""
    fields: dict[str, Any] = {key: display_name(name), f"{key}_utf8": is_utf8(name)}
    if not fields[f"{key}_utf8"]:
        fields[f"{key}_escaped"] = name
    return fields
