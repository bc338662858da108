"""installer/install.sh: argument parsing, the commands it would run, and the launcher it writes.

Runs the script with --dry-run in a throw-away HOME: no virtual environment or download happens,
but the .desktop launcher is really written, so its content can be checked.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "installer" / "install.sh"

pytestmark = pytest.mark.skipif(
    shutil.which("bash") is None or not sys.platform.startswith("linux"), reason="needs bash on Linux"
)


def run(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KDESK_", "XDG_"))}
    env["HOME"] = str(home)
    return subprocess.run(
        ["bash", str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=60, check=False
    )


def test_help_lists_the_options(tmp_path):
    r = run(tmp_path, "--help")
    assert r.returncode == 0
    for opt in ("--cuda", "--with-models", "--no-torch-index", "--dry-run", "--prefix", "--no-system-libs"):
        assert opt in r.stdout


def test_unknown_option_and_missing_value_are_usage_errors(tmp_path):
    r = run(tmp_path, "--frobnicate")
    assert r.returncode == 2 and "unknown option '--frobnicate'" in r.stderr
    r = run(tmp_path, "--prefix")
    assert r.returncode == 2 and "--prefix needs a value" in r.stderr


def test_default_install_uses_the_cpu_torch_index_and_writes_a_launcher(tmp_path):
    r = run(tmp_path, "--dry-run")
    assert r.returncode == 0, r.stderr
    prefix = tmp_path / ".local" / "share" / "knowledge-desk"
    lines = r.stdout.splitlines()
    assert f"+ python3 -m venv {prefix}/venv" in lines
    assert any(
        line.endswith("-m pip install torch --index-url https://download.pytorch.org/whl/cpu")
        for line in lines
    )
    assert any(line.endswith(f"-m pip install {ROOT}") for line in lines)
    assert not any("models fetch" in line for line in lines)

    desktop = tmp_path / ".local" / "share" / "applications" / "knowledge-desk.desktop"
    text = desktop.read_text()
    assert "[Desktop Entry]" in text and "Name=Knowledge Desk" in text
    assert f'Exec="{prefix}/venv/bin/kdesk"' in text
    assert os.readlink(tmp_path / ".local" / "bin" / "kdesk") == f"{prefix}/venv/bin/kdesk"


def test_cuda_and_local_torch_flags_change_only_the_torch_step(tmp_path):
    cuda = run(tmp_path, "--dry-run", "--cuda", "--no-launcher").stdout
    torch_line = next(line for line in cuda.splitlines() if "install torch" in line)
    assert "--index-url" not in torch_line

    local = run(
        tmp_path, "--dry-run", "--no-torch-index", "--torch-spec", "torch==2.13.0", "--no-launcher"
    ).stdout
    torch_line = next(line for line in local.splitlines() if "install torch" in line)
    assert torch_line.endswith("-m pip install torch==2.13.0")


def test_with_models_prefix_and_no_launcher(tmp_path):
    prefix = tmp_path / "apps" / "kd"
    r = run(tmp_path, "--dry-run", "--with-models", "--no-launcher", "--prefix", str(prefix), "--editable")
    assert r.returncode == 0, r.stderr
    assert f"+ {prefix}/venv/bin/kdesk models fetch all" in r.stdout.splitlines()
    assert any(line.endswith(f"-m pip install -e {ROOT}") for line in r.stdout.splitlines())
    assert not (tmp_path / ".local" / "share" / "applications").exists()


def test_ps1_installer_offers_the_same_choices():
    text = (ROOT / "installer" / "install.ps1").read_text(encoding="utf-8")
    for word in (
        "$Cuda",
        "$WithModels",
        "$NoTorchIndex",
        "WScript.Shell",
        "download.pytorch.org/whl/cpu",
        'models", "fetch", "all',
    ):
        assert word in text


# --- the window's system libraries (desktop_app/core/qt_xcb_libs.txt) ------------------------------
XCB_LIST = ROOT / "desktop_app" / "core" / "qt_xcb_libs.txt"
TOOLS = ("bash", "dirname", "uname", "date", "sed", "grep", "mkdir", "ln", "cat", "chmod")


def _listed_sonames() -> list[str]:
    lines = (line.split("#", 1)[0].split() for line in XCB_LIST.read_text().splitlines())
    return [fields[0] for fields in lines if fields]


def fake_system(tmp_path: Path, *, missing: set[str], manager: str, uid: int) -> Path:
    """A PATH of only the tools install.sh uses, with an `ldconfig -p` that lacks `missing`, a
    package manager that must not run (a dry run only prints it) and an `id -u` of `uid`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in TOOLS:
        (bin_dir / tool).symlink_to(shutil.which(tool))
    cache = "".join(f"\t{s} (libc6,x86-64) => /usr/lib/{s}\\n" for s in _listed_sonames() if s not in missing)
    scripts = {
        "ldconfig": f'#!/bin/sh\nprintf "{len(_listed_sonames())} libs found in cache\\n{cache}"\n',
        manager: "#!/bin/sh\necho 'the package manager ran' >&2\nexit 1\n",
        "id": f"#!/bin/sh\necho {uid}\n",
    }
    for name, text in scripts.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return bin_dir


