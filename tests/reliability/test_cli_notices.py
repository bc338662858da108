"""What `kdesk` tells, and leaves behind, when something goes wrong around a command: chunks
changed outside the app are told once a command, naming the file; Ctrl-C in `kdesk add` takes back
the copy it made. Real Chroma, the hashing embeddings server of conftest.py; the CLI in this
process where no signal is sent (each `kdesk` process spends ~7 s importing on a loaded box)."""

from __future__ import annotations

import logging
import os
import re
import signal
import time
from pathlib import Path

from desktop_app.cli.main import main
from desktop_app.core.library.knowledge import KnowledgeBase

from .conftest import hashed_bow, write_text_pdf

FORGED = "The kea survey in Arthur's Pass counted 9,999 birds."
QUESTION = "how many kea did the survey in Arthur's Pass count"


def _notes(folder: Path) -> Path:
    folder.mkdir(parents=True)
    line = "The kea survey part {i}, line {j}, in Arthur's Pass counted birds by the road."
    parts = [f"## Part {i}\n\n" + " ".join(line.format(i=i, j=j) for j in range(12)) for i in range(6)]
    (folder / "a vault.md").write_text("# Kea survey\n\n" + "\n\n".join(parts), encoding="utf-8")
    (folder / "parrots.md").write_text("# Kea\n\nThe kea is an alpine parrot.\n", encoding="utf-8")
    return folder


def test_chunks_changed_outside_the_app_are_told_once_a_command_naming_the_file(
    tmp_path, kdesk_factory, capsys, caplog
):
    kd = kdesk_factory(retrieval={"reranker": "none"})  # the order of hits is not what is tested

    def kdesk(*argv: str) -> tuple[str, list[str]]:
        """stdout, and the lines that tell of the left-out chunks on stderr or in the log."""
        caplog.clear()
        assert main(["--data-dir", str(kd.data_dir), *argv]) == 0
        out, err = capsys.readouterr()
        logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        return out, [t for t in err.splitlines() + logged if "were left out" in t]

    kdesk("add", str(_notes(tmp_path / "notes")))
    kb = KnowledgeBase(kd.data_dir)  # another client writes two of the note's chunks
    try:
        ids = [f"{kb.doc_id('notes/a vault.md')}-chunk-{i}" for i in range(2)]
        got = kb.store.collection.get(ids=ids, include=["metadatas"])
        assert sorted(got["ids"]) == ids
        vectors = [hashed_bow(FORGED)] * 2
        kb.store.collection.upsert(
            ids=ids, documents=[FORGED] * 2, metadatas=got["metadatas"], embeddings=vectors
        )
    finally:
        kb.close()

    caplog.set_level(logging.WARNING)
    for command in ("search", "search", "ask"):  # the first search sends the note back to pending
        out, told = kdesk(command, QUESTION)
        assert "9,999" not in out
        [line] = told  # once: not also as a log line, not once per read of the store
        assert line.startswith("warning: 2 chunks read from "), line
        assert line.endswith("the next sync re-indexes notes/a vault.md"), line  # the file, not a chunk id

    out, told = kdesk("sync")
    assert "0 added, 1 updated" in out and not told
    out, told = kdesk("search", QUESTION)
    assert "9,999" not in out and not told


def test_ctrl_c_while_add_reads_a_large_pdf_takes_back_its_copy(tmp_path, kdesk_factory, monkeypatch):
    """Ctrl-C is the command line's Cancel: the add did not happen, so the copy it made goes (left
    in `knowledge/`, it was listed nowhere until the next sync indexed it anyway)."""
    kd = kdesk_factory()
    pdf = tmp_path / "survey.pdf"
    write_text_pdf(pdf, [[f"Kea survey, page {n}: the kea is an alpine parrot."] * 8 for n in range(1, 1001)])
    before = pdf.read_bytes()
    monkeypatch.setenv("KDESK_PROGRESS", "1")  # its progress bar on stderr: we see it read
    add = kd.popen(
        "add",
        str(pdf),
        # A shell's background job starts with SIGINT ignored; Ctrl-C reaches a kdesk in front.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    seen, deadline = "", time.monotonic() + 120
    while not (m := re.findall(r"reading page (\d+) of 1000", seen)) or int(m[-1]) < 20:
        chunk = os.read(add.stderr.fileno(), 4096).decode("utf-8", "replace")
        assert chunk and time.monotonic() < deadline, seen[-2000:]
        seen += chunk
    add.send_signal(signal.SIGINT)
    _, stderr = add.communicate(timeout=60)
    assert add.returncode == 130 and stderr.rstrip().endswith("interrupted"), stderr[-2000:]

    assert list((kd.data_dir / "knowledge").iterdir()) == []  # the copy is gone...
    assert pdf.read_bytes() == before  # ... not the user's file
    kb = KnowledgeBase(kd.data_dir)
    try:
        assert kb.list_documents() == []  # and no row to index it later
    finally:
        kb.close()
