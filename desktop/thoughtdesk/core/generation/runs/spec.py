"""What a run is asked to do: which samples, which prompt fragments, which models, how often.

A :class:`RunSpec` is plain data and round-trips through JSON (``to_json``/``from_json``); it is
stored with the run, so a run can be explained and resumed later. It never holds an API key:
keys are looked up (keyring, then environment) right before a backend is built.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, Literal

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.defaults import DEFAULT_BASE_URLS
from thoughtdesk.core.generation.prompts import PromptMode
from thoughtdesk.core.models.registry import ModelRegistryError, resolve_local_model
from thoughtdesk.core.settings.network import host_of_url, is_loopback_host
from thoughtdesk.core.thinking import DEFAULT_THINK_TAGS, check_effort

Endpoint = Literal["chat", "completions"]
#: Providers a :class:`ModelSpec` may name (``llamacpp`` = in-process GGUF model).
PROVIDERS = ("openai", "anthropic", "llamacpp")
#: A raw completion prompt sent as it is.
DEFAULT_COMPLETION_TEMPLATE = "{prompt}"


class RunSpecError(ThoughtDeskError):
    """A run specification that cannot be planned (bad model string, empty selection...)."""


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """One model to call and its sampling parameters.

    ``provider`` is ``openai`` (any OpenAI-compatible server: set ``base_url``), ``anthropic`` or
    ``llamacpp`` (then ``model`` is the path of a ``.gguf`` file). ``temperature`` is the sampling
    temperature, ``max_tokens`` the most tokens generated per answer, ``timeout`` seconds per call,
    ``seed`` the base seed (replicate ``i`` of a self-consistency run uses ``seed + i``).
    ``chat=True`` sends the prompt as one user chat message (the GGUF's chat template for
    llamacpp); ``endpoint`` picks OpenAI's chat or legacy completions endpoint.
    ``completion_template`` (llamacpp without ``chat``) wraps each prompt, e.g. in a model's turn
    markers: ``{prompt}`` stands for the prompt text; the default sends the prompt as it is.
    ``more_base_urls`` (``openai`` only) are further endpoints serving the same model: with them
    the model is served by a pool (requests spread over ``base_url`` and these; see
    :mod:`thoughtdesk.core.generation.backends.pool`). Specs stored before pools had no such field
    and read as a pool of one.
    """

    provider: str
    model: str
    base_url: str | None = None
    endpoint: Endpoint = "chat"
    chat: bool = False
    temperature: float = 0.0
    max_tokens: int = 256
    extraction_max_tokens: int = 32
    seed: int | None = None
    stop: tuple[str, ...] = ()
    timeout: float = 120.0
    n_ctx: int = 2048  # llamacpp only: context size in tokens
    n_threads: int | None = None  # llamacpp only
    n_gpu_layers: int = 0  # llamacpp only
    completion_template: str = DEFAULT_COMPLETION_TEMPLATE  # llamacpp raw completion only
    more_base_urls: tuple[str, ...] = ()  # openai only: a server pool's further endpoints
    #: How hard a reasoning model thinks (core/thinking.REASONING_EFFORTS); None:
    #: the provider's default. Mapped per provider: OpenAI-compatible ``reasoning_effort``,
    #: Anthropic ``thinking.budget_tokens``, the chat template's ``enable_thinking`` (local).
    reasoning_effort: str | None = None
    #: The tags the model writes around its thinking in the text; None: never split.
    think_tags: tuple[str, str] | None = DEFAULT_THINK_TAGS
    #: openai only: ask chat answers as a stream of events (thinking deltas included).
    stream: bool = False

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "reasoning_effort", check_effort(self.reasoning_effort))
        except ValueError as error:
            raise RunSpecError(f"{self.provider}: {error}") from None
        if self.think_tags is not None:
            tags = tuple(self.think_tags)
            if len(tags) != 2 or not all(isinstance(t, str) and t for t in tags) or tags[0] == tags[1]:
                raise RunSpecError(f"{self.provider}: think tags {self.think_tags!r}: give two different tags")
            object.__setattr__(self, "think_tags", tags)
        if self.provider not in PROVIDERS:
            raise RunSpecError(f"unknown provider {self.provider!r}; use one of {', '.join(PROVIDERS)}")
        if self.more_base_urls:
            if self.provider != "openai":
                raise RunSpecError(
                    f"{self.provider}: several base URLs (a server pool) work only with OpenAI-compatible servers"
                )
            if not self.base_url:
                raise RunSpecError(f"{self.provider}: a server pool needs its first base URL too")
            urls = [url.rstrip("/") for url in self.base_urls]
            if len(set(urls)) != len(urls):
                raise RunSpecError(f"--base-url: an address is named twice in the pool ({', '.join(urls)})")
        if not self.model:
            raise RunSpecError(f"{self.provider}: a model name is needed (PROVIDER:MODEL)")
        if "{prompt}" not in self.completion_template:
            raise RunSpecError(
                f"{self.provider}: the completion template must contain {{prompt}} "
                f"where the prompt goes (got {self.completion_template!r})"
            )

    @property
    def base_urls(self) -> tuple[str, ...]:
        """Every endpoint's base URL (one, or a pool's several; empty: the provider's default)."""
        return (self.base_url, *self.more_base_urls) if self.base_url else ()

    @classmethod
    def parse(cls, text: str, **options: Any) -> ModelSpec:
        """``openai:gpt-4o-mini``, ``anthropic:claude-3-5-haiku-latest``, ``llamacpp:PATH.gguf`` or
        ``llamacpp:NAME`` (a model registered with ``thoughtdesk models add``, resolved to its file)."""
        provider, sep, model = text.partition(":")
        if not sep or not model:
            raise RunSpecError(
                f"--model {text!r}: write PROVIDER:MODEL, e.g. openai:gpt-4o-mini, "
                "anthropic:claude-3-5-haiku-latest or llamacpp:/path/model.gguf"
            )
        if provider == "llamacpp":
            try:  # a file, or a name from the model library (`thoughtdesk models list`)
                model = resolve_local_model(model)
            except ModelRegistryError as error:
                raise RunSpecError(str(error)) from None
        return cls(provider=provider, model=model, **options)

    @property
    def label(self) -> str:
        """How the model is shown: ``provider:model`` (file name only for local models)."""
        name = Path(self.model).name if self.provider == "llamacpp" else self.model
        return f"{self.provider}:{name}"

    def describe(self) -> str:
        """One line for people: provider, model, where it runs, how prompts reach it, how it
        samples (the planner's list of models and ``thoughtdesk generate``'s plan)."""
        if self.provider == "llamacpp":
            wrapped = "" if self.chat or self.completion_template == DEFAULT_COMPLETION_TEMPLATE else " (wrapped)"
            where = (
                f"ctx {self.n_ctx}, threads {self.n_threads or 'auto'}, GPU layers {self.n_gpu_layers}, "
                f"{'chat template' if self.chat else 'raw completion'}{wrapped}"
            )
        else:
            where = f"{self.base_url or DEFAULT_BASE_URLS[self.provider]}, {self.endpoint}"
            if self.more_base_urls:
                where = f"pool of {len(self.base_urls)} servers: {', '.join(self.base_urls)}, {self.endpoint}"
        seed = "" if self.seed is None else f", seed {self.seed}"
        effort = "" if self.reasoning_effort is None else f", reasoning effort {self.reasoning_effort}"
        return f"{self.label}  ({where}; T={self.temperature:g}, max {self.max_tokens} tokens{seed}{effort})"

    @property
    def price_provider(self) -> str:
        """The provider name in the price table (a local OpenAI-compatible server is free)."""
        if self.provider == "openai" and self.base_url and all(_is_local(url) for url in self.base_urls):
            return "local"
        return self.provider

    @property
    def model_name(self) -> str:
        """The model name sent to the provider (the file name for local GGUF models)."""
        return Path(self.model).name if self.provider == "llamacpp" else self.model

    def backend_id(self) -> str:
        """Names the backend precisely for request fingerprints (provider, address, endpoint)."""
        if self.provider == "llamacpp":
            wrapped = (
                ""
                if self.completion_template == DEFAULT_COMPLETION_TEMPLATE
                else "#template=" + hashlib.sha256(self.completion_template.encode()).hexdigest()[:16]
            )
            return f"llamacpp@{self.model}#ctx={self.n_ctx}#chat={self.chat}{wrapped}"
        # A pool names all its endpoints (one endpoint's id is unchanged, so stored fingerprints
        # of runs made before pools still match).
        url = ",".join(url.rstrip("/") for url in self.base_urls or (DEFAULT_BASE_URLS[self.provider],))
        return f"{self.provider}@{url}#{self.endpoint}"

    def params(self) -> dict[str, Any]:
        """The sampling parameters as JSON-ready values (stored with every CoT)."""
        return {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "extraction_max_tokens": self.extraction_max_tokens,
            "seed": self.seed,
            "stop": list(self.stop),
            "timeout": self.timeout,
            "chat": self.chat,
            "endpoint": self.endpoint,
            **(
                {"completion_template": self.completion_template}
                if self.completion_template != DEFAULT_COMPLETION_TEMPLATE
                else {}
            ),
            **({"reasoning_effort": self.reasoning_effort} if self.reasoning_effort is not None else {}),
        }

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["stop"] = list(self.stop)
        if self.more_base_urls:
            data["more_base_urls"] = list(self.more_base_urls)
        else:
            # Left out for one endpoint: a spec JSON stays what it was before pools existed.
            data.pop("more_base_urls")
        # Likewise the reasoning settings at their defaults (specs stored before issue 24).
        if self.reasoning_effort is None:
            data.pop("reasoning_effort")
        if self.think_tags == DEFAULT_THINK_TAGS:
            data.pop("think_tags")
        else:
            data["think_tags"] = None if self.think_tags is None else list(self.think_tags)
        if not self.stream:
            data.pop("stream")
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModelSpec:
        return cls(
            **{
                **data,
                "stop": tuple(data.get("stop") or ()),
                "more_base_urls": tuple(data.get("more_base_urls") or ()),
                "think_tags": (tuple(data["think_tags"]) if data.get("think_tags") is not None else None)
                if "think_tags" in data
                else DEFAULT_THINK_TAGS,
            }
        )


