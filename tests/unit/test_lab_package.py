"""The lab (lab/: the benchmarks, their data sets, `kdesk bench`) is a package of its own: the app's
wheel and its PyInstaller bundle carry none of it, the lab's wheel carries its sets, and `kdesk`
finds `bench` through an entry point without importing the lab until the command runs."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "lab"


IGNORED = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")


def build_wheel(copy: Path, tmp_path: Path) -> zipfile.ZipFile:
    """Build the wheel `pip install` would install, from a copy of the sources (the build leaves
    build/ and *.egg-info behind), offline: no index, the installed setuptools."""
    pytest.importorskip("setuptools", reason="builds offline with the installed setuptools")
    out = tmp_path / "wheels"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-index", "--no-build-isolation", "-q"]
        + ["-w", str(out), str(copy)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = out.glob("*.whl")
    return zipfile.ZipFile(wheel)


def _copy_app_source(tmp_path: Path) -> Path:
    """The files the app's wheel is built from: pyproject.toml, README.md and desktop_app/."""
    src = tmp_path / "app"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / "desktop_app", src / "desktop_app", ignore=IGNORED)
    return src


def test_the_app_wheel_carries_no_benchmark_code_or_set(tmp_path):
    wheel = build_wheel(_copy_app_source(tmp_path), tmp_path)
    names = wheel.namelist()
    assert "desktop_app/cli/main.py" in names and "desktop_app/core/desk.py" in names  # the app is there
    lab = [n for n in names if n.startswith("kdesk_lab/") or "/bench/" in n or n.endswith("/bench.py")]
    assert not lab, lab
    sets = [n for n in names if n.endswith(".jsonl")]
    assert not sets, sets
    (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    assert "kdesk.commands" not in wheel.read(entry_points).decode()  # the app adds no command to itself


def test_the_lab_wheel_carries_its_sets_and_registers_bench(tmp_path):
    shutil.copytree(LAB, tmp_path / "lab", ignore=IGNORED)
    wheel = build_wheel(tmp_path / "lab", tmp_path)
    names = set(wheel.namelist())
    sets = {f"kdesk_lab/{p.name}" for p in (LAB / "kdesk_lab").iterdir() if p.suffix in (".json", ".jsonl")}
    assert len(sets) >= 7 and sets <= names, sets - names
    assert "kdesk_lab/cli.py" in names and "kdesk_lab/retrieval.py" in names
    assert not [n for n in names if n.startswith("desktop_app/")]  # the app stays the app's
    (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    text = wheel.read(entry_points).decode()
    assert "[kdesk.commands]" in text and "bench = kdesk_lab.cli:register" in text
    (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    assert "Requires-Dist: knowledge-desk" in wheel.read(metadata).decode()


def test_the_app_package_holds_no_benchmark_module_or_set():
    """collect_submodules/collect_data_files("desktop_app") in the spec take the whole package."""
    app = ROOT / "desktop_app"
    assert not (app / "bench").exists() and not (app / "cli" / "bench.py").exists()
    assert not list(app.rglob("*.jsonl"))


def test_the_pyinstaller_spec_names_no_lab_module():
    spec = (ROOT / "installer" / "kdesk.spec").read_text(encoding="utf-8")
    tree = ast.parse(spec)
    named = [  # every package a collect_*/copy_metadata call or hiddenimports names
        node.value
        for call in ast.walk(tree)
        if isinstance(call, ast.Call)
        for node in ast.walk(call)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]
    assert not [n for n in named if n.startswith("kdesk_lab") or "bench" in n]
    excludes = next(
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "excludes" for t in node.targets)
    )
    assert "kdesk_lab" in [e.value for e in excludes.elts]  # even where the lab is installed


def _kdesk_in_process(script: str, env_path: list[Path] | None = None) -> dict:
    """Run `script` (which prints one JSON line) in a fresh Python, the repo (and `env_path`) first
    on its path."""
    paths = [str(p) for p in (env_path or [])] + [str(ROOT)]
    if os.environ.get("PYTHONPATH"):
        paths.append(os.environ["PYTHONPATH"])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths), HF_HUB_OFFLINE="1")
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.splitlines()[-1])


_RUN = """
import contextlib, io, json, sys
from desktop_app.cli.main import main

def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return {"code": code, "out": out.getvalue(), "err": err.getvalue(),
            "loaded": sorted(m for m in sys.modules if m.split(".")[0] == PACKAGE)}
"""


def test_kdesk_help_lists_bench_without_importing_the_lab():
    script = _RUN.replace("PACKAGE", "'kdesk_lab'") + (
        "help = run('--help')\nbench = run('bench', '--help')\nprint(json.dumps([help, bench]))"
    )
    help_, bench = _kdesk_in_process(script)
    assert help_["code"] == 0 and help_["loaded"] == [], help_["loaded"]
    listed = help_["out"].split("options:")[0]
    assert "    bench " in listed, "no bench: is the lab installed? (pip install -e ./lab)\n" + listed
    assert "benchmarks" in listed  # the lab's summary is its help line
    # Choosing the command loads it through the entry point.
    assert bench["code"] == 0 and "kdesk_lab.cli" in bench["loaded"]
    assert (
        "usage: kdesk bench" in bench["out"]
        and "retrieval" in bench["out"]
        and "conversations" in bench["out"]
    )


def test_a_package_adds_a_command_loaded_only_when_run(tmp_path):
    """Any installed package's kdesk.commands entry point becomes a command; it never shadows one of
    the app's, and one that cannot be imported is a usage error, not a traceback."""
    (tmp_path / "hello_cmd.py").write_text(
        "def register(sub):\n"
        "    p = sub.add_parser('hello', help='says hello')\n"
        "    p.add_argument('--name', default='world')\n"
        "    p.set_defaults(func=lambda args: print('hello', args.name) or 0)\n",
        encoding="utf-8",
    )
    info = tmp_path / "hello_cmd-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: hello-cmd\nVersion: 0.1\nSummary: greets you, from a plug-in\n",
        encoding="utf-8",
    )
    (info / "entry_points.txt").write_text(
        "[kdesk.commands]\nhello = hello_cmd:register\nlist = hello_cmd:register\n"
        "broken = no_such_module_here:register\n",
        encoding="utf-8",
    )
    script = _RUN.replace("PACKAGE", "'hello_cmd'") + (
        "print(json.dumps([run('--help'), run('list', '--help'), run('hello', '--name', 'kea'), run('broken')]))"
    )
    help_, app_list, hello, broken = _kdesk_in_process(script, [tmp_path])
    assert help_["code"] == 0 and help_["loaded"] == []
    assert "greets you, from a plug-in" in help_["out"] and "broken" in help_["out"]
    assert app_list["code"] == 0 and app_list["loaded"] == []  # `list` is still the app's
    assert "usage: kdesk list" in app_list["out"]
    assert hello == {"code": 0, "out": "hello kea\n", "err": "", "loaded": ["hello_cmd"]}
    assert broken["code"] == 2 and "Traceback" not in broken["err"]
    assert "the command 'broken' (no_such_module_here:register) could not be loaded" in broken["err"]
