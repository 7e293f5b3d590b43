"""Review reports of 500 samples x 3 CoTs: the HTML file and the PDF, against a baseline of
writing the same texts (questions, choices, CoTs, comments) escaped into a file.

Run on demand: ``python tests/benchmarks/bench_report.py [--samples 500] [--cots 3]``.
The library has a review by two reviewers on every third sample (labels, a span, a comment) and
a critique on every fifth CoT, so every part of a report is drawn. The table prints seconds,
samples per second and the ratio to the baseline measured in the same run.

No fixed target (issue 17 asks for none): the figures show where the time goes (the summary's
evaluation, the sentence alignment per sample, Qt's layout of each part for the PDF).
"""

from __future__ import annotations

import argparse
import html
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "desktop"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from thoughtdesk.core.critiques import (  # noqa: E402 - after the environment is set
    ELEMENTS,
    Critique,
    ElementOutcome,
    ParsedCritique,
    add_critique,
)
from thoughtdesk.core.importing.importer import import_records  # noqa: E402 - after the environment is set
from thoughtdesk.core.library.records import Answer, GeneratedCot, Sample  # noqa: E402 - after the environment is set
from thoughtdesk.core.library.store import Library  # noqa: E402 - after the environment is set
from thoughtdesk.core.reports import ReportScope, write_html_report  # noqa: E402 - after the environment is set
from thoughtdesk.core.review import AnnotationStore  # noqa: E402 - after the environment is set
from thoughtdesk.ui.reports.pdf import ensure_gui_application, write_pdf_report  # noqa: E402 - after the environment is set

SENTENCES = [
    "The patient presents with chest pain radiating to the left arm.",
    "An ECG is the first test, because ST elevation changes the management at once.",
    "Troponin is measured as well, but its result takes hours.",
    "Aspirin is given unless there is an allergy or active bleeding.",
    "A chest X-ray does not rule out a myocardial infarction.",
    "So the next step is the ECG, option A.",
    "Other options delay the diagnosis and are therefore wrong.",
    "Guidelines recommend reperfusion within 90 minutes of first contact.",
]


def cot_text(sample: int, cot: int) -> str:
    """About 12 sentences; CoTs of one sample share some sentences (similarity groups)."""
    picked = [SENTENCES[(sample + cot * 3 + k) % len(SENTENCES)] for k in range(12)]
    return " ".join(f"{s} (step {k + 1} of CoT {cot + 1})" if k % 4 == 3 else s for k, s in enumerate(picked))


def build(path: Path, n_samples: int, n_cots: int) -> Library:
    lib = Library.open(path)
    records = []
    for s in range(n_samples):
        cots = [
            GeneratedCot(
                id=f"s{s}-c{c}",
                cot=cot_text(s, c),
                model=f"model-{c}",
                answers=[Answer(id="a", answer="A" if (s + c) % 3 else "B", correct_answer=bool((s + c) % 3))],
            )
            for c in range(n_cots)
        ]
        sample = Sample(
            id=f"s{s}",
            question=f"Question {s}: a 54-year-old with chest pain. What is the next step?",
            choices=["ECG", "Chest X-ray", "CT angiography", "Discharge"],
            answer=["ECG"],
            cot=[SENTENCES[0], SENTENCES[1], SENTENCES[5]],
            generated_cot=cots,
        )
        records.append(("med_qa", "test", sample, ""))
    import_records(lib, records, collection="bench")
    cot_pks = [r[0] for r in lib.conn.execute("SELECT id FROM generated_cot ORDER BY id")]
    parsed = ParsedCritique(
        "The answer skips the ECG", "missing_information", "Check first tests.", "Order an ECG.", 3.0,
        {e: ElementOutcome("parsed") for e in ELEMENTS},
    )  # fmt: skip
    for author in ("ann", "bob"):
        store = AnnotationStore(lib, author)
        for index in range(0, len(cot_pks), 3 * n_cots):
            cot = cot_pks[index]
            store.toggle_label(cot, "Incorrect reasoning")
            store.toggle_label(cot, "Hallucinated fact", store.span(cot, 0, 20))
            store.set_comment(cot, f"{author}: the ECG should come first <b>here</b>.")
    with lib.transaction() as conn:
        for cot in cot_pks[::5]:
            add_critique(conn, Critique(cot, "critic", "raw", parsed))
    return lib


def baseline(lib: Library, path: Path) -> None:
    """The texts a report shows, html-escaped into a file: the floor of any report."""
    with path.open("w", encoding="utf-8") as out:
        for question, choices in lib.conn.execute("SELECT question, choices FROM sample ORDER BY id"):
            out.write(f"<p>{html.escape(question)}</p><p>{html.escape(choices)}</p>\n")
        for (text,) in lib.conn.execute("SELECT cot FROM generated_cot ORDER BY id"):
            out.write(f"<p>{html.escape(text)}</p>\n")
        for (text,) in lib.conn.execute("SELECT value FROM annotation WHERE key = 'comment'"):
            out.write(f"<p>{html.escape(text)}</p>\n")


def timed(fn) -> tuple[float, float]:
    """Wall-clock and CPU seconds of ``fn()`` (CPU time tells more on a busy machine)."""
    start, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - start, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--cots", type=int, default=3)
    args = parser.parse_args()
    ensure_gui_application()
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        started = time.perf_counter()
        lib = build(folder / "bench.sqlite", args.samples, args.cots)
        print(f"library: {args.samples} samples x {args.cots} CoTs built in {time.perf_counter() - started:.1f} s")
        scope = ReportScope("bench")
        # The summary's accuracy table imports scipy.stats on first use (once per process, also
        # in the app); measured apart so that the rows compare the reports themselves.
        warm = timed(lambda: __import__("scipy.stats"))
        print(f"first import of scipy.stats: {warm[0]:.2f} s wall, {warm[1]:.2f} s CPU (not in the rows below)")
        base = timed(lambda: baseline(lib, folder / "baseline.html"))
        pages: list[int] = []
        rows = [
            ("escaped texts into a file (baseline)", base, folder / "baseline.html"),
            ("HTML report", timed(lambda: write_html_report(lib, scope, folder / "r.html")), folder / "r.html"),
            (
                "PDF report",
                timed(lambda: pages.append(write_pdf_report(lib, scope, folder / "r.pdf"))),
                folder / "r.pdf",
            ),
        ]
        header = f"{'what':38} {'wall s':>8} {'CPU s':>8} {'samples/s':>10} {'x baseline (CPU)':>17} {'size':>10}"
        print(header)
        for name, (wall, cpu), path in rows:
            size = path.stat().st_size
            rate = args.samples / wall if wall else float("inf")
            ratio = cpu / base[1] if base[1] else float("inf")
            print(f"{name:38} {wall:8.3f} {cpu:8.3f} {rate:10.1f} {ratio:17.1f} {size / 1e6:8.2f} MB")
        print(f"PDF pages: {pages[0]}")
        lib.close()


if __name__ == "__main__":
    main()
