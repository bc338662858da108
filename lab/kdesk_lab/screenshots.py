"""Screenshots of the main window's main states, in each UI language (`kdesk bench ui --screenshots`).

One fresh temporary data folder and the real window (offscreen without a display), driven like a
user: models loading, the empty library, a batch indexing (sample PDFs and DOCX files and the parrot
notes), an answer with the source viewer open at a highlighted PDF passage, an answer from a
Markdown note with the viewer showing the note rendered and the cited sentence marked, a note
summarised whole and two notes compared (no language model), a photo's identification card (after
reference photos are added), Settings and its Models tab, Help › About. Each state is written
as ``<state>-<language>.png`` at the window's size (a dialog is drawn over the window, as the user
sees it). Waits are bounded: the whole run stops with TimeoutError past ``time_limit_s``.
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from desktop_app.core.paths import REPO_ROOT
from kdesk_lab.answers import shared_data_root

STATES = (
    "loading",
    "empty",
    "indexing",
    "answer",
    "note",
    "summary",
    "compare",
    "identify",
    "settings",
    "models",
    "about",
)
LANGUAGES = ("en", "zh_CN")
WINDOW_SIZE = (1380, 860)
QUESTION = "What is a cannister shot made of?"  # answered from page 3 of the Vicksburg PDF
CITED_PDF = "Seige_of_Vicksburg_Sample_OCR.pdf"
NOTE_QUESTION = "What colours is the blue-and-yellow macaw?"  # answered from a parrot note (Markdown)
CITED_NOTE = "parrots/blue-and-yellow-macaw.md"
# Whole-document readings (issue 37), asked in the window's language: a note summarised, two compared.
SUMMARY_QUESTION = {"en": "Summarize the kea note", "zh_CN": "总结一下啄羊鹦鹉的笔记"}
COMPARE_QUESTION = {"en": "Compare the kea and the scarlet macaw", "zh_CN": "比较啄羊鹦鹉和绯红金刚鹦鹉"}
# Two batches (one shot while each indexes, in a language of its own); PDFs first, as they take longest.
DOCUMENTS = (
    "docs/pypdf/resources/Seige_of_Vicksburg_Sample_OCR.pdf",
    "docs/unstructured/example-docs/fake.docx",
)
MORE_DOCUMENTS = (
    "docs/unstructured/example-docs/pdf/layout-parser-paper-with-empty-pages.pdf",
    "docs/pypdf/resources/crazyones.pdf",
    "docs/unstructured/example-docs/docx-tables.docx",
)
PHOTO = "images/coral/parrot.jpg"  # a scarlet macaw
SPECIES = ("ara_macao", "ara_ararauna", "jako_grey", "cokatoo_galah", "cokatoo_alba")  # reference photos
PHOTOS_PER_SPECIES = 4
NOTES = REPO_ROOT / "knowledge" / "parrots"


class _Driver:
    """Runs the Qt event loop until a condition holds, within one deadline for the whole run."""

    def __init__(self, app: Any, time_limit_s: float) -> None:
        self.app = app
        self.deadline = time.monotonic() + time_limit_s

    def until(self, predicate: Callable[[], bool], what: str) -> None:
        while not predicate():
            if time.monotonic() > self.deadline:
                raise TimeoutError(f"screenshots: timed out waiting for {what}")
            self.app.processEvents()
            time.sleep(0.005)

    def settle(self, ms: int = 150) -> None:
        """Let layouts, repaints and queued signals run."""
        end = time.monotonic() + ms / 1000
        while time.monotonic() < end:
            self.app.processEvents()
            time.sleep(0.005)


def _save(widget: Any, path: Path, dialog: Any = None) -> Path:
    """The window as a PNG of 256 colours (a third of the size of a full-colour one, for the
    README); ``dialog`` is painted centred over it."""
    from PIL import Image
    from PySide6.QtCore import QBuffer, QIODevice
    from PySide6.QtGui import QColor, QPainter

    pixmap = widget.grab()
    if dialog is not None:
        shot = dialog.grab()
        painter = QPainter(pixmap)
        painter.fillRect(pixmap.rect(), QColor(0, 0, 0, 60))  # the window behind a modal dialog
        x = (pixmap.width() - shot.width()) // 2
        y = max(0, (pixmap.height() - shot.height()) // 2)
        painter.setPen(QColor(0, 0, 0, 90))
        painter.drawRect(x - 1, y - 1, shot.width() + 1, shot.height() + 1)
        painter.drawPixmap(x, y, shot)
        painter.end()
    buffer = QBuffer()
    buffer.open(QIODevice.WriteOnly)
    pixmap.toImage().save(buffer, "BMP")
    image = Image.open(io.BytesIO(bytes(buffer.data()))).convert("RGB")
    path.parent.mkdir(parents=True, exist_ok=True)
    image.quantize(256, Image.Quantize.MEDIANCUT, dither=Image.Dither.FLOYDSTEINBERG).save(
        path, optimize=True
    )
    return path


def _check_fonts(languages: Sequence[str]) -> None:
    """Chinese text needs a font that has it: without one every character is drawn as a box."""
    from PySide6.QtGui import QFontDatabase

    if "zh_CN" in languages and not QFontDatabase.families(QFontDatabase.WritingSystem.SimplifiedChinese):
        raise RuntimeError(
            "no font for Chinese is installed, so zh_CN screenshots would show boxes "
            "(Debian/Ubuntu: apt-get install fonts-wqy-microhei or fonts-noto-cjk)"
        )


def _stage_photos(data: Path, into: Path) -> Path:
    """A ``photos`` folder of reference photos (a few per species; a folder name is the label)."""
    folder = into / "photos"
    for species in SPECIES:
        target = folder / species
        target.mkdir(parents=True, exist_ok=True)
        for photo in sorted((data / "images" / "parrots" / species).glob("*.jpg"))[:PHOTOS_PER_SPECIES]:
            shutil.copy2(photo, target / photo.name)
    return folder


def take_screenshots(
    out_dir: Path,
    *,
    languages: Sequence[str] = LANGUAGES,
    states: Sequence[str] = STATES,
    sample_data: Path | None = None,
    embedder: Any = None,
    time_limit_s: float = 170.0,
) -> list[Path]:
    """Write ``<state>-<language>.png`` for each state and language into ``out_dir``; returns the
    files written. ``sample_data`` is the shared test data (default ``../shared/data``)."""
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from desktop_app.core.config import Config
    from desktop_app.gui.app import create_window, ensure_chinese_font
    from desktop_app.gui.i18n import set_language
    from desktop_app.gui.operations import KB_LOCK

    data = Path(sample_data) if sample_data is not None else shared_data_root()
    unknown = set(states) - set(STATES)
    if unknown:
        raise ValueError(f"unknown states: {', '.join(sorted(unknown))} (known: {', '.join(STATES)})")
    app = QApplication.instance() or QApplication([])
    ensure_chinese_font()  # the app's bundled Noto Sans CJK where the system has no Chinese font
    _check_fonts(languages)
    drive = _Driver(app, time_limit_s)
    out_dir = Path(out_dir)
    written: list[Path] = []
    root = Path(tempfile.mkdtemp(prefix="kdesk-screenshots-"))
    window = None

    def speak(lang: str) -> None:
        window.ctx.config.ui.language = lang  # in memory only: Settings shows the language in use
        set_language(lang)

    def shoot(state: str) -> None:
        """``state`` in every language (the window retranslates itself on a switch)."""
        for lang in languages:
            speak(lang)
            drive.settle(150)
            written.append(_save(window, out_dir / f"{state}-{lang}.png"))

    def per_language(state: str, build: Callable[[], Any]) -> None:
        """``state`` built again in each language (content made in that language's window)."""
        for lang in languages:
            speak(lang)
            dialog = build()
            drive.settle(300)
            written.append(_save(window, out_dir / f"{state}-{lang}.png", dialog))
            if dialog is not None:
                dialog.reject()

    try:
        config = Config()
        config.ui.language = languages[0]
        window = create_window(root / "data", config, embedder=embedder, load=False)
        window.resize(*WINDOW_SIZE)
        window.show()
        ctx = window.ctx

        # Loading: the load waits behind a job holding the knowledge base's lock until shot.
        release = {"now": False}

        def hold(_state: object) -> None:
            while not release["now"]:
                time.sleep(0.01)

        ctx.runner.run("screenshots-hold", hold, exclusive=False, lock=KB_LOCK)
        ctx.start_loading()
        drive.until(lambda: ctx.loading, "the loading state")
        if "loading" in states:
            shoot("loading")
        release["now"] = True
        drive.until(lambda: ctx.kb is not None or bool(ctx.load_error), "the models to load")
        if ctx.load_error:
            raise RuntimeError(ctx.load_error.text()) from ctx.load_error.error
        drive.until(lambda: not ctx.runner.is_busy(), "the window to be idle")
        if "empty" in states:
            shoot("empty")

        if {"indexing", "answer", "note", "summary", "compare"} & set(states):
            # A batch's progress line is worded as each file starts (a language switch does not
            # reword it), so each language gets a batch of its own.
            first = [*(data / rel for rel in DOCUMENTS), NOTES]
            second = [data / rel for rel in MORE_DOCUMENTS]
            batches = [first, second] if len(languages) > 1 else [first + second]
            for i, batch in enumerate(batches):
                done: list[Any] = []
                window.knowledge.batch_finished.connect(done.append)
                lang = languages[i % len(languages)]
                speak(lang)
                window.knowledge.add_paths(batch)
                if "indexing" in states and i < len(languages):
                    progress = window.knowledge.progress
                    drive.until(
                        lambda done=done, progress=progress: (
                            bool(done) or (progress.isVisible() and progress.maximum() > 0)
                        ),
                        "the batch's first progress",
                    )
                    written.append(_save(window, out_dir / f"indexing-{lang}.png"))
                drive.until(lambda done=done: bool(done), "the batch to finish")
                window.knowledge.batch_finished.disconnect(done.append)
                drive.until(lambda: not ctx.runner.is_busy(), "the window to be idle")

        if "answer" in states:

            def answer() -> None:
                window.new_conversation()
                finished: list[Any] = []
                window.chat.answer_finished.connect(finished.append)
                window.chat.ask(QUESTION)
                drive.until(lambda: bool(finished), "the answer")
                window.chat.answer_finished.disconnect(finished.append)
                message = finished[0]
                cite = next(c for c in message.citations if c.source == CITED_PDF)
                message.chips[message.citations.index(cite)].click()
                drive.until(lambda: window.viewer.highlighted, "the cited passage's highlight")

            per_language("answer", answer)

        if "note" in states:

            def note() -> None:
                window.new_conversation()
                finished: list[Any] = []
                window.chat.answer_finished.connect(finished.append)
                window.chat.ask(NOTE_QUESTION)
                drive.until(lambda: bool(finished), "the answer from the note")
                window.chat.answer_finished.disconnect(finished.append)
                message = finished[0]
                cites = [c for c in message.citations if c.source == CITED_NOTE]
                if cites:  # as a user does: the answer's chip
                    message.chips[message.citations.index(cites[0])].click()
                else:  # the answer cited other notes first: open the note's best passage
                    hit = next(h for h in ctx.kb.search(NOTE_QUESTION, top_k=20) if h.source == CITED_NOTE)
                    window.open_citation(hit)
                drive.until(lambda: window.viewer.highlighted, "the note's highlight")

            per_language("note", note)

        for state, questions in (("summary", SUMMARY_QUESTION), ("compare", COMPARE_QUESTION)):
            if state not in states:
                continue

            def reading(questions: dict[str, str] = questions, state: str = state) -> None:
                window.new_conversation()
                finished: list[Any] = []
                window.chat.answer_finished.connect(finished.append)
                window.chat.ask(questions.get(window.ctx.config.ui.language, questions["en"]))
                drive.until(lambda: bool(finished), f"the {state}")
                window.chat.answer_finished.disconnect(finished.append)
                if finished[0].chips:  # the viewer shows the first note read, not the last state's
                    finished[0].chips[0].click()

            per_language(state, reading)

        if "identify" in states:
            done_photos: list[Any] = []
            window.knowledge.batch_finished.connect(done_photos.append)
            window.knowledge.add_paths([_stage_photos(data, root)])
            drive.until(lambda: bool(done_photos), "the reference photos")
            drive.until(lambda: not ctx.runner.is_busy(), "the window to be idle")
            window.viewer.hide()

            def identify() -> None:
                window.new_conversation()
                cards: list[Any] = []
                window.chat.identify_finished.connect(cards.append)
                window.chat.identify(data / PHOTO)
                drive.until(lambda: bool(cards), "the identification card")
                window.chat.identify_finished.disconnect(cards.append)
                drive.settle(200)  # the card's final layout, then show it from its top
                window.chat.scroll.verticalScrollBar().setValue(cards[0].y())

            per_language("identify", identify)

        if "settings" in states:
            per_language("settings", window.open_settings)
        if "models" in states:

            def models() -> Any:
                dialog = window.open_settings()
                dialog.resize(960, 660)  # the model list at a readable size
                dialog.show_models()
                return dialog

            per_language("models", models)
        if "about" in states:
            per_language("about", window.open_about)
        return written
    finally:
        if window is not None:
            window.close()  # stops the background jobs and closes the knowledge base
            window.deleteLater()
        set_language("en")
        shutil.rmtree(root, ignore_errors=True)
