"""Development-time tool: rebuild imagenet_labels.tsv from the timm wheel's synset files.

Not imported by the app (timm is not a dependency). Usage:
    pip download timm --no-deps -d /tmp/timm && cd /tmp/timm && unzip -o timm-*.whl 'timm/data/_info/*'
    python desktop_app/core/identify/labels/build_labels.py /tmp/timm/timm/data/_info
The Chinese bird names are ours (BIRD_ZH below); every other zh cell stays empty.
"""

from __future__ import annotations

import sys
from pathlib import Path

# ImageNet-1k bird classes (model index -> Chinese name), written by hand.
BIRD_ZH: dict[int, str] = {
    7: "公鸡", 8: "母鸡", 9: "鸵鸟", 10: "燕雀", 11: "红额金翅雀", 12: "家朱雀", 13: "灰蓝灯草鹀",
    14: "靛蓝彩鹀", 15: "旅鸫", 16: "鹎", 17: "松鸦", 18: "喜鹊", 19: "山雀", 20: "河乌", 21: "鸢",
    22: "白头海雕", 23: "秃鹫", 24: "乌林鸮", 80: "黑琴鸡", 81: "岩雷鸟", 82: "披肩榛鸡", 83: "草原榛鸡",
    84: "孔雀", 85: "鹌鹑", 86: "山鹑", 87: "非洲灰鹦鹉", 88: "金刚鹦鹉", 89: "葵花凤头鹦鹉", 90: "吸蜜鹦鹉",
    91: "鸦鹃", 92: "蜂虎", 93: "犀鸟", 94: "蜂鸟", 95: "鹟䴕", 96: "巨嘴鸟", 97: "公鸭", 98: "红胸秋沙鸭",
    99: "鹅", 100: "黑天鹅", 127: "白鹳", 128: "黑鹳", 129: "琵鹭", 130: "火烈鸟", 131: "小蓝鹭",
    132: "大白鹭", 133: "麻鳽", 134: "鹤", 135: "秧鹤", 136: "紫水鸡", 137: "美洲骨顶", 138: "鸨",
    139: "翻石鹬", 140: "黑腹滨鹬", 141: "红脚鹬", 142: "半蹼鹬", 143: "蛎鹬", 144: "鹈鹕", 145: "王企鹅",
    146: "信天翁",
}  # fmt: skip
PARROTS = {87, 88, 89, 90}


def main(info_dir: Path, out: Path) -> None:
    synsets = (info_dir / "imagenet_synsets.txt").read_text(encoding="utf-8").split()
    assert len(synsets) == 1000, len(synsets)

    def table(name: str) -> dict[str, str]:
        rows = (line.split("\t", 1) for line in (info_dir / name).read_text(encoding="utf-8").splitlines())
        return {k: v.strip() for k, v in rows}

    lemmas, definitions = table("imagenet_synset_to_lemma.txt"), table("imagenet_synset_to_definition.txt")
    lines = ["index\tsynset\tname\tzh\tgroup\tlemmas\tdefinition"]
    for i, syn in enumerate(synsets):
        names = lemmas[syn]
        group = "parrot" if i in PARROTS else "bird" if i in BIRD_ZH else ""
        clean = definitions[syn].replace("\t", " ")
        lines.append(f"{i}\t{syn}\t{names.split(', ')[0]}\t{BIRD_ZH.get(i, '')}\t{group}\t{names}\t{clean}")
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(__file__).with_name("imagenet_labels.tsv"))
