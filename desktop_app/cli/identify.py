"""`kdesk identify IMAGE` and `kdesk bench identify --gallery DIR --images DIR`."""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from desktop_app.cli.argtypes import non_negative_int
from desktop_app.cli.bench import common_parent, get_bench_subparsers


def register(subparsers: argparse._SubParsersAction) -> None:
    from desktop_app.cli.ask import add_llm_flags

    p = subparsers.add_parser(
        "identify", parents=[common_parent()], help="identify a photo with the knowledge base's help"
    )
    p.add_argument("image", help="a photo (jpg, png, bmp, webp, gif, tiff)")
    p.add_argument("--question", default=None, help="what you want to know about it")
    p.add_argument("--scope", default=None, help="also use this assistant's scope")
    add_llm_flags(p)
    p.set_defaults(func=cmd_identify)

    b = get_bench_subparsers(subparsers).add_parser(
        "identify",
        parents=[common_parent()],
        help="top-1/top-3 before and after fallback, low-confidence rate, ms per image",
    )
    b.add_argument("--gallery", required=True, help="reference photos: one sub-folder per label")
    b.add_argument("--images", required=True, help="query photos: one sub-folder per label")
    b.add_argument(
        "--split",
        type=non_negative_int,
        default=0,
        metavar="N",
        help="when --gallery and --images are the same folder: the first N photos of each label are "
        "the gallery, the rest are queries",
    )
    b.add_argument(
        "--holdout",
        default="",
        metavar="LABELS",
        help="comma-separated labels left out of the gallery: their photos measure 'not in gallery'",
    )
    b.add_argument(
        "--negatives", nargs="*", default=[], help="extra photos that are in no label (e.g. an owl)"
    )
    b.add_argument("--notes", default=None, help="folder of species notes indexed as the knowledge base")
    b.add_argument("--leave-one-out", action="store_true", help="also: every photo against all the others")
    b.add_argument("--limit", type=non_negative_int, default=0, help="at most this many query photos (quick runs)")
    b.add_argument("--threads", type=non_negative_int, default=0, help="torch threads (default: the classifier's choice)")
    b.set_defaults(func=cmd_bench_identify)


# ---------------------------------------------------------------------------- identify
def cmd_identify(args: argparse.Namespace) -> int:
    from desktop_app.cli.ask import open_with_llm
    from desktop_app.cli.main import emit_json, eprint
    from desktop_app.core.identify.flow import Identifier, IdentifyResult

    cfg, choice, kb = open_with_llm(args)
    try:
        ident = Identifier(kb, choice.model, cfg)
        result = IdentifyResult.from_events(list(ident.run(Path(args.image), args.question, args.scope)))
    finally:
        kb.close()
        if choice.model is not None:
            choice.model.close()
    if result.error:
        eprint(f"error: {result.error}")
        if args.json:
            emit_json(result.to_dict())
        return 1
    for w in result.warnings:
        eprint(f"warning: {w}")
    if args.json:
        emit_json(result.to_dict())
        return 0
    print(f"confidence: {result.confidence_level} ({result.confidence_score:.0%})")
    for c in result.candidates:
        print(f"  {c['score']:6.1%}  {c['name']}  [{c['source']}]")
    print(f"seen: {result.visual_description}")
    if result.feature_queries:
        print("feature queries:")
        for q in result.feature_queries:
            print(f"  - {q}")
    print(f"\n{result.answer}")
    for i, h in enumerate(result.hits, 1):
        print(f"  [{i}] {h.source}" + (f", page {h.page}" if h.page else ""))
    return 0


# ---------------------------------------------------------------------------- bench
@dataclass
class Photo:
    path: Path
    label: str | None  # None: in no label (a negative)


def labelled_photos(folder: Path) -> dict[str, list[Path]]:
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
        self, features: np.ndarray, labels: Sequence[str], sources: Sequence[str], photo: Sequence[int]
    ) -> None:
        self.features = features
        self.labels = list(labels)
        self.sources = list(sources)
        self.photo = np.asarray(photo)  # which photo each row (view) belongs to
        self.exclude: int | None = None

    def _rows(self) -> np.ndarray:
        return np.nonzero(self.photo != (-1 if self.exclude is None else self.exclude))[0]

    def nearest(self, feature: np.ndarray, k: int = 10, scope: str | None = None):
        from desktop_app.core.identify.gallery import GalleryMatch

        rows = self._rows()
        sims = self.features[rows] @ np.asarray(feature, dtype=np.float32)
        out, seen = [], set()
        for j in np.argsort(-sims):
            i = rows[j]
            if self.photo[i] not in seen:
                seen.add(self.photo[i])
                out.append(GalleryMatch(str(self.photo[i]), self.labels[i], self.sources[i], float(sims[j])))
            if len(out) == k:
                break
        return out

    def label_scores(self, feature: np.ndarray, scope: str | None = None, cfg: Any = None):
        from desktop_app.core.identify.gallery import fit_reference, score_labels

        rows = self._rows()
        ref = fit_reference(
            self.features[rows],
            [self.labels[i] for i in rows],
            [self.sources[i] for i in rows],
            [str(self.photo[i]) for i in rows],
            cfg.ridge_lambda,
        )
        return score_labels(ref, feature, cfg.temperature, cfg.reject_similarity, cfg.ridge_temperature)


