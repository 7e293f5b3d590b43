"""A local OpenAI-shaped server that enforces a real rate limit, like the providers do.

Two token buckets, requests per minute and tokens per minute, refill continuously; each holds
``burst_seconds`` worth of its limit (providers: a minute's worth). A request is admitted when
both buckets cover it (one request; prompt characters / 4 (+ 4 per chat message) +
``max_tokens`` tokens, charged on arrival as OpenAI does), else answered at once with 429, ``Retry-After`` (whole seconds) and
``retry-after-ms``. Admitted requests are answered after ``delay`` seconds. With ``headers`` every
answer (also a 429) carries ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}`` as OpenAI
sends them. Connections are kept alive (HTTP/1.1).

In a test: ``with RateLimitServer(...) as server:`` (runs in a thread with its own event loop).
For a benchmark, run it as a separate process so it does not share the client's GIL:
``python -m tests.helpers.rate_limit_server --port P --rpm 1200 ...``; ``GET /stats`` answers
the counts, admission and refusal times (seconds since the first request).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Self

ANSWER = {
    "id": "rl",
    "object": "chat.completion",
    "model": "rl",
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "The answer is 42."}}
    ],
    "usage": {"prompt_tokens": 20, "completion_tokens": 6, "total_tokens": 26},
}


@dataclass
class Bucket:
    """``limit`` per minute, holding at most ``capacity``; starts full."""

    limit: float
    capacity: float
    level: float = -1.0
    at: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        if self.level < 0:
            self.level = self.capacity

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.at) * self.limit / 60.0)
        self.at = now

    def seconds_until(self, amount: float) -> float:
        missing = min(amount, self.capacity) - self.level
        return 0.0 if missing <= 0 else missing * 60.0 / self.limit

    def reset(self) -> float:
        """Seconds until full again."""
        return (self.capacity - self.level) * 60.0 / self.limit


@dataclass
class Stats:
    admitted: int = 0
    rejected: int = 0
    admit_times: list[float] = field(default_factory=list)
    reject_times: list[float] = field(default_factory=list)
    first: float | None = None


class RateLimitServer:
    """See the module docstring. ``rpm``/``tpm`` None: that bucket is not limited."""

    def __init__(
        self,
        *,
        rpm: float | None = 600,
        tpm: float | None = None,
        burst_seconds: float = 60.0,
        delay: float = 0.05,
        headers: bool = True,
        port: int = 0,
    ) -> None:
        self.requests = Bucket(rpm, rpm * burst_seconds / 60.0) if rpm else None
        self.tokens = Bucket(tpm, tpm * burst_seconds / 60.0) if tpm else None
        self.delay = delay
        self.headers = headers
        self.port = port
        self.stats = Stats()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # --- admission ---------------------------------------------------------------------------

    def _rate_headers(self) -> list[tuple[str, str]]:
        if not self.headers:
            return []
        out = []
        for kind, bucket in (("requests", self.requests), ("tokens", self.tokens)):
            if bucket is None:
                continue
            out += [
                (f"x-ratelimit-limit-{kind}", str(int(bucket.limit))),
                (f"x-ratelimit-remaining-{kind}", str(int(math.floor(bucket.level)))),
                (f"x-ratelimit-reset-{kind}", f"{bucket.reset():.3f}s"),
            ]
        return out

    def _admit(self, cost: float) -> float:
        """0 when admitted (buckets charged), else the seconds to wait."""
        now = time.monotonic()
        wait = 0.0
        for bucket, amount in ((self.requests, 1.0), (self.tokens, cost)):
            if bucket is not None:
                bucket.refill(now)
                wait = max(wait, bucket.seconds_until(amount))
        if wait > 0:
            self.stats.rejected += 1
            self.stats.reject_times.append(now - (self.stats.first if self.stats.first is not None else now))
            return wait
        for bucket, amount in ((self.requests, 1.0), (self.tokens, cost)):
            if bucket is not None:
                bucket.level -= min(amount, bucket.capacity)
        if self.stats.first is None:
            self.stats.first = now
        self.stats.admitted += 1
        self.stats.admit_times.append(now - self.stats.first)
        return 0.0

    # --- HTTP ----------------------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path = lines[0].split(" ")[:2]
                length = 0
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                raw = await reader.readexactly(length) if length else b""
                if method == "GET" and path == "/stats":
                    s = self.stats
                    body = {
                        "admitted": s.admitted,
                        "rejected": s.rejected,
                        "admit_times": s.admit_times,
                        "reject_times": s.reject_times,
                    }
                    self._write(writer, 200, [], json.dumps(body).encode())
                    await writer.drain()
                    continue
                try:
                    payload = json.loads(raw or b"{}")
                except ValueError:
                    payload = {}
                messages = payload.get("messages") or []
                prompt = sum(len(str(m.get("content", ""))) / 4 + 4 for m in messages if isinstance(m, dict))
                prompt += len(str(payload.get("prompt") or "")) / 4
                cost = prompt + float(payload.get("max_tokens") or 16)
                wait = self._admit(cost)
                if wait > 0:
                    extra = [("Retry-After", str(max(1, math.ceil(wait)))), ("retry-after-ms", str(int(wait * 1000)))]
                    error = {
                        "error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}
                    }
                    self._write(writer, 429, extra + self._rate_headers(), json.dumps(error).encode())
                else:
                    headers = self._rate_headers()  # as counted on arrival, like the providers
                    await asyncio.sleep(self.delay)
                    self._write(writer, 200, headers, json.dumps(ANSWER).encode())
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()

    @staticmethod
    def _write(writer: asyncio.StreamWriter, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        reason = {200: "OK", 429: "Too Many Requests"}[status]
        head = [f"HTTP/1.1 {status} {reason}", "Content-Type: application/json", f"Content-Length: {len(body)}"]
        head += [f"{k}: {v}" for k, v in headers]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)

    async def serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port, backlog=1024)
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        async with self._server:
            try:
                await self._server.serve_forever()
            except asyncio.CancelledError:
                pass

    def __enter__(self) -> Self:
        self._thread = threading.Thread(target=lambda: asyncio.run(self.serve()), daemon=True)
        self._thread.start()
        self._ready.wait(10)
        return self

    async def _shutdown(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in asyncio.all_tasks():
            if task is not asyncio.current_task():
                task.cancel()

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._server is not None:
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop)
        if self._thread is not None:
            self._thread.join(5)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--rpm", type=float, default=600)
    parser.add_argument("--tpm", type=float, default=0)
    parser.add_argument("--burst-seconds", type=float, default=60.0)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--no-headers", action="store_true")
    args = parser.parse_args()
    server = RateLimitServer(
        rpm=args.rpm or None,
        tpm=args.tpm or None,
        burst_seconds=args.burst_seconds,
        delay=args.delay,
        headers=not args.no_headers,
        port=args.port,
    )
    asyncio.run(server.serve())


if __name__ == "__main__":
    main()
