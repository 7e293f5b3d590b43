"""The application log: a rotating file in the user log folder, with secrets redacted.

:func:`setup_logging` attaches one rotating file handler to the root logger. Its
:class:`RedactingFilter` rewrites every record (message, arguments, traceback, stack) before it
is written: values registered with :func:`register_secret` (every API key read from or stored
in the keyring by this process, see :func:`watch_keyring`) and anything shaped like a key
(``sk-…``, ``Bearer …``, ``x-api-key: …``, ``api_key=…``) become ``[redacted]``.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import re
import sys
import threading
from pathlib import Path

from thoughtdesk.core.paths import user_log_dir

LOG_DIR_ENV = "THOUGHTDESK_LOG_DIR"
LOG_FILENAME = "thoughtdesk.log"
#: Bytes per log file before it rotates, and how many old files are kept.
MAX_BYTES = 1_000_000
BACKUP_COUNT = 5
REDACTED = "[redacted]"

_FORMAT = "%(asctime)s %(levelname)-7s %(name)s [%(threadName)s] %(message)s"
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # OpenAI-style keys (sk-..., sk-proj-..., sk-ant-...): the prefix stays to show what it was.
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"), "sk-" + REDACTED),
    (re.compile(r"(\bBearer\s+)[A-Za-z0-9._~+/=\-]+", re.IGNORECASE), r"\1" + REDACTED),
    (
        re.compile(
            r"""(\b(?:x-api-key|api[_-]?key|authorization)["']?\s*[:=]\s*["']?)(?!Bearer\s)[^\s"',;}]+""", re.IGNORECASE
        ),
        r"\1" + REDACTED,
    ),
)

#: Environment variables that may hold API keys (``core.runs.providers`` reads them when the
#: keyring has none): their values are redacted like keyring keys.
KEY_ENVIRONMENT_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")

_secrets: set[str] = set()
_secrets_lock = threading.Lock()
_handler: logging.Handler | None = None


def log_dir() -> Path:
    """The log folder: ``$THOUGHTDESK_LOG_DIR`` if set, else the platform's user log folder."""
    env = os.environ.get(LOG_DIR_ENV)
    return Path(env).expanduser() if env else user_log_dir()


def log_file() -> Path:
    """The current log file (older ones are ``thoughtdesk.log.1`` … ``.5``)."""
    return log_dir() / LOG_FILENAME


def register_secret(value: str | None) -> None:
    """Never write ``value`` to the log (values under 4 characters are ignored: too common)."""
    if value and len(value.strip()) >= 4:
        with _secrets_lock:
            _secrets.add(value.strip())


def redact_secrets(text: str) -> str:
    """``text`` with the registered secrets (the keys this process used) replaced by
    ``[redacted]`` and nothing else changed: for data such as a CoT, where a key-shaped word
    ("Bearer of bad news") is the model's text, but the key a server echoed is not."""
    with _secrets_lock:
        known = sorted(_secrets, key=len, reverse=True)  # longest first: one key may contain another
    for secret in known:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact(text: str) -> str:
    """``text`` with registered secrets and key-shaped strings replaced by ``[redacted]``."""
    text = redact_secrets(text)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


class RedactingFilter(logging.Filter):
    """Rewrites a record's message, traceback and stack with :func:`redact` (never drops one)."""

    _formatter = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string must not hide the record
            message = f"{record.msg!r} {record.args!r}"
        record.msg = redact(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._formatter.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


def watch_keyring() -> None:
    """Make every key that passes through :mod:`thoughtdesk.core.settings.secrets` a redacted value
    (:class:`~thoughtdesk.core.settings.secrets.SecretWatchingKeyring` wraps whichever keyring is
    in use, chosen before or after this call). Calling again is harmless; there is no undo.

    Only a flag here: keyring is imported when a key is first handled, not by every command."""
    global _watching
    _watching = True


def unwatch_keyring() -> None:
    """Undo :func:`watch_keyring` (tests run many commands in one process, each on its own)."""
    global _watching
    _watching = False


def keys_watched() -> bool:
    """Whether :func:`watch_keyring` was called in this process."""
    return _watching


_watching = False


class QuietRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """The rotating log file, whose failures never reach the user as tracebacks.

    logging's default prints a traceback on stderr for every record it cannot write: a full
    disk, a file-size limit or a folder where the log cannot rotate put ~100 lines of them under
    the output of a command that worked (issue 23, point 11). Here the first failure is told in
    one line and later ones are dropped; the log goes on whenever a write works again."""

    told = False

    def handleError(self, record: logging.LogRecord) -> None:
        if self.told:
            return
        self.told = True
        error = sys.exc_info()[1]
        reason = (
            getattr(error, "strerror", None) or str(error) or type(error).__name__
            if error is not None
            else "unknown error"
        )
        try:
            sys.stderr.write(
                f"thoughtdesk: warning: cannot write the log file {self.baseFilename} ({reason}); "
                "going on without it. Free some space or fix the log folder's permissions\n"
            )
            sys.stderr.flush()
        except Exception:  # no stderr either: nothing left to tell
            pass


def setup_logging(level: int = logging.INFO) -> Path:
    """Log to the rotating file (replacing an earlier handler of ours); returns the file's path.

    Also logs uncaught exceptions of non-GUI threads. The GUI's crash dialog is installed
    separately (``thoughtdesk.ui.app.crash``).
    """
    global _handler
    path = log_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    if _handler is not None:
        root.removeHandler(_handler)
        _handler.close()
    handler = QuietRotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUP_COUNT, encoding="utf-8")
    handler.setFormatter(logging.Formatter(_FORMAT))
    handler.addFilter(RedactingFilter())
    root.addHandler(handler)
    if root.level > level or root.level == logging.NOTSET:
        root.setLevel(level)
    _handler = handler
    for variable in KEY_ENVIRONMENT_VARIABLES:
        register_secret(os.environ.get(variable))
    # httpx logs every request URL at INFO; keep those lines, but quieter libraries stay quiet.
    for noisy in ("httpcore", "hpack", "urllib3"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    threading.excepthook = _log_thread_exception
    logging.getLogger("thoughtdesk").info("log started (pid %d, python %s)", os.getpid(), sys.version.split()[0])
    return path


def stop_logging() -> None:
    """Detach and close the file handler (tests; the app keeps it until exit)."""
    global _handler
    if _handler is not None:
        logging.getLogger().removeHandler(_handler)
        _handler.close()
        _handler = None


def _log_thread_exception(args: threading.ExceptHookArgs) -> None:
    logging.getLogger("thoughtdesk").error(
        "unhandled exception in thread %s",
        getattr(args.thread, "name", "?"),
        exc_info=args.exc_value,  # the exception carries its type and traceback
    )
