"""The models part of the run planner: a form for one model and the list of models of the run.

Providers: an OpenAI-compatible server (OpenAI, vLLM, llama.cpp server, Ollama, LM Studio... with
its base URL), Anthropic, and a local GGUF model run in-process by llama.cpp (a model from the
library, Edit ▸ Models…, or a file; context size, threads, GPU layers, the GGUF's chat template
or a raw completion prompt).
API keys are not asked here: they live in the keyring and are read when the run starts.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

from thoughtdesk.core.generation.backends import check_gguf_file
from thoughtdesk.core.generation.backends.base import BackendError
from thoughtdesk.core.generation.defaults import (
    DEFAULT_BASE_URLS,
    DEFAULT_MODELS,
    TEMPERATURE_RANGE,
    ModelDefaults,
    default_chat,
)
from thoughtdesk.core.generation.runs import ModelSpec, RunSpecError
from thoughtdesk.core.generation.runs.spec import DEFAULT_COMPLETION_TEMPLATE
from thoughtdesk.core.models.fit import memory_fit
from thoughtdesk.core.models.gpu import GpuInfo, detect_gpu, offload_plan
from thoughtdesk.core.models.registry import ModelEntry, ModelRegistryError, resolve_local_model
from thoughtdesk.core.thinking import DEFAULT_THINK_TAGS, MAX_TOKENS_FOR_EFFORT, REASONING_EFFORTS, parse_think_tags
from thoughtdesk.ui.base.tasks import Task
from thoughtdesk.ui.qt import (
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QStackedWidget,
    Qt,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.settings.model_choice import RegisteredModelChoice
from thoughtdesk.ui.widgets.labels import plain_label

PROVIDER_CHOICES = (
    ("OpenAI-compatible server", "openai"),
    ("Anthropic", "anthropic"),
    ("Local model (llama.cpp, GGUF file)", "llamacpp"),
)
SPEC_ROLE = Qt.ItemDataRole.UserRole + 1


class _Sampling(TypedDict):
    """The form's sampling fields, the same ``ModelSpec`` arguments for every provider."""

    temperature: float
    max_tokens: int
    extraction_max_tokens: int
    seed: int | None
    timeout: float
    reasoning_effort: str | None
    think_tags: tuple[str, str] | None


