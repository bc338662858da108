"""PPTX, XLSX, CSV/TSV and EPUB parsers: sections with their slide, sheet and chapter, bad inputs of
each kind refused with a specific ParseError, the shared real files, and one end-to-end search
over all four formats (with HTML) next to broken files in the same batch."""

from __future__ import annotations

import collections
import datetime as dt
import random
import sys
import zipfile
from pathlib import Path

import openpyxl
import pytest
from pptx import Presentation
from pptx.chart.data import CategoryChartData
from pptx.enum.chart import XL_CHART_TYPE
from pptx.util import Inches, Pt

from desktop_app.core.library.documents import ParseError
from desktop_app.core.library.parsers import parse_file

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def ole_file(path: Path, stream: str) -> Path:
    """An OLE compound file whose directory names ``stream`` (names are UTF-16, NUL-padded)."""
    path.write_bytes(OLE_MAGIC + bytes(1024) + stream.encode("utf-16-le") + bytes(512))
    return path


def rewrite_member(source: Path, target: Path, member: str, data: bytes) -> Path:
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            dst.writestr(item.filename, data if item.filename == member else src.read(item.filename))
    return target


# --------------------------------------------------------------------------- builders


def make_pptx(path: Path) -> Path:
    """Four slides: a title slide, bullets with a table, an empty slide, and a slide whose text is in a
    group shape, a chart's title and its speaker notes."""
    prs = Presentation()
    first = prs.slides.add_slide(prs.slide_layouts[0])
    first.shapes.title.text = "Knowledge Desk"
    first.placeholders[1].text = "A local assistant for your documents"

    second = prs.slides.add_slide(prs.slide_layouts[5])  # title only
    second.shapes.title.text = "Parrot diets"
    box = second.shapes.add_textbox(Inches(1), Inches(1.5), Inches(6), Inches(1)).text_frame
    box.text = "Macaws crack palm nuts"
    line = box.add_paragraph()
    line.text = "Lorikeets drink"
    line.add_line_break()
    line.add_run().text = "nectar from flowers"
    table = second.shapes.add_table(3, 2, Inches(1), Inches(3), Inches(6), Inches(1.5)).table
    for r, row in enumerate([("Species", "Food"), ("Macaw", "nuts | seeds"), ("Lorikeet", "nectar")]):
        for c, text in enumerate(row):
            table.cell(r, c).text = text

    prs.slides.add_slide(prs.slide_layouts[6])  # blank: no text at all

    fourth = prs.slides.add_slide(prs.slide_layouts[5])
    fourth.shapes.title.text = "Quarterly results"
    group = fourth.shapes.add_group_shape()
    inner = group.shapes.add_textbox(Inches(1), Inches(2), Inches(4), Inches(1)).text_frame
    inner.text = "Seed sales rose in the third quarter"
    inner.paragraphs[0].runs[0].font.size = Pt(20)
    data = CategoryChartData()
    data.categories = ["Q1", "Q2", "Q3"]
    data.add_series("Seed sales", (10, 12, 19))
    chart = fourth.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, 0, 0, Inches(4), Inches(3), data).chart
    chart.has_title = True
    chart.chart_title.text_frame.text = "Seed sales by quarter"
    fourth.notes_slide.notes_text_frame.text = "Mention the cuttlebone shortage in Tasmania."
    prs.save(path)
    return path


def make_xlsx(path: Path, rows: int = 120) -> Path:
    """Sheets "Birds" (small, data from column B), "Empty" and "Prices" (``rows`` rows)."""
    wb = openpyxl.Workbook()
    birds = wb.active
    birds.title = "Birds"
    birds.append([None, "Species", "Weight (g)", "Seen", "Protected"])
    birds.append([None, "Scarlet macaw", 1000.0, dt.datetime(2024, 5, 17), True])
    birds.append([None, "Budgerigar", 35.5, dt.date(2023, 1, 2), False])
    birds.append([])
    birds.append([None, "Kea", 922, None, True])
    wb.create_sheet("Empty")
    prices = wb.create_sheet("Prices")
    prices.append(["Item", "Supplier", "Price"])
    for i in range(rows):
        prices.append([f"item-{i:03d}", f"Supplier number {i % 7}", i * 1.25])
    wb.save(path)
    return path


CONTAINER = (
    '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
    '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
    "</rootfiles></container>"
)


