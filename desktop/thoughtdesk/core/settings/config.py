"""The few settings that non-Qt code (the CLI, background work) needs, in a small JSON file.

What the user chooses in the app (library, offline mode, models) is in the one settings file
that the GUI and the CLI both read (:func:`thoughtdesk.core.paths.settings_file`). This file
holds what core itself records: whether the user agreed to keep API keys in a file because no
system keyring exists, and the server each stored key was saved for. Its ``offline`` is read
only when the settings file does not say (versions before the settings file mirrored it here). The file is ``<user config folder>/core.json`` (``~/.config/ThoughtDesk/``
on Linux; ``THOUGHTDESK_CONFIG_DIR`` overrides the folder). See ``docs/settings.md``.

It also says which keyring is in use and switches to the key-file fallback
(:class:`~thoughtdesk.core.settings.secrets.FileKeyring`), used only after the user said yes.
keyring itself is imported where a key is stored or read: every command reads this config at
its start, and importing keyring costs about as much as starting Python.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from thoughtdesk.core.files import write_text_atomically
from thoughtdesk.core.paths import user_config_dir

if TYPE_CHECKING:
    import keyring.backend

CONFIG_FILENAME = "core.json"


@dataclass(slots=True)
class CoreConfig:
    """Settings read by non-Qt code.

    ``offline``: no connection to anything but this machine (see :mod:`thoughtdesk.core.settings.network`).
    ``keys_in_file``: the user agreed to keep API keys in a private file because the system has
    no keyring (never set while a keyring works).
    ``key_origins``: provider -> the address (``scheme://host:port``) its stored key was saved
    for in Settings; the key is sent to that address only (see :func:`key_origin`).
    """

    offline: bool = False
    keys_in_file: bool = False
    key_origins: dict[str, str] = field(default_factory=dict)


def config_dir() -> Path:
    """The folder of ``core.json`` and the key file (:func:`thoughtdesk.core.paths.user_config_dir`)."""
    return user_config_dir()


def config_path() -> Path:
    return config_dir() / CONFIG_FILENAME


def load_config() -> CoreConfig:
    """The saved config; defaults when the file is missing or unreadable (never raises)."""
    try:
        data = json.loads(config_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return CoreConfig()
    if not isinstance(data, dict):
        return CoreConfig()
    config = CoreConfig(offline=bool(data.get("offline", False)), keys_in_file=bool(data.get("keys_in_file", False)))
    origins = data.get("key_origins")
    if isinstance(origins, dict):
        config.key_origins = {str(k): str(v) for k, v in origins.items() if isinstance(v, str)}
    return config


def key_origin(url: str) -> str:
    """``scheme://host:port`` of ``url`` (default ports filled in, host lower-cased): what a
    stored API key is bound to, so that it is never sent to another server."""
    parts = urlsplit(url.strip())
    scheme = (parts.scheme or "https").lower()
    port = parts.port or (443 if scheme == "https" else 80)
    return f"{scheme}://{(parts.hostname or '').lower()}:{port}"


def record_key_origin(provider: str, base_url: str) -> None:
    """Remember that ``provider``'s stored key was saved for ``base_url``."""
    config = load_config()
    config.key_origins[provider] = key_origin(base_url)
    save_config(config)


def store_api_key(provider: str, key: str, base_url: str) -> None:
    """Keep ``key`` in the keyring for ``provider``, to be sent to ``base_url``'s server only."""
    from thoughtdesk.core.settings import secrets

    secrets.set_api_key(provider, key)
    record_key_origin(provider, base_url)


def stored_key_for(provider: str, base_url: str, default_base_url: str) -> str | None:
    """The keyring's key for ``provider`` if it was saved for ``base_url``'s server, else None
    (a key saved with no address belongs to ``default_base_url``, the official one)."""
    from thoughtdesk.core.settings import secrets

    key = secrets.get_api_key(provider)
    if not key:
        return None
    bound = load_config().key_origins.get(provider) or key_origin(default_base_url)
    return key if key_origin(base_url or default_base_url) == bound else None


def save_config(config: CoreConfig) -> Path:
    """Write the config atomically; returns the file's path."""
    path = config_path()
    _write_private(path, json.dumps(asdict(config), indent=2) + "\n", private=False)
    return path


def _write_private(path: Path, text: str, *, private: bool) -> None:
    # Write-then-rename so a crash never leaves half a file; 0600 for key material.
    write_text_atomically(path, text, private=private)


# --- keyring availability and the file fallback --------------------------------------------


def current_keyring() -> keyring.backend.KeyringBackend:
    """The keyring backend :mod:`thoughtdesk.core.settings.secrets` uses right now (unwrapped from the
    log's :class:`~thoughtdesk.core.settings.secrets.SecretWatchingKeyring`)."""
    from thoughtdesk.core.settings import secrets

    backend = secrets.active_keyring()
    while hasattr(backend, "inner"):
        backend = backend.inner
    return backend


def keyring_is_usable(backend: keyring.backend.KeyringBackend | None = None) -> bool:
    """False when there is no real keyring (keyring's ``fail``/``null`` backends, or a chainer
    over none of them): storing a key there would fail or silently do nothing."""
    import keyring.backends.fail
    import keyring.backends.null

    from thoughtdesk.core.settings import secrets

    backend = backend or current_keyring()
    if isinstance(backend, (keyring.backends.fail.Keyring, keyring.backends.null.Keyring)):
        return False
    if type(backend).__name__ == "ChainerBackend":
        inner = [b for b in getattr(backend, "backends", None) or [] if keyring_is_usable(b)]
        return bool(inner) and not all(isinstance(b, (secrets.MemoryKeyring, secrets.FileKeyring)) for b in inner)
    return True


def keyring_name(backend: keyring.backend.KeyringBackend | None = None) -> str:
    """A readable name of the keyring backend (e.g. ``SecretService Keyring``)."""
    backend = backend or current_keyring()
    return getattr(backend, "name", type(backend).__name__)


def agree_to_key_file() -> Path:
    """The user agreed to keep API keys in the key file (no system keyring): remember it in
    ``core.json`` and switch to the file now; returns the file's path. What the GUI's consent
    question and ``thoughtdesk keys set --key-file`` do after a yes."""
    config = load_config()
    if not config.keys_in_file:
        config.keys_in_file = True
        save_config(config)
    use_key_file_if_allowed(config)
    from thoughtdesk.core.settings import secrets

    return secrets.FileKeyring().path


def use_key_file_if_allowed(config: CoreConfig | None = None) -> bool:
    """Switch :mod:`secrets` to the key file when there is no keyring and the user agreed.

    Returns True when the key file is now in use. Called at start-up by the GUI and the CLI.
    """
    config = config or load_config()
    if not config.keys_in_file:  # checked first: finding the system keyring takes time
        return False
    from thoughtdesk.core.settings import secrets

    if isinstance(current_keyring(), secrets.FileKeyring):
        return True
    if keyring_is_usable():
        return False
    secrets.use_keyring(secrets.FileKeyring())  # watched as any keyring is (keys redacted from the log)
    return True
