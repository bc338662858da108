"""The identification card: photo, candidates with bars, confidence, evidence, final decision.

Filled event by event from ``Assistant.identify``: ``Classified`` -> candidates and level,
``FeatureQueries`` -> the queries and visual description, ``Retrieved`` -> evidence snippets,
``Decision`` -> final name, reasoning and follow-up advice. All text is set as plain text.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QImageReader, QPixmap
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core import events as ev
from desktop_app.core.identify.names import pretty_name
from desktop_app.core.identify.result import UNCERTAIN
from desktop_app.core.library.documents import Hit, page_label
from desktop_app.gui.chat.markdown import plain_tooltip
from desktop_app.gui.i18n import current_language, on_language_changed, tr
from desktop_app.gui.widgets import AutoHeightBrowser, citation_label, plain_label

LEVEL_COLORS = {"High": "#2e7d32", "Medium": "#ef6c00", "Low": "#c62828"}


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
        self.queries: list[str] = []
        self.evidence: list[Hit] = []

        self.photo = QLabel(alignment=Qt.AlignCenter)
        self.photo.setObjectName("photo")
        pix = load_thumbnail(self.image)
        if not pix.isNull():
            self.photo.setPixmap(pix)
        else:
            self.photo.setText(tr("(cannot show this image)"))
        self.photo.setFixedSize(170, 170)

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
        self.summary_chips = QHBoxLayout()
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

        head = QVBoxLayout()
        title_row = QHBoxLayout()
        title_row.addWidget(self.title, 1)
        title_row.addWidget(self.level_badge)
        head.addLayout(title_row)
        head.addWidget(self.file_label)
        head.addLayout(self.candidates_box)
        head.addWidget(self.status)
        head.addStretch(1)
        top = QHBoxLayout()
        top.addWidget(self.photo, 0, Qt.AlignTop)
        top.addLayout(head, 1)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(12, 12, 12, 12)
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
        lay.addLayout(self.summary_chips)
        on_language_changed(self.retranslate)
        self.retranslate()
        self.status.setText(tr("Identifying…"))

    def retranslate(self, *_: object) -> None:
        self.title.setText(tr("Photo identification"))
        self.queries_title.setText(tr("Feature queries") if self.queries else tr("Observed features"))
        self.evidence_title.setText(tr("Evidence from your documents"))
        self.decision_title.setText(tr("Decision"))
        self.summary_title.setText(tr("About it"))
        if self.level:
            self.level_badge.setText(tr("{level} confidence").format(level=tr(self.level)))
        if self.decision is not None:
            self._show_decision(self.decision)

    # -- events --------------------------------------------------------------------------------
    def handle_event(self, event: ev.Event) -> None:
        if isinstance(event, ev.Classified):
            self.set_candidates(event.candidates, event.confidence_level)
        elif isinstance(event, ev.FeatureQueries):
            self.queries = list(event.queries)
            self.queries_title.setText(tr("Feature queries") if self.queries else tr("Observed features"))
            lines = [f"• {q}" for q in event.queries]
            if event.visual_description:
                lines.insert(0, tr("Seen: {description}").format(description=event.visual_description))
            self.queries_label.setText("\n".join(lines))
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
            self.status.setText(event.message)
        elif isinstance(event, ev.Error):
            self.show_error(event.message)

    def set_candidates(self, candidates: list[ev.Candidate], level: str) -> None:
        self.candidates = list(candidates)
        self.level = level or ""
        while self.candidates_box.count():
            item = self.candidates_box.takeAt(0)
            if item.widget():
                item.widget().deleteLater()
        for row, cand in enumerate(self.candidates[:5]):
            score = float(cand.score)
            shown = cand.zh if current_language() == "zh_CN" and cand.zh else cand.name
            name = plain_label(shown or "?", wrap=False)
            bar = QProgressBar(objectName="candidateBar")
            bar.setRange(0, 100)
            bar.setValue(round(max(0.0, min(score, 1.0)) * 100))
            bar.setFormat(f"{score:.0%}")
            bar.setMaximumHeight(16)
            if cand.source:
                bar.setToolTip(plain_tooltip(cand.source))
            self.candidates_box.addWidget(name, row, 0)
            self.candidates_box.addWidget(bar, row, 1)
        if self.level:
            color = LEVEL_COLORS.get(self.level, "#546e7a")
            self.level_badge.setStyleSheet(
                f"background:{color}; color:white; border-radius:8px; padding:2px 8px;"
            )
            self.level_badge.setText(tr("{level} confidence").format(level=tr(self.level)))
            self.level_badge.show()
        self.status.setText("")

    def add_evidence(self, hits: list[Hit]) -> None:
        if not hits:
            return
        self.evidence_title.show()
        for hit in hits:
            if any(h.chunk_id == hit.chunk_id for h in self.evidence):
                continue
            self.evidence.append(hit)
            snippet = " ".join(hit.text.split())
            snippet = snippet[:220] + ("…" if len(snippet) > 220 else "")
            where = Path(hit.source).name + (f" · {page_label(hit.source, hit.page)}" if hit.page else "")
            row = QHBoxLayout()
            chip = QPushButton(where, objectName="citeChip")
            chip.setProperty("source", hit.source)  # a saved card's gone files are marked by it
            chip.setCursor(Qt.PointingHandCursor)
            chip.clicked.connect(lambda _=False, h=hit: self.citation_clicked.emit(h))
            row.addWidget(chip, 0, Qt.AlignTop)
            row.addWidget(plain_label(snippet, object_name="snippet"), 1)
            self.evidence_box.addLayout(row)

    def _show_decision(self, decision: ev.Decision) -> None:
        self.decision_title.show()
        name = decision.final_name or UNCERTAIN
        if name == UNCERTAIN and decision.guesses:  # "not one of your species" first, guesses second
            names = ", ".join(pretty_name(g) for g in decision.guesses)
            self.decision_name.setText(
                tr("Not one of your species (nearest guesses: {names})").format(names=names)
            )
        else:
            self.decision_name.setText(tr("uncertain") if name == UNCERTAIN else pretty_name(name))
        self.decision_name.show()
        # Notes-only species ("also possible") are in the answer text below.
        self.reasoning.setText(decision.reasoning)
        self.reasoning.setVisible(bool(decision.reasoning))
        advice = decision.followup
        if decision.need_more_info and not advice:
            advice = tr("Try a sharper photo that shows the whole bird.")
        self.followup.setText(advice)
        self.followup.setVisible(bool(advice))
        self.status.setText("")

    def show_answer(self, answer: ev.Answer) -> None:
        """The flow's cited summary of the species, rendered as safe Markdown with chips."""
        self.answer = answer
        if not answer.text.strip():
            return
        self.summary_title.show()
        self.summary.show()
        self.summary.set_markdown(answer.text, {c.n for c in answer.citations})
        for citation in answer.citations:
            chip = QPushButton(citation_label(citation), objectName="citeChip")
            chip.setProperty("source", citation.source)  # a saved card's gone files are marked by it
            chip.setCursor(Qt.PointingHandCursor)
            chip.clicked.connect(lambda _=False, c=citation: self.citation_clicked.emit(c))
            self.summary_chips.addWidget(chip)
        self.summary_chips.addStretch(1)

    def _cite_number(self, n: int) -> None:
        for citation in self.answer.citations if self.answer is not None else []:
            if citation.n == n:
                self.citation_clicked.emit(citation)
                return

    def show_error(self, message: str) -> None:
        self.status.setText(tr("Identification failed: {message}").format(message=message))

    def mark_stopped(self) -> None:
        self.status.setText(tr("Stopped."))

    def finish(self) -> None:
        if self.status.text() == tr("Identifying…"):
            self.status.setText("")
