"""Issue 28, point 15: the GUI (QSettings) and core (its own reader of Qt's INI format) read the
same value for every declared setting from one settings file written by Qt, as the app writes it:
lists (``a, b``; a one-number list as ``@Variant(...)``; the older ``"150,0,90"`` text), booleans
(``true``/``false``), numbers, text with commas, quotes, semicolons, spaces and non-ASCII letters,
binary data (``@ByteArray``). The GUI side is read in a fresh process, as a restarted app reads it
(in the writing process QSettings answers from its cache, also checked)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from thoughtdesk.core.settings import registry, saved
from thoughtdesk.core.settings.registry import OPTIONS, SettingValueError, find
from thoughtdesk.ui.qt import QByteArray, QSettings
from thoughtdesk.ui.settings.options import QtSettings, load_settings

LIBRARY = '/home/dr ng/Ward 7, ICU; "night"/Überweisung.thoughtdesk'
#: One value for each declared option (a family: two of its members), written through the registry.
GOOD: dict[str, object] = {
    registry.USER_NAME.key: 'Ng, Dr. "Ward 7"',
    registry.LIBRARY_PATH.key: LIBRARY,
    registry.OFFLINE.key: True,
    registry.MAX_RESPONSE_MB.key: 128,
    registry.LOCAL_MODEL_PATH.key: "  /models/qwen, q4.gguf  ",
    registry.LOCAL_EFFORT.key: "high",
    registry.OPENAI_ENABLED.key: True,
    registry.OPENAI_BASE_URL.key: "http://127.0.0.1:8080/v1",
    registry.OPENAI_EFFORT.key: "",
    registry.ANTHROPIC_ENABLED.key: False,
    registry.ANTHROPIC_BASE_URL.key: "https://api.anthropic.com",
    registry.ANTHROPIC_EFFORT.key: "max",
    registry.FIRST_RUN_DONE.key: True,
    registry.MIGRATED_FROM.key: "@native: ~/.config/ThoughtDesk/ThoughtDesk.conf",
    "columns/sampleTable": [150, 0, 90],
    "columns/cotTable": [230],
    registry.WINDOW_GEOMETRY.key: bytes(range(256)),
    registry.LABEL_SET.key: "Errors; types, \\ and tabs\t",
    registry.REVIEW_BLIND.key: False,
    registry.PAIRWISE_BLIND.key: False,
    registry.ACTIVE_QUEUE.at(LIBRARY).key: 7,
    registry.ACTIVE_QUEUE.at("/data/other.thoughtdesk").key: 2147483647,
    registry.EXPORT_FOLDER.key: "C:\\Users\\Ng\\exports",
    registry.EXPORT_FORMAT.key: "dscb",
}
#: Members of the column family written by Qt in the forms an older version (or Qt itself) chose:
#: a list of numbers (``150, 0, 90``), a one-number list (``@Variant(...)``), a text with commas
#: (``"150,0,90"``), a list of texts; and values no option allows.
RAW: dict[str, object] = {
    "columns/ints": [150, 0, 90],
    "columns/oneInt": [5],
    "columns/legacyText": "150,0,90",
    "columns/texts": ["1", "2"],
    "columns/bad": "wide",
    "review/activeQueue/bad": "queue seven",
}
EXPECTED_RAW = {
    "columns/ints": [150, 0, 90],
    "columns/oneInt": [5],
    "columns/legacyText": [150, 0, 90],
    "columns/texts": [1, 2],
}

#: The GUI side, in a fresh process: each key of the file through QtSettings.checked.
_GUI_READER = """
import json, sys
from thoughtdesk.core.settings.registry import SettingValueError, find
from thoughtdesk.ui.qt import QSettings
from thoughtdesk.ui.settings.options import QtSettings

store = QSettings(sys.argv[1], QSettings.Format.IniFormat)
reader = QtSettings(store)
out = {}
for key in store.allKeys():
    try:
        out[key] = ["ok", repr(reader.checked(find(key)))]
    except SettingValueError as error:
        out[key] = ["bad", str(error)]
