"""core/system_libs.py and its list qt_xcb_libs.txt: the system libraries Qt's X11 platform needs."""

from __future__ import annotations

import importlib.util
import struct
import sys
from pathlib import Path

import pytest

from desktop_app.core.system_libs import (
    MANAGERS,
    install_command,
    package_manager,
    unloadable_libraries,
    uses_xcb,
    xcb_libraries,
    xcb_plugin,
    xcb_problem,
)

# Libraries every Linux has (glibc, the C++ runtime) and Qt's own, which the wheel ships.
_NOT_SYSTEM = (
    "libc.so",
    "libm.so",
    "libdl.so",
    "libpthread.so",
    "librt.so",
    "libstdc++",
    "libgcc_s",
    "ld-linux",
)


def _needed(path: Path) -> list[str]:
    """The DT_NEEDED entries of a 64-bit little-endian ELF file (what `objdump -p` lists)."""
    data = path.read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, path
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    dynamic = next(s for s in sections if s[1] == 6)  # SHT_DYNAMIC
    strtab = sections[dynamic[6]]  # sh_link: its string table
    names = []
    for off in range(dynamic[4], dynamic[4] + dynamic[5], 16):
        tag, value = struct.unpack_from("<qQ", data, off)
        if tag == 0:
            break
        if tag == 1:  # DT_NEEDED
            start = strtab[4] + value
            names.append(data[start : data.index(b"\0", start)].decode())
    return names


def _qt_dir() -> Path | None:
    spec = importlib.util.find_spec("PySide6")
    qt = Path(next(iter(spec.submodule_search_locations))) / "Qt" if spec else None
    return qt if qt and (qt / "plugins" / "platforms" / "libqxcb.so").is_file() else None


@pytest.mark.skipif(_qt_dir() is None, reason="this PySide6 has no xcb plugin (not Linux)")
def test_the_list_covers_every_system_library_the_xcb_plugin_links():
    qt = _qt_dir()
    files = [qt / "plugins" / "platforms" / "libqxcb.so", *qt.glob("lib/libQt6XcbQpa.so.*")]
    files += sorted((qt / "plugins" / "xcbglintegrations").glob("*.so"))
    files += [qt / "lib" / "libQt6Gui.so.6", qt / "lib" / "libQt6DBus.so.6"]
    needed = {
        n for f in files for n in _needed(f) if not n.startswith("libQt6") and not n.startswith(_NOT_SYSTEM)
    }
    listed = {lib.soname for lib in xcb_libraries()}
    assert needed - listed == set(), "add these to desktop_app/core/qt_xcb_libs.txt"
    assert {"libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1"} <= needed


def test_each_listed_library_names_its_package_for_apt_dnf_and_pacman():
    libs = xcb_libraries()
    assert len(libs) == len({lib.soname for lib in libs})
    for lib in libs:
        assert set(lib.packages) == set(MANAGERS) and all(lib.packages.values()), lib


def test_install_command_names_each_package_once_with_sudo_unless_root():
    missing = ["libxcb-icccm.so.4", "libxcb-keysyms.so.1"]
    assert (
        install_command(missing, "apt-get", root=False)
        == "sudo apt-get install libxcb-icccm4 libxcb-keysyms1"
    )
    assert install_command(missing, "apt-get", root=True) == "apt-get install libxcb-icccm4 libxcb-keysyms1"
    assert install_command(missing, "pacman", root=True) == "pacman -S --needed xcb-util-wm xcb-util-keysyms"
    # Several sonames of one package: the package once.
    assert (
        install_command(["libxcb-randr.so.0", "libxcb-shm.so.0"], "dnf", root=False)
        == "sudo dnf install libxcb"
    )
    # No known package manager: the command of each family.
    every = install_command(["libxcb-cursor.so.0"], None, root=True)
    assert every == (
        "apt-get install libxcb-cursor0 (Debian/Ubuntu); dnf install xcb-util-cursor (Fedora); "
        "pacman -S --needed xcb-util-cursor (Arch)"
    )
    assert install_command(["libunknown.so.1"], "apt-get") is None


