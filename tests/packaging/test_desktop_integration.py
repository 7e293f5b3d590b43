"""Desktop integration in resources/: the desktop entry, the library file's MIME type, the
AppStream metadata, the SVG icon and the .ico/.icns made from it; well-formed and consistent."""

from __future__ import annotations

import configparser
import shutil
import struct
import subprocess
import tomllib
import xml.etree.ElementTree as ET

import pytest

from tests.helpers.paths import ROOT
from thoughtdesk.core.paths import resource_path


class DesktopEntryParser(configparser.ConfigParser):
    """Keys are case-sensitive in desktop entries (ConfigParser lower-cases them)."""

    def __init__(self) -> None:
        super().__init__(interpolation=None, strict=True)

    def optionxform(self, optionstr: str) -> str:
        return optionstr


def test_desktop_entry_is_complete_and_points_at_the_installed_command() -> None:
    entry = desktop_entry()
    assert entry["Type"] == "Application" and entry["Name"] == "ThoughtDesk"
    assert entry["Terminal"] == "false" and entry["Categories"].endswith(";")
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert entry["Exec"].split()[0] in scripts and entry["TryExec"] in scripts
    # A library opened from the file manager reaches `thoughtdesk gui FILE` (one file: %f).
    assert entry["Exec"].split()[1:] == ["gui", "%f"]
    # Icon= is a theme name: the SVG installed as <name>.svg (packaging/README.md).
    assert resource_path(entry["Icon"] + ".svg").exists()
    assert entry["StartupWMClass"] == "ThoughtDesk"  # the QApplication's name (ui/app.py)


def test_icon_renders_at_every_size(qapp) -> None:
    from thoughtdesk.ui.app.about import app_icon

    icon = app_icon()
    assert not icon.isNull()
    for size in (16, 48, 256):
        image = icon.pixmap(size, size).toImage()
        assert (image.width(), image.height()) == (size, size)
        colours = {image.pixel(x, y) for x in range(size) for y in range(size)}
        assert len(colours) > 3, f"the {size} px icon is blank"  # drawn, not an empty pixmap


MIME = "{http://www.freedesktop.org/standards/shared-mime-info}"


def desktop_entry() -> configparser.SectionProxy:
    parser = DesktopEntryParser()
    parser.read_string(resource_path("thoughtdesk.desktop").read_text(encoding="utf-8"))
    return parser["Desktop Entry"]


def test_the_library_file_has_a_mime_type_the_entry_opens() -> None:
    root = ET.parse(resource_path("thoughtdesk-mime.xml")).getroot()
    (mime,) = root.findall(f"{MIME}mime-type")
    assert f"{mime.get('type')};" == desktop_entry()["MimeType"]
    assert [g.get("pattern") for g in mime.findall(f"{MIME}glob")] == ["*.thoughtdesk"]
    parent = mime.find(f"{MIME}sub-class-of")
    assert parent is not None and parent.get("type") == "application/vnd.sqlite3"


def test_the_mime_type_installs_into_a_mime_database(tmp_path) -> None:
    tool = shutil.which("update-mime-database")
    if tool is None:
        pytest.skip("update-mime-database (shared-mime-info) is not installed")
    packages = tmp_path / "mime" / "packages"
    packages.mkdir(parents=True)
    shutil.copy(resource_path("thoughtdesk-mime.xml"), packages / "thoughtdesk.xml")
    subprocess.run([tool, str(tmp_path / "mime")], check=True, capture_output=True, timeout=60)
    globs = (tmp_path / "mime" / "globs2").read_text(encoding="utf-8")
    assert "application/x-thoughtdesk-library:*.thoughtdesk" in globs


def test_appstream_metadata_names_the_entry_the_command_and_the_mime_type() -> None:
    root = ET.parse(resource_path("thoughtdesk.metainfo.xml")).getroot()
    assert root.get("type") == "desktop-application"
    assert root.findtext("launchable") == "thoughtdesk.desktop"
    assert root.findtext("provides/binary") == "thoughtdesk"
    assert root.findtext("provides/mediatype") == desktop_entry()["MimeType"].rstrip(";")
    licence = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["license"]
    assert root.findtext("project_license") == licence
    tool = shutil.which("appstreamcli")
    if tool is not None:  # the reference validator, where installed (no network)
        run = subprocess.run(
            [tool, "validate", "--no-net", str(resource_path("thoughtdesk.metainfo.xml"))],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 0, run.stdout + run.stderr


def test_the_application_names_its_desktop_entry(qapp) -> None:
    from thoughtdesk.ui.app.startup import make_application

    app = make_application()
    assert app.desktopFileName() + ".desktop" == "thoughtdesk.desktop"
    assert resource_path(app.desktopFileName() + ".desktop").exists()


def test_windows_and_macos_icons_hold_every_size(qapp) -> None:
    from PySide6.QtGui import QImageReader

    ico = resource_path("thoughtdesk.ico").read_bytes()
    reserved, kind, count = struct.unpack_from("<HHH", ico)
    assert (reserved, kind) == (0, 1) and count >= 6
    sides = []
    for index in range(count):
        width, _h, _c, _r, _planes, _bits, size, offset = struct.unpack_from("<BBBBHHII", ico, 6 + 16 * index)
        assert ico[offset : offset + 8] == b"\x89PNG\r\n\x1a\n" and offset + size <= len(ico)
        sides.append(width or 256)
    assert {16, 32, 48, 256} <= set(sides)
    icns = resource_path("thoughtdesk.icns").read_bytes()
    assert icns[:4] == b"icns" and struct.unpack_from(">I", icns, 4)[0] == len(icns)
    for path, wanted in (
        (resource_path("thoughtdesk.ico"), {16, 256}),
        (resource_path("thoughtdesk.icns"), {16, 1024}),
    ):
        reader = QImageReader(str(path))  # Qt's own ico/icns readers agree
        found = set()
        for index in range(reader.imageCount()):
            reader.jumpToImage(index)
            image = reader.read()
            assert not image.isNull() and image.width() == image.height()
            found.add(image.width())
        assert wanted <= found, (path.name, sorted(found))


def test_the_icons_are_made_from_the_svg(tmp_path, qapp) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_icons", ROOT / "packaging" / "make_icons.py")
    assert spec is not None and spec.loader is not None
    make_icons = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_icons)
    ico, icns = make_icons.make_icons(ico=tmp_path / "t.ico", icns=tmp_path / "t.icns")
    # The committed files have the same layout as freshly made ones (sizes, entry types).
    assert ico.read_bytes()[:6] == resource_path("thoughtdesk.ico").read_bytes()[:6]
    fresh, committed = icns.read_bytes(), resource_path("thoughtdesk.icns").read_bytes()
    assert fresh[8:12] == committed[8:12] == b"icp4"


def test_licence_file_and_pep_639_metadata() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text
