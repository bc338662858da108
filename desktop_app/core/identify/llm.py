"""The identify flow's language-model steps: the decision (system prompt, a JSON schema that limits
``final_name`` to the candidates, reading the reply) and the optional vision-LLM description."""

from __future__ import annotations

import base64
import io
import logging
from collections.abc import Sequence
from typing import Any

from PIL import Image

from desktop_app.core.events import Candidate, Decision
from desktop_app.core.identify.result import UNCERTAIN
from desktop_app.core.identify.texts import LLM_FAILED, LLM_INVALID
from desktop_app.core.library.documents import Hit
from desktop_app.core.messages import Message, message
from desktop_app.core.models.llm.base import ChatModel
from desktop_app.core.models.llm.jsonx import extract_json
from desktop_app.core.tasks import TaskState

log = logging.getLogger(__name__)

DECISION_SYSTEM = (
    "You identify the subject of a photo. You get the classifier's candidates with scores, a visual "
    "description of the photo, and numbered excerpts from the user's knowledge base. Compare the "
    "observed features with each candidate's identification keys in the excerpts. Choose final_name "
    'only from the candidates, or "uncertain" when the evidence does not single one out. Give short '
    "reasoning that cites excerpts as [n]. If uncertain, set need_more_info to true and say in "
    "followup what photo or detail would settle it. Answer in the language of the user's question "
    "(English if none). Reply with JSON only."
)
VISION_PROMPT = (
    "Describe the main subject of this photo for identification in one sentence: "
    "kind of animal or object, colours of each body part, distinctive marks."
)


def decision_schema(names: Sequence[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "final_name": {"type": "string", "enum": [*names, UNCERTAIN]},
            "reasoning": {"type": "string"},
            "need_more_info": {"type": "boolean"},
            "followup": {"type": "string"},
        },
        "required": ["final_name", "reasoning", "need_more_info", "followup"],
        "additionalProperties": False,
    }


def decision_messages(
    candidates: Sequence[Candidate], description: str, hits: Sequence[Hit], question: str | None
) -> list[dict[str, Any]]:
    lines = [f"- {c.name} ({c.source}, score {c.score:.2f})" for c in candidates]
    blocks = [f"[{i + 1}] {h.source}: {h.text[:700]}" for i, h in enumerate(hits)]
    user = (
        (f"Question: {question}\n" if question else "")
        + "Candidates:\n"
        + "\n".join(lines)
        + f"\n\nVisual description: {description}\n\nExcerpts:\n"
        + ("\n\n".join(blocks) or "(none found)")
    )
    return [{"role": "system", "content": DECISION_SYSTEM}, {"role": "user", "content": user}]


def parse_decision(text: str, names: Sequence[str]) -> Decision | None:
    """The reply as a Decision, or None unless it is a JSON object naming a candidate or "uncertain"."""
    obj = extract_json(text)
    if not obj or obj.get("final_name") not in [*names, UNCERTAIN]:
        return None
    return Decision(
        obj["final_name"],
        [reasoning] if (reasoning := str(obj.get("reasoning", "")).strip()) else [],  # the model's words
        bool(obj.get("need_more_info", obj["final_name"] == UNCERTAIN)),
        str(obj.get("followup", "")),
    )


def llm_decision(
    chat_model: ChatModel,
    candidates: Sequence[Candidate],
    description: str,
    hits: Sequence[Hit],
    question: str | None,
    cancel: TaskState | None = None,
) -> tuple[Decision | None, Message | None]:
    """(the model's decision, None), or (None, why the evidence vote decides instead)."""
    from desktop_app.core.models.llm.base import LLMError, complete

    names = [c.name for c in candidates]
    try:
        text = complete(
            chat_model,
            decision_messages(candidates, description, hits, question),
            json_schema=decision_schema(names),
            max_tokens=400,
            temperature=0.0,
            cancel=cancel,
        )
    except LLMError as exc:
        return None, message(LLM_FAILED, error=exc)
    decision = parse_decision(text, names)
    if decision is None:
        return None, message(LLM_INVALID)
    return decision, None


def _image_data_url(img: Image.Image) -> str:
    buf = io.BytesIO()
    small = img.copy()
    small.thumbnail((512, 512))
    small.save(buf, format="JPEG", quality=85)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def vision_description(chat_model: ChatModel, img: Image.Image) -> str | None:
    """A vision-capable LLM's description (OpenAI-style image input); None on any failure."""
    from desktop_app.core.models.llm.base import LLMError, complete

    messages = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": VISION_PROMPT},
                {"type": "image_url", "image_url": {"url": _image_data_url(img)}},
            ],
        }
    ]
    try:
        text = complete(chat_model, messages, max_tokens=120, temperature=0.0).strip()
    except (LLMError, TypeError, ValueError) as exc:
        log.info("vision description unavailable: %s", exc)
        return None
    return text or None
