"""Help › About: the version, the real data folder and log file (openable, copyable), and the
licences of the models as the registry lists them; in both languages."""

from __future__ import annotations

import logging

from PySide6.QtGui import QGuiApplication

from desktop_app.core.models.registry import load_manifest
from desktop_app.core.packages import app_version
from desktop_app.core.paths import log_file
from desktop_app.gui.about import AboutDialog
from desktop_app.gui.app import log_to_file
from desktop_app.gui.i18n import set_language


def test_about_shows_the_real_data_folder_log_file_and_model_licences(make_window, qtbot, screenshot):
    window = make_window()
    assert [a.text() for a in window.menuBar().actions()] == ["&File", "&Help"]
    # About is in Help, not File (File: export, settings, quit).
    assert [a.text() for a in window.file_menu.actions() if a.text()] == [
        "Export conversation as Markdown…",
        "Settings…",
        "Quit",
    ]
    assert window.about_action in window.help_menu.actions()

    # The log the window writes goes where About says.
    logged = log_to_file(window.ctx.data_dir)
    logging.getLogger("kdesk.test").warning("about-dialog-check")
    try:
        window.about_action.trigger()
        (dialog,) = window.findChildren(AboutDialog)
        qtbot.waitExposed(dialog)
        data_dir = window.ctx.data_dir
        assert dialog.data_row.field.text() == str(data_dir)
        assert dialog.log_row.field.text() == str(log_file(data_dir)) == str(logged)
        assert "about-dialog-check" in logged.read_text(encoding="utf-8")
        assert dialog.data_row.target() == data_dir and dialog.log_row.target() == logged.parent
        dialog.log_row.copy_button.click()
        assert QGuiApplication.clipboard().text() == str(logged)
        assert app_version() and app_version() in dialog.version_label.text()

        for spec in load_manifest():
            assert dialog.name_labels[spec.id].text() == spec.display_name
            assert dialog.licence_labels[spec.id].text() == spec.license
        assert dialog.licence_labels["all-minilm-l6-v2"].text().startswith("Apache-2.0")
        screenshot(dialog, "about")

        set_language("zh_CN")
        assert dialog.windowTitle() == "关于 Knowledge Desk"
        assert dialog.data_row.open_button.text() != "Open"
    finally:
        set_language("en")
        root = logging.getLogger()
        for handler in [h for h in root.handlers if getattr(h, "baseFilename", "") == str(logged.resolve())]:
            root.removeHandler(handler)
            handler.close()
