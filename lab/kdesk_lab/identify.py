"""`kdesk bench identify`: photo identification accuracy, confidence calibration and speed.

Labelled photo folders (one sub-folder per label) are split into a gallery and queries (or used
leave-one-out); the gallery is indexed through the app's GalleryHandler in a temporary knowledge
base (with optional species notes), and every query runs the real identify flow without an LLM.
Reported per run: top-1/top-3 before (gallery ranking) and after the fallback (the decision, then
the flow's ranking), the uncertain and low-confidence rates, how photos of labels not in the
gallery are rated, a calibration table (top score -> top-1 accuracy), and ms per image with the
median of every stage.
"""

from __future__ import annotations

import contextlib
import copy
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from desktop_app.core.config import Config, IdentifyConfig
from desktop_app.core.events import Event
from desktop_app.core.identify.gallery import GalleryMatch, LabelScore
from desktop_app.core.identify.image_text import FeatureModel
from desktop_app.core.identify.result import UNCERTAIN
from desktop_app.core.messages import render_lines
from desktop_app.core.tasks import NullTask, TaskState

Progress = Callable[[int, int, str], None]


class BenchTask(TaskState, Protocol):
    """Progress of one phase (the CLI's CliTask draws a bar); closed when the phase ends."""

    def close(self) -> None: ...


class _SilentTask(NullTask):
    def __init__(self, desc: str = "") -> None:
        pass

    def close(self) -> None:
        pass


@dataclass
class Photo:
    path: Path
    label: str | None  # None: in no label (a negative)


def labelled_photos(folder: Path) -> dict[str, list[Path]]:
    """label (sub-folder name) -> its image files, sorted."""
    from desktop_app.core.library.parsers import IMAGE_SUFFIXES

    out: dict[str, list[Path]] = {}
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
        files = sorted(f for f in sub.iterdir() if f.is_file() and f.suffix.lower() in IMAGE_SUFFIXES)
        if files:
            out[sub.name] = files
    return out


class MemoryGallery:
    """A gallery held in memory (same ``nearest``/``label_scores`` API as GalleryHandler) for
    leave-one-out runs: ``exclude`` hides one photo (all its views) and the ridge head is refitted
    without it."""

    def __init__(
        self,
        vectors: np.ndarray,
        labels: Sequence[str],
        sources: Sequence[str],
        photo: Sequence[int],
        features: FeatureModel | None = None,
    ) -> None:
        self.vectors = vectors
        self.features = features  # the model the vectors come from (None: the classifier)
        self.labels = list(labels)
        self.sources = list(sources)
        self.photo = np.asarray(photo)  # which photo each row (view) belongs to
        self.exclude: int | None = None

    def _rows(self) -> np.ndarray:
        return np.nonzero(self.photo != (-1 if self.exclude is None else self.exclude))[0]

    def nearest(self, feature: np.ndarray, k: int = 10, scope: str | None = None) -> list[GalleryMatch]:
        rows = self._rows()
        sims = self.vectors[rows] @ np.asarray(feature, dtype=np.float32)
        out: list[GalleryMatch] = []
        seen = set()
        for j in np.argsort(-sims):
            i = rows[j]
            if self.photo[i] not in seen:
                seen.add(self.photo[i])
                out.append(GalleryMatch(str(self.photo[i]), self.labels[i], self.sources[i], float(sims[j])))
            if len(out) == k:
                break
        return out

    def label_scores(
        self, feature: np.ndarray, scope: str | None = None, cfg: IdentifyConfig | None = None
    ) -> tuple[list[LabelScore], float]:
        from desktop_app.core.identify.gallery import fit_reference, score_labels

        cfg = cfg or IdentifyConfig()
        rows = self._rows()
        ref = fit_reference(
            self.vectors[rows],
            [self.labels[i] for i in rows],
            [self.sources[i] for i in rows],
            [str(self.photo[i]) for i in rows],
            cfg.ridge_lambda,
        )
        return score_labels(ref, feature, cfg.temperature, cfg.reject_similarity, cfg.ridge_temperature)


