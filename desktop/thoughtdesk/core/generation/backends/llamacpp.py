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
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

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
from thoughtdesk.core.generation.scoring import TokenScores, continuation_start

PROVIDER = "llamacpp"
GGUF_MAGIC = b"GGUF"


@dataclass(frozen=True, slots=True)
class LlamaCppSettings:
    """How to load and prompt a local model.

    ``n_ctx`` is the context size in tokens, ``n_threads`` the CPU threads (None: llama.cpp's
    choice), ``n_gpu_layers`` the layers offloaded to a GPU (0: CPU only, -1: all).
    ``chat_template="gguf"`` formats chat requests with the template stored in the GGUF file;
    ``"none"`` joins the messages' texts and treats them as a raw prompt. ``completion_template``
    wraps raw prompts; its ``{prompt}`` is replaced literally (e.g. a model's turn markers).
    ``score_reuse_prefix`` evaluates a scored prefix once for all its continuations (False:
    each continuation's whole text in one evaluation, slower; see :func:`score_with_llama`).
    """

    model_path: Path
    n_ctx: int = 2048
    n_threads: int | None = None
    n_gpu_layers: int = 0
    chat_template: Literal["gguf", "none"] = "gguf"
    completion_template: str = "{prompt}"
    seed: int = 0xFFFFFFFF  # llama.cpp's "random seed" value, used when a request has none
    score_reuse_prefix: bool = True


def check_gguf_file(path: str | Path) -> Path:
    """The path if it is a readable GGUF file; ModelFileError saying what is wrong otherwise."""
    path = Path(path).expanduser()
    hint = "choose an existing .gguf model file; for a stored run, put the file back at this path and resume it"
    if not path.exists():
        raise ModelFileError(PROVIDER, f"model file {path} does not exist", hint=hint)
    if path.is_dir():
        raise ModelFileError(PROVIDER, f"{path} is a folder, not a model file", hint=hint)
    try:
        with path.open("rb") as stream:
            magic = stream.read(4)
    except OSError as error:
        raise ModelFileError(PROVIDER, f"cannot read model file {path}: {error}", hint=hint) from None
    if magic != GGUF_MAGIC:
        raise ModelFileError(
            PROVIDER,
            f"{path} is not a GGUF model file (it starts with {magic!r}, not b'GGUF')",
            hint="llama.cpp reads .gguf files; download the model's GGUF version or convert it",
        )
    return path


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

    def __init__(self, settings: LlamaCppSettings) -> None:
        self.settings = settings
        self.model_path = check_gguf_file(settings.model_path)
        self._llama: Any = None
        self._scorer: Any = None  # the logits_all=True instance, loaded when scoring is first asked for
        self._scoring_memory: ScoringMemory | None = None
        # One worker: llama.cpp contexts must not be used from two threads at once.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llamacpp")
        self._load_lock = asyncio.Lock()

    @property
    def label(self) -> str:
        return f"llama.cpp ({self.model_path.name})"

    def __repr__(self) -> str:
        return f"LlamaCppBackend({str(self.model_path)!r}, n_ctx={self.settings.n_ctx})"

    def _load_blocking(self, **extra: Any) -> Any:
        try:
            from llama_cpp import Llama
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
        shape = self._read_shape_blocking()
        return scoring_memory_of(shape, n_ctx=self.settings.n_ctx, n_batch=512)

    def _read_shape_blocking(self) -> _ModelShape:
        """The vocabulary size and metadata of the file, from the model's vocabulary alone (fast,
        small). Read without a context: ``Llama(vocab_only=True)`` also creates one, and
        llama.cpp then says "n_ctx_seq (512) > n_ctx_train (0) -- possible training context
        overflow" on stderr, whatever ``verbose`` is."""
        try:
            import llama_cpp
            from llama_cpp._internals import LlamaModel
        except ImportError:
            raise ModelFileError(
                PROVIDER,
                "llama-cpp-python is not installed",
                hint="install ThoughtDesk's 'local' extra: pip install 'thoughtdesk[local]'",
            ) from None
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        params.use_mmap = True
        try:
            model = LlamaModel(path_model=str(self.model_path), params=params, verbose=False)
        except (ValueError, RuntimeError, OSError) as error:
            raise ModelFileError(
                PROVIDER,
                f"llama.cpp could not read {self.model_path}: {error}",
                hint="the file may be damaged or made for a newer llama.cpp",
            ) from None
        try:
            return _ModelShape(int(model.n_vocab()), model.metadata())
        finally:
            model.close()

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
        )

    def _generate_blocking(self, request: Request, seed: int | None, emit: Any, cancel: threading.Event) -> Response:
        """One sample on the worker thread."""
        from llama_cpp import StoppingCriteriaList

        llama = self._llama
        use_chat = request.is_chat and self.uses_gguf_chat_template
        options: dict[str, Any] = {
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stop": list(request.stop) or None,
            "seed": seed,
        }
        started = time.perf_counter()
        try:
            if use_chat:
                messages = [{"role": m.role, "content": m.content} for m in request.chat_messages()]
                # The chat API takes no stopping criteria; cancelling is checked between pieces.
                output = llama.create_chat_completion(messages=messages, stream=emit is not None, **options)
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
        return Response(
            provider=PROVIDER,
            model=self.model_path.name,
            texts=[text or ""],
            finish_reasons=[choice.get("finish_reason")],
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            latency=latency,
            raw_body=body,
        )

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        for name in ("_llama", "_scorer"):
            llama = getattr(self, name)
            setattr(self, name, None)
            if llama is not None:
                await loop.run_in_executor(self._executor, llama.close)
        self._executor.shutdown(wait=False)


