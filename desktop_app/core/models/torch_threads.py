"""One torch thread for short work (a query, one photo), safely shared between Python threads.

torch's intra-op thread count is process-wide. On the 2-core machines we measure on, a short
forward pass on two threads is at best ~1.3x faster when idle and 10-30x slower whenever anything
else keeps the second core busy (OpenMP threads spin-wait for each other). ``one_torch_thread``
drops to one thread while at least one caller is inside it and restores the previous setting when
the last one leaves, so overlapping callers never restore each other's values.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_inside = 0
_saved = 1


@contextlib.contextmanager
def one_torch_thread() -> Iterator[None]:
    global _inside, _saved
    import torch

    with _lock:
        if _inside == 0:
            _saved = torch.get_num_threads()
            if _saved != 1:
                torch.set_num_threads(1)
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0 and _saved != 1:
                torch.set_num_threads(_saved)
