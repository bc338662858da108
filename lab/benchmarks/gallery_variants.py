"""Gallery variants on cached features: every photo of ../shared/data/images/parrots embedded once
(11 views x 3 poolings, ImageNet probabilities, colour shares), then each variant scored in seconds on
three protocols (docs/identify-benchmarks.md, "Levers tried for issue 34"):

- split: the first 2 photos of each label are the gallery, 4 labels held out (173 queries);
- loo: every photo against all the others (264; exact leave-one-photo-out of the ridge head);
- last: the last photo of each label against all the others (34; the conversations bench's photos).

    PYTHONPATH=. python lab/benchmarks/gallery_variants.py extract   # ~3.5 min on one thread
    PYTHONPATH=. python lab/benchmarks/gallery_variants.py eval      # the table, with paired tests
    PYTHONPATH=. python lab/benchmarks/gallery_variants.py splits    # the leaders with 2-5 photos per species

The product's own variant (ridge, lambda 2, gallery centre + mirror, query centre) reproduces
`kdesk bench identify` exactly (51.4% split, 64.0% leave-one-out).
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable
from math import comb
from pathlib import Path

import numpy as np

CACHE = Path("/tmp/gallery-h/feats.npz")
REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data" / "images"
VIEWS = ["c", "cm", "tl", "tr", "bl", "br", "sq", "sqm", "z", "w", "wm"]
HOLD = {"ara_severa", "cokatoo_alba", "cokatoo_palm", "love"}


def extract() -> None:
    """Embed every photo once: views c (centre crop, as the product), cm (its mirror), the four
    224 corners of the 256 resize, sq (square resize) and its mirror, z (short side 320, centre
    224), w (short side 224, centre 224) and its mirror; avg / max / GeM(3) pooling of the last map."""
    import torch
    from PIL import Image, ImageOps

    from desktop_app.core.identify.classifier import CROP, RESIZE, centre_crop, get_classifier, to_input
    from desktop_app.core.identify.colours import COLOUR_NAMES, colour_profile
    from desktop_app.core.library.images import load_image
    from desktop_app.core.library.parsers import IMAGE_SUFFIXES

    torch.set_num_threads(1)
    files = [
        (sub.name, f)
        for sub in sorted(p for p in (DATA / "parrots").iterdir() if p.is_dir())
        for f in sorted(f for f in sub.iterdir() if f.is_file() and f.suffix.lower() in IMAGE_SUFFIXES)
    ]
    files += [("__extra__", DATA / "coral" / n) for n in ("parrot.jpg", "owl.jpg", "bird.bmp")]
    model = get_classifier()._load()

    def short(img: Image.Image, side: int) -> Image.Image:
        w, h = img.size
        k = side / min(w, h)
        return img.resize(
            (max(CROP, round(w * k)), max(CROP, round(h * k))), Image.BILINEAR, reducing_gap=3.0
        )

    def centre(img: Image.Image) -> Image.Image:
        w, h = img.size
        left, top = (w - CROP) // 2, (h - CROP) // 2
        return img.crop((left, top, left + CROP, top + CROP))

    def views(img: Image.Image) -> list[Image.Image]:
        c = centre_crop(img)
        r = short(img, RESIZE)
        w, h = r.size
        corners = [
            r.crop((x, y, x + CROP, y + CROP))
            for x, y in ((0, 0), (w - CROP, 0), (0, h - CROP), (w - CROP, h - CROP))
        ]
        sq = img.resize((CROP, CROP), Image.BILINEAR, reducing_gap=3.0)
        wide = centre(short(img, CROP))
        return [
            c,
            ImageOps.mirror(c),
            *corners,
            sq,
            ImageOps.mirror(sq),
            centre(short(img, 320)),
            wide,
            ImageOps.mirror(wide),
        ]

    n = len(files)
    pools = {k: np.zeros((n, len(VIEWS), 1280), np.float32) for k in ("avg", "max", "gem")}
    probs = np.zeros((n, 1000), np.float32)
    shares = np.zeros((n, len(COLOUR_NAMES)), np.float32)
    ok = np.ones(n, bool)
    t0 = time.time()
    for i, (_label, f) in enumerate(files):
        try:
            img = load_image(f, min_side=RESIZE)
        except Exception:  # the one empty file of the set
            ok[i] = False
            continue
        vs = views(img)
        x = torch.from_numpy(np.stack([to_input(v) for v in vs])).contiguous(
            memory_format=torch.channels_last
        )
        with torch.inference_mode():
            fm = model.extract_features(x)
            avg = fm.mean(dim=(2, 3))
            p = torch.softmax(model._fc(avg[:1]), 1)
            top_p, top_i = p.topk(5, 1)
            w = torch.einsum("bk,bkc->bc", top_p, model._fc.weight[top_i])
            cam = torch.relu(torch.einsum("bc,bchw->bhw", w, fm[:1]))
            cam = cam / (cam.amax(dim=(1, 2), keepdim=True) + 1e-6)
        pools["avg"][i] = avg.numpy()
        pools["max"][i] = fm.amax(dim=(2, 3)).numpy()
        pools["gem"][i] = fm.clamp(min=1e-6).pow(3).mean(dim=(2, 3)).pow(1 / 3).numpy()
        probs[i] = p[0].numpy()
        prof = colour_profile(vs[0], cam[0].numpy())  # as the identify flow: the crop, the CAM as prior
        shares[i] = [prof.shares.get(c, 0.0) for c in COLOUR_NAMES]
        if i % 50 == 0:
            print(f"{i}/{n} {time.time() - t0:.0f} s", flush=True)
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    np.savez(
        CACHE, **pools, probs=probs, shares=shares, ok=ok,
        labels=np.array([lab for lab, _ in files]), paths=np.array([str(f) for _, f in files]),
    )  # fmt: skip


# ------------------------------------------------------------------------------------ evaluation
def l2(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64)
    return x / (np.linalg.norm(x, axis=-1, keepdims=True) + 1e-12)


class Data:
    def __init__(self) -> None:
        d = np.load(CACHE)
        self.d = d
        labels = d["labels"]
        self.rows = np.where(d["ok"] & (labels != "__extra__"))[0]
        self.names = sorted(set(labels[self.rows]))
        self.y = np.array([self.names.index(lab) for lab in labels[self.rows]])
        by: dict[int, list[int]] = {}
        for k, c in enumerate(self.y):
            by.setdefault(int(c), []).append(k)
        self.split = (
            [k for c, ks in by.items() if self.names[c] not in HOLD for k in ks[:2]],
            [k for c, ks in by.items() if self.names[c] not in HOLD for k in ks[2:]],
        )
        self.last = ([k for ks in by.values() for k in ks[:-1]], [ks[-1] for ks in by.values()])


def ridge_scores(
    gal: list[np.ndarray], y: np.ndarray, queries: np.ndarray, ncls: int, lam: float, loo: bool
) -> np.ndarray:
    """Kernel ridge as gallery.fit_reference (columns summing to 1). ``loo``: query k is photo k,
    scored with all its stored views removed (block inverse) and its label's column renormalised."""
    g = np.concatenate(gal)
    owner = np.concatenate([[k] * len(v) for k, v in enumerate(gal)])
    t = np.zeros((len(g), ncls))
    t[np.arange(len(g)), y[owner]] = 1.0
    cnt = t.sum(0)
    t /= np.where(cnt == 0, 1, cnt)
    if not loo:
        return queries @ g.T @ np.linalg.solve(g @ g.T + lam * np.eye(len(g)), t)
    b = np.linalg.inv(g @ g.T + lam * np.eye(len(g)))
    alpha = b @ t
    out = np.zeros((len(queries), ncls))
    for k in range(len(queries)):
        s, r = np.where(owner == k)[0], np.where(owner != k)[0]
        a2 = alpha[r] - b[np.ix_(r, s)] @ np.linalg.solve(b[np.ix_(s, s)], alpha[s])
        f = queries[k] @ g[r].T @ a2
        f[y[k]] *= cnt[y[k]] / (cnt[y[k]] - len(s))
        out[k] = f
    return out