def run_on(bin_dir: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {"HOME": str(home), "PATH": str(bin_dir)}
    return subprocess.run(
        [str(bin_dir / "bash"), str(SCRIPT), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_missing_window_libraries_are_installed_from_the_shared_list_as_root(tmp_path):
    bin_dir = fake_system(
        tmp_path, missing={"libxcb-icccm.so.4", "libxcb-keysyms.so.1"}, manager="apt-get", uid=0
    )
    r = run_on(bin_dir, tmp_path, "--dry-run", "--no-launcher")
    assert r.returncode == 0, r.stderr
    assert "missing: libxcb-icccm.so.4 libxcb-keysyms.so.1" in r.stderr
    lines = r.stdout.splitlines()
    assert "+ apt-get install -y --no-install-recommends libxcb-icccm4 libxcb-keysyms1" in lines
    assert lines.index("+ apt-get update -qq") < lines.index(
        "+ apt-get install -y --no-install-recommends libxcb-icccm4 libxcb-keysyms1"
    )


def test_pacman_gets_its_own_package_names_once(tmp_path):
    missing = {"libxcb-icccm.so.4", "libxcb-randr.so.0", "libxcb-shm.so.0"}
    bin_dir = fake_system(tmp_path, missing=missing, manager="pacman", uid=0)
    r = run_on(bin_dir, tmp_path, "--dry-run", "--no-launcher")
    assert r.returncode == 0, r.stderr
    assert "+ pacman -S --needed --noconfirm xcb-util-wm libxcb" in r.stdout.splitlines()


def test_without_root_or_a_terminal_the_exact_command_is_printed(tmp_path):
    bin_dir = fake_system(tmp_path, missing={"libxcb-cursor.so.0"}, manager="dnf", uid=1000)
    r = run_on(bin_dir, tmp_path, "--dry-run", "--no-launcher")
    assert r.returncode == 0, r.stderr
    assert "sudo dnf install -y xcb-util-cursor" in r.stderr
    assert "dnf" not in r.stdout  # printed for the user, not run


def test_no_system_libs_only_prints_and_all_present_says_so(tmp_path):
    bin_dir = fake_system(tmp_path, missing={"libxcb-keysyms.so.1"}, manager="apt-get", uid=0)
    r = run_on(bin_dir, tmp_path, "--dry-run", "--no-launcher", "--no-system-libs")
    assert "apt-get" not in r.stdout
    assert "apt-get install -y --no-install-recommends libxcb-keysyms1" in r.stderr

    (tmp_path / "all").mkdir()
    bin_dir = fake_system(tmp_path / "all", missing=set(), manager="apt-get", uid=0)
    r = run_on(bin_dir, tmp_path, "--dry-run", "--no-launcher")
    assert "system libraries for the window: all present" in r.stderr
    assert "apt-get" not in r.stdout
