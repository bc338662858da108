"""The system libraries the window needs on X11, and what to tell the user when one is missing.

PySide6 >= 6.5's xcb platform plugin links against xcb-util libraries (libxcb-cursor0,
libxcb-icccm4, ...) that a fresh desktop may lack; Qt then aborts (exit 134) with "no Qt platform
plugin could be initialized", naming no package. ``xcb_problem()`` runs before any QApplication:
it asks the dynamic loader (dlopen, then ``ldd``) which of the plugin's libraries cannot be loaded and returns a
message naming them and the exact install command, built from ``qt_xcb_libs.txt``: the one list
that installer/install.sh and .ci/run install from too. Never imports Qt.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from desktop_app.core.messages import Message, define, message

LIST_FILE = Path(__file__).with_name("qt_xcb_libs.txt")
MANAGERS = ("apt-get", "dnf", "pacman")  # the columns of LIST_FILE after the soname
_INSTALL = {"apt-get": "apt-get install", "dnf": "dnf install", "pacman": "pacman -S --needed"}
_FAMILY = {"apt-get": "Debian/Ubuntu", "dnf": "Fedora", "pacman": "Arch"}
# For tests and diagnosis only: check this plugin file instead of PySide6's libqxcb.so.
PLUGIN_ENV = "KDESK_QT_XCB_PLUGIN"

# --- the window cannot start on X11 (system_libs.py) ---
XCB_MISSING = define(
    "window.xcb_missing",
    "the window cannot start: Qt's X11 platform (xcb) needs system libraries that are missing: "
    "{libraries}. Install them with: {command}",
)
XCB_MISSING_UNKNOWN = define(
    "window.xcb_missing_unknown",
    "the window cannot start: Qt's X11 platform (xcb) needs system libraries that are missing: "
    "{libraries}. Install the packages that provide them, then start Knowledge Desk again.",
)


@dataclass(frozen=True)
class SystemLib:
    """One library of the list: its soname and the package that provides it, per package manager."""

    soname: str
    packages: Mapping[str, str]


def xcb_libraries(path: Path = LIST_FILE) -> list[SystemLib]:
    """The libraries Qt's xcb platform loads, as listed in ``qt_xcb_libs.txt``."""
    libs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split("#", 1)[0].split()
        if fields:
            libs.append(SystemLib(fields[0], dict(zip(MANAGERS, fields[1:], strict=True))))
    return libs


def uses_xcb(env: Mapping[str, str] = os.environ) -> bool:
    """Whether Qt will open its windows through the xcb plugin: Linux, an X display, and
    QT_QPA_PLATFORM unset (outside a Wayland session) or naming xcb first."""
    if not sys.platform.startswith("linux") or not env.get("DISPLAY"):
        return False
    platform = env.get("QT_QPA_PLATFORM", "").strip()
    if not platform:  # Qt picks Wayland on a Wayland session, else xcb
        return not (env.get("WAYLAND_DISPLAY") and env.get("XDG_SESSION_TYPE") == "wayland")
    return re.split(r"[;:]", platform, maxsplit=1)[0] == "xcb"


def xcb_plugin(env: Mapping[str, str] = os.environ) -> Path | None:
    """PySide6's xcb platform plugin, or None when this PySide6 has none (then Qt reports it)."""
    override = env.get(PLUGIN_ENV)
    if override:
        return Path(override)
    spec = importlib.util.find_spec("PySide6")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        plugin = Path(folder) / "Qt" / "plugins" / "platforms" / "libqxcb.so"
        if plugin.is_file():
            return plugin
    return None


def unloadable_libraries(plugin: Path) -> list[str]:
    """The sonames the dynamic loader cannot load for ``plugin`` (missing, or a broken file that
    shadows one), in the loader's order; [] when all load or the loader cannot tell."""
    import ctypes

    try:  # the usual case: everything loads (~8 ms), and QApplication then reuses it (~10 ms less)
        ctypes.CDLL(str(plugin), mode=os.RTLD_LAZY)
        return []
    except OSError as exc:  # "libxcb-icccm.so.4: cannot open shared object file: ..."
        first = Path(str(exc).split(":", 1)[0]).name
    if first == plugin.name:  # the plugin itself is unreadable: Qt says so better than we can
        return []
    import subprocess  # only on this path: start-up stays cheap when everything loads

    found: list[str] = []
    ldd = shutil.which("ldd")  # lists every missing library, not only the first
    if ldd:
        try:
            out = subprocess.run([ldd, str(plugin)], capture_output=True, text=True, timeout=10, check=False)
            found = re.findall(r"^\s*(\S+) => not found", out.stdout, re.MULTILINE)
        except (OSError, subprocess.SubprocessError):
            pass
    return list(dict.fromkeys(found)) or [first]


def package_manager() -> str | None:
    """The first of apt-get, dnf and pacman found on PATH."""
    return next((m for m in MANAGERS if shutil.which(m)), None)


