"""`kdesk bench ui`: the heartbeat benchmark runs the real window and reports gaps."""

from __future__ import annotations

import pytest

from kdesk_lab.ui import format_result, make_files, run_ui_bench


def test_bench_ui_is_registered_under_kdesk_bench():
    from desktop_app.cli.main import build_parser

    args = build_parser().parse_args(["bench", "ui", "--files", "5", "--interval-ms", "20"])
    assert args.files == 5 and args.interval_ms == 20
    assert args.func.__name__ == "cmd_bench_ui"


def test_generated_files_are_small_distinct_text(tmp_path):
    paths = make_files(tmp_path, 20)
    texts = {p.read_text(encoding="utf-8") for p in paths}
    assert len(texts) == 20
    assert all(100 < len(t) < 3000 for t in texts)


@pytest.mark.slow
def test_heartbeat_gaps_are_measured_while_files_index(qtbot, tmp_path, minilm):
    result = run_ui_bench(10, workdir=tmp_path, embedder=minilm)
    assert result.files == 10 and result.indexed == 10 and result.failed == 0
    assert result.heartbeats > 10
    assert result.worst_gap_ms >= result.p99_gap_ms >= result.p50_gap_ms >= 5
    assert "worst gap" in format_result(result)