def test_xcb_is_checked_only_when_qt_will_use_it(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    assert uses_xcb({"DISPLAY": ":0"})
    assert uses_xcb({"DISPLAY": ":0", "QT_QPA_PLATFORM": "xcb"})
    assert uses_xcb({"DISPLAY": ":0", "QT_QPA_PLATFORM": "xcb;wayland"})
    assert not uses_xcb({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"})
    assert not uses_xcb({"DISPLAY": ":0", "QT_QPA_PLATFORM": "wayland;xcb"})
    assert not uses_xcb({})  # no display: Qt fails either way, and says why itself
    assert not uses_xcb({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland"})
    monkeypatch.setattr(sys, "platform", "darwin")
    assert not uses_xcb({"DISPLAY": ":0"})


@pytest.mark.skipif(_qt_dir() is None, reason="this PySide6 has no xcb plugin (not Linux)")
def test_the_installed_plugin_loads_and_the_check_passes():
    plugin = xcb_plugin({})
    assert plugin is not None and plugin.name == "libqxcb.so"
    missing = unloadable_libraries(plugin)
    assert missing == [], (
        f"the window cannot start here; install: {install_command(missing, package_manager())}"
    )
    assert xcb_problem({"DISPLAY": ":0", "QT_QPA_PLATFORM": "xcb"}) is None


def test_a_plugin_that_does_not_exist_is_left_to_qt(tmp_path):
    assert unloadable_libraries(tmp_path / "libqxcb.so") == []


# -- issue 44: no display ---------------------------------------------------------------------------
def test_no_display_is_said_only_where_qt_would_need_one(monkeypatch):
    from desktop_app.core.system_libs import NO_DISPLAY, display_problem

    monkeypatch.setattr(sys, "platform", "linux")
    for env in ({}, {"QT_QPA_PLATFORM": "xcb"}, {"QT_QPA_PLATFORM": "xcb", "WAYLAND_DISPLAY": "wayland-0"}):
        problem = display_problem(env)
        assert problem is not None and problem.code == NO_DISPLAY, env
    for platform in (
        "offscreen",
        "minimal",
        "vnc:size=800x600",
        "eglfs",
        "linuxfb",
        "wayland",
        "wayland;xcb",
    ):
        assert display_problem({"QT_QPA_PLATFORM": platform}) is None, platform  # needs no X display
    assert display_problem({"WAYLAND_DISPLAY": "wayland-0"}) is None
    assert display_problem({"DISPLAY": "/private/tmp/launchd-1/org.xquartz:0"}) is None  # a path: Qt says
    for other in ("darwin", "win32"):
        monkeypatch.setattr(sys, "platform", other)
        assert display_problem({}) is None


def test_a_display_where_no_x_server_answers_is_found(monkeypatch, tmp_path):
    import os
    import socket

    from desktop_app.core.system_libs import NO_X_SERVER, display_problem, x_server_answers

    monkeypatch.setattr(sys, "platform", "linux")
    number = next(n for n in range(300 + os.getpid() % 500, 900) if not x_server_answers(f":{n}"))
    problem = display_problem({"DISPLAY": f":{number}"})
    assert problem is not None and problem.code == NO_X_SERVER and f"DISPLAY=:{number}" in str(problem)
    # A local server (the abstract socket Xorg, Xwayland and Xvfb listen on), then one over TCP
    # (`ssh -X` forwards localhost:6010): both answer.
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(f"\0/tmp/.X11-unix/X{number}")
        server.listen()
        assert display_problem({"DISPLAY": f":{number}.0"}) is None
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        tcp = server.getsockname()[1] - 6000
        assert tcp > 0 and display_problem({"DISPLAY": f"127.0.0.1:{tcp}.0"}) is None
    assert x_server_answers(f"127.0.0.1:{tcp}") is False


def test_kdesk_without_a_display_says_so_in_one_line_and_exits_1(tmp_path):
    import os
    import subprocess

    from desktop_app.core.system_libs import x_server_answers

    dead = next(n for n in range(900, 1500) if not x_server_answers(f":{n}"))
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    for extra, words in (({}, "no display found (DISPLAY"), ({"DISPLAY": f":{dead}"}, f"DISPLAY=:{dead}")):
        res = subprocess.run(
            [sys.executable, "-m", "desktop_app.cli.main", "--data-dir", str(tmp_path / "data")],
            env=env | extra,
            capture_output=True,
            text=True,
            timeout=120,
        )
        lines = res.stderr.splitlines()
        assert res.returncode == 1 and res.stdout == "", res.stderr
        assert len(lines) == 1 and lines[0].startswith("error: no display found") and words in lines[0]
        assert "`kdesk --help`" in lines[0] and "Qt platform plugin" not in res.stderr
