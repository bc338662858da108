"""The parse worker (parse_worker.py): each file is read in a child process that is killed when one
unit of progress (a page, an OCR page) takes longer than ``index.max_seconds_per_unit``, when its
memory passes ``index.max_parse_memory_mb``, or at once on a cancel. The batch goes on; a failed
file keeps its row and is read again only once it changes or on ``--retry-failed``; a cancelled
file is never left half-indexed.

Real files and real processes: a 619-page PDF of the shared data (18 s of reading on 2 cores), an
A4 page of dense text read by OCR (10-30 s: a unit that outlasts a short deadline), generated PDFs.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

from desktop_app.cli.main import main
from desktop_app.core.config import IndexConfig
from desktop_app.core.library.documents import ParseError
from desktop_app.core.library.knowledge import KnowledgeBase
from desktop_app.core.library.manifest import FAILED, INDEXED, PENDING
from desktop_app.core.library.parse_worker import ParseRequest, ParseWorker
from desktop_app.core.tasks import Cancelled, SimpleTask

DA_619 = "docs/unstructured/example-docs/pdf/DA-619p.pdf"
PAGE = re.compile(r"reading page (\d+) of 619")
LINE = "The quick brown fox jumps over the lazy dog near the river bank at dawn."


def _pdf(path: Path, pages: int) -> Path:
    """A PDF of ``pages`` pages, each a few lines of text."""
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
    for number in range(1, pages + 1):
        page = writer.add_blank_page(612, 792)
        stream = DecodedStreamObject()
        lines = " ".join(f"({LINE} Page {number}, line {i}.) Tj T*" for i in range(4))
        stream.set_data(f"BT /F1 12 Tf 14 TL 72 720 Td {lines} ET".encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
    with path.open("wb") as fh:
        writer.write(fh)
    return path


@pytest.fixture(scope="module")
def a4_scan(tmp_path_factory) -> Path:
    """An A4 page of dense English text as a PNG: one OCR unit of 10-30 s on 2 cores."""
    from kdesk_lab.ocr import draw_pages, paragraphs

    [(image, _)] = draw_pages([" ".join(paragraphs("en", 8))])[:1]
    path = tmp_path_factory.mktemp("scan") / "dense page.png"
    image.save(path)
    return path


@pytest.fixture
def make_kb(tmp_path, minilm):
    made: list[KnowledgeBase] = []

    def factory(**index: object) -> KnowledgeBase:
        kb = KnowledgeBase(tmp_path / "data", embedder=minilm)
        for key, value in index.items():
            setattr(kb.config.index, key, value)
        made.append(kb)
        return kb

    yield factory
    for kb in made:
        kb.close()


class Recorder(SimpleTask):
    """Records progress lines with their time; cancels from another thread 0.1 s after the first
    line ``cancel_on`` accepts (as a click lands: in the middle of whatever runs then)."""

    def __init__(self, cancel_on: Callable[[str], bool]) -> None:
        super().__init__()
        self.cancel_on = cancel_on
        self.lines: list[tuple[float, str]] = []
        self.cancelled_at: float | None = None
        self._timer: threading.Timer | None = None

    def progress(self, done: int, total: int, message: object = "") -> None:
        super().progress(done, total, message)
        message = str(message)  # a progress line is a message: its English
        self.lines.append((time.monotonic(), message))
        if self._timer is None and self.cancel_on(message):
            self._timer = threading.Timer(0.1, self.cancel)
            self._timer.start()

    def cancel(self) -> None:
        self.cancelled_at = time.monotonic()
        super().cancel()


def _request(path: Path, cfg: IndexConfig | None = None) -> ParseRequest:
    return ParseRequest(cfg or IndexConfig(), 1000, path, path.name, "doc", path.stat().st_size)


def test_a_file_that_advances_page_by_page_is_never_cut_while_a_stuck_unit_is(tmp_path, a4_scan):
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    long_pdf = _pdf(tmp_path / "long.pdf", 2000)
    worker = ParseWorker()
    heard: list[tuple[float, tuple[str, int, int | None]]] = []

    def read(path: Path, deadline: float) -> list:
        heard.clear()
        heard.append((time.monotonic(), ("", 0, None)))
        chunks = worker.chunk_file(
            _request(path),
            max_seconds=deadline,
            max_mb=0,
            on_unit=lambda *u: heard.append((time.monotonic(), u)),
            stopped=lambda: False,
        )
        heard.append((time.monotonic(), ("", 0, None)))
        return chunks

    try:
        read(long_pdf, 0)  # no deadline: how long the file takes, and its longest stretch without a unit
        took = heard[-1][0] - heard[0][0]
        stretch = max(b[0] - a[0] for a, b in zip(heard, heard[1:]))
        deadline = max(took / 2, 3 * stretch)  # half the file's time, three times its longest stretch
        assert deadline < took, f"{took:.1f} s, {stretch:.1f} s without a unit: too noisy a machine to tell"

        chunks = read(long_pdf, deadline)  # never cut, though it outlasts its deadline
        assert {c.page for c in chunks} == set(range(1, 2001))
        assert heard[-2][1] == ("page", 2000, 2000)

        with pytest.raises(ParseError) as cut:
            read(a4_scan, 1.0)
        assert str(cut.value) == "took longer than 1 s at OCR page 1 (index.max_seconds_per_unit)"
        assert heard[-1][1] == ("OCR page", 1, 1)  # OCR pages are units too: their lines reach the user
        assert worker.pid is None  # killed; the next file starts another
        assert len(read(_pdf(tmp_path / "after.pdf", 3), 60)) == 3
        assert worker.starts == 2
    finally:
        worker.close()
    assert worker.pid is None


def test_a_stuck_file_fails_with_its_row_the_batch_goes_on_and_the_next_sync_leaves_it(make_kb, a4_scan):
    kb = make_kb(max_seconds_per_unit=2.0)
    scan = kb.knowledge_dir / a4_scan.name
    scan.write_bytes(a4_scan.read_bytes())
    (kb.knowledge_dir / "kea.md").write_text("# Kea\n\nThe kea is an alpine parrot.\n", encoding="utf-8")
    report = kb.sync()
    assert {n: str(why) for n, why in report.failed} == {
        "dense page.png": "took longer than 2 s at OCR page 1 (index.max_seconds_per_unit)"
    }
    rows = kb.manifest.all()
    assert rows["kea.md"].status == INDEXED
    assert rows["dense page.png"].status == FAILED and rows["dense page.png"].sha256
    assert kb.search("alpine parrot")[0].source == "kea.md"

    starts = kb.parse_worker.starts
    again = kb.sync()  # unchanged: not read again, still reported
    assert sorted(again.unchanged) == ["dense page.png", "kea.md"]
    assert dict(again.failed) == dict(report.failed)
    assert kb.parse_worker.starts == starts


def test_a_file_past_the_memory_cap_fails_as_too_large_and_retry_failed_reads_it_again(tmp_path, capsys):
    from kdesk_lab.ocr import draw_pages, paragraphs

    [(image, _)] = draw_pages([paragraphs("en", 1)[0][:200]], size=(827, 700), margin=40)
    data = tmp_path / "data"
    (data / "knowledge").mkdir(parents=True)
    image.save(data / "knowledge" / "note.png")
    # The worker holds ~40 MB before a file; OCR's model alone takes ~140 MB more.
    (data / "config.toml").write_text("[index]\nmax_parse_memory_mb = 100\n", encoding="utf-8")

    def kdesk(*argv: str) -> dict:
        assert main(["--data-dir", str(data), *argv, "--json"]) == 0
        return json.loads(capsys.readouterr().out)

    report = kdesk("sync")
    assert report["failed"] == [
        {
            "name": "note.png",
            "error": "too large: it needed more than 100 MB to read (index.max_parse_memory_mb)",
        }
    ]
    assert kdesk("sync")["unchanged"] == ["note.png"]  # not read again until it changes...

    (data / "config.toml").write_text("[index]\nmax_parse_memory_mb = 1200\n", encoding="utf-8")
    retried = kdesk("sync", "--retry-failed")  # ... or until asked
    assert retried["updated"] == ["note.png"] and not retried["failed"]
    assert [d["status"] for d in kdesk("list")["documents"]] == [INDEXED]


def test_a_cancel_while_a_file_is_read_stops_within_two_seconds_and_indexes_nothing(make_kb, shared_data):
    kb = make_kb()
    pdf = kb.knowledge_dir / "DA-619p.pdf"
    pdf.write_bytes((shared_data / DA_619).read_bytes())
    # Lines are samples (the heartbeat is looked at every 50 ms): any page from the 40th on.
    task = Recorder(cancel_on=lambda line: (m := PAGE.search(line)) is not None and int(m[1]) >= 40)
    with pytest.raises(Cancelled):
        kb.sync(task)
    assert time.monotonic() - task.cancelled_at < 2.0
    assert kb.parse_worker.pid is None  # killed, not waited for
    assert kb.manifest.all() == {} and kb.store.count() == 0 and kb.keyword.doc_ids() == set()
    lines = [line for _, line in task.lines]
    assert "DA-619p.pdf: reading page 1 of 619" in lines

    (kb.knowledge_dir / "DA-619p.pdf").unlink()
    (kb.knowledge_dir / "kea.md").write_text("# Kea\n\nThe kea is an alpine parrot.\n", encoding="utf-8")
    assert kb.sync().added == ["kea.md"]  # a new worker reads the next file


def test_a_cancel_while_a_large_file_is_embedded_stops_within_two_seconds_and_leaves_no_half(make_kb):
    kb = make_kb()
    (kb.knowledge_dir / "a kea.md").write_text("# Kea\n\nThe kea is an alpine parrot.\n", encoding="utf-8")
    paragraphs = [
        f"## Part {i}\n\n" + " ".join(f"{LINE} Paragraph {i}, sentence {j}." for j in range(12))
        for i in range(50)
    ]
    (kb.knowledge_dir / "big.md").write_text("# Big\n\n" + "\n\n".join(paragraphs), encoding="utf-8")
    task = Recorder(cancel_on=lambda line: "chunks embedded" in line)
    with pytest.raises(Cancelled):
        kb.sync(task)
    embedded = [(round(t - task.lines[0][0], 2), line) for t, line in task.lines if "chunks embedded" in line]
    assert time.monotonic() - task.cancelled_at < 2.0, embedded
    assert embedded[0][1].startswith("big.md: 7 of ")  # the first slice held the kea's one chunk too

    rows = kb.manifest.all()
    assert rows["a kea.md"].status == INDEXED  # stored in full before the cancel: kept
    assert rows["big.md"].status == PENDING and rows["big.md"].chunks == 0
    big = rows["big.md"].doc_id
    assert kb.store.chunks_of([big]) == []
    assert big not in kb.keyword.doc_ids()
    assert kb.dense is None or big not in kb.dense.doc_ids()
    assert kb.search("alpine parrot")[0].source == "a kea.md"

    report = kb.sync()  # the next sync indexes it whole
    assert report.updated == ["big.md"] and not report.failed
    assert kb.manifest.all()["big.md"].status == INDEXED
    assert len(kb.store.chunks_of([big])) == kb.manifest.all()["big.md"].chunks


def test_a_cancelled_add_takes_back_its_unindexed_copies_so_the_next_sync_does_not_index_them(
    make_kb, tmp_path
):
    kb = make_kb()
    source = tmp_path / "notes"
    source.mkdir()
    (source / "a kea.md").write_text("# Kea\n\nThe kea is an alpine parrot.\n", encoding="utf-8")
    paragraphs = [
        f"## Part {i}\n\n" + " ".join(f"{LINE} Paragraph {i}, sentence {j}." for j in range(12))
        for i in range(50)
    ]
    (source / "big.md").write_text("# Big\n\n" + "\n\n".join(paragraphs), encoding="utf-8")
    task = Recorder(cancel_on=lambda line: "chunks embedded" in line)
    with pytest.raises(Cancelled):
        kb.add([source], task=task)

    assert {n: e.status for n, e in kb.manifest.all().items()} == {"notes/a kea.md": INDEXED}
    assert sorted(p.name for p in (kb.knowledge_dir / "notes").iterdir()) == ["a kea.md"]
    assert (source / "big.md").exists()  # the user's own file is untouched
    report = kb.sync()  # what the window's watcher runs next: the cancelled file is not indexed
    assert not report.added and not report.updated
    assert kb.search("quick brown fox river bank")[0].source == "notes/a kea.md"


def test_a_bug_in_the_worker_fails_the_file_with_its_type(make_kb):
    kb = make_kb(chunker="no-such-chunker")
    (kb.knowledge_dir / "kea.md").write_text("# Kea\n\nThe kea is an alpine parrot.\n", encoding="utf-8")
    report = kb.sync()
    [(name, error)] = report.failed
    assert name == "kea.md"
    assert str(error).startswith("could not read: ValueError: unknown chunking strategy 'no-such-chunker'")


class Killer(SimpleTask):
    """Sends SIGKILL to the reader process, from outside, once it reads page 5 of a file, as the
    kernel's OOM killer does: ``times[name]`` workers reading ``name`` die."""

    def __init__(self, kb: KnowledgeBase, times: dict[str, int]) -> None:
        super().__init__()
        self.kb, self.times = kb, times
        self.killed: dict[str, list[int]] = {name: [] for name in times}

    def progress(self, done: int, total: int, message: object = "") -> None:
        super().progress(done, total, message)
        m = re.match(r"(.+): reading page (\d+) of", str(message))
        pid = self.kb.parse_worker.pid
        if m is None or int(m[2]) < 5 or pid is None or m[1] not in self.times:
            return
        killed = self.killed[m[1]]
        if pid not in killed and len(killed) < self.times[m[1]]:
            killed.append(pid)
            os.kill(pid, signal.SIGKILL)