def chapter(body: str, title: str = "x") -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?><!DOCTYPE html><html xmlns="http://www.w3.org/1999/xhtml">'
        f"<head><title>{title}</title><style>p {{ margin: 0 }}</style></head><body>{body}</body></html>"
    )


def make_epub(path: Path, *, toc: str = "nav", extra: dict[str, str] | None = None) -> Path:
    """A book of three chapters whose spine order differs from the manifest's: "Loomings" (a heading
    with a line break in it), "The Carpet-Bag" (no heading: its title comes from the table of contents)
    and "The Spouter-Inn". ``toc``: "nav" (EPUB 3) or "ncx" (EPUB 2)."""
    chapters = {
        "text/ch2.xhtml": chapter("<p>Stuffed a shirt or two into my old carpet-bag.</p>"),
        "text/ch1.xhtml": chapter(
            "<h1>Chapter 1<br/>Loomings</h1><p>Call me Ishmael.</p><script>var hidden = 1;</script>"
        ),
        "text/ch3.xhtml": chapter("<h1>Chapter 3. The Spouter-Inn</h1><p>Entering that gable-ended inn.</p>"),
    }
    titles = {
        "text/ch1.xhtml": "Loomings",
        "text/ch2.xhtml": "The Carpet-Bag",
        "text/ch3.xhtml": "The Spouter-Inn",
    }
    items = "".join(
        f'<item id="c{name[-7]}" href="{name}" media-type="application/xhtml+xml"/>'
        for name in sorted(chapters)
    )
    if toc == "nav":
        links = "".join(f'<li><a href="{name}">{title}</a></li>' for name, title in titles.items())
        nav = (
            '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><body>'
            f'<nav epub:type="toc"><ol>{links}</ol></nav></body></html>'
        )
        items += '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
        spine_attr, toc_files = "", {"OEBPS/nav.xhtml": nav}
    else:
        points = "".join(
            f'<navPoint id="p{i}"><navLabel><text>{title}</text></navLabel><content src="{name}#top"/></navPoint>'
            for i, (name, title) in enumerate(titles.items())
        )
        ncx = f'<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1"><navMap>{points}</navMap></ncx>'
        items += '<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>'
        spine_attr, toc_files = ' toc="ncx"', {"OEBPS/toc.ncx": ncx}
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        f"<metadata/><manifest>{items}</manifest><spine{spine_attr}>"
        '<itemref idref="c1"/><itemref idref="c2"/><itemref idref="c3"/></spine></package>'
    )
    files = {
        "META-INF/container.xml": CONTAINER,
        "OEBPS/content.opf": opf,
        **{f"OEBPS/{name}": text for name, text in chapters.items()},
        **toc_files,
        **(extra or {}),
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        for name, text in files.items():
            zf.writestr(name, text)
    return path


# --------------------------------------------------------------------------- PPTX


def test_pptx_gives_one_section_per_slide_with_its_number(tmp_path: Path) -> None:
    sections = parse_file(make_pptx(tmp_path / "deck.pptx"))
    assert [(s.page, s.heading_path) for s in sections] == [
        (1, ["Slide 1: Knowledge Desk"]),
        (2, ["Slide 2: Parrot diets"]),
        (4, ["Slide 4: Quarterly results"]),  # slide 3 has no text; the numbers stay the slides'
    ]
    assert sections[0].text == "Slide 1: Knowledge Desk\n\nA local assistant for your documents"
    assert sections[1].text == (
        "Slide 2: Parrot diets\n\n"
        "Macaws crack palm nuts\nLorikeets drink\nnectar from flowers\n\n"
        "| Species | Food |\n| --- | --- |\n| Macaw | nuts \\| seeds |\n| Lorikeet | nectar |"
    )
    assert sections[2].text == (
        "Slide 4: Quarterly results\n\nSeed sales rose in the third quarter\n\nSeed sales by quarter\n\n"
        "Speaker notes:\nMention the cuttlebone shortage in Tasmania."
    )


def test_pptx_without_text_is_empty(tmp_path: Path) -> None:
    prs = Presentation()
    prs.slides.add_slide(prs.slide_layouts[6])
    prs.save(tmp_path / "blank.pptx")
    with pytest.raises(ParseError, match="^empty document: no text$"):
        parse_file(tmp_path / "blank.pptx")


def _docx_bytes(tmp_path: Path) -> bytes:
    import docx

    document = docx.Document()
    document.add_paragraph("A Word document.")
    document.save(tmp_path / "word.docx")
    return (tmp_path / "word.docx").read_bytes()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda tmp: b"", "corrupt PPTX: the file is empty"),
        (
            lambda tmp: b"Slide 1: plain notes saved as text",
            "corrupt PPTX: the file is not a ZIP archive, so it is not a PowerPoint presentation "
            "(it may be another format renamed .pptx, or badly damaged)",
        ),
        (
            lambda tmp: make_pptx(tmp / "whole.pptx").read_bytes()[:20000],
            "corrupt PPTX: the ZIP archive has no directory at its end, so the file is probably "
            "truncated (an incomplete download or copy)",
        ),
        (
            _docx_bytes,
            "corrupt PPTX: the file is a Word document (.docx), not a PowerPoint presentation",
        ),
        (
            lambda tmp: ole_file(tmp / "x", "EncryptedPackage").read_bytes(),
            "encrypted PPTX: a password is required",
        ),
        (
            lambda tmp: ole_file(tmp / "x", "PowerPoint Document").read_bytes(),
            "corrupt PPTX: this is an old binary PowerPoint (.ppt) file; save it as .pptx",
        ),
        (
            lambda tmp: ole_file(tmp / "x", "Workbook").read_bytes(),
            "corrupt PPTX: this is an old binary Excel (.xls) file, not a PowerPoint presentation",
        ),
    ],
    ids=["empty", "renamed-text", "truncated", "renamed-docx", "encrypted", "old-ppt", "old-xls"],
)
def test_bad_pptx_is_refused_with_the_reason(tmp_path: Path, make, message: str) -> None:
    path = tmp_path / "bad.pptx"
    path.write_bytes(make(tmp_path))
    with pytest.raises(ParseError) as info:
        parse_file(path)
    assert str(info.value) == message