def _rank(label: str, names: Sequence[str]) -> int | None:
    from desktop_app.core.identify.flow import norm_name

    key = norm_name(label)
    for i, n in enumerate(names):
        if norm_name(n) == key:
            return i
    return None


def _score_run(ident, photos: Sequence[Photo], gallery_labels: set[str], progress=None) -> dict[str, Any]:
    """Run identify on every photo; aggregate accuracy, confidence and timing."""
    from desktop_app.core.identify.flow import IdentifyResult
    from desktop_app.core.library.documents import ParseError

    known = {"n": 0, "top1_before": 0, "top3_before": 0, "top1_after": 0, "top3_after": 0, "uncertain": 0}
    levels_known: dict[str, list[bool]] = {"High": [], "Medium": [], "Low": []}  # correct at that level
    unknown = {"n": 0, "low": 0, "uncertain": 0, "levels": {"High": 0, "Medium": 0, "Low": 0}}
    calib: list[tuple[float, bool]] = []
    times: list[float] = []
    cpu: list[float] = []
    stages: dict[str, list[float]] = {}  # Identifier.run's timings_ms, per stage
    failed: list[dict[str, str]] = []
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
            failed.append({"photo": str(ph.path), "error": res.error})
            times.pop()
            cpu.pop()
            continue
        for stage, ms in stage_ms.items():
            stages.setdefault(stage, []).append(ms)
        gallery_names = [c["name"] for c in res.candidates if c["source"] == "gallery"]
        final = res.decision.get("final_name", "")
        if ph.label is not None and ph.label in gallery_labels:
            known["n"] += 1
            r = _rank(ph.label, gallery_names)
            known["top1_before"] += r == 0
            known["top3_before"] += r is not None and r < 3
            after = [final] if final and final != "uncertain" else []
            ranked = getattr(ident, "last_ranking", None) or gallery_names
            after += [n for n in ranked if n not in after]
            ra = _rank(ph.label, after)
            known["top1_after"] += bool(after) and final != "uncertain" and ra == 0
            known["top3_after"] += ra is not None and ra < 3
            known["uncertain"] += final == "uncertain"
            correct = r == 0
            levels_known[res.confidence_level].append(correct)
            calib.append((res.confidence_score, correct))
        else:
            unknown["n"] += 1
            unknown["low"] += res.confidence_level == "Low"
            unknown["uncertain"] += final == "uncertain"
            unknown["levels"][res.confidence_level] += 1
            calib.append((res.confidence_score, False))
    n = max(known["n"], 1)
    bins = [0.0, 0.2, 0.35, 0.5, 0.65, 0.8, 1.01]
    table = []
    for lo, hi in zip(bins, bins[1:]):
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
        "calibration": table,
        "ms_per_image": round(statistics.mean(times), 1) if times else None,
        "ms_p50": round(statistics.median(times), 1) if times else None,
        "ms_p95": round(sorted(times)[int(0.95 * (len(times) - 1))], 1) if times else None,
        "cpu_ms_per_image": round(statistics.mean(cpu), 1) if cpu else None,
        # Median of each stage over the photos that reached it (retrieval only runs when needed).
        "stage_ms_p50": {k: round(statistics.median(v), 1) for k, v in stages.items()},
        "failed": failed,
    }


