"""API keys, kept in the operating system's keyring and nowhere else.

Keys never go into the library file, settings, logs or exports: code asks for a key right
before it builds a backend and passes it straight in. When ``THOUGHTDESK_TESTING=1`` (set by the
test suite) and no keyring was chosen with :func:`use_keyring`, an in-memory keyring is used,
so tests never read or write the user's real keyring. Where no keyring exists and the user
agreed, keys go to a file (:class:`FileKeyring`). Once the log asked for it
(:func:`thoughtdesk.core.settings.logs.watch_keyring`), every key read or stored here passes
through :class:`SecretWatchingKeyring`, which registers it for redaction.

Importing this module imports keyring (a tenth of a second): modules that every command
imports (the config, the log) import it only where a key is handled.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import keyring
import keyring.backend
import keyring.errors

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.files import write_text_atomically
from thoughtdesk.core.paths import user_config_dir
from thoughtdesk.core.settings.logs import keys_watched, register_secret

#: The keyring "service" under which every provider's key is stored (username = provider).
SERVICE = "thoughtdesk"
#: The key file's name in the config folder (:class:`FileKeyring`).
KEY_FILENAME = "api-keys.json"


class SecretStoreError(ThoughtDeskError):
    """The keyring cannot be used (none installed, locked, or refused access)."""


class OwnKeyringPriority:
    """The ``priority`` of ThoughtDesk's own keyrings: a number on an instance, but an error on
    the class, which is how keyring's discovery tells a backend is not viable.

    keyring registers every subclass of KeyringBackend and, when it looks for the system
    keyring, chains every viable one: our in-memory and file keyrings were picked up that way
    and reported as "the system keyring (ChainerBackend)", so a key saved in Settings on a
    machine without a keyring went to memory and was lost (issue 15, point 4). They are used
    only when chosen with :func:`use_keyring`.
    """

    def __init__(self, value: float) -> None:
        self.value = value

    def __get__(self, instance: object, owner: type | None = None) -> float:
        if instance is None:
            raise RuntimeError("ThoughtDesk's own keyring is used only when chosen explicitly")
        return self.value


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A keyring that keeps passwords in this process only (for tests and throwaway sessions)."""

    priority = OwnKeyringPriority(1)  # a descriptor: never discovered as a system keyring

    def __init__(self) -> None:
        super().__init__()
        self._passwords: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self._passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self._passwords.pop((service, username), None) is None:
            raise keyring.errors.PasswordDeleteError(f"no password for {username} in {service}")


