"""The one small interface every model provider implements, its records and its errors.

A run queue calls ``await backend.complete(request)`` from asyncio and stores the
:class:`Request` before sending and the :class:`Response` (or the :class:`BackendError`) after;
both are plain dataclasses with ``to_json()`` for that. Errors carry a message for people that
names the provider and says what to do, and ``raw_body`` where the server sent one.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.scoring import TokenScores
from thoughtdesk.core.settings.logs import redact

#: Called with each new piece of text while a completion streams (sample index, text piece).
TokenCallback = Callable[[int, str], None]


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One chat turn; ``role`` is ``system``, ``user`` or ``assistant``."""

    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True, slots=True)
class Request:
    """One model call: either a raw ``prompt`` (completion) or chat ``messages``.

    ``temperature`` is the sampling temperature, ``max_tokens`` the most tokens generated per
    sample, ``n`` the number of samples (self-consistency), ``timeout`` the seconds allowed for
    the whole call. ``seed`` is passed to providers that accept one.
    """

    model: str
    prompt: str | None = None
    messages: tuple[ChatMessage, ...] | None = None
    temperature: float = 0.0
    max_tokens: int = 256
    n: int = 1
    seed: int | None = None
    stop: tuple[str, ...] = ()
    timeout: float = 120.0
    #: How hard a reasoning model should think (core/thinking.REASONING_EFFORTS), each
    #: backend mapping it onto its provider's switch; None: the provider's default.
    reasoning_effort: str | None = None

    def __post_init__(self) -> None:
        if (self.prompt is None) == (self.messages is None):
            raise ValueError("a Request needs exactly one of prompt or messages")
        if self.n < 1 or self.max_tokens < 1:
            raise ValueError("n and max_tokens must be at least 1")

    @property
    def is_chat(self) -> bool:
        return self.messages is not None

    def chat_messages(self) -> tuple[ChatMessage, ...]:
        """The messages, or the prompt as one user message for chat-only providers."""
        return self.messages if self.messages is not None else (ChatMessage("user", self.prompt or ""),)

    def to_json(self) -> dict[str, Any]:
        """All fields as JSON-ready values (messages as ``[{"role", "content"}]``)."""
        data = asdict(self)
        data["stop"] = list(self.stop)
        if self.reasoning_effort is None:
            # Left out when not set: the fingerprints of requests stored before it existed stay equal.
            data.pop("reasoning_effort")
        if self.messages is not None:
            data["messages"] = [{"role": m.role, "content": m.content} for m in self.messages]
        return data

    def fingerprint(self, backend_id: str) -> str:
        """Hex SHA-256 of ``backend_id`` and every parameter except timeout.

        Equal for identical calls, so a store can answer a repeated request from its cache.
        ``backend_id`` should name the backend precisely (e.g. ``openai@https://host/v1`` or
        ``llamacpp@/path/model.gguf``), since the same model name means different models on
        different servers.
        """
        data = self.to_json()
        data.pop("timeout")
        data["backend"] = backend_id
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class RateLimitHeaders:
    """What a provider said about its rate limits with an answer (OpenAI's ``x-ratelimit-*``,
    Anthropic's ``anthropic-ratelimit-*`` headers): per minute ``limit_*``, what is left
    ``remaining_*`` and seconds until the budget is full again ``reset_*``; None where not sent."""

    limit_requests: int | None = None
    remaining_requests: int | None = None
    reset_requests: float | None = None
    limit_tokens: int | None = None
    remaining_tokens: int | None = None
    reset_tokens: float | None = None


