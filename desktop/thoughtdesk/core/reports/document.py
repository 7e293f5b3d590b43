"""The review report as HTML: one generator for the HTML file and the PDF.

The HTML keeps to what Qt's ``QTextDocument`` renders (headings, paragraphs, tables, ``span``
with ``background-color``, ``br``, ``sup``, ``b``/``i``/``u``, ``page-break-before``), with
inline CSS, no scripts and no external resources, so that the same parts make the
self-contained HTML file (:func:`write_html_report`) and, drawn page by page by
``ui/reports/pdf.py``, the PDF. The only markup is markup written here (:data:`EMITTED_TAGS`);
every character of data goes through :func:`~thoughtdesk.core.reports.escape.text_html`, and
every colour in a style attribute is checked to be ``#rrggbb``.

:func:`report_parts` yields the summary page first, then one part per sample; each sample part
starts on a new page.
"""

from __future__ import annotations

import colorsys
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from thoughtdesk import __version__
from thoughtdesk.core.critiques import Critique
from thoughtdesk.core.evaluation.metrics import AccuracyRow
from thoughtdesk.core.files import check_export_target, export_file
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.reports.content import (
    CancelCheck,
    CotEntry,
    Progress,
    ReportOptions,
    ReportScope,
    ReportSummary,
    SampleEntry,
    build_summary,
    iter_samples,
    resolve_samples,
)
from thoughtdesk.core.reports.escape import escaped, omitted_note, text_html
from thoughtdesk.core.review import Span
from thoughtdesk.core.review.compare.colours import TEXT_COLOUR, group_colours, parse_hex, readable_colour

#: Every tag the report's HTML contains (the hostile-text test holds the output to this set).
EMITTED_TAGS = frozenset(
    {"html", "head", "meta", "title", "body", "h1", "h2", "h3", "h4", "p", "div", "span", "table", "tr", "th", "td"}
    | {"br", "b", "i", "u", "sup"}
)

#: Similarity colours: as many as the Review tab's palette; light backgrounds that print,
#: each with WCAG contrast >= 4.5 against black text.
PALETTE = group_colours(12, "light")
TEXT = TEXT_COLOUR["light"]
_COLOUR = re.compile(r"^#[0-9a-fA-F]{6}$")
_BODY_STYLE = "font-family: 'DejaVu Sans', Arial, sans-serif; font-size: 10pt; color: #000000;"
_TABLE = '<table border="1" cellspacing="0" cellpadding="3" style="border-collapse: collapse; margin: 4px 0px;">'
_MUTED = "color: #444444;"
_TEXT_BLOCK = "white-space: pre-wrap; overflow-wrap: anywhere; word-wrap: break-word; margin: 4px 0px;"


def safe_colour(colour: str) -> str:
    """``colour`` if it is ``#rrggbb``; ``ValueError`` otherwise (no unchecked text in CSS)."""
    if not isinstance(colour, str) or not _COLOUR.match(colour):
        raise ValueError(f"colour must be #rrggbb, got {colour!r}")
    return colour


def mark_colour(colour: str) -> str:
    """A span mark's background for a label of ``colour``: the label's hue, light enough to
    print under black text (WCAG >= 4.5), as the Review tab draws marks in the light theme.
    A colour that is not ``#rrggbb`` (label sets are user data) becomes grey."""
    try:
        red, green, blue = (c / 255.0 for c in parse_hex(colour))
    except (ValueError, TypeError, AttributeError):
        red = green = blue = 0.6
    hue, _lightness, saturation = colorsys.rgb_to_hls(red, green, blue)
    return readable_colour(hue, 0.80, min(saturation, 0.85), TEXT, "light")


def _bg(text_html_: str, colour: str, *, underline: bool = False) -> str:
    extra = " text-decoration: underline;" if underline else ""
    return f'<span style="background-color: {safe_colour(colour)}; color: {TEXT};{extra}">{text_html_}</span>'


