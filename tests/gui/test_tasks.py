"""The one task runner: work on the pool, results on the UI thread, cancellation, failures that
keep their exception and say what failed."""

from __future__ import annotations

import logging
import threading
import time

from desktop_app.core.library import reasons
from desktop_app.core.library.documents import ParseError
from desktop_app.core.messages import message
from desktop_app.core.tasks import check
from desktop_app.gui.i18n import set_language
from desktop_app.gui.operations import Operation
from desktop_app.gui.tasks import Failure, TaskRunner


def test_progress_items_and_result_arrive_on_the_ui_thread(qtbot):
    runner = TaskRunner()
    ui_thread = threading.get_ident()
    seen: list[tuple[str, object, bool]] = []

    def work(state):
        assert threading.get_ident() != ui_thread  # really in the background
        state.progress(1, 2, "half")
        yield "a"
        yield "b"

    with qtbot.waitSignal(runner.job_finished, timeout=5000):
        runner.run(
            "stream",
            work,
            on_progress=lambda d, t, m: seen.append(
                ("progress", (d, t, m), threading.get_ident() == ui_thread)
            ),
            on_partial=lambda item: seen.append(("item", item, threading.get_ident() == ui_thread)),
            on_success=lambda r: seen.append(("done", r, threading.get_ident() == ui_thread)),
        )
    assert [s[0] for s in seen] == ["progress", "item", "item", "done"]
    assert [s[1] for s in seen[1:3]] == ["a", "b"]
    assert all(on_ui for _, _, on_ui in seen)
    runner.shutdown()


def test_a_new_job_of_the_same_kind_cancels_the_old_one(qtbot):
    runner = TaskRunner()
    outcome: dict[str, str] = {}

    def slow(state):
        for _ in range(200):
            check(state)
            time.sleep(0.01)
        return "finished"

    runner.run("search", slow, on_cancelled=lambda: outcome.setdefault("first", "cancelled"))
    runner.run("search", lambda state: "fresh", on_success=lambda r: outcome.setdefault("second", r))
    assert runner.wait_idle(5000)
    assert outcome == {"first": "cancelled", "second": "fresh"}
    runner.shutdown()


def test_a_failed_jobs_callback_receives_the_exception_and_what_failed(qtbot, caplog):
    runner = TaskRunner()
    raised: list[Exception] = []
    failures: list[Failure] = []

    def work(state):
        exc = ParseError(reasons.ENCRYPTED, label="PDF")
        raised.append(exc)
        raise exc

    with caplog.at_level(logging.ERROR, logger="desktop_app.gui.tasks"):
        job = runner.run("add", work, operation=Operation.ADD_FILES, on_failure=failures.append)
        assert runner.wait_idle(5000)
    [failure] = failures
    assert failure.error is raised[0]  # the exception itself, not its text
    assert failure.operation == "add files" and job.failure is failure
    assert failure.text() == "Could not add files: encrypted PDF: a password is required"
    assert "Traceback" in caplog.text and "Traceback" not in failure.text()  # the log has it, not the UI
    try:
        set_language("zh_CN")
        assert failure.text() == "无法添加文件：PDF 已加密：需要密码"  # the catalogue message, translated
    finally:
        set_language("en")
    assert not runner.is_busy()


def test_an_unexpected_exception_is_shown_by_its_type_and_text(qtbot):
    assert (
        Failure(Operation.ANSWER, KeyError("top_k")).text()
        == "Could not answer the question: KeyError: 'top_k'"
    )
    assert Failure(Operation.LIST, RuntimeError()).text() == "Could not list the documents: RuntimeError"
    # A core error raised with its message is that message (no type); a text is not parsed back
    # into one: an error that only says a message's English is shown as written, with its type.
    raised = ValueError(message(reasons.ENCRYPTED, label="PDF"))
    assert Failure(Operation.ADD_FILES, raised).reason() == "encrypted PDF: a password is required"
    stored = ValueError("encrypted PDF: a password is required")
    assert Failure(Operation.ADD_FILES, stored).reason() == "ValueError: encrypted PDF: a password is required"
    # A system error: its text and the file it names.
    denied = PermissionError(13, "Permission denied", "/data/config.toml")
    assert Failure(Operation.SAVE_SETTINGS, denied).text() == (
        "Could not save Settings: Permission denied: /data/config.toml"
    )


def test_a_job_that_raises_once_cancelled_is_cancelled_not_failed(qtbot):
    runner = TaskRunner()
    outcome: list[str] = []
    started = threading.Event()

    def work(state):
        started.set()
        while not state.cancelled():
            time.sleep(0.01)
        raise ConnectionError("the stream was closed")  # what stopping a download or a stream raises

    runner.run(
        "fetch",
        work,
        on_failure=lambda f: outcome.append("failed"),
        on_cancelled=lambda: outcome.append("cancelled"),
    )
    assert started.wait(5)
    runner.cancel("fetch")
    assert runner.wait_idle(5000)
    assert outcome == ["cancelled"]


def test_a_failure_nobody_handles_reaches_the_runners_signal(qtbot):
    runner = TaskRunner()
    with qtbot.waitSignal(runner.unhandled_failure, timeout=5000) as blocker:
        runner.run("rename", lambda state: 1 / 0, operation=Operation.RENAME_CONVERSATION)
    failure = blocker.args[0]
    assert isinstance(failure.error, ZeroDivisionError)
    assert failure.text() == "Could not rename the conversation: ZeroDivisionError: division by zero"
    assert runner.wait_idle(5000)


def test_jobs_sharing_a_lock_run_one_at_a_time(qtbot):
    runner = TaskRunner(max_threads=4)
    inside = []
    overlaps = []

    def writer(state):
        inside.append(1)
        if len(inside) > 1:
            overlaps.append(True)
        time.sleep(0.05)
        inside.pop()

    for i in range(4):
        runner.run(f"w{i}", writer, lock="kb", exclusive=False)
    assert runner.wait_idle(5000)
    assert overlaps == []
    runner.shutdown()


def test_a_job_whose_work_returned_is_busy_but_no_longer_working(qtbot):
    # Its outcome waits in the UI thread's queue until events are processed: closing the window
    # then must not ask "Stop indexing and quit?" about work that has already ended.
    runner = TaskRunner()
    job = runner.run("add", lambda state: 42)
    deadline = time.monotonic() + 5
    while not job.returned and time.monotonic() < deadline:
        time.sleep(0.01)  # no event processing: the outcome stays queued
    assert job.returned
    assert runner.is_busy("add") and not runner.is_working("add")
    assert runner.wait_idle(5000)
    assert not runner.is_busy("add")


def test_shutdown_also_ends_the_jobs_its_delivered_results_start(qtbot):
    # A load that finishes during shutdown starts the first sync from its callback: that job
    # must end before the window goes, never report to a deleted one.
    runner = TaskRunner()
    second: list[str] = []

    def slow_then_done(state):
        time.sleep(0.2)
        return "loaded"

    def follow_up(state):
        for _ in range(200):  # a sync: stops at its next check once cancelled
            check(state)
            time.sleep(0.05)
        return "synced"

    def start_follow_up(_result):
        runner.run(
            "sync",
            follow_up,
            on_success=lambda r: second.append(r),
            on_cancelled=lambda: second.append("cancelled"),
        )

    runner.run("load", slow_then_done, on_success=start_follow_up)
    time.sleep(0.3)  # the load's result is queued, not yet delivered
    runner.shutdown()
    assert runner.active() == [] and second == ["cancelled"]