def test_pptx_with_a_damaged_slide_names_the_problem(tmp_path: Path) -> None:
    good = make_pptx(tmp_path / "good.pptx")
    bad = rewrite_member(good, tmp_path / "bad.pptx", "ppt/slides/slide2.xml", b"<p:sld>cut off")
    with pytest.raises(ParseError, match=r"^corrupt PPTX: a part is not well-formed XML \(.+\)$"):
        parse_file(bad)


def test_pptx_that_unpacks_too_large_is_refused_before_it_is_opened(tmp_path, monkeypatch) -> None:
    import desktop_app.core.library.parsers.pptx as pptx_parser

    monkeypatch.setattr(pptx_parser, "MAX_UNPACKED_BYTES", 10_000)  # the real cap is 1 GB
    with pytest.raises(
        ParseError, match=r"^too large: the PPTX unpacks to [\d.]+ MB, more than the 0\.01 MB"
    ):
        parse_file(make_pptx(tmp_path / "deck.pptx"))


# --------------------------------------------------------------------------- XLSX and CSV


def test_xlsx_gives_each_sheet_as_a_markdown_table_under_its_name(tmp_path: Path) -> None:
    sections = parse_file(make_xlsx(tmp_path / "book.xlsx", rows=3))
    assert [(s.heading_path, s.page) for s in sections] == [(["Birds"], None), (["Prices"], None)]
    assert sections[0].text == (
        "Sheet: Birds\n\n"
        "| Species | Weight (g) | Seen | Protected |\n| --- | --- | --- | --- |\n"
        "| Scarlet macaw | 1000 | 2024-05-17 | TRUE |\n"
        "| Budgerigar | 35.5 | 2023-01-02 | FALSE |\n"
        "| Kea | 922 |  | TRUE |"
    )
    assert sections[1].text.splitlines()[-1] == "| item-002 | Supplier number 2 | 2.5 |"


