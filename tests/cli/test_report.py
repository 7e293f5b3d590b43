"""``thoughtdesk report``: HTML and PDF (as a real process without a display: drawn offscreen),
the queue and author options, and one-line errors."""

from __future__ import annotations

import json
import os

from tests.core.reports.conftest import seed_reports
from tests.core.review.conftest import COLLECTION
from tests.helpers.cli import run_cli, run_cli_process
from tests.ui.reports.test_pdf import page_objects


def run(library, *args):
    return run_cli(*args, library=library)


def test_report_command_writes_html_and_pdf(tmp_path):
    seeded = seed_reports(tmp_path / "lib.thoughtdesk")
    out = run(
        seeded.path, "report", COLLECTION, "--queue", "first two", "--author", "bob", "--html", tmp_path / "q.html"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"review report of 2 sample(s) written to {tmp_path / 'q.html'}"
    html = (tmp_path / "q.html").read_text(encoding="utf-8")
    assert "reviews by &#x27;bob&#x27; only" in html and "<script" not in html
    out = run(seeded.path, "report", COLLECTION, "--queue", "first two", "--html", tmp_path / "q.html", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {
        "collection": COLLECTION,
        "format": "html",
        "samples": 2,
        "path": str(tmp_path / "q.html"),
    }

    # No display at all: the PDF is drawn offscreen.
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    out = run_cli_process("report", COLLECTION, "--pdf", tmp_path / "all.pdf", library=seeded.path, env=env)
    assert out.returncode == 0, out.stderr
    pages = page_objects(tmp_path / "all.pdf")
    assert out.stdout.strip() == f"review report ({pages} page(s)) written to {tmp_path / 'all.pdf'}"
    assert pages >= 7  # the summary and six samples


def test_report_command_errors_are_one_line(tmp_path):
    seeded = seed_reports(tmp_path / "lib.thoughtdesk")
    out = run(seeded.path, "report", COLLECTION, "--queue", "nope", "--html", tmp_path / "x.html")
    assert out.returncode == 1 and out.stderr.count("\n") == 1
    assert "no review queue named 'nope'" in out.stderr and not (tmp_path / "x.html").exists()
    (tmp_path / "notes.txt").write_text("mine")
    out = run(seeded.path, "report", COLLECTION, "--html", tmp_path / "notes.txt")
    assert out.returncode == 1 and "--force" in out.stderr and (tmp_path / "notes.txt").read_text() == "mine"
    out = run(seeded.path, "report", COLLECTION)
    assert out.returncode == 2 and "one of the arguments --html --pdf is required" in out.stderr
