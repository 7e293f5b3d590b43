"""The PDF, drawn with Qt's printing: the expected page count, hostile text, a bounded size
for a 1 MB word, no file left behind when cancelled."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtGui import QFont, QFontInfo

from tests.core.reports.conftest import Seeded, seed_reports
from tests.core.review.conftest import COLLECTION, sample_pk
from thoughtdesk.core.errors import Cancelled
from thoughtdesk.core.files import ExportTargetError, export_kind
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.reports import ReportOptions, ReportScope
from thoughtdesk.ui.reports.pdf import write_pdf_report

# QtPdf (QPdfDocument) is not in PySide6-Essentials: count the page objects instead.
_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def page_objects(path: Path) -> int:
    return len(_PAGE.findall(path.read_bytes()))


@pytest.fixture
def seeded(tmp_path: Path) -> Seeded:
    return seed_reports(tmp_path / "reports.thoughtdesk")


def test_short_samples_take_one_page_each_after_the_summary(qapp, seeded, tmp_path):
    out = tmp_path / "report.pdf"
    with Library.open(seeded.path) as lib:
        chosen = tuple(sample_pk(lib, s) for s in ("mq-2", "mq-3", "mq-5"))
        pages = write_pdf_report(lib, ReportScope(COLLECTION, sample_pks=chosen), out)
    assert out.read_bytes().startswith(b"%PDF-")
    assert pages == 1 + 3 == page_objects(out)
    assert export_kind(out) == "PDF report"  # replaced again without --force; another PDF is not
    other = tmp_path / "paper.pdf"
    other.write_bytes(b"%PDF-1.7\n1 0 obj << /Creator (LaTeX) >> endobj\n")
    with Library.open(seeded.path) as lib, pytest.raises(ExportTargetError, match="not an earlier export"):
        write_pdf_report(lib, ReportScope(COLLECTION, sample_pks=chosen), other)
    assert b"LaTeX" in other.read_bytes()


def test_hostile_text_makes_a_pdf_of_bounded_size(qapp, seeded, tmp_path):
    out = tmp_path / "report.pdf"
    with Library.open(seeded.path) as lib:
        pages = write_pdf_report(lib, ReportScope(COLLECTION, sample_pks=(sample_pk(lib, "mq-4"),)), out)
        small = write_pdf_report(
            lib,
            ReportScope(COLLECTION, sample_pks=(sample_pk(lib, "mq-4"),)),
            tmp_path / "small.pdf",
            ReportOptions(max_text_chars=1000),
        )
    assert pages == page_objects(out)
    # The 1 MB word is cut at 20,000 characters (CoT and critique): a few pages each, not hundreds.
    # Exactly 12 pages: the summary's one, then the sample's 11 (two cuts of 20,000 letters at
    # 10 pt, about 4.5 pages each, and the rest of the sample); with a 1,000-character cut, 1 + 2.
    # How many lines 20,000 letters take depends on the font's widths, so the exact figures hold
    # for the font the report asks for first, DejaVu Sans (CI installs fonts-dejavu-core); with
    # another font the count is only bounded.
    if QFontInfo(QFont("DejaVu Sans")).family() == "DejaVu Sans":
        assert (pages, small) == (12, 3)
    else:
        assert 3 <= pages <= 30, pages
    assert out.stat().st_size < 2_000_000
    assert small == page_objects(tmp_path / "small.pdf") and small < pages


def test_cancel_and_refusals_leave_no_file(qapp, seeded, tmp_path):
    out = tmp_path / "report.pdf"
    with Library.open(seeded.path) as lib:
        with pytest.raises(Cancelled):
            write_pdf_report(lib, ReportScope(COLLECTION), out, cancel=lambda: True)
        with pytest.raises(ExportTargetError, match="open library"):
            write_pdf_report(lib, ReportScope(COLLECTION), lib.path)
        notes = tmp_path / "notes.txt"
        notes.write_text("mine")
        with pytest.raises(ExportTargetError, match="not an earlier export"):
            write_pdf_report(lib, ReportScope(COLLECTION), notes)
        write_pdf_report(lib, ReportScope(COLLECTION, queue="first two"), out)
        assert page_objects(out) >= 3
        write_pdf_report(lib, ReportScope(COLLECTION, queue="first two"), out)  # a PDF: replaced
    assert notes.read_text() == "mine"
    assert not list(tmp_path.glob("*.part"))