class _Runner(Protocol):
    """What ``_score_run`` drives: an Identifier, or one that hides the query from its gallery."""

    last_ranking: list[str]
    last_reject: float | None

    def run(self, image: Path, *, timings: dict[str, float] | None = None) -> Iterator[Event]: ...


class _LooIdentifier:
    """Runs an Identifier whose in-memory gallery hides the query photo itself."""

    def __init__(
        self, kb: Any, cfg: Config, mem: MemoryGallery, classifier: Any, photos: Sequence[Photo]
    ) -> None:
        from desktop_app.core.identify.flow import Identifier

        self.mem = mem
        self.index = {p.path: i for i, p in enumerate(photos)}
        self.inner = Identifier(kb, None, cfg, gallery=mem, classifier=classifier)

    @property
    def last_ranking(self) -> list[str]:
        return self.inner.last_ranking

    @property
    def last_reject(self) -> float | None:
        return self.inner.last_reject

    def run(self, image: Path, *, timings: dict[str, float] | None = None) -> Iterator[Event]:
        self.mem.exclude = self.index.get(image)
        try:
            yield from self.inner.run(image, timings=timings)
        finally:
            self.mem.exclude = None


def _rank(label: str, names: Sequence[str]) -> int | None:
    from desktop_app.core.identify.names import norm_name

    key = norm_name(label)
    for i, n in enumerate(names):
        if norm_name(n) == key:
            return i
    return None


def _detail(ph: Photo, res: Any, reject: float | None, correct: bool | None) -> dict[str, Any]:
    """One query photo's row of ``--details``: what was true, seen and decided, and why."""
    d = res.decision
    return {
        "photo": str(ph.path),
        "truth": ph.label,
        "in_gallery": correct is not None,
        "correct": correct,
        "level": res.confidence_level,
        "score": round(res.confidence_score, 3),
        "p_none": round(reject, 3) if reject is not None else None,
        "candidates": [f"{c.name} {c.score:.2f}" for c in res.candidates if c.source == "gallery"][:3],
        "decision": d.final_name if d else None,
        "guesses": d.guesses if d else [],
        "also_possible": d.also_possible if d else [],
        "reasoning": render_lines(d.reasoning) if d else str(res.error),  # the report's English
    }


