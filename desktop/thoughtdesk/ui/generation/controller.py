"""Generating CoTs in the main window: the Generate menu, the fragment editor, the run planner
and the Runs tab (Ctrl+4). Installed by :func:`thoughtdesk.ui.generation.install`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from thoughtdesk.core.generation.defaults import model_defaults
from thoughtdesk.core.library.queries import collection_name
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.base.changes import DataChanges
from thoughtdesk.ui.base.deferred import DeferredTab
from thoughtdesk.ui.base.window_api import WindowApi
from thoughtdesk.ui.qt import QDialog, QFormLayout, QLabel, QObject, Qt
from thoughtdesk.ui.settings.options import QtSettings

if TYPE_CHECKING:  # the dialogs are imported when first opened: they reach the planner and the backends
    from thoughtdesk.core.generation.backends import PriceTable
    from thoughtdesk.core.generation.fragment_store import FragmentStore
    from thoughtdesk.core.generation.fragments import FragmentLibrary
    from thoughtdesk.core.generation.runs import RunLimits
    from thoughtdesk.ui.generation.autolabel_dialog import AutolabelRunDialog
    from thoughtdesk.ui.generation.critique_dialog import CritiqueRunDialog
    from thoughtdesk.ui.generation.fragment_editor import FragmentEditor
    from thoughtdesk.ui.generation.judge_dialog import JudgeRunDialog
    from thoughtdesk.ui.generation.model_form import ModelList
    from thoughtdesk.ui.generation.planner import RunPlannerDialog
    from thoughtdesk.ui.generation.revise_dialog import RevisionRunDialog
    from thoughtdesk.ui.generation.runs_panel import RunsPanel


def critique_model_list(call: str = "critique") -> ModelList:
    """The planner's model list set up for critique models (or revising models, ``call`` =
    ``revision``): 512 tokens per call by default, no extraction setting (one call each)."""
    from thoughtdesk.ui.generation.model_form import ModelList

    models = ModelList()
    start_from_settings(models, efforts=False)  # a critique's max tokens are no thinking budget
    form = models.form
    form.max_tokens.setValue(512)
    if models.specs():  # the model chosen in Settings, listed already: it takes the 512 too
        models.list.setCurrentRow(0)
        models.replace_selected()
    for layout in form.findChildren(QFormLayout):
        for field in (form.max_tokens, form.extraction_max_tokens):
            label = layout.labelForField(field)
            if label is None:
                continue
            if field is form.extraction_max_tokens:
                field.hide()
                label.hide()
            elif isinstance(label, QLabel):
                label.setText(f"Max tokens ({call})")
    return models


def start_from_settings(models: ModelList, *, efforts: bool = True) -> None:
    """Point a model list's form at the local model and providers chosen in the wizard and
    Settings (not always OpenAI / gpt-4o-mini), by the rule ``thoughtdesk generate`` uses too
    (:func:`thoughtdesk.core.generation.defaults.model_defaults`), and put that model in the
    run's list: a first run needs no extra click."""
    models.start_from(model_defaults(QtSettings()), efforts=efforts)


