"""Every UI string goes through tr() and has a Simplified Chinese translation."""

from __future__ import annotations

import ast
import string
from pathlib import Path

import desktop_app.gui as gui_pkg
from desktop_app.core import messages
from desktop_app.gui.i18n import set_language, tr, tr_core
from desktop_app.gui.i18n_zh import ZH_CN
from desktop_app.gui.knowledge.model import COLUMNS
from desktop_app.gui.main_window import ROLE_TITLES
from desktop_app.gui.operations import Operation
from desktop_app.gui.settings.dialog import BACKENDS, ROUTER_MODES


def _tr_literals() -> set[str]:
    found: set[str] = set()
    for path in Path(gui_pkg.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "tr"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                found.add(node.args[0].value)
    return found


def test_every_tr_string_has_a_chinese_translation():
    wanted = _tr_literals()
    wanted |= set(COLUMNS) | set(ROLE_TITLES.values()) | set(Operation)
    wanted |= {label for _, label in BACKENDS + ROUTER_MODES}
    wanted |= {"indexed", "failed", "pending", "indexing", "processed", "High", "Medium", "Low"}
    assert len(wanted) > 100
    missing = sorted(s for s in wanted if s not in ZH_CN)
    assert missing == []


def test_placeholders_survive_translation():
    for english, chinese in ZH_CN.items():
        for name in ("{n}", "{error}", "{message}", "{query}", "{level}", "{page}", "{count}"):
            assert (name in english) == (name in chinese), english


def test_tr_switches_language_live(qtbot):
    try:
        set_language("zh_CN")
        assert tr("Send") == "发送"
        set_language("en")
        assert tr("Send") == "Send"
    finally:
        set_language("en")


def _fields(template: str) -> list[tuple[str, str]]:
    return sorted((name, spec) for _, name, spec, _ in string.Formatter().parse(template) if name is not None)


def test_every_core_message_has_a_chinese_template_with_the_same_fields():
    from desktop_app.core.desk import MESSAGE_MODULES  # every module that defines messages

    assert MESSAGE_MODULES
    catalogue = messages.catalogue()
    assert len(catalogue) > 150
    missing = sorted(t for t in catalogue.values() if t not in ZH_CN)
    assert missing == []
    differ = sorted(t for t in catalogue.values() if _fields(t) != _fields(ZH_CN[t]))
    assert differ == []


def test_tr_core_renders_a_stored_core_text_in_the_ui_language(qtbot):
    stored = "corrupt DOCX: this is an old binary Word (.doc) file; save it as .docx"
    try:
        set_language("zh_CN")
        assert tr_core(stored) == "DOCX 已损坏：这是旧版二进制 Word（.doc）文件；请另存为 .docx"
        assert tr_core("notes/parrots.md") == "notes/parrots.md"  # no message: shown as it is
        set_language("en")
        assert tr_core(stored) == stored
    finally:
        set_language("en")


def test_every_model_description_and_licence_note_has_a_chinese_translation():
    """Settings › Models shows the manifest's descriptions and licence notes in the window's language."""
    from desktop_app.core.models.registry import load_manifest

    texts = {s.description for s in load_manifest()} | {s.license for s in load_manifest()}
    sentences = {t for t in texts if t and len(t.split()) >= 3}
    assert sentences
    assert sorted(t for t in sentences if t not in ZH_CN) == []


def test_a_citation_names_its_page_or_slide_in_the_window_language(qtbot):
    from types import SimpleNamespace

    from desktop_app.gui.widgets import citation_label, citation_reference

    pdf = SimpleNamespace(n=2, source="notes/field guide.pdf", page=4)
    try:
        assert citation_label(pdf) == "[2] field guide.pdf · p. 4"
        set_language("zh_CN")
        assert citation_label(pdf) == "[2] field guide.pdf · 第 4 页"
        assert citation_reference("talk.pptx", 3) == "talk.pptx, 第 3 张幻灯片"
    finally:
        set_language("en")
