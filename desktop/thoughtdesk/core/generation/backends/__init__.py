"""Model providers behind one small interface (see :mod:`thoughtdesk.core.generation.backends.base`).

``llamacpp`` imports llama-cpp-python only when a model is loaded, so this package imports
without the optional ``local`` extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from thoughtdesk.core.lazy import lazy_attribute

if TYPE_CHECKING:
    from thoughtdesk.core.generation.backends.anthropic import AnthropicBackend
    from thoughtdesk.core.generation.backends.base import (
        AuthError,
        Backend,
        BackendError,
        BadRequest,
        BadResponse,
        Capabilities,
        ChatMessage,
        ConnectionLost,
        ModelFileError,
        ModelNotFound,
        RateLimited,
        Request,
        Response,
        ServerDown,
        ServerError,
        Timeout,
        TokenCallback,
    )
    from thoughtdesk.core.generation.backends.llama_setup import LlamaCppSettings, check_gguf_file
    from thoughtdesk.core.generation.backends.llamacpp import LlamaCppBackend
    from thoughtdesk.core.generation.backends.openai_compat import OpenAICompatBackend
    from thoughtdesk.core.generation.backends.pool import PooledBackend
    from thoughtdesk.core.generation.backends.pricing import (
        ModelPrice,
        PriceTable,
        estimate_request_tokens,
        estimate_tokens,
    )
    from thoughtdesk.core.generation.backends.retry import (
        ProviderGate,
        ProviderLimits,
        ResilientBackend,
        RetryPolicy,
    )

#: Every public name -> the submodule that defines it, imported when the name is first used
#: (PEP 562). Importing any submodule runs this file first: a caller that needs one part (the
#: runs list, a price table) must not load every part, and with it httpx and the whole engine.
_LAZY: dict[str, str] = {
    "AnthropicBackend": "anthropic",
    "AuthError": "base",
    "Backend": "base",
    "BackendError": "base",
    "BadRequest": "base",
    "BadResponse": "base",
    "Capabilities": "base",
    "ChatMessage": "base",
    "ConnectionLost": "base",
    "ModelFileError": "base",
    "ModelNotFound": "base",
    "RateLimited": "base",
    "Request": "base",
    "Response": "base",
    "ServerDown": "base",
    "ServerError": "base",
    "Timeout": "base",
    "TokenCallback": "base",
    "LlamaCppBackend": "llamacpp",
    "LlamaCppSettings": "llama_setup",
    "check_gguf_file": "llama_setup",
    "OpenAICompatBackend": "openai_compat",
    "PooledBackend": "pool",
    "ModelPrice": "pricing",
    "PriceTable": "pricing",
    "estimate_request_tokens": "pricing",
    "estimate_tokens": "pricing",
    "ProviderGate": "retry",
    "ProviderLimits": "retry",
    "ResilientBackend": "retry",
    "RetryPolicy": "retry",
}

__all__ = [
    "AnthropicBackend",
    "AuthError",
    "Backend",
    "BackendError",
    "BadRequest",
    "BadResponse",
    "Capabilities",
    "ChatMessage",
    "ConnectionLost",
    "LlamaCppBackend",
    "LlamaCppSettings",
    "ModelFileError",
    "ModelNotFound",
    "ModelPrice",
    "OpenAICompatBackend",
    "PooledBackend",
    "PriceTable",
    "ProviderGate",
    "ProviderLimits",
    "RateLimited",
    "Request",
    "ResilientBackend",
    "Response",
    "RetryPolicy",
    "ServerDown",
    "ServerError",
    "Timeout",
    "TokenCallback",
    "check_gguf_file",
    "estimate_request_tokens",
    "estimate_tokens",
]


def __getattr__(name: str) -> object:
    return lazy_attribute(__name__, _LAZY, globals(), name)
