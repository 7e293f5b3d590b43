"""API keys are checked where they enter (issue 15, point 2): a key with a control character
put the whole key into stderr, run.last_error, request.error and the Runs tab; a non-ASCII key
crashed the run. Now the key is refused at once with a message that shows none of it, a stray
line end from a paste is removed, and nothing stored or printed holds the key."""

from __future__ import annotations

import pytest

from tests.helpers.libraries import DEMO
from tests.helpers.servers import FakeModelServer
from thoughtdesk.cli.main import main
from thoughtdesk.core.generation.runs import api_key_for
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.settings.secrets import (
    MemoryKeyring,
    SecretStoreError,
    checked_key,
    get_api_key,
    set_api_key,
    use_keyring,
)

SECRET = "sk-proj-Zq81secretMaterial77"


@pytest.mark.parametrize(
    "key, kind, position",
    [
        (SECRET[:10] + "\x1b" + SECRET[10:], "a control character", 11),
        (SECRET[:5] + "\r" + SECRET[5:], "a control character", 6),
        (SECRET + "é", "a non-ASCII character", len(SECRET) + 1),
        (SECRET[:4] + " " + SECRET[4:], "a space", 5),
        (SECRET[:4] + "\u200b" + SECRET[4:], "a control character", 5),
    ],
)
def test_a_key_that_cannot_be_sent_is_refused_without_showing_it(key, kind, position):
    with pytest.raises(SecretStoreError) as caught:
        checked_key(key, provider="openai", source="OPENAI_API_KEY")
    message = str(caught.value)
    assert f"has {kind} at position {position} of {len(key.strip())}" in message and "OPENAI_API_KEY" in message
    assert "secret" not in message and "Zq81" not in message


def test_surrounding_white_space_from_a_paste_is_removed():
    assert checked_key(f"  {SECRET}\r\n", provider="openai", source="Settings") == SECRET
    with pytest.raises(SecretStoreError, match="is empty"):
        checked_key(" \r\n", provider="openai", source="Settings")


def test_settings_and_keyring_check_the_key():
    use_keyring(MemoryKeyring())
    try:
        with pytest.raises(SecretStoreError, match="in Settings has a control character"):
            set_api_key("openai", SECRET[:6] + "\x07" + SECRET[6:])
        assert get_api_key("openai") is None  # nothing was stored
        set_api_key("openai", SECRET + "\n")
        assert get_api_key("openai") == SECRET
        # A bad key put into the keyring by another program is refused when read.
        from thoughtdesk.core.settings.secrets import SERVICE, active_keyring

        active_keyring().set_password(SERVICE, "anthropic", "sk-ant-\x00" + SECRET)
        with pytest.raises(SecretStoreError, match="anthropic API key in the keyring has a control character"):
            get_api_key("anthropic")
    finally:
        use_keyring(None)


def test_environment_key_with_a_control_character_fails_the_run_cleanly(tmp_path, monkeypatch, capsys):
    from tests.helpers.libraries import demo_library

    use_keyring(MemoryKeyring())
    library = demo_library(tmp_path / "library.thoughtdesk")
    try:
        with FakeModelServer() as server:
            for bad in (SECRET[:9] + "\x1b[2J" + SECRET[9:], SECRET + "é"):
                monkeypatch.setenv("OPENAI_API_KEY", bad)
                code = main(
                    ["--library", str(library), "generate", DEMO, "--model", "openai:m", "--base-url", server.base_url]
                    + ["--dataset", "gsm8k", "--trigger", "kojima-01", "--one-step"]
                )
                out, err = capsys.readouterr()
                assert code == 1
                assert "OPENAI_API_KEY has" in err and "Traceback" not in err
                assert "secret" not in out + err and "Zq81" not in out + err
            assert server.requests == []  # nothing was sent with a key that cannot be sent
            # A paste's line end is removed and the key works.
            monkeypatch.setenv("OPENAI_API_KEY", SECRET + "\r\n")
            assert api_key_for("openai", server.base_url) == SECRET
    finally:
        use_keyring(None)
    with Library.open(library) as lib:
        stored = "\n".join(
            str(value)
            for row in lib.conn.execute("SELECT last_error, spec FROM run UNION ALL SELECT error, params FROM request")
            for value in row
        )
    assert "secret" not in stored and "Zq81" not in stored


# Issue 15, point 4: on a machine without a keyring, keyring's discovery picked up ThoughtDesk's
# own in-memory and file keyrings and chained them as "the system keyring", so a key saved in
# Settings went to memory, no warning or consent question appeared, and the next process had no key.
_PROBE = """
import keyring
from thoughtdesk.core.settings import config, secrets
from thoughtdesk.core.settings.logs import watch_keyring
backend = keyring.get_keyring()
chained = [type(b).__name__ for b in getattr(backend, "backends", [])]
print(type(backend).__name__, chained, config.keyring_is_usable(backend))
"""


@pytest.mark.parametrize("forced", [None, "keyring.backends.fail.Keyring"])
def test_our_own_keyrings_are_never_taken_for_the_system_keyring(tmp_path, forced):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("THOUGHTDESK_", "DBUS_", "PYTHON_KEYRING"))}
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"))
    if forced:
        env["PYTHON_KEYRING_BACKEND"] = forced
    result = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    name, _, rest = result.stdout.strip().partition(" ")
    assert "MemoryKeyring" not in rest and "FileKeyring" not in rest, result.stdout
    if name in ("Keyring", "ChainerBackend") and "SecretService" not in rest and "kwallet" not in rest.lower():
        assert rest.endswith("False"), result.stdout  # no real keyring here: said so, not hidden


def test_our_keyrings_still_work_when_chosen():
    from thoughtdesk.core.settings.config import keyring_is_usable
    from thoughtdesk.core.settings.secrets import FileKeyring

    memory = MemoryKeyring()
    memory.set_password("thoughtdesk", "openai", "k")
    assert memory.get_password("thoughtdesk", "openai") == "k" and memory.priority == 1
    assert FileKeyring().priority == 0.1 and keyring_is_usable(memory)


def test_without_any_keyring_the_environment_key_is_used(monkeypatch):
    """A machine with no keyring (keyring's fail backend) has no stored key; a run with
    OPENAI_API_KEY set must not fail on reading the keyring."""
    import keyring.backends.fail

    use_keyring(keyring.backends.fail.Keyring())
    try:
        assert get_api_key("openai") is None
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        assert api_key_for("openai", "http://127.0.0.1:9/v1") == SECRET
        with pytest.raises(SecretStoreError):
            set_api_key("openai", SECRET)  # storing still says there is no keyring
    finally:
        use_keyring(None)
