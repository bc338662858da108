"""`kdesk bench identify`'s measuring (lab/kdesk_lab/identify.py) on a tiny labelled folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kdesk_lab.identify import check_folders, format_report, prepare_notes, run_identify_bench


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


def _notes(tmp_path: Path) -> Path:
    notes = tmp_path / "notes" / "parrots"
    notes.mkdir(parents=True)
    for file in ("scarlet-macaw.md", "african-grey-parrot.md", "kakapo.md"):
        shutil.copy(Path(__file__).resolve().parents[3] / "knowledge" / "parrots" / file, notes / file)
    return notes


@pytest.mark.parametrize(
    ("coverage", "kept"),
    [
        ("all", {"scarlet-macaw.md", "african-grey-parrot.md", "kakapo.md"}),
        ("half", {"scarlet-macaw.md", "kakapo.md"}),  # every other gallery label (sorted): ara_macao
        ("none", {"kakapo.md"}),  # a species outside the gallery keeps its note
    ],
)
def test_notes_coverage_drops_the_notes_of_some_gallery_labels(tmp_path: Path, coverage: str, kept: set[str]):
    copied, names = prepare_notes(_notes(tmp_path), tmp_path / "out", ["ara_macao", "jako_grey"], coverage)
    assert {p.name for p in copied} == kept
    assert names == {"ara_macao": "ara_macao", "jako_grey": "jako_grey"}
    assert all("Gallery label:" in p.read_text(encoding="utf-8") for p in copied if p.name != "kakapo.md")


def test_species_held_out_of_the_gallery_keep_their_notes(tmp_path: Path):
    copied, _ = prepare_notes(
        _notes(tmp_path), tmp_path / "out", ["ara_macao", "jako_grey"], "none", outside={"ara_macao"}
    )
    assert {p.name for p in copied} == {"scarlet-macaw.md", "kakapo.md"}


@pytest.mark.parametrize(
    ("form", "macao", "grey"),
    [
        ("english", "Scarlet Macaw", "African Grey Parrot"),
        ("latin", "Ara macao", "Psittacus erithacus"),
        ("chinese", "绯红金刚鹦鹉", "非洲灰鹦鹉"),
    ],
)
def test_labels_can_be_named_as_the_notes_name_them(tmp_path: Path, form: str, macao: str, grey: str):
    copied, names = prepare_notes(_notes(tmp_path), tmp_path / "out", ["ara_macao", "jako_grey"], "all", form)
    assert names == {"ara_macao": macao, "jako_grey": grey}
    # Linking must then work by name alone: the data set's label lines are gone.
    assert not any("Gallery label:" in p.read_text(encoding="utf-8") for p in copied)


def test_details_explain_every_answer_and_notes_coverage_is_reported(
    photos: Path, shared_data: Path, tmp_path: Path
):
    owl = shared_data / "images" / "coral" / "owl.jpg"
    report = run_identify_bench(
        photos, photos, split=2, negatives=[owl], notes=_notes(tmp_path), coverage="none", details=True
    )
    assert report["notes_coverage"] == "none" and report["notes_indexed"] == 1  # only kakapo.md
    rows = report["split_run"]["details"]
    assert [r["truth"] for r in rows] == ["ara_macao", "jako_grey", None]
    for row in rows:
        assert row["decision"] and row["reasoning"] and row["level"] in ("High", "Medium", "Low")
        assert len(row["candidates"]) == 2 and row["p_none"] is not None
    assert rows[2]["correct"] is None and rows[0]["correct"] in (True, False)
    text = format_report(report)
    assert "notes for none of them" in text and "owl.jpg: truth None" in text