def test_a_big_sheet_is_split_with_the_header_repeated_in_every_section(tmp_path: Path) -> None:
    from desktop_app.core.library.parsers.sheets import SECTION_CHARS

    sections = [
        s for s in parse_file(make_xlsx(tmp_path / "book.xlsx", rows=120)) if s.heading_path == ["Prices"]
    ]
    assert len(sections) > 3
    seen: list[str] = []
    for section in sections:
        heading, blank, header, rule, *rows = section.text.splitlines()
        assert heading.startswith("Sheet: Prices (rows ") and not blank
        assert (header, rule) == ("| Item | Supplier | Price |", "| --- | --- | --- |")
        first, last = heading.removeprefix("Sheet: Prices (rows ").rstrip(")").split("–")
        assert [f"| item-{int(first) - 2:03d}", f"| item-{int(last) - 2:03d}"] == [
            rows[0][:10],
            rows[-1][:10],
        ]
        assert len(section.text) <= SECTION_CHARS + len(heading) + 2  # one chunk at the default size
        seen += rows
    assert seen == [f"| item-{i:03d} | Supplier number {i % 7} | {i * 1.25:g} |" for i in range(120)]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda tmp: b"", "corrupt XLSX: the file is empty"),
        (
            lambda tmp: b"species,colour\nmacaw,red\n",
            "corrupt XLSX: the file is not a ZIP archive, so it is not an Excel workbook "
            "(it may be another format renamed .xlsx, or badly damaged)",
        ),
        (
            lambda tmp: make_pptx(tmp / "deck.pptx").read_bytes(),
            "corrupt XLSX: the file is a PowerPoint presentation (.pptx), not an Excel workbook",
        ),
        (
            lambda tmp: ole_file(tmp / "x", "EncryptedPackage").read_bytes(),
            "encrypted XLSX: a password is required",
        ),
        (
            lambda tmp: ole_file(tmp / "x", "Workbook").read_bytes(),
            "corrupt XLSX: this is an old binary Excel (.xls) file; save it as .xlsx",
        ),
    ],
    ids=["empty", "renamed-csv", "renamed-pptx", "encrypted", "old-xls"],
)
def test_bad_xlsx_is_refused_with_the_reason(tmp_path: Path, make, message: str) -> None:
    path = tmp_path / "bad.xlsx"
    path.write_bytes(make(tmp_path))
    with pytest.raises(ParseError) as info:
        parse_file(path)
    assert str(info.value) == message


def test_xlsx_with_a_damaged_sheet_or_without_data_is_refused(tmp_path: Path) -> None:
    good = make_xlsx(tmp_path / "good.xlsx", rows=3)
    bad = rewrite_member(good, tmp_path / "bad.xlsx", "xl/worksheets/sheet1.xml", b"<worksheet><sheetData>")
    with pytest.raises(ParseError, match=r"^corrupt XLSX: a part is not well-formed XML \(.+\)$"):
        parse_file(bad)
    empty = tmp_path / "empty.xlsx"
    openpyxl.Workbook().save(empty)
    with pytest.raises(ParseError, match="^empty document: no text$"):
        parse_file(empty)


def test_a_workbook_over_the_cell_limit_is_refused(tmp_path, monkeypatch) -> None:
    import desktop_app.core.library.parsers.sheets as sheets

    monkeypatch.setattr(sheets, "MAX_CELLS", 100)  # the real limit is 1,000,000
    with pytest.raises(ParseError, match=r"^too large: the XLSX has more than 100 cells"):
        parse_file(make_xlsx(tmp_path / "book.xlsx", rows=120))


def test_csv_is_a_table_whatever_its_delimiter_and_encoding(tmp_path: Path) -> None:
    path = tmp_path / "birds.csv"
    path.write_bytes('种类;颜色;备注\n金刚鹦鹉;红色;"吃坚果; 也吃水果"\n\n凤头鹦鹉;白色;\n'.encode("gbk"))
    [section] = parse_file(path)
    assert section.heading_path == []
    assert section.text == (
        "birds.csv\n\n| 种类 | 颜色 | 备注 |\n| --- | --- | --- |\n"
        "| 金刚鹦鹉 | 红色 | 吃坚果; 也吃水果 |\n| 凤头鹦鹉 | 白色 |  |"
    )
    assert section.metadata["encoding"] == "gb18030"
    tsv = tmp_path / "birds.tsv"
    tsv.write_text("species\tcolour, mostly\nmacaw\tred, blue\n", encoding="utf-8")
    assert parse_file(tsv)[0].text.endswith(
        "| species | colour, mostly |\n| --- | --- |\n| macaw | red, blue |"
    )