def test_a_reader_killed_by_signal_9_reads_the_file_again_once_and_a_second_kill_fails_it(make_kb):
    """Only a kill from outside is retried: the deadline, the memory cap and a cancel kill the
    worker too, and keep their own reasons (the tests above count the workers they start)."""
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    kb = make_kb()
    _pdf(kb.knowledge_dir / "once.pdf", 40)
    _pdf(kb.knowledge_dir / "always.pdf", 40)
    (kb.knowledge_dir / "kea.md").write_text("# Kea\n\nThe kea is an alpine parrot.\n", encoding="utf-8")
    killer = Killer(kb, {"once.pdf": 1, "always.pdf": 99})
    report = kb.sync(killer)
    assert {name: len(pids) for name, pids in killer.killed.items()} == {"once.pdf": 1, "always.pdf": 2}
    assert kb.parse_worker.starts == 4  # the first, one after once.pdf's kill, two after always.pdf's
    assert {"kea.md", "once.pdf"} <= set(report.added)  # a new worker read it whole
    assert [(n, str(why)) for n, why in report.failed] == [
        ("always.pdf", "the file reader process was killed (signal 9, probably out of memory) twice")
    ]
    rows = kb.manifest.all()
    assert rows["always.pdf"].status == FAILED and rows["kea.md"].status == INDEXED  # the batch went on
    once = rows["once.pdf"]
    assert once.status == INDEXED and {h.page for h in kb.store.chunks_of([once.doc_id])} == set(range(1, 41))
    assert kb.search("alpine parrot")[0].source == "kea.md"
