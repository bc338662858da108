"""`kdesk --self-test`: proves an installation (or a PyInstaller bundle) works end to end.

In a throw-away data folder it indexes a sample document with the bundled embedder, searches it,
answers a question extractively with citations, and opens the main window (offscreen when there is
no display). Prints each step on stderr and returns 0 only if every step passed.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SAMPLE_NAME = "kea.md"
SAMPLE = """# The kea

The kea (Nestor notabilis) is a large parrot found in the forested and alpine regions of the South Island of New Zealand. It is olive-green with a brilliant orange under its wings.

## Food

Kea are omnivores. They eat roots, leaves, berries, nectar and insects, and sometimes carrion.

## Behaviour

Kea are known for their intelligence and curiosity, and they solve logical puzzles in experiments.
"""
QUESTION = "Where is the kea found?"
EXPECTED = "South Island"


def _step(name: str, fn: Callable[[], Any], log: list[str]) -> Any:
    t = time.perf_counter()
    result = fn()
    line = f"self-test: {name} ({time.perf_counter() - t:.1f} s)"
    log.append(line)
    print(line, file=sys.stderr, flush=True)
    return result


def _core(data_dir: Path, log: list[str]) -> tuple[Any, str]:
    """Index, search and answer without any GUI; returns (embedder, answer)."""
    from desktop_app.core.ask.budget import ContextBlock
    from desktop_app.core.ask.extractive import extractive_answer
    from desktop_app.core.config import Config
    from desktop_app.core.desk import Desk

    src = data_dir.parent / SAMPLE_NAME
    src.write_text(SAMPLE, encoding="utf-8")
    desk = Desk(data_dir, Config())
    kb = desk.kb
    try:
        report = _step("indexed a sample document", lambda: kb.add([src]), log)
        if report.failed or not (report.added or report.updated):
            failed = [f"{name}: {why}" for name, why in report.failed]
            raise RuntimeError(f"indexing failed: {failed or 'nothing added'}")
        hits = _step("searched it", lambda: kb.search(QUESTION, top_k=3), log)
        if not hits:
            raise RuntimeError("search returned no hits")
        blocks = [ContextBlock(i + 1, h, h.text) for i, h in enumerate(hits)]
        extract = extractive_answer(QUESTION, blocks)
        if EXPECTED not in extract.text or not extract.cited:
            raise RuntimeError(f"the extractive answer misses {EXPECTED!r}: {extract.text!r}")
        answer = " ".join(line.strip() for line in extract.text.splitlines()[1:] if line.strip())
        print(f"self-test: Q: {QUESTION}\nself-test: A: {answer}", file=sys.stderr)
        return kb.embedder, extract.text
    finally:
        desk.close()


def _gui(data_dir: Path, embedder: Any, log: list[str]) -> bool:
    """Open and close the main window; False (skipped) when Qt or the GUI is not installed."""
    if importlib.util.find_spec("PySide6") is None or importlib.util.find_spec("desktop_app.gui.app") is None:
        print("self-test: GUI skipped (PySide6 or desktop_app.gui not installed)", file=sys.stderr)
        return False
    if (
        not os.environ.get("DISPLAY")
        and not os.environ.get("WAYLAND_DISPLAY")
        and sys.platform.startswith("linux")
    ):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from desktop_app.core.system_libs import display_problem, xcb_problem

    problem = display_problem() or xcb_problem()  # Qt would abort the whole process (a dead DISPLAY...)
    if problem is not None:
        raise RuntimeError(str(problem))
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from desktop_app.core.config import Config
    from desktop_app.gui.app import create_window

    app = QApplication.instance() or QApplication(sys.argv[:1])

    def open_window() -> None:
        window = create_window(data_dir, Config(), embedder=embedder, load=False)
        window.show()
        app.processEvents()
        # On a real display the window must also be mapped and drawn, not only marked visible.
        if not window.isVisible() or not QTest.qWaitForWindowExposed(window, 10_000):
            raise RuntimeError(f"the main window did not show (Qt platform {app.platformName()})")
        window.close()
        window.deleteLater()
        app.processEvents()

    _step(f"opened and closed the main window (Qt platform {app.platformName()})", open_window, log)
    return True


def run_self_test() -> int:
    """0 when an index/search/extractive answer round trip and the main window all work."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    start = time.perf_counter()
    log: list[str] = []
    with tempfile.TemporaryDirectory(prefix="kdesk-selftest-") as tmp:
        data_dir = Path(tmp) / "data"
        data_dir.mkdir()
        try:
            embedder, _answer = _core(data_dir, log)
            _gui(data_dir, embedder, log)
        except Exception as exc:  # noqa: BLE001 - the point is to report any failure readably
            print(f"self-test FAILED: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
    print(f"self-test passed in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(run_self_test())