def test_a_long_csv_repeats_its_header_and_bad_csv_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text("when,what\n" + "".join(f"2024-01-{i % 28 + 1:02d},event {i}\n" for i in range(200)))
    sections = parse_file(path)
    assert len(sections) > 3
    assert all(s.text.splitlines()[2] == "| when | what |" for s in sections)
    assert sections[0].text.startswith("log.csv (rows 2–")
    assert sum(s.text.count("| event ") for s in sections) == 200

    for name, data, message in [
        ("empty.csv", b"", "empty document: no text"),
        ("blank.csv", b" ,\n,,\n", "empty document: no text"),
        ("binary.csv", bytes(range(256)) * 8, "binary file: not text"),
        ("huge-field.csv", b'a,"' + b"x" * 200_000 + b'"\n', "corrupt CSV: field larger than field limit"),
    ]:
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ParseError, match=f"^{message}"):
            parse_file(tmp_path / name)


# --------------------------------------------------------------------------- EPUB


@pytest.mark.parametrize("toc", ["nav", "ncx"])
def test_epub_chapters_come_in_spine_order_with_their_titles(tmp_path: Path, toc: str) -> None:
    sections = parse_file(make_epub(tmp_path / "book.epub", toc=toc))
    assert [(s.heading_path, s.text) for s in sections] == [
        (["Chapter 1 Loomings"], "Chapter 1 Loomings\n\nCall me Ishmael."),
        (["The Carpet-Bag"], "The Carpet-Bag\n\nStuffed a shirt or two into my old carpet-bag."),
        (["Chapter 3. The Spouter-Inn"], "Chapter 3. The Spouter-Inn\n\nEntering that gable-ended inn."),
    ]


def test_epub_with_only_obfuscated_fonts_is_read(tmp_path: Path) -> None:
    fonts = (
        '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
        'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
        '<enc:EncryptionMethod Algorithm="http://www.idpf.org/2008/embedding"/>'
        '<enc:CipherData><enc:CipherReference URI="OEBPS/fonts/a.otf"/></enc:CipherData>'
        "</enc:EncryptedData></encryption>"
    )
    sections = parse_file(make_epub(tmp_path / "book.epub", extra={"META-INF/encryption.xml": fonts}))
    assert len(sections) == 3


DRM = (
    '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
    'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
    '<enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>'
    '<enc:CipherData><enc:CipherReference URI="OEBPS/text/ch1.xhtml"/></enc:CipherData>'
    "</enc:EncryptedData></encryption>"
)


def _plain_zip(tmp: Path) -> bytes:
    with zipfile.ZipFile(tmp / "plain.zip", "w") as zf:
        zf.writestr("chapter.txt", "Call me Ishmael.")
    return (tmp / "plain.zip").read_bytes()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda tmp: b"", "corrupt EPUB: the file is empty"),
        (
            lambda tmp: b"<html><body>Call me Ishmael.</body></html>",
            "corrupt EPUB: the file is not a ZIP archive, so it is not an EPUB book "
            "(it may be another format renamed .epub, or badly damaged)",
        ),
        (
            _plain_zip,
            "corrupt EPUB: the file is a ZIP archive but not an EPUB book (it has no META-INF/container.xml)",
        ),
        (_docx_bytes, "corrupt EPUB: the file is a Word document (.docx), not an EPUB book"),
        (
            lambda tmp: make_epub(tmp / "b.epub", extra={"META-INF/encryption.xml": DRM}).read_bytes(),
            "encrypted EPUB: the book is protected by DRM (copy protection), so its text cannot be read",
        ),
        (
            lambda tmp: rewrite_member(
                make_epub(tmp / "a.epub"), tmp / "b.epub", "OEBPS/content.opf", b"<package><manifest>"
            ).read_bytes(),
            "corrupt EPUB: OEBPS/content.opf is not well-formed XML (line 1, column 20)",
        ),
        (
            lambda tmp: rewrite_member(
                make_epub(tmp / "a.epub"), tmp / "b.epub", "OEBPS/content.opf", b"<package><spine/></package>"
            ).read_bytes(),
            "corrupt EPUB: OEBPS/content.opf lists no chapters in its spine",
        ),
        (
            lambda tmp: rewrite_member(
                make_epub(tmp / "a.epub"), tmp / "b.epub", "META-INF/container.xml", b"<container/>"
            ).read_bytes(),
            "corrupt EPUB: META-INF/container.xml names no package document (no rootfile)",
        ),
    ],
    ids=[
        "empty",
        "renamed-html",
        "plain-zip",
        "renamed-docx",
        "drm",
        "broken-opf",
        "no-spine",
        "no-rootfile",
    ],
)
def test_bad_epub_is_refused_with_the_reason(tmp_path: Path, make, message: str) -> None:
    path = tmp_path / "bad.epub"
    path.write_bytes(make(tmp_path))
    with pytest.raises(ParseError) as info:
        parse_file(path)
    assert str(info.value) == message