@functools.lru_cache(maxsize=256)
def _is_local(url: str) -> bool:
    return is_loopback_host(host_of_url(url))


# --- guided generation -------------------------------------------------------------------

GuideMethod = Literal["rationalyst", "stepwise", "process"]
GUIDE_METHODS: tuple[GuideMethod, ...] = ("rationalyst", "stepwise", "process")
Supervision = Literal["implicit", "explicit"]
SUPERVISIONS: tuple[Supervision, ...] = ("implicit", "explicit")


def as_scorer(model: ModelSpec) -> ModelSpec:
    """``model`` as a scorer is asked: an OpenAI-compatible one on its completions endpoint, the
    only one that echoes the log-probs of given text."""
    if model.provider == "openai" and (model.endpoint != "completions" or model.chat):
        return replace(model, endpoint="completions", chat=False)
    return model


#: How a process guide's rater judges candidates (GuideSpec.rater_style).
RATER_STYLES = ("rating", "processbench")


@dataclass(frozen=True, slots=True)
class GuideSpec:
    """How a guided run writes each CoT: one step (sentence) at a time (docs/rationales.md).

    ``method``: ``rationalyst`` (a rationale model writes a rationale for the trajectory so far,
    the agent samples ``candidates`` next steps; ``implicit`` supervision keeps the candidate with
    the best mean token log-prob under ``scorer_model`` given trajectory + rationale, with weights
    ``decay**i`` when ``decay`` is set; ``explicit`` supervision puts the rationale in the agent's
    context), ``stepwise`` (the plain step-by-step baseline: no rationale, one candidate) or
    ``process`` (process supervision: ``rater_model`` rates each candidate 0-3, the best is kept).
    The scorer defaults to the rationale model. Steps are sampled at ``step_temperature`` with at
    most ``step_max_tokens`` tokens; the trajectory stops at "The answer is" (and variants) or
    after ``max_steps`` steps.
    """

    method: GuideMethod = "rationalyst"
    supervision: Supervision = "implicit"
    rationale_model: ModelSpec | None = None
    scorer_model: ModelSpec | None = None
    rater_model: ModelSpec | None = None
    candidates: int = 3
    max_steps: int = 15
    step_temperature: float = 0.7
    step_max_tokens: int = 64
    rationale_max_tokens: int = 64
    decay: float | None = None
    #: ``process``: how the rater judges a candidate: ``rating`` (0-3, the rater prompt) or
    #: ``processbench`` (a step judge with ProcessBench's template over the steps so far and the
    #: candidate: 1 when it finds no wrong step, 0 when the candidate is the first wrong one,
    #: 0.5 when an earlier step is; docs/steps.md).
    rater_style: str = "rating"

    def __post_init__(self) -> None:
        if self.method not in GUIDE_METHODS:
            raise RunSpecError(f"--guide {self.method!r}: use one of {', '.join(GUIDE_METHODS)}")
        if self.supervision not in SUPERVISIONS:
            raise RunSpecError(f"--supervision {self.supervision!r}: use one of {', '.join(SUPERVISIONS)}")
        if self.method == "rationalyst" and self.rationale_model is None:
            raise RunSpecError("--guide rationalyst needs --rationale-model PROVIDER:MODEL")
        if self.method == "process" and self.rater_model is None:
            raise RunSpecError("--guide process needs --rater-model PROVIDER:MODEL")
        if self.rater_style not in RATER_STYLES:
            raise RunSpecError(f"--rater-style {self.rater_style!r}: use one of {', '.join(RATER_STYLES)}")
        if self.candidates < 1 or self.max_steps < 1:
            raise RunSpecError("--candidates and --max-steps must be at least 1")
        if self.decay is not None and not 0 < self.decay <= 1:
            raise RunSpecError(f"--decay {self.decay}: use a number in (0, 1]")
        scorer = self.scorer
        if scorer is not None and scorer.provider == "anthropic":
            raise RunSpecError(
                f"{scorer.label} cannot score text: Anthropic's API returns no token log-probs, so implicit "
                "supervision cannot start with it; choose a scorer on llama.cpp (a local .gguf file, "
                "--scorer-model llamacpp:PATH.gguf) or an OpenAI-compatible server whose /v1/completions echoes "
                "log-probs (vLLM, llama-cpp-python's server), or explicit supervision"
            )

    @property
    def scorer(self) -> ModelSpec | None:
        """The model that scores candidates under implicit supervision (None otherwise). An
        OpenAI-compatible scorer is asked on its completions endpoint, the only one that echoes
        the log-probs of given text."""
        if self.method != "rationalyst" or self.supervision != "implicit":
            return None
        model = self.scorer_model or self.rationale_model
        return None if model is None else as_scorer(model)

    @property
    def n_candidates(self) -> int:
        """Candidates sampled per step: one for the plain step-by-step baseline and for explicit
        supervision (the agent reads the rationale and writes its step; nothing picks among several)."""
        if self.method == "stepwise" or (self.method == "rationalyst" and self.supervision == "explicit"):
            return 1
        return self.candidates

    @property
    def label(self) -> str:
        """The condition name in evaluations: ``rationalyst-implicit``, ``stepwise``, ``process``."""
        if self.method == "rationalyst":
            decay = f"-decay{self.decay:g}" if self.decay is not None and self.supervision == "implicit" else ""
            return f"rationalyst-{self.supervision}{decay}"
        return self.method

    def roles(self) -> dict[str, ModelSpec]:
        """The helper models this guide calls, by role (``rationale``, ``scorer``, ``rater``)."""
        out: dict[str, ModelSpec] = {}
        if self.method == "rationalyst" and self.rationale_model is not None:
            out["rationale"] = self.rationale_model
            if self.scorer is not None:
                out["scorer"] = self.scorer
        if self.method == "process" and self.rater_model is not None:
            out["rater"] = self.rater_model
        return out

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            name: getattr(self, name)
            for name in (
                "method",
                "supervision",
                "candidates",
                "max_steps",
                "step_temperature",
                "step_max_tokens",
                "rationale_max_tokens",
                "decay",
            )
        }
        if self.rater_style != "rating":  # written only when used: older specs stay as they were
            data["rater_style"] = self.rater_style
        for name in ("rationale_model", "scorer_model", "rater_model"):
            model = getattr(self, name)
            data[name] = None if model is None else model.to_json()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GuideSpec:
        def model(name: str) -> ModelSpec | None:
            return None if data.get(name) is None else ModelSpec.from_json(data[name])

        decay = data.get("decay")
        return cls(
            method=data.get("method", "rationalyst"),
            supervision=data.get("supervision", "implicit"),
            rationale_model=model("rationale_model"),
            scorer_model=model("scorer_model"),
            rater_model=model("rater_model"),
            candidates=int(data.get("candidates", 3)),
            max_steps=int(data.get("max_steps", 15)),
            step_temperature=float(data.get("step_temperature", 0.7)),
            step_max_tokens=int(data.get("step_max_tokens", 64)),
            rationale_max_tokens=int(data.get("rationale_max_tokens", 64)),
            decay=None if decay is None else float(decay),
            rater_style=str(data.get("rater_style", "rating")),
        )


