"""config.toml: unknown sections and keys survive a save; known keys are read strictly by type."""

from __future__ import annotations

import tomllib

import pytest

from desktop_app.core import secrets
from desktop_app.core.config import Config, ConfigError, load_config, save_config

NEWER = """\
format = 3

[llm]
backend = "openai"
profiles_default = "work"
agentic = true
stream_tool_calls = false

[llm.profiles.work]
url = "http://127.0.0.1:11434/v1"

[retrieval]
top_k = 7
late_chunking = { enabled = true, window = 3 }

[sync_schedule]
every_minutes = 30
folders = ["a", "b"]
"""


def _write(tmp_path, text: str):
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_newer_versions_sections_and_keys_survive_an_older_versions_save(tmp_path):
    path = _write(tmp_path, NEWER)
    cfg = load_config(path)
    assert cfg.llm.backend == "openai" and cfg.llm.agentic is True and cfg.retrieval.top_k == 7
    cfg.retrieval.top_k = 9  # what this version changes
    save_config(cfg, path)

    saved = tomllib.loads(path.read_text(encoding="utf-8"))
    assert saved["retrieval"]["top_k"] == 9
    assert saved["retrieval"]["late_chunking"] == {"enabled": True, "window": 3}
    assert saved["llm"]["profiles_default"] == "work" and saved["llm"]["stream_tool_calls"] is False
    assert saved["llm"]["profiles"] == {"work": {"url": "http://127.0.0.1:11434/v1"}}
    assert saved["sync_schedule"] == {"every_minutes": 30, "folders": ["a", "b"]}
    assert saved["format"] == 3  # a top-level key too
    # Known keys first (this version's order), then the unknown ones in the file's order.
    llm_keys = list(saved["llm"])
    assert llm_keys.index("profiles_default") < llm_keys.index("stream_tool_calls")
    assert llm_keys.index("agentic") < llm_keys.index("profiles_default")
    # Loading again gives the same settings, the unknown ones included: nothing is lost on a second save.
    again = load_config(path)
    assert again == load_config(path) and again.extra_keys == cfg.extra_keys and again.extra == cfg.extra


def test_unknown_keys_do_not_reach_the_sections_this_version_reads(tmp_path):
    cfg = load_config(_write(tmp_path, NEWER))
    assert not hasattr(cfg.llm, "profiles_default")
    assert cfg.extra_keys["llm"] == {
        "profiles_default": "work",
        "stream_tool_calls": False,
        "profiles": {"work": {"url": "http://127.0.0.1:11434/v1"}},
    }
    assert cfg.llm == load_config(_write(tmp_path, '[llm]\nbackend = "openai"\nagentic = true\n')).llm


def test_saving_settings_with_an_api_key_keeps_unknown_keys(tmp_path, monkeypatch):
    monkeypatch.setattr(secrets, "keyring_available", lambda: False)
    path = _write(tmp_path, NEWER)
    secrets.set_api_key(path, "llm.api_key", "sk-test")
    saved = tomllib.loads(path.read_text(encoding="utf-8"))
    assert saved["llm"]["api_key"] == "sk-test"
    assert saved["llm"]["profiles_default"] == "work" and saved["sync_schedule"]["every_minutes"] == 30


@pytest.mark.parametrize(("written", "read"), [("true", True), ("false", False)])
def test_booleans_are_toml_booleans(tmp_path, written, read):
    assert load_config(_write(tmp_path, f"[llm]\nagentic = {written}\n")).llm.agentic is read


@pytest.mark.parametrize(("written", "read"), [('"false"', False), ('"False"', False), ('" TRUE "', True)])
def test_the_words_true_and_false_in_quotes_read_as_booleans(tmp_path, written, read):
    cfg = load_config(_write(tmp_path, f"[llm]\nagentic = {written}\n"))
    assert cfg.llm.agentic is read
    save_config(cfg, tmp_path / "config.toml")  # and are written back as real booleans
    assert tomllib.loads((tmp_path / "config.toml").read_text(encoding="utf-8"))["llm"]["agentic"] is read


@pytest.mark.parametrize(("written", "shown"), [('"maybe"', '"maybe"'), ("2", "2"), ("1", "1"), ('""', '""')])
def test_a_bad_boolean_is_an_error_naming_the_file_the_key_and_the_value(tmp_path, written, shown):
    path = _write(tmp_path, f"[identify]\nvision_llm = {written}\n")
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert str(raised.value) == f"{path}: identify.vision_llm must be true or false, not {shown}"
    assert raised.value.message.code == "config_bad_bool"


@pytest.mark.parametrize(("written", "read"), [("7", 7), ('"7"', 7), ("7.0", 7)])
def test_whole_numbers_accept_what_loses_nothing(tmp_path, written, read):
    top_k = load_config(_write(tmp_path, f"[retrieval]\ntop_k = {written}\n")).retrieval.top_k
    assert top_k == read and type(top_k) is int


@pytest.mark.parametrize(("written", "shown"), [("7.5", "7.5"), ('"seven"', '"seven"'), ("true", "true")])
def test_a_bad_whole_number_is_an_error(tmp_path, written, shown):
    path = _write(tmp_path, f"[retrieval]\ntop_k = {written}\n")
    with pytest.raises(ConfigError, match="retrieval.top_k must be a whole number, not ") as raised:
        load_config(path)
    assert str(raised.value).endswith(f"not {shown}") and str(path) in str(raised.value)


@pytest.mark.parametrize(("written", "read"), [("0.25", 0.25), ("1", 1.0), ('"0.5"', 0.5)])
def test_numbers_accept_integers_and_numeric_text(tmp_path, written, read):
    weight = load_config(_write(tmp_path, f"[retrieval]\ndense_weight = {written}\n")).retrieval.dense_weight
    assert weight == read and type(weight) is float


@pytest.mark.parametrize("written", ['"half"', "false", "nan", "[0.5]"])
def test_a_bad_number_is_an_error(tmp_path, written):
    with pytest.raises(ConfigError, match=r"retrieval.dense_weight must be a number, not "):
        load_config(_write(tmp_path, f"[retrieval]\ndense_weight = {written}\n"))


def test_text_settings_refuse_booleans_and_tables_but_keep_numbers_as_text(tmp_path):
    assert load_config(_write(tmp_path, "[llm]\napi_key = 12345\n")).llm.api_key == "12345"
    with pytest.raises(ConfigError, match=r"llm.backend must be text, not false"):
        load_config(_write(tmp_path, "[llm]\nbackend = false\n"))
    with pytest.raises(ConfigError, match=r'llm.model must be text, not \{"name": "x"\}'):
        load_config(_write(tmp_path, '[llm]\nmodel = { name = "x" }\n'))


def test_a_known_section_that_is_not_a_table_is_an_error(tmp_path):
    path = _write(tmp_path, 'llm = "openai"\n')
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert str(raised.value) == f'{path}: [llm] must be a section of settings, not "openai"'


def test_a_file_that_is_not_toml_is_an_error_naming_it(tmp_path):
    path = _write(tmp_path, "[llm\nbackend = openai\n")
    with pytest.raises(ConfigError, match=r"config.toml is not valid TOML: ") as raised:
        load_config(path)
    assert isinstance(raised.value, ValueError)  # callers that caught ValueError still do


def test_defaults_round_trip_unchanged(tmp_path):
    save_config(Config(), tmp_path / "config.toml")
    assert load_config(tmp_path / "config.toml") == Config()
