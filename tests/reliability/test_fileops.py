"""Copying dropped files never writes outside the knowledge folder, never overwrites, never hangs."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from desktop_app.core.library.fileops import (
    TMP_PREFIX,
    FileOpsError,
    import_paths,
    safe_copy_into,
    sanitize_component,
    sanitize_relpath,
)


def _files_under(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def kdir(tmp_path) -> Path:
    d = tmp_path / "data" / "knowledge"
    d.mkdir(parents=True)
    return d


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "dest_rel",
    [
        "../../escape.txt",
        "/etc/kdesk-escape.txt",
        "a/../../../escape.txt",
        "..\\..\\escape.txt",
        "C:\\esc.txt",
    ],
)
def test_dest_names_with_dotdot_or_absolute_paths_stay_inside(kdir, tmp_path, dest_rel):
    src = _write(tmp_path / "src" / "note.txt", "hello")
    out = safe_copy_into(kdir, src, dest_rel)
    assert out.resolve().is_relative_to(kdir.resolve())
    assert out.read_text() == "hello"
    assert not (tmp_path / "escape.txt").exists() and not Path("/etc/kdesk-escape.txt").exists()
    assert not (tmp_path / "data" / "escape.txt").exists()


def test_newlines_and_control_chars_are_removed_but_emoji_kept(kdir, tmp_path):
    src = _write(tmp_path / "src" / "bad\nname\t🦜 parrot\x07.txt", "x")
    out = safe_copy_into(kdir, src)
    assert out.name == "bad name 🦜 parrot.txt"
    assert "\n" not in out.name and "\x07" not in out.name


def test_sanitize_helpers():
    assert sanitize_component("..") == "" and sanitize_component(" . ") == ""
    assert sanitize_component("..hidden..txt") == "hidden..txt"  # a dropped file must not become hidden
    assert sanitize_component("a/b\\c") == "a_b_c"
    assert sanitize_relpath("/../x/./y/../z.txt") == "x/y/z.txt"
    long = sanitize_component("🦜" * 100 + ".pdf")
    assert long.endswith(".pdf") and len(long.encode()) <= 200
    long.encode("utf-8").decode("utf-8")  # no half characters


def test_same_name_different_content_gets_a_numeric_suffix(kdir, tmp_path):
    a = _write(tmp_path / "one" / "report.pdf", "first")
    b = _write(tmp_path / "two" / "report.pdf", "second")
    c = _write(tmp_path / "three" / "report.pdf", "third")
    outs = [safe_copy_into(kdir, p) for p in (a, b, c)]
    assert [o.name for o in outs] == ["report.pdf", "report (2).pdf", "report (3).pdf"]
    assert [o.read_text() for o in outs] == ["first", "second", "third"]


def test_same_content_is_not_copied_twice(kdir, tmp_path):
    a = _write(tmp_path / "one" / "report.txt", "same")
    b = _write(tmp_path / "two" / "report.txt", "same")
    assert safe_copy_into(kdir, a) == safe_copy_into(kdir, b) == kdir.resolve() / "report.txt"
    assert _files_under(kdir) == {"report.txt"}


def test_folders_keep_their_layout_so_equal_names_do_not_collide(kdir, tmp_path):
    top = tmp_path / "drop"
    _write(top / "a" / "notes.md", "A")
    _write(top / "b" / "notes.md", "B")
    report = import_paths(kdir, [top])
    assert not report.failed
    assert _files_under(kdir) == {"drop/a/notes.md", "drop/b/notes.md"}
    assert (kdir / "drop/b/notes.md").read_text() == "B"


def test_scope_prefix_puts_files_under_the_scope_folder(kdir, tmp_path):
    src = _write(tmp_path / "x.txt", "x")
    report = import_paths(kdir, [src], prefix="@birds")
    assert report.copied == [kdir.resolve() / "@birds" / "x.txt"]


def test_symlink_loop_in_a_dropped_folder_does_not_hang(kdir, tmp_path):
    top = tmp_path / "loopy"
    _write(top / "real.txt", "real")
    (top / "sub").mkdir()
    os.symlink(top, top / "sub" / "back-to-top")  # folder loop
    os.symlink(top / "self-a", top / "self-b")  # file loop: a -> b -> a
    os.symlink(top / "self-b", top / "self-a")
    result: dict = {}
    worker = threading.Thread(target=lambda: result.setdefault("r", import_paths(kdir, [top])), daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive(), "import_paths hung on a symlink loop"
    report = result["r"]
    assert _files_under(kdir) == {"loopy/real.txt"}
    assert any("symlinked folder" in str(why) for _, why in report.skipped)
    assert len(report.failed) == 2  # the two looping file links, each with a reason


def test_symlink_pointing_outside_the_dropped_folder_is_skipped(kdir, tmp_path):
    secret = _write(tmp_path / "private" / "id_rsa", "KEY")
    top = tmp_path / "drop"
    _write(top / "ok.txt", "ok")
    os.symlink(secret, top / "innocent.txt")
    os.symlink(top / "ok.txt", top / "alias.txt")  # inside: copied
    report = import_paths(kdir, [top])
    assert _files_under(kdir) == {"drop/ok.txt", "drop/alias.txt"}
    assert [(n, str(why)) for n, why in report.skipped] == [
        (str(top / "innocent.txt"), "symlink to outside the dropped folder")
    ]


def test_symlinked_folder_inside_knowledge_cannot_be_used_to_escape(kdir, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, kdir / "sneaky")
    src = _write(tmp_path / "f.txt", "x")
    with pytest.raises(FileOpsError, match="outside the knowledge folder"):
        safe_copy_into(kdir, src, "sneaky/f.txt")
    assert list(outside.iterdir()) == []


def test_existing_symlink_at_destination_is_not_written_through(kdir, tmp_path):
    victim = _write(tmp_path / "victim.txt", "do not touch")
    os.symlink(victim, kdir / "note.txt")
    src = _write(tmp_path / "src" / "note.txt", "new")
    out = safe_copy_into(kdir, src)
    assert victim.read_text() == "do not touch"
    assert out.name == "note (2).txt" and out.read_text() == "new"


def test_fifo_named_txt_is_refused_instead_of_blocking(kdir, tmp_path):
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    with pytest.raises(FileOpsError, match="not a regular file"):
        safe_copy_into(kdir, fifo)


def test_missing_source_is_a_readable_failure_and_the_batch_goes_on(kdir, tmp_path):
    good = _write(tmp_path / "good.txt", "g")
    report = import_paths(kdir, [tmp_path / "missing.txt", good])
    assert report.copied == [kdir.resolve() / "good.txt"]
    assert [(n, str(why)) for n, why in report.failed] == [
        (str(tmp_path / "missing.txt"), "no such file")
    ]  # the path is said once


def test_failed_copy_leaves_no_partial_or_temp_file(kdir, tmp_path, monkeypatch):
    import shutil

    src = _write(tmp_path / "big.txt", "x" * 100_000)

    def boom(fin, fout, length=0):
        fout.write(fin.read(10))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(shutil, "copyfileobj", boom)
    with pytest.raises(OSError):
        safe_copy_into(kdir, src)
    assert list(kdir.iterdir()) == []  # neither big.txt nor a TMP_PREFIX file
    assert not any(p.name.startswith(TMP_PREFIX) for p in kdir.rglob("*"))


def test_copy_preserves_bytes_and_mtime(kdir, tmp_path):
    src = tmp_path / "bin.dat"
    src.write_bytes(bytes(range(256)) * 100)
    os.utime(src, (1_600_000_000, 1_600_000_000))
    out = safe_copy_into(kdir, src)
    assert out.read_bytes() == src.read_bytes()
    assert int(out.stat().st_mtime) == 1_600_000_000


def test_hidden_files_and_folders_in_a_dropped_folder_are_not_copied(kdir, tmp_path):
    top = tmp_path / "proj"
    _write(top / "README.md", "r")
    _write(top / ".git" / "objects" / "ab" / "cdef", "blob")
    _write(top / ".DS_Store", "x")
    report = import_paths(kdir, [top])
    assert _files_under(kdir) == {"proj/README.md"} and not report.failed