def test_epub_whose_chapter_is_missing_or_too_large_is_refused(tmp_path, monkeypatch) -> None:
    import desktop_app.core.library.parsers.epub as epub

    good = make_epub(tmp_path / "good.epub")
    missing = tmp_path / "missing.epub"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(missing, "w") as dst:
        for item in src.infolist():
            if item.filename != "OEBPS/text/ch3.xhtml":
                dst.writestr(item.filename, src.read(item.filename))
    with pytest.raises(
        ParseError, match="^corrupt EPUB: the chapter OEBPS/text/ch3.xhtml is not in the archive$"
    ):
        parse_file(missing)
    monkeypatch.setattr(epub, "MAX_PART_BYTES", 200)
    with pytest.raises(
        ParseError, match=r"^too large: \S+ unpacks to [\d.]+ MB, more than the 0\.0002 MB one part"
    ):
        parse_file(good)


@pytest.mark.parametrize(
    ("module", "name", "package"),
    [("pptx", "deck.pptx", "python-pptx"), ("openpyxl", "book.xlsx", "openpyxl")],
)
def test_a_missing_reader_library_is_named_with_its_install_command(
    tmp_path, monkeypatch, module, name, package
):
    path = tmp_path / name
    (make_pptx if module == "pptx" else make_xlsx)(path)
    monkeypatch.setitem(sys.modules, module, None)  # imports now fail as if it were not installed
    with pytest.raises(ParseError) as info:
        parse_file(path)
    assert f"needs the Python package {package}, which is not installed" in str(info.value)
    assert str(info.value).endswith(f"-m pip install {package}")


# --------------------------------------------------------------------------- real files


def test_shared_documents_under_these_suffixes_give_only_parse_errors(
    shared_data: Path, tmp_path: Path
) -> None:
    """The shared corpus has no PPTX, XLSX, CSV or EPUB: each real PDF and DOCX is read as one of them
    (a file renamed), and python-pptx's own template is read as the real PPTX it is."""
    import pptx

    files = sorted(p for p in (shared_data / "docs").rglob("*") if p.suffix.lower() in (".pdf", ".docx"))
    assert len(files) > 150
    refused: dict[str, collections.Counter[str]] = {}
    for i, source in enumerate(files):
        for suffix in (".pptx", ".xlsx", ".csv", ".epub"):
            link = tmp_path / f"{i}{suffix}"
            link.symlink_to(source)
            try:
                sections = parse_file(link)
            except ParseError as exc:
                refused.setdefault(suffix, collections.Counter())[str(exc)] += 1
            else:
                assert suffix == ".csv" and all(s.text.strip() for s in sections), source
    print(f"\n{len(files)} real PDF and DOCX files read as each suffix: {refused}")
    for suffix in (".pptx", ".xlsx", ".epub"):
        assert sum(refused[suffix].values()) == len(files)
        assert all(message.startswith(f"corrupt {suffix[1:].upper()}: ") for message in refused[suffix])
    template = Path(pptx.__file__).parent / "templates" / "default.pptx"
    with pytest.raises(ParseError, match="^empty document: no text$"):
        parse_file(template)


