"""One-off: carry the Chinese entries of the old dict catalogue (desktop_app/gui/i18n_zh.py,
English text -> Chinese) into the gettext catalogue desktop_app/locale/zh_CN/LC_MESSAGES/messages.po.

    python tools/i18n_dict_to_po.py [path/to/i18n_zh.py]

Idempotent: it extracts the msgids from the source (tools/i18n_update.py), keeps every translation
the .po already has, fills the empty ones from the dict (a plural takes the dict's entry for its
plural English, else its singular), writes the .po and compiles the .mo. It prints the dict entries
that match no msgid (a text no longer in the source, or one the extractor cannot see: mark it with
``N_``) and the msgids still untranslated. Remove this script once no branch adds to the dict.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.i18n_update import ROOT, extract, untranslated, update, write  # noqa: E402


def read_dict(path: Path) -> dict[str, str]:
    """The ``ZH_CN = {...}`` literal of the file, read without importing it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == "ZH_CN" for t in targets):
            return ast.literal_eval(node.value)
    raise SystemExit(f"{path}: no ZH_CN dict")


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else ROOT / "desktop_app" / "gui" / "i18n_zh.py"
    zh = read_dict(path)
    template = extract()

    def fill(msgid: str | tuple[str, ...]) -> str | None:
        if isinstance(msgid, tuple):
            return zh.get(msgid[1]) or zh.get(msgid[0])
        return zh.get(msgid)

    catalog = update(template, "zh_CN", fill)
    write(catalog, "zh_CN")
    ids = {
        m for entry in catalog if entry.id for m in (entry.id if isinstance(entry.id, tuple) else (entry.id,))
    }
    unused = sorted(k for k in zh if k not in ids)
    missing = untranslated(catalog)
    print(f"zh_CN: {len(catalog)} messages from the source, {len(zh)} dict entries")
    print(f"dict entries matching no msgid ({len(unused)}):")
    for key in unused:
        print(f"  {key!r}")
    print(f"msgids without a translation ({len(missing)}):")
    for msgid in missing:
        print(f"  {msgid!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
