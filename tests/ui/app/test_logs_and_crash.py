"""The log file: rotation, redaction of keys; the crash dialog names the log file."""

from __future__ import annotations

import logging
import sys

from thoughtdesk.core.settings import logs, secrets
from thoughtdesk.ui.app import crash
from thoughtdesk.ui.qt import QApplication, QMessageBox


def _log_text(tmp_path) -> str:
    for handler in logging.getLogger().handlers:
        handler.flush()
    return "".join(p.read_text() for p in sorted((tmp_path / "logs").glob("thoughtdesk.log*")))


def test_keys_set_through_secrets_never_reach_the_log(tmp_path):
    path = logs.setup_logging()
    assert path == tmp_path / "logs" / "thoughtdesk.log"
    logs.watch_keyring()
    secrets.set_api_key("anthropic", "plain-looking-secret-Zq81")  # no key-like shape at all
    log = logging.getLogger("thoughtdesk.test")
    log.info("calling with key %s", "plain-looking-secret-Zq81")
    log.warning("headers: {'Authorization': 'Bearer tok-abc.def-123', 'x-api-key': 'xk-77aa'}")
    log.error("openai said: invalid key sk-proj-AbCdEf0123456789")
    try:
        raise RuntimeError("request failed with plain-looking-secret-Zq81")
    except RuntimeError:
        log.exception("boom")
    text = _log_text(tmp_path)
    for secret in ("plain-looking-secret-Zq81", "tok-abc.def-123", "xk-77aa", "AbCdEf0123456789"):
        assert secret not in text, secret
    assert text.count("[redacted]") >= 5
    assert "Traceback" in text and "RuntimeError: request failed with [redacted]" in text


def test_a_key_read_back_is_redacted_too(tmp_path):
    memory = secrets.MemoryKeyring()
    memory.set_password(secrets.SERVICE, "openai", "stored-before-start-9911")
    secrets.use_keyring(memory)
    logs.setup_logging()
    logs.watch_keyring()
    key = secrets.get_api_key("openai")
    logging.getLogger("thoughtdesk.test").info("using %s", key)
    assert "stored-before-start-9911" not in _log_text(tmp_path)


def test_log_rotates(tmp_path, monkeypatch):
    monkeypatch.setattr(logs, "MAX_BYTES", 4000)
    logs.setup_logging()
    for i in range(200):
        logging.getLogger("thoughtdesk.test").info("line %d %s", i, "x" * 80)
    names = sorted(p.name for p in (tmp_path / "logs").iterdir())
    assert names[:2] == ["thoughtdesk.log", "thoughtdesk.log.1"] and len(names) == 1 + logs.BACKUP_COUNT


def test_crash_dialog_names_the_log_file(qtbot, tmp_path):
    logs.setup_logging()
    crash.install_crash_handler()
    try:
        try:
            raise ValueError("the answer table broke near sk-live-SECRETSECRET1")
        except ValueError:
            sys.excepthook(*sys.exc_info())
    finally:
        sys.excepthook = sys.__excepthook__
    shown = [w for w in QApplication.topLevelWidgets() if w.objectName() == "crashDialog" and w.isVisible()]
    assert len(shown) == 1
    box = shown[0]
    assert isinstance(box, QMessageBox)
    text = box.text()
    assert str(tmp_path / "logs" / "thoughtdesk.log") in text
    assert "ValueError: the answer table broke near sk-[redacted]" in text
    assert "SECRETSECRET1" not in text
    logged = _log_text(tmp_path)
    assert "unhandled exception" in logged and "Traceback" in logged and "SECRETSECRET1" not in logged
    box.close()


def test_keys_from_the_environment_are_redacted(tmp_path, monkeypatch):
    # core.runs reads OPENAI_API_KEY / ANTHROPIC_API_KEY when the keyring has no key.
    monkeypatch.setenv("OPENAI_API_KEY", "env-openai-plain-4411")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-anthropic-plain-7722")
    logs.setup_logging()
    logging.getLogger("thoughtdesk.test").warning("keys %s and %s", "env-openai-plain-4411", "env-anthropic-plain-7722")
    text = _log_text(tmp_path)
    assert "env-openai-plain-4411" not in text and "env-anthropic-plain-7722" not in text
    assert "keys [redacted] and [redacted]" in text
