"""API keys go to the keyring when one exists, to config.toml with a warning otherwise, and never to logs."""

from __future__ import annotations

import io
import logging
import stat

import keyring
import pytest
from keyring.backends import fail

from desktop_app.core import secrets
from desktop_app.core.config import Config, load_config

KEY = "sk-proj-Zx81TOPSECRETvalue0123456789"


@pytest.fixture
def no_keyring():
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(previous)


def test_key_goes_to_the_keyring_and_not_the_config_file(memory_keyring, tmp_path):
    cfg_path = tmp_path / "config.toml"
    assert secrets.keyring_available()
    assert secrets.set_api_key(cfg_path, "llm.api_key", KEY) == "keyring"
    assert KEY not in cfg_path.read_text()
    assert memory_keyring.store[(secrets.SERVICE, "llm.api_key")] == KEY
    assert secrets.get_api_key(load_config(cfg_path), "llm.api_key") == KEY


def test_blank_key_deletes_it_from_the_keyring(memory_keyring, tmp_path):
    cfg_path = tmp_path / "config.toml"
    secrets.set_api_key(cfg_path, "embedding.api_key", KEY)
    secrets.set_api_key(cfg_path, "embedding.api_key", "")
    assert secrets.get_api_key(load_config(cfg_path), "embedding.api_key") == ""


def test_without_a_keyring_the_key_goes_to_config_with_a_warning(no_keyring, tmp_path, caplog):
    cfg_path = tmp_path / "config.toml"
    caplog.set_level(logging.WARNING)
    assert not secrets.keyring_available()
    assert secrets.set_api_key(cfg_path, "llm.api_key", KEY) == "config"
    assert load_config(cfg_path).llm.api_key == KEY
    assert stat.S_IMODE(cfg_path.stat().st_mode) == 0o600
    assert "no system keyring" in caplog.text and "plain text" in caplog.text
    assert KEY not in caplog.text


def test_a_hand_written_config_key_wins_over_the_keyring(memory_keyring):
    memory_keyring.set_password(secrets.SERVICE, "llm.api_key", "sk-from-keyring-aaaaaaaaaaaa")
    cfg = Config()
    cfg.llm.api_key = "sk-from-file-bbbbbbbbbbbbbb"
    assert secrets.get_api_key(cfg, "llm.api_key") == "sk-from-file-bbbbbbbbbbbbbb"


def test_unknown_key_name_is_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown key name"):
        secrets.set_api_key(tmp_path / "c.toml", "ui.theme", "x")


def test_keys_never_reach_log_output_from_any_logger_or_traceback():
    secrets.install_log_redaction()
    secrets.remember_secret("plainsecretwithoutshape42")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(name)s %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    old_level = root.level
    root.setLevel(logging.DEBUG)
    try:
        logging.getLogger("httpx").debug("headers: Authorization: Bearer %s", KEY)
        logging.getLogger("desktop_app.core.models.llm").info("calling with api_key=%s", KEY)
        logging.getLogger("x.y").warning({"api_key": KEY})
        logging.getLogger("z").error("known secret %s", "plainsecretwithoutshape42")
        try:
            raise RuntimeError(f"server said no to {KEY}")
        except RuntimeError:
            logging.getLogger("w").exception("failed")
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    out = stream.getvalue()
    assert "failed" in out and "RuntimeError" in out  # the logs still say what happened
    assert KEY not in out and "TOPSECRET" not in out
    assert "plainsecretwithoutshape42" not in out
    assert out.count(secrets.MASK) >= 5


def test_redacted_config_dict_masks_keys():
    cfg = Config()
    cfg.llm.api_key = KEY
    d = secrets.redacted_config_dict(cfg)
    assert d["llm"]["api_key"] == secrets.MASK and KEY not in repr(d)
    assert d["embedding"]["api_key"] == ""


def test_kdesk_models_and_a_failing_verbose_ask_never_print_the_key(
    tmp_path, kdesk_cls, shared_embeddings_server
):
    """The real CLI, verbose, with the key in config.toml and an LLM server that refuses it."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    kd = kdesk_cls(
        tmp_path / "data",
        shared_embeddings_server.url,
        llm={"backend": "openai", "url": dead, "model": "m", "api_key": KEY, "timeout": 2.0},
        embedding={"api_key": KEY},
    )
    (tmp_path / "a.md").write_text("# A\nKeys must not leak.\n")
    outputs = []
    for args in (
        ("models", "--json"),
        ("models",),
        ("add", str(tmp_path / "a.md"), "-v", "--json"),
        ("ask", "do keys leak?", "-v", "--json"),
    ):
        res = kd.run(*args, timeout=300)
        assert res.rc in (0, 1), (args, res.stderr[-1000:])
        outputs.append(res.stdout + res.stderr)
    everything = "\n".join(outputs)
    assert "do keys leak?" in everything  # the commands really ran
    assert KEY not in everything and "TOPSECRET" not in everything


def test_embeddings_key_in_the_keyring_reaches_the_server(memory_keyring, tmp_path, embeddings_server):
    from desktop_app.core.models.embeddings import make_embedder

    cfg_path = tmp_path / "config.toml"
    assert secrets.set_api_key(cfg_path, "embedding.api_key", KEY) == "keyring"
    cfg = load_config(cfg_path)
    cfg.embedding.model = "openai:hash"
    cfg.embedding.url = embeddings_server.url
    make_embedder(cfg, tmp_path).embed_queries(["q"])
    assert embeddings_server.script.headers[0]["Authorization"] == f"Bearer {KEY}"
