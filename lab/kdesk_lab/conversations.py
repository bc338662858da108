"""`kdesk bench conversations`: the photo-then-questions flow, scored turn by turn.

A species knowledge base is written in one of several styles into a temporary data folder, with
reference photos (``../shared/data/images/parrots``, one folder per species; the last photo of each
is held out as the query) or without them, and scripted conversations run through the app's own
``Assistant.identify`` / ``Assistant.ask`` in one ``Conversation`` each, with no language model:

- ``photo``: a photo, then "where does it live?", "how big is it?", "what does it eat?";
- ``text``: a question naming the species, then two follow-ups;
- ``switch``: a question in one language, a follow-up in the other, one back;
- ``second-photo``: a photo and a question, then another species' photo and a question (the new
  photo must replace the subject);
- ``single``: one question each: the name for a Latin name, and where it lives asked in the other
  language than the page's.

Styles (each reported apart; none is a rewrite of another by a script):
- ``repo``: the repository's own ``knowledge/parrots`` notes (bold labelled fields, English);
- ``zh-fields``: Chinese field lists (``# 中文名`` + ``- 英文名：`` / ``- 学名：`` / ``- 分布：`` /
  ``- 体长：`` / ``- 食性：`` / ``- 羽色：``);
- ``prose``: English paragraphs.
The last two are rendered from ``conversation_species.json``, facts written for this benchmark from
another source than the repository's notes; some species' pages say nothing of the diet, so "what
does it eat?" must be answered "not in the notes" there (the repository's notes never give it).

Per turn: ``subject`` (the follow-up's search, or the conversation's subject after a photo, names
the expected species), ``cited`` (its page is among the citations), ``gold`` (the answer holds the
page's fact: the range, the size, the diet, the colours, the species' name; for a fact the page
lacks, the answer says so). Reported per style and question language.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from desktop_app.core.config import Config

STYLES = ("repo", "zh-fields", "prose")
SCRIPTS = ("photo", "text", "switch", "second-photo", "single")
FACTS = ("where", "size", "diet", "colour", "name", "species")
DATA = Path(__file__).with_name("conversation_species.json")
REPO_NOTES = Path(__file__).resolve().parents[2] / "knowledge" / "parrots"
# The answer says the notes lack it: a refusal, or the extractive path's "the notes ... do not say".
_NOT_SAID = re.compile(
    r"do(?:es)? not say|don't say|not in (?:the|your) (?:notes|documents)|do not seem to answer|"
    r"没有(?:提到|说|写)|未(?:提及|说明|提到)|似乎没有回答",
    re.I,
)


@dataclass
class Species:
    """One species' page in a style: its file, its names and the facts its page gives."""

    key: str
    folder: str | None  # photo folder under images/parrots
    doc: str = ""  # the page, relative to the knowledge folder
    title: str = ""  # the page's title (what a name question must answer)
    names: list[str] = field(default_factory=list)  # any of these names the species
    facts: dict[str, str | None] = field(default_factory=dict)  # fact -> gold text (None: not on the page)
    latin: str = ""
    en: str = ""
    zh: str = ""


@dataclass
class Turn:
    kind: str  # "photo" | "ask"
    text: str  # the question, or the photo's path
    lang: str  # "en" | "zh" (a photo turn: the conversation's language)
    subject: str  # the species key this turn is about
    fact: str  # one of FACTS


@dataclass
class Script:
    name: str
    lang: str
    turns: list[Turn]


@dataclass
class TurnResult:
    style: str
    script: str
    lang: str
    turn: int
    kind: str
    fact: str
    subject_key: str
    text: str
    searched: str
    answer: str
    cited: list[str]
    subject_ok: bool
    cited_ok: bool
    gold_ok: bool
    expect_not_said: bool
    refused: bool
    ms: float


@dataclass
class ConversationsResult:
    photos: str
    limit: int | None
    load_start: list[float]
    load_end: list[float] = field(default_factory=list)
    seconds: float = 0.0
    turns: list[TurnResult] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "photos": self.photos,
            "limit": self.limit,
            "load_start": self.load_start,
            "load_end": self.load_end,
            "seconds": round(self.seconds, 1),
            "summary": summarise(self.turns),
            "turns": [asdict(t) for t in self.turns],
        }


