"""Model providers behind one small interface (see :mod:`thoughtdesk.core.generation.backends.base`).

``llamacpp`` imports llama-cpp-python only when a model is loaded, so this package imports
without the optional ``local`` extra.
"""

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
from thoughtdesk.core.generation.backends.llamacpp import LlamaCppBackend, LlamaCppSettings, check_gguf_file
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