print(json.dumps(out))
"""


def _core_side(path: Path) -> dict[str, list[str]]:
    file = saved.load(path)
    out: dict[str, list[str]] = {}
    for key in file.values:
        option = find(key)
        assert option is not None, key
        try:
            out[key] = ["ok", repr(file.get(option))]
        except saved.SettingsFileError as error:
            assert isinstance(error.__context__ or error, Exception)
            out[key] = ["bad", str(error).split(": ", 1)[1].split("; correct that line")[0]]
    return out


@pytest.fixture
def written(tmp_path: Path) -> Path:
    path = tmp_path / "ThoughtDesk" / "ThoughtDesk.ini"
    store = QSettings(str(path), QSettings.Format.IniFormat)
    writer = QtSettings(store)
    for key, value in GOOD.items():
        option = find(key)
        assert option is not None, key
        writer.set(option, value)
    for key, value in RAW.items():
        store.setValue(key, value)  # as Qt writes these types itself
    store.sync()
    assert store.status() == QSettings.Status.NoError
    return path


def test_every_declared_option_is_in_the_file(written: Path) -> None:
    text = written.read_text(encoding="utf-8")
    for option in OPTIONS.values():
        assert any(key.startswith(option.key) for key in GOOD) and option.key.split("/")[0] in text
    # Qt's own forms are all there: a list, a one-number list, quoted text, booleans, bytes.
    for form in ("150, 0, 90", "@Variant(", '"150,0,90"', "=true", "=false", "@ByteArray(", "=128"):
        assert form in text, form


def test_core_and_a_restarted_gui_read_the_same_values(written: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _GUI_READER, str(written)], capture_output=True, text=True, timeout=120, check=True
    )
    gui = json.loads(done.stdout)
    core = _core_side(written)
    assert gui == core
    expected = {key: ["ok", repr(value)] for key, value in GOOD.items()}
    expected.update({key: ["ok", repr(value)] for key, value in EXPECTED_RAW.items()})
    assert {key: value for key, value in core.items() if value[0] == "ok"} == expected
    assert {key for key, value in core.items() if value[0] == "bad"} == {"columns/bad", "review/activeQueue/bad"}


def test_the_writing_gui_reads_the_same_values_from_its_cache(written: Path) -> None:
    reader = QtSettings(QSettings(str(written), QSettings.Format.IniFormat))
    for key, value in {**GOOD, **EXPECTED_RAW}.items():
        option = find(key)
        assert option is not None
        assert reader.get(option) == value == saved.load(written).get(option), key


def test_a_bad_value_is_the_default_in_the_gui_and_the_log_says_where(written: Path, caplog) -> None:
    with written.open("a", encoding="utf-8") as stream:
        stream.write("[network]\noffline=maybe\n")  # a hand edit, after the app wrote the file
    line = len(written.read_text(encoding="utf-8").splitlines())
    store = QSettings(str(written), QSettings.Format.IniFormat)
    with caplog.at_level(logging.WARNING):
        assert load_settings(store).offline is False
    assert f"{written}, line {line}: network/offline is 'maybe', not true or false" in caplog.text
    with pytest.raises(saved.SettingsFileError, match=f"line {line}: network/offline is 'maybe'"):
        saved.load(written).get(registry.OFFLINE)
    with pytest.raises(SettingValueError):
        QtSettings(store).set(registry.MAX_RESPONSE_MB, 0)  # nothing the option forbids is written


def test_a_list_where_text_belongs_is_bad_on_both_sides(tmp_path: Path) -> None:
    """Qt writes a list as ``a, b`` and reads it back as a list, so a text setting holding one
    (or a hand-edited path with unquoted commas) is bad for the GUI; core must say the same."""
    path = tmp_path / "ThoughtDesk.ini"
    store = QSettings(str(path), QSettings.Format.IniFormat)
    store.setValue(registry.EXPORT_FOLDER.key, ["/data/ward 7", "icu"])
    store.setValue(registry.LABEL_SET.key, "/data/ward 7, icu")  # text: quoted by Qt
    store.sync()
    done = subprocess.run(
        [sys.executable, "-c", _GUI_READER, str(path)], capture_output=True, text=True, timeout=120, check=True
    )
    gui = json.loads(done.stdout)
    assert gui == _core_side(path)
    assert gui[registry.EXPORT_FOLDER.key][0] == "bad"
    assert gui[registry.LABEL_SET.key] == ["ok", repr("/data/ward 7, icu")]


#: Values Qt writes in each of its INI forms; the core reader must read what a fresh QSettings does.
TRICKY: list[object] = [
    "plain",
    "",
    "  leading and trailing spaces  ",
    "a,b",
    "a, b; c",
    'say "hi" \\ back',
    "@at the start",
    "@@two ats",
    "tab\there\nnewline\r\x01\x7f",
    "Überweisung/ärztliche Befunde/μ ✓ 😀",
    "0x41 \\x41 \\101",
    "=equals=",
    "#not a comment",
    "[not a section]",
    ["x", "y, z", "w"],
    ["", "", ""],
    ["@a", "@@b", " c "],
    ["only"],
    [],
    [1, 2, 3],
    [5],
    ["mixed", 1],
    True,
    False,
    0,
    -17,
    2**40,
    1.5,
    b"\x00\x01binary\xff",
    {"k": 1, "list": ["a"]},
    None,
]

_RAW_READER = """
import json, sys
from thoughtdesk.ui.qt import QByteArray, QSettings

store = QSettings(sys.argv[1], QSettings.Format.IniFormat)
out = {}
for key in store.allKeys():
    value = store.value(key)
    out[key] = repr(bytes(value.data()) if isinstance(value, QByteArray) else value)
print(json.dumps(out))
"""


def test_the_core_reader_reads_every_form_qt_writes(tmp_path: Path) -> None:
    from thoughtdesk.core.settings.ini import read_ini

    path = tmp_path / "ThoughtDesk.ini"
    store = QSettings(str(path), QSettings.Format.IniFormat)
    for number, value in enumerate(TRICKY):  # bytes as the app gives them: a QByteArray (@ByteArray)
        store.setValue(f"probe/value{number}", QByteArray(value) if isinstance(value, bytes) else value)
    store.setValue("General/grouped", "a group called General")
    store.setValue("top level", "no group")
    store.sync()
    done = subprocess.run(
        [sys.executable, "-c", _RAW_READER, str(path)], capture_output=True, text=True, timeout=120, check=True
    )
    qt = json.loads(done.stdout)
    core = {key: repr(value.raw) for key, value in read_ini(path).items()}
    assert core == qt


def test_every_field_the_settings_dialog_edits_is_a_declared_option() -> None:
    from dataclasses import fields

    from thoughtdesk.ui.settings import options

    assert [f.name for f in fields(options.AppSettings)] == list(options.FIELDS)
    for field in fields(options.AppSettings):
        assert field.default == options.FIELDS[field.name].default
