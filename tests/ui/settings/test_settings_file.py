"""One settings file for the GUI and the command line (issue 16, point 7): QSettings writes it
in INI format in the config folder, the core reads it back exactly, the CLI uses the library and
offline mode chosen in the app, and an earlier version's settings are copied over once."""

from __future__ import annotations

import pytest

from thoughtdesk.cli.main import main
from thoughtdesk.core.paths import settings_file
from thoughtdesk.core.settings import network, registry
from thoughtdesk.core.settings.saved import saved
from thoughtdesk.core.settings.startup import saved_offline
from thoughtdesk.ui.qt import QSettings
from thoughtdesk.ui.settings import options

TRICKY = [
    "/home/dr ng/Ward 7, ICU/library.thoughtdesk",
    'C:\\Users\\Ng\\"quoted"\\lib;rary=1.thoughtdesk',
    "  leading and trailing spaces  ",
    "@at the start",
    "Überweisung/ärztliche Befunde/μ-library.thoughtdesk",
    "tab\there",
]


def test_the_settings_file_is_in_the_config_folder(tmp_path):
    assert settings_file() == tmp_path / "config" / "ThoughtDesk" / "ThoughtDesk.ini"
    store = QSettings()
    store.setValue("probe/value", 1)
    store.sync()
    assert store.fileName() == str(settings_file()) == options.open_settings().fileName()


@pytest.mark.parametrize("value", TRICKY)
def test_core_reads_back_what_qsettings_wrote(value):
    store = options.open_settings()
    store.setValue(registry.LIBRARY_PATH.key, value)
    store.setValue(registry.OFFLINE.key, True)
    store.sync()
    assert saved(registry.LIBRARY_PATH) == value
    assert saved(registry.OFFLINE) is True


def test_the_command_line_uses_the_library_and_offline_mode_chosen_in_the_app(tmp_path, capsys):
    library = tmp_path / "chosen in the app, ward 7.thoughtdesk"
    options.save_settings(options.AppSettings(library_path=str(library), offline=True))
    network.set_offline(False)  # as a new process starts
    assert main(["library", "path"]) == 0
    assert capsys.readouterr().out.strip() == str(library)
    assert saved_offline() is True
    assert main(["collections"]) == 1  # read command on the chosen (missing) library
    assert f"no library at {library}" in capsys.readouterr().err
    assert network.is_offline()  # the saved offline mode applied to the command


def test_settings_of_an_earlier_version_are_copied_once(tmp_path):
    settings_file().unlink(missing_ok=True)
    old = QSettings(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, options.ORGANIZATION, options.APPLICATION)
    old.setValue(registry.USER_NAME.key, "Grace Hopper")
    old.setValue(registry.LIBRARY_PATH.key, "/data/old.thoughtdesk")
    old.sync()
    options.use_settings_file()
    assert saved(registry.USER_NAME) == "Grace Hopper"
    assert saved(registry.MIGRATED_FROM) == old.fileName()
    assert options.load_settings().library_path == "/data/old.thoughtdesk"
    old.setValue(registry.USER_NAME.key, "someone else")  # later changes of the old store are not copied again
    old.sync()
    options.use_settings_file()
    assert options.user_name() == "Grace Hopper"
