"""PDF parser: pages, encryption, scanned/blank and corrupt files, text repairs (ligatures, hyphenation,
split words), table rows, outline headings, the shared pypdf/unstructured corpora."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from pypdf import PdfWriter
from pypdf.generic import (
    ArrayObject,
    DecodedStreamObject,
    DictionaryObject,
    NameObject,
    NumberObject,
    TextStringObject,
)

from desktop_app.core.library.documents import ParseError
from desktop_app.core.library.parsers import parse_file
from desktop_app.core.library.parsers.pdf import normalize_text


@pytest.fixture(autouse=True)
def _quiet_pypdf() -> None:
    # pypdf warns loudly about the damaged test files; the warnings are expected here.
    logging.getLogger("pypdf").setLevel(logging.ERROR)


def make_pdf(path: Path, pages: list[str | None], *, user_password: str | None = None) -> Path:
    """A PDF whose pages show the given text (None: a page without a text layer)."""
    writer = PdfWriter()
    font = writer._add_object(
        DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
            }
        )
    )
    for text in pages:
        page = writer.add_blank_page(612, 792)
        if text is None:
            continue
        stream = DecodedStreamObject()
        stream.set_data(f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
    if user_password is not None:
        writer.encrypt(user_password=user_password, owner_password="owner-secret", algorithm="AES-256")
    with path.open("wb") as fh:
        writer.write(fh)
    return path


def test_one_section_per_page_numbered_from_one(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "three.pdf", ["First page", "Second page", "Third page"])
    sections = parse_file(path)
    assert [s.page for s in sections] == [1, 2, 3]
    assert [s.text.strip() for s in sections] == ["First page", "Second page", "Third page"]
    assert sections[0].metadata["total_pages"] == 3
    assert "pages_without_text" not in sections[0].metadata


def test_pages_without_text_are_skipped_and_recorded(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "mixed.pdf", ["Text here", None, "More text", None])
    sections = parse_file(path)
    assert [s.page for s in sections] == [1, 3]
    assert sections[0].metadata["pages_without_text"] == [2, 4]


def test_pdf_of_blank_pages_says_it_has_no_text(tmp_path: Path) -> None:
    # Blank pages are no scan: OCR would find nothing (this used to say "scanned pages need OCR").
    path = make_pdf(tmp_path / "blank.pdf", [None, None])
    with pytest.raises(ParseError) as info:
        parse_file(path)
    assert str(info.value) == "empty document: the PDF has no text (its 2 pages are blank or vector drawings)"


def test_encrypted_pdf_with_empty_user_password_opens(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "open.pdf", ["Readable secret"], user_password="")
    assert parse_file(path)[0].text.strip() == "Readable secret"


def test_encrypted_pdf_with_a_user_password_asks_for_it(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "locked.pdf", ["Hidden"], user_password="hunter2")
    with pytest.raises(ParseError, match="encrypted PDF: a password is required"):
        parse_file(path)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"not a pdf at all, just words",
        b"%PDF-1.7\n1 0 obj << /Type /Catalog",  # truncated after the header
        bytes(range(256)) * 8,
    ],
)
def test_corrupt_pdf_is_a_parse_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(data)
    with pytest.raises(ParseError) as info:
        parse_file(path)
    assert str(info.value).startswith(("corrupt PDF:", "empty document", "no text layer"))


def test_truncated_real_pdf_never_raises_anything_but_parse_error(tmp_path: Path) -> None:
    full = make_pdf(tmp_path / "full.pdf", [f"Page {i}" for i in range(5)]).read_bytes()
    for cut in (len(full) // 3, len(full) // 2, len(full) - 40):
        path = tmp_path / f"cut{cut}.pdf"
        path.write_bytes(full[:cut])
        try:
            sections = parse_file(path)
        except ParseError:
            continue
        assert all(s.text.strip() for s in sections)


def test_one_failing_page_does_not_fail_the_document(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pypdf import PageObject

    original = PageObject.extract_text

    def flaky(self: PageObject, *args: object, **kwargs: object) -> str:
        text = original(self, *args, **kwargs)
        if "Broken" in text:
            raise RecursionError("maximum recursion depth exceeded")
        return text

    monkeypatch.setattr(PageObject, "extract_text", flaky)
    path = make_pdf(tmp_path / "flaky.pdf", ["Good one", "Broken page", "Good two"])
    sections = parse_file(path)
    assert [s.page for s in sections] == [1, 3]
    assert sections[0].metadata["page_errors"][0]["page"] == 2


def test_pdf_whose_every_page_fails_is_corrupt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pypdf import PageObject

    def broken(self: PageObject, *args: object, **kwargs: object) -> str:
        raise ValueError("bad content stream")

    monkeypatch.setattr(PageObject, "extract_text", broken)
    path = make_pdf(tmp_path / "dead.pdf", ["a", "b"])
    with pytest.raises(ParseError, match="corrupt PDF: no page could be read"):
        parse_file(path)


def test_five_hundred_page_pdf_parses_with_bounded_memory(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = make_pdf(
        tmp_path / "long.pdf", [f"This is page number {i + 1} of a long report" for i in range(500)]
    )
    # A child process, so its peak RSS is the parser's alone and not this test session's. VmHWM,
    # not ru_maxrss: Linux carries the forking parent's high-water mark into ru_maxrss across exec.
    script = (
        "import sys, resource; from pathlib import Path; from desktop_app.core.library.parsers import parse_file\n"
        "s = parse_file(Path(sys.argv[1])); print(len(s), s[-1].page)\n"
        "try:\n"
        "    st = open('/proc/self/status').read().split('VmHWM:')[1].split()[0]\n"
        "except OSError:\n"
        "    st = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(st)"
    )
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=120,
        check=True,
    ).stdout.split()
    assert out[:2] == ["500", "500"]
    peak_kib = int(out[2]) if sys.platform != "darwin" else int(out[2]) // 1024
    assert peak_kib < 400 * 1024, f"peak RSS {peak_kib} KiB"


# --------------------------------------------------------------------------- shared corpora


def _pdfs(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.pdf") if p.is_file())


def test_every_pypdf_resource_parses_or_gives_a_parse_error(shared_data: Path) -> None:
    pdfs = _pdfs(shared_data / "docs" / "pypdf")
    assert len(pdfs) > 50
    parsed = failed = 0
    for path in pdfs:
        try:
            sections = parse_file(path)
        except ParseError as exc:
            failed += 1
            assert str(exc), path
            continue
        parsed += 1
        pages = [s.page for s in sections]  # outline headings may cut a page into several sections
        assert (
            pages == sorted(pages) and pages[0] >= 1 and pages[-1] <= sections[0].metadata["total_pages"]
        ), path
        assert all(s.text.strip() for s in sections), path
    assert parsed > failed


def test_encryption_resources_open_with_empty_password_or_ask_for_one(shared_data: Path) -> None:
    folder = shared_data / "docs" / "pypdf" / "resources" / "encryption"
    results: dict[str, str] = {}
    for path in _pdfs(folder):
        try:
            results[path.name] = parse_file(path)[0].text
        except ParseError as exc:
            assert str(exc) == "encrypted PDF: a password is required", path
            results[path.name] = "password"
    for name, text in results.items():
        if "empty-password" in name or "owner-password" in name or name == "unencrypted.pdf":
            assert "pdf encryption test" in text, name
    for name in (
        "r2-user-password.pdf",
        "r3-user-password.pdf",
        "r4-user-password.pdf",
        "r6-both-passwords.pdf",
    ):
        assert results[name] == "password"


def test_multi_page_shared_pdf_numbers_its_pages(shared_data: Path) -> None:
    path = shared_data / "docs" / "pypdf" / "resources" / "GeoBase_NHNC1_Data_Model_UML_EN.pdf"
    sections = parse_file(path)
    assert [s.page for s in sections] == list(range(1, 20))


def test_shared_pdf_with_empty_pages_records_them(shared_data: Path) -> None:
    path = (
        shared_data
        / "docs"
        / "unstructured"
        / "example-docs"
        / "pdf"
        / "layout-parser-paper-with-empty-pages.pdf"
    )
    sections = parse_file(path)
    assert [s.page for s in sections] == [1, 4]
    assert sections[0].metadata["pages_without_text"] == [2, 3]


@pytest.mark.parametrize("name", ["loremipsum-flat.pdf", "single_table.pdf"])
def test_shared_scanned_pdfs_report_no_text_layer(shared_data: Path, name: str) -> None:
    with pytest.raises(ParseError, match="no text layer"):
        parse_file(shared_data / "docs" / "unstructured" / "example-docs" / "pdf" / name)


def test_shared_password_pdf_asks_for_password(shared_data: Path) -> None:
    with pytest.raises(ParseError, match="a password is required"):
        parse_file(shared_data / "docs" / "unstructured" / "example-docs" / "pdf" / "password.pdf")


# --------------------------------------------------------------------------- PDFs built here


def _stream(writer: PdfWriter, data: bytes, **entries: object) -> object:
    stream = DecodedStreamObject()
    stream.set_data(data)
    for key, value in entries.items():
        stream[NameObject(f"/{key}")] = value
    return writer._add_object(stream)


def _font(**entries: object) -> DictionaryObject:
    font = DictionaryObject({NameObject("/Type"): NameObject("/Font")})
    font.update({NameObject(f"/{k}"): v for k, v in entries.items()})
    return font


def helvetica(**entries: object) -> DictionaryObject:
    return _font(Subtype=NameObject("/Type1"), BaseFont=NameObject("/Helvetica"), **entries)


def unicode_font(writer: PdfWriter, chars: str) -> DictionaryObject:
    """A Type0 font whose ToUnicode map gives code i+1 the i-th of ``chars`` (CJK needs no glyphs
    for text extraction)."""
    pairs = "".join(f"<{i + 1:04X}> <{ord(c):04X}>\n" for i, c in enumerate(chars))
    cmap = (
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /T def /CMapType 2 def\n"
        f"1 begincodespacerange <0000> <FFFF> endcodespacerange\n{len(chars)} beginbfchar\n{pairs}"
        "endbfchar endcmap CMapName currentdict /CMap defineresource pop end end"
    )
    cid_font = _font(
        Subtype=NameObject("/CIDFontType2"),
        BaseFont=NameObject("/Test"),
        DW=NumberObject(1000),
        CIDSystemInfo=DictionaryObject(
            {
                NameObject("/Registry"): TextStringObject("Adobe"),
                NameObject("/Ordering"): TextStringObject("Identity"),
                NameObject("/Supplement"): NumberObject(0),
            }
        ),
    )
    return _font(
        Subtype=NameObject("/Type0"),
        BaseFont=NameObject("/Test"),
        Encoding=NameObject("/Identity-H"),
        DescendantFonts=ArrayObject([writer._add_object(cid_font)]),
        ToUnicode=_stream(writer, cmap.encode("ascii")),
    )


def write_pdf(
    path: Path,
    pages: list[str | None],
    *,
    fonts: Callable[[PdfWriter], dict[str, DictionaryObject]] | None = None,
    image_pages: tuple[int, ...] = (),
    outline: tuple[tuple[str, int, int | None], ...] = (),
) -> Path:
    """A PDF from raw content streams (None: an empty page). ``fonts`` makes the fonts by resource
    name (default /F1 Helvetica); ``image_pages`` get a 1x1 image drawn (a scanned page);
    ``outline`` entries are (title, 0-based page, index of the parent entry or None)."""
    writer = PdfWriter()
    font_refs = {
        NameObject(name): writer._add_object(font)
        for name, font in (fonts(writer) if fonts else {"/F1": helvetica()}).items()
    }
    image = _stream(
        writer,
        b"\x80",
        Type=NameObject("/XObject"),
        Subtype=NameObject("/Image"),
        Width=NumberObject(1),
        Height=NumberObject(1),
        ColorSpace=NameObject("/DeviceGray"),
        BitsPerComponent=NumberObject(8),
    )
    for index, content in enumerate(pages):
        page = writer.add_blank_page(612, 792)
        resources = DictionaryObject({NameObject("/Font"): DictionaryObject(font_refs)})
        data = content or ""
        if index in image_pages:
            resources[NameObject("/XObject")] = DictionaryObject({NameObject("/Im0"): image})
            data = f"q 500 0 0 700 50 50 cm /Im0 Do Q {data}"
        if data:
            page[NameObject("/Contents")] = _stream(writer, data.encode("latin-1"))
            page[NameObject("/Resources")] = resources
    entries: list[object] = []
    for title, page_index, parent in outline:
        entries.append(
            writer.add_outline_item(title, page_index, parent=None if parent is None else entries[parent])
        )
    with path.open("wb") as fh:
        writer.write(fh)
    return path


def lines(*texts: str, top: int = 720, font: str = "/F1") -> str:
    """A content stream showing each text on its own line (14 pt apart)."""
    shown = " ".join(
        "(" + t.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ") Tj 0 -14 Td" for t in texts
    )
    return f"BT {font} 11 Tf 72 {top} Td {shown} ET"


def text_of(path: Path) -> str:
    return "\n".join(s.text for s in parse_file(path))


def test_ligatures_and_compatibility_forms_are_normalised(tmp_path: Path) -> None:
    from desktop_app.core.library.bm25 import tokenize

    cjk = "中文，测试。ＰＤＦ！１２３"
    ligatures = helvetica(
        Encoding=DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Encoding"),
                NameObject("/BaseEncoding"): NameObject("/WinAnsiEncoding"),
                NameObject("/Differences"): ArrayObject(
                    [NumberObject(1), NameObject("/fi"), NameObject("/fl")]
                ),
            }
        )
    )
    codes = "".join(f"{i + 1:04X}" for i in range(len(cjk)))
    content = lines("Fire\x02y classi\x01cation") + f" BT /F2 11 Tf 72 600 Td <{codes}> Tj ET"
    path = write_pdf(
        tmp_path / "ligatures.pdf", [content], fonts=lambda w: {"/F1": ligatures, "/F2": unicode_font(w, cjk)}
    )

    text = text_of(path)
    assert "Firefly classification" in text
    assert "\ufb01" not in text and "\ufb02" not in text
    # Full-width letters and digits become ASCII; CJK punctuation (，。！) stays as written.
    assert "中文，测试。PDF！123" in text
    # The symptom of issue 16: BM25 found no term of "firefly classification" in the PDF.
    assert set(tokenize("firefly classification")) <= set(tokenize(text))


def test_normalize_text_keeps_cjk_punctuation_and_drops_invisible_characters() -> None:
    chinese = "这是句子，对吗？是的！分号；冒号：（括号）「引号」、顿号…省略。"
    assert normalize_text(chinese) == chinese
    assert normalize_text("ＡＢＣ１２３\u3000end") == "ABC123 end"
    assert normalize_text("\ufb03ce \ufb00ect") == "ffice ffect"
    assert normalize_text("co\u00adop\u200beration\ufeff") == "cooperation"
    assert normalize_text("classifi\u00ad\ncation follows") == "classification follows"
    # NFKC would make the spacing breve " \u0306" and split the name; Hangul jamo would change form.
    assert normalize_text("O\u02d8guz ㅋㅋ 적립") == "O\u02d8guz ㅋㅋ 적립"
    assert normalize_text("e\u0301t\u00e9") == "\u00e9t\u00e9"  # composed, as NFKC composes


def test_line_end_hyphenation_joins_words_and_keeps_compounds(tmp_path: Path) -> None:
    page = lines(
        "Firefly classifi-",
        "cation is hard. A well-",
        "known method helps. Its distribu-",
        "tion is wide, privacy-",
        "preserving and Jean-",
        "Pierre built on Lucene-",
        "BM25 from state-of-the-",
        "art work. A classifi-",
        "cation",
        "ends a line.",
        "Classification matters; the well-known method keeps privacy.",
    )
    text = text_of(write_pdf(tmp_path / "hyphens.pdf", [page]))
    # The document spells "classification" and "well-known" elsewhere: that decides.
    assert "Firefly classification\nis hard. A well-known\nmethod helps." in text
    # Neither spelling elsewhere: "distribu" is no word of the document, so join; "privacy" is
    # one and "preserving" is too long for a syllable, so it is a compound.
    assert "Its distribution\nis wide, privacy-preserving\n" in text
    # An uppercase continuation is never joined; a hyphen chain is a compound; digits stay put.
    assert "Jean-Pierre\nbuilt on Lucene-\nBM25 from state-of-the-art\nwork." in text
    assert "A classification\nends a line." in text  # no empty line (a paragraph break) left behind


def test_words_split_by_a_kern_are_joined_back_but_word_pairs_stay(tmp_path: Path) -> None:
    content = "BT /F1 11 Tf 72 720 Td [(The mo) -150 (del fits.)] TJ ET " + lines(
        "A model is a model; it may rain, it will be fine.",
        "Maybe a model may be wrong.",
        "The World Wide Web is the World Wide Web, worldwide.",
        top=700,
    )
    text = text_of(write_pdf(tmp_path / "split.pdf", [content]))
    assert "The model fits." in text
    # "may" and "be" are words of their own; "World Wide" is written more often than "worldwide".
    assert "Maybe a model may be wrong." in text
    assert "The World Wide Web is the World Wide Web, worldwide." in text


def test_kerning_in_a_font_without_a_space_glyph_is_no_word_gap(tmp_path: Path) -> None:
    # TeX's fonts have no space glyph: pypdf's default width for it turned a 0.1 em kern into a
    # space ("To olkit"); a real word gap (0.333 em) must still be one. \256 is StandardEncoding's fi.
    tex_font = _font(
        Subtype=NameObject("/Type1"),
        BaseFont=NameObject("/CMR10"),
        FirstChar=NumberObject(33),
        LastChar=NumberObject(126),
        Widths=ArrayObject([NumberObject(500)] * 94),
    )
    content = "BT /F1 11 Tf 72 720 Td [(A) -333 (uni\\256ed) -333 (T) -100 (oolkit)] TJ ET"
    text = text_of(write_pdf(tmp_path / "tex.pdf", [content], fonts=lambda _: {"/F1": tex_font}))
    assert text.split() == ["A", "unified", "Toolkit"]


def test_table_rows_keep_their_cells_and_paragraphs_flow(tmp_path: Path) -> None:
    def row(y: int, *cells: str) -> str:
        shown = " 150 0 Td ".join(f"({c}) Tj" for c in cells)
        return f"BT /F1 11 Tf 72 {y} Td {shown} ET"

    content = " ".join(
        [
            lines("Prices were noted at the market in the morning,", "before the stalls closed.", top=740),
            row(690, "Fruit", "Count", "Price"),
            row(676, "Apples", "12", "0.50"),
            row(662, "Pears", "7", "1.25"),
            lines("The pears sold out first.", top=630),
        ]
    )
    text = text_of(write_pdf(tmp_path / "table.pdf", [content]))
    assert text.splitlines() == [
        "Prices were noted at the market in the morning,",
        "before the stalls closed.",
        "Fruit | Count | Price",
        "Apples | 12 | 0.50",
        "Pears | 7 | 1.25",
        "The pears sold out first.",
    ]


def test_outline_gives_heading_paths_and_cuts_pages_at_headings(tmp_path: Path) -> None:
    from desktop_app.core.library.chunking import chunk_sections

    pages = [
        lines("1 Introduction", "Fireflies glow at night."),
        lines(
            "More about glowing insects.", "2 Methods", "We counted them.", "2.1 Sampling", "Nets were used."
        ),
        lines("Findings", "Many fireflies were counted."),  # the outline calls it "3 Results"
        lines("The end of the results."),
    ]
    outline = (
        ("1 Introduction", 0, None),
        ("2 Methods", 1, None),
        ("2.1 Sampling", 1, 1),
        ("3 Results", 2, None),
    )
    sections = parse_file(write_pdf(tmp_path / "outline.pdf", pages, outline=outline))
    assert [(s.page, s.heading_path, s.text.split("\n")[0]) for s in sections] == [
        (1, ["1 Introduction"], "1 Introduction"),
        (2, ["1 Introduction"], "More about glowing insects."),
        (2, ["2 Methods"], "2 Methods"),
        (2, ["2 Methods", "2.1 Sampling"], "2.1 Sampling"),
        (3, ["3 Results"], "Findings"),  # an entry starting on a page covers it when its title is not found
        (4, ["3 Results"], "The end of the results."),
    ]
    assert sections[0].metadata["total_pages"] == 4
    chunks = chunk_sections(sections, "doc", "outline.pdf")
    assert [c.heading_path for c in chunks if "Nets" in c.text] == [["2 Methods", "2.1 Sampling"]]


def test_text_pages_index_beside_blank_vector_and_scanned_pages(tmp_path: Path) -> None:
    pages = [lines("Field notes"), None, "0 0 m 300 300 l S 50 50 100 100 re f", None]
    sections = parse_file(write_pdf(tmp_path / "mixed.pdf", pages, image_pages=(3,)))
    assert [(s.page, s.text.strip()) for s in sections] == [(1, "Field notes")]
    assert sections[0].metadata["pages_without_text"] == [2, 3, 4]


def test_one_blank_or_vector_page_is_no_scan(tmp_path: Path) -> None:
    for name, content in (("blank.pdf", None), ("drawing.pdf", "0 0 m 300 300 l S 50 50 100 100 re f")):
        with pytest.raises(ParseError) as info:
            parse_file(write_pdf(tmp_path / name, [content]))
        assert str(info.value) == "empty document: page 1 has no text (it is blank or a vector drawing)"


def test_pages_with_images_and_no_text_need_ocr(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "scan.pdf", [None, None], image_pages=(0,))
    with pytest.raises(ParseError) as info:
        parse_file(path)
    assert str(info.value) == "no text layer: scanned pages need OCR (2 pages)"


# --------------------------------------------------------------------------- repairs on real PDFs


def _unstructured_pdf(shared_data: Path, name: str) -> Path:
    return shared_data / "docs" / "unstructured" / "example-docs" / "pdf" / name


def test_shared_paper_has_no_ligatures_or_broken_words(shared_data: Path) -> None:
    sections = parse_file(_unstructured_pdf(shared_data, "layout-parser-paper-fast.pdf"))
    text = "\n".join(s.text for s in sections)
    assert not any("\ufb00" <= c <= "\ufb06" for c in text)
    assert "LayoutParser: A Unified Toolkit for Deep" in text  # was "Uniﬁed"
    assert "the easy reuse of important\ninnovations" in text  # was "im-\nportant"
    assert "are the state-of-the-art for a wide range" in text
    # Its outline has one entry, the title: every section is under it.
    title = "LayoutParser: A Unified Toolkit for Deep Learning Based Document Image Analysis"
    assert [s.heading_path for s in sections] == [[title], [title]]


def test_shared_paper_table_keeps_rows_and_cells(shared_data: Path) -> None:
    text = text_of(_unstructured_pdf(shared_data, "layout-parser-paper-with-table.pdf"))
    assert "Dataset | Base Model1 | Large Model | Notes\n" in text
    assert "\nPubLayNet [38] | F / M | M | Layouts of modern scientific documents\n" in text
    assert "object detection problem and state-of-the-art models like Faster R-CNN [28] and\n" in text


def test_shared_split_words_are_joined(shared_data: Path) -> None:
    text = text_of(shared_data / "docs" / "pypdf" / "resources" / "GeoBase_NHNC1_Data_Model_UML_EN.pdf")
    assert "Ev ents" not in text and "Hydro Events" in text and "LineEvents" in text


def test_shared_latex_outline_becomes_heading_paths(shared_data: Path) -> None:
    sections = parse_file(shared_data / "docs" / "pypdf" / "resources" / "pdflatex-outline.pdf")
    assert [(s.page, s.heading_path) for s in sections if s.text.lstrip()[:1].isdigit()][:4] == [
        (2, ["Foo"]),
        (2, ["Bar"]),
        (2, ["Baz"]),
        (2, ["Foo"]),
    ]
    assert sections[1].text.startswith("1 Foo\nHello, here is some text")


def test_shared_cjk_text_survives_normalisation(shared_data: Path) -> None:
    korean = text_of(_unstructured_pdf(shared_data, "korean-text-with-tables.pdf"))
    assert "적립 제외 대상" in korean
    chinese = text_of(shared_data / "docs" / "pypdf" / "resources" / "issue-914-xmp-data.pdf")
    assert "光明莫斯利安巴氏杀菌酸牛奶（原味）110g*6" in chinese  # full-width parentheses kept