class FileKeyring(keyring.backend.KeyringBackend):
    """Keys in a JSON file readable only by the user (mode 0600), for systems without a keyring.

    Used only when the user agreed (``CoreConfig.keys_in_file``): the keys are protected by the
    file's permissions, not encrypted, and the Settings dialog says so.
    """

    priority = OwnKeyringPriority(0.1)  # never discovered as a system keyring

    def __init__(self, path: Path | None = None) -> None:
        super().__init__()
        self.path = path or user_config_dir() / KEY_FILENAME

    def _read(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            raise keyring.errors.KeyringError(f"key file {self.path} is unreadable: {error}") from None
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def _write(self, data: dict[str, str]) -> None:
        write_text_atomically(self.path, json.dumps(data, indent=2) + "\n", private=True)  # 0600, never half a file

    def get_password(self, service: str, username: str) -> str | None:
        return self._read().get(f"{service}/{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        data = self._read()
        data[f"{service}/{username}"] = password
        self._write(data)

    def delete_password(self, service: str, username: str) -> None:
        data = self._read()
        if data.pop(f"{service}/{username}", None) is None:
            raise keyring.errors.PasswordDeleteError(f"no password for {username} in {service}")
        self._write(data)


class SecretWatchingKeyring(keyring.backend.KeyringBackend):
    """Wraps a keyring: every password read or stored through it is registered for redaction."""

    priority = 0

    def __init__(self, inner: keyring.backend.KeyringBackend | None) -> None:
        super().__init__()
        self._inner = inner

    @property
    def inner(self) -> keyring.backend.KeyringBackend:
        """The wrapped keyring; the system one is looked up on first use (it takes ~0.1 s, and
        start-up should not pay for it)."""
        if self._inner is None:
            if os.environ.get("THOUGHTDESK_TESTING") == "1":
                self._inner = MemoryKeyring()  # as active_keyring does in tests
            else:
                self._inner = system_keyring()
        return self._inner

    @property
    def name(self) -> str:
        return getattr(self.inner, "name", type(self.inner).__name__)

    def get_password(self, service: str, username: str) -> str | None:
        value = self.inner.get_password(service, username)
        register_secret(value)
        return value

    def set_password(self, service: str, username: str, password: str) -> None:
        register_secret(password)
        self.inner.set_password(service, username, password)

    def delete_password(self, service: str, username: str) -> None:
        self.inner.delete_password(service, username)


_chosen: keyring.backend.KeyringBackend | None = None


def use_keyring(backend: keyring.backend.KeyringBackend | None) -> None:
    """Use ``backend`` for keys from now on (None: the system keyring, or memory in tests)."""
    global _chosen
    _chosen = backend


def active_keyring() -> keyring.backend.KeyringBackend:
    """The keyring keys are read from and written to now (the system one looked up if none was
    chosen), wrapped in :class:`SecretWatchingKeyring` once the log watches keys."""
    global _chosen
    if _chosen is None and os.environ.get("THOUGHTDESK_TESTING") == "1":
        _chosen = MemoryKeyring()
    if keys_watched() and not isinstance(_chosen, SecretWatchingKeyring):
        _chosen = SecretWatchingKeyring(_chosen)  # None: the system keyring, looked up on first use
    return _chosen if _chosen is not None else system_keyring()


#: The environment variable with which keyring lets a user name the backend to use.
BACKEND_VARIABLE = "PYTHON_KEYRING_BACKEND"


def system_keyring() -> keyring.backend.KeyringBackend:
    """keyring's choice of the system keyring; :class:`SecretStoreError` saying what is wrong
    when it cannot load one. An empty or misspelt ``PYTHON_KEYRING_BACKEND`` made keyring raise
    a bare ValueError or ModuleNotFoundError, an internal error of ``keys list`` (issue 23,
    point 12)."""
    try:
        return keyring.get_keyring()
    except Exception as error:  # keyring imports the named class: any import error can come out
        value = os.environ.get(BACKEND_VARIABLE)
        cause = f"{type(error).__name__}: {error}"
        if value is None:
            raise SecretStoreError(
                f"the system keyring could not be loaded ({cause}); install or repair a keyring (GNOME Keyring, "
                "KWallet, macOS Keychain, Windows Credential Manager)"
            ) from None
        what = "is set but empty" if not value.strip() else f"is set to {value!r}, which is not a keyring backend"
        raise SecretStoreError(
            f"the environment variable {BACKEND_VARIABLE} {what} ({cause}); unset it to use the system keyring, "
            "or set it to a backend class such as keyring.backends.SecretService.Keyring "
            "(`keyring --list-backends` lists them)"
        ) from None


def _fail(provider: str, action: str, error: Exception) -> SecretStoreError:
    # The error text of a keyring backend never contains the key; still, name only the provider.
    return SecretStoreError(
        f"cannot {action} the API key of {provider} in the system keyring ({type(error).__name__}); "
        "unlock the keyring, or install one (GNOME Keyring, KWallet, macOS Keychain, Windows "
        "Credential Manager)"
    )


def checked_key(key: str, *, provider: str, source: str) -> str:
    """``key`` without surrounding white space, if every character of it can go in an HTTP
    header (printable ASCII); else :class:`SecretStoreError` naming ``source`` (where the key
    came from: "the keyring", "OPENAI_API_KEY", "Settings") and the place of the bad character,
    never the key itself. A stray ``\r`` from a copy and paste put the whole key into error
    messages; a non-ASCII character crashed the run."""
    key = key.strip()
    if not key:
        raise SecretStoreError(f"the {provider} API key in {source} is empty; paste the key and try again")
    for position, character in enumerate(key, 1):
        if not "!" <= character <= "~":
            kind = (
                "a space"
                if character.isspace() and character.isprintable()
                else "a control character"
                if not character.isprintable()
                else "a non-ASCII character"
            )
            raise SecretStoreError(
                f"the {provider} API key in {source} has {kind} at position {position} of {len(key)}; "
                "API keys are plain ASCII letters, digits and punctuation: copy the key again from the provider "
                "and save it anew"
            )
    return key


def get_api_key(provider: str) -> str | None:
    """The stored key of ``provider`` (e.g. ``openai``), or None when none is stored; a stored
    key that cannot be sent (see :func:`checked_key`) raises :class:`SecretStoreError`."""
    try:
        key = active_keyring().get_password(SERVICE, provider)
    except keyring.errors.NoKeyringError:
        return None  # no keyring at all holds no key: the environment's key may still be used
    except keyring.errors.KeyringError as error:
        raise _fail(provider, "read", error) from None
    return None if key is None else checked_key(key, provider=provider, source="the keyring")


def set_api_key(provider: str, key: str) -> None:
    """Store ``key`` for ``provider``, replacing any earlier one; surrounding spaces are removed
    and a key that could not be sent is refused (see :func:`checked_key`)."""
    key = checked_key(key, provider=provider, source="Settings")
    try:
        active_keyring().set_password(SERVICE, provider, key)
    except keyring.errors.KeyringError as error:
        raise _fail(provider, "store", error) from None


def delete_api_key(provider: str) -> bool:
    """Remove ``provider``'s stored key; False when none was stored."""
    try:
        backend = active_keyring()
        if backend.get_password(SERVICE, provider) is None:
            return False
        backend.delete_password(SERVICE, provider)
    except keyring.errors.NoKeyringError:
        return False
    except keyring.errors.KeyringError as error:
        raise _fail(provider, "delete", error) from None
    return True


def masked(key: str | None) -> str:
    """A key shown safely: its last four characters only (``••••abcd``), or ``(none)``."""
    if not key:
        return "(none)"
    return "••••" + key[-4:] if len(key) > 8 else "••••"