def _score_run(
    ident: _Runner,
    photos: Sequence[Photo],
    gallery_labels: set[str],
    progress: Progress | None = None,
    details: bool = False,
) -> dict[str, Any]:
    """Run identify on every photo; aggregate accuracy, confidence and timing (and with
    ``details``, one row per photo)."""
    from desktop_app.core.identify.result import IdentifyResult
    from desktop_app.core.library.documents import ParseError

    known = {"n": 0, "top1_before": 0, "top3_before": 0, "top1_after": 0, "top3_after": 0, "uncertain": 0}
    levels_known: dict[str, list[bool]] = {"High": [], "Medium": [], "Low": []}  # correct at that level
    unknown: dict[str, Any] = {
        "n": 0, "low": 0, "uncertain": 0, "named": 0, "levels": {"High": 0, "Medium": 0, "Low": 0}
    }  # fmt: skip
    calib: list[tuple[float, bool]] = []
    times: list[float] = []
    cpu: list[float] = []
    stages: dict[str, list[float]] = {}  # Identifier.run's timings_ms, per stage
    failed: list[dict[str, str]] = []
    rows: list[dict[str, Any]] = []
    for i, ph in enumerate(photos):
        if progress:
            progress(i, len(photos), ph.path.name)
        t0, c0 = time.perf_counter(), time.process_time()
        stage_ms: dict[str, float] = {}
        try:
            events = list(ident.run(ph.path, timings=stage_ms))
        except ParseError as exc:
            failed.append({"photo": str(ph.path), "error": str(exc)})
            continue
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        res = IdentifyResult.from_events(events)
        if res.error:
            failed.append({"photo": str(ph.path), "error": str(res.error)})
            times.pop()
            cpu.pop()
            continue
        for stage, ms in stage_ms.items():
            stages.setdefault(stage, []).append(ms)
        gallery_names = [c.name for c in res.candidates if c.source == "gallery"]
        final = res.decision.final_name if res.decision is not None else ""
        if ph.label is not None and ph.label in gallery_labels:
            known["n"] += 1
            r = _rank(ph.label, gallery_names)
            known["top1_before"] += r == 0
            known["top3_before"] += r is not None and r < 3
            after = [final] if final and final != UNCERTAIN else []
            ranked = ident.last_ranking or gallery_names
            after += [n for n in ranked if n not in after]
            ra = _rank(ph.label, after)
            known["top1_after"] += bool(after) and final != UNCERTAIN and ra == 0
            known["top3_after"] += ra is not None and ra < 3
            known["uncertain"] += final == UNCERTAIN
            correct = r == 0
            levels_known[res.confidence_level].append(correct)
            calib.append((res.confidence_score, correct))
            right: bool | None = bool(after) and final != UNCERTAIN and ra == 0
        else:
            unknown["n"] += 1
            unknown["low"] += res.confidence_level == "Low"
            unknown["uncertain"] += final == UNCERTAIN
            unknown["named"] += final not in ("", UNCERTAIN)
            unknown["levels"][res.confidence_level] += 1
            calib.append((res.confidence_score, False))
            right = None
        if details:
            rows.append(_detail(ph, res, ident.last_reject, right))
    n = max(known["n"], 1)
    bins = [0.0, 0.2, 0.35, 0.5, 0.65, 0.8, 1.01]
    table = []
    for lo, hi in pairwise(bins):
        sel = [ok for s, ok in calib if lo <= s < hi]
        table.append(
            {"score": f"[{lo:.2f}, {min(hi, 1.0):.2f})", "n": len(sel), "correct": sum(sel),
             "accuracy": round(sum(sel) / len(sel), 3) if sel else None}
        )  # fmt: skip
    return {
        "queries_in_gallery": known["n"],
        "top1_before": round(known["top1_before"] / n, 3),
        "top3_before": round(known["top3_before"] / n, 3),
        "top1_after": round(known["top1_after"] / n, 3),
        "top3_after": round(known["top3_after"] / n, 3),
        "uncertain_rate": round(known["uncertain"] / n, 3),
        "low_confidence_rate": round(len(levels_known["Low"]) / n, 3),
        "levels_in_gallery": {k: {"n": len(v), "top1_correct": sum(v)} for k, v in levels_known.items()},
        "queries_not_in_gallery": unknown["n"],
        "not_in_gallery_low_rate": round(unknown["low"] / unknown["n"], 3) if unknown["n"] else None,
        "not_in_gallery_levels": unknown["levels"],
        # Photos of no gallery label that still got a gallery label's name (should be none).
        "not_in_gallery_named": unknown["named"],
        "calibration": table,
        "ms_per_image": round(statistics.mean(times), 1) if times else None,
        "ms_p50": round(statistics.median(times), 1) if times else None,
        "ms_p95": round(sorted(times)[int(0.95 * (len(times) - 1))], 1) if times else None,
        "cpu_ms_per_image": round(statistics.mean(cpu), 1) if cpu else None,
        # Median of each stage over the photos that reached it (retrieval only runs when needed).
        "stage_ms_p50": {k: round(statistics.median(v), 1) for k, v in stages.items()},
        "failed": failed,
        **({"details": rows} if details else {}),
    }


COVERAGES = ("all", "half", "none")
LABEL_FORMS = ("folder", "english", "latin", "chinese")
_LABEL_LINE = re.compile(r"\s*Gallery label:\s*([^\n]+?)\.?\s*$", re.I | re.M)


