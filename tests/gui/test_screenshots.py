"""`kdesk bench ui --screenshots DIR`: PNGs of the window's main states, at the window's size."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QFontDatabase, QImage

from kdesk_lab.screenshots import WINDOW_SIZE, take_screenshots


def _spread(image: QImage) -> float:
    """The variance of grey levels over a grid of pixels (a blank image gives 0)."""
    step = 12
    greys = [
        QImage.pixelColor(image, x, y).lightness()
        for y in range(0, image.height(), step)
        for x in range(0, image.width(), step)
    ]
    mean = sum(greys) / len(greys)
    return sum((g - mean) ** 2 for g in greys) / len(greys)


def test_bench_ui_takes_screenshots_option():
    from desktop_app.cli.main import build_parser

    args = build_parser().parse_args(["bench", "ui", "--screenshots", "out", "--sample-data", "data"])
    assert (args.screenshots, args.sample_data) == (Path("out"), Path("data"))
    assert args.func.__name__ == "cmd_bench_ui"


def test_screenshots_of_the_main_states_are_written_at_the_window_size(qtbot, tmp_path, minilm, shared_data):
    states = ("loading", "empty", "indexing", "answer", "note", "summary", "compare", "settings", "about")
    # Chinese needs a font with Chinese characters (take_screenshots refuses without one).
    lang = "zh_CN" if QFontDatabase.families(QFontDatabase.WritingSystem.SimplifiedChinese) else "en"
    written = take_screenshots(
        tmp_path / "shots", languages=(lang,), states=states, sample_data=shared_data, embedder=minilm
    )
    assert [p.name for p in written] == [f"{s}-{lang}.png" for s in states]
    spreads = {}
    for path in written:
        image = QImage(str(path))
        assert not image.isNull(), path
        assert (image.width(), image.height()) == WINDOW_SIZE, path
        assert path.stat().st_size < 200_000, path  # 256 colours
        spreads[path.name] = _spread(image)
    assert all(s > 100 for s in spreads.values()), spreads  # not blank
