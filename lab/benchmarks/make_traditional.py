"""Convert a BEIR folder from Simplified to Traditional Chinese (a benchmark-only tool).

Made for a Traditional-Chinese stand-in for a reading-comprehension retrieval set, from CMRC 2018:

    python lab/benchmarks/make_traditional.py ../shared/data/retrieval/cmrc2018_dev /tmp/cmrc_trad

corpus.jsonl (title, text), queries.jsonl (text) and any other JSONL file (e.g. CMRC's
answers.jsonl) have their string values converted with OpenCC; ids (``_id`` and other keys that
start with "_"), ``kind`` and ``metadata`` are kept as they are, so qrels (copied unchanged) still
match. Needs the ``opencc`` PyPI package: the lab's install brings it (``pip install -e ./lab``);
the app does not use it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

KEEP = {"kind", "metadata"}  # labels and structured data: converting them would break lookups


def converter(config: str):
    try:
        import opencc
    except ImportError:
        sys.exit("make_traditional.py needs OpenCC: pip install opencc")
    try:
        return opencc.OpenCC(config)
    except Exception:  # older bindings want the file name of the configuration
        return opencc.OpenCC(f"{config}.json")


def convert_value(value: Any, conv) -> Any:
    if isinstance(value, str):
        return conv.convert(value)
    if isinstance(value, list):
        return [convert_value(v, conv) for v in value]
    if isinstance(value, dict):
        return convert_record(value, conv)
    return value


def convert_record(record: dict, conv) -> dict:
    return {k: v if k.startswith("_") or k in KEEP else convert_value(v, conv) for k, v in record.items()}


def convert_jsonl(src: Path, dst: Path, conv) -> int:
    n = 0
    with open(src, encoding="utf-8") as fin, open(dst, "w", encoding="utf-8") as fout:
        for line in fin:
            if line.strip():
                fout.write(json.dumps(convert_record(json.loads(line), conv), ensure_ascii=False) + "\n")
                n += 1
    return n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="BEIR folder in Simplified Chinese")
    parser.add_argument("target", type=Path, help="new BEIR folder to write")
    parser.add_argument(
        "--config",
        default="s2tw",
        # Taiwan's character forms (為, 裡) as in real Traditional text; OpenCC's s2t writes the
        # older 爲, 裏; s2twp also rewrites vocabulary (软件 -> 軟體), which a passage and its
        # question may then get differently.
        help="OpenCC conversion: s2tw (default, Taiwan character forms), s2t (OpenCC's standard "
        "forms), s2twp (Taiwan forms and vocabulary), s2hk",
    )
    args = parser.parse_args(argv)
    src, dst = args.source, args.target
    if not (src / "corpus.jsonl").exists() or not (src / "queries.jsonl").exists():
        print(f"error: {src}: not a BEIR folder (corpus.jsonl or queries.jsonl missing)", file=sys.stderr)
        return 2
    if dst.resolve() == src.resolve():
        print("error: the target must be another folder than the source", file=sys.stderr)
        return 2
    conv = converter(args.config)
    dst.mkdir(parents=True, exist_ok=True)
    for path in sorted(src.rglob("*")):
        out = dst / path.relative_to(src)
        if path.is_dir():
            out.mkdir(parents=True, exist_ok=True)
        elif path.suffix == ".jsonl" and path.parent == src:
            n = convert_jsonl(path, out, conv)
            print(f"{path.name}: {n} records converted ({args.config})", file=sys.stderr)
        else:  # qrels (ids only) and the rest; contents only, so a read-only source stays rewritable
            shutil.copyfile(path, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
