"""Every test has settings of its own: tests/helpers/app_state.py (autouse for the whole suite)
points QSettings at the test's tmp_path, so nothing one test saves reaches the next one, and
no test reads or writes the user's real settings."""

from __future__ import annotations

import pytest

from thoughtdesk.ui.qt import QSettings
from thoughtdesk.ui.settings.options import open_settings

PROBE = "isolation/probe"


def stores() -> list[QSettings]:
    """Every way the application opens its settings."""
    return [
        QSettings(),  # by the application's names (main window geometry, review state)
        open_settings(),  # named explicitly (Settings dialog, first-run wizard): the same file
        QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, "ThoughtDesk", "ThoughtDesk"),
    ]


@pytest.mark.parametrize("turn", [1, 2])
def test_settings_start_empty_and_are_written_into_this_tests_folder(qapp, tmp_path, turn):
    # Both turns write the probe; the second would find the first one's if settings leaked.
    for store in stores():
        assert store.fileName().startswith(str(tmp_path)), store.fileName()
        assert store.value(PROBE) is None, f"left over from an earlier test: {store.fileName()}"
    for store in stores():
        store.setValue(PROBE, turn)
        store.sync()
        assert store.status() == QSettings.Status.NoError, store.fileName()
    assert all(store.value(PROBE, type=int) == turn for store in stores())
    assert QSettings().fileName() == open_settings().fileName()  # as in the app
    assert any(path.suffix in (".conf", ".ini") for path in tmp_path.rglob("*"))


def test_system_wide_settings_are_not_read(qapp, tmp_path):
    """A machine-wide /etc/xdg/ThoughtDesk/ThoughtDesk.conf must not reach a test either."""
    store = QSettings(QSettings.Format.NativeFormat, QSettings.Scope.SystemScope, "ThoughtDesk", "ThoughtDesk")
    assert store.fileName().startswith(str(tmp_path)), store.fileName()
