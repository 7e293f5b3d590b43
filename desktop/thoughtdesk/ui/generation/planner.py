"""The run planner: samples x instructions x triggers x extractions x models x n, before sending.

Every change re-plans in a worker (:func:`thoughtdesk.core.generation.runs.plan_run` reads the library),
so the dialog stays responsive on large collections. The dialog shows the number of requests,
the estimated tokens and cost (prices editable), and the exact prompts of the first requests as
plain text. Nothing is sent until Start, which writes the run's request rows (``create_run``)
and hands the run id to the runs panel through :attr:`RunPlannerDialog.run_created`. The
selection, planning and starting are :class:`PlannedRunDialog`'s, as every kind of run's; this
kind adds the sample source, prompt fragments, mode, models, guide and prices.
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import Callable
from pathlib import Path
from typing import Any

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.backends import PriceTable
from thoughtdesk.core.generation.defaults import DEFAULT_FRAGMENTS
from thoughtdesk.core.generation.fragments import FRAGMENT_KINDS, FragmentKind, FragmentLibrary
from thoughtdesk.core.generation.prompts import PromptMode
from thoughtdesk.core.generation.runs import (
    FewShotSpec,
    RunPlan,
    RunSpec,
    check_batch_spec,
    check_models_exist,
    check_models_ready,
    create_run,
    guide_scorer_report,
    plan_run,
    probe_scorer,
)
from thoughtdesk.core.library.queries import SampleFilter, collection_name
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.generation.guide_panel import GuidePanel
from thoughtdesk.ui.generation.model_form import ModelList
from thoughtdesk.ui.generation.plan_summary import SampleSource, SourceKind, describe_plan, format_previews
from thoughtdesk.ui.generation.planned_dialog import PlannedRunDialog
from thoughtdesk.ui.generation.price_editor import PriceEditor
from thoughtdesk.ui.qt import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QScrollArea,
    QSpinBox,
    Qt,
    QVBoxLayout,
    QWidget,
)
from thoughtdesk.ui.widgets.signals import blocked
from thoughtdesk.ui.widgets.sizing import compact_combo

KEY_ROLE = Qt.ItemDataRole.UserRole + 1
LIST_TITLES = {"instruction": "Instructions", "cot_trigger": "CoT triggers", "answer_extraction": "Answer extractions"}
#: Ticked when the planner opens (ThoughtSource's usual zero-shot CoT set), if present: the
#: defaults of `thoughtdesk generate` too.
DEFAULT_TICKS = DEFAULT_FRAGMENTS


class RunPlannerDialog(PlannedRunDialog[RunPlan]):
    """Plan a generation run and start it (signals as :class:`PlannedRunDialog`'s). It opens
    on the collection, dataset and split selected in the main window's tree (``main_filter``)."""

    object_name = "runPlanner"
    title = "Plan a run"
    initial_size = (1300, 820)
    split_sizes = (760, 540)

    def __init__(
        self,
        library_path: Path,
        fragments: FragmentLibrary,
        prices: PriceTable,
        *,
        price_path: Path | None = None,
        main_filter: SampleFilter | None = None,
        selected_pks: tuple[int, ...] = (),
        models: ModelList | None = None,
        parent: QWidget | None = None,
    ) -> None:
        self.fragments = fragments
        self.main_filter = main_filter
        self.selected_pks = selected_pks
        self._filter_collection: str | None = None
        self.price_editor = PriceEditor(prices, price_path)
        super().__init__(library_path, models if models is not None else ModelList(), parent=parent)

    def read_library(self, lib: Library) -> None:
        shown = self.main_filter
        if shown is not None and shown.collection_id is not None:
            self._filter_collection = collection_name(lib, shown.collection_id)

    def opening_source(self, collection: str | None) -> tuple[str | None, str | None, str | None]:
        """The collection, dataset and split selected in the main window's tree."""
        shown = self.main_filter
        if shown is None:
            return None, None, None
        return self._filter_collection, shown.dataset, shown.split

    # Layout ---------------------------------------------------------------------------------

    def build_tabs(self) -> list[tuple[QWidget, str]]:
        self.source = QComboBox(objectName="sampleSource")
        compact_combo(self.source)
        self.source.addItem("A collection, dataset and split", "collection")
        if self.main_filter is not None and self._filter_collection:
            self.source.addItem("The samples shown in the main window (its filter)", "filter")
        if self.selected_pks:
            self.source.addItem(f"The selected sample(s) ({len(self.selected_pks)})", "selection")
        self.selection_form.insertRow(0, "&From", self.source)
        self.limit.setToolTip("Most samples per dataset split (collection) or in all (filter, selection)")

        self.lists: dict[FragmentKind, QListWidget] = {}
        prompts = QGroupBox("Prompt fragments (tick one or more of each)")
        grid = QGridLayout(prompts)
        for column, kind in enumerate(FRAGMENT_KINDS):
            grid.addWidget(QLabel(LIST_TITLES[kind]), 0, column)
            widget = QListWidget(objectName=f"list_{kind}")
            self.lists[kind] = widget
            grid.addWidget(widget, 1, column)
        self.refresh_fragments()
        self.mode = QComboBox(objectName="mode")
        compact_combo(self.mode)
        self.mode.addItem("Two-step: CoT, then the answer-extraction prompt", PromptMode.TWO_STEP.value)
        self.mode.addItem("One-step: answer parsed from the CoT", PromptMode.ONE_STEP.value)
        self.n = QSpinBox(objectName="n", minimum=1, maximum=1000, value=1)
        self.n.setToolTip("Samples per prompt (self-consistency)")
        self.few_shot_k = QSpinBox(objectName="fewShotK", minimum=0, maximum=64)
        self.few_shot_k.setSpecialValueText("off")
        self.few_shot_split = QLineEdit("train", objectName="fewShotSplit")
        self.few_shot_split.setMinimumWidth(90)
        self.few_shot_seed = QSpinBox(objectName="fewShotSeed", minimum=0, maximum=2_147_483_647)
        options = QGroupBox("Mode")
        options_form = QFormLayout(options)
        options_form.addRow("&Mode", self.mode)
        options_form.addRow("&n per prompt", self.n)
        # Two short rows, not one long one: the planner must fit a 1366 px laptop screen.
        few = QHBoxLayout()
        few.addWidget(self.few_shot_k)
        few.addWidget(QLabel("exemplars from split"))
        few.addWidget(self.few_shot_split, 1)
        options_form.addRow("Few-shot", few)
        options_form.addRow("Few-shot seed", self.few_shot_seed)

        what = QWidget()
        what_layout = QVBoxLayout(what)
        top = QHBoxLayout()
        top.addWidget(self.selection_group, 1)
        top.addWidget(options, 1)
        what_layout.addLayout(top)
        what_layout.addWidget(prompts, 1)

        self.guide = GuidePanel()
        guide_scroll = QScrollArea(objectName="guideScroll")  # the tab's forms must not widen the dialog
        guide_scroll.setWidgetResizable(True)
        guide_scroll.setWidget(self.guide)

        self.batch = QCheckBox("&Batch API: half price, within 24 h")
        self.batch.setObjectName("batchRun")
        self.batch.setToolTip(
            "OpenAI's Batch API or Anthropic's Message Batches: the run waits in the Runs tab, "
            "which fetches its results when they are ready (also after a restart)"
        )
        self.run_form.addRow("", self.batch)
        self._source_changed()
        return [
            (what, "&Samples and prompts"),
            (guide_scroll, "&Guide"),
            (self.price_editor, "P&rices"),
        ]

    def refresh_fragments(self) -> None:
        """Refill the three lists from the fragment library, keeping the ticked keys."""
        for kind, widget in self.lists.items():
            ticked = set(self.checked(kind)) if widget.count() else {DEFAULT_TICKS[kind]}
            entries: list[tuple[str | None, str]] = [(None, "(none)")]
            entries += [(f.key, f"{f.key} — {f.text}") for f in self.fragments.of_kind(kind)]
            with blocked(widget):
                widget.clear()
                for key, label in entries:
                    item = QListWidgetItem(label.replace("\n", " ⏎ "))
                    # The list is narrow on a laptop: the whole fragment in the tooltip, escaped
                    # (Qt reads a tooltip that looks like markup as rich text).
                    item.setToolTip(f"<p>{html.escape(label, quote=False)}</p>")
                    item.setData(KEY_ROLE, key)
                    item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                    item.setCheckState(Qt.CheckState.Checked if key in ticked else Qt.CheckState.Unchecked)
                    widget.addItem(item)
        self.schedule_replan()

    def checked(self, kind: FragmentKind) -> list[str | None]:
        widget = self.lists[kind]
        return [
            widget.item(row).data(KEY_ROLE)
            for row in range(widget.count())
            if widget.item(row).checkState() == Qt.CheckState.Checked
        ]

    def set_checked(self, kind: FragmentKind, keys: list[str | None]) -> None:
        """Tick exactly ``keys`` (None = the "(none)" entry) in one fragment list."""
        widget = self.lists[kind]
        for row in range(widget.count()):
            item = widget.item(row)
            item.setCheckState(Qt.CheckState.Checked if item.data(KEY_ROLE) in keys else Qt.CheckState.Unchecked)

    def _source_changed(self) -> None:
        by_collection = self.source.currentData() == "collection"
        for widget in (self.collection, self.dataset, self.split):
            widget.setEnabled(by_collection)
        self.schedule_replan()

    def connect_changes(self) -> None:
        self.source.currentIndexChanged.connect(lambda _: self._source_changed())
        for spin in (self.n, self.few_shot_k, self.few_shot_seed):
            spin.valueChanged.connect(lambda _: self.schedule_replan())
        self.mode.currentIndexChanged.connect(lambda _: self.schedule_replan())
        self.few_shot_split.textChanged.connect(lambda _: self.schedule_replan())
        for widget in self.lists.values():
            widget.itemChanged.connect(lambda _: self.schedule_replan())
        self.batch.toggled.connect(lambda _: self.schedule_replan())
        self.models.changed.connect(self.follow_main_model)
        self.guide.changed.connect(self.schedule_replan)
        self.price_editor.changed.connect(self.schedule_replan)

    # Planning -------------------------------------------------------------------------------

    def sample_source(self) -> SampleSource:
        kind: SourceKind = self.source.currentData()
        _datasets, _splits, limit, seed = self.selection()
        if kind == "filter":
            return SampleSource(
                "filter", self._filter_collection or "", main_filter=self.main_filter, limit=limit, seed=seed
            )
        if kind == "selection":
            return SampleSource(
                "selection",
                self._filter_collection or self.collection.currentText(),
                sample_pks=self.selected_pks,
                limit=limit,
                seed=seed,
            )
        return SampleSource(
            "collection",
            self.collection.currentText(),
            self.dataset.currentData(),
            self.split.currentData(),
            limit=limit,
            seed=seed,
        )

    def spec_parts(self) -> dict[str, Any]:
        """Everything of the RunSpec except the samples (resolved in the worker)."""
        models = self.chosen_models()
        lists = {kind: tuple(self.checked(kind)) for kind in FRAGMENT_KINDS}
        for kind, keys in lists.items():
            if not keys:
                raise ThoughtDeskError(f"Tick at least one entry under {LIST_TITLES[kind]} ((none) counts).")
        few = self.few_shot_k.value()
        return dict(
            models=models,
            instructions=lists["instruction"],
            cot_triggers=lists["cot_trigger"],
            answer_extractions=lists["answer_extraction"],
            mode=PromptMode(self.mode.currentData()),
            n=self.n.value(),
            name=self.run_name.text().strip(),
            few_shot=FewShotSpec(few, self.few_shot_split.text().strip() or "train", self.few_shot_seed.value())
            if few
            else None,
            guide=self.guide.guide(),
            batch=self.batch.isChecked(),
        )

    def follow_main_model(self) -> None:
        """Point the guide's helper models at the run's local model, if it has one."""
        local = next((spec for spec in self.models.specs() if spec.provider == "llamacpp"), None)
        self.guide.follow_main_model(local)

    def plan_job(self) -> Callable[[Library], RunPlan]:
        parts = self.spec_parts()
        source = self.sample_source()
        fragments = FragmentLibrary(list(self.fragments))  # a snapshot: the editor may change it
        prices = self.price_editor.table()

        def job(lib: Library) -> RunPlan:
            spec = RunSpec(samples=source.selection(lib), **parts)
            if spec.batch:
                check_batch_spec(spec)  # a local model or a guided run: said in the summary
            return plan_run(lib, spec, fragments=fragments, prices=prices)

        return job

    def check_plan(self, plan: RunPlan) -> RunPlan:
        # What the scorer can do (a local one's memory; remembered, so only the first read waits).
        plan.scorer = guide_scorer_report(plan.spec.guide)
        if plan.scorer is not None and not plan.scorer.can_score:
            raise ThoughtDeskError(
                f"{plan.scorer.detail}. Implicit supervision cannot start with this scorer: choose another "
                "in the Guide tab, or explicit supervision"
            )
        return plan

    def describe(self, plan: RunPlan) -> str:
        return describe_plan(plan)

    def previews_text(self, plan: RunPlan) -> str:
        return format_previews(plan)

    def create_planned_run(self, lib: Library, plan: RunPlan, name: str | None) -> int:
        # Offline mode, a missing model file (also a helper's): no run is written.
        check_models_ready(plan.spec.all_models())
        check_models_exist(plan.spec.all_models())  # a model its server does not have (a typo): no run either
        scorer = plan.spec.guide.scorer if plan.spec.guide is not None else None
        if scorer is not None:
            # A server that ignores echo (llama.cpp's own llama-server) would stop the run at its
            # first step: one tiny scoring request says so now, and no run is written.
            asyncio.run(probe_scorer(scorer))
        return create_run(lib, plan, name=name)
