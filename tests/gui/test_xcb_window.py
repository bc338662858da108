"""The real window on Qt's X11 (xcb) platform, under an Xvfb server this module starts.

Every other GUI test runs Qt's offscreen platform, which needs none of the xcb libraries a fresh
desktop may lack: here `kdesk` itself starts on xcb, so the system libraries of
desktop_app/core/qt_xcb_libs.txt (which .ci/run installs from) are what is tested. In CI (CI=true)
a missing Xvfb fails these tests instead of skipping them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_app.core.system_libs import package_manager

ROOT = Path(__file__).resolve().parents[2]
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11 (xcb) is Linux's")


@pytest.fixture(scope="module")
def xvfb() -> Iterator[str]:
    """An Xvfb server of its own; yields its DISPLAY (":N")."""
    binary = shutil.which("Xvfb")
    if binary is None:
        if IN_CI:
            pytest.fail("Xvfb is not installed: .ci/run installs it (apt-get install xvfb)")
        pytest.skip("Xvfb is not installed (apt-get install xvfb)")
    read, write = os.pipe()
    # -displayfd: the server picks a free display and writes its number once it accepts clients.
    server = subprocess.Popen(
        [binary, "-displayfd", str(write), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    with os.fdopen(read) as pipe:
        number = pipe.readline().strip()
    try:
        assert number, f"Xvfb did not start (exit {server.poll()})"
        yield f":{number}"
    finally:
        server.terminate()
        server.wait(timeout=10)


def _env(display: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WAYLAND_", "QT_QPA"))}
    env.update(DISPLAY=display, QT_QPA_PLATFORM="xcb", PYTHONPATH=str(ROOT), **extra)
    return env


def _kdesk(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "desktop_app.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
        check=False,
    )


def test_kdesk_opens_the_real_window_on_xcb(xvfb):
    r = _kdesk("--self-test", env=_env(xvfb))
    assert r.returncode == 0, r.stderr
    assert "opened and closed the main window (Qt platform xcb)" in r.stderr


def test_a_missing_xcb_library_gives_the_install_command_not_an_abort(xvfb, tmp_path):
    # A real loader failure: an unusable libxcb-icccm.so.4 found first on LD_LIBRARY_PATH stops
    # Qt's xcb plugin from loading, as a missing one does on a fresh desktop.
    shadow = tmp_path / "lib"
    shadow.mkdir()
    (shadow / "libxcb-icccm.so.4").write_bytes(b"")
    env = _env(xvfb, LD_LIBRARY_PATH=str(shadow))
    plain_qt = subprocess.run(
        [sys.executable, "-c", "from PySide6.QtWidgets import QApplication; QApplication([])"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert plain_qt.returncode == -6, plain_qt.stderr  # SIGABRT: what a user got before (exit 134)
    assert "no Qt platform plugin could be initialized" in plain_qt.stderr

    r = _kdesk("--data-dir", str(tmp_path / "data"), env=env)
    assert r.returncode == 1, r.stderr
    assert "Qt platform plugin" not in r.stderr
    assert "needs system libraries that are missing: libxcb-icccm.so.4" in r.stderr
    manager = package_manager()
    expected = {"apt-get": "libxcb-icccm4", "dnf": "xcb-util-wm", "pacman": "xcb-util-wm"}
    if manager is not None:
        assert f"{manager} " in r.stderr and expected[manager] in r.stderr, r.stderr

    selftest = _kdesk("--self-test", env=env)  # the self-test says the same instead of aborting
    assert selftest.returncode == 1
    assert "self-test FAILED" in selftest.stderr and "libxcb-icccm.so.4" in selftest.stderr