class GenerationUI(QObject):
    """Owns the fragment library shared by the editor and the planner, and the runs panel."""

    def __init__(self, window: WindowApi) -> None:
        super().__init__(window.dialog_parent)
        self.window = window
        # The fragments (the critique prompts behind them) and the price table's module are
        # read when first needed, not before the window's first paint (issue 27, point 2).
        self._store: FragmentStore | None = None
        self._fragments: FragmentLibrary | None = None
        self._price_path: Path | None = None
        self.editor: FragmentEditor | None = None
        self.planner: RunPlannerDialog | None = None
        self.critique_dialog: CritiqueRunDialog | None = None
        self.judge_dialog: JudgeRunDialog | None = None
        # The Runs tab (the run engine, the backends, keyring): built when first needed.
        self._runs = DeferredTab(window, "Runs", "Ctrl+4", self._build_runs_panel)
        menu = window.menu("&Generate")
        self.action_plan = window.add_action(menu, "&Plan a run…", "Ctrl+G", self.open_planner)
        self.action_critique = window.add_action(menu, "&Critique…", "Ctrl+Shift+G", self.open_critique_dialog)
        self.action_revise = window.add_action(menu, "Re&vise from critiques…", None, self.open_revise_dialog)
        self.action_judge = window.add_action(menu, "&Judge pairs…", None, self.open_judge_dialog)
        self.action_autolabel = window.add_action(menu, "&Label steps by rollouts…", None, self.open_autolabel_dialog)
        self.action_rationales = window.add_action(menu, "Mine &rationales…", None, self.open_rationales_dialog)
        self.action_fragments = window.add_action(menu, "&Fragments…", None, self.open_fragment_editor)
        # The tab's Ctrl+4 is a window shortcut; the menu names it after a tab (shown right-aligned
        # like a shortcut) without binding it twice, which Qt would call ambiguous and ignore.
        self.action_runs = window.add_action(menu, "&Runs\tCtrl+4", None, lambda: window.show_tab(self.runs_panel))
        window.writing(
            self.action_plan,
            self.action_critique,
            self.action_revise,
            self.action_judge,
            self.action_autolabel,
            self.action_rationales,
        )
        window.library_changed.connect(self._library_changed)
        # Stop sending at close; requests in flight are stored or sent again by a later resume.
        window.closing.connect(self._closing)

    @property
    def store(self) -> FragmentStore:
        """Where the user's fragments are saved (the built-in ones with the user's overlay)."""
        if self._store is None:
            from thoughtdesk.core.generation.fragment_store import FragmentStore

            self._store = FragmentStore()
        return self._store

    @property
    def fragments(self) -> FragmentLibrary:
        """The fragment library the editor, the planner and the critique dialog share (loaded
        when first asked for)."""
        if self._fragments is None:
            self._fragments = self.store.load()
        return self._fragments

    @property
    def price_path(self) -> Path:
        """The user's price table file."""
        if self._price_path is None:
            from thoughtdesk.core.generation.backends.pricing import default_price_path

            self._price_path = default_price_path()
        return self._price_path

    @property
    def runs_panel(self) -> RunsPanel:
        """The Runs tab's panel, built now if it was not yet (the tab is built on first use)."""
        return self._runs.view()

    def _build_runs_panel(self) -> RunsPanel:
        from thoughtdesk.ui.generation.runs_panel import RunsPanel

        panel = RunsPanel(None, prices=self.current_prices, on_data_changed=self._runs_wrote)
        library = self.window.library
        if library is not None:  # the window's library_changed came before the panel
            panel.set_library(library.path, library.read_only_reason)
        return panel

    def _closing(self) -> None:
        if self._runs.built:  # a panel never built runs nothing
            self.runs_panel.shutdown()

    def _library_changed(self, library: Library) -> None:
        if self._runs.built:
            self.runs_panel.set_library(library.path, library.read_only_reason)

    def _runs_wrote(self) -> None:
        """A run stored CoTs and answers (at most every 2 s while it runs, and at its end)."""
        self.window.notify_data_changed(DataChanges(cots=True, answers=True, runs=True, initiator=self))

    def current_prices(self) -> PriceTable:
        """The user's price table as saved (USD per million tokens)."""
        from thoughtdesk.core.generation.backends.pricing import load_price_table

        return load_price_table(self.price_path)[0]

    def open_fragment_editor(self) -> FragmentEditor:
        """Show the fragment editor window (one per main window)."""
        if self.editor is None:
            from thoughtdesk.ui.generation.fragment_editor import FragmentEditor

            self.editor = FragmentEditor(self.fragments, self.store, self.window.dialog_parent)
            self.editor.setWindowFlag(Qt.WindowType.Window, True)
            self.editor.resize(1100, 640)
            self.editor.fragments_changed.connect(self._fragments_changed)
        self.editor.show()
        self.editor.activateWindow()
        return self.editor

    def _fragments_changed(self) -> None:
        from thoughtdesk.core.generation.fragments import critique_templates, judge_templates

        if self.planner is not None:
            self.planner.refresh_fragments()
        if self.critique_dialog is not None:
            self.critique_dialog.refresh_templates(critique_templates(self.fragments))
        if self.judge_dialog is not None:
            self.judge_dialog.refresh_templates(judge_templates(self.fragments))

    def _prices_and_collection(self, library: Library) -> tuple[PriceTable, str | None]:
        """A run dialog's start: the price table (a bad file is reported by the planner) and the
        collection shown in the Samples tree (None: all or none)."""
        from thoughtdesk.core.generation.backends.pricing import load_price_table

        prices, _problem = load_price_table(self.price_path)
        shown = self.window.samples.current_filter()
        collection = (
            collection_name(library, shown.collection_id)
            if shown is not None and shown.collection_id is not None
            else None
        )
        return prices, collection

    def open_critique_dialog(self) -> CritiqueRunDialog | None:
        """Open Generate > Critique… on the current library and the collection shown in the tree."""
        window = self.window
        if window.library is None:
            return None
        from thoughtdesk.core.generation.fragments import critique_templates

        prices, collection = self._prices_and_collection(window.library)
        from thoughtdesk.ui.generation.critique_dialog import CritiqueRunDialog

        dialog = CritiqueRunDialog(
            window.library.path,
            critique_templates(self.fragments),
            prices,
            critique_model_list(),
            collection=collection,
            parent=window.dialog_parent,
        )
        self.critique_dialog = dialog
        dialog.run_created.connect(self._run_created)
        dialog.finished.connect(self._critique_dialog_closed)
        dialog.open()
        return dialog

    def open_judge_dialog(self) -> JudgeRunDialog | None:
        """Open Generate > Judge pairs… on the current library and the collection shown in the tree."""
        window = self.window
        if window.library is None:
            return None
        from thoughtdesk.core.generation.fragments import judge_templates

        prices, collection = self._prices_and_collection(window.library)
        from thoughtdesk.ui.generation.judge_dialog import JudgeRunDialog

        models = critique_model_list()
        for layout in models.form.findChildren(QFormLayout):
            label = layout.labelForField(models.form.max_tokens)
            if isinstance(label, QLabel):
                label.setText("Max tokens (verdict)")
        dialog = JudgeRunDialog(
            window.library.path,
            judge_templates(self.fragments),
            prices,
            models,
            collection=collection,
            parent=window.dialog_parent,
        )
        self.judge_dialog = dialog
        dialog.run_created.connect(self._run_created)
        dialog.finished.connect(self._judge_dialog_closed)
        dialog.open()
        return dialog

    def _judge_dialog_closed(self) -> None:
        if self.judge_dialog is not None:
            self.judge_dialog.deleteLater()
        self.judge_dialog = None

    def open_revise_dialog(self) -> RevisionRunDialog | None:
        """Open Generate > Revise from critiques… on the current library and the collection shown."""
        window = self.window
        if window.library is None:
            return None

        prices, collection = self._prices_and_collection(window.library)
        from thoughtdesk.ui.generation.revise_dialog import RevisionRunDialog

        dialog = RevisionRunDialog(
            window.library.path,
            prices,
            critique_model_list("revision"),
            collection=collection,
            parent=window.dialog_parent,
        )
        dialog.run_created.connect(self._run_created)
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()
        return dialog

    def open_autolabel_dialog(self) -> AutolabelRunDialog | None:
        """Open Generate > Label steps by rollouts… on the current library and the collection shown
        (``thoughtdesk autolabel`` in a window; docs/steps.md)."""
        window = self.window
        if window.library is None:
            return None
        prices, collection = self._prices_and_collection(window.library)
        from thoughtdesk.ui.generation.autolabel_dialog import AutolabelRunDialog

        models = critique_model_list("rollout")  # the model chosen in Settings is the current row
        models.form.max_tokens.setValue(256)  # the defaults of `thoughtdesk autolabel`: short rollouts,
        models.form.temperature.setValue(0.7)  # sampled (K of them must differ)
        if models.specs():
            models.replace_selected()
        dialog = AutolabelRunDialog(
            window.library.path, prices, models, collection=collection, parent=window.dialog_parent
        )
        dialog.run_created.connect(self._run_created)
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()
        return dialog

    def open_rationales_dialog(self) -> QDialog | None:
        """Open Generate > Mine rationales… on the current library (pyqtgraph is imported then,
        not at start-up)."""
        from thoughtdesk.ui.generation.rationales_dialog import RationalesDialog

        window = self.window
        if window.library is None:
            return None
        collections = [info.name for info in window.library.collections()]
        dialog = RationalesDialog(window.library.path, collections, self.fragments, parent=window.dialog_parent)
        dialog.finished.connect(dialog.deleteLater)
        dialog.show()
        return dialog

    def _critique_dialog_closed(self) -> None:
        if self.critique_dialog is not None:
            self.critique_dialog.deleteLater()
        self.critique_dialog = None

    def open_planner(self) -> RunPlannerDialog | None:
        """Open the run planner on the current library, collection filter and selected sample."""
        window = self.window
        if window.library is None:
            return None
        from thoughtdesk.core.generation.backends.pricing import load_price_table

        prices, problem = load_price_table(self.price_path)
        selected = window.samples.current_sample_key()
        from thoughtdesk.ui.generation.model_form import ModelList
        from thoughtdesk.ui.generation.planner import RunPlannerDialog

        models = ModelList()
        defaults = model_defaults(QtSettings())
        models.start_from(defaults)
        self.planner = RunPlannerDialog(
            window.library.path,
            self.fragments,
            prices,
            price_path=self.price_path,
            main_filter=window.samples.current_filter(),
            selected_pks=(selected,) if selected is not None else (),
            models=models,
            parent=window.dialog_parent,
        )
        if problem:
            self.planner.price_editor.message.setText(problem)
        # Helper models (rationale, scorer, rater) start from Settings too, offline-aware, and
        # follow the run's main model when it is a local GGUF.
        self.planner.guide.start_from(defaults)
        self.planner.follow_main_model()
        self.planner.run_created.connect(self._run_created)
        self.planner.finished.connect(self._planner_closed)
        self.planner.open()
        return self.planner

    def _planner_closed(self) -> None:
        if self.planner is not None:
            self.planner.deleteLater()
        self.planner = None

    def _run_created(self, run_id: int, limits: RunLimits) -> None:
        if self.runs_panel.is_batch_run(run_id):
            # Sent through a batch API: submitted by a poll, then polled in the background.
            self.runs_panel.reload(then=lambda: self.runs_panel.poll_batch(run_id))
        else:
            self.runs_panel.start_run(run_id, limits)
        self.window.show_tab(self.runs_panel)