def _note_label(text: str) -> str | None:
    """The gallery label a note of the benchmark's notes folder declares ("Gallery label: x")."""
    m = _LABEL_LINE.search(text)
    return m.group(1).strip() if m else None


def _names_in_note(text: str) -> dict[str, str]:
    """The note's English (title before the brackets), Latin (in them) and Chinese names."""
    title = text.lstrip("# ").splitlines()[0] if text.strip() else ""
    english, _, rest = title.partition("(")
    zh = re.search(r"Chinese:\s*([^\s.（(。]+)", text)
    return {
        "english": english.strip(),
        "latin": rest.rstrip(") ").strip(),
        "chinese": zh.group(1) if zh else "",
    }


def prepare_notes(
    notes: Path,
    dest: Path,
    labels: Sequence[str],
    coverage: str = "all",
    label_form: str = "folder",
    outside: Collection[str] = (),
) -> tuple[list[Path], dict[str, str]]:
    """Copy the notes the run indexes into ``dest``; return them and each gallery label's name.

    ``coverage``: which of ``labels`` keep their note ("all", "half": every other label in sorted
    order, "none"); notes about species outside the gallery (no label, or in ``outside``: held out
    of the gallery) always stay, as in a real library.
    ``label_form``: name the gallery labels by their note's English, Latin or Chinese name instead
    of the folder name; the notes then lose their "Gallery label:" lines, so identification must
    link notes to labels by name alone. A note's label is read from that line (this data set's
    annotation), the one place the benchmark uses it."""
    files = sorted(p for p in notes.rglob("*") if p.suffix.lower() in (".md", ".txt"))
    texts = {p: p.read_text(encoding="utf-8") for p in files}
    owner = {p: _note_label(t) for p, t in texts.items()}
    ordered = sorted(lab for lab in labels if lab not in outside)
    keep = set(ordered if coverage == "all" else ordered[::2] if coverage == "half" else []) | set(outside)
    renamed = {lab: lab for lab in labels}
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    for p, text in texts.items():
        label = owner[p]
        if label in renamed and label_form != "folder":
            name = _names_in_note(text)[label_form].split("/")[0].strip() or label  # folder names have no "/"
            # Two folders whose notes share a name (grey and pale African greys) stay two labels.
            renamed[label] = name if name not in renamed.values() else f"{name} ({label})"
        if label in renamed and label not in keep:
            continue
        if label_form != "folder":
            text = _LABEL_LINE.sub("", text)
        target = dest / p.relative_to(notes)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        out.append(target)
    return out, renamed


def check_folders(gallery_dir: Path, images_dir: Path, split: int, leave_one_out: bool) -> str | None:
    """Why these folders cannot be benchmarked (None: they can)."""
    for d in (gallery_dir, images_dir):
        if not d.is_dir():
            return f"not a folder: {d}"
    if gallery_dir.resolve() == images_dir.resolve() and split <= 0 and not leave_one_out:
        return "--gallery and --images are the same folder: give --split N or --leave-one-out"
    return None


@contextlib.contextmanager
def _phase(make_task: Callable[[str], BenchTask], desc: str) -> Iterator[BenchTask]:
    task = make_task(desc)
    try:
        yield task
    finally:
        task.close()


