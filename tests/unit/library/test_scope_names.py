"""Collection (scope) names: letters of any language, digits, - and _; the rule is said in words."""

from __future__ import annotations

from desktop_app.core.library.scopes import SCOPE_NAME_LIMIT, check_scope_name, scope_name_rule


def test_a_chinese_collection_name_is_accepted():
    assert check_scope_name("鹦鹉") is None
    assert check_scope_name("@鸟类_2024-春") is None


def test_a_name_with_a_space_or_a_slash_is_refused_with_the_rule():
    for bad in ("my notes", "a/b", "x" * (SCOPE_NAME_LIMIT + 1), "鹦鹉!"):
        why = check_scope_name(bad)
        assert why is not None, bad
        text = why.render()
        assert "any language" in text and "digits" in text


def test_an_empty_name_is_refused():
    assert check_scope_name("  @ ") is not None


def test_the_rule_says_letters_of_any_language():
    assert "letters (any language" in scope_name_rule().render()
