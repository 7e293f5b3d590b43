"""Test servers on 127.0.0.1: a scripted OpenAI/Anthropic-shaped fault injector and a launcher
for llama-cpp-python's OpenAI-compatible server.

:class:`FakeModelServer` answers like an OpenAI-compatible server (``/v1/chat/completions``,
``/v1/completions``) or like Anthropic's Messages API (``/v1/messages``). Queue :class:`Reply`
objects on it to inject faults (a status with headers, a slow answer, an answer held until the
client gives up, a connection dropped mid-body, invalid JSON, an empty ``choices``, another
content type, a redirect); when the queue is empty it answers normally (or as its ``responder`` says). Every request is recorded with its
headers, JSON body and arrival time. ``tests/core/generation/backends/test_fault_matrix.py``
runs every failure class against every HTTP backend. A ``/v1/completions`` request with
``echo`` and ``logprobs`` gets the prompt's token log-probs from a toy language model
(:func:`toy_echo_logprobs`), as vLLM or llama-cpp-python's server would.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self


@dataclass
class Reply:
    """One scripted answer. ``drop_after`` sends that many body bytes, then closes the socket
    (the Content-Length promises the whole body); ``delay`` is seconds before answering;
    ``stream_bytes`` sends that many bytes of ``body`` repeated, with no Content-Length (the
    body ends when the connection closes: an "endless" answer, bounded for the test)."""

    status: int = 200
    body: Any = None  # dict/list -> JSON, str/bytes as they are, None -> the normal answer
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop_after: int | None = None
    stream_bytes: int | None = None
    #: The Content-Type header sent (a web page's ``text/html`` where JSON was expected).
    content_type: str = "application/json"
    #: Seconds between the body's bytes (a slow drip: each read gets something, the whole never
    #: comes in time); 0: the body at once.
    drip: float = 0.0
    #: No answer until the client hangs up (at most ``HANG_LIMIT`` seconds): a timeout however
    #: slow the machine is, where a fixed ``delay`` races the client's clock.
    hang: bool = False


#: The longest a ``Reply(hang=True)`` holds a request (the server's shutdown waits for it).
HANG_LIMIT = 60.0


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    json: Any
    time: float  # time.monotonic() at arrival


class _QuietServer(ThreadingHTTPServer):
    """A threaded HTTP server that does not print a traceback when a client hangs up mid-answer
    (the endless-body test and cancelled requests close the connection on purpose; anything
    else is still printed)."""

    daemon_threads = True
    # socketserver's default backlog of 5 reset connections when 32 clients connected at once.
    request_queue_size = 256

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


def _wait_for_hang_up(connection: socket.socket, limit: float) -> None:
    """Return when the client closes ``connection`` (or sends more), or after ``limit`` seconds."""
    import select

    deadline = time.monotonic() + limit
    while (left := deadline - time.monotonic()) > 0:
        readable, _, _ = select.select([connection], [], [], min(left, 0.5))
        if readable:
            return


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class FakeModelServer:
    """A threaded HTTP server answering like a model provider, with injectable faults.

    ``api_key`` (if set) must come as ``Authorization: Bearer`` or ``x-api-key``, else 401;
    ``models`` (if set) are the known models, else 404. With ``models`` and ``list_models``,
    ``GET /v1/models`` lists them (OpenAI) and ``GET /v1/models/{id}`` answers 200 or 404
    (Anthropic); otherwise every GET is a 404, as on a server without those routes.
    """

    def __init__(
        self, *, api_key: str | None = None, models: tuple[str, ...] | None = None, list_models: bool = True
    ) -> None:
        self.api_key = api_key
        self.models = models
        self.list_models = list_models
        #: The paths of the GET requests received (model look-ups), oldest first.
        self.gets: list[str] = []
        self.replies: deque[Reply] = deque()
        self.requests: list[Recorded] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.killed = False  # see kill()
        # Answers requests the queue does not script; None (or a None answer): the normal answer.
        self.responder: Callable[[Recorded], Reply | None] | None = None
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes: with Nagle's algorithm the body waited for
            # the client's delayed ACK (40 ms a request).
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # http.server's naming
                server.gets.append(self.path)
                status, body = server._get_answer(self.path)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # http.server's naming
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                try:
                    payload = json.loads(raw)
                except ValueError:
                    payload = None
                record = Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, payload, time.monotonic())
                with server._lock:
                    server.requests.append(record)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    scripted = server.replies.popleft() if server.replies else None
                try:
                    server._answer(self, record, scripted)
                finally:
                    with server._lock:
                        server.in_flight -= 1

        self._httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (``.../v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root_url(self) -> str:
        """The Anthropic-style base URL (the client adds ``/v1/messages``)."""
        return f"http://127.0.0.1:{self.port}"

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def kill(self) -> None:
        """Die like a crashed server: new connections are refused, and every request in
        progress or arriving on a kept-alive connection gets its connection closed unanswered."""
        self.killed = True
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # --- answers ------------------------------------------------------------------------

    def _get_answer(self, path: str) -> tuple[int, Any]:
        path = path.split("?", 1)[0].rstrip("/")
        if self.models is not None and self.list_models:
            if path == "/v1/models":
                return 200, {"object": "list", "data": [{"id": name, "object": "model"} for name in self.models]}
            if path.startswith("/v1/models/"):
                name = path.removeprefix("/v1/models/")
                if name in self.models:
                    return 200, {"type": "model", "id": name, "display_name": name}
                return 404, _error(True, "not_found_error", f"model: {name}")
        return 404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}}

    def _answer(self, handler: BaseHTTPRequestHandler, record: Recorded, scripted: Reply | None) -> None:
        if scripted is None and self.responder is not None:
            scripted = self.responder(record)
        reply = scripted or Reply()
        if reply.delay:
            time.sleep(reply.delay)
        if reply.hang:
            _wait_for_hang_up(handler.connection, HANG_LIMIT)
            handler.close_connection = True
            return
        if self.killed:
            handler.close_connection = True
            handler.connection.shutdown(socket.SHUT_RDWR)
            return
        anthropic = record.path.endswith("/messages")
        if scripted is None or (reply.status == 200 and reply.body is None):
            reply = (
                self._normal(record, anthropic)
                if scripted is None
                else Reply(
                    reply.status,
                    self._normal(record, anthropic).body,
                    reply.headers,
                    0,
                    reply.drop_after,
                    content_type=reply.content_type,
                )
            )
        body = reply.body
        data = (
            (json.dumps(body) if isinstance(body, (dict, list)) else body or "").encode()
            if not isinstance(body, bytes)
            else body
        )
        handler.send_response(reply.status)
        handler.send_header("Content-Type", reply.content_type)
        if reply.stream_bytes is not None:
            self._stream(handler, data or b"x", reply.stream_bytes)
            return
        handler.send_header("Content-Length", str(len(data)))
        for name, value in reply.headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        if reply.drip:
            try:
                for at in range(len(data)):
                    handler.wfile.write(data[at : at + 1])
                    handler.wfile.flush()
                    time.sleep(reply.drip)
            except OSError:
                pass  # the client gave up: what the test wants
            return
        if reply.drop_after is not None:
            handler.wfile.write(data[: reply.drop_after])
            handler.wfile.flush()
            handler.close_connection = True
            handler.connection.shutdown(socket.SHUT_RDWR)
            return
        handler.wfile.write(data)

    @staticmethod
    def _stream(handler: BaseHTTPRequestHandler, unit: bytes, total: int) -> None:
        """Up to ``total`` bytes of ``unit`` repeated, then close; stops when the client hangs up."""
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.close_connection = True
        block = unit * max(1, 65536 // len(unit))
        sent = 0
        try:
            while sent < total:
                handler.wfile.write(block)
                sent += len(block)
        except OSError:
            pass  # the client stopped reading: what the test wants

    def _normal(self, record: Recorded, anthropic: bool) -> Reply:
        headers = record.headers
        given = headers.get("x-api-key") if anthropic else headers.get("authorization", "").removeprefix("Bearer ")
        payload = record.json if isinstance(record.json, dict) else {}
        model = payload.get("model", "")
        if self.api_key is not None and given != self.api_key:
            return Reply(401, _error(anthropic, "authentication_error", "invalid api key"))
        if self.models is not None and model not in self.models:
            return Reply(404, _error(anthropic, "not_found_error", f"model: {model}"))
        if anthropic:
            if headers.get("anthropic-version") is None:
                return Reply(400, _error(True, "invalid_request_error", "anthropic-version missing"))
            last = payload["messages"][-1]["content"]
            return Reply(
                200,
                {
                    "id": "msg_test",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [{"type": "text", "text": f"echo: {last}"}],
                    "stop_reason": "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": len(last.split()), "output_tokens": 2 + len(last.split())},
                },
            )
        chat = record.path.endswith("/chat/completions")
        if not chat and payload.get("echo") and payload.get("logprobs") is not None:
            return Reply(200, toy_echo_logprobs(str(payload.get("prompt", "")), model))
        text_in = payload["messages"][-1]["content"] if chat else payload.get("prompt", "")
        choices = []
        for index in range(int(payload.get("n", 1))):
            text = f"echo {index}: {text_in}"
            choice: dict[str, Any] = {"index": index, "finish_reason": "stop"}
            choice.update({"message": {"role": "assistant", "content": text}} if chat else {"text": text})
            choices.append(choice)
        choices.reverse()  # clients must order by index, not by position
        return Reply(
            200,
            {
                "id": "cmpl-test",
                "object": "chat.completion" if chat else "text_completion",
                "model": model,
                "choices": choices,
                "usage": {
                    "prompt_tokens": len(text_in.split()),
                    "completion_tokens": 3 * len(choices),
                    "total_tokens": len(text_in.split()) + 3 * len(choices),
                },
            },
        )


def toy_logprob(context: str, token: str) -> float:
    """The toy language model: a word seen earlier in the context is likely (-0.5), a new one is
    not (-3.0), so a rationale naming the words that follow lowers their loss."""
    seen = {word.lower() for word in re.findall(r"\w+", context)}
    words = re.findall(r"\w+", token)
    return -0.5 if words and all(word.lower() in seen for word in words) else -3.0


def toy_echo_logprobs(prompt: str, model: str) -> dict[str, Any]:
    """A /v1/completions answer with echo + logprobs for ``prompt`` (whitespace-led word tokens,
    the first token without a log-prob as OpenAI's API has it) and one generated token."""
    tokens = re.findall(r"\s*\S+|\s+$", prompt) + ["!"]
    offsets, logprobs, position = [], [], 0
    for index, token in enumerate(tokens):
        offsets.append(position)
        logprobs.append(None if index == 0 else toy_logprob(prompt[:position], token))
        position += len(token)
    return {
        "id": "cmpl-echo",
        "object": "text_completion",
        "model": model,
        "choices": [
            {
                "index": 0,
                "text": prompt + "!",
                "finish_reason": "length",
                "logprobs": {
                    "tokens": tokens,
                    "token_logprobs": logprobs,
                    "text_offset": offsets,
                    "top_logprobs": None,
                },
            }
        ],
        "usage": {"prompt_tokens": len(tokens) - 1, "completion_tokens": 1, "total_tokens": len(tokens)},
    }


def _error(anthropic: bool, kind: str, message: str) -> dict[str, Any]:
    if anthropic:
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "code": kind}}


