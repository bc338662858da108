"""Few torch threads for short work (a query, one photo), safely shared between Python threads.

torch's intra-op thread count is process-wide. On the 2-core machines we measure on, a short
forward pass on two threads is at best ~1.3x faster when idle and 10-30x slower whenever anything
else keeps the second core busy (OpenMP threads spin-wait for each other). ``torch_threads(n)``
runs a block on ``n`` threads, or on the fewest any caller inside asked for when several overlap
(an `ask` query next to a photo), and the previous setting comes back when the last one leaves,
so overlapping callers never restore each other's values.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_wanted: list[int] = []  # the thread count each caller inside asked for
_saved = 1  # the setting before the first caller came in


def _set(n: int) -> None:
    import torch

    if torch.get_num_threads() != n:
        torch.set_num_threads(n)


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run a block on ``n`` torch threads (fewer while another caller inside asked for fewer)."""
    global _saved
    import torch

    with _lock:
        if not _wanted:
            _saved = torch.get_num_threads()
        _wanted.append(n)
        _set(min(_wanted))
    try:
        yield
    finally:
        with _lock:
            _wanted.remove(n)
            _set(min(_wanted) if _wanted else _saved)


def one_torch_thread() -> contextlib.AbstractContextManager[None]:
    """Run a block on one torch thread (see the module docstring)."""
    return torch_threads(1)
