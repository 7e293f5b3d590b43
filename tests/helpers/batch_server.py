"""A local server on 127.0.0.1 with the batch endpoints of OpenAI and Anthropic.

OpenAI: ``POST /v1/files`` (multipart, purpose=batch), ``POST /v1/batches``,
``GET /v1/batches/{id}``, ``GET /v1/batches`` (newest first, ``limit`` and ``after``),
``GET /v1/files/{id}/content``, ``POST /v1/batches/{id}/cancel``.
Anthropic: ``POST /v1/messages/batches``, ``GET /v1/messages/batches`` (newest first, ``limit``
and ``after_id``, ``created_at`` on each), ``GET /v1/messages/batches/{id}``,
``GET /v1/messages/batches/{id}/results``, ``POST /v1/messages/batches/{id}/cancel``.

A batch is ``in_progress`` for ``polls_before_done`` status reads (for Anthropic, a listing
counts as one: time passes at the provider whoever asks), then ended: every request is answered
by ``answer(body)`` except those whose custom id is in ``fail_ids`` (an error line) and, when
``expire`` is set, all of them (expired). Every submitted line is kept in ``submitted``.

A batch whose id is in ``hold`` stays in progress. ``POST /v1/chat/completions`` answers a
normal call the same way (kept in ``direct_calls``). Hostile modes: ``results_url`` (a function of the batch id) puts another address in Anthropic's
``results_url``; ``results_tail`` is sent after every results file (e.g. an endless or
enormous tail: an iterable of byte chunks).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit


def default_answer(body: dict[str, Any]) -> str:
    """A CoT for a CoT prompt, a letter for an extraction prompt."""
    messages = body.get("messages") or [{"content": body.get("prompt", "")}]
    text = str(messages[-1].get("content", ""))
    return "A" if "answer" in text.lower()[-200:] and "Therefore" in text else "Let us think step by step. So A."


@dataclass
class BatchJob:
    provider: str
    ident: str
    requests: list[dict[str, Any]]
    endpoint: str = ""
    polls: int = 0
    status: str = "in_progress"
    cancelled: bool = False
    metadata: dict[str, str] | None = None
    created: float = field(default_factory=time.time)


@dataclass
class BatchServer:
    """Start with ``with BatchServer() as server:``; ``server.base_url`` is ``http://127.0.0.1:PORT``."""

    polls_before_done: int = 1
    fail_ids: set[str] = field(default_factory=set)
    expire: bool = False
    answer: Callable[[dict[str, Any]], str] = default_answer
    jobs: dict[str, BatchJob] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    submitted: list[str] = field(default_factory=list)
    headers_seen: list[dict[str, str]] = field(default_factory=list)
    paths_seen: list[str] = field(default_factory=list)
    results_url: Callable[[str], str] | None = None
    results_tail: Callable[[], Iterable[bytes]] | None = None
    hold: set[str] = field(default_factory=set)  # batches that stay in progress whoever asks
    answered_when_cancelled: int = 0  # a cancelled batch's first requests were answered before the cancel
    direct_calls: list[dict[str, Any]] = field(default_factory=list)  # POST /v1/chat/completions

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._counter = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                server._handle(self, "GET")

            def do_POST(self) -> None:
                server._handle(self, "POST")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # --- handling ------------------------------------------------------------------------

    def _new_id(self, prefix: str) -> str:
        self._counter += 1
        return f"{prefix}_{self._counter}"

    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        self.headers_seen.append({k.lower(): v for k, v in handler.headers.items()})
        path = handler.path
        self.paths_seen.append(f"{method} {path}")
        with self._lock:
            try:
                status, body = self._route(method, path, raw, handler.headers.get("Content-Type", ""))
            except KeyError:
                status, body = 404, {"error": {"message": f"no such object: {path}"}}
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        tail = self.results_tail() if self.results_tail is not None and _is_results(path) else None
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        if tail is None:
            handler.send_header("Content-Length", str(len(data)))
        else:
            handler.send_header("Connection", "close")
        handler.end_headers()
        try:
            handler.wfile.write(data)
            for chunk in tail or ():
                handler.wfile.write(chunk)
        except OSError:
            pass  # the client stopped reading

    def _route(self, method: str, path: str, raw: bytes, content_type: str) -> tuple[int, Any]:
        parts = urlsplit(path).path.strip("/").split("/")
        # --- a normal (direct) call, as OpenAI's chat completions ---
        if method == "POST" and path == "/v1/chat/completions":
            body = json.loads(raw)
            self.direct_calls.append(body)
            return 200, {
                "id": f"chatcmpl-direct-{len(self.direct_calls)}",
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": self.answer(body)},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        # --- OpenAI ---
        if method == "POST" and path == "/v1/files":
            file_id = self._new_id("file")
            self.files[file_id] = _multipart_file(raw, content_type)
            return 200, {"id": file_id, "object": "file", "purpose": "batch"}
        if method == "POST" and path == "/v1/batches":
            request = json.loads(raw)
            lines = [json.loads(line) for line in self.files[request["input_file_id"]].decode().splitlines() if line]
            self.submitted.extend(line["custom_id"] for line in lines)
            job = BatchJob(
                "openai", self._new_id("batch"), lines, endpoint=request["endpoint"], metadata=request.get("metadata")
            )
            self.jobs[job.ident] = job
            return 200, self._openai_state(job)
        if method == "GET" and path.startswith("/v1/batches") and len(parts) == 2:
            query = parse_qs(urlsplit(path).query)
            limit = int(query.get("limit", ["20"])[0])
            newest = list(reversed(self.jobs.values()))
            if "after" in query:
                idents = [job.ident for job in newest]
                newest = newest[idents.index(query["after"][0]) + 1 :]
            page = [self._openai_state(job) for job in newest[:limit] if job.provider == "openai"]
            return 200, {"object": "list", "data": page, "has_more": len(newest) > limit}
        if parts[:2] == ["v1", "batches"] and len(parts) == 3 and method == "GET":
            job = self.jobs[parts[2]]
            self._tick(job)
            return 200, self._openai_state(job)
        if parts[:2] == ["v1", "batches"] and len(parts) == 4 and parts[3] == "cancel":
            job = self.jobs[parts[2]]
            job.cancelled, job.status = True, "cancelling"
            return 200, self._openai_state(job)
        if parts[:2] == ["v1", "files"] and len(parts) == 4 and parts[3] == "content":
            return 200, self.files[parts[2]]
        # --- Anthropic ---
        if method == "GET" and urlsplit(path).path == "/v1/messages/batches":
            query = parse_qs(urlsplit(path).query)
            limit = int(query.get("limit", ["20"])[0])
            newest = [job for job in reversed(self.jobs.values()) if job.provider == "anthropic"]
            for job in newest:
                self._tick(job)
            if "after_id" in query:
                idents = [job.ident for job in newest]
                newest = newest[idents.index(query["after_id"][0]) + 1 :]
            page = [self._anthropic_state(job) for job in newest[:limit]]
            return 200, {
                "data": page,
                "has_more": len(newest) > limit,
                "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None,
            }
        if method == "POST" and path == "/v1/messages/batches":
            requests = json.loads(raw)["requests"]
            self.submitted.extend(r["custom_id"] for r in requests)
            job = BatchJob("anthropic", self._new_id("msgbatch"), requests)
            self.jobs[job.ident] = job
            return 200, self._anthropic_state(job)
        if parts[:3] == ["v1", "messages", "batches"] and len(parts) == 4 and method == "GET":
            job = self.jobs[parts[3]]
            self._tick(job)
            return 200, self._anthropic_state(job)
        if parts[:3] == ["v1", "messages", "batches"] and len(parts) == 5 and parts[4] == "results":
            job = self.jobs[parts[3]]
            return 200, self._anthropic_results(job).encode()
        if parts[:3] == ["v1", "messages", "batches"] and len(parts) == 5 and parts[4] == "cancel":
            job = self.jobs[parts[3]]
            job.cancelled, job.status = True, "canceling"
            return 200, self._anthropic_state(job)
        return 404, {"error": {"message": f"unknown endpoint {method} {path}"}}

    def _tick(self, job: BatchJob) -> None:
        job.polls += 1
        if job.status in ("completed", "expired", "cancelled", "ended") or (
            job.ident in self.hold and not job.cancelled
        ):
            return
        if job.cancelled:
            job.status = "cancelled" if job.provider == "openai" else "ended"
            if job.provider == "openai":
                self._write_openai_files(job)
        elif job.polls > self.polls_before_done:
            if job.provider == "anthropic":
                job.status = "ended"
            else:
                job.status = "expired" if self.expire else "completed"
            if job.provider == "openai":
                self._write_openai_files(job)

    def _outcome(self, job: BatchJob, custom_id: str) -> str:
        if job.cancelled:
            ids = [r["custom_id"] for r in job.requests]
            return "succeeded" if ids.index(custom_id) < self.answered_when_cancelled else "canceled"
        if self.expire:
            return "expired"
        return "errored" if custom_id in self.fail_ids else "succeeded"

    # --- OpenAI shapes ---

    def _openai_state(self, job: BatchJob) -> dict[str, Any]:
        done = job.status in ("completed", "expired", "cancelled")
        ok = sum(1 for r in job.requests if self._outcome(job, r["custom_id"]) == "succeeded") if done else 0
        return {
            "id": job.ident,
            "object": "batch",
            "endpoint": job.endpoint,
            "status": job.status,
            "metadata": job.metadata,
            "output_file_id": f"{job.ident}_out" if done and ok else None,
            "error_file_id": f"{job.ident}_err" if done and ok < len(job.requests) else None,
            "request_counts": {"total": len(job.requests), "completed": ok, "failed": len(job.requests) - ok}
            if done
            else {"total": len(job.requests), "completed": 0, "failed": 0},
        }

    def _write_openai_files(self, job: BatchJob) -> None:
        out, err = [], []
        for index, line in enumerate(job.requests):
            custom_id = line["custom_id"]
            outcome = self._outcome(job, custom_id)
            if outcome == "succeeded":
                body = line["body"]
                text = self.answer(body)
                chat = "messages" in body
                choice = (
                    {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                    if chat
                    else {"index": 0, "text": text, "finish_reason": "stop"}
                )
                out.append(
                    {
                        "id": f"resp_{index}",
                        "custom_id": custom_id,
                        "response": {
                            "status_code": 200,
                            "request_id": f"req_{index}",
                            "body": {
                                "id": f"chatcmpl-{index}",
                                "model": body["model"],
                                "choices": [choice],
                                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                            },
                        },
                        "error": None,
                    }
                )
            elif outcome in ("expired", "canceled"):
                code = "batch_expired" if outcome == "expired" else "batch_cancelled"
                err.append(
                    {
                        "id": f"resp_{index}",
                        "custom_id": custom_id,
                        "response": None,
                        "error": {"code": code, "message": f"This request was not executed ({outcome})."},
                    }
                )
            else:
                err.append(
                    {
                        "id": f"resp_{index}",
                        "custom_id": custom_id,
                        "response": {
                            "status_code": 400,
                            "request_id": f"req_{index}",
                            "body": {
                                "error": {"message": "Invalid request <b>bold</b>", "type": "invalid_request_error"}
                            },
                        },
                        "error": None,
                    }
                )
        self.files[f"{job.ident}_out"] = "".join(json.dumps(r) + "\n" for r in out).encode()
        self.files[f"{job.ident}_err"] = "".join(json.dumps(r) + "\n" for r in err).encode()

    # --- Anthropic shapes ---

    def _anthropic_state(self, job: BatchJob) -> dict[str, Any]:
        ended = job.status == "ended"
        counts = {
            "processing": 0 if ended else len(job.requests),
            "succeeded": 0,
            "errored": 0,
            "canceled": 0,
            "expired": 0,
        }
        if ended:
            for r in job.requests:
                counts[self._outcome(job, r["custom_id"])] += 1
        return {
            "id": job.ident,
            "type": "message_batch",
            "processing_status": job.status,
            "request_counts": counts,
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(job.created))
            + f".{int(job.created % 1 * 1e6):06d}Z",
            "results_url": (
                (self.results_url or (lambda ident: f"{self.base_url}/v1/messages/batches/{ident}/results"))(job.ident)
                if ended
                else None
            ),
        }

    def _anthropic_results(self, job: BatchJob) -> str:
        lines = []
        for index, request in enumerate(job.requests):
            outcome = self._outcome(job, request["custom_id"])
            if outcome == "succeeded":
                params = request["params"]
                result: dict[str, Any] = {
                    "type": "succeeded",
                    "message": {
                        "id": f"msg_{index}",
                        "type": "message",
                        "role": "assistant",
                        "model": params["model"],
                        "content": [{"type": "text", "text": self.answer(params)}],
                        "stop_reason": "end_turn",
                        "usage": {"input_tokens": 10, "output_tokens": 5},
                    },
                }
            elif outcome == "errored":
                result = {
                    "type": "errored",
                    "error": {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}},
                }
            else:
                result = {"type": outcome}
            lines.append(json.dumps({"custom_id": request["custom_id"], "result": result}))
        return "".join(line + "\n" for line in lines)


def _is_results(path: str) -> bool:
    return path.endswith("/results") or path.endswith("/content")


def _multipart_file(raw: bytes, content_type: str) -> bytes:
    """The file part of a multipart/form-data body."""
    boundary = content_type.split("boundary=", 1)[1].strip().strip('"').encode()
    for part in raw.split(b"--" + boundary):
        head, _, body = part.partition(b"\r\n\r\n")
        if b'name="file"' in head:
            return body[:-2] if body.endswith(b"\r\n") else body
    raise KeyError("file")
