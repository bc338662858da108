"""The one task runner: work on the pool, results on the UI thread, cancellation, errors as text."""

from __future__ import annotations

import threading
import time

from desktop_app.core.tasks import check
from desktop_app.gui.tasks import TaskRunner


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


def test_exceptions_become_readable_messages(qtbot):
    runner = TaskRunner()
    messages: list[str] = []

    def work(state):
        raise ValueError("encrypted PDF: a password is required")

    runner.run("boom", work, on_failure=messages.append)
    assert runner.wait_idle(5000)
    assert messages == ["encrypted PDF: a password is required"]
    assert not runner.is_busy()


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