def install_command(
    sonames: list[str], manager: str | None = None, *, root: bool | None = None
) -> str | None:
    """The command that installs the packages providing ``sonames`` (those the list knows), e.g.
    ``sudo apt-get install libxcb-icccm4 libxcb-keysyms1``; one per family when no package manager
    is known; None when the list knows none of them."""
    import shlex

    known = {lib.soname: lib for lib in xcb_libraries()}
    libs = [known[s] for s in sonames if s in known]
    if not libs:
        return None
    root = os.geteuid() == 0 if root is None and hasattr(os, "geteuid") else bool(root)
    sudo = "" if root else "sudo "

    def command(mgr: str) -> str:
        packages = dict.fromkeys(lib.packages[mgr] for lib in libs)
        return f"{sudo}{_INSTALL[mgr]} " + " ".join(shlex.quote(p) for p in packages)

    if manager in MANAGERS:
        return command(manager)
    return "; ".join(f"{command(m)} ({_FAMILY[m]})" for m in MANAGERS)


def xcb_problem(env: Mapping[str, str] = os.environ) -> Message | None:
    """Why the window cannot start on X11, or None (it can, or it does not use xcb). Run before
    creating the QApplication; costs one dlopen of the plugin, which Qt then reuses (start-up
    ~8 ms longer in all), and an ``ldd`` more (~15 ms) to list everything missing when one is."""
    if not uses_xcb(env):
        return None
    plugin = xcb_plugin(env)
    if plugin is None:
        return None
    missing = unloadable_libraries(plugin)
    if not missing:
        return None
    libraries = ", ".join(missing)
    command = install_command(missing, package_manager())
    if command is None:
        return message(XCB_MISSING_UNKNOWN, libraries=libraries)
    return message(XCB_MISSING, libraries=libraries, command=command)


# -- issue 44: no display (a terminal over SSH): said in one line before Qt aborts (exit 134)
NO_DISPLAY = define(
    "window.no_display",
    "no display found (DISPLAY and WAYLAND_DISPLAY are not set), so the window cannot open: start "
    "`kdesk` from a desktop session or with a display set (e.g. `ssh -X`); the commands need none: "
    "`kdesk --help`",
)
NO_X_SERVER = define(
    "window.no_x_server",
    "no display found: no X server answers at DISPLAY={display}, so the window cannot open: start "
    "`kdesk` from a desktop session or with a working display set; the commands need none: "
    "`kdesk --help`",
)
X_TIMEOUT_S = 1.0  # a remote X server (DISPLAY=host:0) that does not answer in this long would not for Qt


def display_problem(env: Mapping[str, str] = os.environ) -> Message | None:
    """Why the window has no display to open on, or None. Linux only (Windows and macOS always
    have one), and only where Qt would need one: QT_QPA_PLATFORM unset or naming xcb first (offscreen,
    minimal, vnc, eglfs, wayland... are Qt's own choice). Without DISPLAY and WAYLAND_DISPLAY Qt aborts
    with exit 134; with DISPLAY naming no X server too, so the server's socket is tried (a local
    connect, microseconds). An X server that answers but refuses us (Xauthority) is left to Qt."""
    if not sys.platform.startswith("linux"):
        return None
    platform = env.get("QT_QPA_PLATFORM", "").strip()
    first = re.split(r"[;:]", platform, maxsplit=1)[0] if platform else ""
    if first not in ("", "xcb"):
        return None
    display = env.get("DISPLAY", "").strip()
    wayland = not first and bool(env.get("WAYLAND_DISPLAY"))
    if not display:
        return None if wayland else message(NO_DISPLAY)
    if wayland and env.get("XDG_SESSION_TYPE") == "wayland":
        return None  # Qt opens its windows through Wayland there
    if x_server_answers(display) is False:
        return message(NO_X_SERVER, display=display)
    return None


def x_server_answers(display: str, timeout: float = X_TIMEOUT_S) -> bool | None:
    """Whether an X server accepts connections at ``display`` ([protocol/][host]:number[.screen]),
    tried as libxcb does: a local one at its abstract then its file socket (/tmp/.X11-unix/X<n>),
    then TCP port 6000 + n; None for a form this does not read (a socket path: then Qt says)."""
    import socket

    m = re.fullmatch(r"(?:(?P<proto>[a-z]+)/)?(?P<host>[^:/]*):(?P<num>\d+)(?:\.\d+)?", display)
    if m is None:
        return None
    proto, host, number = m["proto"], m["host"], int(m["num"])
    if host in ("", "unix") and proto in (None, "unix"):
        path = f"/tmp/.X11-unix/X{number}"
        for address in ("\0" + path, path):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(timeout)
                try:
                    sock.connect(address)
                    return True
                except OSError:
                    continue
        if host == "unix" or proto == "unix":
            return False
    try:
        socket.create_connection((host or "localhost", 6000 + number), timeout=timeout).close()
        return True
    except (OSError, OverflowError):  # OverflowError: a display number past the last port
        return False
