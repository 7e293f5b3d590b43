"""The failed-requests table and the runs panel's message show server text plainly: invisible
characters revealed, a long body cut (issue 15: U+202E in data could disguise text; a label or
cell laid out a megabyte on the GUI thread)."""

from __future__ import annotations

from tests.helpers.widgets import cell
from thoughtdesk.core.generation.runs import RequestRow
from thoughtdesk.ui.generation.run_output import CELL_CHARS, FailedRequests
from thoughtdesk.ui.widgets.labels import plain_label


def failed(error: str) -> RequestRow:
    return RequestRow(
        id=7, run_id=1, sample_pk=3, model_index=0, model="m\u202eodel", variant_index=0, replicate=0,
        step="cot", depends_on=None, fingerprint=None, prompt=None, params="{}", status="failed", attempts=3,
        error=error, error_kind="server", raw_response=None, created="2024-05-01T09:30:12Z", sent_at=None,
        finished_at=None, latency=None, prompt_tokens=None, completion_tokens=None, cost=None,
        result_cot_pk=None, result_answer_pk=None, cached_from=None,
    )  # fmt: skip


def test_failed_request_cells_reveal_invisible_characters_and_cut_long_bodies(qtbot) -> None:
    table = FailedRequests()
    qtbot.addWidget(table)
    table.show_rows([failed("HTTP 500: " + "<html>" + "x" * 1_000_000)])
    assert cell(table, 0, 2).text() == "m<U+202E>odel"
    error = cell(table, 0, table.columnCount() - 1).text()
    assert error.startswith("HTTP 500: <html>xxx") and len(error) < CELL_CHARS + 50
    assert error.endswith(f"({1_000_016 - CELL_CHARS:,} more characters)")


def test_a_message_label_reveals_and_cuts_what_it_is_given_later(qtbot) -> None:
    message = plain_label(name="runMessage", selectable=True)
    qtbot.addWidget(message)
    message.setText("Run failed: key\u202e rejected " + "y" * 100_000)  # as runs_panel sets it
    assert message.text().startswith("Run failed: key<U+202E> rejected yyy")
    assert len(message.text()) < 2_100