# --- scoring ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _ModelShape:
    """What :func:`scoring_memory_of` reads of a model, from its file (no context loaded)."""

    vocab: int
    metadata: dict[str, str]
    n_batch: int = 512

    def n_vocab(self) -> int:
        return self.vocab

    def n_ctx(self) -> int:
        return 0


@dataclass(frozen=True, slots=True)
class ScoringMemory:
    """The extra memory of the scoring instance, in bytes, and what it comes from."""

    n_ctx: int
    n_vocab: int
    logits_bytes: int  # llama-cpp-python's n_ctx x n_vocab float32 array of every position's logits
    output_bytes: int  # llama.cpp's output buffer: up to n_batch positions' logits at once
    kv_bytes: int  # the second context's KV cache (f16), estimated from the model's shape

    @property
    def total(self) -> int:
        return self.logits_bytes + self.output_bytes + self.kv_bytes

    def describe(self) -> str:
        """E.g. ``scoring needs about 1.0 GB more memory (logits of 512 positions x 262,144 tokens)``."""
        return (
            f"scoring needs about {self.total / 1e9:.1f} GB more memory (logits of {self.n_ctx:,} positions "
            f"x {self.n_vocab:,} vocabulary tokens, and a second KV cache); a smaller n_ctx needs less"
        )