def cmd_bench_identify(args: argparse.Namespace) -> int:
    from desktop_app.cli.main import CliTask, emit_json, eprint, load_cfg
    from desktop_app.core.identify.classifier import get_classifier
    from desktop_app.core.identify.flow import Identifier
    from desktop_app.core.identify.gallery import GalleryHandler
    from desktop_app.core.library.documents import ParseError
    from desktop_app.core.library.knowledge import KnowledgeBase

    gdir, qdir = Path(args.gallery), Path(args.images)
    for d in (gdir, qdir):
        if not d.is_dir():
            eprint(f"error: not a folder: {d}")
            return 2
    holdout = {h.strip() for h in args.holdout.split(",") if h.strip()}
    same = gdir.resolve() == qdir.resolve()
    if same and args.split <= 0 and not args.leave_one_out:
        eprint("error: --gallery and --images are the same folder: give --split N or --leave-one-out")
        return 2
    g_all, q_all = labelled_photos(gdir), labelled_photos(qdir)
    gallery: list[Photo] = []
    queries: list[Photo] = []
    for label, files in g_all.items():
        take = files[: args.split] if same and args.split > 0 else files
        if same and args.split <= 0:
            take = files[:1]  # leave-one-out only: the split gallery is not used
        if label not in holdout:
            gallery += [Photo(f, label) for f in take]
    for label, files in q_all.items():
        rest = files[args.split :] if same and args.split > 0 else files
        if label in holdout and same:
            rest = files  # a held-out label has no gallery photos: all its photos are queries
        queries += [Photo(f, label) for f in rest]
    queries += [Photo(Path(p), None) for p in args.negatives]
    if args.limit:
        queries = queries[: args.limit]

    cfg = load_cfg(args)
    cfg.llm.backend = "none"  # the benchmark measures the no-LLM path
    if args.threads > 0:
        import torch

        torch.set_num_threads(args.threads)
    classifier = get_classifier()
    classifier.load()
    report: dict[str, Any] = {
        "gallery_dir": str(gdir),
        "images_dir": str(qdir),
        "split": args.split,
        "holdout": sorted(holdout),
        "gallery_photos": len(gallery),
        "gallery_labels": len({p.label for p in gallery}),
        "thresholds": {"high": cfg.identify.high, "medium": cfg.identify.medium},
    }
    with tempfile.TemporaryDirectory(prefix="kdesk-bench-identify-") as tmp:
        kb = KnowledgeBase(Path(tmp), config=cfg)
        try:
            if args.notes:
                task = CliTask("indexing notes")
                try:
                    rep = kb.add([Path(args.notes)], task=task)
                finally:
                    task.close()
                report["notes_indexed"] = len(rep.added)
            handler = GalleryHandler(kb, classifier)
            task = CliTask("gallery")
            failed = []
            for i, ph in enumerate(gallery):
                task.progress(i, len(gallery), ph.path.name)
                try:
                    handler.index(f"g{i}", ph.path, f"{ph.label}/{ph.path.name}", "shared")
                except ParseError as exc:
                    failed.append({"photo": str(ph.path), "error": str(exc)})
            task.close()
            report["gallery_failed"] = failed
            labels = {p.label for p in gallery if p.label}
            ident = Identifier(kb, None, cfg, gallery=handler, classifier=classifier)
            if not (same and args.split <= 0):  # same folder, no split: only leave-one-out makes sense
                task = CliTask("identify")
                try:
                    report["split_run"] = _score_run(ident, queries, labels, task.progress)
                finally:
                    task.close()

            if args.leave_one_out:
                photos = [Photo(f, lab) for lab, files in q_all.items() for f in files]
                feats, keep, owner = [], [], []
                for ph in photos:
                    try:
                        views = classifier.embed_views(ph.path)  # the gallery's stored views
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
                )
                loo = _LooIdentifier(kb, cfg, mem, classifier, keep)
                task = CliTask("leave-one-out")
                try:
                    report["leave_one_out"] = _score_run(loo, keep, {p.label for p in keep}, task.progress)
                finally:
                    task.close()
        finally:
            kb.close()
    if args.json:
        emit_json(report)
    else:
        _print_bench(report)
    return 0


class _LooIdentifier:
    """Runs an Identifier whose in-memory gallery hides the query photo itself."""

    def __init__(self, kb, cfg, mem: MemoryGallery, classifier, photos: Sequence[Photo]) -> None:
        from desktop_app.core.identify.flow import Identifier

        self.mem = mem
        self.index = {p.path: i for i, p in enumerate(photos)}
        self.inner = Identifier(kb, None, cfg, gallery=mem, classifier=classifier)

    @property
    def last_ranking(self):
        return self.inner.last_ranking

    def run(self, path: Path, timings: dict[str, float] | None = None):
        self.mem.exclude = self.index.get(path)
        try:
            yield from self.inner.run(path, timings=timings)
        finally:
            self.mem.exclude = None


def _print_bench(report: dict[str, Any]) -> None:
    print(
        f"gallery: {report['gallery_photos']} photos, {report['gallery_labels']} labels"
        + (f"; held out: {', '.join(report['holdout'])}" if report["holdout"] else "")
    )
    for key in ("split_run", "leave_one_out"):
        r = report.get(key)
        if not r:
            continue
        print(f"\n{key}:")
        print(
            f"  in-gallery queries {r['queries_in_gallery']}: top-1 {r['top1_before']:.1%} -> {r['top1_after']:.1%}"
            f" after fallback; top-3 {r['top3_before']:.1%} -> {r['top3_after']:.1%};"
            f" low-confidence {r['low_confidence_rate']:.1%}; uncertain {r['uncertain_rate']:.1%}"
        )
        if r["queries_not_in_gallery"]:
            print(f"  not in gallery {r['queries_not_in_gallery']}: Low {r['not_in_gallery_low_rate']:.1%}")
        print(
            f"  ms per image {r['ms_per_image']} (p50 {r['ms_p50']}, p95 {r['ms_p95']}; cpu {r['cpu_ms_per_image']})"
        )
        print("  stage medians (ms): " + ", ".join(f"{k} {v}" for k, v in r["stage_ms_p50"].items()))
        print("  calibration (top score -> top-1 accuracy, in-gallery and not):")
        for row in r["calibration"]:
            acc = "-" if row["accuracy"] is None else f"{row['accuracy']:.0%}"
            print(f"    {row['score']:14s} n={row['n']:4d} correct={row['correct']:4d} {acc}")
        for f in r["failed"]:
            print(f"  failed: {f['photo']}: {f['error']}")
