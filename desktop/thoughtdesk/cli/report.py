"""``thoughtdesk report COLLECTION [--queue NAME] [--author NAME] --html OUT | --pdf OUT``.

A review report for a colleague without ThoughtDesk: the HTML is made in core; the PDF with
Qt's own printing (``ui/reports/pdf.py``, the one module of the GUI's package this command
uses: no window, offscreen when there is no display).
"""

from __future__ import annotations

import argparse
import json

from thoughtdesk.cli.commands import add_command
from thoughtdesk.cli.common import EXIT_OK, ProgressLine, open_library, whole


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "report",
        description="A self-contained review report: a summary page (counts, label frequencies, agreement "
        "between reviewers, accuracy per model), then every sample with its CoTs, reviews and critiques.",
    )
    p.add_argument("collection", help="the collection's name")
    p.add_argument("--queue", metavar="NAME", help="only the samples of this review queue, in its order")
    p.add_argument("--author", metavar="NAME", help="only this reviewer's reviews (default: every reviewer's)")
    out = p.add_mutually_exclusive_group(required=True)
    out.add_argument("--html", metavar="OUT", help="write a self-contained HTML file")
    out.add_argument("--pdf", metavar="OUT", help="write a PDF")
    p.add_argument(
        "--max-chars",
        type=whole(1000),
        default=None,
        metavar="N",
        help="cut every text after N characters, with a note (default: 20000)",
    )
    p.add_argument("--force", action="store_true", help="replace an existing file that is not a report")
    p.add_argument("--json", action="store_true", help="print what was written as one JSON object")
    p.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    from thoughtdesk.core.reports import ReportOptions, ReportScope, write_html_report

    scope = ReportScope(args.collection, queue=args.queue, author=args.author)
    options = ReportOptions() if args.max_chars is None else ReportOptions(max_text_chars=args.max_chars)
    progress = ProgressLine("report")
    with open_library(args, create=False) as lib:
        if args.html:
            samples = write_html_report(lib, scope, args.html, options, force=args.force, progress=progress)
            progress.finish()
            if args.json:
                print(
                    json.dumps({"collection": args.collection, "format": "html", "samples": samples, "path": args.html})
                )
            else:
                print(f"review report of {samples} sample(s) written to {args.html}")
            return EXIT_OK
        from thoughtdesk.ui.reports.pdf import ensure_gui_application, write_pdf_report

        ensure_gui_application()
        pages = write_pdf_report(lib, scope, args.pdf, options, force=args.force, progress=progress)
    progress.finish()
    if args.json:
        print(json.dumps({"collection": args.collection, "format": "pdf", "pages": pages, "path": args.pdf}))
    else:
        print(f"review report ({pages} page(s)) written to {args.pdf}")
    return EXIT_OK