# ------------------------------------------------------------------------------------ pages
def load_facts(path: Path = DATA) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))["species"]


def _first_clause(text: str, most: int = 40) -> str:
    """A distinctive start of a fact, as an extractive answer quotes it."""
    part = re.split(r"[,;，；：:]", text, maxsplit=1)[0].strip()
    return part[:most]


def _size_number(text: str) -> str:
    m = re.search(r"\d+", text)
    return m.group(0) if m else text


def write_zh_fields(folder: Path, facts: Sequence[dict[str, Any]]) -> list[Species]:
    out = []
    for f in facts:
        lines = [
            f"# {f['zh']}",
            "",
            f"- 英文名：{f['en']}",
            f"- 学名：{f['latin']}",
            f"- 分布：{f['range_zh']}",
        ]
        lines.append(f"- 体长：{f['size'].replace('about ', '约 ')} 厘米")
        if f["diet_zh"]:
            lines.append(f"- 食性：{f['diet_zh']}")
        lines.append(f"- 羽色：{f['colours_zh']}")
        doc = f"鹦鹉/{f['key']}.md"
        (folder / doc).parent.mkdir(parents=True, exist_ok=True)
        (folder / doc).write_text("\n".join(lines) + "\n", encoding="utf-8")
        out.append(
            Species(
                f["key"],
                f["folder"],
                doc,
                f["zh"],
                [f["zh"], f["en"], f["latin"]],
                {
                    "where": _first_clause(f["range_zh"]),
                    "size": _size_number(f["size"]),
                    "diet": _first_clause(f["diet_zh"]) if f["diet_zh"] else None,
                    "colour": _first_clause(f["colours_zh"]),
                    "name": f["zh"],
                    "species": f["zh"],
                },
                f["latin"],
                f["en"],
                f["zh"],
            )  # fmt: skip
        )
    return out


# Three ways of writing a page, taken in turn, so the prose pages do not all share one template.
_PROSE = (
    "The {lower} ({latin}), called {zh} in Chinese, is a parrot of {range}. It measures {size} cm "
    "from bill to tail. Its plumage is {colours}.{diet}",
    "{en} ({zh}; {latin}). This parrot lives in {range}. Adults are {colours_lc}, and they reach "
    "{size} cm in length.{diet}",
    "Known in Chinese as {zh}, the {lower} ({latin}) is found in {range}.{diet} It is a bird of "
    "{size} cm; its colours: {colours}.",
)
_PROSE_DIET = (" In the wild it feeds on {diet}.", " Its food is {diet}.", " It eats {diet}.")


def write_prose(folder: Path, facts: Sequence[dict[str, Any]]) -> list[Species]:
    out = []
    for i, f in enumerate(facts):
        size = f["size"]
        diet = _PROSE_DIET[i % 3].format(diet=f["diet_en"]) if f["diet_en"] else ""
        body = _PROSE[i % 3].format(
            lower=f["en"] if "'" in f["en"] else f["en"].lower(),
            en=f["en"],
            latin=f["latin"],
            zh=f["zh"],
            range=f["range_en"],
            size=size,
            colours=f["colours_en"],
            colours_lc=f["colours_en"],
            diet=diet,
        )
        doc = f"parrots/{f['key']}.md"
        (folder / doc).parent.mkdir(parents=True, exist_ok=True)
        (folder / doc).write_text(f"# {f['en']}\n\n{body}\n", encoding="utf-8")
        out.append(
            Species(
                f["key"],
                f["folder"],
                doc,
                f["en"],
                [f["en"], f["zh"], f["latin"]],
                {
                    "where": _first_clause(f["range_en"]),
                    "size": _size_number(f["size"]),
                    "diet": _first_clause(f["diet_en"]) if f["diet_en"] else None,
                    "colour": _first_clause(f["colours_en"]),
                    "name": f["en"],
                    "species": f["en"],
                },
                f["latin"],
                f["en"],
                f["zh"],
            )  # fmt: skip
        )
    return out


