"""`kdesk bench hostile` runs the real command line on a built file and reports what happened."""

from __future__ import annotations

from kdesk_lab.hostile import run, table


def test_the_hostile_bench_measures_a_real_add_and_reports_its_outcome(tmp_path) -> None:
    rows = run(["docx-laughs"], small=True, timeout=120, mixed=False, work_dir=tmp_path)
    assert [row.case for row in rows] == ["docx-laughs"]
    row = rows[0]
    # kdesk add exits 1 when nothing was added and a file failed; the peak is kdesk's own, not
    # the test process's (a child forked from pytest would inherit its high-water mark).
    assert row.exit == 1 and 0 < row.wall_s < 120 and 10 < row.peak_rss_mb < 1500
    assert row.outcome.startswith("failed: refused DOCX: word/document.xml declares XML entities")
    assert "| docx-laughs | - |" in table(rows)


def test_the_hostile_bench_finds_a_name_that_is_not_utf8_in_the_list(tmp_path) -> None:
    [row] = run(["name-not-utf8"], small=True, timeout=120, mixed=False, work_dir=tmp_path)
    assert row.exit == 0 and row.outcome == "indexed, 1 chunks"  # not "not listed"
