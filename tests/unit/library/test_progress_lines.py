"""Progress lines inside one file: the unit being read out of how many, the chunks embedded, and the
time left once the file has taken a few seconds; the window reads the file's name back from them."""

from __future__ import annotations

import time

from desktop_app.core.library import reasons
from desktop_app.core.library.progress_lines import FileProgress, eta
from desktop_app.core.messages import from_english, message, render, translations


def test_a_line_names_the_unit_and_its_count_and_the_time_left_after_three_seconds():
    fresh = FileProgress("DA-619p.pdf")
    assert str(fresh.reading("page", 1, 619)) == "DA-619p.pdf: reading page 1 of 619"
    assert str(fresh.reading("chapter", 4, None)) == "DA-619p.pdf: reading chapter 4"
    assert str(fresh.reading("odd kind", 2, 5)) == "DA-619p.pdf: reading part 2 of 5"

    ten_seconds_in = FileProgress("DA-619p.pdf", time.monotonic() - 10)
    assert (
        str(ten_seconds_in.reading("page", 101, 619))
        == "DA-619p.pdf: reading page 101 of 619, about 50 s left"
    )
    assert (
        str(ten_seconds_in.embedding(500, 2894))
        == "DA-619p.pdf: 500 of 2894 chunks embedded, about 50 s left"
    )
    assert (
        str(ten_seconds_in.reading("OCR page", 3, 4))
        == "DA-619p.pdf: reading OCR page 3 of 4, about 10 s left"
    )


def test_the_time_left_is_rounded_to_five_seconds_or_up_to_minutes():
    assert str(eta(1)) == "about 5 s left"
    assert str(eta(41)) == "about 40 s left"
    assert str(eta(61)) == "about 2 min left"


def test_a_line_reads_in_chinese_with_its_unit_and_time_left_translated():
    line = "DA-619p.pdf: reading page 101 of 619, about 2 min left"
    assert (
        render(from_english(line), translations("zh_CN"))
        == "DA-619p.pdf：正在读取第 101 页（共 619），约剩 2 分钟"
    )
    timeout = "took longer than 120 s at slide 3 (index.max_seconds_per_unit)"
    assert (
        render(from_english(timeout), translations("zh_CN"))
        == "在第 3 张幻灯片处耗时超过 120 秒（index.max_seconds_per_unit）"
    )


def test_the_window_marks_the_file_a_line_is_about():
    from desktop_app.gui.knowledge.panel import progress_name

    assert progress_name(FileProgress("DA-619p.pdf").reading("page", 3, 619)) == "DA-619p.pdf"
    assert progress_name(FileProgress("big.md").embedding(64, 300)) == "big.md"
    assert progress_name("notes/kea.md") == "notes/kea.md"  # a file name: as it is
    assert progress_name("page 1.pdf") == "page 1.pdf"
    assert progress_name(message(reasons.WAITING_FOR_WRITER, holder="kdesk (pid 12)")) == ""