def _percent(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{100 * value:.{digits}f} %"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _row(cells: Iterable[str], header: bool = False) -> str:
    tag = "th" if header else "td"
    return "<tr>" + "".join(f"<{tag}>{cell}</{tag}>" for cell in cells) + "</tr>"


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A table; the header cells are our words, the body cells escaped by the caller."""
    return _TABLE + _row((escaped(h) for h in header), header=True) + "".join(_row(r) for r in rows) + "</table>"


# Summary -------------------------------------------------------------------------------------


def summary_html(summary: ReportSummary) -> str:
    """The first page: what the report covers, counts, labels, agreement, accuracy per model."""
    parts = [
        f"<h1>Review report: {escaped(summary.collection)}</h1>",
        f'<p style="{_MUTED}">{escaped(summary.scope)}. Made {escaped(summary.created)} by ThoughtDesk '
        f"{escaped(__version__)}. Texts longer than the report's limit are cut, with a note. "
        "Invisible characters in the data (direction overrides, zero-width and control characters) "
        "are shown as &lt;U+XXXX&gt;.</p>",
        "<h3>Counts</h3>",
        _table(
            ("What", "Number"),
            [
                (escaped(what), str(number))
                for what, number in (
                    ("Samples", summary.samples),
                    ("Generated CoTs", summary.cots),
                    ("Reference CoTs (from the dataset)", summary.reference_cots),
                    ("Reviewed CoTs", summary.reviewed_cots),
                    ("Annotations", summary.annotations),
                    ("CoTs marked preferred", summary.preferred),
                    ("Quality scores", summary.quality_scores),
                    ("Explanation ratings", summary.explanation_ratings),
                    ("Critiques", summary.critiques),
                    ("Critiques rated by a person", summary.rated_critiques),
                    ("Answers", summary.answers),
                    ("Answers with a correctness judgement", summary.scored_answers),
                )
            ],
        ),
        f"<p>Reviewers: {escaped(', '.join(summary.reviewers)) if summary.reviewers else 'none'}</p>",
        "<h3>Label frequencies</h3>",
    ]
    if summary.labels:
        parts.append(
            _table(
                ("Label", "CoTs labelled (per reviewer)", "Span marks", "Reviewers"),
                [
                    (
                        _bg(escaped(count.label), mark_colour(summary.label_colours.get(count.label, "#999999"))),
                        str(count.cots),
                        str(count.spans),
                        str(count.reviewers),
                    )
                    for count in summary.labels
                ],
            )
        )
    else:
        parts.append("<p>No labels were given.</p>")
    parts.append("<h3>Agreement between reviewers</h3>")
    if summary.agreement:
        parts.append(
            f'<p style="{_MUTED}">Labels of every reviewer (also when the report shows one '
            "reviewer's reviews), as Review > Agreement computes them; kappa and alpha from -1 to 1, "
            "'-' where undefined.</p>"
        )
        parts.append(
            _table(
                ("Label", "Reviewers", "CoTs rated by 2+", "Cohen's κ", "Fleiss' κ", "Krippendorff's α", "Agree"),
                [
                    (
                        escaped(row.label),
                        escaped(", ".join(row.raters)),
                        str(row.n_items),
                        _number(row.cohen),
                        _number(row.fleiss),
                        _number(row.alpha),
                        "-" if row.percent_agreement is None else f"{row.percent_agreement:.1f} %",
                    )
                    for row in summary.agreement
                ],
            )
        )
    else:
        parts.append("<p>No CoT was labelled by two or more reviewers.</p>")
    parts.append("<h3>Accuracy per model</h3>")
    if summary.accuracy_by_model:
        parts.append(
            f'<p style="{_MUTED}">Every condition and dataset pooled; 95 % Wilson interval; answers '
            "never judged are scored for this table by ThoughtDesk's extraction (not extractable counts "
            "as not correct); only answers of samples without a gold answer are left out.</p>"
        )
        parts.append(_accuracy_table(summary.accuracy_by_model, detailed=False))
        if len(summary.accuracy_rows) > len(summary.accuracy_by_model):
            parts.append("<h4>Per dataset, split, model and prompt condition</h4>")
            parts.append(_accuracy_table(summary.accuracy_rows, detailed=True))
    else:
        parts.append("<p>No answer in these samples has a correctness judgement.</p>")
    return "".join(parts)


def _accuracy_table(rows: Sequence[AccuracyRow], *, detailed: bool) -> str:
    header = ("Dataset", "Split", "Model", "Condition") if detailed else ("Model",)
    body = []
    for row in rows:
        names = (row.dataset, row.split, row.model, row.condition) if detailed else (row.model,)
        body.append(
            (
                *(escaped(name or "-") for name in names),
                str(row.n),
                str(row.correct),
                _percent(row.accuracy),
                f"{_percent(row.wilson_low)} - {_percent(row.wilson_high)}",
                _percent(row.share_unextractable),
            )
        )
    return _table((*header, "Answers", "Correct", "Accuracy", "95 % interval", "Not extractable"), body)


# Samples -------------------------------------------------------------------------------------


def sample_html(entry: SampleEntry, options: ReportOptions, label_colours: dict[str, str]) -> str:
    """One sample: question, context, choices, gold answer, then each CoT with its reviews."""
    limit = options.max_text_chars
    where = f"{entry.dataset} / {entry.split} / {entry.sample_id}"
    parts = [
        f"<h2>Sample {entry.index} of {entry.total}: {escaped(where)}</h2>",
        f'<p><b>Question</b></p><div style="{_TEXT_BLOCK}">{text_html(entry.question, limit)}</div>',
    ]
    if entry.context.strip():
        parts.append(f'<p><b>Context</b></p><div style="{_TEXT_BLOCK}">{text_html(entry.context, limit)}</div>')
    if entry.choices:
        rows = [(escaped(_letter(i)), text_html(choice, limit)) for i, choice in enumerate(entry.choices)]
        parts.append("<p><b>Choices</b></p>" + _table(("", "Choice"), rows))
    gold = "; ".join(entry.gold) if entry.gold else "(none given)"
    parts.append(f"<p><b>Gold answer:</b> {text_html(gold, limit)}</p>")
    if len(entry.cots) > 1:
        parts.append(
            f'<p style="{_MUTED}">Sentences that say the same thing in different CoTs share a background '
            f"colour (similarity threshold {options.threshold:g} %, as in Review). Span labels are "
            "underlined on their label's colour and numbered.</p>"
        )
    for cot in entry.cots:
        parts.append(cot_html(cot, options, label_colours))
    return "".join(parts)


def _letter(index: int) -> str:
    return chr(ord("A") + index) if index < 26 else str(index + 1)


def cot_html(cot: CotEntry, options: ReportOptions, label_colours: dict[str, str]) -> str:
    """One CoT: heading, answer, reviews (labels, preferred, quality), the highlighted text with
    span labels, comments, ratings and critiques."""
    limit = options.max_text_chars
    heading = cot.title + (f": {cot.model}" if cot.model else "")
    parts = [f"<h3>{escaped(heading)}</h3>"]
    facts = []
    if cot.condition:
        facts.append(f"prompt {escaped(cot.condition)}")
    if cot.pk is not None:
        verdict = {True: "correct", False: "incorrect", None: "not judged"}[cot.correct]
        answer = "(none extracted)" if not cot.answer else cot.answer
        facts.append(f"answer {text_html(answer, limit)} ({verdict})")
    if facts:
        parts.append(f'<p style="{_MUTED}">{" · ".join(facts)}</p>')
    for review in cot.reviews:
        bits = []
        if review.preferred:
            bits.append("<b>preferred</b>")
        if review.quality is not None:
            bits.append(f"quality {review.quality}/5")
        on = [label for label, value in review.labels.items() if value]
        if on:
            bits.append("labels: " + ", ".join(_label_chip(label, label_colours) for label in on))
        if bits:
            parts.append(f"<p>{escaped(review.author)}: {' · '.join(bits)}</p>")
    spans = [(review.author, label, span) for review in cot.reviews for label, span in review.spans]
    shown_spans = [item for item in spans if item[2].start < len(cot.text)]
    parts.append(f'<div style="{_TEXT_BLOCK}">{highlighted_text(cot, shown_spans, label_colours)}</div>')
    if cot.full_length > len(cot.text):
        parts.append(
            f'<p style="{_MUTED}"><i>{escaped(omitted_note(cot.full_length - len(cot.text), cot.full_length))}</i></p>'
        )
    if spans:
        rows = []
        for number, (author, label, span) in enumerate(shown_spans, start=1):
            rows.append(
                (f"[{number}]", _label_chip(label, label_colours), escaped(author), text_html(span.text, limit))
            )
        parts.append("<p><b>Span labels</b></p>" + _table(("", "Label", "Reviewer", "Text"), rows))
        if len(shown_spans) < len(spans):
            parts.append(f"<p>{len(spans) - len(shown_spans)} span label(s) lie in the part of the text not shown.</p>")
    for review in cot.reviews:
        if review.comment.strip():
            parts.append(
                f"<p><b>Comment by {escaped(review.author)}:</b></p>"
                f'<div style="{_TEXT_BLOCK}">{text_html(review.comment, limit)}</div>'
            )
    for rating in cot.ratings:
        score = "no score" if rating.score is None else f"{rating.score}/5"
        flaws = f"; flaws: {escaped(', '.join(rating.dimensions))}" if rating.dimensions else ""
        parts.append(f"<p>{escaped(rating.author)} rated the explanation {score}{flaws}</p>")
    for number, critique in enumerate(cot.critiques, start=1):
        parts.append(critique_html(number, critique, limit))
    return "".join(parts)


def _label_chip(label: str, label_colours: dict[str, str]) -> str:
    return _bg(escaped(label), mark_colour(label_colours.get(label, "#999999")))


def highlighted_text(cot: CotEntry, spans: Sequence[tuple[str, str, Span]], label_colours: dict[str, str]) -> str:
    """The CoT's text: each similarity-grouped sentence on its group's colour; span-labelled
    text underlined on its label's colour, followed by its number ([1], [2]...)."""
    text = cot.text
    size = len(text)
    marks = []  # (start, end, number, label)
    for number, (_author, label, span) in enumerate(spans, start=1):
        start = max(0, min(size, span.start))
        end = max(start, min(size, span.end))
        marks.append((start, end, number, label))
    cuts = {0, size}
    for sentence in cot.sentences:
        cuts.update((min(sentence.start, size), min(sentence.end, size)))
    for start, end, _number, _label in marks:
        cuts.update((start, end))
    points = sorted(cuts)
    sentences = list(zip(cot.sentences, cot.group_of, strict=False))
    parts: list[str] = []
    which = 0
    for start, end in zip(points, points[1:], strict=False):
        while which < len(sentences) and sentences[which][0].end <= start:
            which += 1
        group = None
        if which < len(sentences) and sentences[which][0].start <= start:
            group = sentences[which][1]
        piece = escaped(text[start:end])
        covering = [mark for mark in marks if mark[0] <= start and end <= mark[1] and mark[0] < mark[1]]
        if covering:
            piece = _bg(piece, mark_colour(label_colours.get(covering[0][3], "#999999")), underline=True)
        elif group is not None:
            piece = _bg(piece, PALETTE[group % len(PALETTE)])
        parts.append(piece)
        parts.extend(f"<sup>[{mark[2]}]</sup>" for mark in marks if mark[1] == end)
    if not points[1:]:  # an empty text: nothing to split, but empty spans may still end at 0
        parts.extend(f"<sup>[{mark[2]}]</sup>" for mark in marks)
    return "".join(parts)


def critique_html(number: int, critique: Critique, limit: int) -> str:
    """One critique: model, score, dimension, main flaw, feedback, and how people rated it."""
    parsed = critique.parsed
    score = "score not given" if parsed.explanation_score is None else f"score {parsed.explanation_score:g}/5"
    head = f"Critique {number} by {critique.critique_model or '(unknown model)'}"
    parts = [f"<h4>{escaped(head)}: {score}</h4>"]
    rows = []
    for name, value in (
        ("Flaw dimension", parsed.dimension),
        ("Main flaw", parsed.main_flaw),
        ("General feedback", parsed.general_feedback),
        ("Specific feedback", parsed.specific_feedback),
    ):
        if value:
            rows.append((escaped(name), text_html(value, limit)))
    problems = [
        f"{element}: {outcome.status}" + (f" ({outcome.why})" if outcome.why else "")
        for element, outcome in parsed.outcomes.items()
        if outcome.status == "unparseable"
    ]
    if rows:
        parts.append(_table(("Element", "Text"), rows))
    if not rows or problems:
        if problems:
            parts.append(f'<p style="{_MUTED}">Not readable: {escaped("; ".join(problems))}</p>')
        parts.append(
            f'<p><b>Critique as written</b></p><div style="{_TEXT_BLOCK}">{text_html(critique.raw_text, limit)}</div>'
        )
    for rating in critique.ratings:
        given = "no score" if rating.score is None else f"{rating.score}/3"
        parts.append(f"<p>{escaped(rating.author)} rated this critique {given}</p>")
    return "".join(parts)


# The document --------------------------------------------------------------------------------


def document_head(title: str) -> str:
    """The start of a report document (also of each part drawn into the PDF)."""
    return f'<html><head><meta charset="utf-8"/><title>{escaped(title)}</title></head><body style="{_BODY_STYLE}">'


DOCUMENT_TAIL = "</body></html>\n"


def part_document(title: str, part: str) -> str:
    """One part as a document of its own (the PDF draws each part from its own page)."""
    return document_head(title) + part + DOCUMENT_TAIL


@dataclass(frozen=True, slots=True)
class ReportParts:
    """A report in parts: ``title``, ``samples`` (how many the scope holds) and ``parts``, an
    iterator of HTML fragments, the summary first, then one per sample (read lazily)."""

    title: str
    samples: int
    parts: Iterator[str]


def report_parts(
    lib: Library,
    scope: ReportScope,
    options: ReportOptions | None = None,
    *,
    progress: Progress | None = None,
    cancel: CancelCheck | None = None,
) -> ReportParts:
    """The report of ``scope`` in parts (see :class:`ReportParts`); the summary is computed
    now, each sample when its part is read. ``progress(done, total)`` counts samples."""
    options = options or ReportOptions()
    sample_pks = resolve_samples(lib, scope)
    summary = build_summary(lib, scope, sample_pks)
    title = f"Review report: {scope.collection}"

    def parts() -> Iterator[str]:
        yield summary_html(summary)
        for entry in iter_samples(lib, scope, sample_pks, options, progress=progress, cancel=cancel):
            yield sample_html(entry, options, summary.label_colours)

    return ReportParts(title, len(sample_pks), parts())


def write_html_report(
    lib: Library,
    scope: ReportScope,
    path: str | Path,
    options: ReportOptions | None = None,
    *,
    force: bool = False,
    progress: Progress | None = None,
    cancel: CancelCheck | None = None,
) -> int:
    """Write the self-contained HTML report of ``scope`` to ``path`` (whole or not at all:
    :func:`~thoughtdesk.core.files.export_file`); returns the number of samples in it.
    ``force`` replaces an existing file that is not an earlier export (never the library)."""
    target = check_export_target(path, libraries=[lib.path], force=force)
    report = report_parts(lib, scope, options, progress=progress, cancel=cancel)
    with export_file(target) as out:
        out.write("<!DOCTYPE html>\n" + document_head(report.title) + "\n")
        for number, part in enumerate(report.parts):
            # Each sample from a new page when the file is printed (the PDF draws parts so).
            out.write(part if number == 0 else f'<div style="page-break-before: always;">{part}</div>')
            out.write("\n")
        out.write(DOCUMENT_TAIL)
    return report.samples