def run_identify_bench(
    gallery_dir: Path,
    images_dir: Path,
    *,
    config: Config | None = None,
    split: int = 0,
    holdout: Sequence[str] = (),
    negatives: Sequence[Path] = (),
    notes: Path | None = None,
    leave_one_out: bool = False,
    limit: int = 0,
    threads: int = 0,
    coverage: str = "all",
    label_form: str = "folder",
    details: bool = False,
    make_task: Callable[[str], BenchTask] = _SilentTask,
) -> dict[str, Any]:
    """The report (see the module docstring) of the no-LLM identify flow on labelled folders.

    ``split`` N > 0 with one folder for both: the first N photos of each label are the gallery,
    the rest queries; ``holdout`` labels get no gallery photos (all theirs are queries: "not in
    gallery"); ``negatives`` are extra photos in no label; ``threads`` > 0 sets torch's thread
    count; ``limit`` keeps the first N queries; ``coverage`` and ``label_form``: see
    ``prepare_notes``; ``details``: one row per query photo. Raises ValueError when
    ``check_folders`` objects.
    """
    from desktop_app.core.desk import Desk
    from desktop_app.core.identify.classifier import get_classifier
    from desktop_app.core.identify.flow import Identifier
    from desktop_app.core.identify.gallery import GalleryHandler
    from desktop_app.core.identify.image_text import feature_model
    from desktop_app.core.library.documents import ParseError

    problem = check_folders(gallery_dir, images_dir, split, leave_one_out)
    if problem:
        raise ValueError(problem)
    held = {h for h in holdout if h}
    same = gallery_dir.resolve() == images_dir.resolve()
    g_all, q_all = labelled_photos(gallery_dir), labelled_photos(images_dir)
    gallery: list[Photo] = []
    queries: list[Photo] = []
    for label, files in g_all.items():
        take = files[:split] if same and split > 0 else files
        if same and split <= 0:
            take = files[:1]  # leave-one-out only: the split gallery is not used
        if label not in held:
            gallery += [Photo(f, label) for f in take]
    for label, files in q_all.items():
        rest = files[split:] if same and split > 0 else files
        if label in held and same:
            rest = files  # a held-out label has no gallery photos: all its photos are queries
        queries += [Photo(f, label) for f in rest]
    queries += [Photo(Path(p), None) for p in negatives]
    if limit:
        queries = queries[:limit]

    cfg = copy.deepcopy(config) if config is not None else Config()
    cfg.llm.backend = "none"  # the benchmark measures the no-LLM path
    if threads > 0:
        import torch

        torch.set_num_threads(threads)
    classifier = get_classifier()
    classifier.load()
    features = feature_model(cfg, None)  # an image-text model from models/ when one is selected
    report: dict[str, Any] = {
        "gallery_dir": str(gallery_dir),
        "images_dir": str(images_dir),
        "split": split,
        "notes_coverage": coverage if notes else None,
        "labels": label_form,
        "holdout": sorted(held),
        "gallery_photos": len(gallery),
        "gallery_labels": len({p.label for p in gallery}),
        "thresholds": {"high": cfg.identify.high, "medium": cfg.identify.medium},
    }
    with (
        tempfile.TemporaryDirectory(prefix="kdesk-bench-identify-") as tmp,
        tempfile.TemporaryDirectory(prefix="kdesk-bench-notes-") as notes_tmp,  # outside the data folder
        Desk(Path(tmp), cfg) as desk,
    ):
        kb = desk.kb
        names = {lab: lab for lab in {*g_all, *q_all}}
        if notes:
            copied, renamed = prepare_notes(
                Path(notes),
                Path(notes_tmp) / Path(notes).name,
                sorted(names),
                coverage,
                label_form,
                outside=held,
            )
            names.update(renamed)
            with _phase(make_task, "indexing notes") as task:
                report["notes_indexed"] = len(kb.add([copied[0].parent], task=task).added) if copied else 0
        gallery = [Photo(p.path, names[p.label] if p.label else None) for p in gallery]
        queries = [Photo(p.path, names[p.label] if p.label else None) for p in queries]
        handler = GalleryHandler(kb, classifier, features=features)
        report["features"] = features.name
        failed = []
        with _phase(make_task, "gallery") as task:
            for i, ph in enumerate(gallery):
                task.progress(i, len(gallery), ph.path.name)
                try:
                    handler.index(f"g{i}", ph.path, f"{ph.label}/{ph.path.name}", "shared")
                except ParseError as exc:
                    failed.append({"photo": str(ph.path), "error": str(exc)})
        report["gallery_failed"] = failed
        labels = {p.label for p in gallery if p.label}
        ident = Identifier(kb, None, cfg, gallery=handler, classifier=classifier)
        if not (same and split <= 0):  # same folder, no split: only leave-one-out makes sense
            with _phase(make_task, "identify") as task:
                report["split_run"] = _score_run(ident, queries, labels, task.progress, details)

        if leave_one_out:
            photos = [Photo(f, names[lab]) for lab, files in q_all.items() for f in files]
            feats, keep, owner = [], [], []
            for ph in photos:
                try:
                    views = features.embed_views(ph.path)  # the gallery's stored views
                except ParseError:
                    continue
                feats += list(views)
                owner += [len(keep)] * len(views)
                keep.append(ph)
            mem = MemoryGallery(
                np.stack(feats),
                [keep[i].label or "" for i in owner],
                [str(keep[i].path) for i in owner],
                owner,
                features,
            )
            loo = _LooIdentifier(kb, cfg, mem, classifier, keep)
            with _phase(make_task, "leave-one-out") as task:
                report["leave_one_out"] = _score_run(
                    loo, keep, {p.label for p in keep if p.label}, task.progress, details
                )
    return report


