"""Tolerant JSON extraction from small models' replies."""

from __future__ import annotations

import pytest

from desktop_app.core.models.llm.jsonx import as_bool, extract_json


@pytest.mark.parametrize(
    "text",
    [
        '{"use_rag": true, "q": "a"}',
        'Sure! Here it is:\n```json\n{"use_rag": true, "q": "a"}\n```',
        'The answer is {"use_rag": true, "q": "a"} as requested.',
        '{"use_rag": true, "q": "a",}',
        "{'use_rag': True, 'q': 'a'}",
        '{"use_rag": true, "q": "a"',  # cut off by max_tokens
    ],
)
def test_extract_json_finds_the_object(text):
    assert extract_json(text) == {"use_rag": True, "q": "a"}


def test_braces_inside_strings_do_not_confuse_extraction():
    assert extract_json('x {"q": "a } b", "n": 1} y') == {"q": "a } b", "n": 1}


@pytest.mark.parametrize("text", ["", "no json here", "[1, 2]", "{not: valid: at all"])
def test_no_object_gives_none(text):
    assert extract_json(text) is None


def test_as_bool_reads_what_small_models_write():
    assert [as_bool(v) for v in (True, "true", "Yes", 1, "是", "false", 0, "否")] == [True] * 5 + [False] * 3
    assert as_bool("maybe") is None and as_bool(None) is None


def test_a_reply_that_is_one_fenced_block_is_read_whole():
    # The ``` inside a value would end the block early if only the inner blocks were tried.
    reply = '```json\n{"final_name": "uncertain", "followup": "send a photo like ```this```"}\n```'
    assert extract_json(reply) == {"final_name": "uncertain", "followup": "send a photo like ```this```"}
