"""One planning path for every kind of run (issue 28, point 12): the run planner and the
critique, revision, judge and step-label dialogs are kinds of one :class:`PlannedRunDialog`, so the same
behaviour is asserted here once for all of them: the selection, the plan's summary, an error in
one red line (from the form and from the worker), an older plan dropped, Cancel writing
nothing, Start writing one run of the kind with the limits chosen, and the fit to 1366x768."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.screenshots import save_screenshot
from tests.ui.app.test_fits_laptop import assert_fits
from thoughtdesk.core.critiques.records import Critique, ParsedCritique
from thoughtdesk.core.critiques.store import add_critique
from thoughtdesk.core.generation.runs import RunLimits, run_info
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.generation.controller import GenerationUI
from thoughtdesk.ui.generation.planned_dialog import ERROR_STYLE, PlannedRunDialog
from thoughtdesk.ui.qt import QDialog, Qt
from thoughtdesk.ui.widgets.sizing import LAPTOP_CLIENT

NOWHERE = "http://127.0.0.1:9/v1"  # the discard port: a plan sends nothing, and nothing is started here


@dataclass(frozen=True)
class Kind:
    """A kind of run as the Generate menu opens it, and what its dialog says of its models."""

    kind: str
    open: Callable[[GenerationUI], Any]
    no_model: str  # the form's error before a model is chosen


KINDS = [
    Kind("generation", GenerationUI.open_planner, "Add at least one model in the Models tab."),
    Kind("critique", GenerationUI.open_critique_dialog, "Add at least one critique model in the Critique models tab."),
    Kind("revision", GenerationUI.open_revise_dialog, "Add at least one revising model in the Revising models tab."),
    Kind("judge", GenerationUI.open_judge_dialog, "Add at least one judge model in the Judge models tab."),
    Kind(
        "autolabel", GenerationUI.open_autolabel_dialog, "Add at least one completer model in the Completer model tab."
    ),
]


@pytest.fixture
def window_library(tmp_path: Path) -> Path:
    """A new library, which gets the demo collection."""
    return tmp_path / "lib.thoughtdesk"


def open_kind(window, kind: Kind) -> PlannedRunDialog:
    """The kind's dialog, opened from the Generate menu, each demo CoT with a critique (to revise)."""
    with window.library.transaction() as conn:
        for (pk,) in conn.execute("SELECT id FROM generated_cot").fetchall():
            parsed = ParsedCritique(
                main_flaw="the dose is not checked", general_feedback="check it", explanation_score=2
            )
            add_critique(conn, Critique(pk, "some-critic", "The main flaw: the dose is not checked.", parsed))
    dialog = kind.open(window.generation)
    assert isinstance(dialog, PlannedRunDialog)
    return dialog


def add_model(dialog: PlannedRunDialog) -> None:
    form = dialog.models.form
    form.provider.setCurrentIndex(form.provider.findData("openai"))
    form.model_name.setText("shared-model")
    form.base_url.setText(NOWHERE)
    assert dialog.models.add_from_form() is not None, dialog.models.error.text()


def settled(dialog: PlannedRunDialog) -> bool:
    """No re-plan waiting or running."""
    return not dialog._timer.isActive() and not dialog._tasks


def shows_error(dialog: PlannedRunDialog, text: str) -> None:
    """The error, in one red line, instead of a plan: no prompts, Start disabled."""
    assert dialog.plan is None and dialog.error == text == dialog.summary.text()
    assert "\n" not in text and "Traceback" not in text
    assert dialog.summary.styleSheet() == ERROR_STYLE
    assert dialog.preview.toPlainText() == "" and not dialog.start_button.isEnabled()


def runs_in(path: Path) -> int:
    with Library.open(path) as lib:
        return lib.conn.execute("SELECT count(*) FROM run").fetchone()[0]