def kernel_scores(
    gal: list[np.ndarray], y: np.ndarray, queries: np.ndarray, ncls: int, param: str, loo: bool
) -> np.ndarray:
    """Ridge with another kernel of the cosine similarity s: "exp:T" = exp((s - 1) / T), "pow:D" =
    s^D (lambda 1), "proto" = similarity to each label's mean vector (no ridge)."""
    kind, _, arg = param.partition(":")
    if kind == "proto":
        g = np.concatenate(gal)
        owner = np.concatenate([[k] * len(v) for k, v in enumerate(gal)])
        out = np.full((len(queries), ncls), -9.0)
        for c in np.unique(y[owner]):
            rows = owner[y[owner] == c]
            for k in range(len(queries)):
                keep = rows != k if loo else np.ones(len(rows), bool)
                if keep.any():
                    out[k, c] = float(queries[k] @ l2(g[y[owner] == c][keep].mean(0)))
        return out
    a = float(arg)
    kf = (lambda s: np.exp((s - 1) / a)) if kind == "exp" else (lambda s: s**a)
    g = np.concatenate(gal)
    owner = np.concatenate([[k] * len(v) for k, v in enumerate(gal)])
    t = np.zeros((len(g), ncls))
    t[np.arange(len(g)), y[owner]] = 1.0
    cnt = t.sum(0)
    t /= np.where(cnt == 0, 1, cnt)
    b = np.linalg.inv(kf(g @ g.T) + np.eye(len(g)))
    kq = kf(queries @ g.T)
    if not loo:
        return kq @ b @ t
    alpha = b @ t
    out = np.zeros((len(queries), ncls))
    for k in range(len(queries)):
        s, r = np.where(owner == k)[0], np.where(owner != k)[0]
        a2 = alpha[r] - b[np.ix_(r, s)] @ np.linalg.solve(b[np.ix_(s, s)], alpha[s])
        f = kq[k, r] @ a2
        f[y[k]] *= cnt[y[k]] / (cnt[y[k]] - len(s))
        out[k] = f
    return out


