"""Anthropic's Messages API (``POST /v1/messages`` with ``x-api-key`` and ``anthropic-version``)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from thoughtdesk.core.generation.backends.base import (
    Backend,
    BadResponse,
    Capabilities,
    Request,
    Response,
    TokenCallback,
    join_raw_bodies,
    sum_or_none,
)
from thoughtdesk.core.generation.backends.http import new_client, post_json, valid_token_count
from thoughtdesk.core.generation.backends.response_cap import response_byte_limit
from thoughtdesk.core.settings.logs import register_secret
from thoughtdesk.core.thinking import anthropic_thinking, thinking_field

ANTHROPIC_VERSION = "2023-06-01"


class AnthropicBackend(Backend):
    """Claude models through the Messages API.

    The API has no ``n`` and no seed: ``n`` samples are ``n`` concurrent calls. A raw prompt is
    sent as one user message; a ``system`` chat message becomes the top-level ``system`` field.
    """

    provider = "anthropic"
    capabilities = Capabilities(
        chat=True, completion=False, multiple_samples=False, seed=False, logprobs=False, prompt_logprobs=False
    )
    scoring_unsupported_reason = "Anthropic's Messages API returns no token log-probs"

    def __init__(
        self,
        api_key: str | None,
        *,
        base_url: str = "https://api.anthropic.com",
        version: str = ANTHROPIC_VERSION,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.version = version
        self._api_key = api_key
        register_secret(api_key)  # redacted wherever a server echoes it
        self._client = client or new_client()
        self._owns_client = client is None

    def __repr__(self) -> str:  # never show the key
        return f"AnthropicBackend(base_url={self.base_url!r}, version={self.version!r})"

    def _payload(self, request: Request) -> dict[str, Any]:
        system = [m.content for m in request.chat_messages() if m.role == "system"]
        payload: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "messages": [{"role": m.role, "content": m.content} for m in request.chat_messages() if m.role != "system"],
        }
        if system:
            payload["system"] = "\n\n".join(system)
        if request.stop:
            payload["stop_sequences"] = list(request.stop)
        thinking = anthropic_thinking(request.reasoning_effort, request.max_tokens)
        if thinking is not None:
            payload["thinking"] = thinking
            if thinking["type"] == "enabled":
                # The API refuses a temperature other than 1 with extended thinking.
                payload.pop("temperature")
        return payload

    async def complete(self, request: Request, on_token: TokenCallback | None = None) -> Response:
        """``n`` concurrent Messages calls, joined into one Response (raw bodies as a JSON list)."""
        parts = await asyncio.gather(*(self._call(request) for _ in range(request.n)))
        if len(parts) == 1:
            return parts[0]
        return Response(
            provider=self.provider,
            model=parts[0].model,
            texts=[part.texts[0] for part in parts],
            finish_reasons=[part.finish_reasons[0] for part in parts],
            reasonings=[part.reasoning_of(0) for part in parts] if any(p.reasonings for p in parts) else [],
            reasoning_notes=[part.reasoning_note_of(0) for part in parts]
            if any(p.reasoning_notes for p in parts)
            else [],
            reasoning_tokens=sum_or_none([part.reasoning_tokens for part in parts]),
            prompt_tokens=sum_or_none([part.prompt_tokens for part in parts]),
            completion_tokens=sum_or_none([part.completion_tokens for part in parts]),
            latency=max(part.latency for part in parts),
            raw_body=join_raw_bodies([part.raw_body for part in parts]),
        )

    async def _call(self, request: Request) -> Response:
        url = f"{self.base_url}/v1/messages"
        headers = {"content-type": "application/json", "anthropic-version": self.version}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        result = await post_json(
            self._client,
            provider=self.provider,
            url=url,
            payload=self._payload(request),
            headers=headers,
            timeout=request.timeout,
            model=request.model,
            max_bytes=response_byte_limit(request.max_tokens),
        )
        response = self.response_from_body(request, result.data, result.body, result.latency)
        response.rate_limits = result.rate_limits
        return response

    def batch_body(self, request: Request) -> tuple[str, dict[str, Any]]:
        """The endpoint path and ``params`` of ``request`` as one request of a Message Batch."""
        return "/v1/messages", self._payload(request)

    def response_from_body(self, request: Request, data: Any, body: str, latency: float = 0.0) -> Response:
        """The :class:`Response` of a message received another way (a batch's result);
        BadResponse when it is unusable, exactly as for a direct call."""
        hint = "the raw answer is kept with the failed request"
        if not isinstance(data, dict) or not isinstance(data.get("content"), list):
            raise BadResponse(self.provider, "the answer has no content list", hint=hint, raw_body=body)
        blocks = [block for block in data["content"] if isinstance(block, dict) and block.get("type") == "text"]
        texts = [block.get("text", "") for block in blocks]
        if any(not isinstance(text, str) for text in texts):  # a number or list where text belongs
            raise BadResponse(self.provider, "a text block of the answer holds no text", hint=hint, raw_body=body)
        thinking, note = _thinking_blocks(data["content"])
        stop_reason = data.get("stop_reason")
        if not texts and (thinking is not None or stop_reason == "max_tokens"):
            texts = [""]  # cut while thinking (or before any text): stored, its outcome says so
        if not texts:
            raise BadResponse(self.provider, "the answer has no text content", hint=hint, raw_body=body)
        reported = data.get("usage")
        usage = reported if isinstance(reported, dict) else {}
        details = usage.get("output_tokens_details")
        return Response(
            provider=self.provider,
            model=str(data.get("model") or request.model),
            texts=["".join(texts)],
            finish_reasons=[stop_reason if isinstance(stop_reason, str) else None],
            prompt_tokens=valid_token_count(usage.get("input_tokens")),
            completion_tokens=valid_token_count(usage.get("output_tokens")),
            latency=latency,
            raw_body=body,
            reasonings=[thinking] if thinking is not None else [],
            reasoning_notes=[note] if note is not None else [],
            reasoning_tokens=valid_token_count(details.get("thinking_tokens")) if isinstance(details, dict) else None,
        )

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()


def _thinking_blocks(blocks: list[Any]) -> tuple[str | None, str | None]:
    """The thinking of a message's content blocks (``thinking`` blocks joined by blank lines) and
    a note: how many ``redacted_thinking`` blocks there were (encrypted by Anthropic; they stay
    in the raw answer only and are never sent anywhere), or a thinking field that is not text.
    A message with only redacted thinking has the thinking ``""`` (it thought; nothing legible)."""
    texts: list[str] = []
    notes: list[str] = []
    redacted = 0
    for number, block in enumerate(blocks):
        if not isinstance(block, dict):
            continue
        if block.get("type") == "redacted_thinking":
            redacted += 1
        elif block.get("type") == "thinking":
            text, note = thinking_field(block.get("thinking"), f"content[{number}].thinking")
            if text is not None:
                texts.append(text)
            elif note is not None:
                notes.append(note)
    if redacted:
        notes.append(
            f"redacted thinking: {redacted} block(s) encrypted by Anthropic, kept only in the raw answer "
            "and never sent anywhere"
        )
    thinking = "\n\n".join(texts) if texts else ("" if redacted else None)
    return thinking, "; ".join(notes) or None
