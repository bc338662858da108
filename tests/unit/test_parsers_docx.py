"""DOCX parser: heading sections, tables as Markdown in body order, empty and corrupt files."""

from __future__ import annotations

import zipfile
from pathlib import Path

import docx
import pytest

from desktop_app.core.documents import ParseError
from desktop_app.core.parsers import parse_file


def test_headings_split_sections_and_keep_their_path(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("Knowledge Desk", style="Title")
    document.add_paragraph("A local assistant.")
    document.add_heading("Install", level=1)
    document.add_paragraph("Run the installer.")
    document.add_heading("Linux", level=2)
    document.add_paragraph("Use the shell script.")
    document.add_heading("Use", level=1)
    document.add_paragraph("Ask a question.")
    path = tmp_path / "guide.docx"
    document.save(path)

    sections = parse_file(path)
    assert [s.heading_path for s in sections] == [
        ["Knowledge Desk"],
        ["Knowledge Desk", "Install"],
        ["Knowledge Desk", "Install", "Linux"],
        ["Knowledge Desk", "Use"],
    ]
    assert sections[2].text == "Linux\n\nUse the shell script."
    assert all(s.page is None for s in sections)


def test_tables_become_markdown_in_body_order(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("Before the table.")
    table = document.add_table(rows=3, cols=2)
    cells = [["Species", "Colour"], ["Macaw", "red | blue"], ["Cockatoo", "white"]]
    for row, values in zip(table.rows, cells):
        for cell, value in zip(row.cells, values):
            cell.text = value
    document.add_paragraph("After the table.")
    path = tmp_path / "table.docx"
    document.save(path)

    [section] = parse_file(path)
    assert section.text == (
        "Before the table.\n\n"
        "| Species | Colour |\n| --- | --- |\n| Macaw | red \\| blue |\n| Cockatoo | white |\n\n"
        "After the table."
    )


def test_merged_cells_keep_the_table_rectangular(tmp_path: Path) -> None:
    document = docx.Document()
    table = document.add_table(rows=2, cols=3)
    table.cell(0, 0).merge(table.cell(0, 1)).text = "Wide header"
    table.cell(0, 2).text = "Right"
    table.cell(1, 0).text = "a"
    table.cell(1, 1).text = "b"
    table.cell(1, 2).text = "c"
    path = tmp_path / "merged.docx"
    document.save(path)

    [section] = parse_file(path)
    lines = section.text.splitlines()
    assert lines[0] == "| Wide header |  | Right |"
    assert lines[2] == "| a | b | c |"
    assert {line.count(" | ") for line in (lines[0], lines[2])} == {2}


def test_docx_without_text_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "blank.docx"
    docx.Document().save(path)
    with pytest.raises(ParseError, match="empty document: no text"):
        parse_file(path)


@pytest.mark.parametrize("data", [b"", b"this is not a zip file", b"PK\x03\x04 truncated zip"])
def test_non_zip_docx_is_corrupt(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "broken.docx"
    path.write_bytes(data)
    with pytest.raises(ParseError, match="corrupt DOCX"):
        parse_file(path)


def test_zip_that_is_not_a_word_document_is_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "archive.docx"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("hello.txt", "hello")
    with pytest.raises(ParseError, match="corrupt DOCX"):
        parse_file(path)


def test_docx_with_damaged_document_xml_is_corrupt(tmp_path: Path) -> None:
    good = tmp_path / "good.docx"
    document = docx.Document()
    document.add_paragraph("text")
    document.save(good)
    bad = tmp_path / "bad.docx"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(bad, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "word/document.xml":
                data = data[: len(data) // 2]
            dst.writestr(item, data)
    with pytest.raises(ParseError, match="corrupt DOCX"):
        parse_file(bad)


OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def test_password_protected_docx_asks_for_the_password(tmp_path: Path) -> None:
    # Word stores an encrypted DOCX as an OLE compound file holding an "EncryptedPackage" stream.
    path = tmp_path / "locked.docx"
    path.write_bytes(OLE_MAGIC + bytes(1024) + "EncryptedPackage".encode("utf-16-le") + bytes(512))
    with pytest.raises(ParseError, match="encrypted DOCX: a password is required"):
        parse_file(path)


def test_old_binary_doc_renamed_docx_says_so(tmp_path: Path) -> None:
    path = tmp_path / "old.docx"
    path.write_bytes(OLE_MAGIC + bytes(1024) + "WordDocument".encode("utf-16-le") + bytes(512))
    with pytest.raises(ParseError, match=r"old binary Word \(\.doc\)"):
        parse_file(path)


def test_macro_enabled_document_is_refused_without_leaking_the_full_path(tmp_path: Path) -> None:
    source = tmp_path / "plain.docx"
    document = docx.Document()
    document.add_paragraph("text")
    document.save(source)
    target = tmp_path / "macro.docx"
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(target, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "[Content_Types].xml":
                data = data.replace(
                    b"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
                    b"application/vnd.ms-word.document.macroEnabled.main+xml",
                )
            dst.writestr(item, data)
    with pytest.raises(ParseError, match="corrupt DOCX") as info:
        parse_file(target)
    assert str(tmp_path) not in str(info.value)


# --------------------------------------------------------------------------- shared corpora


def test_every_shared_docx_parses_or_gives_a_parse_error(shared_data: Path) -> None:
    files = sorted(
        p
        for folder in ("python-docx", "unstructured")
        for p in (shared_data / "docs" / folder).rglob("*.docx")
        if p.name != "handbook-872p.docx"  # several seconds on its own; the bad-input corpus test covers it
    )
    assert len(files) > 40
    parsed = 0
    for path in files:
        try:
            sections = parse_file(path)
        except ParseError as exc:
            assert str(exc) == "empty document: no text", path
            continue
        parsed += 1
        assert all(s.text.strip() for s in sections), path
    assert parsed > 30


def test_shared_docx_with_headings_yields_heading_paths(shared_data: Path) -> None:
    sections = parse_file(shared_data / "docs" / "unstructured" / "example-docs" / "category-level.docx")
    paths = [s.heading_path for s in sections]
    assert ["A Heading 1", "A Heading 2"] in paths
    assert ["Another Heading 1"] in paths


def test_shared_docx_tables_render_as_markdown(shared_data: Path) -> None:
    [section] = parse_file(shared_data / "docs" / "unstructured" / "example-docs" / "docx-tables.docx")
    assert "| Header Col 1 | Header Col 2 |\n| --- | --- |\n| Lorem ipsum | A link example |" in section.text
    assert section.text.index("Simple uniform table") < section.text.index("| Header Col 1")


def test_shared_docx_with_ragged_rows_is_padded(shared_data: Path) -> None:
    [section] = parse_file(
        shared_data / "docs" / "unstructured" / "example-docs" / "tables-with-incomplete-rows.docx"
    )
    for table in section.text.split("\n\n")[1:]:
        widths = {line.count("|") - line.count("\\|") for line in table.splitlines()}
        assert len(widths) == 1, table