_REPO_TITLE = re.compile(r"^#\s+(.+?)\s*\(([^)]+)\)\s*$", re.M)
_REPO_FIELD = re.compile(r"\*\*([^*]+?):\*\*\s*(.+)")


def write_repo(folder: Path, facts: Sequence[dict[str, Any]]) -> list[Species]:
    """The repository's notes, copied as they are; the gold is read from each note's own fields
    (its "Where and size" line), for the species of the facts file that have a note."""
    by_folder = {f["folder"]: f for f in facts if f["folder"]}
    by_key = {f["key"]: f for f in facts}
    out = []
    for path in sorted(REPO_NOTES.glob("*.md")):
        rel = f"parrots/{path.name}"
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, folder / rel)
        text = path.read_text(encoding="utf-8")
        label = re.search(r"Gallery label:\s*([^\s.]+(?:\.[^\s.]+)*)", text)
        f = by_folder.get(label.group(1).rstrip(".")) if label else by_key.get(path.stem)
        title = _REPO_TITLE.search(text)
        if f is None or title is None or f["key"] != path.stem and not label:
            continue
        fields = {k.strip().lower(): v.strip() for k, v in _REPO_FIELD.findall(text)}
        where_size = fields.get("where and size", "")
        zh = re.search(r"Chinese:\s*([^.\s]+)", text)
        size = re.search(r"about (\d+)", where_size)
        out.append(
            Species(
                f["key"],
                f["folder"],
                rel,
                title.group(1),
                [title.group(1), title.group(2)] + ([zh.group(1)] if zh else []),
                {
                    "where": _first_clause(where_size) if where_size else None,
                    "size": size.group(1) if size else None,
                    "diet": None,
                    "colour": _first_clause(fields.get("colours", "")) or None,
                    "name": title.group(1),
                    "species": title.group(1),
                },
                title.group(2),
                title.group(1),
                zh.group(1) if zh else "",
            )  # fmt: skip
        )
    return out


WRITERS: dict[str, Callable[[Path, Sequence[dict[str, Any]]], list[Species]]] = {
    "repo": write_repo,
    "zh-fields": write_zh_fields,
    "prose": write_prose,
}


def photo_label(style: str, sp: Species) -> str:
    """The folder name a style's reference photos go under (the gallery's label for them): the
    repository's notes carry the photo folders' names on their "Gallery label:" lines; the other
    styles' photos are filed under the page's title, as a user would name them."""
    return sp.folder or sp.key if style == "repo" else sp.title


def place_photos(folder: Path, style: str, species: Sequence[Species], images: Path) -> dict[str, Path]:
    """Copy each species' photos but the last into ``photos/<label>/``; key -> the held-out photo."""
    held: dict[str, Path] = {}
    for sp in species:
        if not sp.folder or not (images / sp.folder).is_dir():
            continue
        files = sorted(
            p for p in (images / sp.folder).iterdir() if p.suffix.lower() in (".jpg", ".jpeg", ".png")
        )
        if len(files) < 2:
            continue
        held[sp.key] = files[-1]
        if folder is not None:
            dest = folder / "photos" / photo_label(style, sp)
            dest.mkdir(parents=True, exist_ok=True)
            for p in files[:-1]:
                shutil.copyfile(p, dest / p.name)
    return held


# ------------------------------------------------------------------------------------ scripts
_FOLLOW = {
    "where": {"en": "Where does it live?", "zh": "它分布在哪里？"},
    "size": {"en": "How big is it?", "zh": "它有多大？"},
    "diet": {"en": "What does it eat?", "zh": "它吃什么？"},
    "colour": {"en": "What colour is it?", "zh": "它是什么颜色的？"},
}
_FOLLOW_ABOUT = {"size": {"en": "What about its size?", "zh": "那它有多大？"}}
_NAMED = {
    "where": {"en": "Where does the {en} live?", "zh": "{zh}分布在哪里？"},
    "colour": {"en": "What colour is the {en}?", "zh": "{zh}是什么颜色的？"},
    "name": {
        "en": "What is the parrot with the scientific name {latin} called?",
        "zh": "学名为 {latin} 的鹦鹉叫什么名字？",
    },
}


