#!/usr/bin/env python3
"""Writes the mixed-language (Chinese + English + Latin) retrieval test set next to itself, in BEIR format.

    python lab/benchmarks/mixed-zh/make_set.py

Output (byte-identical on every run: fixed seed, fixed tables, no clock, no set iteration):
corpus.jsonl ({"_id", "title", "text"}), queries.jsonl ({"_id", "text", "kind"}) and
qrels/test.tsv (header, then one line per relevant document, score 1).

The pages are Chinese: species pages (Chinese name, Latin binomial, mostly an English name) written
from 4 templates with optional fields, and product spec pages (model codes, English terms, numbers
with units) from 3 templates. Each question has exactly one relevant page. The kinds:

  zh-name        Chinese question naming a species by its Chinese name (or a Chinese alias on the page)
  zh-latin       Chinese question containing the Latin binomial
  zh-english     Chinese question containing the English name (which is on the page)
  en-name        English question naming the species by the English name that is on the page
  en-latin       English question naming the Latin binomial
  zh-code        Chinese question naming a product model code
  en-code        English question naming a product model code
  cross-lingual  English question naming a species by an English name that is NOT on any page

Python standard library only. The tables below are the data; everything else is rendering.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

SEED = 20240611
HERE = Path(__file__).resolve().parent

ANIMALS = ("mammal", "bird", "fish", "reptile", "amphibian", "insect")
PLANTS = ("tree", "plant")
FUNGI = ("fungus",)


def sp(zh: str, latin: str, en: str | None, group: str, family: str, **kw) -> dict:
    """One species. en_page=False: the English name (if any) is only used for cross-lingual questions."""
    d = {
        "zh": zh,
        "latin": latin,
        "en": en,
        "group": group,
        "family": family,
        "en_page": kw.pop("en_page", en is not None),
        "alias": tuple(kw.pop("alias", ())),
        "art": kw.pop("art", "the "),  # article before the English name in English questions
    }
    for key in (
        "dist",
        "habitat",
        "diet",
        "length",
        "weight",
        "height",
        "bloom",
        "iucn",
        "cites",
        "cn",
        "edible",
    ):
        d[key] = kw.pop(key, "")
    d["extra"] = tuple(kw.pop("extra", ()))
    d["notes"] = tuple(kw.pop("notes", ()))
    if kw:
        raise TypeError(f"{zh}: unknown fields {sorted(kw)}")
    if d["en_page"] and not en:
        raise ValueError(f"{zh}: en_page without an English name")
    return d


# --------------------------------------------------------------------------------------- species
# fmt: off
SPECIES: list[dict] = [
    # ---- mammals: cats
    sp("狮", "Panthera leo", "Lion", "mammal", "猫科", alias=("狮子",),
       dist="撒哈拉以南非洲，另有一个小种群生活在印度古吉拉特邦的吉尔森林",
       habitat="稀树草原、灌丛和开阔林地",
       diet="肉食性，主要捕食角马、斑马和非洲水牛等大型有蹄类，常由雌狮集体狩猎",
       length="1.4–2.5 m", weight="120–250 kg", iucn="VU", cites="II",
       notes=("狮是唯一营群居生活的猫科动物，一个狮群通常由数只有亲缘关系的雌狮、幼崽和少数雄狮组成。",
              "成年雄狮颈部有浓密的鬃毛。")),
    sp("虎", "Panthera tigris", "Tiger", "mammal", "猫科", alias=("老虎",),
       dist="南亚、东南亚、中国及俄罗斯远东地区，中国境内有东北虎和华南虎的记录",
       habitat="热带雨林、红树林、落叶阔叶林和针阔混交林",
       diet="肉食性，主要捕食鹿类和野猪，通常单独伏击猎物",
       length="1.5–2.5 m", weight="75–300 kg", iucn="EN", cites="I", cn="一级",
       notes=("虎是现存体型最大的猫科动物。", "每只虎身上的条纹都不相同，可用于个体识别。")),
    sp("金钱豹", "Panthera pardus", "Leopard", "mammal", "猫科", alias=("豹", "花豹"),
       dist="撒哈拉以南非洲以及南亚、东南亚和东亚的零散区域",
       habitat="森林、草原、山地和半荒漠，适应能力很强",
       diet="肉食性，捕食羚羊、鹿、猴类和野兔等，常把猎物拖到树上以免被抢",
       length="0.9–1.9 m", weight="20–90 kg", iucn="VU", cites="I", cn="一级",
       notes=("它的名字来源于毛皮上的黑色环状斑点：这些斑点形似古代铜钱，所以叫做金钱豹。",)),
    sp("美洲豹", "Panthera onca", "Jaguar", "mammal", "猫科", alias=("美洲虎",),
       dist="美洲，从墨西哥经中美洲到阿根廷北部，亚马孙河流域是其主要分布区",
       habitat="热带雨林、沼泽湿地和河岸林",
       diet="肉食性，捕食西貒、水豚、鹿和凯门鳄等，咬合力在猫科动物中名列前茅",
       length="1.1–1.85 m", weight="56–96 kg", iucn="NT", cites="I",
       notes=("美洲豹是美洲体型最大的猫科动物，善于游泳。",
              "它身上的斑点呈玫瑰花状，花纹中央常有小黑点，这一点可以和金钱豹区分。")),
    sp("雪豹", "Panthera uncia", "Snow Leopard", "mammal", "猫科", alias=("艾叶豹",),
       dist="中亚和南亚的高山地区，包括中国的青藏高原、天山、昆仑山和喜马拉雅山脉",
       habitat="海拔 3000–4500 m 的高山裸岩、峭壁和高山草甸",
       diet="肉食性，主要捕食岩羊和北山羊，也吃旱獭、鼠兔和雉类",
       length="1.0–1.3 m", weight="22–55 kg", extra=(("尾长", "0.8–1.0 m"),), iucn="VU", cites="I", cn="一级",
       notes=("雪豹的尾巴又粗又长，在岩壁间跳跃时帮助保持平衡，休息时还可以盖住口鼻保暖。",)),
    sp("云豹", "Neofelis nebulosa", "Clouded Leopard", "mammal", "猫科",
       dist="喜马拉雅山南麓、中国南部及东南亚大陆",
       habitat="热带和亚热带常绿森林，善于在树上活动",
       diet="肉食性，捕食鸟类、猴类、松鼠和小型鹿类",
       length="0.7–1.1 m", weight="11–23 kg", iucn="VU", cites="I", cn="一级",
       notes=("身上有大块云朵状的深色斑纹，因此得名。", "相对于体型，云豹的犬齿在现存猫科动物中最长。")),
    sp("猎豹", "Acinonyx jubatus", "Cheetah", "mammal", "猫科",
       dist="非洲东部和南部，伊朗还残存极少量亚洲猎豹",
       habitat="开阔草原、稀树草原和半荒漠",
       diet="肉食性，主要捕食瞪羚、黑斑羚等中小型羚羊，多在白天狩猎",
       length="1.1–1.5 m", weight="21–72 kg", iucn="VU", cites="I",
       notes=("猎豹是陆地上奔跑最快的动物，短距离冲刺时速度可达约 100 km/h。", "脸上从眼角到嘴角各有一道黑色泪纹。")),
    # ---- mammals: dogs
    sp("赤狐", "Vulpes vulpes", "Red Fox", "mammal", "犬科", alias=("红狐",),
       dist="北半球大部分地区，包括欧洲、亚洲、北美和北非，后被引入澳大利亚",
       habitat="森林、草原、荒漠边缘、农田乃至城市郊区",
       diet="杂食性，以鼠类和野兔为主，也吃鸟类、昆虫、浆果和人类丢弃的食物",
       length="0.45–0.9 m", weight="3–11 kg", iucn="LC",
       notes=("赤狐是分布范围最广的食肉目野生动物。", "尾巴蓬松，尾尖通常为白色。")),
    sp("北极狐", "Vulpes lagopus", "Arctic Fox", "mammal", "犬科", alias=("白狐",),
       dist="环北极地区，包括格陵兰、加拿大北部、阿拉斯加、斯堪的纳维亚北部和西伯利亚",
       habitat="北极苔原和海岸冰原",
       diet="杂食性，以旅鼠为主，也吃鸟卵、雏鸟、鱼和北极熊吃剩的腐肉",
       length="0.46–0.68 m", weight="2.5–8 kg", iucn="LC",
       notes=("冬季毛色变为白色，夏季则换成灰褐色。", "耳朵短而圆，有助于减少热量散失。")),
    sp("耳廓狐", "Vulpes zerda", "Fennec Fox", "mammal", "犬科",
       dist="北非的撒哈拉沙漠及西奈半岛",
       habitat="沙漠沙丘，白天躲在洞穴中，夜间外出活动",
       diet="杂食性，吃昆虫、小型啮齿类、蜥蜴、鸟卵以及植物的根和果实",
       length="24–41 cm", weight="0.7–1.6 kg", extra=(("耳长", "10–15 cm"),), iucn="LC", cites="II",
       notes=("耳廓狐是体型最小的犬科动物，一对大耳朵可以帮助散热。",)),
    sp("藏狐", "Vulpes ferrilata", "Tibetan sand fox", "mammal", "犬科", en_page=False,
       dist="青藏高原及周边，包括中国西藏、青海、四川西部和尼泊尔北部",
       habitat="海拔 3500–5200 m 的高山草甸和半荒漠草原",
       diet="肉食性，主要捕食高原鼠兔，也吃旱獭幼崽和小型鸟类",
       length="0.49–0.70 m", weight="3.8–5.5 kg", iucn="LC",
       notes=("藏狐的脸看上去方方正正，网友常把它叫做“方脸狐”。", "它常跟在挖洞觅食的棕熊身后，捕捉从洞里逃出的鼠兔。")),
    sp("狼", "Canis lupus", "Gray Wolf", "mammal", "犬科", alias=("灰狼",),
       dist="欧亚大陆和北美洲，中国主要见于北方和青藏高原",
       habitat="森林、草原、苔原、荒漠和山地",
       diet="肉食性，以鹿、驼鹿、野牛和羚羊等有蹄类为主，通常由狼群合作捕猎",
       length="1.0–1.6 m", weight="25–80 kg", iucn="LC", cn="二级",
       notes=("家犬是由狼驯化而来的。", "狼群通常由一对繁殖配偶及其后代组成。")),
    sp("郊狼", "Canis latrans", "Coyote", "mammal", "犬科", alias=("丛林狼",),
       dist="北美洲和中美洲，从阿拉斯加到巴拿马",
       habitat="草原、荒漠、森林边缘和城市",
       diet="杂食性，吃兔子、啮齿类、鹿的幼崽、昆虫、水果和腐肉",
       length="0.75–1.0 m", weight="7–21 kg", iucn="LC",
       notes=("郊狼适应能力极强，分布范围在过去一百多年里不断扩大。",)),
    sp("豺", "Cuon alpinus", "dhole", "mammal", "犬科", en_page=False, alias=("红狼", "豺狗"),
       dist="南亚、东南亚以及中国西南、西北的部分山地",
       habitat="山地森林、灌丛和高山草甸",
       diet="肉食性，以鹿、野猪和岩羊等为食，常成群围猎",
       weight="10–20 kg", iucn="EN", cites="II", cn="一级",
       notes=("豺的毛色棕红，尾巴末端黑色，民间常称为“红狼”。",)),
    # ---- mammals: bears and pandas
    sp("大熊猫", "Ailuropoda melanoleuca", "Giant Panda", "mammal", "熊科", alias=("猫熊",),
       dist="中国四川、陕西和甘肃的山区，包括岷山、邛崃山和秦岭等山系",
       habitat="海拔 1500–3000 m 的针阔混交林和竹林",
       diet="植食性，竹子占食物的 99% 以上，偶尔也吃小型动物和腐肉",
       length="1.2–1.8 m", weight="70–125 kg", iucn="VU", cites="I", cn="一级",
       notes=("前掌有一根由腕骨特化而成的“伪拇指”，便于握住竹子。", "“猫熊”是它更早的名称，后来“大熊猫”的叫法更为流行。")),
    sp("小熊猫", "Ailurus fulgens", "Red Panda", "mammal", "小熊猫科", alias=("红熊猫",),
       dist="喜马拉雅山脉东部以及中国四川、云南和西藏",
       habitat="海拔 2200–4800 m 的温带森林和竹林",
       diet="主要吃竹叶和竹笋，也吃果实、鸟卵和昆虫",
       length="0.5–0.64 m", weight="3–6 kg", iucn="EN", cites="I", cn="二级",
       notes=("尾巴长而蓬松，带有红白相间的环纹。", "虽然名字里有“熊猫”，它和大熊猫的亲缘关系并不近。")),
    sp("棕熊", "Ursus arctos", "Brown Bear", "mammal", "熊科",
       dist="欧亚大陆北部和北美洲西北部，中国见于东北、西北和青藏高原",
       habitat="森林、山地、苔原和高山草甸",
       diet="杂食性，吃植物根茎、浆果、坚果、昆虫、鲑鱼和有蹄类",
       weight="80–600 kg", iucn="LC", cites="II", cn="二级",
       notes=("北美的灰熊和科迪亚克棕熊都是棕熊的亚种。", "秋季会大量进食储存脂肪，然后进入冬眠。")),
    sp("北极熊", "Ursus maritimus", "Polar Bear", "mammal", "熊科", alias=("白熊",),
       dist="北冰洋周边的海冰区域，包括加拿大、格陵兰、俄罗斯、挪威和美国阿拉斯加",
       habitat="北极海冰和沿岸地区",
       diet="肉食性，主要捕食环斑海豹和髯海豹",
       length="1.8–2.6 m", weight="150–700 kg", iucn="VU", cites="II",
       notes=("北极熊的毛是透明中空的，皮肤则是黑色。", "海冰减少使它们的捕猎时间缩短。")),
    sp("亚洲黑熊", "Ursus thibetanus", "Asian Black Bear", "mammal", "熊科", alias=("黑熊", "狗熊"),
       dist="喜马拉雅山区、中国、朝鲜半岛、俄罗斯远东、日本和东南亚部分地区",
       habitat="山地阔叶林和针阔混交林",
       diet="杂食性，以橡子、坚果、浆果和嫩叶为主，也吃昆虫和蜂蜜",
       weight="50–200 kg", iucn="VU", cites="I", cn="二级",
       notes=("胸前有一块白色或淡黄色的 V 形斑纹，因此也被称为“月熊”。",)),
    sp("马来熊", "Helarctos malayanus", "Sun Bear", "mammal", "熊科", alias=("太阳熊",),
       dist="东南亚，包括马来半岛、苏门答腊和婆罗洲，以及中国云南南部的边缘地区",
       habitat="低地热带雨林",
       diet="杂食性，吃白蚁、蚂蚁、蜂蜜和果实，舌头长达 20–25 cm",
       length="1.2–1.5 m", weight="25–65 kg", iucn="VU", cites="I", cn="一级",
       notes=("马来熊是现存体型最小的熊。",)),
    # ---- mammals: primates
    sp("川金丝猴", "Rhinopithecus roxellana", "Golden Snub-nosed Monkey", "mammal", "猴科", alias=("金丝猴",),
       dist="中国四川、陕西、甘肃和湖北的山地",
       habitat="海拔 1500–3400 m 的落叶阔叶林和针阔混交林",
       diet="植食性，吃树叶、嫩芽、树皮、地衣和果实，冬季以树皮和地衣为主",
       iucn="EN", cites="I", cn="一级",
       notes=("鼻孔向上翻，背部长有金色长毛。", "“金丝猴”这个名称来源于它身上金黄色的长毛。")),
    sp("滇金丝猴", "Rhinopithecus bieti", "Yunnan snub-nosed monkey", "mammal", "猴科", en_page=False,
       alias=("黑白仰鼻猴",),
       dist="中国云南西北部和西藏东南部，金沙江与澜沧江之间的云岭山脉",
       habitat="海拔 3000–4700 m 的高山暗针叶林",
       diet="以松萝等树挂地衣为主食，也吃嫩叶、竹笋和果实",
       iucn="EN", cites="I", cn="一级",
       notes=("滇金丝猴是栖息海拔最高的非人灵长类之一。", "它有红润的嘴唇，身体以黑白两色为主。")),
    sp("黔金丝猴", "Rhinopithecus brelichi", "gray snub-nosed monkey", "mammal", "猴科", en_page=False,
       alias=("灰金丝猴",),
       dist="中国贵州东北部的梵净山，是世界上分布范围最小的灵长类之一",
       habitat="海拔 1400–2200 m 的常绿落叶阔叶混交林",
       diet="植食性，吃树叶、花、果实、嫩芽和树皮",
       iucn="EN", cites="I", cn="一级",
       notes=("背部灰褐色，两肩之间有一块白斑。",)),
    sp("猕猴", "Macaca mulatta", "Rhesus Macaque", "mammal", "猴科", alias=("恒河猴",),
       dist="南亚、东南亚以及中国南部、中部和华北的部分山区",
       habitat="森林、山地和河谷，也常出现在寺庙和村庄附近",
       diet="杂食性，吃果实、种子、树叶和昆虫",
       iucn="LC", cites="II", cn="二级",
       notes=("猕猴是医学和生物学研究中最常用的灵长类之一。",)),
    sp("日本猕猴", "Macaca fuscata", "Japanese Macaque", "mammal", "猴科", alias=("雪猴",),
       dist="日本的本州、四国、九州及部分离岛",
       habitat="亚热带至寒温带森林",
       diet="杂食性，吃果实、种子、树叶、树皮和昆虫",
       iucn="LC", cites="II",
       notes=("它是分布最北的非人灵长类，冬季有的群体会泡温泉取暖。",)),
    sp("藏酋猴", "Macaca thibetana", "Tibetan macaque", "mammal", "猴科", en_page=False,
       dist="中国中南部和东部的山地，包括四川、贵州、湖南、安徽黄山和峨眉山",
       habitat="山地阔叶林和针阔混交林",
       diet="杂食性，吃果实、树叶、竹笋和昆虫",
       weight="雄性 15–20 kg", iucn="NT", cites="II", cn="二级",
       notes=("它是猕猴属中体型最大的种类。", "峨眉山上向游客讨要食物的猴子就是藏酋猴。")),
    # ---- mammals: deer, bovids, elephants, rhino
    sp("麋鹿", "Elaphurus davidianus", "Père David's Deer", "mammal", "鹿科", alias=("四不像",), art="",
       dist="原产中国长江中下游的湿地，野外种群一度灭绝，现已在江苏大丰、湖北石首等地重新引入",
       habitat="平原沼泽和湿地",
       diet="植食性，吃青草和水生植物",
       weight="150–200 kg", iucn="EW", cn="一级",
       notes=("“四不像”这个名字来源于它的外形：角似鹿非鹿，脸似马非马，蹄似牛非牛，尾似驴非驴。",
              "1985 年起，麋鹿从英国重新引回中国。")),
    sp("梅花鹿", "Cervus nippon", "Sika Deer", "mammal", "鹿科",
       dist="东亚，包括中国东部、日本、朝鲜半岛和俄罗斯远东",
       habitat="森林边缘和林间草地",
       diet="植食性，吃青草、树叶、嫩枝和果实",
       weight="40–70 kg", iucn="LC", cn="一级",
       notes=("夏季毛色栗红，体侧有白色斑点，形似梅花，故名梅花鹿。", "只有雄鹿长角，鹿角每年脱落后重新长出。")),
    sp("马鹿", "Cervus elaphus", "Red Deer", "mammal", "鹿科", alias=("赤鹿",),
       dist="欧洲、小亚细亚、高加索、中亚和北非的阿特拉斯山区",
       habitat="森林、林间草地和高地荒原",
       diet="植食性，吃草、树叶、嫩枝和树皮",
       weight="90–240 kg", iucn="LC",
       notes=("秋季发情期雄鹿会大声吼叫并以角相斗。",)),
    sp("驼鹿", "Alces alces", "Moose", "mammal", "鹿科", alias=("犴",),
       dist="北半球寒温带，包括北欧、俄罗斯、中国东北的大兴安岭和小兴安岭以及北美北部",
       habitat="针叶林、沼泽和湖泊附近",
       diet="植食性，吃柳树和桦树的嫩枝、树叶及水生植物",
       weight="380–700 kg", extra=(("肩高", "1.4–2.1 m"),), iucn="LC", cn="二级",
       notes=("驼鹿是现存体型最大的鹿科动物，雄性的角呈宽大的掌状。",)),
    sp("藏羚", "Pantholops hodgsonii", "Tibetan Antelope", "mammal", "牛科", alias=("藏羚羊",),
       dist="中国青藏高原，主要在可可西里、羌塘和阿尔金山，少量见于印度拉达克",
       habitat="海拔 3700–5500 m 的高寒草原和荒漠",
       diet="植食性，吃禾本科和莎草科植物",
       weight="25–40 kg", iucn="NT", cites="I", cn="一级",
       notes=("雄性有细长而直的黑色角。", "每年夏季，雌藏羚会集体迁徙到卓乃湖等产羔地产仔。",
              "其绒毛曾被用于制作名贵披肩，导致严重盗猎。")),
    sp("岩羊", "Pseudois nayaur", "Blue Sheep", "mammal", "牛科", alias=("崖羊",),
       dist="青藏高原及喜马拉雅山脉，包括中国、尼泊尔、不丹和印度北部",
       habitat="海拔 2500–5500 m 的裸岩、峭壁和高山草甸",
       diet="植食性，吃草和灌木枝叶",
       weight="35–75 kg", iucn="LC", cn="二级",
       notes=("岩羊善于在陡峭的岩壁上攀爬，是雪豹最主要的猎物之一。",)),
    sp("亚洲象", "Elephas maximus", "Asian Elephant", "mammal", "象科",
       dist="南亚和东南亚，中国仅见于云南西双版纳、普洱和临沧等地",
       habitat="热带森林、竹林和草地",
       diet="植食性，吃草、树叶、树皮、竹子和野果，每天进食时间长达十多个小时",
       weight="3000–5000 kg", iucn="EN", cites="I", cn="一级",
       notes=("耳朵比非洲象小，额头有两个隆起。", "通常只有部分雄象长有外露的象牙。")),
    sp("非洲草原象", "Loxodonta africana", "African Bush Elephant", "mammal", "象科", alias=("非洲象",),
       dist="撒哈拉以南非洲，以东部和南部非洲为主",
       habitat="稀树草原、灌丛和林地",
       diet="植食性，吃草、树叶、树皮和果实",
       weight="可达 6000 kg", iucn="EN",
       notes=("非洲草原象是现存体型最大的陆生动物。", "雌雄通常都有象牙，耳朵大而宽阔。")),
    sp("白犀", "Ceratotherium simum", "White Rhinoceros", "mammal", "犀科", alias=("白犀牛",),
       dist="非洲南部和东部，南非拥有最大的种群",
       habitat="稀树草原和草地",
       diet="植食性，专吃地面的草",
       weight="1800–2500 kg", iucn="NT",
       notes=("关于它的英文名字，一种常见说法认为来自荷兰语中的“宽”，指其宽阔的方形嘴唇，而不是指皮肤颜色。",)),
    # ---- mammals: pangolins, hedgehogs, otters
    sp("中华穿山甲", "Manis pentadactyla", "Chinese Pangolin", "mammal", "鲮鲤科", alias=("穿山甲", "鲮鲤"),
       dist="中国南方各省和台湾，以及尼泊尔、不丹、印度东北部、缅甸北部、越南北部和泰国北部",
       habitat="亚热带森林、灌丛和丘陵",
       diet="以蚂蚁和白蚁为食，用长舌舔食",
       weight="2–7 kg", iucn="CR", cites="I", cn="一级",
       notes=("身体覆盖角质鳞片，受到威胁时会蜷成一团。",)),
    sp("马来穿山甲", "Manis javanica", "Sunda pangolin", "mammal", "鲮鲤科", en_page=False, alias=("爪哇穿山甲",),
       dist="东南亚，包括马来半岛、苏门答腊、爪哇、婆罗洲、泰国和越南南部",
       habitat="热带森林、种植园和花园",
       diet="以蚂蚁和白蚁为食",
       weight="4–10 kg", iucn="CR", cites="I",
       notes=("它是被非法贸易最多的穿山甲种类之一。",)),
    sp("东北刺猬", "Erinaceus amurensis", "Amur Hedgehog", "mammal", "猬科",
       dist="中国东北、华北和华东，以及朝鲜半岛和俄罗斯远东",
       habitat="林缘、灌丛、农田和城市公园",
       diet="杂食性，以昆虫和蚯蚓为主，也吃小型脊椎动物和果实",
       weight="0.6–1 kg", iucn="LC",
       notes=("冬季进入冬眠。", "背部密生棘刺，遇险时蜷缩成刺球。")),
    sp("欧洲刺猬", "Erinaceus europaeus", "European Hedgehog", "mammal", "猬科",
       dist="西欧和北欧，包括英国、斯堪的纳维亚和伊比利亚半岛，后被引入新西兰",
       habitat="林地、绿篱、花园和农田",
       diet="主要吃甲虫、蚯蚓、毛虫和蛞蝓",
       length="20–30 cm", weight="0.6–1.2 kg",
       notes=("背部约有 5000–7000 根棘刺。",)),
    sp("欧亚水獭", "Lutra lutra", "Eurasian Otter", "mammal", "鼬科", alias=("水獭",),
       dist="欧洲、亚洲大部分地区和北非",
       habitat="河流、湖泊和沿海湿地",
       diet="以鱼类为主，也吃蛙类、甲壳类和水鸟",
       length="0.57–0.95 m", weight="7–12 kg", iucn="NT", cites="I", cn="二级",
       notes=("趾间有蹼，善于游泳和潜水。",)),
    sp("海獭", "Enhydra lutris", "Sea Otter", "mammal", "鼬科",
       dist="北太平洋沿岸，从日本北部、千岛群岛、堪察加经阿留申群岛、阿拉斯加到美国加利福尼亚",
       habitat="近岸海域和海藻林",
       diet="吃海胆、蛤蜊、贻贝和蟹类",
       weight="14–45 kg", iucn="EN",
       notes=("海獭常仰躺在水面，用石块敲开贝壳。", "它的毛是所有动物中最密的。")),
    # ---- mammals: cetaceans
    sp("白鳍豚", "Lipotes vexillifer", "Yangtze River dolphin", "mammal", "白鳍豚科", en_page=False,
       dist="中国长江中下游及与之相连的洞庭湖和鄱阳湖",
       habitat="浑浊的江河干流和湖口",
       diet="以鱼类为食",
       length="可达 2.5 m", iucn="CR", cn="一级",
       notes=("2006 年长江淡水豚类考察未发现任何个体，此后被认为可能已经功能性灭绝。", "它的视力退化，主要依靠回声定位。")),
    sp("蓝鲸", "Balaenoptera musculus", "Blue Whale", "mammal", "须鲸科",
       dist="世界各大洋，从极地海域到热带海域",
       habitat="远洋",
       diet="以磷虾为主食，通过鲸须过滤海水进食",
       length="24–30 m", weight="可达 150 t", iucn="EN", cites="I",
       notes=("蓝鲸是已知体型最大的动物。",)),
    sp("座头鲸", "Megaptera novaeangliae", "Humpback Whale", "mammal", "须鲸科", alias=("大翅鲸",),
       dist="世界各大洋，每年在高纬度觅食海域和热带繁殖海域之间长距离迁徙",
       habitat="远洋和近岸海域",
       diet="吃磷虾和鲱鱼等小型鱼类，会用“气泡网”围捕鱼群",
       length="12–16 m", weight="25–30 t", iucn="LC", cites="I",
       notes=("胸鳍极长，约为体长的三分之一。", "雄鲸会发出复杂而有规律的“歌声”。")),
    sp("虎鲸", "Orcinus orca", "Killer Whale", "mammal", "海豚科", alias=("逆戟鲸",),
       dist="世界各大洋，以寒冷海域较多",
       habitat="近岸和远洋",
       diet="食性多样，吃鱼类、海豹、海狮、企鹅，甚至其他鲸类",
       length="6–8 m", weight="3–6 t", iucn="DD", cites="II",
       notes=("名字里虽然有“鲸”字，它实际上是体型最大的海豚。", "黑白分明的体色和眼后方的白斑是它的标志。")),
    # ---- mammals: rodents, marsupials, monotremes
    sp("喜马拉雅旱獭", "Marmota himalayana", "Himalayan Marmot", "mammal", "松鼠科", alias=("旱獭",),
       dist="青藏高原及喜马拉雅山区，包括中国青海、西藏、甘肃、四川以及尼泊尔和印度北部",
       habitat="海拔 3000–5500 m 的高山草甸",
       diet="植食性，吃草本植物的茎叶和根",
       weight="4–9 kg", iucn="LC",
       notes=("冬季成群在洞穴中冬眠，可长达半年。", "它是鼠疫病菌的自然宿主之一，不要捕捉或接触。")),
    sp("欧亚红松鼠", "Sciurus vulgaris", "Eurasian Red Squirrel", "mammal", "松鼠科", alias=("松鼠", "灰鼠"),
       dist="欧洲至亚洲北部，包括中国东北和新疆北部",
       habitat="针叶林和针阔混交林",
       diet="吃松子、坚果、种子和真菌，偶尔吃鸟卵",
       length="19–23 cm", weight="250–340 g", iucn="LC",
       notes=("冬季耳尖长出簇毛。", "它会把坚果埋藏起来过冬。")),
    sp("褐家鼠", "Rattus norvegicus", "Brown Rat", "mammal", "鼠科", alias=("大家鼠", "沟鼠"),
       dist="除南极洲以外的各大洲，随人类活动扩散到全世界",
       habitat="城市下水道、仓库、农田和住宅",
       diet="杂食性，几乎什么都吃",
       length="20–28 cm", weight="0.2–0.5 kg", iucn="LC",
       notes=("学名中的 norvegicus 意为“挪威的”，但这个名称其实是误称，它起源于亚洲北部。", "实验大鼠是由褐家鼠培育而来的。")),
    sp("红袋鼠", "Osphranter rufus", "Red Kangaroo", "mammal", "袋鼠科", alias=("赤大袋鼠",),
       dist="澳大利亚中部和西部的干旱、半干旱地区",
       habitat="开阔草原和灌丛荒漠",
       diet="植食性，吃草和低矮灌木",
       weight="可达 90 kg", iucn="LC",
       notes=("红袋鼠是现存体型最大的有袋类动物。", "幼崽要在母亲的育儿袋中生活约八个月。")),
    sp("树袋熊", "Phascolarctos cinereus", "Koala", "mammal", "树袋熊科", alias=("考拉",),
       dist="澳大利亚东部和东南部，包括昆士兰、新南威尔士、维多利亚和南澳大利亚",
       habitat="桉树林",
       diet="几乎只吃桉树叶",
       weight="4–15 kg", iucn="VU",
       notes=("由于桉树叶营养低，它每天要睡 18–22 小时。", "“考拉”是英文名称的音译。")),
    sp("鸭嘴兽", "Ornithorhynchus anatinus", "Platypus", "mammal", "鸭嘴兽科",
       dist="澳大利亚东部和塔斯马尼亚岛",
       habitat="淡水河流和湖泊的岸边",
       diet="吃水生昆虫幼虫、淡水虾和蠕虫",
       length="40–50 cm", weight="0.7–2.4 kg", iucn="NT",
       notes=("鸭嘴兽是卵生的哺乳动物。", "雄性后肢有能分泌毒液的距。")),
    # ---- fish
    sp("中华鲟", "Acipenser sinensis", "Chinese Sturgeon", "fish", "鲟科",
       dist="中国东海、黄海沿海和长江，繁殖季节洄游到长江上游产卵",
       habitat="近海大陆架和长江干流",
       diet="吃底栖鱼类、虾、蟹和软体动物",
       length="可达 4 m", weight="可达 500 kg", iucn="CR", cites="II", cn="一级",
       notes=("葛洲坝建成后，中华鲟的洄游通道被阻断，产卵场主要转移到坝下江段。",)),
    sp("长江鲟", "Acipenser dabryanus", "Yangtze sturgeon", "fish", "鲟科", en_page=False, alias=("达氏鲟",),
       dist="长江上游干流及金沙江、岷江等支流",
       habitat="江河的底层",
       diet="吃底栖无脊椎动物、水生昆虫幼虫和小鱼",
       length="可达 1.3 m", iucn="EW", cites="II", cn="一级",
       notes=("与洄游入海的中华鲟不同，长江鲟终生生活在淡水中。", "2022 年 IUCN 将其评估为野外灭绝，目前种群依靠人工增殖放流维持。")),
    sp("白鲟", "Psephurus gladius", "Chinese paddlefish", "fish", "匙吻鲟科", en_page=False, alias=("象鼻鱼",),
       dist="长江干流及其入海口",
       habitat="江河中下层",
       diet="肉食性，吃鱼类和虾蟹",
       length="可达 7 m", iucn="EX", cn="一级",
       notes=("吻部长而呈剑状，约占体长的三分之一，因此俗称“象鼻鱼”。", "2003 年后再无确切记录，2022 年 IUCN 宣布其灭绝。")),
    sp("草鱼", "Ctenopharyngodon idella", "Grass Carp", "fish", "鲤科", alias=("鲩",),
       dist="原产中国东部和俄罗斯阿穆尔河流域，现已被引入世界许多国家",
       habitat="江河、湖泊的中下层",
       diet="植食性，主要吃水草",
       length="可达 1.5 m", weight="可达 45 kg",
       notes=("草鱼是中国“四大家鱼”之一。", "因能大量吃水草，一些国家引入它来控制水草。")),
    sp("鲢", "Hypophthalmichthys molitrix", "Silver Carp", "fish", "鲤科", alias=("鲢鱼", "白鲢"),
       dist="中国东部各大水系，引入北美后成为入侵物种",
       habitat="江河、湖泊的上层水域",
       diet="滤食浮游植物",
       length="可达 1 m", weight="可达 50 kg",
       notes=("鲢是“四大家鱼”之一。", "受惊时常成群跃出水面。")),
    sp("鳙", "Hypophthalmichthys nobilis", "Bighead Carp", "fish", "鲤科", alias=("胖头鱼", "花鲢"),
       dist="中国东部各大水系，后被引入世界多地",
       habitat="江河、湖泊的中上层水域",
       diet="滤食浮游动物",
       weight="可达 40 kg",
       notes=("头部很大，约占体长的三分之一，因此俗称“胖头鱼”。", "鳙与鲢同属，都是“四大家鱼”之一。")),
    sp("青鱼", "Mylopharyngodon piceus", "Black Carp", "fish", "鲤科", alias=("螺蛳青",),
       dist="中国东部各大水系，北起黑龙江，南至珠江",
       habitat="江河、湖泊的底层",
       diet="主要吃螺蛳、蚌和蚬等软体动物",
       length="可达 1.5 m", weight="可达 70 kg",
       notes=("咽齿呈臼状，能够压碎螺壳。", "青鱼是“四大家鱼”中体型最大的一种。")),
    sp("鲤", "Cyprinus carpio", "Common Carp", "fish", "鲤科", alias=("鲤鱼",),
       dist="原产欧洲东部和亚洲，现已被引入世界各地",
       habitat="水流缓慢的江河、湖泊和池塘",
       diet="杂食性，吃底栖动物、水生昆虫、水草和植物碎屑",
       length="可达 1.2 m",
       notes=("口部有两对触须。", "锦鲤就是由鲤培育出来的观赏品种。")),
    sp("大西洋鲑", "Salmo salar", "Atlantic Salmon", "fish", "鲑科", alias=("三文鱼",),
       dist="北大西洋及注入其中的欧洲和北美河流",
       habitat="幼鱼在河流中成长，成鱼生活在海洋",
       diet="在海洋中吃小型鱼类和甲壳类，幼鱼吃水生昆虫",
       length="0.7–1.5 m", weight="3–6 kg", iucn="LC",
       notes=("大西洋鲑会从海洋溯河洄游到出生的河流产卵。", "与多数太平洋鲑不同，部分个体产卵后能返回海洋。",
              "市场上常见的“三文鱼”多为养殖大西洋鲑。")),
    sp("虹鳟", "Oncorhynchus mykiss", "Rainbow Trout", "fish", "鲑科",
       dist="原产北美太平洋沿岸的河流，现已被引入世界各地养殖",
       habitat="水温较低、溶氧丰富的溪流和湖泊",
       diet="肉食性，吃水生昆虫、小鱼和甲壳类",
       weight="2–8 kg", iucn="LC",
       notes=("体侧有一条粉红色或红色的纵带，因此得名。", "洄游入海的类型被称为硬头鳟。")),
    sp("大麻哈鱼", "Oncorhynchus keta", "Chum Salmon", "fish", "鲑科", alias=("马哈鱼", "狗鲑"),
       dist="北太平洋，在中国见于黑龙江、乌苏里江和图们江的洄游群体",
       habitat="成鱼生活在海洋，秋季洄游到河流上游产卵",
       diet="在海洋中吃小鱼、甲壳类和鱿鱼",
       length="可达 1 m",
       notes=("产卵后亲鱼会全部死亡。", "洄游期间雄鱼的吻部弯曲如钩，体侧出现紫红色斑纹。")),
    sp("大白鲨", "Carcharodon carcharias", "Great White Shark", "fish", "鼠鲨科", alias=("噬人鲨",),
       dist="世界温带和亚热带沿海，南非、澳大利亚、美国加利福尼亚和墨西哥沿海较常见",
       habitat="近岸和大陆架海域",
       diet="肉食性，吃鱼类、海豹、海狮和鲸类尸体",
       length="4–6 m", weight="680–1100 kg", iucn="VU", cites="II",
       notes=("它能感受到猎物肌肉活动产生的微弱电场。",)),
    sp("鲸鲨", "Rhincodon typus", "Whale Shark", "fish", "鲸鲨科",
       dist="世界热带和暖温带海洋",
       habitat="远洋和珊瑚礁附近的表层水域",
       diet="滤食浮游生物、鱼卵和小鱼",
       length="可达 18 m", iucn="EN", cites="II", cn="二级",
       notes=("鲸鲨是现存体型最大的鱼类，但性情温和。", "背部有许多白色斑点和横纹，每条鲸鲨的斑点图案都不相同。")),
    sp("眼斑双锯鱼", "Amphiprion ocellaris", "Ocellaris Clownfish", "fish", "雀鲷科", alias=("小丑鱼",),
       dist="印度洋东部和太平洋西部的珊瑚礁，包括中国南海",
       habitat="与大海葵共生的浅水珊瑚礁",
       diet="杂食性，吃浮游动物、藻类和海葵的食物残渣",
       length="约 11 cm",
       notes=("它身体表面的黏液能保护自己不被海葵刺伤。", "鱼群中体型最大的个体是雌性，雌性死后最大的雄性会转变为雌性。")),
    sp("大黄鱼", "Larimichthys crocea", "Large Yellow Croaker", "fish", "石首鱼科", alias=("黄花鱼",),
       dist="中国东海、黄海南部和南海，以及朝鲜半岛西南沿海",
       habitat="近海中下层",
       diet="肉食性，吃小鱼、虾和蟹",
       length="可达 80 cm", iucn="CR",
       notes=("头部有一对较大的耳石，所以这类鱼被称为“石首鱼”。", "生殖季节能发出“咕咕”的叫声。",
              "野生资源已严重衰退，市场上多为养殖个体。")),
    sp("小黄鱼", "Larimichthys polyactis", "small yellow croaker", "fish", "石首鱼科", en_page=False, alias=("小黄花",),
       dist="中国渤海、黄海和东海，以及朝鲜半岛沿海",
       habitat="近海泥沙底质的中下层",
       diet="肉食性，吃小型鱼虾和甲壳类",
       length="可达 40 cm",
       notes=("外形与大黄鱼相似，但体型较小，尾柄较短，鳞片较大。",)),
    sp("鳜", "Siniperca chuatsi", "Mandarin Fish", "fish", "", alias=("鳜鱼", "桂鱼"),
       dist="中国东部各大水系，北至黑龙江，南至珠江，也见于俄罗斯阿穆尔河流域",
       habitat="水草茂盛、水质清澈的江河和湖泊",
       diet="肉食性，几乎只吃活的鱼虾",
       length="可达 70 cm",
       notes=("唐代张志和的“桃花流水鳜鱼肥”写的就是它。", "背鳍的硬棘有毒腺，被刺后会疼痛。")),
    sp("黄鳝", "Monopterus albus", "Asian Swamp Eel", "fish", "合鳃鱼科", alias=("鳝鱼",),
       dist="东亚和东南亚，包括中国除西北高原以外的大部分地区",
       habitat="稻田、池塘、沟渠和泥质浅水",
       diet="肉食性，吃昆虫、蚯蚓、蝌蚪和小鱼",
       length="可达 1 m",
       notes=("黄鳝能借助口咽腔直接呼吸空气。", "它会发生性逆转：幼时为雌性，长大后多转变为雄性。")),
    sp("日本鳗鲡", "Anguilla japonica", "Japanese Eel", "fish", "鳗鲡科", alias=("河鳗", "白鳝"),
       dist="东亚，包括日本、中国、朝鲜半岛和台湾的河流与沿海，产卵场位于马里亚纳群岛西侧海域",
       habitat="幼鳗溯河进入淡水生长，成熟后降河入海",
       diet="肉食性，吃小鱼、虾、蟹和水生昆虫",
       length="可达 1 m", iucn="EN",
       notes=("日本鳗鲡是典型的降河洄游鱼类，在淡水中生长、回到海洋产卵。",)),
    sp("欧洲鳗鲡", "Anguilla anguilla", "European Eel", "fish", "鳗鲡科",
       dist="欧洲和北非的河流及沿海，产卵场位于大西洋的马尾藻海",
       habitat="淡水河流、湖泊和河口",
       diet="肉食性，吃甲壳类、昆虫幼虫和小鱼",
       length="可达 1.3 m", iucn="CR", cites="II",
       notes=("幼鳗随洋流漂流数千千米才到达欧洲沿岸。",)),
    sp("翻车鱼", "Mola mola", "Ocean Sunfish", "fish", "翻车鲀科", alias=("翻车鲀",),
       dist="世界温带和热带海洋",
       habitat="远洋表层至中层",
       diet="以水母为主，也吃浮游动物和小鱼",
       weight="247–1000 kg", iucn="VU",
       notes=("它是最重的硬骨鱼之一，常侧躺在海面晒太阳。",)),
    # ---- reptiles
    sp("扬子鳄", "Alligator sinensis", "Chinese Alligator", "reptile", "鼍科", alias=("中华鼍", "土龙"),
       dist="中国安徽、浙江和江苏的长江下游地区，野生种群主要在安徽宣城一带",
       habitat="湖泊、沼泽、池塘和水田",
       diet="肉食性，吃螺、蚌、鱼、虾和小型哺乳动物",
       length="1.5–2.1 m", weight="可达 45 kg", iucn="CR", cites="I", cn="一级",
       notes=("扬子鳄在冬季进入洞穴冬眠。", "它是中国特有的鳄类，也是体型最小的鳄类之一。")),
    sp("密西西比鳄", "Alligator mississippiensis", "American Alligator", "reptile", "鼍科", alias=("美国短吻鳄",),
       dist="美国东南部，包括佛罗里达、路易斯安那、佐治亚和得克萨斯东部",
       habitat="淡水沼泽、湖泊、河流和湿地",
       diet="肉食性，吃鱼、龟、蛇、鸟类和哺乳动物",
       length="3.4–4.6 m", weight="可达 450 kg", iucn="LC", cites="II",
       notes=("20 世纪中期曾濒临灭绝，经保护后数量已经恢复。",)),
    sp("湾鳄", "Crocodylus porosus", "Saltwater Crocodile", "reptile", "鳄科", alias=("咸水鳄",),
       dist="印度东部、斯里兰卡、东南亚、新几内亚和澳大利亚北部",
       habitat="河口、红树林、沿海和淡水河流",
       diet="肉食性，吃鱼类、鸟类、水牛和野猪等",
       length="4–6 m", weight="400–1000 kg", iucn="LC",
       notes=("湾鳄是现存体型最大的爬行动物。", "能在海中长距离游动，往返于岛屿之间。")),
    sp("尼罗鳄", "Crocodylus niloticus", "Nile Crocodile", "reptile", "鳄科",
       dist="撒哈拉以南非洲和尼罗河流域，也见于马达加斯加",
       habitat="河流、湖泊和沼泽",
       diet="肉食性，吃鱼类，也伏击前来饮水的角马、斑马和羚羊",
       length="3.5–5 m", weight="225–750 kg", iucn="LC",
       notes=("雌鳄把卵产在沙坑中，并守护巢穴直到幼鳄孵出。",)),
    sp("科莫多巨蜥", "Varanus komodoensis", "Komodo Dragon", "reptile", "巨蜥科", alias=("科莫多龙",),
       dist="印度尼西亚的科莫多岛、林卡岛、弗洛勒斯岛和吉利莫唐岛等",
       habitat="热带干燥草原和落叶林",
       diet="肉食性，捕食鹿、野猪和水牛，也吃腐肉",
       length="2–3 m", weight="约 70 kg", iucn="EN", cites="I",
       notes=("科莫多巨蜥是现存最大的蜥蜴。", "它的下颌有毒腺，毒液能阻止猎物血液凝固。")),
    sp("圆鼻巨蜥", "Varanus salvator", "Asian Water Monitor", "reptile", "巨蜥科", alias=("泽巨蜥", "五爪金龙"),
       dist="南亚、东南亚和中国南部（广东、广西、海南和云南）",
       habitat="河流、沼泽和红树林附近，也出现在城市水道",
       diet="肉食性，吃鱼、蛙、鸟类、小型哺乳动物和腐肉",
       length="1.5–2 m", iucn="LC", cites="II", cn="一级",
       notes=("善于游泳，能在水下停留半小时左右。",)),
    sp("眼镜王蛇", "Ophiophagus hannah", "King Cobra", "reptile", "眼镜蛇科", alias=("过山风",),
       dist="印度、中国南部、东南亚至菲律宾",
       habitat="热带和亚热带森林、竹林和溪边",
       diet="主要捕食其他蛇类，也吃蜥蜴",
       length="3–4 m", iucn="VU", cites="II", cn="二级",
       notes=("属名 Ophiophagus 的意思就是“食蛇者”，这个名字反映了它的食性。", "它是世界上最长的毒蛇。",
              "雌蛇会用落叶筑巢护卵。")),
    sp("舟山眼镜蛇", "Naja atra", "Chinese Cobra", "reptile", "眼镜蛇科", alias=("中华眼镜蛇", "饭铲头"),
       dist="中国南方各省、台湾和海南，以及越南北部和老挝",
       habitat="丘陵、农田、灌丛和村庄附近",
       diet="吃鼠类、蛙类、蛇、鸟和鸟卵",
       length="1–1.5 m", iucn="VU", cites="II",
       notes=("受到威胁时会竖起前半身，颈部膨扁，露出眼镜状的斑纹。",)),
    sp("绿海龟", "Chelonia mydas", "Green Sea Turtle", "reptile", "海龟科",
       dist="世界热带和亚热带海洋，中国南海及广东惠东沿海有产卵记录",
       habitat="近岸海草床和珊瑚礁，雌龟上岸在沙滩产卵",
       diet="幼龟杂食，成体以海草和藻类为主",
       weight="68–190 kg", extra=(("背甲长", "0.8–1.2 m"),), iucn="EN", cites="I", cn="一级",
       notes=("它的名字并非来自龟壳颜色，而是因为体内脂肪呈绿色。",)),
    sp("中华鳖", "Pelodiscus sinensis", "Chinese Softshell Turtle", "reptile", "鳖科", alias=("甲鱼", "团鱼"),
       dist="中国、朝鲜半岛、越南北部和俄罗斯远东，日本等地也有分布",
       habitat="江河、湖泊、池塘和水库的泥沙底",
       diet="以肉食为主，吃鱼、虾、螺和水生昆虫",
       iucn="VU",
       notes=("背甲覆盖柔软的革质皮肤，没有角质盾片。", "颈很长，能迅速伸出咬住猎物。")),
    sp("乌龟", "Mauremys reevesii", "Chinese pond turtle", "reptile", "地龟科", en_page=False, alias=("草龟", "中华草龟"),
       dist="中国中部和东部、台湾，以及朝鲜半岛和日本",
       habitat="河流、湖泊、池塘和稻田",
       diet="杂食性，吃螺、虾、小鱼、昆虫和水草",
       extra=(("背甲长", "10–25 cm"),), iucn="EN", cn="二级",
       notes=("背甲上有三条纵棱。", "雄龟年老后体色常变黑，俗称“墨龟”。")),
    sp("大壁虎", "Gekko gecko", "Tokay Gecko", "reptile", "壁虎科", alias=("蛤蚧",),
       dist="南亚、东南亚至中国南部（广西、广东、云南和福建）",
       habitat="岩壁缝隙、树洞和房屋墙壁",
       diet="吃昆虫和小型脊椎动物",
       extra=(("全长", "30–40 cm"),), iucn="LC", cites="II", cn="二级",
       notes=("它的英文名和中文名“蛤蚧”都来源于其响亮的叫声。", "趾下有许多皮瓣，能在光滑的墙壁上爬行。")),
    sp("高冠变色龙", "Chamaeleo calyptratus", "Veiled Chameleon", "reptile", "避役科", alias=("也门变色龙",),
       dist="阿拉伯半岛西南部的也门和沙特阿拉伯",
       habitat="山地灌丛、河谷和耕地",
       diet="以昆虫为主，也会吃植物叶片补充水分",
       extra=(("全长", "雄性 43–61 cm"),), iucn="LC", cites="II",
       notes=("头顶有高耸的盔状突起。", "体色会随情绪和温度发生变化。")),
    sp("缅甸蟒", "Python bivittatus", "Burmese Python", "reptile", "蟒科", alias=("蟒蛇",),
       dist="东南亚和中国南部，在美国佛罗里达的大沼泽地已成为入侵物种",
       habitat="热带森林、草地、沼泽和河边",
       diet="吃哺乳动物和鸟类，用身体缠绕使猎物窒息",
       length="3.7–5.7 m", iucn="VU", cites="II", cn="一级",
       notes=("雌蟒会盘绕在卵上，通过肌肉收缩产热孵卵。",)),
    # ---- amphibians
    sp("中国大鲵", "Andrias davidianus", "Chinese giant salamander", "amphibian", "隐鳃鲵科", en_page=False,
       alias=("娃娃鱼", "大鲵"),
       dist="中国长江、黄河和珠江中上游的山区",
       habitat="水质清澈、多岩洞的山涧溪流",
       diet="肉食性，吃鱼、蛙、蟹、虾和水生昆虫",
       length="可达 1.8 m", weight="可达 50 kg", iucn="CR", cites="I", cn="二级",
       notes=("“娃娃鱼”这个名字来源于它的叫声，据说像婴儿啼哭。", "它是现存体型最大的两栖动物之一。")),
    sp("日本大鲵", "Andrias japonicus", "Japanese Giant Salamander", "amphibian", "隐鳃鲵科",
       dist="日本本州西部、四国和九州",
       habitat="山区清澈而凉爽的溪流",
       diet="肉食性，吃鱼类、昆虫、甲壳类和小型哺乳动物",
       length="可达 1.5 m", cites="I",
       notes=("日本大鲵夜间活动，白天躲在岩石下或河岸洞穴中。", "皮肤粗糙多皱，能通过皮肤进行气体交换。")),
    sp("黑斑侧褶蛙", "Pelophylax nigromaculatus", "Black-spotted Pond Frog", "amphibian", "蛙科",
       alias=("黑斑蛙", "青蛙"),
       dist="中国东部和中部的大部分地区，以及朝鲜半岛、日本和俄罗斯远东",
       habitat="稻田、池塘、水沟和湖边",
       diet="主要吃昆虫，也吃蜘蛛和其他小型无脊椎动物",
       length="7–9 cm", iucn="NT",
       notes=("背部两侧各有一条明显的皮肤褶，这就是“侧褶”这个名称的由来。", "人们俗称的“青蛙”多指这种蛙。")),
    sp("中国林蛙", "Rana chensinensis", "Chinese brown frog", "amphibian", "蛙科", en_page=False, alias=("哈士蟆",),
       dist="中国东北、华北和西北，以及蒙古和朝鲜半岛北部",
       habitat="山区森林、草地和溪流附近，冬季在水下冬眠",
       diet="吃昆虫、蜘蛛和其他小型无脊椎动物",
       length="5–7 cm", iucn="LC",
       notes=("雌蛙的输卵管干制品被称为“林蛙油”。",)),
    sp("欧洲林蛙", "Rana temporaria", "Common Frog", "amphibian", "蛙科",
       dist="欧洲大部分地区，从爱尔兰和西班牙北部到乌拉尔山脉，北至斯堪的纳维亚",
       habitat="池塘、湿草地、森林和花园",
       diet="吃昆虫、蜗牛、蛞蝓和蠕虫",
       length="6–9 cm", iucn="LC",
       notes=("早春时节大量聚集在池塘中产卵，卵团成片漂浮。",)),
    sp("美洲牛蛙", "Rana catesbeiana", "American Bullfrog", "amphibian", "蛙科", alias=("牛蛙",),
       dist="原产北美东部，已被引入中国、欧洲和南美等地并成为入侵物种",
       habitat="湖泊、池塘和水流缓慢的河流",
       diet="几乎吞食一切能吞下的动物，包括昆虫、鱼、其他蛙类、蛇和小鸟",
       length="9–15 cm", weight="可达 0.5 kg", iucn="LC",
       notes=("雄蛙叫声低沉，像牛叫，因此叫做牛蛙。",)),
    sp("中华蟾蜍", "Bufo gargarizans", "Asiatic Toad", "amphibian", "蟾蜍科", alias=("癞蛤蟆",),
       dist="中国大部分地区，以及朝鲜半岛和俄罗斯远东",
       habitat="农田、草地、林地和住宅附近",
       diet="吃昆虫、蜗牛和蚯蚓",
       length="约 10 cm", iucn="LC",
       notes=("耳后腺的分泌物经加工后称为“蟾酥”，是一味传统中药。", "皮肤布满疣粒。")),
    sp("美西钝口螈", "Ambystoma mexicanum", "Axolotl", "amphibian", "钝口螈科", alias=("六角恐龙",),
       dist="仅分布于墨西哥城附近的霍奇米尔科湖水系",
       habitat="高原湖泊和运河",
       diet="吃小鱼、蠕虫、昆虫幼虫和甲壳类",
       length="15–30 cm", iucn="CR", cites="II",
       notes=("它终生保持幼体形态，用外鳃呼吸，这种现象称为幼态持续。", "再生能力很强，能重新长出断肢。",
              "头两侧各有三对羽状外鳃，看起来像六只角，因此俗称“六角恐龙”。")),
    sp("东方蝾螈", "Cynops orientalis", "Chinese fire-bellied newt", "amphibian", "蝾螈科", en_page=False,
       dist="中国中东部，包括湖北、安徽、江苏、浙江、江西、河南和湖南",
       habitat="山区水塘、稻田和缓流水沟",
       diet="吃水生昆虫、蚯蚓和小型无脊椎动物",
       length="6–10 cm", iucn="LC",
       notes=("腹部橘红色，带有黑色斑点。",)),
    sp("红眼树蛙", "Agalychnis callidryas", "Red-eyed Tree Frog", "amphibian", "",
       dist="中美洲，从墨西哥南部到哥伦比亚西北部",
       habitat="热带雨林的树冠和水边植物",
       diet="吃蟋蟀、飞蛾和其他昆虫",
       length="5–7 cm", iucn="LC", cites="II",
       notes=("白天睡觉时收起四肢、闭上眼睛，只露出绿色的背部。", "受惊时突然睁开鲜红色的眼睛吓退天敌。",
              "卵产在悬于水面上方的叶片上，蝌蚪孵出后落入水中。")),
    # ---- insects
    sp("西方蜜蜂", "Apis mellifera", "Western Honey Bee", "insect", "蜜蜂科", alias=("欧洲蜜蜂",),
       dist="原产欧洲、非洲和西亚，现已被人类带到除南极洲外的各大洲",
       habitat="蜂群在树洞或人工蜂箱中筑巢",
       diet="成蜂吃花蜜和花粉，幼虫由工蜂喂食蜂王浆和蜂粮",
       length="工蜂 10–15 mm",
       notes=("工蜂用“摇摆舞”向同伴传递蜜源的方向和距离。", "意大利蜜蜂是它的一个亚种，是中国养蜂业最常用的蜂种。")),
    sp("东方蜜蜂", "Apis cerana", "Eastern Honey Bee", "insect", "蜜蜂科", alias=("中蜂",),
       dist="南亚、东南亚和东亚，包括中国、日本和朝鲜半岛",
       habitat="在树洞、岩洞或蜂箱中筑巢",
       diet="采食花蜜和花粉",
       length="工蜂约 10–11 mm",
       notes=("中华蜜蜂是东方蜜蜂在中国的亚种，简称中蜂。", "遇到胡蜂入侵时，工蜂会围成“热球”，用体温把胡蜂热死。")),
    sp("家蚕", "Bombyx mori", "Domestic Silk Moth", "insect", "蚕蛾科", alias=("蚕",),
       dist="起源于中国，现在世界多地人工饲养，野外没有自然种群",
       habitat="完全依赖人工饲养",
       diet="幼虫只吃桑叶，成虫不进食",
       notes=("幼虫在化蛹前吐丝结茧，一个茧的丝可长达 1000 m 以上。", "成虫翅膀退化，不能飞翔。")),
    sp("黑脉金斑蝶", "Danaus plexippus", "Monarch Butterfly", "insect", "蛱蝶科", alias=("帝王蝶", "君主斑蝶"),
       dist="北美洲、中美洲和南美洲北部，也见于澳大利亚、新西兰和部分太平洋岛屿",
       habitat="草地、农田边缘和花园",
       diet="幼虫取食马利筋，成虫吸食花蜜",
       extra=(("翅展", "8.9–10.2 cm"),),
       notes=("北美东部的种群秋季南迁数千千米，到墨西哥中部的山林越冬。", "幼虫从马利筋中获得毒素，使鸟类不敢捕食。")),
    sp("金斑蝶", "Danaus chrysippus", "Plain Tiger", "insect", "蛱蝶科", alias=("桦斑蝶",),
       dist="亚洲、非洲和澳大利亚的热带与亚热带地区，中国见于南方各省",
       habitat="开阔草地、荒地和花园",
       diet="幼虫取食马利筋等萝藦类植物，成虫吸食花蜜",
       extra=(("翅展", "7–8 cm"),),
       notes=("翅膀橙黄色，外缘黑色并有白斑。", "一些其他蝴蝶会模仿它的斑纹以躲避天敌。")),
    sp("七星瓢虫", "Coccinella septempunctata", "Seven-spot Ladybird", "insect", "瓢虫科",
       dist="欧洲、亚洲和北非，后被引入北美",
       habitat="农田、草地和花园",
       diet="成虫和幼虫都捕食蚜虫",
       length="5–8 mm",
       notes=("红色鞘翅上共有七个黑点，这就是它名字的由来。", "它是农业上重要的害虫天敌。")),
    sp("异色瓢虫", "Harmonia axyridis", "Asian Lady Beetle", "insect", "瓢虫科",
       dist="原产东亚，包括中国、日本、朝鲜半岛和俄罗斯远东，现已入侵欧洲和美洲",
       habitat="农田、果园、森林和城市绿地",
       diet="捕食蚜虫和介壳虫",
       length="5.5–8.5 mm",
       notes=("鞘翅颜色和斑点数目变化极大，从无斑到十九个斑都有。", "秋季常成群飞入房屋越冬。")),
    sp("飞蝗", "Locusta migratoria", "Migratory Locust", "insect", "",
       dist="非洲、欧亚大陆和澳大利亚的温带及热带地区",
       habitat="草原、河滩、湖滨和农田",
       diet="取食禾本科植物，包括小麦、玉米、水稻和芦苇",
       length="3.5–5.5 cm",
       notes=("种群密度升高时会从散居型转变为群居型，形成蝗灾。", "历史上造成中国蝗灾的主要是其亚种东亚飞蝗。")),
    sp("中华大刀螳", "Tenodera sinensis", "Chinese mantis", "insect", "螳科", en_page=False, alias=("大刀螂",),
       dist="中国、日本、朝鲜半岛和东南亚，20 世纪初被引入北美",
       habitat="灌丛、草地、农田和花园",
       diet="肉食性，捕食蝗虫、蝇、蛾等各种昆虫",
       length="8–10 cm",
       notes=("雌虫交配后有时会吃掉雄虫。", "秋季把卵产在枝条上，形成泡沫状的卵鞘，称为“螵蛸”。")),
    sp("黑腹果蝇", "Drosophila melanogaster", "Common Fruit Fly", "insect", "果蝇科",
       dist="世界各地，常见于人类居住区",
       habitat="腐烂水果、垃圾桶和发酵物附近",
       diet="以腐烂水果上的酵母菌为食",
       length="约 2.5 mm",
       notes=("它是遗传学研究中最重要的模式生物之一。", "从卵发育到成虫只需约 10 天。")),
    sp("金凤蝶", "Papilio machaon", "Old World Swallowtail", "insect", "凤蝶科", alias=("黄凤蝶",),
       dist="欧亚大陆和北美洲西北部，中国大部分地区可见",
       habitat="草地、山坡和农田",
       diet="幼虫取食茴香、胡萝卜等伞形科植物，成虫吸食花蜜",
       extra=(("翅展", "6.5–8.5 cm"),),
       notes=("后翅有尾突，近臀角处有红色眼斑。",)),
    sp("柑橘凤蝶", "Papilio xuthus", "Asian Swallowtail", "insect", "凤蝶科", alias=("花椒凤蝶",),
       dist="东亚，包括中国、日本、朝鲜半岛和俄罗斯远东",
       habitat="果园、花园和山地",
       diet="幼虫取食柑橘、花椒等芸香科植物的叶片，成虫吸食花蜜",
       extra=(("翅展", "7–9 cm"),),
       notes=("夏型个体比春型个体大。", "低龄幼虫形似鸟粪，可躲避天敌。")),
    # ---- trees
    sp("鸡爪槭", "Acer palmatum", "Japanese Maple", "tree", "无患子科", alias=("鸡爪枫",),
       dist="日本、朝鲜半岛和中国东部",
       habitat="山地林缘和林下",
       height="6–10 m", bloom="4–5 月",
       notes=("叶片掌状 5–9 深裂，形似鸡爪，因此得名。", "秋季叶色变红，是常见的观赏树种。", "在旧的分类系统中属于槭树科。")),
    sp("糖槭", "Acer saccharum", "Sugar Maple", "tree", "无患子科", alias=("糖枫",),
       dist="北美东北部，包括加拿大东南部和美国东北部",
       habitat="湿润肥沃的落叶阔叶林",
       height="25–35 m", bloom="4–5 月",
       notes=("早春采集的树液可以熬制成枫糖浆。", "加拿大国旗上的枫叶通常被认为是糖槭的叶子。")),
    sp("红花槭", "Acer rubrum", "Red Maple", "tree", "无患子科", alias=("美国红枫",),
       dist="北美东部，从加拿大东南部到美国佛罗里达",
       habitat="从沼泽、河岸到干燥山脊，适应性很强",
       height="18–27 m", bloom="3–4 月",
       notes=("早春先花后叶，红色小花开满枝头。", "秋叶鲜红，常作为行道树栽培。")),
    sp("元宝槭", "Acer truncatum", "Shantung maple", "tree", "无患子科", en_page=False, alias=("元宝枫", "平基槭"),
       dist="中国华北、东北南部和华东北部，以及朝鲜半岛",
       habitat="山坡疏林",
       height="8–10 m", bloom="4–5 月",
       notes=("两枚翅果连在一起，形状很像古代的元宝，这就是它名字的来历。", "种子可以榨油，称为元宝枫籽油。")),
    sp("蒙古栎", "Quercus mongolica", "Mongolian Oak", "tree", "壳斗科", alias=("柞树",),
       dist="中国东北和华北，以及俄罗斯远东、朝鲜半岛、日本和蒙古东部",
       habitat="向阳山坡和山脊",
       height="可达 30 m", bloom="4–5 月",
       notes=("叶片倒卵形，边缘有波状粗齿。", "东北地区常用它的叶子放养柞蚕。")),
    sp("夏栎", "Quercus robur", "English Oak", "tree", "壳斗科", alias=("英国栎", "夏橡"),
       dist="欧洲大部分地区，东至高加索，中国新疆有引种栽培",
       habitat="深厚肥沃的平原和低山",
       height="25–35 m", bloom="4–5 月",
       notes=("橡实着生在细长的果柄上。", "寿命很长，欧洲有不少树龄超过 1000 年的古树。")),
    sp("栓皮栎", "Quercus variabilis", "Chinese cork oak", "tree", "壳斗科", en_page=False, alias=("软木栎",),
       dist="中国华北至华南、西南各地，以及朝鲜半岛和日本",
       habitat="向阳山坡",
       height="可达 30 m", bloom="3–4 月",
       notes=("树皮木栓层非常发达，可剥下制作软木塞和隔热材料。", "叶背密生灰白色星状毛。")),
    sp("北美红栎", "Quercus rubra", "Northern Red Oak", "tree", "壳斗科", alias=("红槲栎",),
       dist="北美东部，从加拿大东南部到美国中部和东部",
       habitat="排水良好的山坡和平地",
       height="20–30 m", bloom="4–5 月",
       notes=("叶片有 7–11 个尖裂片，秋季变为红色或褐红色。",)),
    sp("银杏", "Ginkgo biloba", "Ginkgo", "tree", "银杏科", alias=("白果树", "公孙树"),
       dist="原产中国，野生种群可能仅存于浙江天目山、重庆金佛山等少数地区，现已在世界各地栽培",
       habitat="温带至亚热带，常植于寺庙和庭院",
       height="可达 40 m", iucn="EN", cn="一级",
       notes=("银杏是现存种子植物中最古老的孑遗植物之一，被称为“活化石”。",
              "“公孙树”这个名称的意思是爷爷种树、孙子才能收获白果，说明它生长缓慢。", "叶片呈扇形，秋季变为金黄色。")),
    sp("水杉", "Metasequoia glyptostroboides", "Dawn Redwood", "tree", "柏科",
       dist="原产中国湖北利川、重庆石柱和湖南龙山一带，现已广泛栽培",
       habitat="山谷和溪边的湿润地带",
       height="可达 35 m", iucn="EN", cn="一级",
       notes=("水杉曾被认为早已灭绝，只见于化石，20 世纪 40 年代在中国发现了活的植株。", "它是落叶针叶树，秋季叶子变成棕红色后脱落。")),
    sp("北美红杉", "Sequoia sempervirens", "Coast Redwood", "tree", "柏科", alias=("海岸红杉",),
       dist="美国加利福尼亚中部至俄勒冈西南部的太平洋沿岸",
       habitat="多雾的沿海山谷",
       height="可超过 110 m", iucn="EN",
       notes=("它是世界上最高的树种，目前最高的个体超过 115 m。", "沿海的雾气为它提供了大量水分。")),
    sp("巨杉", "Sequoiadendron giganteum", "Giant Sequoia", "tree", "柏科", alias=("世界爷",),
       dist="美国加利福尼亚内华达山脉西坡",
       habitat="海拔 1400–2000 m 的山地混交林",
       height="50–85 m", iucn="EN",
       notes=("按体积计算，巨杉是世界上最大的树，最著名的个体叫做“谢尔曼将军树”。", "厚达数十厘米的树皮可以抵御山火。")),
    sp("油松", "Pinus tabuliformis", "Chinese red pine", "tree", "松科", en_page=False, alias=("短叶松",),
       dist="中国华北、西北以及辽宁、内蒙古和四川北部",
       habitat="干燥山坡和山脊",
       height="可达 25 m",
       notes=("针叶两针一束，粗硬。", "老树树冠平展如伞，常见于北京的古典园林和寺庙。")),
    sp("马尾松", "Pinus massoniana", "Masson's pine", "tree", "松科", en_page=False, art="",
       dist="中国长江流域及以南各省，以及越南北部",
       habitat="酸性土壤的低山丘陵",
       height="可达 45 m",
       notes=("针叶两针一束，细长而柔软。", "它是南方重要的造林树种和松脂来源。")),
    sp("欧洲赤松", "Pinus sylvestris", "Scots Pine", "tree", "松科", alias=("欧洲松",),
       dist="欧洲至西伯利亚，中国东北的樟子松是它的一个变种",
       habitat="沙地、岩石山坡和泥炭地",
       height="可达 35 m",
       notes=("树干上部的树皮呈橙红色，容易辨认。",)),
    sp("樟", "Cinnamomum camphora", "Camphor Tree", "tree", "樟科", alias=("香樟", "樟树"),
       dist="中国长江以南各省和台湾，以及日本和朝鲜半岛南部",
       habitat="低山平原和村落附近",
       height="可达 30 m", bloom="4–5 月",
       notes=("全株有樟脑香气，木材可防虫蛀，常用于制作箱柜。", "四季常绿，是南方常见的行道树。")),
    sp("肉桂", "Cinnamomum cassia", "Chinese cinnamon", "tree", "樟科", en_page=False, alias=("玉桂",),
       dist="原产中国南部，广西、广东、福建和云南有大量栽培",
       habitat="热带和亚热带的山地",
       height="10–15 m", bloom="6–8 月",
       notes=("干燥的树皮就是常用的香料和中药“桂皮”。",)),
    sp("白桦", "Betula platyphylla", "Asian White Birch", "tree", "桦木科", alias=("桦树",),
       dist="中国东北、华北、西北和西南的高山地区，以及俄罗斯远东、朝鲜半岛和日本",
       habitat="山坡和林间空地，常在火烧迹地上形成纯林",
       height="可达 27 m", bloom="5–6 月",
       notes=("树皮白色，呈纸片状剥落。",)),
    sp("垂柳", "Salix babylonica", "Weeping Willow", "tree", "杨柳科",
       dist="原产中国长江流域和黄河流域，现已在世界各地栽培",
       habitat="河岸、湖边和低湿地",
       height="12–18 m", bloom="3–4 月",
       notes=("学名中的 babylonica 意为“巴比伦的”，源于林奈误以为它产自巴比伦，其实它原产中国。", "枝条细长下垂，是水边最常见的绿化树种。")),
    sp("槐", "Styphnolobium japonicum", "Japanese Pagoda Tree", "tree", "豆科", alias=("国槐",),
       dist="原产中国，北方尤其常见，日本和朝鲜半岛也有栽培",
       habitat="平原和村落",
       height="可达 25 m", bloom="7–8 月",
       notes=("虽然种加词是 japonicum，它实际上原产中国，后经日本传入欧洲。", "花蕾称为“槐米”，可作黄色染料和药材。")),
    sp("珙桐", "Davidia involucrata", "Dove Tree", "tree", "蓝果树科", alias=("鸽子树",),
       dist="中国西南和中部，包括四川、湖北、湖南、贵州和云南",
       habitat="海拔 1500–2200 m 的潮湿山地阔叶林",
       height="15–20 m", bloom="4–5 月", cn="一级",
       notes=("花序下有两枚大型白色苞片，远看像一群白鸽栖于枝头，所以被称为“鸽子树”。", "它是第三纪孑遗植物。")),
    sp("杜仲", "Eucommia ulmoides", "hardy rubber tree", "tree", "杜仲科", en_page=False,
       dist="中国中部和西南，包括陕西、甘肃、河南、湖北、四川、贵州和湖南",
       habitat="低山、谷地和疏林",
       height="可达 20 m", bloom="3–4 月",
       notes=("折断树皮或叶片时，可以看到银白色的细胶丝。", "杜仲科只有这一个现存物种。", "树皮是传统中药。")),
    sp("梅", "Prunus mume", "Japanese Apricot", "tree", "蔷薇科", alias=("梅花",),
       dist="原产中国南方，长江流域以南栽培最多",
       habitat="向阳山坡和庭园",
       height="4–10 m", bloom="1–3 月",
       notes=("梅在冬末早春开花，与松、竹合称“岁寒三友”。", "果实称为梅子，可制成话梅和乌梅。")),
    sp("山樱花", "Prunus serrulata", "Japanese Cherry", "tree", "蔷薇科", alias=("樱花",),
       dist="中国、日本和朝鲜半岛",
       habitat="山谷林中，常栽培于公园和庭院",
       height="3–8 m", bloom="4–5 月",
       notes=("许多观赏樱花品种都是由它培育或杂交而来的。",)),
    sp("桃", "Prunus persica", "Peach", "tree", "蔷薇科", alias=("桃树",),
       dist="原产中国西北和华北，现在温带地区普遍栽培",
       habitat="果园和庭院",
       height="3–8 m", bloom="3–4 月",
       notes=("学名中的 persica 意为“波斯的”，因为欧洲人是从波斯得到桃的，但桃实际上起源于中国。",)),
    sp("山茶", "Camellia japonica", "Japanese Camellia", "tree", "山茶科", alias=("山茶花", "茶花"),
       dist="中国东部、台湾、日本和朝鲜半岛南部",
       habitat="山地林下和庭园",
       height="可达 9 m", bloom="1–4 月",
       notes=("花大而艳丽，品种极多，是云南、浙江等地著名的观赏花木。",)),
    sp("桂花", "Osmanthus fragrans", "Sweet Osmanthus", "tree", "木犀科", alias=("木犀",),
       dist="原产中国西南，现长江流域及以南各地广泛栽培",
       height="3–5 m", bloom="9–10 月",
       notes=("花小而香气浓郁，可制作桂花糕和桂花酒。",)),
    # ---- other plants
    sp("毛竹", "Phyllostachys edulis", "Moso Bamboo", "plant", "禾本科", alias=("楠竹",), art="",
       dist="中国秦岭、汉水流域以南，以浙江、福建、江西和湖南最多",
       habitat="山地和丘陵的酸性土壤",
       height="可达 20 m",
       notes=("春季竹笋生长极快，高峰期一天可长高约 1 m。", "毛竹一生通常只开花一次，开花后成片死亡。")),
    sp("牡丹", "Paeonia suffruticosa", "Tree Peony", "plant", "芍药科", alias=("洛阳花", "富贵花"),
       dist="原产中国，河南洛阳和山东菏泽是著名的栽培中心",
       habitat="向阳、排水良好的土壤",
       height="0.5–2 m", bloom="4–5 月",
       notes=("牡丹是落叶灌木，素有“花中之王”的美称。",)),
    sp("芍药", "Paeonia lactiflora", "Chinese Peony", "plant", "芍药科", alias=("将离",),
       dist="中国北部、朝鲜半岛、蒙古和西伯利亚东部",
       habitat="山坡草地和林下",
       height="0.6–1 m", bloom="5–6 月",
       notes=("芍药是多年生草本，冬季地上部分枯萎，这是它和牡丹最明显的区别。", "根可入药，称为白芍。")),
    sp("莲", "Nelumbo nucifera", "Sacred Lotus", "plant", "莲科", alias=("荷花", "莲花"),
       dist="亚洲南部和东部至澳大利亚北部，中国南北各地广泛栽培",
       habitat="池塘、湖泊和水田",
       bloom="6–8 月",
       notes=("叶面有微小的乳突和蜡质，水珠在上面滚动而不沾湿叶片，这被称为“莲花效应”。", "地下茎称为藕，种子称为莲子，都可食用。")),
    sp("月季", "Rosa chinensis", "China Rose", "plant", "蔷薇科", alias=("月季花", "月月红"),
       dist="原产中国，现在世界各地广泛栽培",
       height="1–2 m", bloom="4–9 月",
       notes=("几乎每个月都能开花，因此民间称为“月月红”。", "现代月季的四季开花性状就来自中国月季。")),
    sp("玫瑰", "Rosa rugosa", "Rugosa Rose", "plant", "蔷薇科",
       dist="中国北部、朝鲜半岛、日本和俄罗斯远东的沿海地区",
       habitat="海滨沙地和山坡",
       height="1–2 m", bloom="5–6 月", cn="二级",
       notes=("叶面有明显的皱纹，种加词 rugosa 就是“皱纹”的意思。", "枝干密生皮刺和刺毛。", "花瓣可以提取玫瑰油、制作玫瑰酱。")),
    sp("茶", "Camellia sinensis", "Tea Plant", "plant", "山茶科", alias=("茶树",),
       dist="原产中国西南，现广泛栽培于亚洲、非洲东部和南美洲",
       habitat="温暖湿润、酸性土壤的山坡",
       height="栽培时常修剪至 1 m 左右，野生植株可达 15 m", bloom="10 月至翌年 2 月",
       notes=("嫩叶经过不同的加工方法，可以制成绿茶、红茶和乌龙茶等。",)),
    sp("油茶", "Camellia oleifera", "oil-tea camellia", "plant", "山茶科", en_page=False, alias=("茶子树",),
       dist="中国长江流域及以南各省",
       habitat="丘陵山地的酸性红壤",
       height="4–6 m", bloom="10 月至翌年 1 月",
       notes=("种子可以榨取山茶油，是中国重要的木本油料树种。",)),
    sp("菊花", "Chrysanthemum morifolium", "Florist's Chrysanthemum", "plant", "菊科", alias=("菊",),
       dist="原产中国，现在世界各地栽培",
       height="0.6–1.5 m", bloom="9–11 月",
       notes=("品种超过数千个，花形和花色变化极大。", "杭白菊等品种的头状花序可以泡茶。")),
    sp("向日葵", "Helianthus annuus", "Common Sunflower", "plant", "菊科", alias=("葵花",),
       dist="原产北美洲，现在世界各地栽培",
       height="1–3 m", bloom="7–9 月",
       notes=("幼嫩的花盘会随太阳转动，开花后多固定朝向东方。", "种子就是常吃的葵花籽，也可榨油。")),
    sp("药用蒲公英", "Taraxacum officinale", "Common Dandelion", "plant", "菊科", alias=("西洋蒲公英",),
       dist="原产欧亚大陆，现已遍布世界温带地区",
       habitat="草地、路边和荒地",
       height="10–25 cm", bloom="4–9 月",
       notes=("瘦果顶端有白色冠毛，形成绒球，随风飘散。", "中国本土常见的蒲公英是另一个物种。")),
    sp("含羞草", "Mimosa pudica", "Sensitive Plant", "plant", "豆科", alias=("知羞草",),
       dist="原产南美洲和中美洲，现已广布于热带地区，中国南方有逸生",
       habitat="旷野、路旁和荒地",
       height="0.3–1 m", bloom="3–10 月",
       notes=("叶片受到触碰后会迅速合拢并下垂，好像害羞一样，这就是它名字的来源。",)),
    sp("春兰", "Cymbidium goeringii", None, "plant", "兰科", alias=("草兰",),
       dist="中国长江流域及以南、台湾，以及日本和朝鲜半岛南部",
       habitat="山坡林下和溪边",
       bloom="1–3 月", cn="二级",
       notes=("花香清幽，是中国传统名花“国兰”之一。", "叶片狭长，边缘有细齿。")),
    sp("蝴蝶兰", "Phalaenopsis aphrodite", "Moth Orchid", "plant", "兰科",
       dist="菲律宾和中国台湾",
       habitat="热带森林中，附生于树干上",
       bloom="2–5 月",
       notes=("花形像展翅的蝴蝶，因此得名。", "它是附生兰，用粗壮的气生根吸收空气中的水分。")),
    sp("映山红", "Rhododendron simsii", "Sims's azalea", "plant", "杜鹃花科", en_page=False, art="", alias=("杜鹃花", "杜鹃"),
       dist="中国长江流域及以南各省",
       habitat="山地灌丛和松林下的酸性土壤",
       height="2–5 m", bloom="4–5 月",
       notes=("春季开花时漫山遍野一片火红，所以叫做映山红。",)),
    sp("郁金香", "Tulipa gesneriana", "Garden Tulip", "plant", "百合科",
       dist="原种分布于中亚至土耳其一带，荷兰是最著名的栽培国",
       height="20–50 cm", bloom="3–5 月",
       notes=("17 世纪荷兰曾出现“郁金香狂热”，球茎价格一度高得惊人。",)),
    sp("狭叶薰衣草", "Lavandula angustifolia", "English Lavender", "plant", "唇形科", alias=("薰衣草",), art="",
       dist="原产地中海沿岸，现法国普罗旺斯和中国新疆伊犁有大面积种植",
       habitat="阳光充足、干燥的石灰质土壤",
       height="0.3–0.6 m", bloom="6–8 月",
       notes=("花可提取芳香精油。",)),
    sp("普通百里香", "Thymus vulgaris", "Common Thyme", "plant", "唇形科", alias=("百里香",), art="",
       dist="原产地中海西部地区",
       habitat="干燥多石的向阳坡地",
       height="15–30 cm", bloom="5–7 月",
       notes=("叶片有浓烈的芳香，是西餐常用的香草。",)),
    sp("欧洲丁香", "Syringa vulgaris", "Common Lilac", "plant", "木犀科", alias=("洋丁香",),
       dist="原产东南欧的巴尔干半岛，现在温带地区广泛栽培",
       height="2–7 m", bloom="4–5 月",
       notes=("花紫色或白色，有浓郁的香气。",)),
    sp("虞美人", "Papaver rhoeas", "Common Poppy", "plant", "罂粟科", alias=("丽春花",),
       dist="原产欧洲、北非和西亚，现各地栽培",
       habitat="田野、路边和荒地",
       height="25–90 cm", bloom="4–7 月",
       notes=("在英国等国家，红色的虞美人被用来纪念第一次世界大战中的阵亡者。", "它和罂粟同属，但不含鸦片成分。")),
    sp("罂粟", "Papaver somniferum", "Opium Poppy", "plant", "罂粟科",
       dist="原产地中海东部和西亚",
       height="0.6–1.5 m", bloom="4–6 月",
       notes=("未成熟果实的乳汁可制成鸦片，在中国种植受到法律严格管制。",)),
    sp("鸢尾", "Iris tectorum", "Roof Iris", "plant", "鸢尾科", alias=("蓝蝴蝶",),
       dist="中国中部和西南，以及缅甸北部，日本有栽培",
       habitat="向阳坡地和林缘",
       height="30–50 cm", bloom="4–5 月",
       notes=("种加词 tectorum 的意思是“屋顶的”，因为在日本人们曾把它种在茅草屋顶上。",)),
    sp("马蹄莲", "Zantedeschia aethiopica", "Calla Lily", "plant", "天南星科",
       dist="原产南非，现世界各地作为切花栽培",
       habitat="湿润的沼泽边缘和溪边",
       height="0.6–1 m",
       notes=("白色的“花瓣”其实是包裹花序的佛焰苞，形状像马蹄，因此得名马蹄莲。",)),
    # ---- fungi
    sp("灵芝", "Ganoderma lingzhi", "Lingzhi", "fungus", "灵芝科", alias=("赤芝",), art="",
       dist="中国和东亚其他地区",
       habitat="阔叶树的枯木、树桩或根部",
       edible="质地木栓化，不能直接食用，多切片煎煮或加工后使用",
       notes=("菌盖肾形或半圆形，表面红褐色，有漆样光泽。", "过去中国的栽培灵芝常被误用欧洲种的学名，现已确认为独立的物种。")),
    sp("香菇", "Lentinula edodes", "Shiitake", "fungus", "类脐菇科", alias=("香蕈",), art="",
       dist="东亚和东南亚，中国、日本和韩国是主要产地",
       habitat="栎、栲等阔叶树的倒木上",
       edible="可食用，是世界上产量最大的栽培食用菌之一",
       notes=("中国在宋代就有人工栽培香菇的记载。",)),
    sp("猴头菇", "Hericium erinaceus", "Lion's Mane Mushroom", "fungus", "猴头菌科", alias=("猴头菌",),
       dist="北半球温带地区，中国东北和西南较多",
       habitat="阔叶树的枯木或活树的伤口处",
       edible="可食用，肉质鲜嫩，已大量人工栽培",
       notes=("子实体呈球形，表面长满下垂的肉刺，形似猴子的头，所以叫做猴头菇。", "种加词 erinaceus 的意思是“刺猬”。")),
    sp("松茸", "Tricholoma matsutake", "Matsutake", "fungus", "口蘑科", alias=("松口蘑",), art="",
       dist="东亚（中国云南、四川、西藏和吉林，日本和朝鲜半岛），以及北欧和北美",
       habitat="与松树等针叶树形成菌根，生长在松林或针阔混交林下",
       edible="可食用，是名贵的野生食用菌", cn="二级",
       notes=("至今无法人工栽培，全部依靠野外采集。", "出菇季节在夏末和秋季。")),
    sp("毒蝇伞", "Amanita muscaria", "Fly Agaric", "fungus", "鹅膏科", alias=("毒蝇鹅膏",),
       dist="北半球温带和寒温带，中国东北、西北和西南有分布，后被带到南半球",
       habitat="与桦树、松树和云杉等形成菌根，生于林下",
       edible="有毒，误食会引起神经精神症状，不能食用",
       notes=("菌盖鲜红色，上面散布白色疣状鳞片。", "欧洲民间曾把它泡在牛奶里诱杀苍蝇，这就是它名字的由来。")),
    sp("致命鹅膏", "Amanita exitialis", None, "fungus", "鹅膏科", alias=("致命白毒伞",),
       dist="中国南方，尤其是广东、广西和湖南",
       habitat="阔叶林下的地面，常与壳斗科树木形成菌根",
       edible="剧毒，含鹅膏毒肽，少量误食即可致命",
       notes=("子实体纯白色，菌柄有菌环，基部有杯状菌托。", "它是中国南方引起蘑菇中毒死亡最多的种类之一。")),
    sp("双孢蘑菇", "Agaricus bisporus", "Button Mushroom", "fungus", "蘑菇科", alias=("白蘑菇",),
       dist="原产欧洲和北美的草地，现在世界各地栽培",
       habitat="富含有机质的草地和堆肥",
       edible="可食用，是全世界栽培量最大的蘑菇之一",
       notes=("每个担子上只产生两个孢子，这就是“双孢”这个名称的来历。",)),
    sp("糙皮侧耳", "Pleurotus ostreatus", "Oyster Mushroom", "fungus", "侧耳科", alias=("平菇",),
       dist="世界各地的温带和亚热带森林",
       habitat="阔叶树的枯木和树桩上",
       edible="可食用，栽培容易，是中国最常见的食用菌之一",
       notes=("菌盖扇形或贝壳形，形似牡蛎。", "菌丝能分泌毒素并捕食线虫。")),
    sp("金针菇", "Flammulina filiformis", "Enoki", "fungus", "泡头菌科", art="",
       dist="东亚，包括中国、日本和朝鲜半岛",
       habitat="冬季至早春生于阔叶树的枯木上",
       edible="可食用",
       notes=("市售的白色金针菇是在黑暗和低温中栽培的，所以菌柄细长洁白。", "野生个体菌盖黄褐色，菌柄较短。")),
    sp("黑木耳", "Auricularia heimuer", "wood ear", "fungus", "木耳科", en_page=False, alias=("木耳",), art="",
       dist="中国东北、华北和西南等地，以东北的产量最大",
       habitat="栎、榆、桦等阔叶树的朽木上",
       edible="可食用，常干制后泡发使用",
       notes=("子实体呈耳状，胶质，湿润时柔软而富有弹性。",)),
    sp("冬虫夏草", "Ophiocordyceps sinensis", "caterpillar fungus", "fungus", "线虫草科", en_page=False,
       alias=("虫草",), art="",
       dist="青藏高原及其周边的高山地区，包括中国西藏、青海、四川、云南和甘肃，以及尼泊尔和不丹",
       habitat="海拔 3000–5000 m 的高山草甸",
       edible="传统上作为名贵药材，不属于普通食用菌", cn="二级",
       notes=("真菌寄生在蝙蝠蛾的幼虫体内，冬季虫体僵死，夏季从虫头长出棒状子座。",
              "“冬虫夏草”这个名称正来源于这种“冬天是虫、夏天是草”的形态变化。")),
    # ---- birds (no parrots)
    sp("丹顶鹤", "Grus japonensis", "Red-crowned Crane", "bird", "鹤科", alias=("仙鹤",),
       dist="繁殖于中国东北、俄罗斯远东和日本北海道，越冬于江苏盐城等中国东部沿海和朝鲜半岛",
       habitat="芦苇沼泽和沿海滩涂",
       diet="杂食性，吃鱼、虾、贝类、昆虫以及植物的根茎和种子",
       length="约 1.5 m", weight="7–10 kg", iucn="VU", cites="I", cn="一级",
       notes=("头顶有一块裸露的红色皮肤，这是它名字中“丹顶”的由来。",)),
    sp("灰鹤", "Grus grus", "Common Crane", "bird", "鹤科",
       dist="繁殖于欧亚大陆北部，越冬于南欧、北非、中东、印度和中国南方",
       habitat="沼泽、湿草地和农田",
       diet="杂食性，吃植物根茎、种子、谷物和昆虫",
       length="1.0–1.3 m", weight="4.5–6 kg", iucn="LC", cites="II", cn="二级",
       notes=("迁徙时常排成 V 字形或一字形的队列。",)),
    sp("黑颈鹤", "Grus nigricollis", "black-necked crane", "bird", "鹤科", en_page=False,
       dist="繁殖于青藏高原，越冬于云南和贵州高原以及不丹",
       habitat="高原沼泽、湖泊和农田",
       diet="杂食性，吃植物根茎、遗落的青稞和昆虫",
       length="约 1.2–1.4 m", weight="约 5.5 kg", iucn="NT", cites="I", cn="一级",
       notes=("它是世界上唯一在高原上繁殖和生活的鹤类。", "贵州草海是重要的越冬地。")),
    sp("朱鹮", "Nipponia nippon", "Crested Ibis", "bird", "鹮科", alias=("朱鹭",),
       dist="中国陕西汉中的洋县一带，并已在河南、浙江和日本佐渡岛重新引入",
       habitat="山地森林附近的稻田、溪流和湿地",
       diet="吃泥鳅、小鱼、蛙、蟹和水生昆虫",
       length="约 75 cm", iucn="EN", cites="I", cn="一级",
       notes=("1981 年在陕西洋县重新发现仅存的 7 只野生个体，此后种群逐步恢复。", "繁殖季节羽毛会变成灰色。")),
    sp("鸳鸯", "Aix galericulata", "Mandarin Duck", "bird", "鸭科",
       dist="东亚，包括中国、俄罗斯远东、日本和朝鲜半岛，英国也有引入的野化种群",
       habitat="山地森林中的河流、湖泊和水库",
       diet="杂食性，吃植物种子、橡子、昆虫和小鱼",
       length="41–49 cm", iucn="LC", cn="二级",
       notes=("雄鸟羽色艳丽，背部有一对竖立的橙色帆状饰羽。", "“鸳”指雄鸟，“鸯”指雌鸟。")),
    sp("绿头鸭", "Anas platyrhynchos", "Mallard", "bird", "鸭科", alias=("野鸭",),
       dist="北半球广泛分布，并被引入澳大利亚和新西兰",
       habitat="湖泊、河流、池塘和沼泽",
       diet="杂食性，吃水草、种子、昆虫和小型水生动物",
       length="50–65 cm", weight="0.7–1.6 kg", iucn="LC",
       notes=("雄鸟头颈呈金属绿色，颈部有白环。", "大多数家鸭品种是由它驯化而来的。")),
    sp("白头海雕", "Haliaeetus leucocephalus", "Bald Eagle", "bird", "鹰科",
       dist="北美洲，从阿拉斯加、加拿大到美国和墨西哥北部",
       habitat="湖泊、河流和海岸附近的森林",
       diet="以鱼类为主，也吃水鸟和腐肉",
       length="70–102 cm", weight="3–6.3 kg", iucn="LC", cites="II",
       notes=("成鸟头部白色，是美国的国鸟。", "巢非常大，可重复使用多年。")),
    sp("金雕", "Aquila chrysaetos", "Golden Eagle", "bird", "鹰科",
       dist="北半球，包括欧亚大陆、北非和北美，中国见于西部和北部山区",
       habitat="高山、草原和荒漠的开阔地区",
       diet="捕食野兔、旱獭、雉类和幼年有蹄类",
       length="66–102 cm", iucn="LC", cites="II", cn="一级",
       notes=("后颈有金色的羽毛，因此得名。", "在中亚和新疆，有人训练金雕用于狩猎。")),
    sp("帝企鹅", "Aptenodytes forsteri", "Emperor Penguin", "bird", "企鹅科", alias=("皇帝企鹅",),
       dist="南极洲沿岸的海冰区域",
       habitat="南极海冰和周边海域",
       diet="吃鱼类、磷虾和乌贼",
       length="1.0–1.3 m", weight="22–45 kg", iucn="NT",
       notes=("它是现存体型最大的企鹅。", "在南极的冬季，由雄企鹅把卵放在脚上孵化约两个月。")),
    sp("王企鹅", "Aptenodytes patagonicus", "King Penguin", "bird", "企鹅科", alias=("国王企鹅",),
       dist="亚南极岛屿，包括南乔治亚岛、克罗泽群岛和凯尔盖朗群岛",
       habitat="岛屿海岸和周边海域",
       diet="以灯笼鱼为主，也吃乌贼",
       length="70–100 cm", weight="9.3–18 kg", iucn="LC",
       notes=("它是体型第二大的企鹅，颈部两侧有橙色斑块。",)),
    sp("褐马鸡", "Crossoptilon mantchuricum", "brown eared pheasant", "bird", "雉科", en_page=False,
       dist="中国特有，分布于山西、河北、陕西和北京的山地",
       habitat="海拔 1000–2600 m 的针叶林和针阔混交林",
       diet="吃植物的根茎、嫩叶、种子和昆虫",
       length="约 1 m", iucn="VU", cn="一级",
       notes=("耳后有一对白色的耳羽簇，像两只角。", "尾羽蓬松上翘，形似马尾，因此叫做褐马鸡。")),
    sp("红腹锦鸡", "Chrysolophus pictus", "Golden Pheasant", "bird", "雉科", alias=("金鸡",),
       dist="中国中部和西部的山地，包括甘肃、陕西、四川、湖北和贵州",
       habitat="多岩的山坡灌丛和竹丛",
       diet="吃植物的叶、芽、种子和昆虫",
       length="雄鸟 90–105 cm", iucn="LC", cn="二级",
       notes=("雄鸟头顶有金黄色丝状冠羽，腹部鲜红。",)),
    sp("黄腹角雉", "Tragopan caboti", "Cabot's tragopan", "bird", "雉科", en_page=False, art="",
       dist="中国东南部，包括浙江、福建、江西、湖南、广东和广西的山地",
       habitat="中低海拔的常绿阔叶林和针阔混交林",
       diet="主要吃植物的叶、花、果实和种子",
       length="约 60 cm", iucn="VU", cn="一级",
       notes=("雄鸟求偶时会展开喉部鲜艳的肉裾，并竖起头上一对蓝色肉角。",)),
    sp("欧亚喜鹊", "Pica pica", "Eurasian Magpie", "bird", "鸦科", alias=("喜鹊",),
       dist="欧洲和亚洲北部，以及非洲西北部",
       habitat="农田、林缘、村庄和城市",
       diet="杂食性，吃昆虫、鸟卵、雏鸟、谷物和果实",
       length="44–46 cm", iucn="LC",
       notes=("它能在镜子中认出自己，是少数通过镜像测试的非哺乳动物之一。", "东亚的喜鹊现在多被视为一个独立的物种。")),
    sp("家燕", "Hirundo rustica", "Barn Swallow", "bird", "燕科", alias=("燕子",),
       dist="几乎遍布全球，繁殖于北半球，冬季迁往南半球",
       habitat="农村和城镇，常在屋檐下用泥土筑巢",
       diet="在飞行中捕食蚊、蝇等飞虫",
       length="17–19 cm", weight="16–22 g", iucn="LC",
       notes=("尾羽分叉很深，形似剪刀。",)),
    sp("戴胜", "Upupa epops", "Eurasian hoopoe", "bird", "戴胜科", en_page=False, alias=("鸡冠鸟",),
       dist="欧亚大陆和非洲，中国大部分地区可见",
       habitat="开阔的农田、草地、果园和村庄",
       diet="用细长的喙在地面翻找昆虫、蠕虫和幼虫",
       length="25–32 cm", iucn="LC",
       notes=("头顶有扇形的羽冠，受惊时会展开。", "雌鸟孵卵期间，尾脂腺会分泌气味难闻的液体以驱赶天敌。")),
]

# --------------------------------------------------------------------------------------- products
# spec key -> (Chinese label, English label, numeric?)
SPEC = {
    "power": ("额定功率", "rated power", True),
    "consumption": ("最大功耗", "maximum power consumption", True),
    "voltage": ("额定电压", "rated voltage", True),
    "input": ("输入", "input rating", True),
    "output": ("输出功率", "output power", True),
    "battery": ("电池容量", "battery capacity", True),
    "cells": ("电池", "batteries", False),
    "case_battery": ("充电盒电池容量", "charging case battery capacity", True),
    "runtime": ("续航时间", "battery life", True),
    "charge_time": ("充电时间", "charging time", True),
    "weight": ("重量", "weight", True),
    "size": ("尺寸", "dimensions", True),
    "ports": ("接口", "ports", False),
    "wireless": ("无线连接", "wireless connectivity", False),
    "ip": ("防护等级", "IP rating", False),
    "water": ("防水等级", "water resistance rating", False),
    "suction": ("吸力", "suction power", True),
    "dustbin": ("尘杯容量", "dust bin capacity", True),
    "noise": ("运行噪音", "noise level", True),
    "filter": ("滤网", "filter", False),
    "chuck": ("夹头孔径", "chuck capacity", True),
    "torque": ("最大扭矩", "maximum torque", True),
    "speed": ("空载转速", "no-load speed", True),
    "impact": ("冲击频率", "impact rate", True),
    "cadr": ("洁净空气量 (CADR)", "CADR", True),
    "area": ("适用面积", "recommended room size", True),
    "pressure": ("泵压", "pump pressure", True),
    "tank": ("水箱容量", "water tank capacity", True),
    "range": ("测量范围", "measuring range", True),
    "accuracy": ("测量精度", "accuracy", True),
    "laser": ("激光", "laser class", False),
    "screen": ("屏幕", "display", False),
    "bands": ("频段", "frequency bands", False),
    "rate": ("无线速率", "wireless speed rating", False),
    "lan": ("网口", "Ethernet ports", False),
    "antenna": ("天线", "antennas", False),
    "codec": ("音频编码", "audio codecs", False),
    "anc": ("降噪", "noise cancellation", False),
    "keys": ("键位", "key layout", True),
    "switch": ("轴体", "switch type", False),
    "lumen": ("亮度", "brightness", True),
    "cct": ("色温", "color temperature range", True),
    "cri": ("显色指数", "color rendering index", True),
}

CATEGORY_INTRO = {
    "无线手持吸尘器": "适用于床铺、沙发、车内和桌面等小范围清洁，主机可单手握持。",
    "无线路由器": "适用于家庭和小型办公室，支持手机 App 管理和访客网络。",
    "真无线蓝牙耳机": "左右耳机可单独使用，取出后自动回连上一次配对的设备。",
    "锂电钻": "适用于木材、金属和塑料的钻孔以及螺丝拧紧。",
    "锂电冲击钻": "在普通钻孔之外增加冲击档，可在砖墙和轻质混凝土上打孔。",
    "智能手表": "支持心率、血氧和睡眠监测，可与手机同步消息提醒。",
    "空气净化器": "适用于卧室和客厅，可去除 PM2.5、花粉和宠物毛屑。",
    "半自动咖啡机": "可制作意式浓缩咖啡，并通过蒸汽棒打发奶泡。",
    "激光测距仪": "可测量距离、面积和体积，适用于装修和工程测量。",
    "氮化镓充电器": "采用 GaN 功率器件，体积小，可为笔记本电脑和手机快速充电。",
    "三模机械键盘": "支持有线、蓝牙和 2.4 GHz 无线三种连接方式，可在多台设备之间切换。",
    "LED 护眼台灯": "无可见频闪，灯头角度可调，适合阅读和书写。",
}


def pr(code: str, category: str, specs: list[tuple[str, str]], notes: tuple[str, ...] = ()) -> dict:
    for key, _ in specs:
        if key not in SPEC:
            raise KeyError(f"{code}: unknown spec {key}")
    return {"code": code, "category": category, "specs": specs, "notes": notes}


PRODUCTS: list[dict] = [
    pr("KD-2100", "无线手持吸尘器", [
        ("power", "80 W"), ("suction", "9000 Pa"), ("battery", "2000 mAh"), ("runtime", "约 20 min"),
        ("dustbin", "0.3 L"), ("charge_time", "3.5 h"), ("input", "5V/2A"), ("ports", "USB-C 充电接口"),
        ("weight", "0.9 kg"), ("noise", "≤ 72 dB")],
       ("KD 系列的入门型号，适合桌面、沙发和车内的日常清洁。",)),
    pr("KD-3200", "无线手持吸尘器", [
        ("power", "150 W"), ("suction", "12000 Pa"), ("battery", "2500 mAh"), ("runtime", "约 30 min"),
        ("dustbin", "0.5 L"), ("charge_time", "4 h"), ("input", "5V/2A"), ("ports", "USB-C 充电接口"),
        ("weight", "1.2 kg"), ("noise", "≤ 75 dB")],
       ("标配缝隙吸嘴和毛刷吸嘴两种附件。",)),
    pr("KD-3200S", "无线手持吸尘器", [
        ("power", "180 W"), ("suction", "14000 Pa"), ("battery", "3000 mAh"), ("runtime", "约 35 min"),
        ("dustbin", "0.5 L"), ("charge_time", "2.5 h"), ("input", "9V/2A（支持 PD 快充）"),
        ("ports", "USB-C 充电接口"), ("weight", "1.25 kg"), ("noise", "≤ 74 dB")],
       ("KD-3200S 在 KD-3200 的基础上提升了吸力和电池容量，并支持 9V 快充。",)),
    pr("KD-3300", "无线手持吸尘器", [
        ("power", "220 W"), ("suction", "16000 Pa"), ("battery", "4000 mAh"), ("runtime", "约 40 min"),
        ("dustbin", "0.6 L"), ("charge_time", "4.5 h"), ("input", "9V/2A"), ("ports", "USB-C 充电接口、磁吸充电座"),
        ("filter", "可水洗 HEPA 滤网"), ("weight", "1.4 kg"), ("noise", "≤ 76 dB")],
       ("增加了 LED 照明吸嘴。",)),
    pr("KD-3300 Pro", "无线手持吸尘器", [
        ("power", "250 W"), ("suction", "18000 Pa"), ("battery", "4000 mAh（可拆卸电池）"), ("runtime", "约 45 min"),
        ("dustbin", "0.6 L"), ("charge_time", "3 h"), ("input", "12V/1.5A"), ("ports", "USB-C 充电接口、磁吸充电座"),
        ("filter", "可水洗 HEPA 滤网"), ("screen", "0.96 英寸 OLED 状态屏"), ("weight", "1.45 kg"), ("noise", "≤ 73 dB")],
       ("与 KD-3300 相比，KD-3300 Pro 采用可拆卸电池，并增加了显示剩余电量的状态屏。",)),
    pr("RX-560", "无线路由器", [
        ("wireless", "Wi-Fi 5（802.11ac）"), ("rate", "AC1200（867 Mbps + 300 Mbps）"), ("bands", "2.4 GHz / 5 GHz 双频"),
        ("lan", "1 个千兆 WAN 口 + 3 个千兆 LAN 口"), ("antenna", "4 根外置天线"), ("input", "12V/1A"),
        ("consumption", "8 W"), ("size", "200 × 130 × 30 mm")]),
    pr("RX-580", "无线路由器", [
        ("wireless", "Wi-Fi 6（802.11ax）"), ("rate", "AX3000"), ("bands", "2.4 GHz / 5 GHz 双频"),
        ("lan", "1 个千兆 WAN 口 + 3 个千兆 LAN 口"), ("ports", "USB 3.0 接口 × 1"), ("antenna", "4 根外置天线"),
        ("input", "12V/1.5A"), ("consumption", "15 W")],
       ("USB 3.0 接口可连接移动硬盘，作为家庭网络存储使用。",)),
    pr("RX-580T", "无线路由器", [
        ("wireless", "Wi-Fi 6（802.11ax）"), ("rate", "AX5400"), ("bands", "2.4 GHz / 5.2 GHz / 5.8 GHz 三频"),
        ("lan", "1 个 2.5G WAN/LAN 自适应网口 + 3 个千兆 LAN 口"), ("ports", "USB 3.0 接口 × 1"),
        ("antenna", "6 根外置天线"), ("input", "12V/2A"), ("consumption", "20 W")],
       ("RX-580T 是 RX-580 的三频版本，型号后缀 T 表示三频（Tri-band）。",)),
    pr("RX-590", "无线路由器", [
        ("wireless", "Wi-Fi 6E"), ("rate", "AXE7800"), ("bands", "2.4 GHz / 5 GHz / 6 GHz 三频"),
        ("lan", "2 个 2.5G 网口 + 3 个千兆 LAN 口"), ("ports", "USB-C 3.2 接口 × 1"), ("antenna", "8 根内置天线"),
        ("input", "12V/2.5A"), ("consumption", "24 W")],
       ("新增 6 GHz 频段，终端同样支持 Wi-Fi 6E 才能使用该频段。",)),
    pr("X5", "真无线蓝牙耳机", [
        ("wireless", "蓝牙 5.0"), ("battery", "单耳 40 mAh"), ("case_battery", "400 mAh"),
        ("runtime", "单次 5 h，配合充电盒 20 h"), ("ip", "IPX4"), ("weight", "单耳 4.5 g"),
        ("ports", "USB-C 充电接口"), ("codec", "SBC / AAC")]),
    pr("X7", "真无线蓝牙耳机", [
        ("wireless", "蓝牙 5.3"), ("battery", "单耳 45 mAh"), ("case_battery", "500 mAh"),
        ("runtime", "单次 6 h，配合充电盒 28 h"), ("ip", "IPX4"), ("weight", "单耳 4.8 g"),
        ("ports", "USB-C 充电接口"), ("codec", "SBC / AAC")]),
    pr("X7 Pro", "真无线蓝牙耳机", [
        ("wireless", "蓝牙 5.3"), ("battery", "单耳 50 mAh"), ("case_battery", "500 mAh"),
        ("runtime", "单次 7 h（关闭降噪），配合充电盒 30 h"), ("ip", "IP54"), ("weight", "单耳 5.2 g"),
        ("ports", "USB-C 充电接口，支持 Qi 无线充电"), ("anc", "主动降噪（ANC），最大降噪深度 42 dB"),
        ("codec", "SBC / AAC / LDAC")],
       ("X7 Pro 在 X7 的基础上增加了主动降噪和无线充电。",)),
    pr("X7 Lite", "真无线蓝牙耳机", [
        ("wireless", "蓝牙 5.2"), ("battery", "单耳 35 mAh"), ("case_battery", "300 mAh"),
        ("runtime", "单次 5 h，配合充电盒 18 h"), ("ip", "IPX4"), ("weight", "单耳 4.1 g"),
        ("ports", "USB-C 充电接口"), ("codec", "SBC")],
       ("X7 Lite 是 X7 的简化版，去掉了 AAC 编码支持，充电盒更小。",)),
    pr("X9 Pro", "真无线蓝牙耳机", [
        ("wireless", "蓝牙 5.4"), ("battery", "单耳 60 mAh"), ("case_battery", "520 mAh"),
        ("runtime", "单次 8 h（关闭降噪），配合充电盒 36 h"), ("ip", "IP55"), ("weight", "单耳 5.6 g"),
        ("ports", "USB-C 充电接口，支持 Qi 无线充电"), ("anc", "自适应主动降噪，最大降噪深度 48 dB"),
        ("codec", "SBC / AAC / LDAC")]),
    pr("HB-12A", "锂电钻", [
        ("voltage", "12 V"), ("chuck", "0.8–10 mm"), ("torque", "30 N·m"), ("speed", "0–1500 rpm"),
        ("battery", "2.0 Ah 锂电池"), ("charge_time", "1 h"), ("weight", "1.0 kg")]),
    pr("HB-12B", "锂电冲击钻", [
        ("voltage", "12 V"), ("chuck", "0.8–10 mm"), ("torque", "35 N·m"), ("speed", "0–1700 rpm"),
        ("impact", "0–25500 bpm"), ("battery", "2.0 Ah 锂电池"), ("charge_time", "1 h"), ("weight", "1.05 kg")],
       ("HB-12B 比 HB-12A 多了冲击档，可在砖墙上打孔。",)),
    pr("HB-16A", "锂电钻", [
        ("voltage", "16 V"), ("chuck", "1.5–13 mm"), ("torque", "45 N·m"), ("speed", "0–1800 rpm"),
        ("battery", "2.0 Ah 锂电池"), ("charge_time", "1.2 h"), ("weight", "1.4 kg")]),
    pr("HB-20A", "锂电冲击钻", [
        ("voltage", "20 V"), ("chuck", "1.5–13 mm"), ("torque", "60 N·m"), ("speed", "0–2000 rpm"),
        ("impact", "0–30000 bpm"), ("battery", "4.0 Ah 锂电池"), ("charge_time", "1.5 h"), ("weight", "1.7 kg")],
       ("采用无刷电机，效率更高、寿命更长。",)),
    pr("TW-50", "智能手表", [
        ("screen", "1.43 英寸 AMOLED，466 × 466 像素"), ("wireless", "蓝牙 5.2"), ("battery", "300 mAh"),
        ("runtime", "典型使用 10 天"), ("water", "5 ATM"), ("weight", "32 g（不含表带）"), ("ports", "磁吸充电")]),
    pr("TW-50S", "智能手表", [
        ("screen", "1.43 英寸 AMOLED，466 × 466 像素"), ("wireless", "蓝牙 5.3、NFC、内置 GPS"), ("battery", "350 mAh"),
        ("runtime", "典型使用 12 天"), ("water", "5 ATM"), ("weight", "34 g（不含表带）"), ("ports", "磁吸充电")],
       ("TW-50S 相比 TW-50 增加了 NFC 和独立 GPS。",)),
    pr("TW-80", "智能手表", [
        ("screen", "1.85 英寸 AMOLED 方形屏"), ("wireless", "蓝牙 5.3、Wi-Fi 2.4 GHz、eSIM 独立通话"),
        ("battery", "500 mAh"), ("runtime", "典型使用 7 天"), ("water", "IP68"), ("weight", "45 g（不含表带）"),
        ("ports", "磁吸充电")]),
    pr("PM-210", "空气净化器", [
        ("cadr", "300 m³/h"), ("area", "20–36 m²"), ("filter", "HEPA H13 复合滤网"), ("noise", "≤ 55 dB"),
        ("power", "35 W"), ("weight", "5.2 kg"), ("wireless", "Wi-Fi 2.4 GHz"), ("size", "260 × 260 × 520 mm")]),
    pr("PM-220", "空气净化器", [
        ("cadr", "400 m³/h"), ("area", "28–48 m²"), ("filter", "HEPA H13 复合滤网"), ("noise", "≤ 58 dB"),
        ("power", "45 W"), ("weight", "6.0 kg"), ("wireless", "Wi-Fi 2.4 GHz")]),
    pr("PM-220 Max", "空气净化器", [
        ("cadr", "600 m³/h"), ("area", "42–72 m²"), ("filter", "HEPA H13 滤网 + 活性炭滤网"), ("noise", "≤ 62 dB"),
        ("power", "65 W"), ("weight", "8.5 kg"), ("wireless", "Wi-Fi 2.4 GHz、蓝牙 5.0")],
       ("PM-220 Max 是 PM-220 的大风量版本。",)),
    pr("CM-8", "半自动咖啡机", [
        ("pressure", "15 bar"), ("tank", "1.2 L"), ("power", "1350 W"), ("input", "220 V~ 50 Hz"), ("weight", "4.5 kg")],
       ("配备手动蒸汽棒，可打发奶泡。",)),
    pr("CM-8 Plus", "半自动咖啡机", [
        ("pressure", "20 bar"), ("tank", "1.5 L"), ("power", "1450 W"), ("input", "220 V~ 50 Hz"), ("weight", "5.1 kg")],
       ("CM-8 Plus 在 CM-8 的基础上增加了温度显示和双杯萃取。",)),
    pr("LS-40", "激光测距仪", [
        ("range", "0.05–40 m"), ("accuracy", "±2 mm"), ("laser", "635 nm，Class 2"), ("ip", "IP54"),
        ("cells", "2 节 AAA 电池"), ("weight", "95 g")]),
    pr("LS-40M", "激光测距仪", [
        ("range", "0.05–40 m"), ("accuracy", "±2 mm"), ("laser", "635 nm，Class 2"), ("ip", "IP54"),
        ("wireless", "蓝牙 5.0"), ("battery", "内置 500 mAh 锂电池"), ("ports", "USB-C 充电接口"), ("weight", "105 g")],
       ("LS-40M 可通过蓝牙把测量结果同步到手机 App。",)),
    pr("LS-60", "激光测距仪", [
        ("range", "0.05–60 m"), ("accuracy", "±1.5 mm"), ("laser", "635 nm，Class 2"), ("ip", "IP65"),
        ("wireless", "蓝牙 5.0"), ("battery", "内置 800 mAh 锂电池"), ("ports", "USB-C 充电接口"), ("weight", "130 g")]),
    pr("PA-65", "氮化镓充电器", [
        ("output", "最大 65 W（USB-C PD 3.0）"), ("ports", "2 个 USB-C + 1 个 USB-A"),
        ("input", "100–240V~ 50/60Hz 1.5A"), ("weight", "110 g"), ("size", "55 × 55 × 30 mm")]),
    pr("PA-100", "氮化镓充电器", [
        ("output", "最大 100 W（USB-C PD 3.0）"), ("ports", "3 个 USB-C + 1 个 USB-A"),
        ("input", "100–240V~ 50/60Hz 2.0A"), ("weight", "190 g")],
       ("单口使用时 USB-C1 可输出 100 W，多口同时使用时自动分配功率。",)),
    pr("MK-3200", "三模机械键盘", [
        ("keys", "87 键"), ("switch", "线性红轴"), ("wireless", "蓝牙 5.1 / 2.4 GHz 无线 / USB-C 有线"),
        ("battery", "4000 mAh"), ("runtime", "约 200 h（关闭背光）"), ("ports", "USB-C"), ("weight", "0.85 kg")]),
    pr("DL-12", "LED 护眼台灯", [
        ("power", "12 W"), ("input", "12V/1A"), ("lumen", "800 lm"), ("cct", "2700–6500 K"), ("cri", "Ra ≥ 95"),
        ("weight", "1.2 kg")]),
    pr("DL-12 Pro", "LED 护眼台灯", [
        ("power", "15 W"), ("input", "12V/1.5A"), ("lumen", "1200 lm"), ("cct", "2700–6500 K"), ("cri", "Ra ≥ 97"),
        ("ports", "USB-A 充电口 × 1"), ("weight", "1.4 kg")],
       ("底座集成 10 W 无线充电，并支持环境光自动调光。",)),
]

# fmt: on
# --------------------------------------------------------------------------------------- rendering
IUCN = {
    "LC": "无危",
    "NT": "近危",
    "VU": "易危",
    "EN": "濒危",
    "CR": "极危",
    "EW": "野外灭绝",
    "EX": "灭绝",
    "DD": "数据缺乏",
}
GROUP_WORD = {
    "mammal": "哺乳动物",
    "bird": "鸟类",
    "fish": "鱼类",
    "reptile": "爬行动物",
    "amphibian": "两栖动物",
    "insect": "昆虫",
    "tree": "树木",
    "plant": "植物",
    "fungus": "真菌",
}
GROUP_CAT = {
    "mammal": "动物",
    "bird": "鸟",
    "fish": "鱼",
    "reptile": "动物",
    "amphibian": "动物",
    "insect": "昆虫",
    "tree": "树",
    "plant": "植物",
    "fungus": "真菌",
}
# Aliases too generic (or shared by sibling pages) to name one species in a question.
GENERIC_ALIAS = {
    "豹",
    "金丝猴",
    "穿山甲",
    "旱獭",
    "松鼠",
    "三文鱼",
    "蟒蛇",
    "桦树",
    "樱花",
    "将离",
    "菊",
    "杜鹃花",
    "野鸭",
}
# English words kept capitalised when a name is used inside an English sentence.
PROPER = {
    "Arctic",
    "Chinese",
    "Japanese",
    "Asian",
    "African",
    "American",
    "European",
    "Eurasian",
    "Tibetan",
    "Komodo",
    "Nile",
    "Atlantic",
    "Burmese",
    "Mongolian",
    "English",
    "Scots",
    "Masson's",
    "Père",
    "David's",
    "Yangtze",
    "River",
    "Himalayan",
    "Asiatic",
    "Sunda",
    "Amur",
    "Old",
    "World",
    "Sims's",
    "Cabot's",
    "Shantung",
    "Yunnan",
    "China",
}

ANIMAL_FILL = (
    "不同地区的种群在体型上存在差异，以上数值为常见范围。",
    "在野外遇到{n}时，请保持距离，不要投喂或追赶。",
    "关于它的野外数量，目前还没有什么精确的统计，各方估计差别较大。",
    "想知道在哪里能看到{n}，可以咨询当地的保护区或自然博物馆。",
    "各地对它的叫法不尽相同，查阅资料时以学名为准。",
    "本条目的名称采用通用的中文名。",
)
PLANT_FILL = (
    "花期和果期因地区和当年气温而异，南方通常早于北方。",
    "栽培时宜选择排水良好的土壤，并保证充足的光照。",
    "园艺书上常说它不挑什么土壤，但在长期积水的地方生长不良。",
    "想知道它在哪里长得最好，可以参考原产地的气候条件。",
    "各地的俗名很多，本条目的名称以通用中文名为准。",
)
FUNGUS_FILL = (
    "野生菌种类繁多，外形相似的有毒种类不少，不认识的蘑菇不要采食。",
    "出菇时间因地区和当年降雨而异。",
    "各地对它的叫法不尽相同，鉴定时以学名为准。",
)
PRODUCT_FILL = (
    "使用前请仔细阅读本说明书，并妥善保管以备查阅。",
    "以上参数均在实验室条件下测得，实际数值可能因使用环境而有所不同。",
    "如不确定设备支持什么配件，请以包装清单为准。",
    "产品名称中的字母后缀表示不同的配置版本。",
    "保修期内如遇到什么问题，请联系售后服务并提供产品型号和序列号。",
    "产品外观和参数如有更新，恕不另行通知。",
)


def genus(s: dict) -> str:
    return s["latin"].split()[0]


def casual(en: str) -> str:
    """The English name as written inside an English sentence: common nouns lower case."""
    return " ".join(w if w in PROPER else w[0].lower() + w[1:] for w in en.split())


def lv(label: str, value: str) -> str:
    """'体长 1.0–1.3 m' but '体长可达 4 m'."""
    return f"{label}{'' if value[0] in '可约雄雌工栽单典最内' else ' '}{value}"


def status_parts(s: dict) -> list[str]:
    parts = []
    if s["iucn"]:
        parts.append(f"IUCN {IUCN[s['iucn']]} ({s['iucn']})")
    if s["cites"]:
        parts.append(f"CITES 附录 {s['cites']}")
    if s["cn"]:
        kind = "动物" if s["group"] in ANIMALS else "植物"
        parts.append(f"国家{s['cn']}重点保护野生{kind}")
    return parts


def size_pairs(s: dict) -> list[tuple[str, str]]:
    out = []
    if s["length"]:
        out.append(("体长", s["length"]))
    if s["weight"]:
        out.append(("体重", s["weight"]))
    out += list(s["extra"])
    if s["height"]:
        out.append(("树高" if s["group"] == "tree" else "株高", s["height"]))
    return out


def siblings(s: dict) -> list[dict]:
    return [o for o in SPECIES if o is not s and genus(o) == genus(s)]


def fillers(s: dict, rng: random.Random) -> list[str]:
    pool = ANIMAL_FILL if s["group"] in ANIMALS else FUNGUS_FILL if s["group"] in FUNGI else PLANT_FILL
    if not s["bloom"]:
        pool = tuple(f for f in pool if "花期" not in f)
    k = rng.choice((0, 1, 1, 2))
    return [f.format(n=s["zh"]) for f in rng.sample(pool, k)]


def xref(s: dict, rng: random.Random) -> str:
    sibs = siblings(s)
    if not sibs or rng.random() < 0.5:
        return ""
    names = "、".join(o["zh"] for o in sibs[:3])
    return rng.choice((f"同属（{genus(s)}）的还有{names}。", f"与{names}同为 {genus(s)} 属成员。"))


def render_species(s: dict, rng: random.Random) -> tuple[str, str]:
    zh, en, g = s["zh"], s["en"] if s["en_page"] else None, s["group"]
    title = f"{zh}（{en}）" if en and rng.random() < 0.25 else zh
    animal = g in ANIMALS
    alias = "、".join(s["alias"])
    status = status_parts(s)
    pairs = size_pairs(s)
    size = [lv(label, value) for label, value in pairs]
    notes = list(s["notes"])
    tail = [x for x in [xref(s, rng)] if x] + fillers(s, rng)
    t = rng.randrange(4)
    if t == 0:  # encyclopedia paragraph
        head = f"{zh}（又称{alias}）" if alias else zh
        fam = f"是{s['family']}的{GROUP_WORD[g]}" if s["family"] else f"是一种{GROUP_WORD[g]}"
        out = [f"{head}{fam}。学名：{s['latin']}。" + (f"英文名：{en}。" if en else "")]
        body = [f"分布于{s['dist']}。"]
        if s["habitat"]:
            body.append(f"{'栖息于' if animal else '生于'}{s['habitat']}。")
        if s["diet"]:
            body.append(f"{s['diet']}。")
        if s["edible"]:
            body.append(f"{s['edible']}。")
        if size:
            body.append("，".join(size) + "。")
        if s["bloom"]:
            body.append(f"花期 {s['bloom']}。")
        out.append("".join(body) + "".join(notes))
        if status:
            out.append("保护级别：" + "；".join(status) + "。")
        out.append("".join(tail))
        return title, "\n\n".join(x for x in out if x)
    if t == 1:  # field card
        lines = [f"【学名】{s['latin']}"]
        if en:
            lines.append(f"【英文名】{en}")
        if alias:
            lines.append(f"【别名】{alias}")
        if s["family"]:
            lines.append(f"【科】{s['family']}")
        lines.append(f"【分布】{s['dist']}")
        if s["habitat"]:
            lines.append(f"【{'栖息地' if animal else '生境'}】{s['habitat']}")
        if s["diet"]:
            lines.append(f"【食性】{s['diet']}")
        if s["edible"]:
            lines.append(f"【{'毒性' if '毒' in s['edible'] else '食用性'}】{s['edible']}")
        if size:
            lines.append(f"【{'体型' if animal else '株型'}】" + "；".join(size))
        if s["bloom"]:
            lines.append(f"【花期】{s['bloom']}")
        if status:
            lines.append("【保护级别】" + "，".join(status))
        lines.append("【简介】" + "".join(notes))
        return title, "\n".join(lines) + ("\n\n" + "".join(tail) if tail else "")
    if t == 2:  # narrative
        fam = f"，属于{s['family']}" if s["family"] else ""
        out = [
            f"{zh}是一种{GROUP_WORD[g]}{fam}。它的学名为 {s['latin']}"
            + (f"，英文名为 {en}。" if en else "。")
        ]
        if alias:
            out.append(f"在一些地方，人们也把它称为“{'”或“'.join(s['alias'])}”。")
        where = "它主要生活在" if animal else "它分布于"
        out.append(f"{where}{s['dist']}" + (f"，常见于{s['habitat']}。" if s["habitat"] else "。"))
        if s["diet"]:
            out.append(f"食性方面，{s['diet']}。")
        if s["edible"]:
            out.append(f"关于能否食用：{s['edible']}。")
        if size:
            out.append("成体" + "，".join(size) + "。" if animal else "，".join(size) + "。")
        if s["bloom"]:
            out.append(f"每年 {s['bloom']} 开花。")
        out += notes
        if status:
            bits = []
            if s["iucn"]:
                bits.append(f"被 IUCN 红色名录列为{IUCN[s['iucn']]} ({s['iucn']})")
            if s["cites"]:
                bits.append(f"列入 CITES 附录 {s['cites']}")
            if s["cn"]:
                bits.append(f"在中国属于{status_parts(s)[-1]}")
            out.append("它" + "，".join(bits) + "。")
        return title, "".join(out[:1]) + "".join(out[1:]) + ("\n\n" + "".join(tail) if tail else "")
    # t == 3: key-value sheet
    lines = [f"中文名称：{zh}"]
    if alias:
        lines.append(f"别名：{alias}")
    lines.append(f"学名：{s['latin']}")
    if en:
        lines.append(f"英文名：{en}")
    if s["family"]:
        lines.append(f"科：{s['family']}")
    lines.append(f"分布：{s['dist']}")
    if s["habitat"]:
        lines.append(f"{'栖息环境' if animal else '生长环境'}：{s['habitat']}")
    if s["diet"]:
        lines.append(f"食性：{s['diet']}")
    if s["edible"]:
        lines.append(f"食用价值：{s['edible']}")
    lines += [f"{label}：{value}" for label, value in pairs]
    if s["bloom"]:
        lines.append(f"花期：{s['bloom']}")
    if status:
        lines.append("保护级别：" + " / ".join(status))
    text = "\n".join(lines) + "\n\n" + "".join(notes)
    return title, text + ("" if not tail else "\n\n" + "".join(tail))


def render_product(p: dict, rng: random.Random) -> tuple[str, str]:
    code, cat = p["code"], p["category"]
    title = rng.choice((f"{code} {cat}", f"{cat} {code}", f"{code} 产品规格"))
    intro = CATEGORY_INTRO[cat]
    notes = "".join(p["notes"])
    fill = "".join(rng.sample(PRODUCT_FILL, rng.choice((0, 1, 2))))
    t = rng.randrange(3)
    if t == 0:  # spec list
        lines = [f"{code} 是一款{cat}。{intro}", "", "主要参数："]
        lines += [f"- {SPEC[k][0]}：{v}" for k, v in p["specs"]]
        rest = "".join(x for x in (notes, fill) if x)
        return title, "\n".join(lines) + ("\n\n" + rest if rest else "")
    if t == 1:  # paragraph
        sents = []
        for k, v in p["specs"]:
            label = SPEC[k][0]
            if k == "ports":
                sents.append(f"接口方面采用 {v}")
            elif k == "wireless":
                sents.append(f"无线连接支持 {v}")
            elif k in ("ip", "water"):
                sents.append(f"{label}达到 {v}")
            elif v.startswith("约"):
                sents.append(f"{label}{v}")
            elif v[0] in "≤±" or v[0].isascii():
                sents.append(f"{label}{'' if v[0] in '≤±' else '为'} {v}")
            else:
                sents.append(f"{label}为{v}")
        text = f"{cat} {code}：{intro}本机" + "，".join(sents) + "。"
        rest = "".join(x for x in (notes, fill) if x)
        return title, text + ("\n\n" + rest if rest else "")
    # table
    lines = [f"{code}（{cat}）规格表", "", f"| 参数 | {code} |", "| --- | --- |"]
    lines += [f"| {SPEC[k][0]} | {v} |" for k, v in p["specs"]]
    rest = "".join(x for x in (intro, notes, fill) if x)
    return title, "\n".join(lines) + "\n\n" + rest


# --------------------------------------------------------------------------------------- questions
# (need, groups, template); groups: A animals, P plants, F fungi, * all.
# {n} Chinese name, {l} Latin binomial, {e} English name, {the} article, {cat} a Chinese category word.
T_ZH_NAME = [
    ("dist", "A", "{n}生活在哪里？"),
    ("dist", "A", "{n}主要分布在什么地方？"),
    ("dist", "A", "哪里能见到野生的{n}？"),
    ("dist", "PF", "{n}分布在哪里？"),
    ("dist", "P", "{n}原产于什么地方？"),
    ("habitat", "F", "{n}通常长在什么地方？"),
    ("diet", "A", "{n}主要吃什么？"),
    ("diet", "A", "{n}以什么为食？"),
    ("latin", "*", "{n}的学名是什么？"),
    ("latin", "*", "{n}的拉丁学名怎么写？"),
    ("weight", "A", "{n}的体重一般是多少？"),
    ("weight", "A", "{n}一般有多重？"),
    ("length", "A", "{n}的体长有多少？"),
    ("status", "*", "{n}的保护级别是什么？"),
    ("iucn", "A", "{n}是濒危动物吗？"),
    ("bloom", "P", "{n}什么时候开花？"),
    ("bloom", "P", "{n}的花期是几月？"),
    ("height", "P", "{n}能长多高？"),
    ("en", "*", "{n}的英文名叫什么？"),
    ("en", "*", "{n}用英语怎么说？"),
    ("edible", "F", "{n}能吃吗？"),
    ("edible", "F", "{n}有毒吗？"),
]
T_ZH_LATIN = [
    ("zh", "*", "学名为 {l} 的{cat}叫什么名字？"),
    ("zh", "*", "{l} 的中文名是什么？"),
    ("zh", "*", "{l} 在中文里叫什么？"),
    ("dist", "A", "{l} 分布在哪里？"),
    ("dist", "P", "{l} 原产于哪里？"),
    ("habitat", "F", "{l} 生长在什么环境？"),
    ("diet", "A", "{l} 吃什么？"),
    ("status", "*", "{l} 的保护级别是什么？"),
    ("bloom", "P", "{l} 的花期是什么时候？"),
    ("en", "*", "{l} 的英文名是什么？"),
    ("edible", "F", "{l} 可以食用吗？"),
]
T_ZH_ENGLISH = [
    ("dist", "A", "{e} 主要分布在哪里？"),
    ("dist", "A", "{e} 生活在什么地方？"),
    ("dist", "P", "{e} 原产于哪里？"),
    ("habitat", "F", "{e} 生长在哪里？"),
    ("diet", "A", "{e} 吃什么？"),
    ("diet", "A", "{e} 的食性是怎样的？"),
    ("latin", "*", "{e} 的学名是什么？"),
    ("zh", "*", "{e} 的中文名叫什么？"),
    ("zh", "*", "{e} 在中文里叫做什么？"),
    ("status", "*", "{e} 的保护级别是什么？"),
    ("bloom", "P", "{e} 的花期是几月？"),
    ("height", "P", "{e} 能长多高？"),
    ("weight", "A", "{e} 有多重？"),
    ("edible", "F", "{e} 可以吃吗？"),
]
T_EN_NAME = [  # also the cross-lingual templates: the same questions over pages without the name
    ("dist", "A", "Where does {the}{e} live?"),
    ("dist", "A", "In which regions is {the}{e} found?"),
    ("dist", "P", "Where is {the}{e} native to?"),
    ("dist", "P", "Where does {the}{e} grow?"),
    ("habitat", "F", "Where does {the}{e} grow?"),
    ("diet", "A", "What does {the}{e} eat?"),
    ("diet", "A", "What is the diet of {the}{e}?"),
    ("latin", "*", "What is the scientific name of {the}{e}?"),
    ("latin", "*", "What is the Latin name of {the}{e}?"),
    ("zh", "*", "What is {the}{e} called in Chinese?"),
    ("status", "*", "What is the conservation status of {the}{e}?"),
    ("iucn", "A", "Is {the}{e} endangered?"),
    ("weight", "A", "How much does {the}{e} weigh?"),
    ("length", "A", "How long is {the}{e}?"),
    ("bloom", "P", "When does {the}{e} flower?"),
    ("bloom", "P", "What is the flowering season of {the}{e}?"),
    ("height", "P", "How tall does {the}{e} grow?"),
    ("edible", "F", "Is {the}{e} edible?"),
]
T_EN_LATIN = [
    ("en", "*", "What is the common name of {l}?"),
    ("en", "*", "What is {l} called in English?"),
    ("zh", "*", "What is the Chinese name of {l}?"),
    ("dist", "A", "Where is {l} found?"),
    ("dist", "P", "Where is {l} native to?"),
    ("habitat", "F", "Where does {l} grow?"),
    ("diet", "A", "What does {l} eat?"),
    ("status", "*", "What is the conservation status of {l}?"),
    ("bloom", "P", "When does {l} bloom?"),
    ("height", "P", "How tall does {l} grow?"),
    ("weight", "A", "How heavy is {l}?"),
    ("edible", "F", "Is {l} edible?"),
]
SPECIES_TEMPLATES = {
    "zh-name": T_ZH_NAME,
    "zh-latin": T_ZH_LATIN,
    "zh-english": T_ZH_ENGLISH,
    "en-name": T_EN_NAME,
    "en-latin": T_EN_LATIN,
    "cross-lingual": T_EN_NAME,
}

ZH_CODE_SPECIAL = {
    "ports": ["型号 {c} 支持什么接口？", "{c} 用的是什么接口？", "{c} 有哪些接口？"],
    "wireless": ["{c} 支持哪些无线连接方式？", "{c} 支持什么无线协议？"],
    "ip": ["{c} 的防护等级是多少？", "{c} 防水防尘吗？防护等级多少？"],
    "water": ["{c} 防水吗？", "{c} 的防水等级是多少？"],
    "weight": ["{c} 有多重？", "{c} 的重量是多少？"],
    "runtime": ["{c} 充满电能用多久？", "{c} 的续航时间是多少？"],
    "battery": ["{c} 的电池容量是多少？", "{c} 电池多大？"],
    "power": ["{c} 的额定功率是多少？", "{c} 功率多大？", "型号 {c} 的额定功率是几瓦？"],
    "charge_time": ["{c} 充满电需要多长时间？"],
    "bands": ["{c} 支持哪些频段？", "{c} 是双频还是三频？"],
    "lan": ["{c} 有几个网口？", "{c} 的网口是千兆的吗？"],
    "tank": ["{c} 的水箱有多大？"],
    "range": ["{c} 最远能测多远？", "{c} 的测量范围是多少？"],
    "area": ["{c} 适合多大的房间？"],
    "filter": ["{c} 用的是什么滤网？", "{c} 的滤网是什么等级？"],
    "laser": ["{c} 的激光是几级？", "{c} 用的是什么激光？"],
    "screen": ["{c} 的屏幕是多大？", "{c} 用的是什么屏幕？"],
    "rate": ["{c} 的无线速率是多少？", "{c} 的无线速率等级是什么？"],
    "antenna": ["{c} 有几根天线？", "{c} 的天线是内置还是外置？"],
    "codec": ["{c} 支持哪些音频编码？", "{c} 支持 LDAC 吗？"],
    "anc": ["{c} 有主动降噪吗？", "{c} 的降噪深度是多少？"],
    "switch": ["{c} 用的是什么轴？", "{c} 是红轴还是青轴？"],
    "cells": ["{c} 用什么电池？", "{c} 用的是几号电池？"],
    "keys": ["{c} 有多少个键？", "{c} 是多少键的键盘？"],
    "cadr": ["{c} 的 CADR 是多少？", "{c} 的洁净空气量是多少？"],
    "size": ["{c} 的尺寸是多少？", "{c} 有多大？"],
}
ZH_CODE_NUM = ["{c} 的{label}是多少？", "型号 {c} 的{label}是多少？", "请问 {c} 的{label}是多少？"]
EN_CODE_SPECIAL = {
    "ports": ["What ports does the {c} have?", "Which connectors does the {c} use?"],
    "wireless": [
        "Which wireless standards does the {c} support?",
        "Does the {c} support Bluetooth or Wi-Fi?",
    ],
    "ip": ["What is the IP rating of the {c}?", "Is the {c} dust- and water-resistant?"],
    "water": ["How water-resistant is the {c}?", "Is the {c} waterproof?"],
    "weight": ["How much does the {c} weigh?", "How heavy is the {c}?"],
    "runtime": ["How long does the {c} last on one charge?", "What is the battery life of the {c}?"],
    "battery": ["What is the battery capacity of the {c}?", "How big is the battery in the {c}?"],
    "power": ["What is the rated power of the {c}?", "How many watts is the {c}?"],
    "charge_time": ["How long does the {c} take to charge?"],
    "bands": ["Which frequency bands does the {c} use?", "Is the {c} dual-band or tri-band?"],
    "lan": ["How many Ethernet ports does the {c} have?", "Does the {c} have 2.5G Ethernet?"],
    "tank": ["How big is the water tank of the {c}?"],
    "range": ["What is the maximum measuring distance of the {c}?", "How far can the {c} measure?"],
    "area": ["What room size is the {c} suitable for?"],
    "filter": ["What filter does the {c} use?", "Does the {c} have a HEPA filter?"],
    "laser": ["What laser class is the {c}?", "What laser wavelength does the {c} use?"],
    "screen": ["How big is the screen of the {c}?", "What kind of display does the {c} have?"],
    "rate": ["What is the Wi-Fi speed class of the {c}?", "Is the {c} an AX3000 router?"],
    "antenna": ["How many antennas does the {c} have?", "Are the antennas of the {c} internal or external?"],
    "codec": ["Which audio codecs does the {c} support?", "Does the {c} support LDAC?"],
    "anc": [
        "Does the {c} have active noise cancellation?",
        "How strong is the noise cancellation of the {c}?",
    ],
    "switch": ["What switches does the {c} use?", "Does the {c} have red or blue switches?"],
    "cells": ["What batteries does the {c} take?", "Does the {c} run on AAA batteries?"],
    "keys": ["How many keys does the {c} have?"],
    "size": ["What are the dimensions of the {c}?", "How big is the {c}?"],
}
EN_CODE_NUM = [
    "What is the {label} of the {c}?",
    "What's the {c}'s {label}?",
    "Tell me the {label} of the {c}.",
]

# How many questions of each kind a species page gets: (probability of any, probability of a second one).
SPECIES_RATES = {
    "zh-name": (0.6, 0.2),
    "zh-latin": (0.5, 0.0),
    "zh-english": (0.45, 0.0),
    "en-name": (0.55, 0.2),
    "en-latin": (0.4, 0.0),
}


def has(s: dict, need: str) -> bool:
    if need in ("latin", "zh"):
        return True
    if need == "en":
        return s["en_page"]
    if need == "status":
        return bool(s["iucn"] or s["cites"] or s["cn"])
    return bool(s[need])


def in_groups(s: dict, groups: str) -> bool:
    g = s["group"]
    return (
        groups == "*"
        or ("A" in groups and g in ANIMALS)
        or ("P" in groups and g in PLANTS)
        or ("F" in groups and g in FUNGI)
    )


def zh_qname(s: dict, rng: random.Random) -> str:
    usable = [a for a in s["alias"] if a not in GENERIC_ALIAS]
    if usable and rng.random() < (0.7 if len(s["zh"]) == 1 else 0.3):
        return usable[0]
    return s["zh"]


def species_questions(s: dict, kind: str, count: int, rng: random.Random) -> list[tuple[str, int]]:
    """count questions of one kind about s, with different needs; (text, template index)."""
    templates = SPECIES_TEMPLATES[kind]
    fit = [(i, t) for i, t in enumerate(templates) if in_groups(s, t[1]) and has(s, t[0])]
    if kind == "cross-lingual":  # the page has no English name: do not ask for it
        fit = [(i, t) for i, t in fit if t[0] != "en"]
    if s["en"] and s["en"].startswith("Chinese") and kind in ("en-name", "cross-lingual"):
        fit = [(i, t) for i, t in fit if t[0] != "zh"]  # not "What is the Chinese X called in Chinese?"
    rng.shuffle(fit)
    out, needs = [], set()
    for i, (need, _, tpl) in fit:
        if need in needs:
            continue
        needs.add(need)
        if kind == "zh-english":
            e = s["en"] if rng.random() < 0.7 else casual(s["en"])
        else:
            e = casual(s["en"]) if s["en"] else ""
        text = tpl.format(n=zh_qname(s, rng), l=s["latin"], e=e, the=s["art"], cat=GROUP_CAT[s["group"]])
        out.append((text[0].upper() + text[1:], i))
        if len(out) == count:
            break
    return out


def product_questions(p: dict, kind: str, keys: list[str], rng: random.Random) -> list[tuple[str, str]]:
    out = []
    specs = dict(p["specs"])
    for k in keys:
        zh_label, en_label, numeric = SPEC[k]
        if kind == "zh-code":
            pool = ZH_CODE_SPECIAL.get(k, []) + (ZH_CODE_NUM if numeric and k not in ("keys", "cadr") else [])
        else:
            pool = EN_CODE_SPECIAL.get(k, []) + (EN_CODE_NUM if numeric and k not in ("keys", "size") else [])
        if not pool or not specs[k]:
            raise ValueError(f"{p['code']}: no question for {k}")
        tpl = rng.choice(pool)
        out.append((tpl.format(c=p["code"], label=zh_label if kind == "zh-code" else en_label), tpl))
    return out


# --------------------------------------------------------------------------------------- the set
KINDS = ("zh-name", "zh-latin", "zh-english", "en-name", "en-latin", "zh-code", "en-code", "cross-lingual")


def generate() -> dict:
    """The whole set in memory: corpus, queries, qrels and per-document metadata (for tests/README)."""
    rng = random.Random(SEED)
    corpus, queries, qrels, meta = [], [], [], {}

    def ask(doc_id: str, kind: str, text: str, template: str) -> None:
        qid = f"q{len(queries) + 1:04d}"
        queries.append({"_id": qid, "text": text, "kind": kind})
        qrels.append((qid, doc_id))
        meta[doc_id]["questions"].append((qid, kind, template))

    for i, s in enumerate(SPECIES, 1):
        doc_id = f"sp{i:03d}"
        title, text = render_species(s, rng)
        corpus.append({"_id": doc_id, "title": title, "text": text})
        meta[doc_id] = {"type": "species", "species": s, "questions": []}
        plan = []
        for kind, (p_any, p_two) in SPECIES_RATES.items():
            if kind in ("zh-english", "en-name") and not s["en_page"]:
                continue
            if rng.random() < p_any:
                plan.append((kind, 2 if rng.random() < p_two else 1))
        if not s["en_page"] and s["en"]:
            plan.append(("cross-lingual", rng.choice((2, 2, 3))))
        if not plan:
            plan.append(("zh-name", 1))
        for kind, count in plan:
            for text_q, ti in species_questions(s, kind, count, rng):
                ask(doc_id, kind, text_q, f"{kind}:{ti}")
    for i, p in enumerate(PRODUCTS, 1):
        doc_id = f"pr{i:03d}"
        title, text = render_product(p, rng)
        corpus.append({"_id": doc_id, "title": title, "text": text})
        meta[doc_id] = {"type": "product", "product": p, "questions": []}
        keys = [k for k, _ in p["specs"]]
        rng.shuffle(keys)
        n_zh, n_en = rng.choice((2, 2, 3)), 2
        for kind, ks in (("zh-code", keys[:n_zh]), ("en-code", keys[n_zh : n_zh + n_en] or keys[:n_en])):
            for text_q, tpl in product_questions(p, kind, ks, rng):
                ask(doc_id, kind, text_q, f"{kind}:{tpl}")
    return {"corpus": corpus, "queries": queries, "qrels": qrels, "meta": meta}


def jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")


def files(data: dict) -> dict[str, bytes]:
    """Relative path -> exact bytes of each output file."""
    tsv = "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, d in data["qrels"])
    return {
        "corpus.jsonl": jsonl(data["corpus"]),
        "queries.jsonl": jsonl(data["queries"]),
        "qrels/test.tsv": tsv.encode("utf-8"),
    }


def summary(data: dict) -> dict:
    kinds: dict[str, int] = {k: 0 for k in KINDS}
    for q in data["queries"]:
        kinds[q["kind"]] += 1
    species = [m for m in data["meta"].values() if m["type"] == "species"]
    return {
        "documents": len(data["corpus"]),
        "species_pages": len(species),
        "species_pages_without_english": sum(1 for m in species if not m["species"]["en_page"]),
        "product_pages": sum(1 for m in data["meta"].values() if m["type"] == "product"),
        "queries": len(data["queries"]),
        "kinds": kinds,
    }


def build(out_dir: Path) -> dict:
    """Write the set into out_dir; returns summary()."""
    data = generate()
    for rel, blob in files(data).items():
        path = Path(out_dir) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(blob)
    return summary(data)


def main() -> int:
    info = build(HERE)
    print(json.dumps(info, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
