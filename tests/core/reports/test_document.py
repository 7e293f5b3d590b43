"""The report's HTML: only our markup (hostile text stays text), the content a colleague needs,
scopes (queue, selection, author) and clear errors."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.core.reports.conftest import BIDI, BIG_WORD, CELL, IMG, SCRIPT, Seeded
from tests.core.review.conftest import COLLECTION, sample_pk
from thoughtdesk.core.errors import Cancelled, LibraryError
from thoughtdesk.core.files import ExportTargetError
from thoughtdesk.core.reports import EMITTED_TAGS, ReportError, ReportOptions, ReportScope, write_html_report
from thoughtdesk.core.reports.content import build_summary, resolve_samples
from thoughtdesk.core.review import agreement_table

ALLOWED_ATTRIBUTES = {"style", "border", "cellspacing", "cellpadding", "charset"}


class Collect(HTMLParser):
    """Every tag and attribute, and the text as a reader sees it (entities decoded)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attributes: set[str] = set()
        self.styles: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        for name, value in attrs:
            self.attributes.add(name)
            if name == "style":
                self.styles.append(value or "")

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        self.tags.add(tag)

    def handle_data(self, data):
        self.text.append(data)


def parse(path: Path) -> tuple[Collect, str]:
    parser = Collect()
    text = path.read_text(encoding="utf-8")
    parser.feed(text)
    parser.close()
    return parser, "".join(parser.text)


def test_hostile_text_never_becomes_markup(report_lib, tmp_path):
    out = tmp_path / "report.html"
    assert write_html_report(report_lib, ReportScope(COLLECTION), out) == 6
    parser, text = parse(out)
    assert parser.tags <= EMITTED_TAGS, parser.tags - EMITTED_TAGS
    assert "script" not in parser.tags and "img" not in parser.tags
    assert parser.attributes <= ALLOWED_ATTRIBUTES, parser.attributes
    # Styles are ours: properties and #rrggbb colours only, nothing from the data.
    assert all("alert" not in style and "<" not in style for style in parser.styles)
    # The hostile strings are there, as text a reader sees.
    assert SCRIPT in text and IMG in text and CELL in text
    raw = out.read_text(encoding="utf-8")
    assert "\u202e" not in raw and BIDI.replace("\u202e", "<U+202E>") in text
    # The 1 MB word is cut (in the CoT and in the critique), with a note.
    assert BIG_WORD not in raw and len(raw) < 300_000
    assert "more characters not shown" in text and "1,000," in text
    # Counted as one table per table we open: a hostile </table> closed none of ours.
    assert raw.count("<table") == raw.count("</table>")


def test_the_report_holds_what_a_colleague_needs(report_lib, seeded: Seeded, tmp_path):
    out = tmp_path / "report.html"
    write_html_report(report_lib, ReportScope(COLLECTION), out)
    _parser, text = parse(out)
    assert "Review report: review" in text
    assert "A 54-year-old with chest pain. Next step?" in text  # question
    assert "Gold answer: a" in text and "Choices" in text
    assert "Ann's comment: the ECG comes first." in text and "Bob's comment: too long." in text
    assert "Incorrect reasoning" in text and "Hallucinated fact" in text  # label and span label
    assert "preferred" in text and "quality 4/5" in text
    assert "Critique 1 by critic-model: score 2/5" in text and "The flaw: ECG skipped" in text
    assert "ann rated this critique 2/3" in text and "bob rated the explanation 3/5" in text
    assert "Reference CoT" in text or "CoT 1" in text
    assert "Sample 6 of 6" in text


def test_summary_counts_labels_agreement_and_accuracy(report_lib):
    scope = ReportScope(COLLECTION)
    summary = build_summary(report_lib, scope, resolve_samples(report_lib, scope))
    assert summary.samples == 6 and summary.reviewers == ["ann", "bob"]
    assert summary.preferred == 1 and summary.quality_scores == 1
    labels = {count.label: count for count in summary.labels}
    # ann said yes on two CoTs, bob on one; spans: ann's Hallucinated fact and Too verbose.
    assert labels["Incorrect reasoning"].cots == 3 and labels["Incorrect reasoning"].reviewers == 2
    assert labels["Hallucinated fact"].spans == 1
    (row,) = [r for r in summary.agreement if r.label == "Incorrect reasoning"]
    assert row.raters == ("ann", "bob") and row.n_items == 3 and row.cohen == pytest.approx(0.4)
    # The whole collection: the same rows as Review > Agreement.
    assert summary.agreement == [r for r in agreement_table(report_lib, COLLECTION) if r.n_items > 0]
    assert summary.critiques == 2
    assert summary.accuracy_by_model and all(r.n > 0 for r in summary.accuracy_by_model)


def test_author_filter_shows_one_reviewers_reviews(report_lib, tmp_path):
    out = tmp_path / "ann.html"
    write_html_report(report_lib, ReportScope(COLLECTION, author="ann"), out)
    _parser, text = parse(out)
    assert "Ann's comment" in text and "Bob's comment" not in text
    assert "bob rated the explanation" not in text
    assert "reviews by 'ann' only" in text


