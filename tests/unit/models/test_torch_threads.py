"""torch_threads / one_torch_thread: overlapping callers get the fewest threads any of them asked for and
restore the previous setting once."""

from __future__ import annotations

import threading

import torch

from desktop_app.core.models.torch_threads import one_torch_thread, torch_threads


def test_overlapping_callers_restore_the_previous_thread_count():
    prev = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
        seen: dict[str, int] = {}

        def a():
            with one_torch_thread():
                seen["a"] = torch.get_num_threads()
                a_in.set()
                b_in.wait(5)
            a_out.set()

        def b():
            a_in.wait(5)
            with one_torch_thread():
                b_in.set()
                a_out.wait(5)  # a left first: b must still run on one thread
                seen["b"] = torch.get_num_threads()

        threads = [threading.Thread(target=a), threading.Thread(target=b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert seen == {"a": 1, "b": 1}
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(prev)


def test_a_caller_wanting_more_threads_never_lifts_one_that_wants_one():
    prev = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch_threads(2):  # e.g. the classifier with KDESK_VISION_THREADS=2
            assert torch.get_num_threads() == 2
            with one_torch_thread():  # an `ask` query meanwhile
                assert torch.get_num_threads() == 1
            assert torch.get_num_threads() == 2
        with one_torch_thread(), torch_threads(2):
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(prev)
