"""Hostile files, built at run time, and ``kdesk bench hostile``, which feeds them to ``kdesk add``.

Each builder writes one file of issue 33's cases into a folder at a given size: small Office
packages that unpack to gigabytes of XML (a slide of N empty paragraphs, a row of N cells, a huge
shared-strings part, a document of N empty paragraphs), books of N chapters or of huge chapters,
a CSV of N columns, entity attacks, a truncated PDF, a name that is not UTF-8 and a named pipe.
Parts are streamed into the ZIP (``force_zip64``), so a 950 MB part never sits in memory. The
tests (tests/reliability/test_hostile_files.py) build each just past its limit; the benchmark
builds the sizes of the issue and runs the real command line on each in a child process under a
memory guard, measuring wall time, peak RSS and what the library says of the file.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from desktop_app.core.library.names import escape_name

SHARED_DOCS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "docs"
TRUNCATED_SOURCE = SHARED_DOCS / "pypdf" / "resources" / "Seige_of_Vicksburg_Sample_OCR.pdf"

_W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_LAUGHS = (
    '<!DOCTYPE lolz [<!ENTITY lol "lol">'
    + "".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">' for i in range(1, 10)
    )
    + "]>"
)
_BLOCK_BYTES = 1 << 20  # bytes written per call while streaming a part


# --------------------------------------------------------------------------- ZIP helpers


def _write_repeated(
    stream: io.RawIOBase | zipfile.ZipExtFile, head: str, unit: str, count: int, tail: str
) -> None:
    """``head``, ``unit`` ``count`` times and ``tail``, in slices so memory stays small."""
    stream.write(head.encode("utf-8"))
    repeat = max(1, _BLOCK_BYTES // len(unit))
    block = (unit * repeat).encode("utf-8")
    full, rest = divmod(count, repeat)
    for _ in range(full):
        stream.write(block)
    stream.write((unit * rest).encode("utf-8"))
    stream.write(tail.encode("utf-8"))


def _zip(
    path: Path,
    members: Iterable[tuple[str, bytes | Callable[[zipfile.ZipExtFile], None]]],
    template: bytes | None = None,
) -> Path:
    """A ZIP of ``members`` (bytes, or a writer of a streamed part) after the members of
    ``template`` that they do not replace."""
    members = list(members)
    replaced = {name for name, _ in members}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        if template is not None:
            with zipfile.ZipFile(io.BytesIO(template)) as source:
                for info in source.infolist():
                    if info.filename not in replaced:
                        out.writestr(info, source.read(info.filename))
        for name, content in members:
            if isinstance(content, bytes):
                out.writestr(name, content)
            else:
                with out.open(name, "w", force_zip64=True) as stream:
                    content(stream)
    return path


def _pptx_template() -> tuple[bytes, str]:
    """A one-slide PPTX with a text box, and its slide part's XML."""
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])  # blank
    slide.shapes.add_textbox(Inches(1), Inches(1), Inches(4), Inches(1)).text_frame.text = "Hostile"
    buffer = io.BytesIO()
    deck.save(buffer)
    with zipfile.ZipFile(buffer) as zf:
        return buffer.getvalue(), zf.read("ppt/slides/slide1.xml").decode("utf-8")


def _xlsx_template() -> tuple[bytes, str]:
    """A one-sheet XLSX with a shared string, and its sheet part's XML."""
    from openpyxl import Workbook

    workbook = Workbook()
    workbook.active["A1"] = "Hostile"
    buffer = io.BytesIO()
    workbook.save(buffer)
    with zipfile.ZipFile(buffer) as zf:
        return buffer.getvalue(), zf.read("xl/worksheets/sheet1.xml").decode("utf-8")


def _docx(path: Path, document: str | Callable[[zipfile.ZipExtFile], None]) -> Path:
    main = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
    return _zip(
        path,
        [
            (
                "[Content_Types].xml",
                b'<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
                b'<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
                b'<Default Extension="xml" ContentType="application/xml"/>'
                b'<Override PartName="/word/document.xml" ContentType="' + main.encode() + b'"/></Types>',
            ),
            (
                "_rels/.rels",
                b'<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
                b'<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
                b'officeDocument" Target="word/document.xml"/></Relationships>',
            ),
            ("word/document.xml", document.encode("utf-8") if isinstance(document, str) else document),
        ],
    )


