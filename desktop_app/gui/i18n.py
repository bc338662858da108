"""One ``tr()`` for every UI string, and live language switching.

The English text is the gettext msgid; the window's language picks the catalogue
(desktop_app/locale/<lang>/LC_MESSAGES/messages.mo, compiled from the .po that tools/i18n_update.py
keeps in step with the source), the same catalogue that renders the core's messages. Qt's own texts
(standard buttons, the file dialog) come from Qt's translations, installed with the language.
Widgets connect ``retranslate`` methods to ``language_changed`` and re-read their labels when the
user switches language.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QObject, QTranslator, Signal

from desktop_app.core.messages import N_, Text, Translator, render, translations

LANGUAGES = {"en": "English", "zh_CN": "简体中文"}


class _Language(QObject):
    changed = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.code = "en"
        self.catalogue: Translator = translations("en")
        self.qt: list[QTranslator] = []  # Qt's own texts in this language, while installed


_language: _Language | None = None


def language() -> _Language:
    """The process-wide language holder (created on first use, after QApplication exists)."""
    global _language
    if _language is None:
        _language = _Language()
    return _language


def current_language() -> str:
    return language().code


def catalogue() -> Translator:
    """The gettext catalogue of the window's language (renders a core ``Message``)."""
    return _language.catalogue if _language is not None else translations("en")


def set_language(code: str) -> None:
    """Switch the UI language; every widget connected to ``changed`` retranslates itself."""
    code = code if code in LANGUAGES else "en"
    holder = language()
    if code != holder.code:
        holder.code = code
        holder.catalogue = translations(code)
        _install_qt_translations(holder, code)
        holder.changed.emit(code)


# Qt texts its bundled zh_CN catalogue lacks (Qt 6 renamed them since it was translated): ours
# supplies them, by context.
QT_GAPS = {"QFileDialog": (N_("&Look in:"), N_("Files of &type:"))}


class _QtGaps(QTranslator):
    """Answers only the QT_GAPS texts, from our catalogue; any other text goes on to Qt's own."""

    def __init__(self, catalogue: Translator, parent: QObject) -> None:
        super().__init__(parent)
        self._catalogue = catalogue

    def translate(self, context, source, disambiguation=None, n=-1):  # noqa: ARG002 - Qt's signature
        if source in QT_GAPS.get(context, ()):
            return self._catalogue.gettext(source)
        return None  # a null string: Qt asks the next translator

    def isEmpty(self) -> bool:  # noqa: N802 - Qt's name
        return False


def _install_qt_translations(holder: _Language, code: str) -> None:
    """Qt's bundled catalogue (qtbase_<lang>.qm: Yes/No, OK/Cancel, the file dialog's labels)."""
    app = QCoreApplication.instance()
    for translator in holder.qt:
        if app is not None:
            app.removeTranslator(translator)
    holder.qt = []
    if code == "en" or app is None:
        return
    translator = QTranslator(holder)
    if translator.load(f"qtbase_{code}", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
        app.installTranslator(translator)
        holder.qt.append(translator)
    gaps = _QtGaps(holder.catalogue, holder)  # installed last, so asked first
    app.installTranslator(gaps)
    holder.qt.append(gaps)


def on_language_changed(slot) -> None:
    """Connect a widget's ``retranslate`` method (auto-disconnected when the widget dies)."""
    language().changed.connect(slot)


def tr(text: str) -> str:
    """Translate a UI string; unknown strings fall back to English."""
    # gettext("") is the catalogue's header, not an empty text
    return catalogue().gettext(text) if text else text


def trn(singular: str, plural: str, n: int) -> str:
    """The form of a UI string that ``n`` needs, by the plural rules of the window's language."""
    return catalogue().ngettext(singular, plural, n)


def tr_core(text: Text | None) -> str:
    """A text from the core (a file's failure reason, an answer's note, a model's status) in the
    UI language: a message rendered through the catalogue; a text that is no message (a file
    name, a third-party error) as it is."""
    return render(text, catalogue())