@pytest.mark.parametrize("suffix", [".pptx", ".xlsx", ".epub"])
def test_damaged_xml_parts_give_sections_or_a_parse_error(tmp_path: Path, suffix: str) -> None:
    """Bytes flipped, parts cut short or left out, across every XML part: never another exception."""
    make = {".pptx": make_pptx, ".xlsx": lambda p: make_xlsx(p, rows=20), ".epub": make_epub}[suffix]
    source = make(tmp_path / f"good{suffix}")
    with zipfile.ZipFile(source) as zf:
        parts = {name: zf.read(name) for name in zf.namelist()}
    names = sorted(n for n in parts if n.endswith((".xml", ".rels", ".xhtml", ".opf", ".ncx")))
    rng = random.Random(21)
    for trial in range(60):
        name = names[trial % len(names)]
        data = bytearray(parts[name])
        if trial % 3 == 0:
            for _ in range(rng.randrange(1, 6)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        elif trial % 3 == 1:
            del data[rng.randrange(len(data)) :]
        damaged = tmp_path / f"damaged{suffix}"
        with zipfile.ZipFile(damaged, "w") as zf:
            for member, content in parts.items():
                if member != name:
                    zf.writestr(member, content)
                elif trial % 3 != 2:  # the third kind: the part is missing
                    zf.writestr(member, bytes(data))
        try:
            parse_file(damaged)
        except ParseError:
            pass


# --------------------------------------------------------------------------- end to end


def test_slides_sheets_pages_and_books_are_found_by_search_beside_broken_files(tmp_path, minilm) -> None:
    from desktop_app.core.config import Config
    from desktop_app.core.library.knowledge import KnowledgeBase

    kb = KnowledgeBase(tmp_path / "data", config=Config(), embedder=minilm)
    folder = kb.knowledge_dir
    make_pptx(folder / "deck.pptx")
    workbook = openpyxl.load_workbook(make_xlsx(folder / "birds.xlsx", rows=60))
    workbook["Prices"]["B54"] = "Kakapo Seed Traders"  # item-052, in one of the sheet's later sections
    workbook.save(folder / "birds.xlsx")
    make_epub(folder / "moby.epub")
    (folder / "page.html").write_text(
        "<html><head><script>var tracking = 1;</script></head><body><h1>Garden birds</h1><p>Intro.</p>"
        "<h2>Feeders</h2><p>Robins prefer mealworms on a flat tray feeder.</p></body></html>",
        encoding="utf-8",
    )
    (folder / "renamed.pptx").write_text("These are notes, not slides.", encoding="utf-8")
    ole_file(folder / "locked.xlsx", "EncryptedPackage")
    (folder / "broken.epub").write_bytes(b"PK\x03\x04 cut")
    try:
        report = kb.sync()
        assert sorted(report.added) == sorted(
            [
                "deck.pptx",
                "birds.xlsx",
                "moby.epub",
                "page.html",
                "renamed.pptx",
                "locked.xlsx",
                "broken.epub",
            ]
        )
        failed = {n: str(why) for n, why in report.failed}
        assert sorted(failed) == ["broken.epub", "locked.xlsx", "renamed.pptx"]
        assert failed["locked.xlsx"] == "encrypted XLSX: a password is required"
        assert failed["renamed.pptx"].startswith("corrupt PPTX: the file is not a ZIP archive")
        assert failed["broken.epub"].startswith("corrupt EPUB: the ZIP archive has no directory")

        [hit] = kb.search("cuttlebone shortage in Tasmania", top_k=1)
        assert (hit.source, hit.page) == ("deck.pptx", 4)
        assert hit.text.startswith("Slide 4: Quarterly results")
        [hit] = kb.search("what do Kakapo Seed Traders charge", top_k=1)
        assert (hit.source, hit.heading_path) == ("birds.xlsx", ["Prices"])
        assert (
            "| item-052 | Kakapo Seed Traders | 65 |" in hit.text
            and "| Item | Supplier | Price |" in hit.text
        )
        [hit] = kb.search("which food do robins prefer on a tray feeder", top_k=1)
        assert (hit.source, hit.heading_path) == ("page.html", ["Garden birds", "Feeders"])
        [hit] = kb.search("stuffed a shirt into the carpet-bag", top_k=1)
        assert (hit.source, hit.heading_path) == ("moby.epub", ["The Carpet-Bag"])
    finally:
        kb.close()


def test_a_slide_is_cited_as_a_slide_everywhere():
    """kdesk search, kdesk ask, the chat chips and the model's context say "slide 3" for a PPTX."""
    from desktop_app.core.ask.prompts import block_header
    from desktop_app.core.library.documents import page_label

    assert page_label("talks/deck.PPTX", 3) == "slide 3"
    assert page_label("paper.pdf", 3) == "p. 3" and page_label("notes.md", None) == ""
    assert block_header(2, "talks/deck.pptx", 3) == "[2] talks/deck.pptx, slide 3"
    assert block_header(1, "paper.pdf", 7) == "[1] paper.pdf, p. 7"
