"""`kdesk bench hostile` runs the real command line on a built file and reports what happened."""

from __future__ import annotations

from desktop_app.bench.hostile import run, table


def test_the_hostile_bench_measures_a_real_add_and_reports_its_outcome(tmp_path) -> None:
    rows = run(["docx-laughs"], small=True, timeout=120, mixed=False, work_dir=tmp_path)
    assert [row.case for row in rows] == ["docx-laughs"]
    row = rows[0]
    assert row.exit == 0 and 0 < row.wall_s < 120 and row.peak_rss_mb > 10
    assert row.outcome.startswith("failed: refused DOCX: word/document.xml declares XML entities")
    assert "| docx-laughs | - |" in table(rows)
