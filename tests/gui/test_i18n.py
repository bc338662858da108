"""One gettext catalogue for the window and the core: every extracted text has a Chinese
translation with the same fields, the compiled catalogue is the .po's, the language switches live,
and Qt's own dialogs follow it."""

from __future__ import annotations

import ast
import string
import sys
from pathlib import Path

import pytest
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from PySide6.QtWidgets import QDialogButtonBox, QFileDialog, QLabel, QMessageBox, QPushButton

import desktop_app.gui as gui_pkg
from desktop_app.core import messages
from desktop_app.gui.i18n import set_language, tr, tr_core, trn

ROOT = Path(__file__).resolve().parents[2]
PO = ROOT / "desktop_app" / "locale" / "zh_CN" / "LC_MESSAGES" / "messages.po"


@pytest.fixture(scope="module")
def extracted():
    """The msgids ``pybabel extract`` finds with the repository's babel.cfg (tools/i18n_update.py)."""
    sys.path.insert(0, str(ROOT))
    try:
        from tools.i18n_update import extract

        return extract(ROOT)
    finally:
        sys.path.remove(str(ROOT))


@pytest.fixture(scope="module")
def zh():
    with open(PO, "rb") as f:
        return read_po(f, locale="zh_CN")


def _fields(template: str) -> list[tuple[str, str]]:
    return sorted((name, spec) for _, name, spec, _ in string.Formatter().parse(template) if name is not None)


def _ids(msgid: str | tuple[str, ...]) -> tuple[str, ...]:
    return msgid if isinstance(msgid, tuple) else (msgid,)


def test_every_extracted_message_has_a_chinese_translation_with_the_same_fields(extracted, zh):
    assert len(extracted) > 400
    missing, differ = [], []
    for entry in extracted:
        if not entry.id:
            continue
        found = zh.get(entry.id)
        strings = _ids(found.string) if found is not None else ()
        if found is None or found.fuzzy or not strings or not all(strings):
            missing.append(entry.id)
            continue
        differ += [(entry.id, s) for s in strings if _fields(s) != _fields(_ids(entry.id)[-1])]
    assert missing == []
    assert differ == []


def test_the_catalogue_holds_no_message_the_source_lost(extracted, zh):
    # tools/i18n_update.py drops them; a stale entry means the .po was not updated after an edit
    assert sorted(str(e.id) for e in zh if e.id and e.id not in extracted) == []


def test_the_extractor_finds_every_core_template(extracted):
    from desktop_app.core.desk import MESSAGE_MODULES  # every module that defines messages

    assert MESSAGE_MODULES
    catalogue = messages.catalogue()
    assert len(catalogue) > 150
    ids = {i for entry in extracted if entry.id for i in _ids(entry.id)}
    templates = set(catalogue.values()) | {plural for plural, _ in messages.PLURALS.values()}
    assert sorted(templates - ids) == []


def test_the_model_manifest_sentences_are_extracted(extracted):
    from desktop_app.core.models.registry import load_manifest

    texts = {s.description for s in load_manifest()} | {s.license for s in load_manifest()}
    sentences = {t for t in texts if t and len(t.split()) >= 3}
    assert sentences
    assert sorted(t for t in sentences if t not in extracted) == []


def test_no_tr_call_hides_in_an_f_string():
    """Python 3.11's tokenizer gives the extractor an f-string as one token: a tr("...") inside it
    would never reach the catalogue."""
    hidden = []
    for path in Path(gui_pkg.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.JoinedStr):
                for inner in ast.walk(node):
                    if (
                        isinstance(inner, ast.Call)
                        and isinstance(inner.func, ast.Name)
                        and inner.func.id in ("tr", "trn")
                        and inner.args
                        and isinstance(inner.args[0], ast.Constant)
                    ):
                        hidden.append(f"{path.name}:{inner.lineno}")
    assert hidden == []


