"""A Chinese follow-up that leaves its subject out, without a model (issue 43): it is searched with
the conversation's subject and answered from the document titled so, over a real index (bundled
MiniLM, Chroma, the keyword index)."""

from __future__ import annotations

from desktop_app.core.ask.assistant import Assistant, Conversation
from desktop_app.core.config import Config
from desktop_app.core.events import Answer, RouteDecided
from desktop_app.core.library.knowledge import KnowledgeBase

RECIPE = """# 本帮红烧肉

- 烹饪时间：约1小时30分钟

## 做法

1. 五花肉切成约3厘米见方的块，冷水下锅焯水。
2. 炒糖色后放入肉块翻炒上色。
3. 加入热水没过肉块，盖上锅盖炖1小时。
"""
# A neighbour that says 多久 in every heading: searched alone, "要炖多久？" finds it first.
ROSES = """# 月季养护问答

## 月季一天要晒多久太阳？

每天至少需要6小时直射阳光。

## 新买的月季多久换盆？

先在原盆中适应一到两周。

## 多久浇一次水？

春秋季一般2到3天浇一次。
"""


def test_a_followup_without_its_subject_is_answered_from_the_subjects_document(tmp_path, minilm):
    kb = KnowledgeBase(tmp_path / "data", config=Config(), embedder=minilm)
    (kb.knowledge_dir / "hongshaorou.md").write_text(RECIPE, encoding="utf-8")
    (kb.knowledge_dir / "rose-care.md").write_text(ROSES, encoding="utf-8")
    assert not kb.sync().failed
    try:
        assistant, conv = Assistant(kb, None, kb.config), Conversation()
        list(assistant.ask("红烧肉怎么做？", conv))
        events = list(assistant.ask("需要炖多久？", conv))
        route = next(e for e in events if isinstance(e, RouteDecided))
        answer = next(e for e in events if isinstance(e, Answer))
        assert route.is_followup and route.search_query.startswith("红烧肉")
        assert not answer.refused
        assert {c.source for c in answer.citations} == {"hongshaorou.md"}
    finally:
        kb.close()
