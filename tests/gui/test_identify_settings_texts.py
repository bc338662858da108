"""The Identification settings say in the user's terms what each threshold changes, in both languages."""

from __future__ import annotations

from desktop_app.gui.i18n import catalogue, set_language


def test_identification_settings_say_what_they_change_in_catalogue_texts(make_window, qtbot, screenshot):
    window = make_window()
    dialog = window.open_settings()
    fields = (dialog.high, dialog.medium, dialog.medium_below, dialog.unknown_below)
    english = {w: (dialog.label_for(w), dialog.identify_help[w].text()) for w in fields}
    assert "Check my notes" in english[dialog.medium_below][0]
    assert not any("search below" in label for label, _ in english.values())
    for _label, help_text in english.values():
        assert len(help_text) > 40  # a sentence, not a word
    dialog.tabs.setCurrentIndex(3)
    screenshot(dialog, "settings-identification")

    set_language("zh_CN")
    try:
        zh = catalogue()
        for w, (label, help_text) in english.items():
            # Each text is in the catalogue, and the dialog shows its Chinese translation.
            assert zh.gettext(label) != label and zh.gettext(help_text) != help_text
            assert dialog.label_for(w) == zh.gettext(label)
            assert dialog.identify_help[w].text() == zh.gettext(help_text)
    finally:
        set_language("en")