def test_the_compiled_catalogue_is_the_po_compiled():
    """The app reads the .mo (stdlib gettext, no Babel at run time): it must not lag its .po."""
    import io

    with open(PO, "rb") as f:
        catalog = read_po(f, locale="zh_CN")
    compiled = io.BytesIO()
    write_mo(compiled, catalog, use_fuzzy=False)
    assert PO.with_suffix(".mo").read_bytes() == compiled.getvalue(), "run tools/i18n_update.py"


def test_tr_switches_language_live(qtbot):
    try:
        set_language("zh_CN")
        assert tr("Send") == "发送"
        assert tr("") == ""  # not the catalogue's header
        set_language("en")
        assert tr("Send") == "Send"
    finally:
        set_language("en")


def test_plurals_follow_the_language_rules(qtbot):
    from desktop_app.core.library import reasons

    scanned = messages.message(reasons.PDF_NEEDS_OCR, count=1)
    assert str(scanned) == "no text layer: scanned pages need OCR (1 page)"
    assert (
        str(messages.message(reasons.PDF_NEEDS_OCR, count=3))
        == "no text layer: scanned pages need OCR (3 pages)"
    )
    assert trn("{n} chunk", "{n} chunks", 1) == "{n} chunk"
    try:
        set_language("zh_CN")
        assert trn("{n} chunk", "{n} chunks", 1) == trn("{n} chunk", "{n} chunks", 5) == "{n} 个片段"
        assert (
            tr_core(messages.message(reasons.PDF_NEEDS_OCR, count=3)) == "没有文本层：扫描页需要 OCR（3 页）"
        )
        assert tr_core(scanned) == "没有文本层：扫描页需要 OCR（1 页）"
    finally:
        set_language("en")


def test_tr_core_renders_a_core_message_in_the_ui_language_and_a_text_as_it_is(qtbot):
    stored = messages.from_english("corrupt DOCX: this is an old binary Word (.doc) file; save it as .docx")
    english = "corrupt DOCX: this is an old binary Word (.doc) file; save it as .docx"
    try:
        set_language("zh_CN")
        assert tr_core(stored) == "DOCX 已损坏：这是旧版二进制 Word（.doc）文件；请另存为 .docx"
        assert tr_core("notes/parrots.md") == "notes/parrots.md"  # no message: shown as it is
        assert tr_core(english) == english  # a text is never parsed back (migrations do that, once)
        set_language("en")
        assert tr_core(stored) == english
    finally:
        set_language("en")


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


def _texts(widget) -> set[str]:
    return {w.text() for w in widget.findChildren(QPushButton)} | {
        w.text() for w in widget.findChildren(QLabel)
    }


def test_qt_standard_buttons_and_the_file_dialog_follow_the_window_language(qtbot):
    """Qt's own texts come from its bundled qtbase_zh_CN.qm, installed with the language."""
    try:
        set_language("zh_CN")
        box = QMessageBox(QMessageBox.Icon.Question, "t", "?", QMessageBox.Yes | QMessageBox.No)
        qtbot.addWidget(box)
        yes, no = box.button(QMessageBox.Yes).text(), box.button(QMessageBox.No).text()
        assert "是" in yes and "否" in no, (yes, no)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        qtbot.addWidget(buttons)
        ok, cancel = (buttons.button(b).text() for b in (QDialogButtonBox.Ok, QDialogButtonBox.Cancel))
        assert "确定" in ok and "取消" in cancel, (ok, cancel)

        dialog = QFileDialog(None, "t")
        dialog.setOption(QFileDialog.DontUseNativeDialog)
        dialog.setFileMode(QFileDialog.Directory)
        qtbot.addWidget(dialog)
        texts = _texts(dialog)
        assert not {"&Look in:", "Files of &type:", "Directory:", "&Choose", "Cancel"} & texts, texts
        assert {"查找范围(&L)：", "文件类型(&T)：", "目录：", "选择(&C)", "取消"} <= texts, texts

        set_language("en")
        box = QMessageBox(QMessageBox.Icon.Question, "t", "?", QMessageBox.Yes | QMessageBox.No)
        qtbot.addWidget(box)
        assert box.button(QMessageBox.Yes).text().replace("&", "") == "Yes"
    finally:
        set_language("en")
