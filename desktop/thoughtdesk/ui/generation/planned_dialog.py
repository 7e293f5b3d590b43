"""What the run planner and the critique dialog share: a plan computed in a worker is shown
(summary, exact prompts) or its error; Start writes the run's request rows in a worker and
hands the run id on. Each dialog says how to describe, preview and create its kind of plan."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Generic, TypeVar

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.runs import RunLimits
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.base.tasks import Task, TaskContext
from thoughtdesk.ui.qt import QComboBox, QLabel, QLineEdit, QPlainTextEdit, QPushButton, QSpinBox, QTimer
from thoughtdesk.ui.widgets.signals import blocked

P = TypeVar("P")


class PlannedRunMixin(Generic[P]):
    """Mixed into a QDialog that has these widgets and signals (``plan_ready(plan)``,
    ``plan_failed(str)``, ``run_created(int, RunLimits)``)."""

    summary: QLabel
    preview: QPlainTextEdit
    start_button: QPushButton
    run_name: QLineEdit
    concurrency: QSpinBox
    attempts: QSpinBox
    library_path: Path
    plan: P | None
    error: str
    _generation: int
    _timer: QTimer
    _tasks: set[Task[Any]]
    plan_ready: Any
    plan_failed: Any
    run_created: Any
    # The sample source both dialogs show: collection, dataset, split, and each collection's
    # (dataset, split) pairs.
    collection: QComboBox
    dataset: QComboBox
    split: QComboBox
    _collections: dict[str, list[tuple[str, str]]]

    def _start_planning(self, library_path: Path) -> Library:
        """The state every planning dialog starts from: no plan or error yet, no task, and each
        collection's (dataset, split) pairs (small reads: names and split counts only). Returns
        the library, open, for the dialog's own small reads; the caller closes it."""
        self.library_path = library_path
        self.plan = None
        self.error = ""
        self._generation = 0
        self._tasks = set()
        lib = Library.open(library_path)
        self._collections = {info.name: lib.splits(info.id) for info in lib.collections()}
        return lib

    # What differs between the dialogs.
    def describe(self, plan: P) -> str:
        raise NotImplementedError

    def previews_text(self, plan: P) -> str:
        raise NotImplementedError

    def create_planned_run(self, lib: Library, plan: P, name: str | None) -> int:
        raise NotImplementedError

    def accept(self) -> None: ...  # QDialog's

    def schedule_replan(self) -> None:
        raise NotImplementedError

    # Shared.
    def _fill_datasets(self) -> None:
        with blocked(self.dataset):
            self.dataset.clear()
            self.dataset.addItem("All datasets", None)
            for dataset in dict.fromkeys(d for d, _ in self._collections.get(self.collection.currentText(), [])):
                self.dataset.addItem(dataset, dataset)
        self._fill_splits()

    def _fill_splits(self) -> None:
        with blocked(self.split):
            self.split.clear()
            self.split.addItem("All splits", None)
            dataset = self.dataset.currentData()
            for split in dict.fromkeys(
                s
                for d, s in self._collections.get(self.collection.currentText(), [])
                if dataset is None or d == dataset
            ):
                self.split.addItem(split, split)
        self.schedule_replan()

    def _planned(self, generation: int, plan: P) -> None:
        if generation != self._generation:
            return  # an older plan finishing after a newer one was asked for
        self.plan, self.error = plan, ""
        self.summary.setStyleSheet("")
        self.summary.setText(self.describe(plan))
        self.preview.setPlainText(self.previews_text(plan))
        self.start_button.setEnabled(getattr(plan, "total", 0) > 0)
        self.plan_ready.emit(plan)

    def _failed(self, generation: int, error: BaseException) -> None:
        if generation != self._generation:
            return
        self.plan = None
        self.error = str(error) if isinstance(error, ThoughtDeskError) else f"{type(error).__name__}: {error}"
        self.summary.setStyleSheet("color: #b3261e;")
        self.summary.setText(self.error)
        self.preview.setPlainText("")
        self.start_button.setEnabled(False)
        self.plan_failed.emit(self.error)

    def limits(self) -> RunLimits:
        return RunLimits(concurrency=self.concurrency.value(), max_attempts=self.attempts.value())

    def start(self) -> Task[int] | None:
        """Write the planned run (nothing is sent yet) in a worker, then emit ``run_created``."""
        plan = self.plan
        if plan is None or self._timer.isActive():
            return None
        self.start_button.setEnabled(False)
        self.summary.setText("Writing the run's requests…")
        path, name, limits = self.library_path, self.run_name.text().strip() or None, self.limits()

        def work(_ctx: TaskContext) -> int:
            with Library.open(path) as lib:
                return self.create_planned_run(lib, plan, name)

        def created(run_id: int) -> None:
            self.run_created.emit(run_id, limits)
            self.accept()

        return (
            Task(work)
            .on_success(created)
            .on_failure(lambda error: self._failed(self._generation, error))
            .owned_by(self, self._tasks)  # type: ignore[arg-type]  # self is the QDialog it is mixed into
            .start()
        )
