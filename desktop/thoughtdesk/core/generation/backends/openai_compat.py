"""OpenAI-compatible Chat Completions and Completions (OpenAI, vLLM, llama.cpp server, Ollama,
LM Studio, hosted compatible services), with a configurable base URL."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx

from thoughtdesk.core.generation.backends.base import (
    Backend,
    BadRequest,
    BadResponse,
    Capabilities,
    Request,
    Response,
    ScoringUnsupported,
    TokenCallback,
    join_raw_bodies,
    sum_or_none,
)
from thoughtdesk.core.generation.backends.http import new_client, post_json, valid_token_count
from thoughtdesk.core.generation.backends.pricing import estimate_tokens
from thoughtdesk.core.generation.backends.response_cap import response_byte_limit
from thoughtdesk.core.generation.scoring import TokenScores
from thoughtdesk.core.settings.logs import register_secret
from thoughtdesk.core.thinking import thinking_field

#: Where scoring works and where it does not, said when a server answers without prompt log-probs.
_SCORING_SERVERS = (
    "scoring needs a server whose /completions endpoint echoes prompt log-probs "
    "(vLLM, llama-cpp-python's server); llama.cpp's own llama-server and chat-only APIs do not"
)

#: Why the chat endpoint cannot score text (``scoring_unsupported_reason``).
CHAT_CANNOT_SCORE = (
    "the chat endpoint returns no log-probs of given text; use the completions endpoint of a "
    "server that echoes prompt log-probs (vLLM, llama-cpp-python's server)"
)
#: What scoring needs of an OpenAI-compatible server (the hint of a refusal).
SCORING_SERVERS = _SCORING_SERVERS

Endpoint = Literal["chat", "completions"]
#: OpenAI's own API (its reasoning models take max_completion_tokens, not max_tokens).
OPENAI_HOST = "api.openai.com"


class OpenAICompatBackend(Backend):
    """An OpenAI-compatible server at ``base_url`` (e.g. ``http://127.0.0.1:8080/v1``).

    ``endpoint="chat"`` sends every request to ``/chat/completions`` (a raw prompt becomes one
    user message); ``endpoint="completions"`` sends raw prompts to ``/completions`` and chat
    requests to ``/chat/completions``. ``native_n=False`` makes ``n`` separate calls for servers
    that ignore ``n``. The API key is used only in the Authorization header and never shown.
    """

    def __init__(
        self,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        *,
        endpoint: Endpoint = "chat",
        provider: str = "openai",
        native_n: bool = True,
        extra_headers: dict[str, str] | None = None,
        client: httpx.AsyncClient | None = None,
        model: str | None = None,
        stream: bool = False,
        template_switch: bool = False,
    ) -> None:
        """``stream``: ask chat answers as server-sent events (``stream: true``), joined into one
        answer as they arrive, the thinking deltas included; the raw body kept is the event
        stream as received. ``template_switch``: a reasoning effort of ``none`` is also sent as
        ``chat_template_kwargs: {"enable_thinking": false}`` (local servers: vLLM, SGLang,
        llama.cpp's server; OpenAI's own API refuses unknown fields)."""
        if endpoint not in ("chat", "completions"):
            raise ValueError(f"endpoint must be 'chat' or 'completions', not {endpoint!r}")
        self.base_url = base_url.rstrip("/")
        self.endpoint = endpoint
        self.provider = provider
        self._api_key = api_key
        register_secret(api_key)  # redacted wherever a server echoes it
        self._extra_headers = dict(extra_headers or {})
        self._client = client or new_client()
        self._owns_client = client is None
        # The model scored by ``score`` (requests name their own model; scoring has no request).
        self.model = model
        self.stream = stream
        self.template_switch = template_switch
        self.capabilities = Capabilities(
            chat=True,
            completion=endpoint == "completions",
            multiple_samples=native_n,
            seed=True,
            logprobs=True,
            prompt_logprobs=endpoint == "completions",
            scoring=endpoint == "completions",
        )
        if endpoint == "chat":
            self.scoring_unsupported_reason = CHAT_CANNOT_SCORE

    def __repr__(self) -> str:  # never show the key
        return f"OpenAICompatBackend({self.base_url!r}, endpoint={self.endpoint!r}, provider={self.provider!r})"

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", **self._extra_headers}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _payload(self, request: Request, chat: bool) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": request.model,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "n": request.n,
        }
        if chat:
            payload["messages"] = [{"role": m.role, "content": m.content} for m in request.chat_messages()]
        else:
            payload["prompt"] = request.prompt
        if request.seed is not None:
            payload["seed"] = request.seed
        if request.stop:
            payload["stop"] = list(request.stop)
        if request.reasoning_effort is not None and chat:  # a chat endpoint's parameter
            payload["reasoning_effort"] = request.reasoning_effort
            if urlsplit(self.base_url).hostname == OPENAI_HOST:
                # OpenAI's reasoning models refuse max_tokens; max_completion_tokens counts the
                # hidden reasoning too. Other servers (vLLM, DeepSeek, llama.cpp) read max_tokens.
                payload["max_completion_tokens"] = payload.pop("max_tokens")
            if self.template_switch:
                payload["chat_template_kwargs"] = {"enable_thinking": request.reasoning_effort != "none"}
        if self.stream and chat:
            payload["stream"] = True
            payload["stream_options"] = {"include_usage": True}
        return payload

    async def complete(self, request: Request, on_token: TokenCallback | None = None) -> Response:
        """One call (or ``n`` calls when the server has no native ``n``); see :class:`Backend`."""
        if request.n > 1 and not self.capabilities.multiple_samples:
            return _merge(await self._singles(request, range(request.n)))
        response = await self._call(request)
        if len(response.texts) < request.n:
            # Some servers (llama-cpp-python's) ignore n and return one choice: fetch the rest.
            extra = await self._singles(request, range(len(response.texts), request.n))
            return _merge([response, *extra])
        return response

    def batch_body(self, request: Request) -> tuple[str, dict[str, Any]]:
        """The endpoint path and JSON body of ``request`` as one line of a Batch API input file."""
        chat = request.is_chat or self.endpoint == "chat"
        return ("/v1/chat/completions" if chat else "/v1/completions"), self._payload(request, chat)

    def response_from_body(self, request: Request, data: Any, body: str, latency: float = 0.0) -> Response:
        """The :class:`Response` of an answer body received another way (a batch's result
        line); BadResponse when it is unusable, exactly as for a direct call."""
        chat = request.is_chat or self.endpoint == "chat"
        texts, reasons, reasonings, notes = _choices(self.provider, data, body, chat)
        reported = data.get("usage")
        usage = reported if isinstance(reported, dict) else {}
        details = usage.get("completion_tokens_details")
        return Response(
            provider=self.provider,
            model=str(data.get("model") or request.model),
            texts=texts,
            finish_reasons=reasons,
            prompt_tokens=valid_token_count(usage.get("prompt_tokens")),
            completion_tokens=valid_token_count(usage.get("completion_tokens")),
            latency=latency,
            raw_body=body,
            reasonings=reasonings if any(r is not None for r in reasonings) else [],
            reasoning_notes=notes if any(n is not None for n in notes) else [],
            reasoning_tokens=valid_token_count(details.get("reasoning_tokens")) if isinstance(details, dict) else None,
        )

    async def _singles(self, request: Request, indexes: range) -> list[Response]:
        """One call per sample index, concurrently, with seed + index when seeded."""
        singles = [
            replace(request, n=1, seed=None if request.seed is None else request.seed + index) for index in indexes
        ]
        return list(await asyncio.gather(*(self._call(single) for single in singles)))

    async def _call(self, request: Request) -> Response:
        chat = request.is_chat or self.endpoint == "chat"
        url = f"{self.base_url}/chat/completions" if chat else f"{self.base_url}/completions"
        result = await post_json(
            self._client,
            provider=self.provider,
            url=url,
            payload=self._payload(request, chat),
            headers=self._headers(),
            timeout=request.timeout,
            model=request.model,
            max_bytes=response_byte_limit(request.max_tokens, request.n),
            events=self.stream and chat,
        )
        streamed = self.stream and chat and isinstance(result.data, list)
        data = join_stream(self.provider, result.data, result.body) if streamed else result.data
        response = self.response_from_body(request, data, result.body, result.latency)
        response.rate_limits = result.rate_limits
        return response

    async def score(self, prefix: str, continuations: Sequence[str]) -> list[TokenScores]:
        """One ``/completions`` call per continuation (concurrently) with ``echo`` and
        ``logprobs``, generating one token that is ignored; the server tokenises prefix +
        continuation together (servers with prefix caching reuse the shared prefix)."""
        if not self.capabilities.scoring:
            raise ScoringUnsupported(self.provider, self.scoring_unsupported_reason)
        if self.model is None:
            raise ValueError("OpenAICompatBackend.score needs the backend's model (model=...)")
        return list(await asyncio.gather(*(self._score_one(prefix, text) for text in continuations)))

    async def _score_one(self, prefix: str, continuation: str) -> TokenScores:
        if not continuation:
            return TokenScores((), ())
        text = prefix + continuation
        # max_tokens 1, not 0: llama-cpp-python reads 0 as "no limit".
        payload = {
            "model": self.model,
            "prompt": text,
            "max_tokens": 1,
            "temperature": 0.0,
            "echo": True,
            "logprobs": 1,
        }
        tokens = estimate_tokens(text) + 1
        try:
            result = await post_json(
                self._client,
                provider=self.provider,
                url=f"{self.base_url}/completions",
                payload=payload,
                headers=self._headers(),
                timeout=120.0,
                model=str(self.model),
                max_bytes=response_byte_limit(tokens * 4),
            )
        except BadRequest as error:
            if "echo" in error.message.lower() or "logprobs" in error.message.lower():
                raise ScoringUnsupported(
                    self.provider, f"the server refused echo with log-probs ({error.message})", hint=_SCORING_SERVERS
                ) from None
            raise
        return _echo_scores(self.provider, result.data, result.body, prefix, text)

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()


def _merge(parts: list[Response]) -> Response:
    """Several calls' responses as one (raw bodies as a JSON list, latency of the slowest)."""
    return Response(
        provider=parts[0].provider,
        model=parts[0].model,
        texts=[text for part in parts for text in part.texts],
        finish_reasons=[reason for part in parts for reason in part.finish_reasons],
        prompt_tokens=sum_or_none([part.prompt_tokens for part in parts]),
        completion_tokens=sum_or_none([part.completion_tokens for part in parts]),
        latency=max(part.latency for part in parts),
        raw_body=join_raw_bodies([part.raw_body for part in parts]),
        reasonings=[r for part in parts for r in (part.reasonings or [None] * len(part.texts))]
        if any(part.reasonings for part in parts)
        else [],
        reasoning_notes=[n for part in parts for n in (part.reasoning_notes or [None] * len(part.texts))]
        if any(part.reasoning_notes for part in parts)
        else [],
        reasoning_tokens=sum_or_none([part.reasoning_tokens for part in parts]),
    )


#: The thinking fields of a chat message or delta, in the order they are read: vLLM's current
#: name and OpenRouter's first, then DeepSeek's, SGLang's, llama.cpp's (and old vLLM's).
THINKING_FIELDS = ("reasoning", "reasoning_content")


def message_thinking(message: dict[str, Any], where: str) -> tuple[str | None, str | None]:
    """The thinking of a chat ``message`` (or stream delta) and a note on what was odd: the first
    of THINKING_FIELDS that holds text (see thinking_field)."""
    notes: list[str] = []
    for name in THINKING_FIELDS:
        text, note = thinking_field(message.get(name), f"{where}.{name}")
        if text is not None:
            return text, None
        if note is not None:
            notes.append(note)
    return None, "; ".join(notes) or None


def join_stream(provider: str, events: Any, body: str) -> dict[str, Any]:
    """The chat completion a stream of ``chat.completion.chunk`` events adds up to: per choice
    index the content, the thinking (``reasoning``/``reasoning_content`` deltas) and the last
    finish reason; the usage of the last event that has one. BadResponse when the stream holds
    no chunk or a server's error event."""
    hint = "the raw event stream is kept with the failed request"
    if not isinstance(events, list) or not events:
        raise BadResponse(provider, "the event stream holds no data events", hint=hint, raw_body=body)
    joined: dict[int, dict[str, Any]] = {}
    usage: Any = None
    model: Any = None
    for number, event in enumerate(events, 1):
        if not isinstance(event, dict):
            raise BadResponse(provider, f"event {number} of the stream is not a JSON object", hint=hint, raw_body=body)
        if "error" in event and "choices" not in event:
            raise BadRequest(
                provider,
                f"the server sent an error in the stream: {str(event['error'])[:300]}",
                hint=hint,
                raw_body=body,
            )
        model = event.get("model") or model
        if isinstance(event.get("usage"), dict):
            usage = event["usage"]
        choices = event.get("choices")
        for position, choice in enumerate(choices if isinstance(choices, list) else []):
            if not isinstance(choice, dict):
                continue
            slot = joined.setdefault(
                _choice_index(choice, position), {"content": [], "thinking": [], "notes": [], "finish": None}
            )
            delta = choice.get("delta")
            if isinstance(delta, dict):
                content = delta.get("content")
                if isinstance(content, str):
                    slot["content"].append(content)
                thinking, note = message_thinking(delta, f"event {number}: delta")
                if thinking is not None:
                    slot["thinking"].append(thinking)
                if note is not None and note not in slot["notes"]:
                    slot["notes"].append(note)
            if isinstance(choice.get("finish_reason"), str):
                slot["finish"] = choice["finish_reason"]
    if not joined:
        raise BadResponse(provider, "the event stream holds no choices", hint=hint, raw_body=body)
    return {
        "model": model,
        "choices": [
            {
                "index": index,
                "finish_reason": slot["finish"],
                "message": {
                    "role": "assistant",
                    "content": "".join(slot["content"]),
                    "reasoning": "".join(slot["thinking"]) if slot["thinking"] else None,
                },
                "thoughtdesk_notes": slot["notes"],
            }
            for index, slot in sorted(joined.items())
        ],
        **({"usage": usage} if usage is not None else {}),
    }


def _choice_index(choice: Any, position: int) -> int:
    """A choice's ``index`` when it is a whole number, else its place in the list (servers send
    strings, nulls or nothing there; sorting mixed types crashed a run)."""
    index = choice.get("index") if isinstance(choice, dict) else None
    if isinstance(index, str) and index.strip().isdigit():
        return int(index)
    return index if isinstance(index, int) and not isinstance(index, bool) else position


def _choices(
    provider: str, data: Any, body: str, chat: bool
) -> tuple[list[str], list[str | None], list[str | None], list[str | None]]:
    """Texts, finish reasons, thinking texts and thinking notes of the choices, in index order;
    BadResponse when unusable."""
    hint = "the raw answer is kept with the failed request"
    if not isinstance(data, dict):
        raise BadResponse(provider, "the answer is not a JSON object", hint=hint, raw_body=body)
    if "error" in data and "choices" not in data:
        raise BadRequest(
            provider, f"the server answered with an error: {str(data['error'])[:300]}", hint=hint, raw_body=body
        )
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise BadResponse(provider, "the answer has no choices", hint=hint, raw_body=body)
    ordered = [choice for _, _, choice in sorted((_choice_index(c, i), i, c) for i, c in enumerate(choices))]
    texts: list[str] = []
    reasons: list[str | None] = []
    reasonings: list[str | None] = []
    notes: list[str | None] = []
    for position, choice in enumerate(ordered):
        if not isinstance(choice, dict):
            raise BadResponse(provider, "a choice is not a JSON object", hint=hint, raw_body=body)
        thinking, note = None, None
        if chat:
            message = choice.get("message")
            text = message.get("content") if isinstance(message, dict) else None
            # A null content (refusal, tool call, or a trace cut while thinking) is kept as an
            # empty text, not a failure.
            text = "" if text is None and isinstance(message, dict) else text
            if isinstance(message, dict):
                thinking, note = message_thinking(message, f"choices[{position}].message")
            streamed = choice.get("thoughtdesk_notes")
            if isinstance(streamed, list) and streamed:
                note = "; ".join(str(n) for n in streamed)
        else:
            text = choice.get("text")
        if not isinstance(text, str):
            raise BadResponse(provider, "a choice has no text", hint=hint, raw_body=body)
        texts.append(text)
        reasons.append(reason if isinstance(reason := choice.get("finish_reason"), str) else None)
        reasonings.append(thinking)
        notes.append(note)
    return texts, reasons, reasonings, notes


#: The log-probs a model can give: at most 0 (a little above, for rounding), and not below the
#: log of the smallest double (-745.1); anything else (1e308, NaN, -Infinity) is a broken answer.
_HIGHEST_LOGPROB = 1e-3
_LOWEST_LOGPROB = -746.0
_BAD_SCORES_HINT = "the server's scores are unusable; check the scoring server (nothing was stored for this text)"


def _short(values: list[Any]) -> str:
    shown = ", ".join(repr(v) for v in values[:8])
    return f"[{shown}{', ...' if len(values) > 8 else ''}]"


def _check_offsets(provider: str, offsets: list[Any], length: int, body: str) -> None:
    """BadResponse unless ``offsets`` are whole numbers from 0 to ``length``, never decreasing."""
    previous = 0
    for index, offset in enumerate(offsets):
        if not isinstance(offset, int) or isinstance(offset, bool) or not previous <= offset <= length:
            raise BadResponse(
                provider,
                f"the server's answer holds an impossible token offset: logprobs.text_offset[{index}] = {offset!r} "
                f"(offsets run from 0 to the echoed text's {length} characters, never decreasing)",
                hint=_BAD_SCORES_HINT,
                raw_body=body,
            )
        previous = offset


def _echo_scores(provider: str, data: Any, body: str, prefix: str, text: str) -> TokenScores:
    """The continuation's tokens and log-probs from an echo answer for ``text`` = prefix + continuation.

    The prompt's tokens are the echoed ones before the generated token(s) (``usage``'s
    completion_tokens, else those starting before the end of the text); the continuation's are
    those ending after the prefix (a token straddling the boundary is the continuation's).
    """
    hint = "the raw answer is kept in the log"
    choice = (
        data.get("choices", [None])[0] if isinstance(data, dict) and isinstance(data.get("choices"), list) else None
    )
    if not isinstance(choice, dict):
        _choices(provider, data, body, False)  # raises the precise error (error object, no choices...)
        raise BadResponse(provider, "the answer has no usable choice", hint=hint, raw_body=body)
    echoed = choice.get("text")
    logprobs = choice.get("logprobs")
    if not isinstance(echoed, str) or not echoed.startswith(text) or not isinstance(logprobs, dict):
        raise ScoringUnsupported(
            provider, "the server answered without the prompt's log-probs (echo ignored)", hint=_SCORING_SERVERS
        )
    tokens, values, offsets = (logprobs.get(key) for key in ("tokens", "token_logprobs", "text_offset"))
    if not isinstance(tokens, list) or not isinstance(values, list) or len(tokens) != len(values):
        raise BadResponse(provider, "the log-probs have no tokens or token_logprobs of equal length", raw_body=body)
    if not isinstance(offsets, list) or len(offsets) != len(tokens):
        # Without offsets, the tokens' texts laid end to end give them.
        offsets, position = [], 0
        for token in tokens:
            offsets.append(position)
            position += len(token) if isinstance(token, str) else 0
    else:
        _check_offsets(provider, offsets, len(echoed), body)
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    generated = valid_token_count(usage.get("completion_tokens"))
    count = len(tokens) - generated if generated is not None and generated <= len(tokens) else None
    if count is None:
        count = sum(1 for offset in offsets if isinstance(offset, int) and offset < len(text))
    ends = [*offsets[1:count], len(text)]
    start = next((i for i in range(count) if isinstance(ends[i], int) and ends[i] > len(prefix)), count)
    picked_tokens = tokens[start:count]
    picked = values[start:count]
    if any(not isinstance(value, (int, float)) or isinstance(value, bool) for value in picked):
        raise BadResponse(
            provider,
            "a continuation token has no log-prob (a text scored without a prefix has none for its first token)",
            hint="give a prefix before the scored text",
            raw_body=body,
        )
    for index, value in enumerate(picked, start):
        if not math.isfinite(value) or not _LOWEST_LOGPROB <= value <= _HIGHEST_LOGPROB:
            raise BadResponse(
                provider,
                f"the server's answer holds a log-prob that no model gives: logprobs.token_logprobs[{index}] = "
                f"{value!r} (token {str(tokens[index])[:40]!r}; a log-prob is a finite number from about -745 to 0)",
                hint=_BAD_SCORES_HINT,
                raw_body=body,
            )
    if not picked and len(text) > len(prefix):
        raise BadResponse(
            provider,
            f"the server's answer has no token of the scored text (logprobs.text_offset {_short(offsets)} "
            f"for a prompt of {len(text)} characters)",
            hint=_BAD_SCORES_HINT,
            raw_body=body,
        )
    return TokenScores(
        tokens=tuple(str(token) for token in picked_tokens),
        logprobs=tuple(float(value) for value in picked),
        evaluated_tokens=count,
    )