class LlamaServer:
    """llama-cpp-python's OpenAI-compatible server in a subprocess, on a free 127.0.0.1 port."""

    def __init__(
        self,
        model_path: Path,
        log_path: Path,
        *,
        n_ctx: int = 512,
        api_key: str | None = None,
        model_alias: str = "gemma-test",
    ) -> None:
        self.port = free_port()
        self.model_alias = model_alias
        self.log_path = log_path
        command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model_path),
            "--model_alias",
            model_alias,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(n_ctx),
            "--n_threads",
            "2",
            "--verbose",
            "False",
        ]
        if api_key:
            command += ["--api_key", api_key]
        self._log = log_path.open("wb")
        env = {**os.environ, "NO_PROXY": "127.0.0.1"}
        self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT, env=env)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def wait_ready(self, timeout: float = 180.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama server exited: {self.log_path.read_text(errors='replace')[-2000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/v1/models", timeout=2):
                    return
            except urllib.error.HTTPError:
                return  # it answers (401 when it wants a key): it is up
            except OSError:
                time.sleep(0.1)  # polled until it answers
        raise RuntimeError(f"llama server not ready after {timeout} s; log: {self.log_path}")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()


#: The shapes :class:`ReasoningServer` answers in (issue 24): OpenAI-compatible chat with the
#: thinking in ``reasoning_content`` (DeepSeek, SGLang, llama.cpp's server, old vLLM) or
#: ``reasoning`` (vLLM, OpenRouter), inline ``<think>`` tags, only the closing tag (the template
#: opened it: Qwen3-Thinking, R1), the two streamed as server-sent events, and Anthropic
#: messages with thinking (and redacted thinking) blocks.
REASONING_SHAPES = (
    "reasoning_content",
    "reasoning",
    "think_tags",
    "closing_tag_only",
    "stream_reasoning_content",
    "stream_reasoning",
    "anthropic_thinking",
    "anthropic_redacted",
)


class ReasoningServer(FakeModelServer):
    """A fake provider whose model thinks: every chat answer carries ``thinking`` (then
    ``answer``) in the chosen ``shape`` of REASONING_SHAPES, with ``reasoning_tokens`` in the
    usage (OpenAI's ``completion_tokens_details``; None: not reported) and ``finish_reason``.
    ``thinking_value`` (when set) is sent as the thinking field as it is (a number, a list...)."""

    def __init__(self, shape: str = "reasoning_content", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if shape not in REASONING_SHAPES:
            raise ValueError(shape)
        self.shape = shape
        self.thinking = "9.8 = 9.80 and 80 > 11, so 9.8 is larger. Wait, let me check: yes."
        self.answer = "9.8 is larger. The answer is 9.8"
        self.reasoning_tokens: int | None = 17
        self.finish_reason = "stop"
        self.thinking_value: Any = None
        self.responder = self._reply

    def _field(self) -> Any:
        return self.thinking if self.thinking_value is None else self.thinking_value

    def _reply(self, record: Recorded) -> Reply:
        payload = record.json if isinstance(record.json, dict) else {}
        model = payload.get("model", "")
        if self.shape.startswith("anthropic"):
            blocks: list[dict[str, Any]] = []
            if self.shape == "anthropic_redacted":
                blocks.append({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"})
            blocks.append({"type": "thinking", "thinking": self._field(), "signature": "EqQBCgIYAhIM"})
            if self.answer:
                blocks.append({"type": "text", "text": self.answer})
            return Reply(
                200,
                {
                    "id": "msg_think",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": blocks,
                    "stop_reason": "max_tokens" if self.finish_reason == "length" else "end_turn",
                    "usage": {"input_tokens": 12, "output_tokens": 40},
                },
            )
        usage: dict[str, Any] = {"prompt_tokens": 12, "completion_tokens": 40, "total_tokens": 52}
        if self.reasoning_tokens is not None:
            usage["completion_tokens_details"] = {"reasoning_tokens": self.reasoning_tokens}
        if self.shape.startswith("stream"):
            name = self.shape.removeprefix("stream_")
            pieces = [self._field()] if self.thinking_value is not None else _pieces(self.thinking)
            bodies: list[dict[str, Any]] = [
                {"delta": {"role": "assistant", "content": None}},
                *({"delta": {name: piece}} for piece in pieces),
                *({"delta": {"content": piece}} for piece in _pieces(self.answer)),
                {"delta": {}, "finish_reason": self.finish_reason},
            ]
            events: list[dict[str, Any]] = [
                {"id": "c1", "object": "chat.completion.chunk", "model": model, "choices": [{"index": 0, **body}]}
                for body in bodies
            ]
            events.append(
                {"id": "c1", "object": "chat.completion.chunk", "model": model, "choices": [], "usage": usage}
            )
            text = "".join(f"data: {json.dumps(event)}\n\n" for event in events) + "data: [DONE]\n\n"
            return Reply(200, text, content_type="text/event-stream")
        message: dict[str, Any] = {"role": "assistant"}
        if self.shape in ("reasoning_content", "reasoning"):
            message[self.shape] = self._field()
            message["content"] = self.answer or None
        elif self.shape == "think_tags":
            message["content"] = f"<think>\n{self.thinking}\n</think>\n\n{self.answer}"
        else:
            message["content"] = f"{self.thinking}\n</think>\n\n{self.answer}"
        return Reply(
            200,
            {
                "id": "chat-think",
                "object": "chat.completion",
                "model": model,
                "choices": [{"index": 0, "finish_reason": self.finish_reason, "message": message}],
                "usage": usage,
            },
        )


def _pieces(text: str, size: int = 7) -> list[str]:
    """``text`` in pieces of ``size`` characters, as a stream's deltas come."""
    return [text[at : at + size] for at in range(0, len(text), size)]


class StepJudgeServer(FakeModelServer):
    """An OpenAI-compatible step judge with deterministic answers (ProcessBench's layout): it
    reads the tagged paragraphs of the prompt and answers, in ``\\boxed{}``, the first
    paragraph whose arithmetic ``a op b = c`` is false (-1 when none is); a paragraph holding
    "undecidable" gets an answer without a box (unparseable). The reasoning before the box
    holds an earlier ``\\boxed{}`` on purpose: the parser must take the last one."""

    _PARAGRAPH = re.compile(r"<paragraph_(\d+)>\n(.*?)\n</paragraph_\1>", re.DOTALL)
    _SUM = re.compile(r"(\d+(?:\.\d+)?)\s*([-+*/])\s*(\d+(?:\.\d+)?)\s*=\s*(\d+(?:\.\d+)?)")

    def verdict(self, prompt: str) -> str:
        paragraphs = self._PARAGRAPH.findall(prompt)
        if any("undecidable" in text for _, text in paragraphs):
            return "I cannot tell which paragraph is wrong."
        for index, text in paragraphs:
            for a, op, b, c in self._SUM.findall(text):
                x, y = float(a), float(b)
                value = {"+": x + y, "-": x - y, "*": x * y, "/": x / y if y else float("nan")}[op]
                if abs(value - float(c)) > 1e-9:
                    return f"Draft: \\boxed{{-1}}. Checking again, paragraph {index} is wrong. \\boxed{{{index}}}"
        return "Every paragraph holds. \\boxed{-1}"

    def _normal(self, record: Recorded, anthropic: bool) -> Reply:
        payload = record.json if isinstance(record.json, dict) else {}
        if payload.get("model") != "step-judge" or not record.path.endswith("/chat/completions"):
            return super()._normal(record, anthropic)
        prompt = "\n".join(str(m.get("content", "")) for m in payload.get("messages", []))
        message = {"role": "assistant", "content": self.verdict(prompt)}
        return Reply(
            200,
            {
                "id": "judge",
                "object": "chat.completion",
                "model": "step-judge",
                "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
                "usage": {"prompt_tokens": 300, "completion_tokens": 20, "total_tokens": 320},
            },
        )
