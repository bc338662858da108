"""The identification card: photo, candidates with bars, confidence, evidence, final decision.

Filled event by event from ``Assistant.identify``: ``Classified`` -> candidates and level,
``FeatureQueries`` -> the queries and visual description, ``Retrieved`` -> evidence snippets,
``Decision`` -> final name, reasoning and follow-up advice. All text is set as plain text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QImageReader, QPixmap
from PySide6.QtWidgets import (
    QBoxLayout,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLayout,
    QProgressBar,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core import events as ev
from desktop_app.core.identify.flow import note_summary
from desktop_app.core.identify.names import norm_name, pretty_name
from desktop_app.core.identify.result import UNCERTAIN
from desktop_app.core.library.documents import Hit
from desktop_app.core.library.names import display_name
from desktop_app.core.messages import N_, Message, Text, render, render_parsed
from desktop_app.gui.i18n import catalogue, current_language, on_language_changed, tr
from desktop_app.gui.markdown import markdown_to_plain, plain_tooltip
from desktop_app.gui.tasks import Failure
from desktop_app.gui.widgets import (
    AutoHeightBrowser,
    CiteChip,
    FlowLayout,
    citation_label,
    place_label,
    plain_label,
)

LEVEL_COLORS = {N_("High"): "#2e7d32", N_("Medium"): "#ef6c00", N_("Low"): "#c62828"}
# Where a candidate comes from (its bar's tooltip), translated when shown.
SOURCES = {
    "gallery": N_("From your reference photos"),
    "imagenet": N_("From the built-in ImageNet classifier"),
    "notes": N_("From your notes: how well the photo's colours fit each note"),
}
PHOTO_SIZE = 170
HEAD_MIN_WIDTH = 240  # beside the photo, the candidates' names and bars need at least this


_PERCENT = re.compile(r"^(.*?)(\s*\(\d+%\)|\s+\d+%)$")  # "macaw (86%)", "ara macao 30%"


def _colour_words() -> dict[str, str]:
    """Colour names and the words the flow puts beside them, in the window's language."""
    return {
        "red": tr("red"),
        "orange": tr("orange"),
        "yellow": tr("yellow"),
        "green": tr("green"),
        "blue": tr("blue"),
        "purple": tr("purple"),
        "pink": tr("pink"),
        "brown": tr("brown"),
        "black": tr("black"),
        "grey": tr("grey"),
        "white": tr("white"),
        "pale": tr("pale"),
        "dark": tr("dark"),
        "none": tr("none"),
    }


def _term(piece: str, species: dict[str, str], colours: dict[str, str]) -> str | None:
    """One name of a list ("ara macao", "macaw (86%)", "red") as shown, or None when unknown."""
    m = _PERCENT.match(piece)
    core, tail = (m.group(1), m.group(2)) if m else (piece, "")
    zh = species.get(norm_name(core)) or colours.get(core.strip().lower())
    return zh + tail if zh else None


def localise_term(value: str, species: dict[str, str]) -> str:
    """A parameter of a flow message as the window shows it: species by ``species`` (norm_name ->
    the name shown: the notes' Chinese name in a Chinese window, their English title in an English
    one), colour names in Chinese in a Chinese window, and lists of them; anything else as it was
    (a file name, a species no note names)."""
    chinese = current_language() == "zh_CN"
    if not chinese and not species:
        return value
    colours = _colour_words() if chinese else {}
    whole = _term(value, species, colours)
    if whole is not None:
        return whole
    sep, zh_sep = (" / ", " / ") if " / " in value else (", ", "、" if chinese else ", ")
    out = []
    for piece in value.split(sep):
        zh = _term(piece, species, colours)
        if zh is None and " and " in piece:  # "yellow and blue" (a species named so is found above)
            first, _, second = piece.rpartition(" and ")
            pair = (_term(first, species, colours), _term(second, species, colours))
            if None not in pair:
                zh = tr("{first} and {second}").format(first=pair[0], second=pair[1])
        out.append(piece if zh is None else zh)
    return zh_sep.join(out) if out != value.split(sep) else value


def localise(text: Text | list[Text], species: dict[str, str]) -> str:
    """A text of the identify flow in the window's language: each message (core/identify/texts.py)
    through the catalogue, its species and colour names as the window names them (``localise_term``);
    a text that is no message (the model's own words, a note's sentences) as written. Lines (a
    reasoning, an answer) are rendered one by one."""
    if isinstance(text, list):
        out = [localise(line, species).strip() for line in text]
        joiner = "" if current_language() == "zh_CN" else " "  # Chinese sentences end in "。"
        return joiner.join(line for line in out if line)
    if isinstance(text, Message):
        return render_parsed(text, catalogue(), lambda value: localise_term(value, species))
    return text