def format_report(report: dict[str, Any]) -> str:
    """The report as text for a terminal."""
    lines = [
        f"gallery: {report['gallery_photos']} photos, {report['gallery_labels']} labels"
        + (f" named by {report['labels']}" if report.get("labels", "folder") != "folder" else "")
        + (f"; held out: {', '.join(report['holdout'])}" if report["holdout"] else "")
        + (f"; notes for {report['notes_coverage']} of them" if report.get("notes_coverage") else "")
    ]
    for key in ("split_run", "leave_one_out"):
        r = report.get(key)
        if not r:
            continue
        lines += [
            f"\n{key}:",
            f"  in-gallery queries {r['queries_in_gallery']}: top-1 {r['top1_before']:.1%} ->"
            f" {r['top1_after']:.1%} after fallback; top-3 {r['top3_before']:.1%} -> {r['top3_after']:.1%};"
            f" low-confidence {r['low_confidence_rate']:.1%}; uncertain {r['uncertain_rate']:.1%}",
        ]
        if r["queries_not_in_gallery"]:
            lines.append(
                f"  not in gallery {r['queries_not_in_gallery']}: Low {r['not_in_gallery_low_rate']:.1%},"
                f" given a gallery label's name {r['not_in_gallery_named']}"
            )
        lines += [
            f"  ms per image {r['ms_per_image']} (p50 {r['ms_p50']}, p95 {r['ms_p95']};"
            f" cpu {r['cpu_ms_per_image']})",
            "  stage medians (ms): " + ", ".join(f"{k} {v}" for k, v in r["stage_ms_p50"].items()),
            "  calibration (top score -> top-1 accuracy, in-gallery and not):",
        ]
        for row in r["calibration"]:
            acc = "-" if row["accuracy"] is None else f"{row['accuracy']:.0%}"
            lines.append(f"    {row['score']:14s} n={row['n']:4d} correct={row['correct']:4d} {acc}")
        lines += [f"  failed: {f['photo']}: {f['error']}" for f in r["failed"]]
        for row in r.get("details", []):
            mark = {True: "ok   ", False: "WRONG", None: "none "}[row["correct"]]
            lines.append(
                f"  {mark} {Path(row['photo']).parent.name}/{Path(row['photo']).name}: truth {row['truth']}"
                f" -> {row['decision']} ({row['level']} {row['score']:.2f}, p_none {row['p_none']});"
                f" gallery {', '.join(row['candidates'])}"
            )
            if row["correct"] is not True:
                lines.append(f"        {row['reasoning']}")
    return "\n".join(lines)
