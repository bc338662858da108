"""DOCX parser: heading sections, tables as Markdown in body order, text boxes and shapes, notes,
headers and footers, Strict OOXML, empty and corrupt files, the shared real DOCX files."""

from __future__ import annotations

import collections
import io
import re
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Callable
from pathlib import Path

import docx
import pytest
from docx.oxml import parse_xml

from desktop_app.core.library.documents import ParseError
from desktop_app.core.library.parsers import parse_file

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
W = f"{{{W_NS}}}"
# The namespaces Word declares on w:document, for run and part fragments written as Word writes them.
NSDECLS = (
    f'xmlns:w="{W_NS}" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" '
    'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
    'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
    'xmlns:wp14="http://schemas.microsoft.com/office/word/2010/wordprocessingDrawing" '
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
    'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
    'xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office" '
    'xmlns:w10="urn:schemas-microsoft-com:office:word"'
)


def rewrite_parts(source: Path, target: Path, edit: Callable[[str, bytes], bytes]) -> Path:
    """Copy a DOCX, passing every part through ``edit(name, data)``."""
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            dst.writestr(item.filename, edit(item.filename, src.read(item.filename)))
    return target


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


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "corrupt DOCX: the file is empty"),
        (
            b"this is not a zip file",
            "corrupt DOCX: the file is not a ZIP archive, so it is not a Word document "
            "(it may be another format renamed .docx, or badly damaged)",
        ),
        (
            b"PK\x03\x04 truncated zip",
            "corrupt DOCX: the ZIP archive has no directory at its end, so the file is probably "
            "truncated (an incomplete download or copy)",
        ),
    ],
)
def test_non_zip_docx_is_corrupt(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "broken.docx"
    path.write_bytes(data)
    with pytest.raises(ParseError) as info:
        parse_file(path)
    assert str(info.value) == message


def test_zip_that_is_not_a_word_document_is_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "archive.docx"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("hello.txt", "hello")
    with pytest.raises(ParseError) as info:
        parse_file(path)
    assert str(info.value) == (
        "corrupt DOCX: the file is a ZIP archive but not a Word document (it has no word/document.xml)"
    )


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
    with pytest.raises(
        ParseError, match=r"^corrupt DOCX: word/document.xml is not well-formed XML \(line \d+, column \d+\)$"
    ):
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
    with pytest.raises(ParseError) as info:
        parse_file(target)
    assert str(tmp_path) not in str(info.value)
    assert str(info.value) == (
        "corrupt DOCX: the file is a macro-enabled Word document (.docm), not a Word document (.docx); "
        "save it as .docx"
    )


def test_truncated_docx_says_it_is_probably_truncated(tmp_path: Path) -> None:
    whole = tmp_path / "whole.docx"
    document = docx.Document()
    document.add_paragraph("A report that was cut off in the middle of the download.")
    document.save(whole)
    cut = tmp_path / "cut.docx"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    with pytest.raises(ParseError) as info:
        parse_file(cut)
    assert str(info.value) == (
        "corrupt DOCX: the ZIP archive has no directory at its end, so the file is probably "
        "truncated (an incomplete download or copy)"
    )


def test_document_xml_that_is_not_xml_names_the_part_and_position(tmp_path: Path) -> None:
    good = tmp_path / "good.docx"
    docx.Document().save(good)
    bad = rewrite_parts(
        good,
        tmp_path / "bad.docx",
        lambda name, data: b"Not XML at all" if name == "word/document.xml" else data,
    )
    with pytest.raises(ParseError) as info:
        parse_file(bad)
    assert str(info.value) == "corrupt DOCX: word/document.xml is not well-formed XML (line 1, column 1)"


def test_document_xml_with_a_bad_checksum_says_its_data_is_damaged(tmp_path: Path) -> None:
    good = tmp_path / "good.docx"
    document = docx.Document()
    document.add_paragraph("Every byte of this sentence is checked by the archive's CRC-32.")
    document.save(good)
    stored = io.BytesIO()  # uncompressed, so one byte of the sentence can be flipped in place
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(stored, "w", zipfile.ZIP_STORED) as dst:
        for item in src.infolist():
            dst.writestr(item.filename, src.read(item.filename))
    data = bytearray(stored.getvalue())
    data[data.index(b"Every byte")] = ord("e")
    bad = tmp_path / "bad.docx"
    bad.write_bytes(bytes(data))
    with pytest.raises(ParseError) as info:
        parse_file(bad)
    assert str(info.value) == (
        "corrupt DOCX: word/document.xml cannot be unpacked from the ZIP archive "
        "(its checksum does not match, so its data is damaged)"
    )


def test_document_xml_in_a_legacy_multibyte_encoding_is_read(tmp_path: Path) -> None:
    # expat decodes only UTF-8/16 and single-byte encodings; some non-Word writers declare GBK.
    document = docx.Document()
    document.add_paragraph("金刚鹦鹉生活在南美洲的雨林里。")
    utf8 = tmp_path / "utf8.docx"
    document.save(utf8)

    def to_gbk(name: str, data: bytes) -> bytes:
        if name != "word/document.xml":
            return data
        return data.decode("utf-8").replace("encoding='UTF-8'", "encoding='GBK'").encode("gbk")

    gbk = rewrite_parts(utf8, tmp_path / "gbk.docx", to_gbk)
    with zipfile.ZipFile(gbk) as zf:
        assert zf.read("word/document.xml").startswith(b"<?xml version='1.0' encoding='GBK'")
    [section] = parse_file(gbk)
    assert section.text == "金刚鹦鹉生活在南美洲的雨林里。"


# --------------------------------------------------------------------------- shapes, notes, page furniture

KEY_SENTENCE = "The key finding: kea solve two-step puzzles faster than keas raised alone."


def text_box_paragraph(text: str) -> str:
    return f'<w:p><w:pPr><w:pStyle w:val="Normal"/></w:pPr><w:r><w:t>{text}</w:t></w:r></w:p>'


def floating_text_box_run(text: str) -> str:
    """A floating text box as Word 2010+ writes it: DrawingML (wps:txbx) for current readers in
    mc:Choice, the same text as a VML v:textbox in mc:Fallback for older ones."""
    content = f"<w:txbxContent>{text_box_paragraph(text)}</w:txbxContent>"
    return (
        f"<w:r {NSDECLS}><w:rPr><w:noProof/></w:rPr><mc:AlternateContent>"
        '<mc:Choice Requires="wps"><w:drawing>'
        '<wp:anchor distT="45720" distB="45720" distL="114300" distR="114300" simplePos="0" '
        'relativeHeight="251659264" behindDoc="0" locked="0" layoutInCell="1" allowOverlap="1">'
        '<wp:simplePos x="0" y="0"/>'
        '<wp:positionH relativeFrom="column"><wp:posOffset>1371600</wp:posOffset></wp:positionH>'
        '<wp:positionV relativeFrom="paragraph"><wp:posOffset>182880</wp:posOffset></wp:positionV>'
        '<wp:extent cx="2360930" cy="1404620"/><wp:effectExtent l="0" t="0" r="22860" b="11430"/>'
        '<wp:wrapSquare wrapText="bothSides"/><wp:docPr id="217" name="Text Box 2"/>'
        "<wp:cNvGraphicFramePr><a:graphicFrameLocks/></wp:cNvGraphicFramePr>"
        '<a:graphic><a:graphicData uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape">'
        '<wps:wsp><wps:cNvSpPr txBox="1"><a:spLocks noChangeArrowheads="1"/></wps:cNvSpPr>'
        '<wps:spPr bwMode="auto"><a:xfrm><a:off x="0" y="0"/><a:ext cx="2360930" cy="1404620"/></a:xfrm>'
        '<a:prstGeom prst="rect"><a:avLst/></a:prstGeom></wps:spPr>'
        f"<wps:txbx>{content}</wps:txbx>"
        '<wps:bodyPr rot="0" vert="horz" wrap="square" lIns="91440" tIns="45720" rIns="91440" bIns="45720" '
        'anchor="t" anchorCtr="0"><a:spAutoFit/></wps:bodyPr></wps:wsp></a:graphicData></a:graphic>'
        '<wp14:sizeRelH relativeFrom="margin"><wp14:pctWidth>40000</wp14:pctWidth></wp14:sizeRelH>'
        "</wp:anchor></w:drawing></mc:Choice>"
        "<mc:Fallback><w:pict>"
        '<v:shapetype id="_x0000_t202" coordsize="21600,21600" o:spt="202" path="m,l,21600r21600,l21600,xe">'
        '<v:stroke joinstyle="miter"/><v:path gradientshapeok="t" o:connecttype="rect"/></v:shapetype>'
        '<v:shape id="Text Box 2" o:spid="_x0000_s1026" type="#_x0000_t202" '
        'style="position:absolute;margin-left:108pt;margin-top:14.4pt;width:185.9pt;height:110.6pt;'
        'z-index:251659264;visibility:visible;mso-wrap-style:square;v-text-anchor:top">'
        f'<v:textbox style="mso-fit-shape-to-text:t">{content}</v:textbox><w10:wrap type="square"/>'
        "</v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r>"
    )


def test_text_box_in_alternate_content_is_read_once_after_its_anchor_paragraph(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("Field study", level=1)
    document.add_paragraph("Before the box.")
    anchor = document.add_paragraph("The paragraph the box is anchored to.")
    anchor._p.append(parse_xml(floating_text_box_run(KEY_SENTENCE)))
    document.add_paragraph("After the box.")
    path = tmp_path / "text-box.docx"
    document.save(path)
    # python-docx's paragraph text, which this parser used to rely on, does not see the box.
    assert KEY_SENTENCE not in " ".join(p.text for p in docx.Document(str(path)).paragraphs)

    [section] = parse_file(path)
    assert section.heading_path == ["Field study"]
    assert section.text == (
        "Field study\n\nBefore the box.\n\nThe paragraph the box is anchored to.\n\n"
        f"{KEY_SENTENCE}\n\nAfter the box."
    )


def test_inline_text_box_stays_inside_its_sentence(tmp_path: Path) -> None:
    inline = floating_text_box_run("a red label").replace("wp:anchor", "wp:inline")
    inline = re.sub(r'<wp:simplePos x="0" y="0"/>.*?</wp:positionV>', "", inline)
    document = docx.Document()
    paragraph = document.add_paragraph("The cage carries")
    paragraph._p.append(parse_xml(inline))
    paragraph.add_run("on its door.")
    path = tmp_path / "inline-box.docx"
    document.save(path)

    [section] = parse_file(path)
    assert section.text == "The cage carries a red label on its door."


def test_vml_only_text_box_is_read_after_its_anchor_paragraph(tmp_path: Path) -> None:
    # Word 2003 (and Word in compatibility mode) writes text boxes as VML only.
    vml = (
        f'<w:r {NSDECLS}><w:pict><v:shapetype id="_x0000_t202" coordsize="21600,21600" o:spt="202" '
        'path="m,l,21600r21600,l21600,xe"><v:stroke joinstyle="miter"/>'
        '<v:path gradientshapeok="t" o:connecttype="rect"/></v:shapetype>'
        '<v:shape id="_x0000_s1026" type="#_x0000_t202" style="position:absolute;margin-left:0;margin-top:0;'
        'width:186.95pt;height:110.55pt;z-index:251660288;mso-position-horizontal:center">'
        f'<v:textbox style="mso-fit-shape-to-text:t"><w:txbxContent>{text_box_paragraph(KEY_SENTENCE)}'
        "</w:txbxContent></v:textbox></v:shape></w:pict></w:r>"
    )
    document = docx.Document()
    document.add_paragraph("Anchor.")._p.append(parse_xml(vml))
    document.add_paragraph("Body text after the anchor.")
    path = tmp_path / "vml-box.docx"
    document.save(path)

    [section] = parse_file(path)
    assert section.text == f"Anchor.\n\n{KEY_SENTENCE}\n\nBody text after the anchor."


def test_headers_and_footers_are_read_once_around_the_body(tmp_path: Path) -> None:
    document = docx.Document()
    first = document.sections[0]
    first.different_first_page_header_footer = True
    first.first_page_header.paragraphs[0].text = "Cover page header"
    first.header.paragraphs[0].text = "Parrot Society annual report"
    first.footer.paragraphs[0].text = "Confidential draft"
    document.add_heading("Summary", level=1)
    document.add_paragraph("Numbers went up.")
    second = document.add_section()
    # Unlinked from the first section but with the same text: a separate header part, read once.
    second.header.is_linked_to_previous = False
    second.header.paragraphs[0].text = "Parrot Society annual report"
    document.add_heading("Details", level=1)
    document.add_paragraph("Every number, by species.")
    path = tmp_path / "report.docx"
    document.save(path)

    sections = parse_file(path)
    assert [(s.heading_path, s.text) for s in sections] == [
        ([], "Cover page header\n\nParrot Society annual report"),
        (["Summary"], "Summary\n\nNumbers went up."),
        (["Details"], "Details\n\nEvery number, by species."),
        ([], "Confidential draft"),
    ]


def add_notes(source: Path, target: Path, body_edit: Callable[[bytes], bytes]) -> Path:
    """Give a python-docx file a footnotes and an endnotes part the way Word writes them (the
    separator notes included), and edit its body to refer to them."""

    def notes(kind: str, note_id: int, text: str) -> bytes:
        separators = "".join(
            f'<w:{kind} w:type="{t}" w:id="{i}"><w:p><w:pPr><w:spacing w:after="0" w:line="240" '
            f'w:lineRule="auto"/></w:pPr><w:r><w:{t}/></w:r></w:p></w:{kind}>'
            for i, t in ((-1, "separator"), (0, "continuationSeparator"))
        )
        note = (
            f'<w:{kind} w:id="{note_id}"><w:p><w:pPr><w:pStyle w:val="{kind.title()}Text"/></w:pPr>'
            f'<w:r><w:rPr><w:rStyle w:val="{kind.title()}Reference"/></w:rPr><w:{kind}Ref/></w:r>'
            f'<w:r><w:t xml:space="preserve"> {text}</w:t></w:r></w:p></w:{kind}>'
        )
        declaration = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        return f"{declaration}<w:{kind}s {NSDECLS}>{separators}{note}</w:{kind}s>".encode()

    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    ct = "application/vnd.openxmlformats-officedocument.wordprocessingml"

    def edit(name: str, data: bytes) -> bytes:
        if name == "word/document.xml":
            return body_edit(data)
        if name == "word/_rels/document.xml.rels":
            return data.replace(
                b"</Relationships>",
                f'<Relationship Id="rIdFn" Type="{rel}/footnotes" Target="footnotes.xml"/>'
                f'<Relationship Id="rIdEn" Type="{rel}/endnotes" Target="endnotes.xml"/>'
                "</Relationships>".encode(),
            )
        if name == "[Content_Types].xml":
            return data.replace(
                b"</Types>",
                f'<Override PartName="/word/footnotes.xml" ContentType="{ct}.footnotes+xml"/>'
                f'<Override PartName="/word/endnotes.xml" ContentType="{ct}.endnotes+xml"/></Types>'.encode(),
            )
        return data

    rewrite_parts(source, target, edit)
    with zipfile.ZipFile(target, "a") as zf:
        zf.writestr("word/footnotes.xml", notes("footnote", 1, "Counted in the 2023 field survey."))
        zf.writestr("word/endnotes.xml", notes("endnote", 1, "Survey methods are in the appendix."))
    return target


def test_footnotes_and_endnotes_follow_the_paragraph_that_refers_to_them(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("Population", level=1)
    document.add_paragraph("About 5,000 kea live in the wild.")
    document.add_paragraph("Numbers are falling.")
    document.add_paragraph("Methods are standard.")
    document.add_paragraph("The end.")
    source = tmp_path / "plain.docx"
    document.save(source)

    def refer(data: bytes) -> bytes:
        ref = '<w:r><w:rPr><w:rStyle w:val="{0}Reference"/></w:rPr><w:{1}Reference w:id="1"/></w:r></w:p>'
        data = data.replace(
            b"in the wild.</w:t></w:r></w:p>",
            b"in the wild.</w:t></w:r>" + ref.format("Footnote", "footnote").encode(),
        )
        return data.replace(
            b"standard.</w:t></w:r></w:p>",
            b"standard.</w:t></w:r>" + ref.format("Endnote", "endnote").encode(),
        )

    path = add_notes(source, tmp_path / "notes.docx", refer)
    [section] = parse_file(path)
    assert section.heading_path == ["Population"]
    assert section.text == (
        "Population\n\n"
        "About 5,000 kea live in the wild.[^1]\n\n[^1]: Counted in the 2023 field survey.\n\n"
        "Numbers are falling.\n\n"
        "Methods are standard.[^2]\n\n[^2]: Survey methods are in the appendix.\n\n"
        "The end."
    )


STRICT = {  # transitional namespace -> Strict OOXML namespace (ISO/IEC 29500 Strict)
    b"http://schemas.openxmlformats.org/wordprocessingml/2006/main": (
        b"http://purl.oclc.org/ooxml/wordprocessingml/main"
    ),
    # also turns relationship types .../2006/relationships/officeDocument into Strict ones
    b"http://schemas.openxmlformats.org/officeDocument/2006/relationships": (
        b"http://purl.oclc.org/ooxml/officeDocument/relationships"
    ),
    b"http://schemas.openxmlformats.org/drawingml/2006/main": b"http://purl.oclc.org/ooxml/drawingml/main",
    b"http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing": (
        b"http://purl.oclc.org/ooxml/drawingml/wordprocessingDrawing"
    ),
}


def to_strict(name: str, data: bytes) -> bytes:
    if not name.endswith((".xml", ".rels")):
        return data
    for transitional, strict in STRICT.items():
        data = data.replace(transitional, strict)
    return data.replace(b"<w:document ", b'<w:document w:conformance="strict" ', 1)


def test_strict_ooxml_reads_like_its_transitional_original(tmp_path: Path) -> None:
    document = docx.Document()
    document.sections[0].header.paragraphs[0].text = "Aviary handbook"
    document.add_paragraph("Knowledge Desk", style="Title")
    document.add_heading("Feeding", level=1)
    document.add_paragraph("Seeds, fruit and nuts.")
    table = document.add_table(rows=2, cols=2)
    for cell, value in zip(table._cells, ["Species", "Food", "Kea", "Roots"]):
        cell.text = value
    document.add_paragraph("Fresh water daily.")._p.append(parse_xml(floating_text_box_run(KEY_SENTENCE)))
    transitional = tmp_path / "transitional.docx"
    document.save(transitional)
    strict = rewrite_parts(transitional, tmp_path / "strict.docx", to_strict)
    with zipfile.ZipFile(strict) as zf:
        assert b"http://schemas.openxmlformats.org/wordprocessingml" not in zf.read("word/document.xml")
    with pytest.raises(KeyError, match="no relationship of type"):  # python-docx cannot open Strict
        docx.Document(str(strict))

    sections = parse_file(strict)
    assert [(s.heading_path, s.text) for s in sections] == [
        (s.heading_path, s.text) for s in parse_file(transitional)
    ]
    assert [s.heading_path for s in sections] == [[], ["Knowledge Desk", "Feeding"]]
    assert sections[1].text == (
        "Feeding\n\nSeeds, fruit and nuts.\n\n| Species | Food |\n| --- | --- |\n| Kea | Roots |\n\n"
        f"Fresh water daily.\n\n{KEY_SENTENCE}"
    )


# --------------------------------------------------------------------------- shared corpora


FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
TEXT_PARTS = re.compile(r"^word/(document\d*|header\d+|footer\d+|footnotes|endnotes)\.xml$")


def words(text: str) -> collections.Counter[str]:
    return collections.Counter(re.findall(r"\w+", re.sub(r"\[\^\d+\]:?", " ", text).lower()))


def words_of_wt_dump(path: Path) -> collections.Counter[str]:
    """Words of every w:t in the body, header, footer and note parts, one line per w:p, skipping
    mc:Fallback (it repeats mc:Choice): an upper bound on what a DOCX parser can extract."""
    lines: list[str] = []

    def walk(element: ET.Element, line: list[str]) -> None:
        for child in element:
            if child.tag == f"{W}p":
                own: list[str] = []
                walk(child, own)
                lines.append("".join(own))
            elif child.tag != FALLBACK:
                if child.tag == f"{W}t":
                    line.append(child.text or "")
                elif child.tag in (f"{W}tab", f"{W}br"):
                    line.append(" ")
                walk(child, line)

    with zipfile.ZipFile(path) as zf:
        for name in filter(TEXT_PARTS.match, zf.namelist()):
            walk(ET.fromstring(zf.read(name)), [])
    return words("\n".join(lines))


def test_every_shared_docx_parses_with_each_of_its_words_once(shared_data: Path) -> None:
    """Every real DOCX parses or gives a ParseError (nothing else). A parsed file has every word
    of its w:t dump, and none more often than the dump (shape text read from both mc:Choice and
    mc:Fallback would be); a file called empty has no words. ``pytest -s`` prints the figures."""
    files = sorted((shared_data / "docs").rglob("*.docx"))
    assert len(files) > 60
    failures: collections.Counter[str] = collections.Counter()
    reference_total = found_total = 0
    for path in files:
        reference = words_of_wt_dump(path)
        try:
            sections = parse_file(path)
        except ParseError as exc:
            assert (str(exc), sum(reference.values())) == ("empty document: no text", 0), path
            failures[str(exc)] += 1
            continue
        assert all(s.text.strip() for s in sections), path
        extracted = words("\n\n".join(s.text for s in sections))
        assert not [w for w in reference if not extracted[w]], path
        assert not [w for w in reference if extracted[w] > reference[w]], path
        reference_total += sum(reference.values())
        found_total += sum(min(extracted[w], n) for w, n in reference.items())
    parsed = len(files) - sum(failures.values())
    print(
        f"\n{len(files)} DOCX: {parsed} parsed, {dict(failures)}; every word of each w:t dump found, "
        f"none more often; word occurrences found {found_total}/{reference_total} "
        f"= {found_total / reference_total:.4f} (headers repeated per section are read once)"
    )
    assert parsed > 45


def test_shared_docx_shapes_are_read_once_in_reading_order(shared_data: Path) -> None:
    folder = shared_data / "docs"
    # Text boxes written by LibreOffice as Word does: DrawingML in mc:Choice, VML in mc:Fallback.
    [section] = parse_file(folder / "unstructured" / "example-docs" / "docx-shapes.docx")
    assert section.text == (
        "Paragraph with single <inline-image> within.\n\n"
        "Paragraph with <inline-image1> and <inline-image2> within.\n\n"
        "Paragraph with floating shape attached.\n\n<floating-shape>"
    )
    # Pictures, a chart and a SmartArt diagram whose three nodes are the only text.
    shapes = folder / "python-docx" / "features" / "steps" / "test_files" / "shp-inline-shape-access.docx"
    [section] = parse_file(shapes)
    assert section.text == "foo bar baz"


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


def test_a_part_that_unpacks_to_gigabytes_is_refused_before_it_is_read(tmp_path, monkeypatch):
    import desktop_app.core.library.parsers.docx as docx_parser

    path = tmp_path / "bomb.docx"
    document = docx.Document()
    document.add_paragraph("x " * 700_000)  # document.xml: 1.4 MB
    document.save(path)
    monkeypatch.setattr(docx_parser, "MAX_PART_BYTES", 10**6)  # the real cap is 512 MB
    with pytest.raises(
        ParseError, match=r"corrupt DOCX: word/document\.xml unpacks to 1\.4 MB, more than the 1 MB"
    ):
        parse_file(path)