def _other(lang: str) -> str:
    return "zh" if lang == "en" else "en"


def scripts_for(
    sp: Species, photo: Path | None, next_sp: Species | None, next_photo: Path | None
) -> Iterator[Script]:
    """Every script about ``sp`` in both languages (photo scripts only when it has a held-out photo)."""

    def ask(fact: str, lang: str, follow: bool = True, about: Species = sp) -> Turn:
        text = (
            _FOLLOW[fact][lang]
            if follow
            else _NAMED[fact][lang].format(en=about.en, zh=about.zh or about.en, latin=about.latin)
        )
        return Turn("ask", text, lang, about.key, fact)

    def shot(lang: str, path: Path, about: Species = sp) -> Turn:
        return Turn("photo", str(path), lang, about.key, "species")

    for lang in ("en", "zh"):
        if photo is not None:
            yield Script(
                "photo", lang, [shot(lang, photo), ask("where", lang), ask("size", lang), ask("diet", lang)]
            )
        yield Script(
            "text", lang,
            [ask("colour", lang, follow=False), Turn("ask", _FOLLOW_ABOUT["size"][lang], lang, sp.key, "size"),
             ask("where", lang)],
        )  # fmt: skip
        yield Script(
            "switch", lang, [ask("where", lang, follow=False), ask("size", _other(lang)), ask("colour", lang)]
        )
        if photo is not None and next_sp is not None and next_photo is not None:
            yield Script(
                "second-photo", lang,
                [shot(lang, photo), ask("size", lang), shot(lang, next_photo, next_sp),
                 ask("where", lang, about=next_sp)],
            )  # fmt: skip
        if sp.latin and "×" not in sp.latin:
            yield Script("single", lang, [ask("name", lang, follow=False)])
    # A question in the other language than the page's (the page's language: its title's).
    page_zh = bool(re.search(r"[\u4e00-\u9fff]", sp.title))
    lang = "en" if page_zh else "zh"
    yield Script("single", lang, [ask("where", lang, follow=False)])


# ------------------------------------------------------------------------------------ scoring
def _norm(text: str) -> str:
    text = text.replace("*", "").lower()
    return re.sub(r"[\s\-_'’]+", " ", text)


def names_it(text: str, sp: Species) -> bool:
    t = f" {_norm(text)} "
    return any(n and _norm(n) in t for n in [*sp.names, *([sp.folder] if sp.folder else [])])


def says_not_in_notes(answer: Any) -> bool:
    return bool(getattr(answer, "refused", False)) or bool(_NOT_SAID.search(getattr(answer, "text", "")))


# A follow-up to a photo left open is answered per candidate, one list item each ("- If it is the
# Scarlet Macaw: ..."): only the item about the turn's species is scored.
_CANDIDATE_ITEM = re.compile(r"^- (?:If it is the |如果是)(.+?)[:：] ?(.*)$", re.M)


def candidate_part(text: str, sp: Species) -> str:
    """The part of an answer over several candidates that is about ``sp`` ("" when none is)."""
    names = {_norm(n).strip() for n in [*sp.names, sp.title] if n}
    return "\n".join(m.group(2) for m in _CANDIDATE_ITEM.finditer(text) if _norm(m.group(1)).strip() in names)


