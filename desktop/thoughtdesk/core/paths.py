"""Where ThoughtDesk keeps its files on this machine."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import platformdirs

APP_NAME = "ThoughtDesk"
LIBRARY_ENV = "THOUGHTDESK_LIBRARY"
LIBRARY_FILENAME = "library.thoughtdesk"
#: Overrides the settings folder (tests, the self-test, managed installs).
CONFIG_DIR_ENV = "THOUGHTDESK_CONFIG_DIR"
#: Overrides the folder downloaded and copied GGUF models go to.
MODELS_DIR_ENV = "THOUGHTDESK_MODELS_DIR"


def user_data_dir() -> Path:
    """The per-user data folder (e.g. ``~/.local/share/ThoughtDesk`` on Linux)."""
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def user_log_dir() -> Path:
    """The per-user log folder."""
    return Path(platformdirs.user_log_dir(APP_NAME, appauthor=False))


def user_config_dir() -> Path:
    """The per-user settings folder: ``core.json``, keys file, fragments, prices, mappings
    (``$THOUGHTDESK_CONFIG_DIR`` if set, else e.g. ``~/.config/ThoughtDesk`` on Linux)."""
    override = os.environ.get(CONFIG_DIR_ENV)
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def user_cache_dir() -> Path:
    """The per-user cache folder (downloaded dataset files)."""
    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def user_models_dir() -> Path:
    """Where downloaded and copied GGUF models go: ``$THOUGHTDESK_MODELS_DIR`` if set, else
    ``models`` in the data folder (e.g. ``~/.local/share/ThoughtDesk/models``)."""
    override = os.environ.get(MODELS_DIR_ENV)
    if override:
        return Path(override).expanduser()
    return user_data_dir() / "models"


def model_registry_file() -> Path:
    """The model registry (``models.json`` in the data folder): the local models by name."""
    return user_data_dir() / "models.json"


def default_library_path() -> Path:
    """The default library: ``$THOUGHTDESK_LIBRARY`` if set, else the library chosen in the app
    (``library/path`` in the settings file), else one file in the data folder."""
    env = os.environ.get(LIBRARY_ENV)
    if env:
        return Path(env).expanduser()
    chosen = read_settings().get("library/path", "").strip()
    if chosen:
        return Path(chosen).expanduser()
    return user_data_dir() / LIBRARY_FILENAME


# --- the settings file ----------------------------------------------------------------------
# One store for the GUI and the command line: an INI file that the GUI reads and writes through
# QSettings (ui/settings/options.py points every QSettings at it) and that non-Qt code reads
# here, for what a command needs of the GUI's choices: the library (below), offline mode
# (core/settings/startup.py), the local model and the providers' addresses
# (core/generation/defaults.py). It lives in the config folder, so THOUGHTDESK_CONFIG_DIR
# reaches it, as it reaches core.json, fragments and mappings.

#: QSettings' organisation and application names (the file is <root>/<org>/<application>.ini).
SETTINGS_ORGANIZATION = SETTINGS_APPLICATION = "ThoughtDesk"


def settings_file() -> Path:
    """``<config folder>/ThoughtDesk.ini`` (e.g. ``~/.config/ThoughtDesk/ThoughtDesk.ini``), or
    ``<THOUGHTDESK_CONFIG_DIR>/ThoughtDesk/ThoughtDesk.ini`` when the folder has another name:
    QSettings places an INI file at ``<root>/<organisation>/<application>.ini``."""
    folder = user_config_dir()
    if folder.name != SETTINGS_ORGANIZATION:
        folder = folder / SETTINGS_ORGANIZATION
    return folder / f"{SETTINGS_APPLICATION}.ini"


def read_settings(path: Path | None = None) -> dict[str, str]:
    """The settings file as ``{"group/key": text}``; empty when it is missing or unreadable
    (never raises: a command then uses its defaults). Values are unescaped as QSettings writes
    them (quotes, backslash escapes, ``@@``); booleans stay the text ``true``/``false``."""
    path = path or settings_file()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    values: dict[str, str] = {}
    group = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith((";", "#")):
            continue
        if line.startswith("[") and line.endswith("]"):
            group = _unescape_key(line[1:-1])
            group = "" if group == "General" else group
            continue
        key, sep, value = line.partition("=")
        if not sep:
            continue
        name = _unescape_key(key.strip())
        values[f"{group}/{name}" if group else name] = _unescape_value(value.strip())
    return values


def _unescape_key(text: str) -> str:
    # QSettings writes "/" inside a group's keys as "\" and other unusual characters as %XX or %UXXXX.
    text = text.replace("\\", "/")
    out, i = [], 0
    while i < len(text):
        if text[i] == "%" and text[i + 1 : i + 2] == "U" and len(text) >= i + 6:
            out.append(chr(int(text[i + 2 : i + 6], 16)))
            i += 6
        elif text[i] == "%" and len(text) >= i + 3:
            out.append(chr(int(text[i + 1 : i + 3], 16)))
            i += 3
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "'": "'",
    '"': '"',
    "\\": "\\",
    "?": "?",
    ";": ";",
    ",": ",",
}


def _unescape_value(text: str) -> str:
    out: list[str] = []
    quoted = False
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            quoted = not quoted
            i += 1
        elif ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "x":  # \xHHHH: a character by its code
                j = i + 2
                while j < len(text) and j < i + 6 and text[j] in "0123456789abcdefABCDEF":
                    j += 1
                out.append(chr(int(text[i + 2 : j] or "0", 16)))
                i = j
            elif nxt in "01234567":  # \ooo
                j = i + 1
                while j < len(text) and j < i + 4 and text[j] in "01234567":
                    j += 1
                out.append(chr(int(text[i + 1 : j], 8)))
                i = j
            else:
                out.append(_ESCAPES.get(nxt, nxt))
                i += 2
        elif ch == ";" and not quoted:  # a comment after the value
            break
        else:
            out.append(ch)
            i += 1
    value = "".join(out) if quoted or '"' in text else "".join(out).strip()
    return value[1:] if value.startswith("@@") else value


def resolve_library_path(explicit: str | os.PathLike[str] | None) -> Path:
    """The library named by ``--library`` if given, else :func:`default_library_path`."""
    if explicit:
        return Path(explicit).expanduser()
    return default_library_path()


def resource_path(name: str) -> Path:
    """A file ThoughtDesk ships (icon, desktop entry, demo collection, built-in fragments).

    The repository keeps them in its top-level ``resources/`` folder, and the build maps that
    folder into the package as ``thoughtdesk/resources`` (``[tool.setuptools]`` in pyproject.toml;
    ``packaging/thoughtdesk.spec`` for the frozen bundle). So a wheel or a frozen bundle has them
    inside the package, and a source checkout (an editable install, or ``PYTHONPATH=desktop``)
    beside ``desktop/``.
    """
    return _resources_dir() / name


@functools.cache
def _resources_dir() -> Path:
    from importlib.resources import files  # here: it imports tempfile, shutil and zipfile, which a start does not need

    package = Path(str(files("thoughtdesk")))  # a real folder: site-packages, the bundle, desktop/
    installed = package / "resources"
    if installed.is_dir():
        return installed
    # Not inside the package: a source checkout, whose desktop/thoughtdesk is the package. The
    # editable install's mapping of thoughtdesk.resources is not used: PYTHONPATH may point at
    # another checkout than the one installed, and its own resources/ are the right ones.
    return package.parents[1] / "resources"
