"""The desktop entry and the SVG icon in resources/: well-formed, consistent, and the icon draws."""

from __future__ import annotations

import configparser
import tomllib

from tests.helpers.paths import ROOT
from thoughtdesk.core.paths import resource_path


def test_desktop_entry_is_complete_and_points_at_the_installed_command() -> None:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # keys are case-sensitive in desktop entries
    parser.read_string(resource_path("thoughtdesk.desktop").read_text(encoding="utf-8"))
    entry = parser["Desktop Entry"]
    assert entry["Type"] == "Application" and entry["Name"] == "ThoughtDesk"
    assert entry["Terminal"] == "false" and entry["Categories"].endswith(";")
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert entry["Exec"].split()[0] in scripts and entry["TryExec"] in scripts
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
