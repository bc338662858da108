"""Hostile files (issue 33), built at test time just past each parser limit: each is refused with a
clear reason, in a few seconds and a few hundred MB, and no real document meets a limit.

The full-size cases (a 158M-paragraph slide, a 43M-cell row, 100k chapters...) are
``kdesk bench hostile`` (lab/kdesk_lab/hostile.py, the same builders).
"""

from __future__ import annotations

import logging
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from desktop_app.core.library import reasons
from desktop_app.core.library.documents import ParseError
from desktop_app.core.library.parsers import limits, parse_file, progress
from desktop_app.core.library.parsers.package import damaged_reason
from kdesk_lab import hostile


def _refused(path: Path) -> ParseError:
    with pytest.raises(ParseError) as caught:
        parse_file(path)
    return caught.value


def test_a_slide_of_one_paragraph_past_the_limit_is_refused_as_too_large(tmp_path: Path) -> None:
    error = _refused(hostile.pptx_paragraphs(tmp_path, limits.MAX_PARAGRAPHS + 1))
    assert error.message.code == reasons.TOO_MANY_PARAGRAPHS
    assert str(error) == (
        "too large: the PPTX has more than 200,000 paragraphs, the limit; split it into smaller files"
    )


def test_a_docx_of_one_paragraph_past_the_limit_is_refused_as_too_large(tmp_path: Path) -> None:
    error = _refused(hostile.docx_paragraphs(tmp_path, limits.MAX_PARAGRAPHS + 1))
    assert str(error).startswith("too large: the DOCX has more than 200,000 paragraphs")


def test_a_docx_paragraph_of_more_runs_than_a_tree_may_hold_is_refused(tmp_path: Path) -> None:
    head = f'<?xml version="1.0"?><w:document xmlns:w="{hostile._W_NS}"><w:body><w:p>'
    runs = limits.MAX_TREE_ELEMENTS // 2 + 1  # two elements a run

    def write(stream: zipfile.ZipExtFile) -> None:
        hostile._write_repeated(stream, head, "<w:r><w:t/></w:r>", runs, "</w:p></w:body></w:document>")

    error = _refused(hostile._docx(tmp_path / "runs.docx", write))
    assert error.message.code == reasons.PART_TOO_MANY_ELEMENTS
    assert "word/document.xml of the DOCX has more than 1,000,000 XML elements in one piece" in str(error)


def test_a_sheet_row_past_excels_column_limit_is_refused(tmp_path: Path) -> None:
    error = _refused(hostile.xlsx_row(tmp_path, limits.MAX_COLUMNS + 1))
    assert str(error) == (
        "too large: a row of the XLSX has more than 16,384 columns, the limit; split it into smaller files"
    )