def _epub(
    path: Path,
    chapters: Iterator[tuple[str, bytes | Callable[[zipfile.ZipExtFile], None]]],
    count: int,
    opf_prolog: str = "",
) -> Path:
    """A book of ``count`` chapters named c1.xhtml..., their contents from ``chapters``."""
    items = "".join(
        f'<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>' for i in range(1, count + 1)
    )
    spine = "".join(f'<itemref idref="c{i}"/>' for i in range(1, count + 1))
    opf = (
        f'<?xml version="1.0"?>{opf_prolog}<package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Hostile</dc:title>'
        f"{'<dc:description>&lol9;</dc:description>' if opf_prolog else ''}</metadata>"
        f"<manifest>{items}</manifest><spine>{spine}</spine></package>"
    )
    container = (
        b'<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
        b'<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
        b"</rootfiles></container>"
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr(zipfile.ZipInfo("mimetype"), b"application/epub+zip")  # stored, first
        out.writestr("META-INF/container.xml", container)
        out.writestr("OEBPS/content.opf", opf.encode("utf-8"))
        for name, content in chapters:
            if isinstance(content, bytes):
                out.writestr(f"OEBPS/{name}", content)
            else:
                with out.open(f"OEBPS/{name}", "w", force_zip64=True) as stream:
                    content(stream)
    return path


def _xhtml(body: str, prolog: str = "") -> bytes:
    return (
        f'<?xml version="1.0" encoding="utf-8"?>{prolog}<html xmlns="http://www.w3.org/1999/xhtml">'
        f"<head><title>c</title></head><body>{body}</body></html>"
    ).encode()


# --------------------------------------------------------------------------- the builders


def pptx_paragraphs(folder: Path, count: int) -> Path:
    """A PPTX whose slide holds a paragraph of text and ``count`` empty ones in one text body
    (158M: 1.4 MB)."""
    template, slide = _pptx_template()
    head, rest = slide.split("<a:p>", 1)
    head += "<a:p><a:r><a:t>Hostile</a:t></a:r></a:p>"
    tail = rest[rest.index("</p:txBody>") :]
    write = lambda stream: _write_repeated(stream, head, "<a:p/>", count, tail)  # noqa: E731
    return _zip(folder / f"paragraphs-{count}.pptx", [("ppt/slides/slide1.xml", write)], template)


def xlsx_row(folder: Path, count: int) -> Path:
    """An XLSX whose one row holds ``count`` numeric cells (43M: 2.3 MB)."""
    template, sheet = _xlsx_template()
    head = sheet[: sheet.index("<sheetData")] + '<sheetData><row r="1">'
    tail = "</row></sheetData>" + sheet[sheet.index("</sheetData>") + len("</sheetData>") :]
    write = lambda stream: _write_repeated(stream, head, "<c><v>1</v></c>", count, tail)  # noqa: E731
    return _zip(folder / f"row-{count}.xlsx", [("xl/worksheets/sheet1.xml", write)], template)


def xlsx_shared_strings(folder: Path, megabytes: int) -> Path:
    """An XLSX whose shared-strings part unpacks to ``megabytes`` MB (strings of 1,000 letters)."""
    template, _ = _xlsx_template()
    unit = "<si><t>" + "x" * 1000 + "</t></si>"
    count = megabytes * 10**6 // len(unit)
    head = (
        '<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
        f' count="{count + 1}" uniqueCount="{count + 1}"><si><t>Hostile</t></si>'
    )
    write = lambda stream: _write_repeated(stream, head, unit, count, "</sst>")  # noqa: E731
    return _zip(folder / f"strings-{megabytes}mb.xlsx", [("xl/sharedStrings.xml", write)], template)


def docx_paragraphs(folder: Path, count: int) -> Path:
    """A DOCX of one paragraph of text and ``count`` empty ones (83M, 500 MB of XML: 0.7 MB)."""
    head = (
        f'<?xml version="1.0"?><w:document xmlns:w="{_W_NS}"><w:body><w:p><w:r><w:t>Hostile</w:t></w:r></w:p>'
    )
    write = lambda stream: _write_repeated(stream, head, "<w:p/>", count, "</w:body></w:document>")  # noqa: E731
    return _docx(folder / f"paragraphs-{count}.docx", write)


def docx_laughs(folder: Path, _: int = 0) -> Path:
    """A DOCX whose body refers to a billion-laughs entity (3 GB once expanded)."""
    document = (
        f'<?xml version="1.0"?>{_LAUGHS}<w:document xmlns:w="{_W_NS}"><w:body>'
        "<w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>"
    )
    return _docx(folder / "laughs.docx", document)


def epub_chapters(folder: Path, count: int) -> Path:
    """A book of ``count`` one-line chapters (100k: 24 MB)."""
    chapters = ((f"c{i}.xhtml", _xhtml(f"<p>Chapter {i}.</p>")) for i in range(1, count + 1))
    return _epub(folder / f"chapters-{count}.epub", chapters, count)


def epub_big_chapters(folder: Path, count: int, megabytes: int = 60) -> Path:
    """A book of ``count`` chapters of ``megabytes`` MB of paragraphs each (15 x 60 MB)."""
    paragraph = "<p>" + "All work and no play makes Jack a dull boy. " * 10 + "</p>\n"
    repeats = megabytes * 10**6 // len(paragraph)
    head = '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>c</title></head><body>'

    def chapter(stream: zipfile.ZipExtFile) -> None:
        _write_repeated(stream, head, paragraph, repeats, "</body></html>")

    chapters = ((f"c{i}.xhtml", chapter) for i in range(1, count + 1))
    return _epub(folder / f"big-chapters-{count}x{megabytes}mb.epub", chapters, count)


def epub_dtd(folder: Path, _: int = 0) -> Path:
    """A book whose chapter declares entities in its DTD (read as HTML, they became text)."""
    chapters = iter([("c1.xhtml", _xhtml("<p>Before &lol9; after.</p>", prolog=_LAUGHS))])
    return _epub(folder / "dtd.epub", chapters, 1)


def epub_laughs(folder: Path, _: int = 0) -> Path:
    """A book whose package document refers to a billion-laughs entity."""
    chapters = iter([("c1.xhtml", _xhtml("<p>Text.</p>"))])
    return _epub(folder / "laughs.epub", chapters, 1, opf_prolog=_LAUGHS)


def csv_columns(folder: Path, count: int) -> Path:
    """A one-row CSV of ``count`` columns (400k: ~8 MB)."""
    path = folder / f"columns-{count}.csv"
    with path.open("w", encoding="utf-8") as out:
        out.write(",".join(f"column {i:07d} value" for i in range(count)))
        out.write("\n")
    return path


def truncated_pdf(folder: Path, percent: int = 60, source: Path = TRUNCATED_SOURCE) -> Path:
    """A real PDF cut after ``percent`` % of its bytes (an interrupted download)."""
    data = source.read_bytes()
    path = folder / f"cut-{percent}-{source.name}"
    path.write_bytes(data[: len(data) * percent // 100])
    return path


def non_utf8_name(folder: Path, _: int = 0) -> Path:
    """A text file whose name is Latin-1, not UTF-8 (b"\\xe9t\\xe9_notes.txt")."""
    name = os.fsdecode(b"\xe9t\xe9_notes.txt")
    path = folder / name
    path.write_text("Notes written on a Latin-1 system.\n", encoding="utf-8")
    return path


def named_pipe(folder: Path, _: int = 0) -> Path:
    """A named pipe (FIFO) called pipe.txt: reading it blocks until someone writes."""
    path = folder / "pipe.txt"
    os.mkfifo(path)
    return path


@dataclass(frozen=True)
class Case:
    """One hostile file: ``build(folder, size)``; ``full`` is the issue's size, ``small`` just
    past the parser's limit; ``how``: the file is given to ``add`` or put in ``knowledge/`` and
    found by ``sync``."""

    name: str
    build: Callable[[Path, int], Path]
    full: int
    small: int
    what: str
    how: str = "add"


CASES = [
    Case("pptx-paragraphs", pptx_paragraphs, 158_000_000, 200_001, "PPTX, one slide of N empty paragraphs"),
    Case("xlsx-row", xlsx_row, 43_000_000, 16_385, "XLSX, one row of N cells"),
    Case("xlsx-strings", xlsx_shared_strings, 950, 51, "XLSX, sharedStrings of N MB"),
    Case("docx-paragraphs", docx_paragraphs, 83_000_000, 200_001, "DOCX, N empty paragraphs (500 MB)"),
    Case("epub-chapters", epub_chapters, 100_000, 10_001, "EPUB, N chapters"),
    Case("epub-big-chapters", epub_big_chapters, 15, 1, "EPUB, N chapters of 60 MB"),
    Case("csv-columns", csv_columns, 400_000, 16_385, "CSV, one row of N columns"),
    Case("docx-laughs", docx_laughs, 0, 0, "DOCX, billion laughs"),
    Case("epub-laughs", epub_laughs, 0, 0, "EPUB, billion laughs in the OPF"),
    Case("epub-dtd", epub_dtd, 0, 0, "EPUB, chapter with entities in its DTD"),
    Case("pdf-truncated", truncated_pdf, 60, 60, "PDF cut at N %"),
    Case("name-not-utf8", non_utf8_name, 0, 0, "file name not UTF-8", how="sync"),
    Case("fifo", named_pipe, 0, 0, "named pipe in knowledge/", how="sync"),
]


# --------------------------------------------------------------------------- the benchmark


@dataclass
class Row:
    case: str
    what: str
    size: int
    file_mb: float
    build_s: float
    wall_s: float
    peak_rss_mb: float
    exit: int | None  # None: killed at the timeout
    outcome: str
    extra: dict[str, object] = field(default_factory=dict)


# Runs the command in a grandchild under an address-space limit and writes its peak RSS (KB) to a
# file. A child forked from a large process (pytest holds GBs) inherits that process's RSS high-water
# mark, kept across exec; a grandchild forked from this small launcher starts from the launcher's.
_LAUNCHER = """
import os, resource, sys
limit, report = int(sys.argv[1]), sys.argv[2]
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[3], sys.argv[3:])
_, status, usage = os.wait4(pid, 0)
with open(report, "w") as f:
    f.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def _kdesk(
    data_dir: Path, args: list[str], timeout: float, rss_limit: int
) -> tuple[int | None, float, float, str]:
    """Run ``kdesk --data-dir DATA ARGS`` in a child process under an address-space limit (a
    regression cannot take the machine down); (exit code or None when killed at ``timeout``, wall
    seconds, peak RSS MB, output)."""
    out = tempfile.TemporaryFile()
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "maxrss"
        start = time.monotonic()
        child = subprocess.Popen(
            [
                sys.executable,
                "-S",
                "-c",
                _LAUNCHER,
                str(rss_limit),
                str(report),
                sys.executable,
                "-m",
                "desktop_app.cli",
                "--data-dir",
                str(data_dir),
                *args,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # the timeout kills the launcher and kdesk together
        )
        killed = threading.Event()

        def kill() -> None:
            killed.set()
            try:
                os.killpg(child.pid, 9)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        _, status, usage = os.wait4(child.pid, 0)
        timer.cancel()
        child.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - start
        # Killed at the timeout, the launcher wrote nothing: its own figure is an upper bound.
        peak_kb = int(report.read_text()) if report.exists() else usage.ru_maxrss
    out.seek(0)
    text = out.read().decode("utf-8", errors="replace")
    return (None if killed.is_set() else child.returncode), wall, peak_kb / 1024, text


def _listed(data_dir: Path) -> list[dict[str, object]]:
    code, _, _, text = _kdesk(data_dir, ["list", "--json"], 120, 4 * 10**9)
    try:
        return json.loads(text[text.index("{") :])["documents"] if code == 0 else []
    except (ValueError, KeyError):
        return []


def _outcome(documents: list[dict[str, object]], name: str, code: int | None, output: str) -> str:
    # A name that is not UTF-8 is listed with U+FFFD; its stored form is in "name_escaped".
    stored = escape_name(name)
    entry = next(
        (d for d in documents if str(d.get("name_escaped", d.get("name", ""))).endswith(stored)), None
    )
    if entry is not None:
        status = entry.get("status")
        return (
            f"{status}: {entry.get('error')}"
            if entry.get("error")
            else f"{status}, {entry.get('chunks')} chunks"
        )
    last = [line for line in output.strip().splitlines() if line.strip()][-1:] or [""]
    return ("killed at the timeout; " if code is None else "") + f"not listed; {last[0][:150]}"


def run_case(case: Case, size: int, work: Path, timeout: float, rss_limit: int) -> Row:
    """Build one case at ``size`` and give it to ``kdesk add`` (or ``sync``) in a fresh data folder."""
    data_dir = work / case.name / "data"
    source = work / case.name / "source"
    source.mkdir(parents=True)
    start = time.monotonic()
    target = data_dir / "knowledge" if case.how == "sync" else source
    target.mkdir(parents=True, exist_ok=True)
    path = case.build(target, size)
    build_s = time.monotonic() - start
    file_mb = path.stat().st_size / 1e6 if path.is_file() else 0.0
    args = ["sync"] if case.how == "sync" else ["add", str(path)]
    code, wall, rss, output = _kdesk(data_dir, args, timeout, rss_limit)
    outcome = _outcome(_listed(data_dir), path.name, code, output)
    return Row(
        case.name,
        case.what,
        size,
        round(file_mb, 2),
        round(build_s, 1),
        round(wall, 1),
        round(rss),
        code,
        outcome,
    )


def run_mixed(work: Path, timeout: float, rss_limit: int, small: bool) -> Row:
    """The issue's mixed folder: every ``add`` case at its size, plus three good files."""
    folder = work / "mixed" / "folder"
    folder.mkdir(parents=True)
    start = time.monotonic()
    for case in CASES:
        if case.how == "add":
            case.build(folder, case.small if small else case.full)
    good = {
        "good-notes.md": "# Field notes\n\nThe heron nests by the north pond in April.\n",
        "good-recipe.txt": "Bread: flour, water, salt and yeast; bake at 230 C for 35 minutes.\n",
        "good-table.csv": "city,population\nLyon,522000\nNantes,320000\n",
    }
    for name, text in good.items():
        (folder / name).write_text(text, encoding="utf-8")
    build_s = time.monotonic() - start
    data_dir = work / "mixed" / "data"
    code, wall, rss, output = _kdesk(data_dir, ["add", str(folder)], timeout, rss_limit)
    documents = _listed(data_dir)
    indexed = [d for d in documents if d.get("status") == "indexed"]
    good_indexed = sorted(str(d["name"]).rsplit("/", 1)[-1] for d in indexed if "good-" in str(d.get("name")))
    statuses: dict[str, int] = {}
    for d in documents:
        statuses[str(d.get("status"))] = statuses.get(str(d.get("status")), 0) + 1
    outcome = f"good files indexed: {len(good_indexed)}/3; " + ", ".join(
        f"{n} {s}" for s, n in sorted(statuses.items())
    )
    if code is None:
        outcome = "killed at the timeout; " + outcome
    size_mb = sum(p.stat().st_size for p in folder.iterdir()) / 1e6
    return Row(
        "mixed",
        "hostile files + 3 good files, one add",
        len(list(folder.iterdir())),
        round(size_mb, 2),
        round(build_s, 1),
        round(wall, 1),
        round(rss),
        code,
        outcome,
        {"good_indexed": good_indexed},
    )


def run(
    names: list[str] | None = None,
    *,
    small: bool = False,
    timeout: float = 300,
    rss_limit_mb: int = 4000,
    mixed: bool = True,
    work_dir: Path | None = None,
    report: Callable[[Row], None] | None = None,
) -> list[Row]:
    """Every case (or ``names``) at the issue's size (``small``: just past each limit), each in a
    fresh data folder, then the mixed folder; ``report`` sees each row as it is measured."""
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="kdesk-hostile-", dir=work_dir) as tmp:
        work = Path(tmp)
        for case in CASES:
            if names and case.name not in names:
                continue
            row = run_case(case, case.small if small else case.full, work, timeout, rss_limit_mb * 10**6)
            rows.append(row)
            if report:
                report(row)
        if mixed and (not names or "mixed" in names):
            row = run_mixed(work, timeout, rss_limit_mb * 10**6, small)
            rows.append(row)
            if report:
                report(row)
    return rows


def table(rows: list[Row]) -> str:
    """The rows as a Markdown table."""
    lines = [
        "| case | size | file MB | wall s | peak RSS MB | exit | outcome |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        exit_ = "killed" if r.exit is None else str(r.exit)
        outcome = r.outcome.replace("|", "\\|")
        size = f"{r.size:,}" if r.size else "-"
        lines.append(
            f"| {r.case} | {size} | {r.file_mb} | {r.wall_s} | {r.peak_rss_mb:,.0f} | {exit_} | {outcome} |"
        )
    return "\n".join(lines)


def as_json(rows: list[Row]) -> list[dict[str, object]]:
    return [asdict(r) for r in rows]
