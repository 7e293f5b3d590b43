"""How large an answer a model server may send (issue 15, point 6).

Each request gets a generous bound from its max tokens (:func:`response_byte_limit`: 1 MiB plus
256 bytes a token, as JSON may escape every character and a choice may carry log-probs), and no
request more than a ceiling the user sets: ``generation/max_response_mb`` in the settings file
(Edit > Settings > Network in the app), ``--max-response-mb`` for one command; 64 MB unless set.
Reading stops at the bound with a clear per-request error (an endless body reached MemoryError
before there was one).
"""

from __future__ import annotations

import logging

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.settings import saved
from thoughtdesk.core.settings.registry import MAX_RESPONSE_MB

log = logging.getLogger(__name__)

#: The settings file's key of the ceiling, in whole megabytes (MiB, as 64 MB was before it could
#: be set); its default and range are declared with it (core/settings/registry.py).
SETTING = MAX_RESPONSE_MB.key
DEFAULT_MB = MAX_RESPONSE_MB.default
LOWEST_MB, HIGHEST_MB = MAX_RESPONSE_MB.lowest, MAX_RESPONSE_MB.highest
MB = 1024 * 1024
#: Room for the envelope (ids, usage, headers of the JSON) and for log-probs or echoed prompts.
BASE_BYTES = 1024 * 1024
#: Bytes per generated token allowed: a token is a few characters, but JSON may escape each
#: character as \\uXXXX (6 bytes) and a choice may carry per-token log-probs.
BYTES_PER_TOKEN = 256

_cap_bytes: int | None = None  # None: read from the settings file at first use


class ResponseCapError(ThoughtDeskError):
    """A ceiling that is not a whole number of megabytes in the allowed range."""


def parse_cap_mb(value: object, *, where: str = "the largest answer") -> int:
    """``value`` as a ceiling in megabytes, or :class:`ResponseCapError` saying what is allowed."""
    text = str(value).strip()
    try:
        number = int(text)
    except ValueError:
        number = None
    if number is None or not LOWEST_MB <= number <= HIGHEST_MB:
        raise ResponseCapError(
            f"{where} must be a whole number of megabytes from {LOWEST_MB} to {HIGHEST_MB}, not {text!r}"
        )
    return number


def set_response_cap_mb(megabytes: object) -> int:
    """Set this process's ceiling (validated, see :func:`parse_cap_mb`); return it in MB."""
    global _cap_bytes
    number = parse_cap_mb(megabytes)
    _cap_bytes = number * MB
    return number


def saved_cap_mb() -> int:
    """The ceiling saved in the settings file, else :data:`DEFAULT_MB` (an unusable value is
    logged and the default used: a broken settings file never stops a run under way; a command
    checks it before it starts one, :func:`check_saved_cap`)."""
    try:
        return saved.saved(MAX_RESPONSE_MB)
    except saved.SettingsFileError as error:
        log.warning("%s; using %d MB", error, DEFAULT_MB)
        return DEFAULT_MB


def check_saved_cap() -> int:
    """Set this process's ceiling from the settings file; raises
    :class:`~thoughtdesk.core.settings.saved.SettingsFileError` (one line) for an unusable
    value, so that a command says so before its run starts. Returns the ceiling in MB."""
    return set_response_cap_mb(saved.saved(MAX_RESPONSE_MB))


def response_cap_bytes() -> int:
    """The ceiling in bytes: set for this process, else the saved one (read once)."""
    global _cap_bytes
    if _cap_bytes is None:
        _cap_bytes = saved_cap_mb() * MB
    return _cap_bytes


def reset_response_cap() -> None:
    """Forget the ceiling set or read, so the settings file is read again at the next request."""
    global _cap_bytes
    _cap_bytes = None


def response_byte_limit(max_tokens: int | None, n: int = 1) -> int:
    """How many body bytes an answer of ``n`` choices of at most ``max_tokens`` tokens may have:
    1 MiB plus 256 bytes a token, and never more than :func:`response_cap_bytes`."""
    tokens = max(1, max_tokens or 4096) * max(1, n)
    return min(response_cap_bytes(), BASE_BYTES + BYTES_PER_TOKEN * tokens)