def test_a_shared_strings_part_past_the_character_limit_is_refused(tmp_path: Path) -> None:
    error = _refused(hostile.xlsx_shared_strings(tmp_path, limits.MAX_TEXT_CHARS // 10**6 + 1))
    assert str(error).startswith("too large: the XLSX has more than 50,000,000 characters of text")


def test_a_workbook_of_more_cells_than_the_limit_is_refused_before_openpyxl_reads_it(tmp_path: Path) -> None:
    template, sheet = hostile._xlsx_template()
    head = sheet[: sheet.index("<sheetData")] + "<sheetData>"
    tail = "</sheetData>" + sheet[sheet.index("</sheetData>") + len("</sheetData>") :]
    row = "<row>" + '<c r="A1"/><c r="XFD1"/>' + "</row>"  # two cells, openpyxl fills 16,384
    rows = limits.MAX_CELLS // limits.MAX_COLUMNS + 1

    def write(stream: zipfile.ZipExtFile) -> None:
        hostile._write_repeated(stream, head, row, rows, tail)

    path = hostile._zip(tmp_path / "gaps.xlsx", [("xl/worksheets/sheet1.xml", write)], template)
    assert str(_refused(path)).startswith("too large: the XLSX has more than 1,000,000 cells")


def test_a_csv_row_past_the_column_limit_is_refused(tmp_path: Path) -> None:
    error = _refused(hostile.csv_columns(tmp_path, limits.MAX_COLUMNS + 1))
    assert str(error).startswith("too large: a row of the CSV has more than 16,384 columns")


def test_a_book_of_more_chapters_than_the_limit_is_refused(tmp_path: Path) -> None:
    error = _refused(hostile.epub_chapters(tmp_path, limits.MAX_CHAPTERS + 1))
    assert str(error) == (
        "too large: the EPUB has 10,001 chapters, more than the limit of 10,000; split it into smaller books"
    )


def test_a_book_past_the_character_limit_is_refused(tmp_path: Path) -> None:
    error = _refused(hostile.epub_big_chapters(tmp_path, 1, megabytes=limits.MAX_TEXT_CHARS // 10**6 + 2))
    assert str(error).startswith("too large: the EPUB has more than 50,000,000 characters of text")


def test_billion_laughs_in_a_docx_is_refused_as_entities_not_as_bad_xml(tmp_path: Path) -> None:
    error = _refused(hostile.docx_laughs(tmp_path))
    assert str(error) == (
        "refused DOCX: word/document.xml declares XML entities, which are refused "
        "(they can expand without bound)"
    )


def test_billion_laughs_in_a_book_package_document_is_refused(tmp_path: Path) -> None:
    error = _refused(hostile.epub_laughs(tmp_path))
    assert error.message.code == reasons.XML_ENTITIES
    assert "OEBPS/content.opf declares XML entities" in str(error)


def test_a_book_chapter_declaring_entities_is_refused_not_indexed_as_text(tmp_path: Path) -> None:
    error = _refused(hostile.epub_dtd(tmp_path))
    assert "OEBPS/c1.xhtml declares XML entities" in str(error)


def test_a_pdf_cut_at_60_percent_keeps_its_readable_pages(tmp_path: Path, shared_data: Path) -> None:
    source = shared_data / "docs" / "pypdf" / "resources" / "Seige_of_Vicksburg_Sample_OCR.pdf"
    logging.disable(logging.WARNING)  # pypdf warns about the damage it works around
    try:
        sections = parse_file(hostile.truncated_pdf(tmp_path, 60, source))
    finally:
        logging.disable(logging.NOTSET)
    assert sorted({s.page for s in sections}) == [1, 2, 3, 4]  # of 6
    assert sections[0].metadata["truncated"] is True
    assert "VICKSBURG" in sections[-1].text


def test_a_pdf_cut_before_any_readable_page_says_it_is_truncated(tmp_path: Path, shared_data: Path) -> None:
    source = shared_data / "docs" / "pypdf" / "resources" / "pdflatex-outline.pdf"  # pages in object streams
    logging.disable(logging.WARNING)
    try:
        error = _refused(hostile.truncated_pdf(tmp_path, 60, source))
    finally:
        logging.disable(logging.NOTSET)
    assert str(error).startswith("corrupt PDF: none of its pages can be read; the file is probably truncated")


def test_libxml2_internals_do_not_reach_the_user(tmp_path: Path) -> None:
    template, slide = hostile._pptx_template()
    head, rest = slide.split("<a:p>", 1)
    nested = "<a:p>" + "<a:r>" * 300 + "</a:r>" * 300 + "</a:p>"  # deeper than lxml's 256
    path = hostile._zip(
        tmp_path / "deep.pptx",
        [("ppt/slides/slide1.xml", (head + nested + rest[rest.index("</p:txBody>") :]).encode())],
        template,
    )
    error = _refused(path)
    assert str(error) == "corrupt PPTX: its XML is too large or too deeply nested to be read"
    from lxml import etree

    with pytest.raises(etree.XMLSyntaxError) as caught:
        etree.fromstring(b"<a>" * 300 + b"</a>" * 300)
    assert "XML_PARSE_HUGE" in str(caught.value)
    assert str(damaged_reason(caught.value)) == "its XML is too large or too deeply nested to be read"


def test_parsers_report_their_units_of_progress(tmp_path: Path) -> None:
    heard: list[tuple[str, int, int | None]] = []
    with progress.listening(lambda kind, number, count: heard.append((kind, number, count))):
        parse_file(hostile.pptx_paragraphs(tmp_path, 3))
        parse_file(hostile.epub_chapters(tmp_path, 2))
    assert ("slide", 1, 1) in heard
    assert ("chapter", 2, 2) in heard


def test_the_full_size_slide_of_the_issue_is_refused_in_little_memory(tmp_path: Path) -> None:
    # 158 million empty paragraphs, 1.4 MB: python-pptx reached 9.8 GB on it; now 1.5 GB is plenty.
    path = hostile.pptx_paragraphs(tmp_path, 158_000_000)
    script = (
        "import sys; from pathlib import Path; from desktop_app.core.library.parsers import parse_file\n"
        "from desktop_app.core.library.documents import ParseError\n"
        "try: parse_file(Path(sys.argv[1]))\nexcept ParseError as e: print(e)\n"
    )
    done = subprocess.run(
        ["prlimit", "--as=1500000000", "--", sys.executable, "-c", script, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.startswith("too large: the PPTX has more than 200,000 paragraphs"), done.stderr


@pytest.mark.parametrize("suffix", [".docx", ".pptx", ".xlsx", ".epub"])
def test_no_real_document_meets_a_limit(suffix: str, shared_data: Path) -> None:
    files = sorted((shared_data / "docs").rglob(f"*{suffix}"))
    limit_codes = {
        reasons.TOO_MANY_PARAGRAPHS,
        reasons.TOO_MANY_ELEMENTS,
        reasons.PART_TOO_MANY_ELEMENTS,
        reasons.TOO_MANY_CHARS,
        reasons.TOO_MANY_COLUMNS,
        reasons.TOO_MANY_CELLS,
        reasons.TOO_MANY_CHAPTERS,
        reasons.XML_ENTITIES,
    }
    for path in files:
        try:
            parse_file(path)
        except ParseError as exc:
            assert exc.message.code not in limit_codes, f"{path.name}: {exc}"


def test_a_sheet_part_named_like_a_picture_is_counted_all_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # openpyxl follows the workbook's relationships to a part of any name, so the scan goes by content.
    import openpyxl

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("openpyxl opened a workbook the scan should have refused")

    monkeypatch.setattr(openpyxl, "load_workbook", never)
    path = hostile.xlsx_row(tmp_path, limits.MAX_COLUMNS + 1)
    renamed = tmp_path / "renamed.xlsx"
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(renamed, "w", zipfile.ZIP_DEFLATED) as out:
        for info in source.infolist():
            data = source.read(info.filename)
            name = info.filename.replace("sheet1.xml", "sheet1.png")
            if info.filename == "xl/_rels/workbook.xml.rels":
                data = data.replace(b"sheet1.xml", b"sheet1.png")
            out.writestr(name, data)
    assert str(_refused(renamed)).startswith("too large: a row of the XLSX has more than 16,384 columns")


def test_a_part_of_more_elements_than_the_streamed_limit_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "MAX_XML_ELEMENTS", 1000)  # the real limit, 10 M, takes ~10 s to reach
    head = f'<?xml version="1.0"?><w:document xmlns:w="{hostile._W_NS}"><w:body><w:p><w:r><w:t>x</w:t></w:r></w:p>'

    def write(stream: zipfile.ZipExtFile) -> None:
        hostile._write_repeated(stream, head, "<w:bookmarkEnd/>", 1000, "</w:body></w:document>")

    error = _refused(hostile._docx(tmp_path / "elements.docx", write))
    assert str(error) == (
        "too large: the DOCX has more than 1,000 XML elements, the limit; split it into smaller files"
    )


def test_a_chapter_with_an_ordinary_doctype_is_read(tmp_path: Path) -> None:
    doctype = (
        '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">'
    )
    chapters = iter([("c1.xhtml", hostile._xhtml("<p>Call me Ishmael.</p>", prolog=doctype))])
    sections = parse_file(hostile._epub(tmp_path / "book.epub", chapters, 1))
    assert sections[0].text == "Call me Ishmael."
