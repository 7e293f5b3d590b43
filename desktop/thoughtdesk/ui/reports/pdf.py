"""The review report as a PDF, drawn with Qt's own printing (QTextDocument onto a QPdfWriter):
no browser, no network.

The HTML comes from the one generator in ``core/reports`` (:func:`report_parts`). Each part
(the summary, then one per sample) is laid out as a document of its own and drawn from a new
page: a part's layout stays small whatever the collection's size, progress and Cancel work
between parts, and each sample starts on its own page, as ``page-break-before`` asks in the
HTML file. A page number is drawn under every page.

Works without a display (``QT_QPA_PLATFORM=offscreen``) and off the GUI thread: a
QTextDocument and a QPainter on a QPdfWriter need no widget. The file is written beside the
target and renamed into place at the end, so the target never holds half a report.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from thoughtdesk.core.files import PART_SUFFIX, ExportTargetError, check_export_target, remove_stale_parts
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.reports import ReportOptions, ReportScope, part_document, report_parts
from thoughtdesk.core.reports.content import CancelCheck, Progress
from thoughtdesk.ui.qt import (
    QFont,
    QGuiApplication,
    QMarginsF,
    QPageLayout,
    QPageSize,
    QPainter,
    QPdfWriter,
    QRectF,
    QSizeF,
    Qt,
    QTextDocument,
    QTextOption,
)

#: Dots per inch of the PDF's coordinate system (text is vector; this only sets the units).
RESOLUTION = 300
MARGIN_MM = 15.0
#: Height of the page-number line under each page, in points.
FOOTER_PT = 14.0

_APPLICATION: list[QGuiApplication] = []


def ensure_gui_application() -> None:
    """A QGuiApplication for fonts, created if there is none (the command line): offscreen when
    there is no display, so ``thoughtdesk report --pdf`` works over SSH and in CI."""
    if QGuiApplication.instance() is not None:
        return
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")) and sys.platform.startswith("linux"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    # Kept for the process: the application must outlive every document drawn with it.
    _APPLICATION.append(QGuiApplication(["thoughtdesk"]))


class _PdfPages:
    """Draws documents onto a PdfWriter, each from a new page; counts pages."""

    def __init__(self, path: Path, title: str) -> None:
        self.writer = QPdfWriter(str(path))
        self.writer.setTitle(title)
        self.writer.setCreator("ThoughtDesk")
        self.writer.setResolution(RESOLUTION)
        self.writer.setPageLayout(
            QPageLayout(
                QPageSize(QPageSize.PageSizeId.A4),
                QPageLayout.Orientation.Portrait,
                QMarginsF(MARGIN_MM, MARGIN_MM, MARGIN_MM, MARGIN_MM),
                QPageLayout.Unit.Millimeter,
            )
        )
        self.title = title
        self.pages = 0
        self.painter = QPainter()
        if not self.painter.begin(self.writer):
            raise ExportTargetError(f"{path} could not be opened for writing a PDF; choose another folder")
        area = self.writer.pageLayout().paintRectPixels(RESOLUTION)
        self.footer = FOOTER_PT * RESOLUTION / 72.0
        self.width = float(area.width())
        self.height = float(area.height()) - self.footer
        self.footer_font = QFont("DejaVu Sans")
        self.footer_font.setPointSizeF(8.0)

    def draw(self, html: str) -> None:
        """Lay out one part and draw its pages, starting on a new page."""
        document = QTextDocument()
        # Measured on the writer, so that point sizes mean points on paper.
        document.documentLayout().setPaintDevice(self.writer)
        option = QTextOption()
        option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)  # a 20,000-letter "word" too
        document.setDefaultTextOption(option)
        document.setPageSize(QSizeF(self.width, self.height))
        document.setHtml(html)
        for page in range(document.pageCount()):
            if self.pages:
                self.writer.newPage()
            self.pages += 1
            top = page * self.height
            self.painter.save()
            self.painter.translate(0, -top)
            document.drawContents(self.painter, QRectF(0, top, self.width, self.height))
            self.painter.restore()
            self._footer()

    def _footer(self) -> None:
        self.painter.save()
        self.painter.setFont(self.footer_font)
        self.painter.setPen(Qt.GlobalColor.darkGray)
        box = QRectF(0, self.height, self.width, self.footer)
        self.painter.drawText(
            box, int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignBottom), f"page {self.pages}"
        )
        self.painter.restore()

    def close(self) -> None:
        if self.painter.isActive():
            self.painter.end()


def write_pdf_report(
    lib: Library,
    scope: ReportScope,
    path: str | Path,
    options: ReportOptions | None = None,
    *,
    force: bool = False,
    progress: Progress | None = None,
    cancel: CancelCheck | None = None,
) -> int:
    """Write the report of ``scope`` as a PDF to ``path``; returns the number of pages.

    ``force`` replaces an existing file that is not an earlier export (a PDF ThoughtDesk wrote) (never the
    library). ``cancel()`` is checked between samples; a cancelled or failed report leaves no
    file behind.
    """
    target = Path(path).expanduser()
    target = check_export_target(target, libraries=[lib.path], force=force)
    report = report_parts(lib, scope, options, progress=progress, cancel=cancel)
    remove_stale_parts(target.parent)
    part = target.with_name(target.name + PART_SUFFIX)
    pages = _PdfPages(part, report.title)
    try:
        for html in report.parts:
            pages.draw(part_document(report.title, html))
        pages.close()
        os.replace(part, target)
    except OSError as error:
        pages.close()
        part.unlink(missing_ok=True)
        raise ExportTargetError(
            f"{target} could not be written ({error.strerror or error}); nothing was written under that name"
        ) from None
    except BaseException:
        pages.close()
        part.unlink(missing_ok=True)
        raise
    return pages.pages