def test_queue_and_selection_scopes(report_lib, tmp_path):
    out = tmp_path / "queue.html"
    assert write_html_report(report_lib, ReportScope(COLLECTION, queue="first two"), out) == 2
    assert "Sample 2 of 2" in parse(out)[1]
    chosen = (sample_pk(report_lib, "mq-2"), sample_pk(report_lib, "mq-1"))
    assert write_html_report(report_lib, ReportScope(COLLECTION, sample_pks=chosen), out) == 2
    text = parse(out)[1]
    assert text.index("A child with fever") < text.index("A 54-year-old")  # the selection's order


def test_a_scope_that_cannot_be_reported_says_why(report_lib, tmp_path):
    with pytest.raises(ReportError, match=r"no review queue named 'nope' \(queues: 'first two'\)"):
        write_html_report(report_lib, ReportScope(COLLECTION, queue="nope"), tmp_path / "x.html")
    with pytest.raises(ReportError, match="not in collection 'review' .first: sample key 99999"):
        write_html_report(report_lib, ReportScope(COLLECTION, sample_pks=(99999,)), tmp_path / "x.html")
    with pytest.raises(LibraryError, match="no collection named 'nope'"):
        write_html_report(report_lib, ReportScope("nope"), tmp_path / "x.html")
    with pytest.raises(ExportTargetError, match="open library"):
        write_html_report(report_lib, ReportScope(COLLECTION), report_lib.path)
    assert not (tmp_path / "x.html").exists()


def test_an_existing_file_is_replaced_only_when_it_is_a_report_or_forced(report_lib, tmp_path):
    out = tmp_path / "notes.txt"
    out.write_text("my notes")
    with pytest.raises(ExportTargetError, match="not an earlier export"):
        write_html_report(report_lib, ReportScope(COLLECTION), out)
    assert out.read_text() == "my notes"
    write_html_report(report_lib, ReportScope(COLLECTION), out, force=True)
    write_html_report(report_lib, ReportScope(COLLECTION), out)  # an earlier report: replaced
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    page = tmp_path / "page.html"  # someone's own web page is no earlier report (it was: any <!doctype html>)
    page.write_text("<!DOCTYPE html>\n<html lang=en><head><title>mine</title></head></html>\n")
    with pytest.raises(ExportTargetError, match="not an earlier export"):
        write_html_report(report_lib, ReportScope(COLLECTION), page)
    assert "mine" in page.read_text()


def test_cancel_leaves_no_file(report_lib, tmp_path):
    out = tmp_path / "report.html"
    seen: list[int] = []
    with pytest.raises(Cancelled):
        write_html_report(
            report_lib,
            ReportScope(COLLECTION),
            out,
            progress=lambda done, total: seen.append(done),
            cancel=lambda: len(seen) >= 2,
        )
    assert seen == [1, 2] and not out.exists() and not list(tmp_path.glob("*.part"))


def test_a_smaller_limit_cuts_sooner(report_lib, tmp_path):
    out = tmp_path / "small.html"
    write_html_report(report_lib, ReportScope(COLLECTION), out, ReportOptions(max_text_chars=1000))
    assert len(out.read_text(encoding="utf-8")) < 80_000


def test_page_one_counts_ratings_as_reviews(tmp_path):
    # Issue 28: a CoT rated only by explanation score, and a critique rated by a person, were
    # not reviews on page 1 ("Reviewed CoTs 0, Reviewers: none") while later pages showed them.
    from tests.core.review.conftest import cot_pks, open_library
    from thoughtdesk.core.critiques import (
        ELEMENTS,
        Critique,
        ElementOutcome,
        ParsedCritique,
        add_critique,
        set_critique_rating,
        set_explanation_rating,
    )

    with open_library(tmp_path / "rated.thoughtdesk") as lib:
        first, second, *_ = cot_pks(lib, "mq-1")
        parsed = ParsedCritique("flaw", None, None, None, 2.0, {e: ElementOutcome("parsed") for e in ELEMENTS})
        with lib.transaction() as conn:
            set_explanation_rating(conn, first, "carol", 4, ())
            critique = add_critique(conn, Critique(second, "critic-model", "raw", parsed))
            set_critique_rating(conn, critique, "dave", 1)
        scope = ReportScope(COLLECTION)
        summary = build_summary(lib, scope, resolve_samples(lib, scope))
        assert summary.annotations == 0
        assert summary.reviewed_cots == 2 and summary.reviewers == ["carol", "dave"]
        assert (summary.explanation_ratings, summary.rated_critiques) == (1, 1)
        only = ReportScope(COLLECTION, author="dave")
        mine = build_summary(lib, only, resolve_samples(lib, only))
        assert mine.reviewed_cots == 1 and (mine.explanation_ratings, mine.rated_critiques) == (0, 1)
        out = tmp_path / "rated.html"
        write_html_report(lib, scope, out)
    _parser, text = parse(out)
    assert "Reviewers: carol, dave" in text and "Reviewers: none" not in text
