"""Keep the gettext catalogues in step with the source: extract, update each .po, compile its .mo.

    python tools/i18n_update.py            # from the repository root

1. ``extract``: Babel reads babel.cfg and finds every core template (``define``/``define_plural``)
   and window text (``tr``/``trn``/``N_``) and the model manifest's sentences -> messages.pot.
2. ``update``: each desktop_app/locale/<lang>/LC_MESSAGES/messages.po gets the new msgids (empty,
   to translate) and loses the ones gone from the source; translations are kept.
3. ``compile``: messages.mo beside it, the file the app reads (stdlib gettext; no Babel at run time).

Then translate the empty entries in the .po and run it again (tests/gui/test_i18n.py fails on an
entry without a translation, and on a .mo older than its .po).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_keywords, parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
LOCALE = ROOT / "desktop_app" / "locale"
DOMAIN = "messages"
# babel.cfg's keywords, given here too: a Babel before 2.18 ignores them in the file
KEYWORDS = parse_keywords(["define:2", "define_plural:2,3", "tr", "trn:1,2", "N_"])


def extract(root: Path = ROOT) -> Catalog:
    """Every message the source and the model manifest mark, as a template catalogue."""
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))  # babel.cfg's [extractors] name tools.babel_extractors
    with open(root / "babel.cfg", encoding="utf-8") as cfg:
        method_map, options_map = parse_mapping_cfg(cfg, "babel.cfg")
    template = Catalog(project="Knowledge Desk", fuzzy=False)
    for filename, lineno, msg, comments, context in extract_from_dir(
        root, method_map, options_map, keywords=KEYWORDS, strip_comment_tags=True
    ):
        template.add(msg, None, [(filename, lineno)], auto_comments=comments, context=context)
    return template


def po_path(language: str) -> Path:
    return LOCALE / language / "LC_MESSAGES" / f"{DOMAIN}.po"


def languages() -> list[str]:
    return sorted(p.parent.parent.name for p in LOCALE.glob(f"*/LC_MESSAGES/{DOMAIN}.po"))


def update(
    template: Catalog, language: str, fill: Callable[[str | tuple[str, ...]], str | None] | None = None
) -> Catalog:
    """The language's catalogue with the template's msgids, its translations kept; ``fill`` may
    supply a translation for an entry that has none."""
    path = po_path(language)
    if path.is_file():
        with open(path, "rb") as f:
            catalog = read_po(f, locale=language)
    else:
        catalog = Catalog(locale=language, project="Knowledge Desk", fuzzy=False)
    before, created = {m.id for m in catalog}, catalog.creation_date
    catalog.update(template, no_fuzzy_matching=True, update_header_comment=False)
    catalog.obsolete.clear()
    if {m.id for m in catalog} == before:
        catalog.creation_date = created  # nothing changed: no header churn in the diff
    if fill is not None:
        for entry in catalog:
            if entry.id and not _translated(entry.string):
                found = fill(entry.id)
                if found:
                    entry.string = (found,) * catalog.num_plurals if entry.pluralizable else found
    return catalog


def _translated(string: str | tuple[str, ...]) -> bool:
    return all(string) if isinstance(string, tuple) else bool(string)


def write(catalog: Catalog, language: str) -> None:
    """The .po (unwrapped lines: a msgid stays greppable) and its compiled .mo."""
    path = po_path(language)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        # files without line numbers: an edit elsewhere in a file does not touch the .po
        write_po(f, catalog, width=0, ignore_obsolete=True, include_previous=False, include_lineno=False)
    with open(path, "rb") as f:  # compile what was written, as the test compares
        catalog = read_po(f, locale=language)
    with open(path.with_suffix(".mo"), "wb") as f:
        write_mo(f, catalog, use_fuzzy=False)


def untranslated(catalog: Catalog) -> list[str | tuple[str, ...]]:
    return [entry.id for entry in catalog if entry.id and not _translated(entry.string)]


def main() -> int:
    template = extract()
    LOCALE.mkdir(parents=True, exist_ok=True)
    with open(LOCALE / f"{DOMAIN}.pot", "wb") as f:
        write_po(f, template, width=0, include_lineno=False)
    for language in languages():
        catalog = update(template, language)
        write(catalog, language)
        missing = untranslated(catalog)
        print(f"{language}: {len(catalog)} messages, {len(missing)} untranslated")
        for msgid in missing:
            print(f"  {msgid!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
