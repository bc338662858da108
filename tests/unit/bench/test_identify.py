"""`kdesk bench identify`'s measuring (desktop_app/bench/identify.py) on a tiny labelled folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from desktop_app.bench.identify import check_folders, format_report, run_identify_bench


@pytest.fixture
def photos(shared_data: Path, tmp_path: Path) -> Path:
    src = shared_data / "images" / "parrots"
    for label in ("ara_macao", "jako_grey"):
        (tmp_path / label).mkdir()
        for i in (1, 2, 3):
            shutil.copy(src / label / f"{i}.jpg", tmp_path / label / f"{i}.jpg")
    return tmp_path


def test_folders_the_benchmark_cannot_use_are_refused(photos: Path, tmp_path: Path):
    assert check_folders(photos, photos, split=1, leave_one_out=False) is None
    assert "same folder" in check_folders(photos, photos, split=0, leave_one_out=False)
    assert "not a folder" in check_folders(tmp_path / "missing", photos, split=1, leave_one_out=False)
    with pytest.raises(ValueError, match="same folder"):
        run_identify_bench(photos, photos)


def test_split_run_reports_accuracy_levels_and_calibration(photos: Path, shared_data: Path):
    owl = shared_data / "images" / "coral" / "owl.jpg"
    report = run_identify_bench(photos, photos, split=2, negatives=[owl])
    assert (report["gallery_photos"], report["gallery_labels"]) == (4, 2)
    run = report["split_run"]
    assert run["queries_in_gallery"] == 2 and run["queries_not_in_gallery"] == 1
    assert sum(v["n"] for v in run["levels_in_gallery"].values()) == 2
    assert sum(row["n"] for row in run["calibration"]) == 3
    assert set(run["stage_ms_p50"]) >= {"load", "classify", "gallery", "describe"}
    text = format_report(report)
    assert text.startswith("gallery: 4 photos, 2 labels") and "split_run:" in text
