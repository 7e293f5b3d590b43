"""Make the Windows .ico and the macOS .icns from resources/thoughtdesk.svg.

    QT_QPA_PLATFORM=offscreen python packaging/make_icons.py        (writes resources/thoughtdesk.ico, .icns)
    python packaging/make_icons.py --check                           (fails if they are older than the SVG)

The SVG is drawn with Qt's SVG renderer at every size the platforms ask for, each size stored as
PNG: an .ico holds PNG images since Windows Vista, an .icns holds them in its ``ic**``/``icp*``
entries. Both containers are written here (a few lines of ``struct``) rather than through an
image tool, so the output does not depend on what is installed. The files are committed: the
PyInstaller spec points ``EXE(icon=...)`` at them. Run this after changing the SVG.
"""

from __future__ import annotations

import argparse
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SVG = ROOT / "resources" / "thoughtdesk.svg"
ICO = ROOT / "resources" / "thoughtdesk.ico"
ICNS = ROOT / "resources" / "thoughtdesk.icns"

#: Windows: the sizes Explorer and the taskbar use at 100-200 % scaling.
ICO_SIZES = (16, 20, 24, 32, 40, 48, 64, 128, 256)
#: macOS: (entry type, pixel size), PNG entries of the .icns format.
ICNS_ENTRIES = (
    ("icp4", 16),
    ("icp5", 32),
    ("icp6", 64),
    ("ic07", 128),
    ("ic08", 256),
    ("ic09", 512),
    ("ic10", 1024),  # 512 at 2x
    ("ic11", 32),  # 16 at 2x
    ("ic12", 64),  # 32 at 2x
    ("ic13", 256),  # 128 at 2x
    ("ic14", 512),  # 256 at 2x
)


def render_png(svg: Path, size: int) -> bytes:
    """The SVG drawn at ``size`` x ``size`` pixels (transparent background), as PNG bytes."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice
    from PySide6.QtGui import QColor, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"{svg}: not an SVG Qt can draw")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(QColor(0, 0, 0, 0))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(data.data())


def ico_bytes(images: dict[int, bytes]) -> bytes:
    """An .ico file holding one PNG per size (ICONDIR, then 16-byte entries, then the data)."""
    sizes = sorted(images)
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = len(header) + 16 * len(sizes)
    entries, blobs = b"", b""
    for size in sizes:
        png = images[size]
        side = 0 if size >= 256 else size  # 0 means 256 in an entry
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(png), offset + len(blobs))
        blobs += png
    return header + entries + blobs


def icns_bytes(entries: list[tuple[str, bytes]]) -> bytes:
    """An .icns file: ``icns`` and its length, then each entry's type, length and PNG."""
    body = b"".join(kind.encode("ascii") + struct.pack(">I", 8 + len(png)) + png for kind, png in entries)
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def make_icons(svg: Path = SVG, ico: Path = ICO, icns: Path = ICNS) -> tuple[Path, Path]:
    """Write ``ico`` and ``icns`` drawn from ``svg``; returns their paths."""
    from PySide6.QtGui import QGuiApplication

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # QPainter needs one
    pngs = {size: render_png(svg, size) for size in {*ICO_SIZES, *(size for _kind, size in ICNS_ENTRIES)}}
    ico.write_bytes(ico_bytes({size: pngs[size] for size in ICO_SIZES}))
    icns.write_bytes(icns_bytes([(kind, pngs[size]) for kind, size in ICNS_ENTRIES]))
    return ico, icns


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when an icon is missing or older than the SVG")
    args = parser.parse_args()
    if args.check:
        stale = [p for p in (ICO, ICNS) if not p.exists() or p.stat().st_mtime < SVG.stat().st_mtime]
        for path in stale:
            print(f"{path.relative_to(ROOT)} is missing or older than {SVG.name}: run packaging/make_icons.py")
        return 1 if stale else 0
    for path in make_icons():
        print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