def scoring_memory_of(llama: Any, *, n_ctx: int | None = None, n_batch: int | None = None) -> ScoringMemory:
    """The scoring instance's extra memory for the model ``llama`` (any instance of it)."""
    n_ctx = n_ctx or llama.n_ctx()
    n_batch = min(n_batch or llama.n_batch, n_ctx)
    n_vocab = int(llama.n_vocab())
    metadata = getattr(llama, "metadata", None) or {}
    arch = metadata.get("general.architecture", "")

    def number(key: str, default: int = 0) -> int:
        try:
            return int(metadata.get(f"{arch}.{key}", default))
        except (TypeError, ValueError):
            return default

    layers = number("block_count")
    heads = number("attention.head_count", 1) or 1
    kv_heads = number("attention.head_count_kv", heads) or heads
    head_dim = number("attention.key_length") or (number("embedding_length") // heads)
    value_dim = number("attention.value_length") or head_dim
    kv_bytes = layers * n_ctx * kv_heads * (head_dim + value_dim) * 2
    return ScoringMemory(
        n_ctx=n_ctx,
        n_vocab=n_vocab,
        logits_bytes=n_ctx * n_vocab * 4,
        output_bytes=n_batch * n_vocab * 4,
        kv_bytes=kv_bytes,
    )


def score_with_llama(
    llama: Any,
    prefix: str,
    continuations: Sequence[str],
    *,
    reuse: bool = True,
    cancel: threading.Event | None = None,
) -> list[TokenScores]:
    """Token log-probs of each continuation after ``prefix`` with a ``logits_all=True`` Llama.

    Texts are tokenised as a completion prompt is (BOS added, special tokens read), prefix and
    prefix + continuation each; the continuation's tokens start where the two differ. With
    ``reuse`` the shared tokens but the last are evaluated once, without logits (only scored
    positions need them), and stay in the KV cache; each continuation then evaluates that last
    shared token and its own tokens, with logits. Without ``reuse`` every continuation
    evaluates its whole text in one go (as a server does with a text it has not seen).

    llama.cpp's CPU results change with how tokens are split into evaluations (by up to ~0.2
    nats a token on the small Q4 test model), so the split is fixed by the texts alone: the
    cache is reused only when it holds exactly the shared tokens, and a score never depends on
    what was scored before. Runs on the thread that owns ``llama``.
    """
    from llama_cpp import Llama

    prefix_tokens = llama.tokenize(prefix.encode("utf-8"), add_bos=True, special=True)
    results: list[TokenScores] = []
    for text in continuations:
        if cancel is not None and cancel.is_set():
            break
        joint = llama.tokenize((prefix + text).encode("utf-8"), add_bos=True, special=True)
        start = continuation_start(prefix_tokens, joint)
        if start == len(joint):
            results.append(TokenScores((), ()))
            continue
        if start == 0:
            raise ValueError("this model adds no beginning-of-text token: give a prefix before the scored text")
        if len(joint) > llama.n_ctx():
            raise ValueError(f"prefix + continuation are {len(joint)} tokens, more than the context ({llama.n_ctx()})")
        evaluated = 0
        if reuse:
            shared = joint[: start - 1]
            if llama.input_ids[: llama.n_tokens].tolist() != shared:
                llama.reset()
                evaluated += _eval(llama, shared, logits=False)
            first = start - 1
        else:
            llama.reset()
            first = 0
        llama.n_tokens = first
        evaluated += _eval(llama, joint[first:], logits=True)
        rows = llama.scores[start - 1 : len(joint) - 1]
        logprobs = Llama.logits_to_logprobs(rows)
        tokens = joint[start:]
        values = tuple(float(logprobs[index, token]) for index, token in enumerate(tokens))
        texts = tuple(
            llama.detokenize([token], prev_tokens=joint[: start + index], special=True).decode(
                "utf-8", errors="replace"
            )
            for index, token in enumerate(tokens)
        )
        results.append(TokenScores(texts, values, evaluated_tokens=evaluated))
        # Forget the continuation, keep the shared part: the next one starts after it.
        llama.n_tokens = first
    return results


def _eval(llama: Any, tokens: Sequence[int], *, logits: bool) -> int:
    """Evaluate ``tokens`` after the cached ones; logits are computed (and kept in
    ``llama.scores``) only when asked for: for a 262k vocabulary they cost more than the model.

    llama-cpp-python's ``eval`` asks llama.cpp for the logits of every position when the
    instance has ``logits_all``; its ``_logits_all`` flag is switched off for the call instead.
    """
    if not tokens:
        return 0
    previous = llama._logits_all
    llama._logits_all = logits and previous
    try:
        llama.eval(tokens)
    finally:
        llama._logits_all = previous
    return len(tokens)


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