def nn_scores(
    gal: list[np.ndarray], y: np.ndarray, queries: np.ndarray, ncls: int, top: int, loo: bool
) -> np.ndarray:
    """Mean of the ``top`` best similarities per label (1: the nearest photo)."""
    g = np.concatenate(gal)
    owner = np.concatenate([[k] * len(v) for k, v in enumerate(gal)])
    sims = queries @ g.T
    if loo:
        sims[owner[None, :] == np.arange(len(queries))[:, None]] = -9.0
    out = np.full((len(queries), ncls), -9.0)
    for c in np.unique(y[owner]):
        m = -np.sort(-sims[:, y[owner] == c], axis=1)
        out[:, c] = m[:, :top].mean(1)
    return out


Variant = tuple[str, Callable[[int], np.ndarray], Callable[[int], np.ndarray], str, float]


def run(data: Data, variant: Variant) -> dict[str, np.ndarray]:
    """-> protocol -> per-query correctness (top-1) and top-3."""
    _name, gal_fn, q_fn, method, param = variant
    n, ncls = len(data.rows), len(data.names)
    gal = [gal_fn(k) for k in range(n)]
    qs = np.stack([q_fn(k) for k in range(n)])
    score = {"ridge": ridge_scores, "nn": nn_scores, "kernel": kernel_scores}[method]
    out = {}
    for proto, (g, q) in (("split", data.split), ("last", data.last)):
        s = score([gal[k] for k in g], data.y[g], qs[q], ncls, param, False)
        s[:, [c for c in range(ncls) if c not in set(data.y[g])]] = -1e9  # labels without photos
        order = np.argsort(-s, 1)
        out[proto] = np.stack([order[:, 0] == data.y[q], (order[:, :3] == data.y[q][:, None]).any(1)])
    s = score(gal, data.y, qs, ncls, param, True)
    order = np.argsort(-s, 1)
    out["loo"] = np.stack([order[:, 0] == data.y, (order[:, :3] == data.y[:, None]).any(1)])
    return out


