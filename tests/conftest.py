"""Shared test set-up: offscreen Qt, a temporary library, the shared datasets folder."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Tests never touch the user's real settings, library or keyring.
os.environ.setdefault("THOUGHTDESK_TESTING", "1")

from tests.helpers.paths import FIXTURES, shared_path  # after the environment

# Fixtures every test folder may use: per-test app state (QSettings, config, logs, keyring),
# the local model and the fake model servers, the main window.
pytest_plugins = ["tests.helpers.app_state", "tests.helpers.models", "tests.helpers.window"]


@pytest.fixture
def shared():
    return shared_path


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture(autouse=True, scope="session")
def _collect_on_the_main_thread():
    """As in the app (:mod:`thoughtdesk.ui.app.gc_guard`): no automatic collection, which could run
    on a worker thread and free Qt objects there; each test's garbage is collected after it."""
    gc.disable()
    yield
    gc.enable()


@pytest.fixture(autouse=True)
def _collect_after_each_test():
    yield
    gc.collect()


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory, monkeypatch):
    """Point every per-user folder (data, config, logs, cache) at a fresh temporary folder."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    monkeypatch.delenv("THOUGHTDESK_LIBRARY", raising=False)
    yield


#: Session fixtures that are expensive to make (a llama.cpp server loading the model): with
#: pytest-xdist (`-n N --dist loadgroup`, the README's test command), the tests that use one run
#: on one worker, which makes it once, instead of on every worker, each making its own.
SHARED_BY_GROUP = {"llama_server": "llama-server"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Groups for ``--dist loadgroup``: the users of an expensive session fixture (above), and the
    tests of a module that share a module-scoped fixture (a built wheel, a loaded model), which
    would otherwise be made again on each worker the module's tests were spread over."""
    for item in items:
        group = _xdist_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


def _xdist_group(item: pytest.Item) -> str | None:
    names = getattr(item, "fixturenames", ())
    for fixture, group in SHARED_BY_GROUP.items():
        if fixture in names:
            return group
    info = getattr(item, "_fixtureinfo", None)  # pytest's own record of the item's fixtures
    for definitions in info.name2fixturedefs.values() if info is not None else ():
        if definitions and definitions[-1].scope == "module":
            return item.nodeid.split("::")[0]
    return None
