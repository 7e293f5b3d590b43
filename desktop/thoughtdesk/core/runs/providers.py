"""Building a backend for a :class:`ModelSpec`, with its API key fetched at the last moment.

The key is read from the keyring (:mod:`thoughtdesk.core.secrets`), else from the provider's
usual environment variable (for scripted CLI use), and passed straight into the backend. It is
never stored in the run's spec, the request rows, logs or progress messages.
"""

from __future__ import annotations

import os

from thoughtdesk.core.backends import (
    AnthropicBackend,
    Backend,
    LlamaCppBackend,
    LlamaCppSettings,
    OpenAICompatBackend,
)
from thoughtdesk.core.runs.spec import ModelSpec
from thoughtdesk.core.secrets import get_api_key

#: Environment variables read when the keyring holds no key for a provider.
KEY_ENVIRONMENT = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def api_key_for(provider: str) -> str | None:
    """The API key of ``provider``: keyring first, then its environment variable, else None."""
    key = get_api_key(provider)
    if not key and provider in KEY_ENVIRONMENT:
        key = os.environ.get(KEY_ENVIRONMENT[provider]) or None
    return key


def build_backend(model: ModelSpec, *, api_key: str | None = None) -> Backend:
    """A backend for ``model`` (not yet wrapped in retries/limits; the executor does that).

    ``api_key`` overrides the keyring lookup. A local model file is checked here (missing or
    not GGUF raises ModelFileError naming the file) but loaded on first use.
    """
    if model.provider == "llamacpp":
        return LlamaCppBackend(LlamaCppSettings(
            model_path=model.model, n_ctx=model.n_ctx, n_threads=model.n_threads,  # type: ignore[arg-type]
            n_gpu_layers=model.n_gpu_layers, chat_template="gguf" if model.chat else "none",
        ))
    key = api_key if api_key is not None else api_key_for(model.provider)
    if model.provider == "anthropic":
        return AnthropicBackend(key, base_url=model.base_url or "https://api.anthropic.com")
    return OpenAICompatBackend(model.base_url or "https://api.openai.com/v1", key,
                               endpoint=model.endpoint)
