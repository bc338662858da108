"""The New collection prompt says which names it takes (Chinese ones too) and refuses the others, saying why."""

from __future__ import annotations

from PySide6.QtWidgets import QDialogButtonBox

from desktop_app.gui.i18n import set_language


def test_a_chinese_collection_name_is_taken_and_an_invalid_one_is_refused(make_window, qtbot):
    window = make_window()
    panel = window.knowledge
    dialog = panel._new_scope()
    qtbot.waitExposed(dialog)
    assert "any language" in dialog.prompt.text()
    ok = dialog.buttons.button(QDialogButtonBox.Ok)

    dialog.field.setText("my notes")
    assert not ok.isEnabled()
    assert dialog.error.isVisible() and "my notes" in dialog.error.text()
    assert "any language" in dialog.error.text()

    dialog.field.setText("鹦鹉")
    assert ok.isEnabled() and not dialog.error.isVisible()
    ok.click()
    assert panel.current_scope() == "鹦鹉"


def test_the_collection_prompt_is_in_chinese(make_window, qtbot):
    window = make_window()
    set_language("zh_CN")
    try:
        dialog = window.knowledge._new_scope()
        dialog.field.setText("a b")
        assert dialog.windowTitle() != "New collection"
        assert "any language" not in dialog.prompt.text()
        assert "any language" not in dialog.error.text() and dialog.error.text()
        dialog.reject()
    finally:
        set_language("en")
