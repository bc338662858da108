"""The `kdesk` command line: global options anywhere, JSON on stdout, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from desktop_app.cli.main import build_parser, main


def _parse(argv):
    args = build_parser().parse_args(argv)
    for name, default in (("data_dir", None), ("json", False)):
        if not hasattr(args, name):
            setattr(args, name, default)
    return args


def test_global_options_work_before_and_after_the_command():
    assert _parse(["--data-dir", "/tmp/x", "add", "p"]).data_dir == "/tmp/x"
    assert _parse(["add", "p", "--data-dir", "/tmp/y"]).data_dir == "/tmp/y"
    assert _parse(["--json", "list"]).json is True
    assert _parse(["list", "--json"]).json is True
    assert _parse(["list"]).data_dir is None


def test_usage_error_exits_2(capsys):
    assert main(["search"]) == 2
    assert "usage" in capsys.readouterr().err


def test_add_list_search_remove_end_to_end(tmp_path):
    src = tmp_path / "notes.md"
    src.write_text("# Kea\n\nThe kea is an alpine parrot from New Zealand.\n", encoding="utf-8")
    bad = tmp_path / "empty.txt"
    bad.write_bytes(b"")
    data = tmp_path / "data"
    env = dict(os.environ, HF_HUB_OFFLINE="1")

    def kdesk(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "desktop_app.cli.main", "--data-dir", str(data), *argv],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )

    added = kdesk("add", str(src), str(bad), "--json")
    assert added.returncode == 0, added.stderr
    report = json.loads(added.stdout)
    assert report["added"] == ["notes.md", "empty.txt"] or sorted(report["added"]) == [
        "empty.txt",
        "notes.md",
    ]
    assert report["failed"] == [{"name": "empty.txt", "error": "empty document: no text"}]
    assert "empty.txt: empty document" in added.stderr  # errors on stderr too

    listed = json.loads(kdesk("list", "--json").stdout)["documents"]
    assert {d["name"]: d["status"] for d in listed} == {"notes.md": "indexed", "empty.txt": "failed"}

    found = kdesk("search", "alpine parrot", "--json")
    hits = json.loads(found.stdout)["hits"]
    assert hits[0]["source"] == "notes.md" and hits[0]["page"] is None
    for key in ("text", "score", "vector_score", "keyword_score", "chunk_index", "total_chunks"):
        assert key in hits[0]

    assert kdesk("remove", "nope.md").returncode == 1
    gone = kdesk("remove", "notes.md", "--json")
    assert gone.returncode == 0 and json.loads(gone.stdout)["removed"] == ["notes.md"]
    assert not (data / "knowledge" / "notes.md").exists()


def test_bench_identify_refuses_an_unknown_notes_coverage(tmp_path, capsys):
    (tmp_path / "a").mkdir()
    argv = ["bench", "identify", "--gallery", str(tmp_path), "--images", str(tmp_path), "--split", "1"]
    assert main([*argv, "--notes", str(tmp_path), "--notes-coverage", "all,some"]) == 2
    assert "--notes-coverage takes all, half, none" in capsys.readouterr().err
    assert _parse([*argv, "--labels", "chinese", "--details"]).labels == "chinese"