# ------------------------------------------------------------------------------------ running
def run_conversations_bench(
    styles: Sequence[str] = STYLES,
    photos: str = "reference",
    limit: int | None = None,
    images: Path | None = None,
    extra_photo: Path | None = None,
    config: Config | None = None,
    scripts: Sequence[str] = SCRIPTS,
    log: Callable[[str], None] = lambda s: None,
) -> ConversationsResult:
    """Run every script of ``scripts`` over each style's knowledge base (``photos``: "reference"
    puts the reference photos in the knowledge folder, "none" leaves them out); ``limit``: the
    first N species of the facts file only. ``extra_photo``: a photo of the Scarlet Macaw from
    another source (../shared/data/images/coral/parrot.jpg), asked as one more photo script."""
    import copy

    from desktop_app.core.ask.conversation import Conversation
    from desktop_app.core.desk import Desk
    from desktop_app.core.events import Answer, RouteDecided
    from kdesk_lab.index import load_average

    if photos not in ("reference", "none"):
        raise ValueError(f"photos must be 'reference' or 'none', not {photos!r}")
    unknown = [s for s in styles if s not in STYLES]
    if unknown:
        raise ValueError(f"unknown style {unknown[0]!r}; styles: {', '.join(STYLES)}")
    from kdesk_lab.answers import shared_data_root

    images = images or shared_data_root() / "images" / "parrots"
    if not images.is_dir():
        raise ValueError(f"no photo folders at {images}")
    facts = load_facts()[: limit or None]
    cfg = copy.deepcopy(config or Config())
    cfg.llm.backend = "none"
    result = ConversationsResult(photos, limit, load_average())
    t_start = time.perf_counter()
    for style in styles:
        work = Path(tempfile.mkdtemp(prefix=f"kdesk-bench-conv-{style}-"))
        try:
            with Desk(work, copy.deepcopy(cfg)) as desk:
                kb = desk.kb
                species = WRITERS[style](kb.knowledge_dir, facts)
                held = place_photos(
                    kb.knowledge_dir if photos == "reference" else None, style, species, images
                )
                t0 = time.perf_counter()
                kb.sync()
                log(
                    f"{style}: {len(species)} pages, {len(held)} held-out photos, indexed in {time.perf_counter() - t0:.1f} s"
                )
                assistant = desk.assistant
                by_key = {s.key: s for s in species}
                with_photo = [s for s in species if s.key in held]
                plan: list[Script] = []
                for sp in species:
                    nxt = (
                        with_photo[(with_photo.index(sp) + 1) % len(with_photo)]
                        if sp in with_photo and len(with_photo) > 1
                        else None
                    )
                    plan += [
                        s
                        for s in scripts_for(sp, held.get(sp.key), nxt, held.get(nxt.key) if nxt else None)
                        if s.name in scripts
                    ]
                if extra_photo is not None and "scarlet-macaw" in by_key and "photo" in scripts:
                    sp = by_key["scarlet-macaw"]
                    for s in scripts_for(sp, extra_photo, None, None):
                        if s.name == "photo":
                            plan.append(Script("photo-coral", s.lang, s.turns))
                for script in plan:
                    conv = Conversation()
                    for n, turn in enumerate(script.turns):
                        result.turns.append(
                            _run_turn(assistant, conv, style, script, n, turn, by_key, Answer, RouteDecided)
                        )
        finally:
            shutil.rmtree(work, ignore_errors=True)
    result.seconds = time.perf_counter() - t_start
    result.load_end = load_average()
    return result


def _run_turn(assistant, conv, style, script, n, turn, by_key, Answer, RouteDecided) -> TurnResult:
    sp = by_key[turn.subject]
    t0 = time.perf_counter()
    answer = None
    searched = ""
    if turn.kind == "photo":
        events = assistant.identify(Path(turn.text), conversation=conv)
    else:
        events = assistant.ask(turn.text, conv)
    for ev in events:
        if isinstance(ev, Answer):
            answer = ev
        elif isinstance(ev, RouteDecided):
            searched = ev.search_query
    ms = (time.perf_counter() - t0) * 1000
    text = answer.text if answer is not None else ""
    # The photo left the species open: the answer covers candidates, and no one subject was searched.
    hedged = turn.kind == "ask" and bool(conv.subject_options)
    cited = [c.source for c in answer.citations] if answer is not None else []
    if turn.kind == "photo":
        searched = conv.last_subject or ""
        subject_ok = names_it(searched, sp)
    else:
        # a follow-up must search for the subject it refers to
        subject_ok = names_it(searched, sp) and not hedged
    gold = sp.facts.get(turn.fact)
    expect_not_said = turn.fact == "diet" and gold is None
    if hedged:
        part = candidate_part(text, sp)
        if expect_not_said:
            gold_ok = bool(_NOT_SAID.search(part))
        else:
            gold_ok = gold is not None and bool(part) and _norm(gold) in _norm(part)
    elif expect_not_said:
        gold_ok = says_not_in_notes(answer)
    elif gold is None:
        gold_ok = False
    else:
        gold_ok = _norm(gold) in _norm(text) if turn.fact != "species" else names_it(text, sp)
    return TurnResult(
        style, script.name, turn.lang, n, turn.kind, turn.fact, turn.subject, turn.text, searched, text,
        cited, subject_ok, sp.doc in cited, gold_ok, expect_not_said, bool(getattr(answer, "refused", False)),
        round(ms, 1),
    )  # fmt: skip


