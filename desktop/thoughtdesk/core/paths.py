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


# --- the settings file ----------------------------------------------------------------------
# One store for the GUI and the command line: an INI file that the GUI reads and writes through
# QSettings (ui/settings/options.py points every QSettings at it) and that non-Qt code reads
# through the same declarations (core/settings/registry.py, core/settings/saved.py). It lives in
# the config folder, so THOUGHTDESK_CONFIG_DIR reaches it, as it reaches core.json, fragments and
# mappings.

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