@dataclass(frozen=True, slots=True)
class SampleSelection:
    """Which samples of a collection a run covers.

    Empty ``datasets``/``splits`` mean all. ``sample_pks`` (library row keys) is an explicit
    selection and overrides the other filters. ``search`` is a full-text filter (every word must
    occur), ``answer_type`` restricts to one ThoughtSource type. ``limit`` keeps at most that many
    samples per dataset split: the first ones in stored order, or a random draw with ``seed``.
    """

    collection: str
    datasets: tuple[str, ...] = ()
    splits: tuple[str, ...] = ()
    sample_pks: tuple[int, ...] = ()
    search: str = ""
    answer_type: str | None = None
    limit: int | None = None
    seed: int | None = None


@dataclass(frozen=True, slots=True)
class FewShotSpec:
    """Few-shot exemplars: ``k`` solved samples (with reference CoTs) from split ``split`` of
    the same dataset, drawn with ``seed``; the sample being asked is never its own exemplar."""

    k: int
    split: str = "train"
    seed: int = 0


@dataclass(frozen=True, slots=True)
class RunSpec:
    """A run: samples x instructions x triggers x extractions x models x ``n`` replicates.

    Fragment entries are keys of the fragment library (None = no such fragment). In one-step
    mode the answer is read from the CoT and only the first extraction is used (for few-shot
    exemplars); in two-step mode every extraction is a variant. ``force`` sends requests even
    when an identical one (same backend, model, parameters, prompt, seed) is already stored.
    """

    samples: SampleSelection
    models: tuple[ModelSpec, ...]
    instructions: tuple[str | None, ...] = (None,)
    cot_triggers: tuple[str | None, ...] = (None,)
    answer_extractions: tuple[str | None, ...] = (None,)
    mode: PromptMode = PromptMode.TWO_STEP
    n: int = 1
    few_shot: FewShotSpec | None = None
    force: bool = False
    name: str = ""
    guide: GuideSpec | None = None
    batch: bool = False  # sent through the provider's batch API (runs/batch.py): half price, within 24 h

    kind: ClassVar[str] = "generation"

    def __post_init__(self) -> None:
        if not self.models:
            raise RunSpecError("a run needs at least one model")
        if self.n < 1:
            raise RunSpecError("n (samples per prompt) must be at least 1")
        for name in ("instructions", "cot_triggers", "answer_extractions"):
            if not getattr(self, name):
                raise RunSpecError(f"{name} is empty; use (None,) for 'no fragment'")
        if self.guide is not None and self.mode is not PromptMode.ONE_STEP:
            # A guided CoT states its answer in its last step: it is read from the CoT.
            object.__setattr__(self, "mode", PromptMode.ONE_STEP)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (no secrets: a spec never holds an API key)."""
        return {
            "samples": {
                **asdict(self.samples),
                "datasets": list(self.samples.datasets),
                "splits": list(self.samples.splits),
                "sample_pks": list(self.samples.sample_pks),
            },
            "models": [m.to_json() for m in self.models],
            "instructions": list(self.instructions),
            "cot_triggers": list(self.cot_triggers),
            "answer_extractions": list(self.answer_extractions),
            "mode": self.mode.value,
            "n": self.n,
            "few_shot": asdict(self.few_shot) if self.few_shot else None,
            "force": self.force,
            "name": self.name,
            **({"guide": self.guide.to_json()} if self.guide is not None else {}),
            **({"batch": True} if self.batch else {}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunSpec:
        s = data["samples"]
        samples = SampleSelection(
            **{
                **s,
                "datasets": tuple(s.get("datasets") or ()),
                "splits": tuple(s.get("splits") or ()),
                "sample_pks": tuple(s.get("sample_pks") or ()),
            }
        )
        return cls(
            samples=samples,
            models=tuple(ModelSpec.from_json(m) for m in data["models"]),
            instructions=tuple(data["instructions"]),
            cot_triggers=tuple(data["cot_triggers"]),
            answer_extractions=tuple(data["answer_extractions"]),
            mode=PromptMode(data["mode"]),
            n=int(data["n"]),
            few_shot=FewShotSpec(**data["few_shot"]) if data.get("few_shot") else None,
            force=bool(data.get("force")),
            name=data.get("name", ""),
            guide=GuideSpec.from_json(data["guide"]) if data.get("guide") else None,
            batch=bool(data.get("batch")),
        )

    def all_models(self) -> list[ModelSpec]:
        """The agent models, then a guided run's helper models (rationale, scorer, rater): a
        backend is built for each, by its index in this list."""
        helpers = list(self.guide.roles().values()) if self.guide is not None else []
        return [*self.models, *helpers]

    def role_index(self, role: str) -> int:
        """Index in :meth:`all_models` of a guide's helper model (``rationale``, ``scorer``, ``rater``)."""
        if self.guide is None:
            raise KeyError(role)
        roles = list(self.guide.roles())
        return len(self.models) + roles.index(role)


@dataclass(frozen=True, slots=True)
class RunLimits:
    """Execution settings that are not part of what is asked: concurrency per provider (requests
    in flight), requests and tokens per minute (None: no limit) and retry attempts per request."""

    concurrency: int = 8
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    max_attempts: int = 6
    initial_wait: float = 1.0  # seconds before the first retry (doubles each time, plus jitter)
