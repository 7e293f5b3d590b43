"""The trajectory view: steps in order with rationale and scored candidates (chosen marked in
bold, the others greyed), a plain CoT of the same model beside it, model text never read as
markup, reachable from the Samples detail and the Review menu, and fitting 1366x768."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.generation.runs.test_guided import RatingServer, _chat
from tests.helpers.libraries import DEMO, demo_library
from tests.helpers.servers import FakeModelServer
from tests.helpers.widgets import content
from tests.helpers.window import close_window, open_window
from thoughtdesk.core.generation.prompts import PromptMode
from thoughtdesk.core.generation.runs import (
    GuideSpec,
    ModelSpec,
    RunLimits,
    RunSpec,
    SampleSelection,
    create_run,
    execute_run,
    plan_run,
)
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.qt import QApplication, QFont, QPalette, Qt, QToolButton
from thoughtdesk.ui.trajectories.view import TrajectoryDialog

MARKUP = "<b>Bold</b> <img src=x> is shown as typed."


@pytest.fixture
def guided_library(tmp_path: Path) -> tuple[Path, int, int]:
    """A demo library with one process-supervised guided CoT (3 candidates a step, one with
    markup) and a plain CoT of the same model on the same question; (path, guided, plain) keys."""
    path = demo_library(tmp_path / "lib.thoughtdesk")
    ratings = {"Weak first step.": "1", MARKUP: "3", "Other step.": "0", "The answer is B.": "3", "No.": "1"}
    with FakeModelServer() as agent, RatingServer(ratings) as rater:
        agent.script(
            _chat("Weak first step.", MARKUP, "Other step."),
            _chat("The answer is B.", "No.", "No."),
            _chat("A plain one-shot CoT. The answer is B."),
        )
        model = ModelSpec("openai", "agent", base_url=agent.base_url, timeout=5.0)
        guide = GuideSpec(method="process", rater_model=ModelSpec("openai", "rater", base_url=rater.base_url))
        selection = SampleSelection(DEMO, datasets=("med_qa",), limit=1)
        for spec in (
            RunSpec(samples=selection, models=(model,), guide=guide),
            RunSpec(samples=selection, models=(model,), mode=PromptMode.ONE_STEP),
        ):
            with Library.open(path) as lib:
                run_id = create_run(lib, plan_run(lib, spec))
            execute_run(path, run_id, limits=RunLimits(concurrency=1))
    with Library.open(path) as lib:
        guided, plain = (
            pk for (pk,) in lib.conn.execute("SELECT id FROM generated_cot WHERE cot_id LIKE 'td-%' ORDER BY id")
        )
    return path, guided, plain


def test_steps_candidates_scores_and_the_plain_cot_side_by_side(qtbot, guided_library):
    path, guided, _plain = guided_library
    with Library.open(path) as lib:
        dialog = TrajectoryDialog(lib, guided)
    qtbot.addWidget(dialog)
    dialog.show()
    view = dialog.view
    assert view.item_texts("step")[0].startswith("Step 1 · ") and "(last step)" in view.item_texts("step")[1]
    chosen = view.item_texts("chosen")
    assert chosen == [f"    ✓ [3.000] {MARKUP}", "    ✓ [3.000] The answer is B."]
    assert [t.strip() for t in view.item_texts("other")] == [
        "[1.000] Weak first step.",
        "[0.000] Other step.",
        "[1.000] No.",
        "[1.000] No.",
    ]
    grey = view.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
    for i in range(view.steps.count()):
        item = view.steps.item(i)
        kind = item.data(Qt.ItemDataRole.UserRole)
        if kind == "other":
            assert item.foreground().color() == grey
        if kind == "chosen":
            assert QFont(item.font()).bold()
    assert view.plain.toPlainText() == "A plain one-shot CoT. The answer is B."
    assert view.guided.toPlainText() == f"{MARKUP} The answer is B."
    assert "agent · process · 2 step(s)" == view.header.text()
    assert view.header.textFormat() == Qt.TextFormat.PlainText
    shot = dialog.grab()
    assert shot.width() <= 1366 and shot.height() <= 768
    shot.save(str(path.parent / "trajectory.png"))


def test_opened_from_the_samples_detail_and_the_review_menu(qtbot, guided_library):
    path, guided, _plain = guided_library
    window = open_window(qtbot, Library.open(path), size=(1366, 768))
    try:
        with Library.open(path) as lib:
            sample_pk = lib.conn.execute("SELECT sample_pk FROM generated_cot WHERE id = ?", (guided,)).fetchone()[0]
        assert window.samples.open_sample(sample_pk)
        detail = window.samples.detail
        qtbot.waitUntil(lambda: detail.current is not None and detail.current.pk == sample_pk, timeout=5000)
        buttons = [b for b in content(detail).findChildren(QToolButton) if b.objectName() == "trajectoryButton"]
        assert len(buttons) == 1 and "process, 2 steps" in buttons[0].text()  # only the guided CoT has one
        buttons[0].click()
        dialogs = [w for w in QApplication.topLevelWidgets() if isinstance(w, TrajectoryDialog) and w.isVisible()]
        assert len(dialogs) == 1 and dialogs[0].view.item_texts("chosen")[1].endswith("The answer is B.")
        dialogs[0].close()
        # Review: the current CoT's trajectory from the menu; the plain CoT has none
        review = window.review
        review.view.show_sample(sample_pk)
        qtbot.waitUntil(lambda: guided in review.view.cot_pks, timeout=5000)
        review.view.compare.set_current(review.view.cot_pks.index(guided))
        review.show_trajectory()
        opened = [w for w in QApplication.topLevelWidgets() if isinstance(w, TrajectoryDialog) and w.isVisible()]
        assert len(opened) == 1
        opened[0].close()
    finally:
        close_window(window)


def test_bidi_controls_are_shown_and_huge_texts_capped(qtbot):
    # U+202E shown raw turned "txt.exe" into what reads "exe.txt"; a 10 MB CoT was laid out whole.
    from tests.helpers.shown_text import shown_texts
    from thoughtdesk.core.generation.runs import TrajectoryContext, TrajectoryStep
    from thoughtdesk.core.generation.runs.trajectories import Candidate
    from thoughtdesk.ui.trajectories.view import TrajectoryView
    from thoughtdesk.ui.widgets.long_text import DISPLAY_CHARS

    disguised = "invoice_\u202etxt.exe"
    huge = "\u202eab" * 3_400_000
    context = TrajectoryContext(
        cot_pk=1,
        question=f"Which file? {disguised}",
        model=f"agent{disguised}",
        method="process",
        cot=huge,
        plain_cot_pk=2,
        plain_cot=f"Plain {disguised}",
    )
    step = TrajectoryStep(
        index=0,
        rationale=f"Because {disguised}",
        candidates=(Candidate(disguised, 1.0), Candidate(huge, 0.5)),
        chosen=0,
        final=True,
    )
    view = TrajectoryView()
    qtbot.addWidget(view)
    view.show_trajectory(context, [step])
    texts = shown_texts(view)
    assert not any("\u202e" in text for text in texts)
    assert view.question.text() == "Question: Which file? invoice_<U+202E>txt.exe"
    assert view.header.text().startswith("agentinvoice_<U+202E>txt.exe · process")
    assert view.item_texts("rationale") == ["    Rationale: Because invoice_<U+202E>txt.exe"]
    assert view.item_texts("chosen") == ["    ✓ [1.000] invoice_<U+202E>txt.exe"]
    other = view.item_texts("other")[0].replace("\u200b", "")  # (break points in long words)
    assert len(other) < 3_000 and other.endswith("more characters)")
    assert view.plain.toPlainText() == "Plain invoice_<U+202E>txt.exe"
    assert len(view.guided.toPlainText()) <= DISPLAY_CHARS and not view.guided.more.isHidden()
    assert view.minimumSizeHint().width() <= 1100  # the unbroken question widened it to 3,800 px
    view.guided.show_all()
    assert view.guided.dialog is not None and view.guided.dialog.text == huge
    view.guided.dialog.close()


def test_review_marks_the_guided_cot_and_blind_mode_hides_it(qtbot, guided_library):
    # Issue 28: guided CoTs looked the same as plain ones in Review.
    path, guided, plain = guided_library
    window = open_window(qtbot, Library.open(path), size=(1366, 768))
    try:
        with Library.open(path) as lib:
            sample_pk = lib.conn.execute("SELECT sample_pk FROM generated_cot WHERE id = ?", (guided,)).fetchone()[0]
        view = window.review.view
        view.show_sample(sample_pk)
        qtbot.waitUntil(lambda: guided in view.cot_pks and plain in view.cot_pks, timeout=5000)
        assert view.stored is not None
        views, keys = view.cot_views(view.stored)
        by_key = dict(zip(keys, views, strict=True))
        assert by_key[guided].label().endswith(" · guided") and by_key[guided].guided
        assert "guided" not in by_key[plain].label()
        view.blind = True
        assert view.stored is not None
        views, keys = view.cot_views(view.stored)
        assert not any(v.guided or "guided" in v.label() for v in views)
    finally:
        close_window(window)


def test_step_labels_show_under_their_trajectory_steps(qtbot, guided_library):
    from thoughtdesk.core.steps.split import cot_steps as split_cot
    from thoughtdesk.core.steps.store import StepLabel, StepReview, StepTarget, put_review

    path, guided, _plain = guided_library
    with Library.open(path) as lib:
        sample_pk, text = lib.conn.execute(
            "SELECT sample_pk, cot FROM generated_cot WHERE id = ?", (guided,)
        ).fetchone()
        listed = split_cot(text)
        assert [s.text for s in listed] == [MARKUP, "The answer is B."]
        with lib.transaction() as conn:
            target = StepTarget(sample_pk, guided)
            put_review(conn, target, "ann", StepReview("ann", (StepLabel(0, listed[0].id, 1, True),)))
            put_review(conn, target, "judge", StepReview("judge", first_error=1, kind="model"))
        dialog = TrajectoryDialog(lib, guided)
    qtbot.addWidget(dialog)
    assert dialog.view.item_texts("labels") == [
        "    Step labels: ann +1 (unsure)",
        "    Step labels: judge: first error",
    ]
