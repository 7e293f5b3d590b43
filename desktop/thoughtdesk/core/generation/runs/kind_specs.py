"""The specs of the kinds of run besides generation runs (:mod:`.spec`): runs over stored CoTs
(critique, revision, pairwise judge, automatic step labels) and a feature's runs (rationale
mining), plus :data:`AnySpec` and :func:`spec_from_document`, which reads a stored run's spec by
its kind. Plain data, JSON without keys, like :class:`~.spec.RunSpec`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar, Literal

from thoughtdesk.core.critiques.prompts import WRAPPERS, Wrapper
from thoughtdesk.core.generation.runs.spec import DEFAULT_COMPLETION_TEMPLATE, ModelSpec, RunSpec, RunSpecError

# --- critique runs ---------------------------------------------------------------------------

#: Which CoTs a critique run covers by the correctness of their (first) answer.
Only = Literal["all", "correct", "incorrect"]
ONLY_CHOICES: tuple[Only, ...] = ("all", "correct", "incorrect")
#: What a critique judges of a CoT: its visible explanation (Digital Socrates) or a reasoning
#: model's thinking (``generated_cot.reasoning``).
Judged = Literal["explanation", "thinking"]
JUDGED_CHOICES: tuple[Judged, ...] = ("explanation", "thinking")


@dataclass(frozen=True, slots=True)
class CotSelection:
    """Which generated CoTs of a collection a critique run judges.

    Empty ``datasets``/``splits`` mean all. ``only`` keeps CoTs whose first answer is scored
    correct or incorrect (CoTs with no scored answer count only for ``all``). ``cot_pks`` (row
    keys of ``generated_cot``) is an explicit selection and overrides the filters. ``limit``
    keeps at most that many CoTs per dataset split: the first in stored order, or a random draw
    with ``seed``. Every CoT counts, including one with no text (a bare answer).
    """

    collection: str
    datasets: tuple[str, ...] = ()
    splits: tuple[str, ...] = ()
    only: Only = "all"
    cot_pks: tuple[int, ...] = ()
    limit: int | None = None
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.only not in ONLY_CHOICES:
            raise RunSpecError(f"--only {self.only!r}: use one of {', '.join(ONLY_CHOICES)}")
        if self.limit is not None and self.limit < 1:
            raise RunSpecError(f"--limit {self.limit}: at least 1 CoT per dataset split")

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for name in ("datasets", "splits", "cot_pks"):
            data[name] = list(data[name])
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CotSelection:
        return cls(
            **{
                **data,
                "datasets": tuple(data.get("datasets") or ()),
                "splits": tuple(data.get("splits") or ()),
                "cot_pks": tuple(data.get("cot_pks") or ()),
            }
        )


def critique_model(model: ModelSpec, wrapper: Wrapper) -> ModelSpec:
    """``model`` set up to receive prompts in ``wrapper`` form.

    The chat form sends system and user messages (OpenAI's chat endpoint; a GGUF's own chat
    template). The ``ds`` and ``llama2`` forms are one raw string that must reach the model as
    it is: OpenAI-compatible servers get it on the completions endpoint, GGUF models as a raw
    completion. Anthropic has no raw completions, so it takes the chat form only.
    """
    if wrapper not in WRAPPERS:
        raise RunSpecError(f"unknown prompt wrapper {wrapper!r}; use one of {', '.join(WRAPPERS)}")
    chat = wrapper == "chat"
    if model.provider == "anthropic" and not chat:
        raise RunSpecError(
            f"{model.label}: Anthropic's API takes chat messages only; use the chat wrapper "
            f"(the {wrapper} wrapper is a raw prompt for a completion model)"
        )
    if model.provider == "openai":
        return replace(model, endpoint="chat" if chat else "completions", chat=chat)
    if model.provider == "llamacpp":
        return replace(model, chat=chat, completion_template=DEFAULT_COMPLETION_TEMPLATE)
    return model


@dataclass(frozen=True, slots=True)
class CritiqueSpec:
    """A critique run: every selected CoT x every critique model (a judge panel).

    ``template`` is the key of a critique template (the built-in ``td-critique-v1`` or one of the
    user's); ``wrappers`` says per model how the filled template reaches it (``chat``, ``ds`` =
    the Digital Socrates models' input, ``llama2``); one wrapper for all models may be given as
    a single entry. Models are adjusted to their wrapper (:func:`critique_model`). ``force``
    sends requests even when an identical one is stored. ``judge``: the CoT's visible
    explanation (the default, as Digital Socrates critiques it) or its thinking; judging the
    thinking leaves out CoTs without one.
    """

    cots: CotSelection
    models: tuple[ModelSpec, ...]
    template: str = "td-critique-v1"
    wrappers: tuple[Wrapper, ...] = ("chat",)
    force: bool = False
    name: str = ""
    judge: Judged = "explanation"

    kind: ClassVar[str] = "critique"

    def __post_init__(self) -> None:
        if not self.models:
            raise RunSpecError("a critique run needs at least one critique model")
        if self.judge not in JUDGED_CHOICES:
            raise RunSpecError(f"--judge {self.judge!r}: use one of {', '.join(JUDGED_CHOICES)}")
        wrappers = self.wrappers or ("chat",)
        if len(wrappers) == 1:
            wrappers = wrappers * len(self.models)
        if len(wrappers) != len(self.models):
            raise RunSpecError(f"{len(self.wrappers)} wrapper(s) for {len(self.models)} model(s): give one or one each")
        # frozen: normalised once here, so the stored spec is what is sent
        object.__setattr__(self, "wrappers", tuple(wrappers))
        object.__setattr__(
            self, "models", tuple(critique_model(m, w) for m, w in zip(self.models, wrappers, strict=True))
        )

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (no secrets)."""
        return {
            "kind": self.kind,
            "cots": self.cots.to_json(),
            "models": [m.to_json() for m in self.models],
            "template": self.template,
            "wrappers": list(self.wrappers),
            "force": self.force,
            "name": self.name,
            "judge": self.judge,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CritiqueSpec:
        return cls(
            cots=CotSelection.from_json(data["cots"]),
            models=tuple(ModelSpec.from_json(m) for m in data["models"]),
            template=data.get("template", "td-critique-v1"),
            wrappers=tuple(data.get("wrappers") or ("chat",)),
            force=bool(data.get("force")),
            name=data.get("name", ""),
            judge=data.get("judge", "explanation"),
        )


@dataclass(frozen=True, slots=True)
class RevisionSpec:
    """A revision run (Digital Socrates' intended use): each selected CoT with a critique is
    given, with that critique's feedback, to each revising model, which writes a revised CoT.

    ``critique_models`` names the critique models whose critiques are used (each one's latest
    critique of a CoT); empty: each CoT's latest critique, whoever wrote it. ``template`` is the
    key of a revision template (the built-in ``td-revise-v1``). ``force`` sends requests even
    when an identical one is stored.
    """

    cots: CotSelection
    models: tuple[ModelSpec, ...]
    critique_models: tuple[str, ...] = ()
    template: str = "td-revise-v1"
    force: bool = False
    name: str = ""

    kind: ClassVar[str] = "revision"

    def __post_init__(self) -> None:
        if not self.models:
            raise RunSpecError("a revision run needs at least one revising model")

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (no secrets)."""
        return {
            "kind": self.kind,
            "cots": self.cots.to_json(),
            "models": [m.to_json() for m in self.models],
            "critique_models": list(self.critique_models),
            "template": self.template,
            "force": self.force,
            "name": self.name,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RevisionSpec:
        return cls(
            cots=CotSelection.from_json(data["cots"]),
            models=tuple(ModelSpec.from_json(m) for m in data["models"]),
            critique_models=tuple(data.get("critique_models") or ()),
            template=data.get("template", "td-revise-v1"),
            force=bool(data.get("force")),
            name=data.get("name", ""),
        )


# --- pairwise judge runs --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class JudgeSpec:
    """A pairwise judge run: the CoTs of each sample compared two at a time, every pair in both
    orders, by every judge model (docs/judges.md).

    ``cots`` selects the CoTs (its ``limit`` is not used: ``limit`` here keeps at most that many
    pairs per dataset split, the first or, with ``seed``, a random draw). ``conditions`` (empty:
    all pairs of a sample's CoTs) keeps pairs of CoTs of two different named conditions; a name
    is a CoT's condition (``model | instruction / trigger / extraction``), its model or its
    prompt condition. ``template`` is a pairwise template key. Judges get chat messages.
    """

    cots: CotSelection
    models: tuple[ModelSpec, ...]
    template: str = "td-pairwise-v1"
    conditions: tuple[str, ...] = ()
    limit: int | None = None
    seed: int | None = None
    force: bool = False
    name: str = ""

    kind: ClassVar[str] = "judge"

    def __post_init__(self) -> None:
        if not self.models:
            raise RunSpecError("a judge run needs at least one judge model")
        if self.limit is not None and self.limit < 1:
            raise RunSpecError(f"--limit {self.limit}: at least 1 pair per dataset split")
        if len(self.conditions) == 1:
            raise RunSpecError(
                f"--conditions {self.conditions[0]!r}: name at least two conditions to compare (or none: all pairs)"
            )
        if len(set(self.conditions)) != len(self.conditions):
            raise RunSpecError(f"--conditions {','.join(self.conditions)}: a condition is named twice")
        object.__setattr__(self, "models", tuple(critique_model(m, "chat") for m in self.models))

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (no secrets)."""
        return {
            "kind": self.kind,
            "cots": self.cots.to_json(),
            "models": [m.to_json() for m in self.models],
            "template": self.template,
            "conditions": list(self.conditions),
            "limit": self.limit,
            "seed": self.seed,
            "force": self.force,
            "name": self.name,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> JudgeSpec:
        return cls(
            cots=CotSelection.from_json(data["cots"]),
            models=tuple(ModelSpec.from_json(m) for m in data["models"]),
            template=data.get("template", "td-pairwise-v1"),
            conditions=tuple(data.get("conditions") or ()),
            limit=data.get("limit"),
            seed=data.get("seed"),
            force=bool(data.get("force")),
            name=data.get("name", ""),
        )


# --- automatic step label runs (Math-Shepherd rollouts) -----------------------------------


@dataclass(frozen=True, slots=True)
class AutolabelSpec:
    """An automatic step label run (docs/steps.md): for every step of every generated CoT of
    ``collection`` (the first ``limit``), the one model in ``models`` (the completer) samples
    ``k`` continuations of the question and the solution up to and including that step (one
    request with ``n`` = k, ``seed`` where the backend takes one); the step is labelled by
    whether any reaches the gold answer. CoTs the completer labelled before are left out unless
    ``force``."""

    collection: str
    models: tuple[ModelSpec, ...]
    k: int = 4
    limit: int | None = None
    seed: int | None = None
    force: bool = False
    name: str = ""

    kind: ClassVar[str] = "autolabel"

    def __post_init__(self) -> None:
        if len(self.models) != 1:
            raise RunSpecError("an automatic step label run has one completer model")
        if not 1 <= self.k <= 64:
            raise RunSpecError(f"--k {self.k}: use 1 to 64 rollouts per step")
        if self.limit is not None and self.limit < 1:
            raise RunSpecError(f"--limit {self.limit}: at least 1 CoT")

    @property
    def model(self) -> ModelSpec:
        return self.models[0]

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (no secrets)."""
        return {
            "kind": self.kind,
            "collection": self.collection,
            "models": [m.to_json() for m in self.models],
            "k": self.k,
            "limit": self.limit,
            "seed": self.seed,
            "force": self.force,
            "name": self.name,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AutolabelSpec:
        return cls(
            collection=data["collection"],
            models=tuple(ModelSpec.from_json(m) for m in data["models"]),
            k=int(data.get("k", 4)),
            limit=data.get("limit"),
            seed=data.get("seed"),
            force=bool(data.get("force")),
            name=data.get("name", ""),
        )


# --- rationale mining runs (RATIONALYST; core/rationales/runs.py) --------------------------

#: The two kinds of rationale run; each is also its requests' step.
RATIONALE_KINDS = ("rationale_extraction", "rationale_filter")


@dataclass(frozen=True, slots=True)
class RationaleRunSpec:
    """A rationale mining run (docs/rationales.md): ``rationale_extraction`` (the one model in
    ``models`` rewrites each document of ``collection`` with rationales inserted) or
    ``rationale_filter`` (it scores each rewrite's rationales). ``options`` are the pass's own
    settings as JSON (source, markers, prompt template, layout, decay, horizon, scorer label),
    read by core/rationales/runs.py, which plans and executes the requests: the engine only
    needs the models and ``force``."""

    kind: str
    collection: str
    models: tuple[ModelSpec, ...]
    options: dict[str, Any] = field(default_factory=dict)
    force: bool = False
    name: str = ""

    def __post_init__(self) -> None:
        if self.kind not in RATIONALE_KINDS:
            raise RunSpecError(f"rationale run kind {self.kind!r}: one of {', '.join(RATIONALE_KINDS)}")
        if len(self.models) != 1:
            raise RunSpecError("a rationale run has one model (the rewriting model, or the scorer)")

    @property
    def model(self) -> ModelSpec:
        return self.models[0]

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (no secrets)."""
        return {
            "kind": self.kind,
            "collection": self.collection,
            "models": [m.to_json() for m in self.models],
            "options": dict(self.options),
            "force": self.force,
            "name": self.name,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RationaleRunSpec:
        return cls(
            kind=data["kind"],
            collection=data["collection"],
            models=tuple(ModelSpec.from_json(m) for m in data["models"]),
            options=dict(data.get("options") or {}),
            force=bool(data.get("force")),
            name=data.get("name", ""),
        )


AnySpec = RunSpec | CritiqueSpec | RevisionSpec | JudgeSpec | AutolabelSpec | RationaleRunSpec


def spec_from_document(document: dict[str, Any]) -> AnySpec:
    """The spec of a stored run document: a generation, critique, revision, judge, autolabel or rationale run's."""
    if document.get("kind") == "critique":
        return CritiqueSpec.from_json(document["spec"])
    if document.get("kind") == "revision":
        return RevisionSpec.from_json(document["spec"])
    if document.get("kind") == "judge":
        return JudgeSpec.from_json(document["spec"])
    if document.get("kind") == "autolabel":
        return AutolabelSpec.from_json(document["spec"])
    if document.get("kind") in RATIONALE_KINDS:
        return RationaleRunSpec.from_json(document["spec"])
    return RunSpec.from_json(document["spec"])