def paired(a: np.ndarray, b: np.ndarray) -> tuple[int, int, float]:
    """Exact McNemar test of two correctness vectors: (b right where a wrong, the reverse, p)."""
    bw, aw = int((~a & b).sum()), int((a & ~b).sum())
    m = aw + bw
    p = 1.0 if m == 0 else min(1.0, 2 * sum(comb(m, i) for i in range(min(aw, bw) + 1)) / 2**m)
    return bw, aw, p


def variants(data: Data) -> list[Variant]:
    d, rows = data.d, data.rows
    avg, mx, gem = d["avg"], d["max"], d["gem"]
    vi = {v: i for i, v in enumerate(VIEWS)}

    def gal(pool: np.ndarray, views: tuple[str, ...] | list[str], fn=lambda x: x):
        return lambda k: l2(fn(pool[rows[k], [vi[v] for v in views]]))

    def query(pool: np.ndarray, views: tuple[str, ...] = ("c",), fn=lambda x: x):
        return lambda k: l2(l2(fn(pool[rows[k], [vi[v] for v in views]])).mean(0))

    def concat(pools: list[np.ndarray], views: tuple[str, ...], fn=lambda x: x):
        return lambda k: (
            np.hstack([l2(fn(p[rows[k], [vi[v] for v in views]])) for p in pools]) / np.sqrt(len(pools))
        )

    def with_extra(extra: np.ndarray, weight: float, views: tuple[str, ...]):
        return lambda k: (
            np.hstack(
                [
                    l2(avg[rows[k], [vi[v] for v in views]]),
                    np.repeat(weight * l2(extra[rows[k]])[None], len(views), 0),
                ]
            )
            / np.sqrt(1 + weight**2)
        )

    cm = ("c", "cm")
    sq = np.sqrt
    centre = l2(avg[rows, 0]).mean(0)
    out: list[Variant] = [
        ("product: ridge l=2, gallery c+cm, query c", gal(avg, cm), query(avg), "ridge", 2.0),
        ("nearest photo per label (version 1)", gal(avg, cm), query(avg), "nn", 1),
        ("top-2 mean similarity per label", gal(avg, cm), query(avg), "nn", 2),
        ("top-3 mean similarity per label", gal(avg, cm), query(avg), "nn", 3),
        ("label mean vector (prototype)", gal(avg, cm), query(avg), "kernel", "proto"),
        ("kernel exp((s-1)/0.2), l=1", gal(avg, cm), query(avg), "kernel", "exp:0.2"),
        ("kernel exp((s-1)/0.4), l=1", gal(avg, cm), query(avg), "kernel", "exp:0.4"),
        ("kernel s^2, l=1", gal(avg, cm), query(avg), "kernel", "pow:2"),
        ("centred (minus the mean photo)", gal(avg, cm, lambda x: l2(x) - centre), query(avg, fn=lambda x: l2(x) - centre), "ridge", 2.0),
        ("GeM (p=3) pooling", gal(gem, cm), query(gem), "ridge", 2.0),
        ("max pooling", gal(mx, cm), query(mx), "ridge", 2.0),
        ("avg + max concatenated", concat([avg, mx], cm), concat([avg, mx], ("c",)), "ridge", 2.0),
        ("avg + GeM concatenated", concat([avg, gem], cm), concat([avg, gem], ("c",)), "ridge", 2.0),
        ("gallery 11 views, query c", gal(avg, VIEWS), query(avg), "ridge", 2.0),
        ("gallery 11 views, query c, l=5", gal(avg, VIEWS), query(avg), "ridge", 5.0),
        ("query mean(c, cm): 2 passes", gal(avg, cm), query(avg, cm), "ridge", 2.0),
        ("query mean(c, 4 corners): 5 passes", gal(avg, cm), query(avg, ("c", "tl", "tr", "bl", "br")), "ridge", 2.0),
        ("query mean(c, cm, w, wm, sq): 5 passes", gal(avg, cm), query(avg, ("c", "cm", "w", "wm", "sq")), "ridge", 2.0),
        ("gallery c,cm,w,wm, query c", gal(avg, ("c", "cm", "w", "wm")), query(avg), "ridge", 2.0),
        ("gallery 11 views, query mean of 11: 11 passes", gal(avg, VIEWS), query(avg, tuple(VIEWS)), "ridge", 2.0),
        ("power norm sqrt", gal(avg, cm, sq), query(avg, fn=sq), "ridge", 2.0),
        ("power norm x^0.3", gal(avg, cm, lambda x: x**0.3), query(avg, fn=lambda x: x**0.3), "ridge", 2.0),
        ("power norm x^0.7", gal(avg, cm, lambda x: x**0.7), query(avg, fn=lambda x: x**0.7), "ridge", 2.0),
        ("sqrt, l=5", gal(avg, cm, sq), query(avg, fn=sq), "ridge", 5.0),
        ("sqrt, query mean(c, cm): 2 passes", gal(avg, cm, sq), query(avg, cm, sq), "ridge", 2.0),
        ("sqrt, gallery 11 views, query c", gal(avg, VIEWS, sq), query(avg, fn=sq), "ridge", 2.0),
        ("sqrt, gallery c,cm + 4 corners, query c", gal(avg, ("c", "cm", "tl", "tr", "bl", "br"), sq), query(avg, fn=sq), "ridge", 2.0),
        ("sqrt, gallery c,cm,z,w,wm, query c", gal(avg, ("c", "cm", "z", "w", "wm"), sq), query(avg, fn=sq), "ridge", 2.0),
        ("sqrt, gallery c,cm,w,wm, query mean(c, w): 2 passes", gal(avg, ("c", "cm", "w", "wm"), sq), query(avg, ("c", "w"), sq), "ridge", 2.0),
        ("sqrt max pooling", gal(mx, cm, sq), query(mx, fn=sq), "ridge", 2.0),
        ("colour shares (11) concatenated x0.3", with_extra(d["shares"], 0.3, cm), with_extra(d["shares"], 0.3, ("c",)), "ridge", 2.0),
        ("colour shares (11) concatenated x0.6", with_extra(d["shares"], 0.6, cm), with_extra(d["shares"], 0.6, ("c",)), "ridge", 2.0),
        ("sqrt ImageNet probabilities concatenated x0.3", with_extra(np.sqrt(d["probs"]), 0.3, cm), with_extra(np.sqrt(d["probs"]), 0.3, ("c",)), "ridge", 2.0),
    ]  # fmt: skip
    return [
        (n, lambda k, g=g: g(k), (lambda k, q=q: q(k)[0] if q(k).ndim > 1 else q(k)), m, p)
        for n, g, q, m, p in out
    ]