@pytest.mark.parametrize("kind", KINDS, ids=[k.kind for k in KINDS])
def test_every_kind_plans_shows_errors_in_one_line_drops_old_plans_and_cancels(window, qtbot, kind):
    dialog = open_kind(window, kind)
    failed: list[str] = []
    ready: list[Any] = []
    dialog.plan_failed.connect(failed.append)
    dialog.plan_ready.connect(ready.append)
    # The selection: the collection shown in the tree, every dataset and split.
    assert dialog.collection.currentText() == "Demo"
    assert dialog.dataset.currentData() is None and dialog.split.currentData() is None
    assert dialog.tabs.widget(1) is dialog.models
    # No model yet: said in one line, from the form (nothing planned in the worker).
    qtbot.waitUntil(lambda: settled(dialog) and bool(failed), timeout=10000)
    shows_error(dialog, kind.no_model)
    assert failed == [kind.no_model]

    add_model(dialog)
    qtbot.waitUntil(lambda: settled(dialog) and dialog.plan is not None, timeout=10000)
    plan: Any = dialog.plan
    assert ready == [plan] and dialog.error == "" and dialog.summary.styleSheet() == ""
    summary = dialog.summary.text()
    assert plan.total > 0 and f"{plan.total:,} " in summary.splitlines()[0]  # requests first
    assert "tokens" in summary.lower() and "cost" in summary.lower() and "shared-model" in summary
    assert dialog.preview.toPlainText().strip() and dialog.start_button.isEnabled()

    # A limit of one per split plans fewer requests; an older plan finishing late is dropped.
    dialog.limit.setValue(1)
    dialog._timer.stop()
    first, second = dialog.replan(), dialog.replan()
    assert first is not None and second is not None
    qtbot.waitUntil(lambda: settled(dialog), timeout=10000)
    assert len(ready) == 2 and ready[-1].total < plan.total and ready[-1] is dialog.plan

    # What the worker finds (the collection renamed meanwhile): one red line, Start disabled.
    with window.library.transaction() as conn:
        conn.execute("UPDATE collection SET name = 'Demo, renamed' WHERE name = 'Demo'")
    dialog.seed.setValue(7)
    qtbot.waitUntil(lambda: settled(dialog) and dialog.plan is None, timeout=10000)
    shows_error(dialog, dialog.error)
    assert "Demo" in dialog.error and failed[-1] == dialog.error

    # Cancel (Escape) closes the dialog and writes nothing.
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert dialog.result() == QDialog.DialogCode.Rejected and not dialog.isVisible()
    assert runs_in(window.library.path) == 0


@pytest.mark.parametrize("kind", KINDS, ids=[k.kind for k in KINDS])
def test_every_kind_starts_one_run_of_its_kind_with_the_name_and_limits_chosen(window, qtbot, kind):
    generation = window.generation
    dialog = open_kind(window, kind)
    dialog.run_created.disconnect(generation._run_created)  # written, not executed: nothing listens
    add_model(dialog)
    dialog.run_name.setText(f"shared path {kind.kind}")
    dialog.concurrency.setValue(3)
    dialog.attempts.setValue(2)
    qtbot.waitUntil(lambda: settled(dialog) and dialog.plan is not None, timeout=10000)
    plan: Any = dialog.plan
    with qtbot.waitSignal(dialog.run_created, timeout=10000) as created:
        dialog.start_button.click()
    run_id, limits = created.args
    assert limits == RunLimits(concurrency=3, max_attempts=2)
    assert dialog.result() == QDialog.DialogCode.Accepted
    with Library.open(window.library.path) as lib:
        info = run_info(lib, run_id)
        requests = lib.conn.execute("SELECT count(*) FROM request WHERE run_id = ?", (run_id,)).fetchone()[0]
    assert info.kind == kind.kind and info.name == f"shared path {kind.kind}" and info.status == "planned"
    assert requests == plan.total and runs_in(window.library.path) == 1


@pytest.mark.parametrize("kind", KINDS, ids=[k.kind for k in KINDS])
def test_every_kind_fits_a_laptop_screen_on_each_tab(window, qtbot, tmp_path, kind):
    dialog = open_kind(window, kind)
    add_model(dialog)
    qtbot.waitUntil(lambda: settled(dialog) and dialog.plan is not None, timeout=10000)
    for index in range(dialog.tabs.count()):
        dialog.tabs.setCurrentIndex(index)
        assert_fits(dialog, f"the {kind.kind} dialog's {dialog.tabs.tabText(index)!r} tab")
    dialog.tabs.setCurrentIndex(0)
    dialog.resize(LAPTOP_CLIENT)
    qtbot.wait(50)
    assert dialog.width() <= LAPTOP_CLIENT.width() and dialog.height() <= LAPTOP_CLIENT.height()
    assert save_screenshot(dialog, tmp_path, f"planned-{kind.kind}").stat().st_size > 10_000
    dialog.reject()
