"""Where ThoughtDesk keeps its files on this machine."""

from __future__ import annotations

import functools
import os
from importlib.resources import files
from pathlib import Path

import platformdirs

APP_NAME = "ThoughtDesk"
LIBRARY_ENV = "THOUGHTDESK_LIBRARY"
LIBRARY_FILENAME = "library.thoughtdesk"
#: Overrides the settings folder (tests, the self-test, managed installs).
CONFIG_DIR_ENV = "THOUGHTDESK_CONFIG_DIR"


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


def default_library_path() -> Path:
    """The default library: ``$THOUGHTDESK_LIBRARY`` if set, else one file in the data folder."""
    env = os.environ.get(LIBRARY_ENV)
    if env:
        return Path(env).expanduser()
    return user_data_dir() / LIBRARY_FILENAME


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
    package = Path(str(files("thoughtdesk")))  # a real folder: site-packages, the bundle, desktop/
    installed = package / "resources"
    if installed.is_dir():
        return installed
    # Not inside the package: a source checkout, whose desktop/thoughtdesk is the package. The
    # editable install's mapping of thoughtdesk.resources is not used: PYTHONPATH may point at
    # another checkout than the one installed, and its own resources/ are the right ones.
    return package.parents[1] / "resources"