# ------------------------------------------------------------------------------------ report
def summarise(turns: Sequence[TurnResult]) -> dict[str, Any]:
    """style -> language -> {turns, subject, cited, gold} rates; plus per script and per fact."""

    def rates(rows: Sequence[TurnResult]) -> dict[str, Any]:
        if not rows:
            return {"turns": 0}
        n = len(rows)
        answerable = [r for r in rows if not r.expect_not_said]
        return {
            "turns": n,
            "subject": round(sum(r.subject_ok for r in rows) / n, 3),
            "cited": round(sum(r.cited_ok for r in answerable) / max(1, len(answerable)), 3),
            "gold": round(sum(r.gold_ok for r in rows) / n, 3),
            "refused_answerable": round(sum(r.refused for r in answerable) / max(1, len(answerable)), 3),
        }

    out: dict[str, Any] = {}
    for style in dict.fromkeys(t.style for t in turns):
        rows = [t for t in turns if t.style == style]
        out[style] = {
            "all": rates(rows),
            "by_lang": {lang: rates([r for r in rows if r.lang == lang]) for lang in ("en", "zh")},
            "by_script": {
                s: rates([r for r in rows if r.script == s]) for s in dict.fromkeys(r.script for r in rows)
            },
            "by_fact": {
                f"{f}{' (not on page)' if nsd else ''}": rates(
                    [r for r in rows if r.fact == f and r.expect_not_said == nsd]
                )
                for f in FACTS
                for nsd in (False, True)
                if any(r.fact == f and r.expect_not_said == nsd for r in rows)
            },
        }
    return out


def format_conversations(result: ConversationsResult) -> str:
    s = summarise(result.turns)
    lines = [
        f"conversations bench: photos={result.photos}, limit={result.limit}, {len(result.turns)} turns, "
        f"{result.seconds:.0f} s, load {result.load_start} -> {result.load_end}",
        "",
        f"{'style':10} {'group':22} {'turns':>5} {'subject':>8} {'cited':>6} {'gold':>6} {'refused':>8}",
    ]

    def row(style: str, group: str, r: dict[str, Any]) -> str:
        if not r.get("turns"):
            return f"{style:10} {group:22} {0:5}"
        return (
            f"{style:10} {group:22} {r['turns']:5} {r['subject']:8.1%} {r['cited']:6.1%} {r['gold']:6.1%}"
            f" {r['refused_answerable']:8.1%}"
        )

    for style, d in s.items():
        lines.append(row(style, "all", d["all"]))
        for lang, r in d["by_lang"].items():
            lines.append(row("", f"lang {lang}", r))
        for name, r in d["by_script"].items():
            lines.append(row("", f"script {name}", r))
        for name, r in d["by_fact"].items():
            lines.append(row("", f"fact {name}", r))
    return "\n".join(lines)


