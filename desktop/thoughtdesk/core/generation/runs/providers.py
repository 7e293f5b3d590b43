"""Building a backend for a :class:`ModelSpec`, with its API key fetched at the last moment.

The key is read from the keyring (:mod:`thoughtdesk.core.settings.secrets`), else from the provider's
usual environment variable (for scripted CLI use), and passed straight into the backend. It is
never stored in the run's spec, the request rows, logs or progress messages.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

from thoughtdesk.core.generation.backends import (
    AnthropicBackend,
    Backend,
    LlamaCppBackend,
    LlamaCppSettings,
    OpenAICompatBackend,
    PooledBackend,
    ProviderLimits,
)
from thoughtdesk.core.generation.defaults import DEFAULT_BASE_URLS
from thoughtdesk.core.generation.runs.spec import ModelSpec
from thoughtdesk.core.settings.config import key_origin, stored_key_for
from thoughtdesk.core.settings.network import host_of_url, is_loopback_host, is_offline
from thoughtdesk.core.settings.secrets import checked_key, get_api_key

log = logging.getLogger(__name__)

#: Environment variables read when the keyring holds no key for a provider.
KEY_ENVIRONMENT = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def api_key_for(provider: str, base_url: str | None = None) -> str | None:
    """The API key to send to ``base_url`` for ``provider``, or None.

    The keyring's key goes only to the address it was saved for in Settings (so an OpenAI key
    never reaches another OpenAI-compatible server a run names); a key saved without an
    address is bound to the provider's official one. Otherwise the provider's environment
    variable (set by the user for scripted use, sent wherever the run points), else None.
    """
    url = base_url or DEFAULT_BASE_URLS.get(provider, "")
    key = stored_key_for(provider, url, DEFAULT_BASE_URLS.get(provider, url))
    if key:
        return key
    if get_api_key(provider):
        log.info("the stored %s key was saved for another server; not sending it to %s", provider, key_origin(url))
    if provider in KEY_ENVIRONMENT:
        value = os.environ.get(KEY_ENVIRONMENT[provider])
        return checked_key(value, provider=provider, source=KEY_ENVIRONMENT[provider]) if value else None
    return None


def usable_pool_urls(model: ModelSpec) -> tuple[str, ...]:
    """The servers of a pool requests may go to: in offline mode only those on this machine
    (the others would fail every request sent to them; ``offline_pool_warnings`` says so), all
    of them otherwise, or when none is local (offline mode then refuses the run as a whole)."""
    if not is_offline():
        return model.base_urls
    local = tuple(url for url in model.base_urls if is_loopback_host(host_of_url(url)))
    return local or model.base_urls


def build_backend(
    model: ModelSpec, *, api_key: str | None = None, endpoint_limits: ProviderLimits | None = None
) -> Backend:
    """A backend for ``model`` (not yet wrapped in retries/limits; the executor does that).

    ``api_key`` overrides the keyring lookup. A local model file is checked here (missing or
    not GGUF raises ModelFileError naming the file) but loaded on first use. A model with
    several base URLs gets a :class:`PooledBackend` whose endpoints each run within
    ``endpoint_limits`` (default: ProviderLimits()); each endpoint gets the key saved for it.
    """
    if model.provider == "llamacpp":
        return LlamaCppBackend(llama_settings(model))
    if model.more_base_urls:
        members = [
            OpenAICompatBackend(
                url,
                api_key if api_key is not None else api_key_for(model.provider, url),
                endpoint=model.endpoint,
                model=model.model_name,
                stream=model.stream,
                template_switch=model.price_provider == "local",
            )
            for url in usable_pool_urls(model)
        ]
        return PooledBackend(members, limits=endpoint_limits or ProviderLimits())
    base_url = model.base_url or DEFAULT_BASE_URLS.get(model.provider, DEFAULT_BASE_URLS["openai"])
    key = api_key if api_key is not None else api_key_for(model.provider, base_url)
    if model.provider == "anthropic":
        return AnthropicBackend(key, base_url=base_url)
    return OpenAICompatBackend(
        base_url,
        key,
        endpoint=model.endpoint,
        model=model.model_name,
        stream=model.stream,
        template_switch=model.price_provider == "local",
    )


def llama_settings(model: ModelSpec) -> LlamaCppSettings:
    """How a ``llamacpp`` model is loaded and prompted."""
    return LlamaCppSettings(
        model_path=Path(model.model),
        n_ctx=model.n_ctx,
        n_threads=model.n_threads,
        n_gpu_layers=model.n_gpu_layers,
        chat_template="gguf" if model.chat else "none",
        completion_template=model.completion_template,
        think_tags=model.think_tags,
    )


def build_shared_backend(
    model: ModelSpec,
    built: Sequence[tuple[ModelSpec, Backend]],
    *,
    endpoint_limits: ProviderLimits | None = None,
) -> Backend:
    """A backend for ``model`` that shares what it can with the backends ``built`` already for
    other models of the same run: an equal model gets the same backend, and a local GGUF file
    loaded with the same settings is loaded once (its generation instance, scoring copy and
    worker thread shared), whatever the roles' temperatures, seeds or templates. A guided run's
    agent at temperature 0.7 and its rationale model and scorer at 0 on one GGUF load it once
    for generation and once for scoring, not three times."""
    for other, backend in built:
        if other == model:
            return backend
    if model.provider == "llamacpp":
        settings = llama_settings(model)
        local = [backend for _, backend in built if isinstance(backend, LlamaCppBackend)]
        for backend in local:
            if backend.settings == settings:
                return backend  # the same prompts too: the same backend
        for backend in local:
            if backend.can_share(settings):
                return LlamaCppBackend(settings, share=backend)
    return build_backend(model, endpoint_limits=endpoint_limits)
