"""One data folder, several processes: two `kdesk add` at once and a reader searching meanwhile;
a writer killed with SIGKILL while it holds the lock; an open knowledge base that sees another
process's writes before it answers. Real processes, real Chroma, the product's embedder client on
a slow local hashing server (so the writes overlap)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from desktop_app.core.library.datafolder import LOCK_NAME
from desktop_app.core.library.knowledge import KnowledgeBase

pytestmark = pytest.mark.slow


def word(tag: str, i: int) -> str:
    """A word only document i of a corpus holds (letters only: one token for every tokenizer)."""
    return f"{tag}{chr(97 + i // 26)}{chr(97 + i % 26)}"


def _corpus(folder: Path, tag: str, n: int) -> Path:
    folder.mkdir(parents=True)
    for i in range(n):
        (folder / f"{tag}{i:02d}.md").write_text(
            f"# {tag} {i}\nField note {word(tag, i)}: a {tag} flock of lorikeets.\n", encoding="utf-8"
        )
    return folder


def _holder(data_dir: Path) -> dict:
    try:
        return json.loads((data_dir / "index" / LOCK_NAME).read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}


def test_two_writers_and_a_reader_at_once(tmp_path, kdesk_cls, slow_embeddings_server):
    kd = kdesk_cls(tmp_path / "data", slow_embeddings_server.url, index={"batch_size": 4})
    a = _corpus(tmp_path / "alpha", "alpha", 20)
    b = _corpus(tmp_path / "beta", "beta", 20)
    assert kd.run("add", str(_corpus(tmp_path / "seed", "seed", 2)), timeout=300).rc == 0
    first = kd.popen("add", str(a))
    second = kd.popen("add", str(b))
    searches = []
    while first.poll() is None or second.poll() is None:  # a reader never waits for the writers
        res = kd.run("search", "lorikeets flock", "--json", timeout=120)
        assert res.rc == 0 and "Traceback" not in res.stderr, res.stderr
        searches.append(res.seconds)
    out = [p.communicate(timeout=600) for p in (first, second)]
    for p, (_stdout, stderr) in zip((first, second), out):
        assert p.returncode == 0, stderr
        assert "Traceback" not in stderr and "error" not in stderr.lower(), stderr
    waited = [stderr for _, stderr in out if "waiting for" in stderr]
    assert len(waited) == 1 and "to finish writing to the data folder" in waited[0]
    assert searches, "the reader never ran while the writers did"
    docs = {d["name"]: d for d in kd.run("list", "--json", timeout=120).json()["documents"]}
    assert len(docs) == 42 and all(d["status"] == "indexed" for d in docs.values())
    for tag, i in (("alpha", 7), ("beta", 13)):
        hits = kd.run("search", word(tag, i), "--json", "--top-k", "3", timeout=120).json()["hits"]
        assert hits[0]["source"] == f"{tag}/{tag}{i:02d}.md", hits
    assert kd.run("sync", "--json", timeout=300).json()["added"] == []  # nothing was left behind


def test_a_killed_lock_holder_leaves_the_next_writer_able_to_go_on(
    tmp_path, kdesk_cls, slow_embeddings_server
):
    kd = kdesk_cls(tmp_path / "data", slow_embeddings_server.url, index={"batch_size": 4})
    a = _corpus(tmp_path / "alpha", "alpha", 30)
    victim = kd.popen("add", str(a))
    deadline = time.monotonic() + 120
    while _holder(kd.data_dir).get("pid") != victim.pid:
        assert time.monotonic() < deadline and victim.poll() is None, "the writer never took the lock"
        time.sleep(0.05)
    time.sleep(1.0)  # in the middle of its batches
    victim.send_signal(signal.SIGKILL)
    victim.wait(timeout=30)
    b = _corpus(tmp_path / "beta", "beta", 3)
    res = kd.run("add", str(b), "--json", timeout=300)
    assert res.rc == 0 and "waiting for" not in res.stderr, res.stderr
    assert len(res.json()["added"]) == 3
    res = kd.run("sync", "--json", timeout=600)  # the killed writer's copied files get indexed
    assert res.rc == 0, res.stderr
    docs = {d["name"]: d for d in kd.run("list", "--json", timeout=120).json()["documents"]}
    copied = {
        p.relative_to(kd.data_dir / "knowledge").as_posix() for p in (kd.data_dir / "knowledge").rglob("*.md")
    }
    assert set(docs) == copied and all(d["status"] == "indexed" for d in docs.values())
    assert kd.run("sync", "--json", timeout=300).json()["added"] == []


def test_an_open_library_sees_another_processs_writes_before_it_answers(
    tmp_path, kdesk_cls, shared_embeddings_server
):
    kd = kdesk_cls(tmp_path / "data", shared_embeddings_server.url)
    assert kd.run("add", str(_corpus(tmp_path / "first", "first", 3)), timeout=300).rc == 0
    reader = KnowledgeBase(kd.data_dir)  # like the open app: indexes loaded in memory
    try:
        assert reader.search(word("first", 1), top_k=1)[0].source == "first/first01.md"
        assert reader.dense is not None
        res = kd.run("add", str(_corpus(tmp_path / "second", "second", 3)), timeout=300)
        assert res.rc == 0, res.stderr
        hit = reader.search(word("second", 2), top_k=1)[0]  # no reopen: it noticed by itself
        assert hit.source == "second/second02.md"
        assert len(reader.dense) == reader.store.count()
        # And it writes on top of them, never over them.
        (reader.knowledge_dir / "mine.md").write_text("# Mine\nA galah on the fence.\n", encoding="utf-8")
        reader.sync()
        assert {d.name for d in reader.list_documents()} >= {
            "second/second00.md",
            "mine.md",
            "first/first02.md",
        }
    finally:
        reader.close()
    docs = kd.run("list", "--json", timeout=120).json()["documents"]
    assert len(docs) == 7 and all(d["status"] == "indexed" for d in docs)


def test_a_waiting_writer_names_the_command_it_waits_for_and_the_window_is_the_window(
    tmp_path, kdesk_cls, slow_embeddings_server, capsys
):
    """`kdesk --data-dir D add` (its argv names the folder before the command) held the lock;
    the writer after it said `waiting for kdesk D (...)`."""
    from desktop_app.cli.main import main
    from desktop_app.core.library import datafolder

    kd = kdesk_cls(tmp_path / "data", slow_embeddings_server.url, index={"batch_size": 4})
    holder = kd.popen("add", str(_corpus(tmp_path / "alpha", "alpha", 20)))
    deadline = time.monotonic() + 120
    while _holder(kd.data_dir).get("pid") != holder.pid:
        assert time.monotonic() < deadline and holder.poll() is None, "the writer never took the lock"
        time.sleep(0.02)
    holder.send_signal(signal.SIGSTOP)  # it holds the lock until it goes on
    resume = threading.Timer(1.0, holder.send_signal, (signal.SIGCONT,))
    resume.start()
    try:  # this process is the second writer: the real CLI, waiting for the real first one
        assert main(["--data-dir", str(kd.data_dir), "add", str(_corpus(tmp_path / "beta", "beta", 2))]) == 0
    finally:
        resume.cancel()
        holder.send_signal(signal.SIGCONT)
        datafolder.name_this_process("")  # this test process is no `kdesk add` for the next test
    assert holder.wait(timeout=300) == 0, holder.stderr.read()
    [line] = [t for t in capsys.readouterr().err.splitlines() if "waiting for" in t]
    assert re.fullmatch(
        rf"waiting for kdesk add \(process {holder.pid}, since \d\d:\d\d:\d\d\) to finish writing to the"
        r" data folder\.\.\.",
        line,
    ), line
    assert len(kd.run("list", "--json", timeout=120).json()["documents"]) == 22

    # The window records itself as such; a writer that cannot wait says who is busy in those words.
    window = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from desktop_app.core.library import datafolder as d; d.name_this_process(d.WINDOW);"
            " lock = d.WriterLock(sys.argv[1]); lock.acquire(); print('held', flush=True); sys.stdin.read()",
            str(kd.data_dir / "index"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert window.stdout.readline() == "held\n"
        with pytest.raises(datafolder.DataFolderBusy) as busy:
            datafolder.WriterLock(kd.data_dir / "index").acquire(wait=False)
        assert re.fullmatch(
            rf"busy: the Knowledge Desk window \(process {window.pid}, since \d\d:\d\d:\d\d\) to finish"
            r" writing to the data folder",
            str(busy.value),
        ), str(busy.value)
    finally:
        window.communicate("", timeout=60)