# ------------------------------------------------------------------------------------ class fit
@dataclass
class ClassFitRow:
    style: str
    photos: int  # photos whose ImageNet top-1 is a class two or more of the style's notes share
    in_class: int  # of those, photos whose species' page is among the class's notes
    top1: int  # the best colour fit is the species' page
    top2: int
    narrowed: int  # the fits were not tied (the card names one species)
    mean_badge: float  # mean confidence in the species named (the badge's score)
    coral: str  # what ../shared/data/images/coral/parrot.jpg (a Scarlet Macaw) reads as


def run_class_fit(images: Path | None = None, extra_photo: Path | None = None) -> list[ClassFitRow]:
    """The most specific subject without reference photos (identify/specific.py), per style: every
    photo of ``images`` whose ImageNet label is a class several notes share, ranked by colour fit
    against the style's pages. The photos are classified once, as the identify flow does."""
    import numpy as np

    from desktop_app.core.identify.classifier import RESIZE, centre_crop, get_classifier
    from desktop_app.core.identify.colours import colour_profile
    from desktop_app.core.identify.specific import rank_class
    from desktop_app.core.library.documents import Hit, ParseError
    from desktop_app.core.library.images import load_image
    from kdesk_lab.answers import shared_data_root

    images = images or shared_data_root() / "images" / "parrots"
    photos = [
        (p, p.parent.name)
        for p in sorted(images.glob("*/*"))
        if p.suffix.lower() in (".jpg", ".jpeg", ".png")
    ]
    if extra_photo is not None:
        photos.append((extra_photo, "ara_macao"))  # the Scarlet Macaw's folder
    classifier = get_classifier()
    seen = []
    for path, folder in photos:
        try:
            crop = centre_crop(load_image(path, min_side=RESIZE))
        except ParseError:
            continue  # the empty file of the set
        cls = classifier.classify_crops([crop], top_k=5)[0]
        seen.append((path, folder, cls.labels[0], colour_profile(crop, cls.saliency)))
    rows = []
    for style in STYLES:
        with tempfile.TemporaryDirectory(prefix="kdesk-class-fit-") as tmp:
            species = WRITERS[style](Path(tmp), load_facts())
            notes = []
            for sp in species:
                text = (Path(tmp) / sp.doc).read_text(encoding="utf-8")
                title = text.splitlines()[0].lstrip("# ").strip()
                notes.append(Hit(sp.doc, sp.doc, text, sp.doc, None, 0, 1, 0.0, heading_path=[title]))
        page_of = {sp.folder: sp.doc for sp in species if sp.folder}
        found, coral = [], ""
        for path, folder, label, profile in seen:
            ranking = rank_class(label.name, label.zh, label.score, profile, notes)
            if ranking is None:
                continue
            page = page_of.get(folder)
            members = [f.source for f in ranking.fits]
            found.append(
                (
                    page in members,
                    ranking.best.source == page,
                    page in members[:2],
                    ranking.narrowed,
                    ranking.confidence(),
                )
            )
            if extra_photo is not None and path == extra_photo:
                coral = (
                    ranking.best.title
                    if ranking.narrowed
                    else "open: " + ", ".join(f.title for f in ranking.tied())
                )
        ok = [f for f in found if f[0]]
        rows.append(
            ClassFitRow(
                style,
                len(found),
                len(ok),
                sum(f[1] for f in ok),
                sum(f[2] for f in ok),
                sum(f[3] for f in ok),
                round(float(np.mean([f[4] for f in ok])) if ok else 0.0, 3),
                coral,
            )  # fmt: skip
        )
    return rows


def format_class_fit(rows: Sequence[ClassFitRow]) -> str:
    lines = [
        "photos of a class several notes share, ranked by colour fit (no reference photos)",
        f"{'style':10} {'photos':>6} {'in class':>8} {'top-1':>6} {'top-2':>6} {'named':>6} {'badge':>6}  parrot.jpg",
    ]
    for r in rows:
        n = max(1, r.in_class)
        lines.append(
            f"{r.style:10} {r.photos:6} {r.in_class:8} {r.top1 / n:6.0%} {r.top2 / n:6.0%} {r.narrowed / n:6.0%}"
            f" {r.mean_badge:6.2f}  {r.coral}"
        )
    return "\n".join(lines)
