"""PDF parser: pages, encryption, scanned and corrupt files, the shared pypdf/unstructured corpora."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

from desktop_app.core.documents import ParseError
from desktop_app.core.parsers import parse_file


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


def test_pdf_without_any_text_layer_needs_ocr(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "scan.pdf", [None, None])
    with pytest.raises(ParseError, match=r"no text layer: scanned pages need OCR \(2 pages\)"):
        parse_file(path)


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
        "import sys, resource; from pathlib import Path; from desktop_app.core.parsers import parse_file\n"
        "s = parse_file(Path(sys.argv[1])); print(len(s), s[-1].page)\n"
        "try:\n"
        "    st = open('/proc/self/status').read().split('VmHWM:')[1].split()[0]\n"
        "except OSError:\n"
        "    st = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(st)"
    )
    root = Path(__file__).resolve().parents[2]
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
        pages = [s.page for s in sections]
        assert pages == sorted(set(pages)) and pages[0] >= 1, path
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
