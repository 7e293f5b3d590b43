"""A local GGUF model run in-process through llama-cpp-python.

Inference blocks, so it runs on one dedicated worker thread (llama.cpp contexts are not
thread-safe, and one model at a time is what a laptop can run); ``complete`` awaits it, so the
asyncio loop (and a GUI driving it) stays responsive. Streamed pieces of text are handed to
``on_token`` on the event loop's thread. Cancelling the awaiting task stops generation at the
next token.

Scoring (``score``) uses a second instance of the model, loaded on the same worker thread only
when scoring is first asked for, with ``logits_all=True``: it keeps the logits of every position
(n_ctx x vocabulary floats), which generation does not need. :func:`score_with_llama` evaluates
a shared prefix once and each continuation after it through the KV cache.

The load settings, the GGUF file check, the memory estimate of a scoring copy and the routing of
llama.cpp's messages to the log are in :mod:`.llama_setup`, which needs no loaded model.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

from thoughtdesk.core.generation.backends.base import (
    Backend,
    BadRequest,
    BadResponse,
    Capabilities,
    ModelFileError,
    Request,
    Response,
    Timeout,
    TokenCallback,
    join_raw_bodies,
    sum_or_none,
)
from thoughtdesk.core.generation.backends.llama_scoring import (
    ScoringMemory,
    score_with_llama,
    scoring_memory_of,
)
from thoughtdesk.core.generation.backends.llama_setup import (
    PROVIDER,
    LlamaCppSettings,
    check_gguf_file,
    estimate_scoring_memory,
    load_key,
    route_llama_logs,
)
from thoughtdesk.core.generation.scoring import TokenScores
from thoughtdesk.core.thinking import DEFAULT_THINK_TAGS, KNOWN_THINK_TAGS, split_thinking


class LlamaCppBackend(Backend):
    """A GGUF model in this process. The model loads on first use (or :meth:`load`)."""

    provider = PROVIDER
    capabilities = Capabilities(
        chat=True,
        completion=True,
        multiple_samples=False,
        seed=True,
        # The generation instance is loaded without logits_all (it would keep n_ctx x vocabulary
        # floats), and llama-cpp-python refuses log-probs without it: completions carry none.
        # Log-probs of given text come from ``score`` on the scoring instance instead.
        logprobs=False,
        prompt_logprobs=False,
        streaming=True,
        scoring=True,
        # llama.cpp's CPU results depend on how tokens are split into evaluations (score_with_llama).
        stable_prefix_scores=False,
    )

    def __init__(self, settings: LlamaCppSettings, *, share: LlamaCppBackend | None = None) -> None:
        """``share``: another backend of the same file loaded with the same settings
        (:meth:`can_share`), whose loaded model, scoring copy and worker thread this one uses
        (a guided run's agent and helper roles on one GGUF load it once, whatever their
        sampling settings or prompt templates)."""
        self.settings = settings
        self.model_path = check_gguf_file(settings.model_path)
        if share is not None and not share.can_share(settings):
            raise ValueError(f"{share!r} is loaded with other settings than {settings}")
        self._host: _LoadedModel = share._host if share is not None else _LoadedModel()
        self._host.users += 1

    def can_share(self, settings: LlamaCppSettings) -> bool:
        """Whether a backend with ``settings`` can use this one's loaded model: the same file,
        context size, threads, GPU layers and default seed (the prompt templates may differ)."""
        return load_key(settings) == load_key(self.settings)

    # The loaded model and its worker, shared by backends of one file and load settings.
    @property
    def _llama(self) -> Any:
        return self._host.llama

    @_llama.setter
    def _llama(self, value: Any) -> None:
        self._host.llama = value

    @property
    def _scorer(self) -> Any:
        return self._host.scorer

    @_scorer.setter
    def _scorer(self, value: Any) -> None:
        self._host.scorer = value

    @property
    def _scoring_memory(self) -> ScoringMemory | None:
        return self._host.scoring_memory

    @_scoring_memory.setter
    def _scoring_memory(self, value: ScoringMemory | None) -> None:
        self._host.scoring_memory = value

    @property
    def _executor(self) -> ThreadPoolExecutor:
        return self._host.executor

    @property
    def _load_lock(self) -> asyncio.Lock:
        return self._host.load_lock

    @property
    def label(self) -> str:
        return f"llama.cpp ({self.model_path.name})"

    def __repr__(self) -> str:
        return f"LlamaCppBackend({str(self.model_path)!r}, n_ctx={self.settings.n_ctx})"

    def _load_blocking(self, **extra: Any) -> Any:
        try:
            from llama_cpp import Llama

            route_llama_logs()
        except ImportError:
            raise ModelFileError(
                PROVIDER,
                "llama-cpp-python is not installed",
                hint="install ThoughtDesk's 'local' extra: pip install 'thoughtdesk[local]'",
            ) from None
        settings = self.settings
        try:
            return Llama(
                model_path=str(self.model_path),
                n_ctx=settings.n_ctx,
                n_threads=settings.n_threads,
                n_gpu_layers=settings.n_gpu_layers,
                seed=settings.seed,
                verbose=False,
                **extra,
            )
        except (ValueError, RuntimeError, OSError) as error:
            raise ModelFileError(
                PROVIDER,
                f"llama.cpp could not load {self.model_path}: {error}",
                hint="the file may be damaged or made for a newer llama.cpp",
            ) from None

    async def load(self) -> None:
        """Load the model on the worker thread (seconds for large models) if not loaded yet."""
        async with self._load_lock:
            if self._llama is None:
                loop = asyncio.get_running_loop()
                self._llama = await loop.run_in_executor(self._executor, self._load_blocking)

    async def load_scorer(self) -> ScoringMemory:
        """Load the scoring instance (``logits_all=True``) on the worker thread if not loaded yet;
        return its memory estimate."""
        async with self._load_lock:
            loop = asyncio.get_running_loop()
            if self._scorer is None:
                self._scorer = await loop.run_in_executor(self._executor, lambda: self._load_blocking(logits_all=True))
                self._scoring_memory = scoring_memory_of(self._scorer)
        assert self._scoring_memory is not None
        return self._scoring_memory

    async def scoring_memory(self) -> ScoringMemory:
        """What scoring costs in memory, without loading the scoring instance (the vocabulary
        and the model's shape are read from the loaded model, else from the file's vocabulary)."""
        if self._scoring_memory is None:
            loop = asyncio.get_running_loop()
            self._scoring_memory = await loop.run_in_executor(self._executor, self._estimate_blocking)
        return self._scoring_memory

    def _estimate_blocking(self) -> ScoringMemory:
        if self._scorer is not None or self._llama is not None:
            return scoring_memory_of(self._scorer or self._llama, n_ctx=self.settings.n_ctx)
        return estimate_scoring_memory(self.settings)

    @property
    def scoring_detail(self) -> str:
        memory = self._scoring_memory
        if memory is None:
            return (
                f"{self.label} scores text exactly with a second copy of the model that keeps the log-probs "
                f"of every position (n_ctx {self.settings.n_ctx} x the vocabulary; the cost is shown once known)"
            )
        return f"{self.label} scores text exactly; {memory.describe()}"

    async def score(self, prefix: str, continuations: Sequence[str]) -> list[TokenScores]:
        """Score each continuation after ``prefix`` on the scoring instance (loaded on first
        use); the prefix is evaluated once and reused through the KV cache. Cancelling stops
        between continuations."""
        await self.load_scorer()
        loop = asyncio.get_running_loop()
        cancel = threading.Event()
        future = loop.run_in_executor(
            self._executor,
            lambda: score_with_llama(
                self._scorer, prefix, list(continuations), reuse=self.settings.score_reuse_prefix, cancel=cancel
            ),
        )
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            cancel.set()
            raise
        except ValueError as error:
            # llama.cpp says so when the tokens do not fit the context.
            raise BadRequest(
                PROVIDER, f"{error}", hint="raise the context size (n_ctx) or score shorter texts"
            ) from None

    @property
    def uses_gguf_chat_template(self) -> bool:
        """True when chat requests are formatted by the GGUF's own chat template.

        A GGUF without ``tokenizer.chat_template`` (base models) would make llama-cpp-python
        guess a format of another model family, so such chat requests are sent as raw prompts
        through ``completion_template`` instead. Known only once the model is loaded.
        """
        if self.settings.chat_template != "gguf" or self._llama is None:
            return False
        return bool((self._llama.metadata or {}).get("tokenizer.chat_template"))

    def prompt_text(self, request: Request) -> str:
        """The raw text given to the model for a completion-style request."""
        if request.prompt is not None:
            text = request.prompt
        else:
            text = "\n\n".join(m.content for m in request.chat_messages())
        return self.settings.completion_template.replace("{prompt}", text)

    async def complete(self, request: Request, on_token: TokenCallback | None = None) -> Response:
        """Generate ``n`` samples one after the other (seed + i for sample i when seeded)."""
        await self.load()
        loop = asyncio.get_running_loop()
        results: list[Response] = []
        for index in range(request.n):
            seed = None if request.seed is None else request.seed + index
            cancel = threading.Event()
            emit = None
            if on_token is not None:

                def emit(piece: str, index: int = index) -> None:
                    loop.call_soon_threadsafe(on_token, index, piece)

            future = loop.run_in_executor(self._executor, self._generate_blocking, request, seed, emit, cancel)
            future.add_done_callback(_retrieved)  # a cancelled call's end is nobody's to await
            try:
                async with asyncio.timeout(request.timeout):
                    results.append(await asyncio.shield(future))
            except TimeoutError:
                cancel.set()
                raise Timeout(
                    PROVIDER,
                    f"generation took longer than {request.timeout:g} s",
                    hint="raise the timeout, lower max tokens, or use a smaller model",
                ) from None
            except asyncio.CancelledError:
                cancel.set()  # the worker stops at its next token
                raise
        if len(results) == 1:
            return results[0]
        return Response(
            provider=PROVIDER,
            model=results[0].model,
            texts=[r.texts[0] for r in results],
            finish_reasons=[r.finish_reasons[0] for r in results],
            prompt_tokens=sum_or_none([r.prompt_tokens for r in results]),
            completion_tokens=sum_or_none([r.completion_tokens for r in results]),
            latency=sum(r.latency for r in results),
            raw_body=join_raw_bodies([r.raw_body for r in results]),
            reasonings=[r.reasoning_of(0) for r in results],
            reasoning_notes=[r.reasoning_note_of(0) for r in results],
            reasoning_tokens=sum_or_none([r.reasoning_tokens for r in results]),
            reasoning_from=results[0].reasoning_from,  # the first sample's (the one stored)
        )

    def think_tags(self, *, chat: bool) -> tuple[str, str] | None:
        """The tags this model's thinking is split at: the settings', except that with the
        default tags a chat template that names another known pair and not ``<think>`` (Sky-T1's
        and OpenThoughts' ``<|begin_of_thought|>``) gets that pair."""
        tags = self.settings.think_tags
        if not chat or tags != DEFAULT_THINK_TAGS or self._llama is None:
            return tags
        template = str((self._llama.metadata or {}).get("tokenizer.chat_template") or "")
        if DEFAULT_THINK_TAGS[0] in template:
            return tags
        return next((pair for pair in KNOWN_THINK_TAGS if pair[0] in template), tags)

    def _chat_formatter(self) -> Any:
        """The GGUF's own chat template as llama-cpp-python's Jinja formatter (what its
        create_chat_completion uses for such a model), to render it with template switches."""
        from llama_cpp import llama_chat_format

        llama = self._llama
        model = llama._model  # the token texts, as Llama.__init__ reads them for its own formatter
        eos, bos = llama.token_eos(), llama.token_bos()
        return llama_chat_format.Jinja2ChatFormatter(
            template=llama.metadata["tokenizer.chat_template"],
            eos_token=model.token_get_text(eos) if eos != -1 else "",
            bos_token=model.token_get_text(bos) if bos != -1 else "",
            stop_token_ids=[eos],
        )

    def _chat_output(
        self, messages: list[dict[str, str]], effort: str | None, stream: bool, options: Any
    ) -> tuple[Any, bool | None]:
        """A chat completion through the GGUF's template, and whether the template itself
        opened the thinking (True: its generation prompt ends with the opening think tag, as
        Qwen3's and R1's do, so the text holds only the closing tag; None: it ends with the
        closing tag, thinking switched off, so nothing is split). A reasoning effort is passed
        to the template as ``enable_thinking`` (False for ``none``), the switch Qwen3's reads."""
        kwargs = {} if effort is None else {"enable_thinking": effort != "none"}
        opened: bool | None = False
        tags = self.think_tags(chat=True)
        formatter = None
        try:
            formatter = self.__dict__.get("_formatter") or self._chat_formatter()
            self.__dict__["_formatter"] = formatter
            prompt = formatter(messages=messages, **kwargs).prompt
            ending = prompt.rstrip()
            # "opened": the template began the thinking; "closed": it wrote an empty block (thinking
            # switched off, as Qwen3's enable_thinking=False does): then all the text is the answer.
            opened = tags is not None and ending.endswith(tags[0])
            if tags is not None and ending.endswith(tags[1]):
                opened = None
        except Exception:  # a template our render cannot read: generate as before
            formatter = None
        if formatter is None or effort is None:
            return llama_chat(self._llama, messages, stream, options), opened
        handler = formatter.to_chat_handler()
        return handler(llama=self._llama, messages=messages, stream=stream, **kwargs, **options), opened

    def _generate_blocking(self, request: Request, seed: int | None, emit: Any, cancel: threading.Event) -> Response:
        """One sample on the worker thread; stops at the next token once ``cancel`` is set."""
        from llama_cpp import LogitsProcessorList, StoppingCriteriaList

        llama = self._llama
        use_chat = request.is_chat and self.uses_gguf_chat_template
        options: dict[str, Any] = {
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stop": list(request.stop) or None,
            "seed": seed,
        }
        started = time.perf_counter()
        opened: bool | None = False
        try:
            if use_chat:
                messages = [{"role": m.role, "content": m.content} for m in request.chat_messages()]
                # The chat API takes no stopping criteria; a logits processor is asked before each
                # token, so raising there stops a cancelled generation at its next token.
                options["logits_processor"] = LogitsProcessorList([partial(_stop_if_set, cancel)])
                output, opened = self._chat_output(messages, request.reasoning_effort, emit is not None, options)
            else:
                options["stopping_criteria"] = StoppingCriteriaList([lambda ids, logits: cancel.is_set()])
                output = llama.create_completion(prompt=self.prompt_text(request), stream=emit is not None, **options)
            if emit is not None:
                output = _collect_stream(output, emit, cancel, use_chat)
                if not use_chat:
                    # Streams carry no usage: count the prompt with the model's tokenizer.
                    prompt_tokens = len(llama.tokenize(self.prompt_text(request).encode("utf-8")))
                    output["usage"]["prompt_tokens"] = prompt_tokens
        except ValueError as error:
            # llama.cpp reports a prompt longer than the context this way.
            raise BadRequest(
                PROVIDER, f"{error}", hint="raise the context size (n_ctx) or shorten the prompt"
            ) from None
        latency = time.perf_counter() - started
        body = json.dumps(output, ensure_ascii=False)
        try:
            choice = output["choices"][0]
            text = choice["message"]["content"] if use_chat else choice["text"]
        except (KeyError, IndexError, TypeError):
            raise BadResponse(PROVIDER, "llama.cpp returned no text", raw_body=body) from None
        usage = output.get("usage") or {}
        text = text or ""
        tags = self.think_tags(chat=use_chat)
        # The template opened the thinking: the text is thinking up to its closing tag (or all
        # of it, when the limit cut it first).
        split = split_thinking(tags[0] + text if opened and tags else text, None if opened is None else tags)
        reasoning_tokens = None
        if split.reasoning is not None:  # counted with the model's own tokenizer
            reasoning_tokens = len(llama.tokenize(split.reasoning.encode("utf-8"), add_bos=False, special=True))
        return Response(
            provider=PROVIDER,
            model=self.model_path.name,
            texts=[split.visible if split.reasoning is not None else text],
            finish_reasons=[choice.get("finish_reason")],
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            latency=latency,
            raw_body=body,
            reasonings=[split.reasoning] if split.reasoning is not None else [],
            reasoning_notes=[split.note] if split.note is not None else [],
            reasoning_tokens=reasoning_tokens,
            reasoning_from=None if split.reasoning is None else ("unclosed" if split.unclosed else "tags"),
        )

    async def aclose(self) -> None:
        """Release the loaded model once the last backend sharing it is closed."""
        host = self._host
        if host.closed:
            return
        host.users -= 1
        if host.users > 0:
            return
        host.closed = True
        loop = asyncio.get_running_loop()
        for name in ("llama", "scorer"):
            llama = getattr(host, name)
            setattr(host, name, None)
            if llama is not None:
                await loop.run_in_executor(host.executor, llama.close)
        host.executor.shutdown(wait=False)


class _LoadedModel:
    """A model file loaded in this process, shared by the backends that use it: the generation
    instance, the scoring instance (``logits_all``), the memory estimate, and the one worker
    thread that runs them (llama.cpp contexts must not be used from two threads at once)."""

    def __init__(self) -> None:
        self.llama: Any = None
        self.scorer: Any = None  # the logits_all=True instance, loaded when scoring is first asked for
        self.scoring_memory: ScoringMemory | None = None
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llamacpp")
        self.load_lock = asyncio.Lock()
        self.users = 0
        self.closed = False


def _retrieved(future: asyncio.Future[Any]) -> None:
    """Mark the outcome of a call nobody awaits any more as seen (asyncio would log it)."""
    if not future.cancelled():
        future.exception()


class _Stopped(Exception):
    """A cancelled generation stopped between two tokens (nobody waits for its result)."""


def _stop_if_set(cancel: threading.Event, _ids: Any, scores: Any) -> Any:
    """A logits processor that changes nothing, and stops a cancelled generation."""
    if cancel.is_set():
        raise _Stopped
    return scores


def _collect_stream(chunks: Any, emit: Any, cancel: threading.Event, chat: bool) -> dict[str, Any]:
    """Join streamed chunks into one non-streamed-shaped output, emitting each text piece."""
    pieces: list[str] = []
    finish: str | None = None
    last: dict[str, Any] = {}
    generated = 0  # one chunk per generated token (the closing chunk carries only the reason)
    for chunk in chunks:
        last = chunk
        choice = chunk["choices"][0]
        piece = (choice.get("delta") or {}).get("content") if chat else choice.get("text")
        if piece:
            pieces.append(piece)
            emit(piece)
        if choice.get("finish_reason") is None and (piece or not chat):
            generated += 1
        finish = choice.get("finish_reason") or finish
        if cancel.is_set():
            break
    text = "".join(pieces)
    choice_out: dict[str, Any] = (
        {"index": 0, "message": {"role": "assistant", "content": text}} if chat else {"index": 0, "text": text}
    )
    choice_out["finish_reason"] = finish
    usage = dict(last.get("usage") or {})
    usage.setdefault("completion_tokens", generated)
    return {
        "id": last.get("id"),
        "model": last.get("model"),
        "object": "streamed",
        "choices": [choice_out],
        "usage": usage,
    }


def llama_chat(llama: Any, messages: list[dict[str, str]], stream: bool, options: Any) -> Any:
    """``llama.create_chat_completion`` as the backend has always called it."""
    return llama.create_chat_completion(messages=messages, stream=stream, **options)