@dataclass(slots=True)
class Response:
    """What came back: one text and finish reason per sample, token counts, timing, raw body.

    ``latency`` is seconds from sending to the full answer; token counts are the provider's
    (None when it reports none); ``raw_body`` is the response body as received (for several
    calls made to emulate ``n``, a JSON list of the bodies).
    """

    provider: str
    model: str
    texts: list[str]
    finish_reasons: list[str | None]
    prompt_tokens: int | None
    completion_tokens: int | None
    latency: float
    raw_body: str
    attempts: int = 1
    rate_limits: RateLimitHeaders | None = None  # for the provider's gate; not stored
    #: Each sample's thinking as the provider sent it apart from the text (``reasoning_content``,
    #: ``reasoning``, Anthropic's thinking blocks), None for a sample without; empty: none sent.
    #: Thinking inline in the text (``<think>``) is split off when the CoT is stored.
    reasonings: list[str | None] = field(default_factory=list)
    #: What was odd about each sample's thinking, in words (a field that is not text, redacted
    #: blocks), None where nothing was; empty: nothing.
    reasoning_notes: list[str | None] = field(default_factory=list)
    #: Reasoning tokens of the whole response as the provider counted them (OpenAI's
    #: ``completion_tokens_details.reasoning_tokens``); None: not reported.
    reasoning_tokens: int | None = None
    #: How the backend found the thinking: None for a field or block the provider sent apart,
    #: ``"tags"`` when it split the text itself (the local llama.cpp backend), ``"unclosed"`` when
    #: the thinking it split never ended (cut by the token limit).
    reasoning_from: str | None = None

    def reasoning_of(self, index: int) -> str | None:
        """Sample ``index``'s separate thinking, None when none was sent."""
        return self.reasonings[index] if index < len(self.reasonings) else None

    def reasoning_note_of(self, index: int) -> str | None:
        """What was odd about sample ``index``'s thinking, None when nothing was."""
        return self.reasoning_notes[index] if index < len(self.reasoning_notes) else None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("rate_limits")
        return data


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a backend can do natively (others are emulated or not offered in the UI)."""

    chat: bool
    completion: bool
    multiple_samples: bool  # n > 1 in one call; otherwise complete() makes n calls
    seed: bool
    logprobs: bool
    prompt_logprobs: bool  # log-probabilities of the prompt tokens (echo)
    streaming: bool = False
    scoring: bool = False  # Backend.score: exact log-probs of given text (core/generation/scoring.py)
    # Scoring a longer text gives its leading tokens the log-probs a shorter text would (cut at a
    # token boundary), so one call can stand for several; False where the evaluation split matters.
    stable_prefix_scores: bool = True


class Backend(ABC):
    """A model provider. Subclasses set ``provider`` (e.g. ``openai``) and ``capabilities``."""

    provider: str = "backend"
    capabilities: Capabilities

    @property
    def label(self) -> str:
        """How the provider is named in messages to the user."""
        return self.provider

    @abstractmethod
    async def complete(self, request: Request, on_token: TokenCallback | None = None) -> Response:
        """Send ``request`` and return the response; raise a BackendError subclass on failure.

        ``on_token`` is called on the event loop's thread with streamed text, where supported.
        """

    #: Why ``score`` is not offered, in words (used by the default :meth:`score`).
    scoring_unsupported_reason: str = "this provider returns no log-probs of given text"

    @property
    def scoring_detail(self) -> str:
        """One line for the UI about scoring with this backend: why it cannot, or what it costs."""
        if not self.capabilities.scoring:
            return f"{self.label} cannot score text: {self.scoring_unsupported_reason}"
        return f"{self.label} scores text exactly (log-probs of the given tokens)"

    async def score(self, prefix: str, continuations: Sequence[str]) -> list[TokenScores]:
        """Score each continuation after ``prefix``; the prefix is evaluated once where the backend can reuse it.

        Returns one :class:`TokenScores` per continuation, in order (the joint tokenisation of
        prefix + continuation). Backends that cannot raise :class:`ScoringUnsupported`; nothing
        is approximated.
        """
        raise ScoringUnsupported(self.label, self.scoring_unsupported_reason)

    async def aclose(self) -> None:  # noqa: B027 - optional: a backend holding nothing has nothing to release
        """Release connections or the loaded model."""


# --- errors --------------------------------------------------------------------------------


class BackendError(ThoughtDeskError):
    """A model call that failed; ``str()`` is the message for people.

    ``retryable`` says whether trying again later may succeed; ``raw_body`` keeps what the
    server sent so a failed request can be stored with it. The message, hint and raw body are
    redacted here, where the error is made (:func:`~thoughtdesk.core.settings.logs.redact`): a
    server that quotes the key it refused ("invalid header Authorization: Bearer sk-...") never
    gets it into a stored, logged or shown error.
    """

    retryable: bool = False

    def __init__(
        self,
        provider: str,
        message: str,
        *,
        hint: str | None = None,
        status: int | None = None,
        raw_body: str | None = None,
        retry_after: float | None = None,
        rate_limits: RateLimitHeaders | None = None,
    ) -> None:
        self.provider = provider
        # Seconds the server asked us to wait (Retry-After), honoured by the retry policy.
        self.retry_after = retry_after
        # The rate-limit headers of the answer, if any (the provider's gate paces by them).
        self.rate_limits = rate_limits
        self.message = redact(message)
        self.hint = redact(hint) if hint is not None else None
        self.status = status
        self.raw_body = redact(raw_body) if raw_body is not None else None
        super().__init__(str(self))

    def __str__(self) -> str:
        text = f"{self.provider}: {self.message}"
        return f"{text}; {self.hint}" if self.hint else text

    @property
    def kind(self) -> str:
        """A stable short name of the error class, to store with a failed request."""
        return type(self).__name__


class AuthError(BackendError):
    """The key was refused (HTTP 401/403)."""


class ModelNotFound(BackendError):
    """The provider does not know the model (HTTP 404, or a model error in the body)."""


class ServerDown(BackendError):
    """Nothing answers at the address (connection refused, DNS failure)."""

    retryable = True


class ConnectionLost(BackendError):
    """The connection broke before the whole response arrived."""

    retryable = True


class RateLimited(BackendError):
    """The provider asked us to slow down (HTTP 429, or 503 with Retry-After)."""

    retryable = True


class ServerError(BackendError):
    """The server failed (HTTP 5xx)."""

    retryable = True


class Timeout(BackendError):
    """No complete answer within the request's timeout."""

    retryable = True


class BadResponse(BackendError):
    """The answer could not be used (not JSON, no choices, wrong shape); keeps the raw body."""


class BadRequest(BackendError):
    """The provider rejected the request's parameters (HTTP 400/422)."""


class ModelFileError(BackendError):
    """A local model file that is missing, unreadable or not a GGUF file."""


class ScoringUnsupported(BackendError):
    """The backend cannot give log-probs of given text (chat-only APIs, Anthropic, llama-server)."""

    def __init__(self, label: str, reason: str, *, hint: str | None = None, raw_body: str | None = None) -> None:
        super().__init__(label, f"cannot score text: {reason}", hint=hint, raw_body=raw_body)

    def __str__(self) -> str:
        text = f"{self.provider} {self.message}"
        return f"{text}; {self.hint}" if self.hint else text


def join_raw_bodies(bodies: Sequence[str]) -> str:
    """One raw body for several calls: the body itself for one call, else a JSON list of them."""
    return bodies[0] if len(bodies) == 1 else json.dumps(list(bodies))


def sum_or_none(values: Sequence[int | None]) -> int | None:
    """Sum of token counts, None if any call did not report one."""
    return None if any(value is None for value in values) else sum(v for v in values if v is not None)