def load_thumbnail(path: Path, size: int = 160) -> QPixmap:
    reader = QImageReader(str(path))
    reader.setAutoTransform(True)
    original = reader.size()
    if original.isValid():
        reader.setScaledSize(original.scaled(size, size, Qt.KeepAspectRatio))
    image = reader.read()
    return QPixmap.fromImage(image) if not image.isNull() else QPixmap()


class IdentifyCard(QFrame):
    """One identification result in the chat."""

    citation_clicked = Signal(object)  # a Hit used as evidence, or a Citation of the summary

    def __init__(self, image: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("identifyCard")
        self.setFrameShape(QFrame.StyledPanel)
        self.image = Path(image)
        self.candidates: list[ev.Candidate] = []
        self.level = ""
        self.decision: ev.Decision | None = None
        self.queries: list[Text] = []
        self.visual_description: Text = ""
        self.evidence: list[Hit] = []
        self._names: list[tuple[QLabel, QProgressBar, ev.Candidate]] = []  # the candidates' rows
        self._status_text = lambda: tr("Identifying…")  # re-read on a language change

        self.photo = QLabel(alignment=Qt.AlignCenter)
        self.photo.setObjectName("photo")
        pix = load_thumbnail(self.image)
        if not pix.isNull():
            self.photo.setPixmap(pix)
        else:
            self.photo.setText(tr("(cannot show this image)"))
        self.photo.setFixedSize(PHOTO_SIZE, PHOTO_SIZE)

        self.title = plain_label(object_name="cardTitle")
        self.file_label = plain_label(self.image.name, object_name="muted")
        self.level_badge = QLabel(objectName="levelBadge")
        self.level_badge.hide()
        self.status = plain_label(object_name="muted")
        self.candidates_box = QGridLayout()
        self.candidates_box.setColumnStretch(1, 1)

        self.queries_title = plain_label(object_name="sectionTitle")
        self.queries_label = plain_label(object_name="muted")
        self.evidence_title = plain_label(object_name="sectionTitle")
        self.evidence_box = QVBoxLayout()
        self.summary_title = plain_label(object_name="sectionTitle")
        self.summary = AutoHeightBrowser()
        self.summary.citation_clicked.connect(self._cite_number)
        self.summary_chips_box = QWidget()
        self.summary_chips = FlowLayout(self.summary_chips_box)
        self.answer: ev.Answer | None = None
        self.decision_title = plain_label(object_name="sectionTitle")
        self.decision_name = plain_label(object_name="decisionName")
        self.reasoning = plain_label()
        self.followup = plain_label(object_name="followup")
        for w in (
            self.summary_title,
            self.summary,
            self.queries_title,
            self.queries_label,
            self.evidence_title,
            self.decision_title,
            self.decision_name,
            self.reasoning,
            self.followup,
        ):
            w.hide()

        head = self.head = QVBoxLayout()
        title_row = QHBoxLayout()
        title_row.addWidget(self.title, 1)
        title_row.addWidget(self.level_badge)
        head.addLayout(title_row)
        head.addWidget(self.file_label)
        head.addLayout(self.candidates_box)
        head.addWidget(self.status)
        head.addStretch(1)
        # The photo sits beside the candidates, or above them in a narrow chat column.
        top = self.top = QBoxLayout(QBoxLayout.LeftToRight)
        top.addWidget(self.photo, 0, Qt.AlignTop | Qt.AlignLeft)
        top.addLayout(head, 1)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(12, 12, 12, 12)
        # minimumSizeHint below is the stacked layout's: the side-by-side one must not set it.
        lay.setSizeConstraint(QLayout.SetNoConstraint)
        lay.addLayout(top)
        lay.addWidget(self.queries_title)
        lay.addWidget(self.queries_label)
        lay.addWidget(self.evidence_title)
        lay.addLayout(self.evidence_box)
        lay.addWidget(self.decision_title)
        lay.addWidget(self.decision_name)
        lay.addWidget(self.reasoning)
        lay.addWidget(self.followup)
        lay.addWidget(self.summary_title)
        lay.addWidget(self.summary)
        lay.addWidget(self.summary_chips_box)
        on_language_changed(self.retranslate)
        self.retranslate()

    def retranslate(self, *_: object) -> None:
        self.title.setText(tr("Photo identification"))
        self.queries_title.setText(tr("Observed features"))
        self.evidence_title.setText(tr("Evidence from your documents"))
        self.decision_title.setText(tr("Decision"))
        self.summary_title.setText(tr("About it"))
        if self.level:
            self.level_badge.setText(tr("{level} confidence").format(level=tr(self.level)))
        for label, bar, cand in self._names:
            self._show_candidate(label, bar, cand)
        if self.queries or self.visual_description:
            self._show_queries()
        if self.decision is not None:
            self._show_decision(self.decision)
        if self.answer is not None:
            self._show_summary()
        self.status.setText(self._status_text())

    # -- names and texts in the window's language ------------------------------------------------
    def _species(self) -> dict[str, str]:
        """norm_name -> the name shown for every species this card names (candidates, decision):
        the notes' Chinese name in a Chinese window, their English title in an English one."""
        chinese = current_language() == "zh_CN"
        names = {norm_name(c.name): n for c in self.candidates if (n := c.zh if chinese else c.title)}
        if self.decision is not None:
            names.update(
                {
                    norm_name(k): v
                    for k, v in (self.decision.zh_names if chinese else self.decision.titles).items()
                    if v
                }
            )
        return names

    def _name(self, label: str) -> str:
        """A species as shown: its notes' name in the window's language where one is known."""
        return self._species().get(norm_name(label)) or pretty_name(label)

    def _text(self, text: Text | list[Text]) -> str:
        return localise(text, self._species())

    def _set_status(self, text: Callable[[], str]) -> None:
        self._status_text = text
        self.status.setText(text())

    def _show_candidate(self, label: QLabel, bar: QProgressBar, cand: ev.Candidate) -> None:
        shown = self._name(cand.name) or "?"
        label.setText(shown)
        label.setToolTip(plain_tooltip(pretty_name(cand.name)) if shown != pretty_name(cand.name) else "")
        bar.setToolTip(tr(SOURCES[cand.source]) if cand.source in SOURCES else "")

    def _show_queries(self) -> None:
        self.queries_title.setText(tr("Observed features"))
        lines = [f"• {self._text(q)}" for q in self.queries]
        if self.visual_description:
            seen = self._text(self.visual_description)
            lines.insert(0, tr("Seen: {description}").format(description=seen))
        self.queries_label.setText("\n".join(lines))

    # -- events --------------------------------------------------------------------------------
    def handle_event(self, event: ev.Event) -> None:
        if isinstance(event, ev.Classified):
            self.set_candidates(event.candidates, event.confidence_level)
        elif isinstance(event, ev.FeatureQueries):
            self.queries = list(event.queries)
            self.visual_description = event.visual_description
            self._show_queries()
            self.queries_title.show()
            self.queries_label.show()
        elif isinstance(event, ev.Retrieved):
            self.add_evidence(event.hits)
        elif isinstance(event, ev.Answer):
            self.show_answer(event)
        elif isinstance(event, ev.Decision):
            self.decision = event
            self._show_decision(event)
        elif isinstance(event, ev.Warning):
            self._set_status(lambda text=event.message: self._text(text))
        elif isinstance(event, ev.Error):
            self.show_error(event.message)

    def set_candidates(self, candidates: list[ev.Candidate], level: str) -> None:
        self.candidates = list(candidates)
        self.level = level or ""
        while self.candidates_box.count():
            item = self.candidates_box.takeAt(0)
            if item.widget():
                item.widget().deleteLater()
        self._names = []
        for row, cand in enumerate(self.candidates[:5]):
            score = float(cand.score)
            name = plain_label(wrap=False)
            bar = QProgressBar(objectName="candidateBar")
            bar.setRange(0, 100)
            bar.setValue(round(max(0.0, min(score, 1.0)) * 100))
            bar.setFormat(f"{score:.0%}")
            bar.setMaximumHeight(16)
            self._show_candidate(name, bar, cand)
            self._names.append((name, bar, cand))
            self.candidates_box.addWidget(name, row, 0)
            self.candidates_box.addWidget(bar, row, 1)
        if self.level:
            color = LEVEL_COLORS.get(self.level, "#546e7a")
            self.level_badge.setStyleSheet(
                f"background:{color}; color:white; border-radius:8px; padding:2px 8px;"
            )
            self.level_badge.setText(tr("{level} confidence").format(level=tr(self.level)))
            self.level_badge.show()
        self._set_status(lambda: "")

    def add_evidence(self, hits: list[Hit]) -> None:
        if not hits:
            return
        self.evidence_title.show()
        for hit in hits:
            if any(h.chunk_id == hit.chunk_id for h in self.evidence):
                continue
            self.evidence.append(hit)
            # A one-line snippet has no room for Markdown: its markup is dropped, not shown, and the
            # note's name and gallery-label lines are on the card already.
            snippet = " ".join(markdown_to_plain(note_summary(hit.text) or hit.text).split())
            snippet = snippet[:220] + ("…" if len(snippet) > 220 else "")
            where = Path(display_name(hit.source)).name
            where += f" · {place_label(hit.source, hit.page)}" if hit.page else ""
            chip = CiteChip(where, hit.source, hit.page, hit.text)  # a gone file is marked by its source
            chip.clicked.connect(lambda _=False, h=hit: self.citation_clicked.emit(h))
            self.evidence_box.addWidget(chip, 0, Qt.AlignLeft)
            self.evidence_box.addWidget(plain_label(snippet, object_name="snippet"))

    def _show_decision(self, decision: ev.Decision) -> None:
        self.decision_title.show()
        name = decision.final_name or UNCERTAIN
        english = ""  # the label behind a Chinese name, as its tooltip
        if name == UNCERTAIN and decision.also_possible:  # the notes offer it: no "not one of yours"
            names = ("、" if current_language() == "zh_CN" else ", ").join(
                map(self._name, decision.also_possible)
            )
            self.decision_name.setText(
                tr("Possibly {names} (known only from your notes)").format(names=names)
            )
        elif name == UNCERTAIN and decision.guesses:  # "not one of your species" first, guesses second
            names = ("、" if current_language() == "zh_CN" else ", ").join(map(self._name, decision.guesses))
            self.decision_name.setText(
                tr("Not one of your species (nearest guesses: {names})").format(names=names)
            )
        elif name == UNCERTAIN:
            self.decision_name.setText(tr("uncertain"))
        else:
            self.decision_name.setText(self._name(name))
            english = pretty_name(name) if self._name(name) != pretty_name(name) else ""
        self.decision_name.setToolTip(plain_tooltip(english) if english else "")
        self.decision_name.show()
        # Notes-only species ("also possible") are in the answer text below.
        self.reasoning.setText(self._text(decision.reasoning))
        self.reasoning.setVisible(bool(decision.reasoning))
        advice = self._text(decision.followup)
        if decision.need_more_info and not advice:
            advice = tr("Try a photo that shows the whole bird.")
        self.followup.setText(advice)
        self.followup.setVisible(bool(advice))
        self._set_status(lambda: "")

    def show_answer(self, answer: ev.Answer) -> None:
        """The flow's cited summary of the species, rendered as safe Markdown with chips."""
        self.answer = answer
        if not answer.text.strip():
            return
        self.summary_title.show()
        self.summary.show()
        self._show_summary()
        for citation in answer.citations:
            chip = CiteChip(citation_label(citation), citation.source, citation.page, citation.text or "")
            chip.clicked.connect(lambda _=False, c=citation: self.citation_clicked.emit(c))
            self.summary_chips.addWidget(chip)

    def _show_summary(self) -> None:
        """The summary: our sentences in the window's language, the notes' quoted as written."""
        if self.answer is not None and self.answer.text.strip():
            text = self._text(self.answer.lines or self.answer.text)
            self.summary.set_markdown(text, {c.n for c in self.answer.citations})

    # -- layout --------------------------------------------------------------------------------
    def minimumSizeHint(self) -> QSize:  # noqa: D102 - as narrow as the stacked layout
        lay = self.layout()
        m = lay.contentsMargins()
        widths = [PHOTO_SIZE, self.head.minimumSize().width()]
        widths += [lay.itemAt(i).minimumSize().width() for i in range(1, lay.count())]
        width = max(widths) + m.left() + m.right() + 2 * self.frameWidth()
        return QSize(width, super().minimumSizeHint().height())

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        m = self.layout().contentsMargins()
        room = self.width() - m.left() - m.right() - 2 * self.frameWidth()
        side = PHOTO_SIZE + self.top.spacing() + max(HEAD_MIN_WIDTH, self.head.minimumSize().width())
        direction = QBoxLayout.LeftToRight if room >= side else QBoxLayout.TopToBottom
        if self.top.direction() != direction:
            self.top.setDirection(direction)

    def _cite_number(self, n: int) -> None:
        for citation in self.answer.citations if self.answer is not None else []:
            if citation.n == n:
                self.citation_clicked.emit(citation)
                return

    def show_error(self, message: Text) -> None:
        self._set_status(
            lambda: tr("Identification failed: {message}").format(message=render(message, catalogue()))
        )

    def show_failure(self, failure: Failure) -> None:
        """The identification job raised: "Could not identify the photo: <reason>"."""
        self._set_status(failure.text)

    def mark_stopped(self) -> None:
        self._set_status(lambda: tr("Stopped."))

    def finish(self) -> None:
        if self.status.text() == tr("Identifying…"):
            self._set_status(lambda: "")