class ModelForm(QWidget):
    """Edits one :class:`ModelSpec`; :meth:`spec` builds it or raises RunSpecError/BackendError."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        #: The base URL each provider starts with: the built-in ones, or those set in Settings.
        self.base_urls = dict(DEFAULT_BASE_URLS)
        self.provider = QComboBox(objectName="modelProvider")
        for label, value in PROVIDER_CHOICES:
            self.provider.addItem(label, value)
        self.model_name = QLineEdit(DEFAULT_MODELS["openai"], objectName="modelName")
        self.base_url = QLineEdit(DEFAULT_BASE_URLS["openai"], objectName="modelBaseUrl")
        self.base_url.setToolTip(
            "e.g. http://127.0.0.1:8080/v1 for a llama.cpp server, http://localhost:11434/v1 for Ollama"
        )
        # A server pool: further endpoints serving the same model (docs/serving.md).
        self.more_base_urls = QPlainTextEdit(objectName="modelMoreBaseUrls")
        self.more_base_urls.setPlaceholderText("more servers of the same model, one address per line (a pool)")
        self.more_base_urls.setToolTip(
            "OpenAI-compatible servers (vLLM replicas, llama.cpp servers) serving the same model: the run "
            "spreads its requests over all, the concurrency applies to each, and a server that fails is "
            "left out for a while and its requests sent to the others"
        )
        self.more_base_urls.setTabChangesFocus(True)
        self.more_base_urls.setFixedHeight(self.more_base_urls.fontMetrics().lineSpacing() * 3)
        self.endpoint = QComboBox(objectName="modelEndpoint")
        self.endpoint.addItem("Chat Completions", "chat")
        self.endpoint.addItem("Completions (raw prompt)", "completions")

        #: The model library's models (Edit ▸ Models…): choosing one fills the path below.
        self.registered = RegisteredModelChoice()
        self.registered.currentIndexChanged.connect(self._registered_chosen)
        self.local_note = plain_label(name="localModelNote")
        self.local_note.setStyleSheet("color: #b3261e;")
        self.local_note.hide()
        self.gguf_path = QLineEdit(objectName="ggufPath")
        self.gguf_path.setPlaceholderText("/path/to/model.gguf, or a registered model's name")
        self.gguf_path.textChanged.connect(self._path_changed)
        browse = QPushButton("Choose…", objectName="chooseGguf")
        browse.clicked.connect(self.choose_gguf)
        gguf_row = QWidget()  # a widget, not a layout: a form row's label needs a buddy for its "&"
        gguf_layout = QHBoxLayout(gguf_row)
        gguf_layout.setContentsMargins(0, 0, 0, 0)
        gguf_layout.addWidget(self.gguf_path, 1)
        gguf_layout.addWidget(browse)
        self.n_ctx = QSpinBox(objectName="nCtx", minimum=128, maximum=1_048_576, value=2048, singleStep=512)
        self.n_threads = QSpinBox(objectName="nThreads", minimum=0, maximum=256, value=0)
        self.n_threads.setSpecialValueText("automatic")
        self.n_gpu_layers = QSpinBox(objectName="nGpuLayers", minimum=-1, maximum=1000, value=0)
        self.n_gpu_layers.setSpecialValueText("all")
        #: Whether the chosen library model fits the GPU (detection runs once, in the background).
        self.gpu_note = plain_label(name="gpuNote")
        self.gpu_note.hide()
        self._gpu_task: Task[GpuInfo] | None = None
        self.template = QComboBox(objectName="localTemplate")
        self.template.addItem("The GGUF's chat template", True)
        self.template.addItem("Raw completion (prompt as it is, or wrapped below)", False)
        self.template.setCurrentIndex(0 if default_chat("llamacpp") else 1)
        self.completion_template = QPlainTextEdit(objectName="completionTemplate")
        self.completion_template.setPlaceholderText(
            "{prompt}   (e.g. <start_of_turn>user\n{prompt}<end_of_turn>\n<start_of_turn>model\n)"
        )
        self.completion_template.setToolTip(
            "How each prompt is wrapped for a raw completion: {prompt} "
            "marks where the prompt goes. Empty: the prompt as it is."
        )
        self.completion_template.setFixedHeight(self.completion_template.fontMetrics().lineSpacing() * 4)
        self.template.currentIndexChanged.connect(
            lambda _i: self.completion_template.setEnabled(not self.template.currentData())
        )
        self.completion_template.setEnabled(False)

        self.temperature = QDoubleSpinBox(
            objectName="temperature", minimum=TEMPERATURE_RANGE[0], maximum=TEMPERATURE_RANGE[1], singleStep=0.1
        )
        self.max_tokens = QSpinBox(objectName="maxTokens", minimum=1, maximum=100_000, value=256)
        self.extraction_max_tokens = QSpinBox(objectName="extractionMaxTokens", minimum=1, maximum=10_000, value=32)
        self.seed = QSpinBox(objectName="modelSeed", minimum=-1, maximum=2_147_483_647, value=-1)
        self.seed.setSpecialValueText("none")
        self.timeout = QDoubleSpinBox(objectName="timeout", minimum=1, maximum=3600, value=120, suffix=" s")
        # Reasoning models (docs/reasoning.md): how hard they think, and how their thinking is found.
        self.reasoning_effort = QComboBox(objectName="reasoningEffort")
        self.reasoning_effort.addItem("The provider's default", None)
        for effort in REASONING_EFFORTS:
            self.reasoning_effort.addItem(effort, effort)
        self.reasoning_effort.setToolTip(
            "Sent as reasoning_effort to OpenAI-compatible servers, as a thinking budget to Anthropic and as "
            "enable_thinking to a local model's chat template; 'none' turns thinking off where it can be"
        )
        self.reasoning_effort.currentIndexChanged.connect(self._effort_changed)
        self.think_tags = QLineEdit(",".join(DEFAULT_THINK_TAGS), objectName="thinkTags")
        self.think_tags.setToolTip(
            "The tags the model writes around its thinking, split off the visible text (OPEN,CLOSE); "
            "empty or 'none': never split"
        )
        #: The reasoning effort set in Settings per provider (start_from).
        self.efforts: dict[str, str] = {}

        remote = QWidget()
        remote_form = QFormLayout(remote)
        remote_form.setContentsMargins(0, 0, 0, 0)
        remote_form.addRow("&Model", self.model_name)
        remote_form.addRow("&Base URL", self.base_url)
        remote_form.addRow("More ser&vers", self.more_base_urls)
        remote_form.addRow("&Endpoint", self.endpoint)
        local = QWidget()
        local_form = QFormLayout(local)
        local_form.setContentsMargins(0, 0, 0, 0)
        local_form.addRow("Library mo&del", self.registered)
        local_form.addRow(self.local_note)
        local_form.addRow("GGUF &file", gguf_row)
        gguf_label = local_form.labelForField(gguf_row)
        if isinstance(gguf_label, QLabel):
            gguf_label.setBuddy(self.gguf_path)  # Alt+F goes to the path, not the row
        local_form.addRow("&Context size (tokens)", self.n_ctx)
        local_form.addRow("&Threads", self.n_threads)
        local_form.addRow("&GPU layers", self.n_gpu_layers)
        local_form.addRow(self.gpu_note)
        local_form.addRow("&Prompt format", self.template)
        local_form.addRow("Completion te&mplate", self.completion_template)
        self.pages = QStackedWidget()
        self.pages.addWidget(remote)
        self.pages.addWidget(local)

        form = QFormLayout()
        form.addRow("&Provider", self.provider)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(form)
        layout.addWidget(self.pages)
        sampling = QFormLayout()
        sampling.addRow("&Temperature", self.temperature)
        sampling.addRow("Max tokens (CoT)", self.max_tokens)
        sampling.addRow("Max tokens (extraction)", self.extraction_max_tokens)
        sampling.addRow("&Seed", self.seed)
        sampling.addRow("Time&out per call", self.timeout)
        sampling.addRow("&Reasoning effort", self.reasoning_effort)
        sampling.addRow("Thin&k tags", self.think_tags)
        layout.addLayout(sampling)
        self.provider.currentIndexChanged.connect(self._provider_changed)

    def _provider_changed(self) -> None:
        provider = self.provider.currentData()
        self.pages.setCurrentIndex(1 if provider == "llamacpp" else 0)
        self.endpoint.setEnabled(provider == "openai")
        self.more_base_urls.setEnabled(provider == "openai")
        if provider == "anthropic":
            self.base_url.setText(self.base_urls["anthropic"])
        elif provider == "openai" and self.base_url.text() in ("", self.base_urls["anthropic"]):
            self.base_url.setText(self.base_urls["openai"])
        if provider in DEFAULT_MODELS and self.model_name.text() in DEFAULT_MODELS.values():
            self.model_name.setText(DEFAULT_MODELS[provider])
        if self.efforts:
            self.reasoning_effort.setCurrentIndex(max(0, self.reasoning_effort.findData(self.efforts.get(provider))))

    def _effort_changed(self) -> None:
        """A model asked to think gets room for a typical trace, unless max tokens were raised."""
        effort = self.reasoning_effort.currentData()
        if effort and self.max_tokens.value() < MAX_TOKENS_FOR_EFFORT[effort]:
            self.max_tokens.setValue(MAX_TOKENS_FOR_EFFORT[effort])

    def _registered_chosen(self) -> None:
        entry = self.registered.entry()
        if entry is not None:
            self.gguf_path.setText(entry.path)  # its own signal then shows a missing file's reason
            if self.registered.status() == "missing":
                self.gpu_note.hide()
            else:
                self.plan_gpu(entry)
        self._show_note()

    def plan_gpu(self, entry: ModelEntry) -> Task[GpuInfo]:
        """Offer GPU layers for ``entry``: all when it fits the GPU, some or none when not, with
        the reason under the field. Detection (llama_cpp's library, nvidia-smi) runs in a worker."""
        self.gpu_note.setText("Checking for a GPU…")
        self.gpu_note.show()
        n_ctx = self.n_ctx.value()

        def apply(gpu: GpuInfo) -> None:
            if self.registered.entry() != entry:
                return  # another model was chosen meanwhile
            plan = offload_plan(gpu, memory_fit(entry, n_ctx, None).needed, entry.size, entry.block_count)
            self.n_gpu_layers.setValue(plan.n_gpu_layers)
            self.gpu_note.setText(f"GPU: {plan.describe()}")

        self._gpu_task = Task(lambda _context: detect_gpu()).on_success(apply).owned_by(self).start()
        return self._gpu_task

    def _path_changed(self, text: str) -> None:
        self.registered.select_path(text)
        if self.registered.entry() is None:
            self.gpu_note.hide()  # said of a library model: not of this file
        self._show_note()

    def _show_note(self) -> None:
        reason = self.registered.current_reason()
        self.local_note.setText(reason)
        self.local_note.setVisible(bool(reason))

    def start_from(self, defaults: ModelDefaults, *, efforts: bool = True) -> None:
        """Start from what the user chose in the first-run wizard and Settings: the local model
        (a GGUF path) and the enabled providers with their base URLs. The local model comes first
        (it works offline), else the first provider (:meth:`ModelDefaults.first_choice`).
        ``efforts``: the reasoning effort set per provider too (a run's CoT models; critique and
        helper models keep the provider's default, as ``thoughtdesk generate`` does)."""
        for provider in self.base_urls:
            url = defaults.base_url(provider)
            if url:
                self.base_urls[provider] = url
        if defaults.local_model:
            self.gguf_path.setText(defaults.local_model)
        self.efforts = dict(defaults.efforts) if efforts else {}
        choice = defaults.first_choice()
        if choice is None and defaults.offline:
            choice = "llamacpp"  # offline, a remote default could not be called: a local model it is
        if choice is None or self.provider.findData(choice) < 0:
            return
        # The remote page shows the chosen provider's URL (OpenAI's when the local model is chosen).
        self.base_url.setText(self.base_urls.get(choice, self.base_urls["openai"]))
        self.provider.setCurrentIndex(self.provider.findData(choice))
        self._provider_changed()

    def choose_gguf(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Choose a GGUF model file", str(Path.home()), "GGUF models (*.gguf);;All files (*)"
        )
        if path:
            self.gguf_path.setText(path)

    def set_spec(self, spec: ModelSpec) -> None:
        """Fill the form from ``spec`` (used to edit a model already in the list)."""
        self.provider.setCurrentIndex(self.provider.findData(spec.provider))
        if spec.provider == "llamacpp":
            self.gguf_path.setText(spec.model)
        else:
            self.model_name.setText(spec.model)
            self.base_url.setText(spec.base_url or "")
            self.more_base_urls.setPlainText("\n".join(spec.more_base_urls))
        self.endpoint.setCurrentIndex(self.endpoint.findData(spec.endpoint))
        self.n_ctx.setValue(spec.n_ctx)
        self.n_threads.setValue(spec.n_threads or 0)
        self.n_gpu_layers.setValue(spec.n_gpu_layers)
        self.template.setCurrentIndex(0 if spec.chat else 1)
        self.completion_template.setPlainText(
            "" if spec.completion_template == DEFAULT_COMPLETION_TEMPLATE else spec.completion_template
        )
        self.temperature.setValue(spec.temperature)
        self.max_tokens.setValue(spec.max_tokens)
        self.extraction_max_tokens.setValue(spec.extraction_max_tokens)
        self.seed.setValue(-1 if spec.seed is None else spec.seed)
        self.timeout.setValue(spec.timeout)
        self.reasoning_effort.setCurrentIndex(max(0, self.reasoning_effort.findData(spec.reasoning_effort)))
        self.max_tokens.setValue(spec.max_tokens)  # as stored, whatever the effort proposes
        self.think_tags.setText("none" if spec.think_tags is None else ",".join(spec.think_tags))

    def _think_tags(self) -> tuple[str, str] | None:
        try:
            return parse_think_tags(self.think_tags.text())
        except ValueError as error:
            raise RunSpecError(f"Think tags: {error}") from None

    def spec(self) -> ModelSpec:
        """The model described by the form; RunSpecError or ModelFileError saying what to fix."""
        provider = self.provider.currentData()
        common = _Sampling(
            temperature=self.temperature.value(),
            max_tokens=self.max_tokens.value(),
            extraction_max_tokens=self.extraction_max_tokens.value(),
            seed=None if self.seed.value() < 0 else self.seed.value(),
            timeout=self.timeout.value(),
            reasoning_effort=self.reasoning_effort.currentData(),
            think_tags=self._think_tags(),
        )
        if provider == "llamacpp":
            text = self.gguf_path.text().strip()
            if not text:
                raise RunSpecError("llamacpp: choose a model from the library or a .gguf model file")
            if self.registered.status() == "missing":  # a changed file may still load: only said
                raise RunSpecError(self.registered.current_reason())
            try:  # a file, or a registered model's name typed in the path field
                path = resolve_local_model(text)
            except ModelRegistryError as error:
                raise RunSpecError(str(error)) from None
            check_gguf_file(path)  # a missing or non-GGUF file is named now, not mid-run
            return ModelSpec(
                provider="llamacpp",
                model=str(Path(path).expanduser()),
                chat=bool(self.template.currentData()),
                n_ctx=self.n_ctx.value(),
                n_threads=self.n_threads.value() or None,
                n_gpu_layers=self.n_gpu_layers.value(),
                completion_template=self._completion_template(),
                **common,
            )
        # The Base URL line may itself list several addresses separated by commas.
        urls = [part.strip() for part in self.base_url.text().split(",") if part.strip()]
        if provider == "openai":
            urls += [line.strip() for line in self.more_base_urls.toPlainText().replace(",", "\n").splitlines()]
        urls = [url for url in urls if url]
        for url in urls:
            if not url.startswith(("http://", "https://")):
                raise RunSpecError(f"{provider}: a base URL must start with http:// or https:// (got {url!r})")
        return ModelSpec(
            provider=provider,
            model=self.model_name.text().strip(),
            base_url=urls[0] if urls else None,
            more_base_urls=tuple(urls[1:]),
            endpoint=self.endpoint.currentData() if provider == "openai" else "chat",
            chat=default_chat(provider, self.endpoint.currentData()),
            **common,
        )

    def _completion_template(self) -> str:
        text = self.completion_template.toPlainText()
        return text if text.strip() and not self.template.currentData() else DEFAULT_COMPLETION_TEMPLATE


def describe(spec: ModelSpec) -> str:
    """One line for the list: provider, model, where, and the main parameters."""
    return spec.describe()


class ModelList(QWidget):
    """The models of the run: the form, Add/Replace/Remove, and the list; ``changed`` on edits."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.form = ModelForm()
        self.list = QListWidget(objectName="modelList")
        self.list.currentRowChanged.connect(self._row_changed)
        self.error = plain_label(name="modelError")
        self.error.setStyleSheet("color: #b3261e;")
        add = QPushButton("&Add model", objectName="addModel")
        add.clicked.connect(self.add_from_form)
        update = QPushButton("Replace selected", objectName="replaceModel")
        update.clicked.connect(self.replace_selected)
        remove = QPushButton("Remove", objectName="removeModel")
        remove.clicked.connect(self.remove_selected)
        buttons = QHBoxLayout()
        for button in (add, update, remove):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.form)
        layout.addLayout(buttons)
        layout.addWidget(self.error)
        layout.addWidget(QLabel("Models in this run:"))
        layout.addWidget(self.list, 1)

    def start_from(self, defaults: ModelDefaults, *, efforts: bool = True) -> None:
        """The form from the wizard's and Settings' choices and, when they name a model, that
        model already in the run's list (a first run needs no click on Add model; a local model
        file that has gone missing is said under the form instead). ``efforts``: see
        :meth:`ModelForm.start_from`."""
        self.form.start_from(defaults, efforts=efforts)
        if defaults.first_choice() is not None:
            self.add_from_form()

    def specs(self) -> list[ModelSpec]:
        return [self.list.item(row).data(SPEC_ROLE) for row in range(self.list.count())]

    def add(self, spec: ModelSpec) -> None:
        item = QListWidgetItem(describe(spec))
        item.setData(SPEC_ROLE, spec)
        self.list.addItem(item)
        self.list.setCurrentItem(item)
        self.changed.emit()

    def _from_form(self) -> ModelSpec | None:
        try:
            spec = self.form.spec()
        except (RunSpecError, BackendError) as error:
            self.error.setText(str(error))
            return None
        self.error.setText("")
        return spec

    def add_from_form(self) -> ModelSpec | None:
        spec = self._from_form()
        if spec is not None:
            self.add(spec)
        return spec

    def replace_selected(self) -> None:
        item = self.list.currentItem()
        spec = self._from_form()
        if item is None or spec is None:
            return
        item.setData(SPEC_ROLE, spec)
        item.setText(describe(spec))
        self.changed.emit()

    def remove_selected(self) -> None:
        row = self.list.currentRow()
        if row >= 0:
            self.list.takeItem(row)
            self.changed.emit()

    def _row_changed(self, row: int) -> None:
        if row >= 0:
            self.form.set_spec(self.list.item(row).data(SPEC_ROLE))
