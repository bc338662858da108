"""names.py: the one escaping of file names that are not UTF-8, lossless and unambiguous."""

from __future__ import annotations

import os

import pytest

from desktop_app.core.library.chunking import make_doc_id
from desktop_app.core.library.fileops import sanitize_component
from desktop_app.core.library.folder import AmbiguousName, matching
from desktop_app.core.library.names import display_name, escape_name, fs_name, is_utf8, name_fields

RAW_NAMES = [
    b"\xe9t\xe9_notes.txt",  # Latin-1
    b"plain.txt",
    "caf\u00e9/\u9e66\u9e49.md".encode(),
    "a\u241bE9.txt".encode(),  # a real name that looks escaped
    "\u241b\u241b".encode(),
    b"\xe2\x90\x9b\xff",  # a real escape symbol, then a byte that is not UTF-8
    b"\xed\xa0\x80x",  # an encoded surrogate: not UTF-8 either
    b"@\xe9quipe/r\xe9sum\xe9.txt",
]


@pytest.mark.parametrize("raw", RAW_NAMES)
def test_escaping_is_lossless_and_gives_valid_utf8(raw):
    stored = escape_name(os.fsdecode(raw))
    stored.encode("utf-8")  # what SQLite, Chroma and JSON need: no surrogates
    assert os.fsencode(fs_name(stored)) == raw


def test_a_utf8_name_is_its_own_escaped_form():
    for name in ("notes/a b.md", "caf\u00e9.txt", "\u9e66\u9e49.pdf", "50% off [draft].txt", "back\\slash.txt"):
        assert escape_name(name) == name and is_utf8(name) and display_name(name) == name


def test_a_name_that_looks_escaped_does_not_collide_with_the_one_it_looks_like():
    latin1 = escape_name(os.fsdecode(b"\xe9.txt"))
    lookalike = escape_name("\u241bE9.txt")  # a real, UTF-8 name spelled like the escape
    assert latin1 == "\u241bE9.txt" and lookalike == "\u241b\u241bE9.txt"
    assert make_doc_id(latin1) != make_doc_id(lookalike)
    assert not is_utf8(latin1) and is_utf8(lookalike)
    assert display_name(latin1) == "\ufffd.txt" and display_name(lookalike) == "\u241bE9.txt"


def test_names_are_shown_with_replacement_characters_and_flagged():
    stored = escape_name(os.fsdecode(b"\xe9t\xe9_notes.txt"))
    assert display_name(stored) == "\ufffdt\ufffd_notes.txt"
    assert name_fields(stored) == {
        "name": "\ufffdt\ufffd_notes.txt",
        "name_utf8": False,
        "name_escaped": stored,
    }
    assert name_fields("ok.txt", "source") == {"source": "ok.txt", "source_utf8": True}


def test_a_long_name_that_is_not_utf8_is_cut_by_its_bytes_without_losing_them():
    name = os.fsdecode(b"\xff" * 150 + "\u9e66".encode() * 40 + b".txt")
    cut = sanitize_component(name)
    raw = os.fsencode(cut)
    assert len(raw) <= 200 and raw.endswith(b".txt") and raw.startswith(b"\xff" * 150)
    raw[:-4].decode("utf-8", errors="surrogateescape")  # no character split in two
    assert raw[150:-4] == "\u9e66".encode() * ((len(raw) - 154) // 3)


def test_remove_matches_the_shown_name_a_glob_and_refuses_an_ambiguous_one():
    one, two = (escape_name(os.fsdecode(b)) for b in (b"\xe9t\xe9.txt", b"\xe8t\xe8.txt"))
    docs = [one, "notes/a.md", "notes/b.txt", escape_name(os.fsdecode(b"sub/f\xe9.txt"))]
    assert matching(["\ufffdt\ufffd.txt"], docs) == [one]
    assert matching(["notes/*.md"], docs) == ["notes/a.md"]
    assert matching(["sub/f\ufffd.txt"], docs) == [docs[3]]
    assert matching(["*.txt"], docs) == sorted([one, "notes/b.txt", docs[3]])
    with pytest.raises(AmbiguousName) as refused:
        matching(["\ufffdt\ufffd.txt"], [*docs, two])
    assert refused.value.names == sorted([one, two])
