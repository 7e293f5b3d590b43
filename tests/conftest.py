"""Shared test set-up: offscreen Qt, a temporary library, the shared datasets folder."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
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
    on a worker thread and free Qt objects there; each test's garbage is collected after it.

    What exists when the session starts (every imported module: Qt, numpy, scipy, httpx...) is
    frozen out of those collections: a full collection walked all of it after every test, about
    0.1 s each unloaded and near 1 s on a loaded machine; now it walks what the test made."""
    gc.disable()
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()
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


#: Session fixtures whose tests run on one worker with pytest-xdist (`-n N --dist loadgroup`, the
#: README's test command). The small local model: every test that loads it (in this process, in
#: a child, or in the llama.cpp server, which is then started once, not on every worker) runs on
#: one worker, so llama.cpp's threads never compete with each other for the two cores; spread
#: over three workers they ran 3-5 times slower and met their 120 s request timeouts.
SHARED_BY_GROUP = {"gguf_model": "local-model", "llama_server": "local-model"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Groups for ``--dist loadgroup``: the users of an expensive session fixture (above), and the
    tests of a module that share a module-scoped fixture (a built wheel, a loaded model), which
    would otherwise be made again on each worker the module's tests were spread over."""
    groups = {item: _xdist_group(item) for item in items}
    # A module grouped for its module-scoped fixture joins a fixture's group that some of its
    # tests are in: one worker makes that module's fixture (a wheel built once, not twice).
    joined = {item.nodeid.split("::")[0]: group for item, group in groups.items() if group in SHARED_BY_GROUP.values()}
    for item, group in groups.items():
        if group == item.nodeid.split("::")[0]:
            group = joined.get(group, group)
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


#: How many times longer than written a test waits for a state in the GUI (``qtbot.waitUntil``,
#: ``waitSignal``, ``waitSignals``, ``waitCallback``, ``waitExposed``, ``waitActive``) before it
#: fails. A wait ends as soon as the state is there, so a passing test takes no longer; the
#: written deadlines (mostly 5-10 s) were met on an idle machine but not always on a loaded
#: two-core one running the suite on several workers (issue 27, point 5).
QT_WAIT_SCALE = 3


@pytest.fixture(autouse=True, scope="session")
def _patient_qt_waits() -> Iterator[None]:
    import functools

    from pytestqt.qtbot import QtBot

    saved = {}
    for name in ("waitUntil", "waitSignal", "waitSignals", "waitCallback", "waitExposed", "waitActive"):
        method = saved[name] = getattr(QtBot, name)

        @functools.wraps(method)
        def patient(self, *args, _method=method, timeout: int | None = 5000, **kwargs):
            if timeout is not None and timeout > 0:
                timeout *= QT_WAIT_SCALE
            return _method(self, *args, timeout=timeout, **kwargs)

        setattr(QtBot, name, patient)
    yield
    for name, method in saved.items():
        setattr(QtBot, name, method)
