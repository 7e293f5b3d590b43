"""What a new generation run starts with, the same in the run planner and ``thoughtdesk generate``.

One place for the defaults both front ends offer, so a run planned on the command line is the run
the planner would have planned: the prompt fragments ticked at first (ThoughtSource's zero-shot
CoT set), the model names, how a prompt reaches each provider (a local GGUF model through its own
chat template), the temperature's range, and the model choices the user made in the first-run
wizard and Settings (the local model file, the providers and their addresses), read from the one
settings file through their declarations (:mod:`thoughtdesk.core.settings.registry`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from thoughtdesk.core.settings import registry, saved
from thoughtdesk.core.settings.network import is_loopback_host, is_offline

#: The fragments a new run starts with, by kind (the planner ticks them; ``generate`` uses them
#: when no ``--instruction`` / ``--trigger`` / ``--extraction`` is given).
DEFAULT_FRAGMENTS: dict[str, str] = {
    "instruction": "qa-01",
    "cot_trigger": "kojima-01",
    "answer_extraction": "kojima-01",
}
#: What stands for "no fragment of this kind" on the command line (the planner's "(none)").
NO_FRAGMENT = "none"
#: The model each remote provider starts with when the user named none.
DEFAULT_MODELS: dict[str, str] = {"openai": "gpt-4o-mini", "anthropic": "claude-3-5-haiku-latest"}
#: The sampling temperature a model may be given (OpenAI's range; the planner's spin box and
#: every ``--temperature`` of the command line).
TEMPERATURE_RANGE: tuple[float, float] = (0.0, 2.0)
#: Remote providers the settings file may name, in order of preference.
REMOTE_PROVIDERS = registry.REMOTE_PROVIDERS
#: Where each remote provider's requests go when a model names no base URL (the declared
#: defaults of ``providers/<p>/base_url``; not in runs/spec.py: the settings read them before the
#: window's first paint, without the run engine).
DEFAULT_BASE_URLS = registry.DEFAULT_BASE_URLS


def default_chat(provider: str, endpoint: str = "chat") -> bool:
    """Whether a prompt goes to the model as a chat message: a local GGUF model through its own
    chat template (a raw completion of an instruction-tuned model rambles), Anthropic always
    (its API takes messages only), an OpenAI-compatible server on its chat endpoint."""
    if provider == "openai":
        return endpoint == "chat"
    return True


def fragment_keys(given: list[str] | None, kind: str) -> tuple[str | None, ...]:
    """The fragment keys of one kind for a run: those given (``none`` = no fragment of this
    kind), else the default one."""
    keys = given or [DEFAULT_FRAGMENTS[kind]]
    return tuple(None if key.strip().lower() == NO_FRAGMENT else key for key in keys)


@dataclass(frozen=True, slots=True)
class ModelDefaults:
    """The model choices saved in the wizard and Settings: ``local_model`` (a GGUF path, "" =
    none) and ``providers`` (each enabled remote provider -> its base URL, in order of preference)."""

    local_model: str = ""
    providers: dict[str, str] = field(default_factory=dict)
    #: Offline mode was on when these were read: only this machine can be reached.
    offline: bool = False
    #: The reasoning effort set in Settings per provider (``llamacpp``: the local model).
    efforts: dict[str, str] = field(default_factory=dict)

    def effort(self, provider: str) -> str | None:
        """The reasoning effort set in Settings for ``provider`` (None: the provider's default)."""
        return self.efforts.get(provider) or None

    def base_url(self, provider: str) -> str | None:
        """The address set in Settings for ``provider`` (None: not enabled there, the built-in one)."""
        return self.providers.get(provider) or None

    def first_choice(self) -> str | None:
        """The provider a new run (and each helper model of it) starts with: the local model (it
        works offline), else the first enabled provider; offline, only a provider whose address is
        on this machine (a remote default, with a cost estimate, could not be called); None when
        nothing fits."""
        if self.local_model:
            return "llamacpp"
        if self.offline:
            return next(
                (name for name, url in self.providers.items() if url and is_loopback_host(urlsplit(url).hostname)),
                None,
            )
        return next(iter(self.providers), None)

    def default_model(self) -> str | None:
        """``PROVIDER:MODEL`` of :meth:`first_choice` (None when the user chose nothing)."""
        choice = self.first_choice()
        if choice is None:
            return None
        return f"llamacpp:{self.local_model}" if choice == "llamacpp" else f"{choice}:{DEFAULT_MODELS[choice]}"


def model_defaults(settings: registry.SettingsReader | None = None) -> ModelDefaults:
    """The model choices in ``settings`` (the GUI's QSettings; the settings file as read now when
    None), each read through its declaration. From the file, a value no declaration allows raises
    :class:`~thoughtdesk.core.settings.saved.SettingsFileError` (one line: file, line, key)."""
    settings = settings or saved.load()
    providers = {
        p: settings.get(registry.PROVIDER_BASE_URL[p]).strip()
        for p in REMOTE_PROVIDERS
        if settings.get(registry.PROVIDER_ENABLED[p])
    }
    efforts = {p: settings.get(registry.PROVIDER_EFFORT[p]) for p in REMOTE_PROVIDERS}
    efforts["llamacpp"] = settings.get(registry.LOCAL_EFFORT)
    return ModelDefaults(
        settings.get(registry.LOCAL_MODEL_PATH).strip(),
        providers,
        offline=is_offline(),
        efforts={p: e for p, e in efforts.items() if e},
    )
