"""Run `kdesk` and SIGKILL it at the n-th call of one function, as the kernel's OOM killer or a power
cut would: ``python kill_at.py MODULE:QUALNAME N [kdesk arguments...]``. A stand-in for SQLite's
crash tests: the kill lands at a named stage (parsing, embedding, writing the store, writing the
manifest, switching the index pointer), not at a random time. Test code only: the product has no
hook for it."""

from __future__ import annotations

import functools
import importlib
import os
import signal
import sys


def main() -> int:
    target, n, args = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    module, qualname = target.split(":")
    owner = importlib.import_module(module)
    *path, name = qualname.split(".")
    for part in path:
        owner = getattr(owner, part)
    original = getattr(owner, name)
    calls = [0]

    @functools.wraps(original)
    def killing(*a, **kw):
        calls[0] += 1
        if calls[0] >= n:
            os.kill(os.getpid(), signal.SIGKILL)
        return original(*a, **kw)

    setattr(owner, name, killing)
    from desktop_app.cli.main import main as kdesk

    return kdesk(args)


if __name__ == "__main__":
    sys.exit(main())