def notes_fusion(
    data: Data, base: dict[str, np.ndarray], beta: float, top: int, notes: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Ridge log-probabilities (temperature 0.0075) + beta x the notes' colour fit (specific.py),
    among the ridge's ``top`` labels."""
    from desktop_app.core.identify.specific import fit_of

    shares = data.d["shares"].astype(np.float64)[data.rows]
    fit = np.array([[fit_of(s, notes[n]) if n in notes else np.nan for n in data.names] for s in shares])
    fit = np.where(np.isnan(fit), np.nanmean(fit, 1, keepdims=True), fit)
    avg = data.d["avg"]
    gal = [l2(avg[data.rows[k], [0, 1]]) for k in range(len(data.rows))]
    qs = l2(avg[data.rows, 0])
    ncls = len(data.names)

    def post(s: np.ndarray, ks) -> np.ndarray:
        logit = s / 0.0075
        logit = logit - logit.max(1, keepdims=True) + beta * fit[ks]
        keep = np.argsort(-s, 1)[:, :top]
        mask = np.zeros_like(s, bool)
        np.put_along_axis(mask, keep, True, 1)
        return np.where(mask, logit, -1e9)

    out = {}
    for proto, (g, q) in (("split", data.split), ("last", data.last)):
        s = ridge_scores([gal[k] for k in g], data.y[g], qs[q], ncls, 2.0, False)
        s[:, [c for c in range(ncls) if c not in set(data.y[g])]] = -1e3
        order = np.argsort(-post(s, q), 1)
        out[proto] = np.stack([order[:, 0] == data.y[q], (order[:, :3] == data.y[q][:, None]).any(1)])
    s = ridge_scores(gal, data.y, qs, ncls, 2.0, True)
    order = np.argsort(-post(s, np.arange(len(qs))), 1)
    out["loo"] = np.stack([order[:, 0] == data.y, (order[:, :3] == data.y[:, None]).any(1)])
    return out


def evaluate() -> None:
    from desktop_app.core.identify.specific import colour_text, colour_weights

    data = Data()
    results = [(v[0], run(data, v)) for v in variants(data)]
    repo = {}
    for f in (REPO / "knowledge" / "parrots").glob("*.md"):
        text = f.read_text(encoding="utf-8")
        m = re.search(r"Gallery label:\s*(\S+?)\.?\s*$", text, re.M)
        if m:
            repo[m.group(1)] = colour_weights(colour_text(text))
    facts = json.loads(
        (REPO / "desktop_app" / "bench" / "conversation_species.json").read_text(encoding="utf-8")
    )
    written = {s["folder"]: colour_weights(s["colours_en"]) for s in facts["species"] if s.get("folder")}
    base = results[0][1]
    for notes_name, notes in (("repo notes", repo), ("written pages", written)):
        for beta in (1.0, 3.0):
            for top in (3, len(data.names)):
                name = f"ridge + {beta:g} x colour fit of the {notes_name}, top-{top}"
                results.append((name, notes_fusion(data, base, beta, top, notes)))
    print(
        "| variant | split top-1 / top-3 | paired vs product | LOO top-1 / top-3 | paired | last top-1 / top-3 | paired |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, r in results:
        cells = []
        for proto in ("split", "loo", "last"):
            c1, c3 = r[proto]
            won, lost, p = paired(base[proto][0], c1)
            cells += [f"{c1.mean() * 100:.1f} / {c3.mean() * 100:.1f}", f"+{won} -{lost}, p {p:.2f}"]
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


def by_split_size() -> None:
    """Top-1 of the leading candidates with 2-5 reference photos per species (split N)."""
    data = Data()
    named = {v[0]: v for v in variants(data)}
    pick = [
        "product: ridge l=2, gallery c+cm, query c",
        "power norm sqrt",
        "sqrt, gallery 11 views, query c",
        "sqrt, gallery c,cm,z,w,wm, query c",
        "sqrt, gallery c,cm + 4 corners, query c",
        "max pooling",
        "sqrt max pooling",
    ]
    by: dict[int, list[int]] = {}
    for k, c in enumerate(data.y):
        by.setdefault(int(c), []).append(k)
    got = {}
    for n in (2, 3, 4, 5):
        kept = [(c, ks) for c, ks in by.items() if data.names[c] not in HOLD]
        data.split = ([k for _, ks in kept for k in ks[:n]], [k for _, ks in kept for k in ks[n:]])
        for name in pick:
            got[n, name] = run(data, named[name])["split"][0]
    for name in pick:
        cells = []
        for n in (2, 3, 4, 5):
            won, lost, p = paired(got[n, pick[0]], got[n, name])
            cells.append(
                f"{got[n, name].mean() * 100:.1f} (n={len(got[n, name])}, +{won} -{lost}, p {p:.2f})"
            )
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    {"extract": extract, "eval": evaluate, "splits": by_split_size}[
        sys.argv[1] if len(sys.argv) > 1 else "eval"
    ]()
