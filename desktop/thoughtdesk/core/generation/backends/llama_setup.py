"""A local GGUF model before the backend loads it: its load settings (:class:`LlamaCppSettings`),
the check that a path is a GGUF file (:func:`check_gguf_file`, used by the forms and run checks
without loading anything), which backends can share one loaded model (:func:`load_key`), what
its scoring copy would cost in memory read from the file's metadata
(:func:`estimate_scoring_memory`), and llama.cpp's own messages sent to the log
(:func:`route_llama_logs`). The backend itself is :mod:`.llamacpp`; llama-cpp-python is
imported only inside the functions that need it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from thoughtdesk.core.generation.backends.base import ModelFileError
from thoughtdesk.core.generation.backends.llama_scoring import ModelShape, ScoringMemory, scoring_memory_of
from thoughtdesk.core.thinking import DEFAULT_THINK_TAGS

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
    #: The tags the model writes around its thinking (None: never split); see split_thinking.
    think_tags: tuple[str, str] | None = DEFAULT_THINK_TAGS


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


def estimate_scoring_memory(settings: LlamaCppSettings) -> ScoringMemory:
    """What the scoring instance of ``settings``' model would cost, from the file's vocabulary
    and metadata (about a second; blocking). Read without a context: ``Llama(vocab_only=True)``
    also creates one, and llama.cpp then says "n_ctx_seq (512) > n_ctx_train (0) -- possible
    training context overflow" on stderr, whatever ``verbose`` is."""
    path = check_gguf_file(settings.model_path)
    try:
        import llama_cpp
        from llama_cpp._internals import LlamaModel
    except ImportError:
        raise ModelFileError(
            PROVIDER,
            "llama-cpp-python is not installed",
            hint="install ThoughtDesk's 'local' extra: pip install 'thoughtdesk[local]'",
        ) from None
    route_llama_logs()
    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    try:
        model = LlamaModel(path_model=str(path), params=params, verbose=False)
    except (ValueError, RuntimeError, OSError) as error:
        raise ModelFileError(
            PROVIDER,
            f"llama.cpp could not read {path}: {error}",
            hint="the file may be damaged or made for a newer llama.cpp",
        ) from None
    try:
        shape = ModelShape(int(model.n_vocab()), model.metadata())
    finally:
        model.close()
    return scoring_memory_of(shape, n_ctx=settings.n_ctx, n_batch=512)


#: ggml's log levels (DEBUG 1, INFO 2, WARN 3, ERROR 4; 5 continues the last message) as ours.
_LLAMA_LEVELS = {4: logging.WARNING, 3: logging.INFO}
_log_callback: Any = None  # kept referenced: llama.cpp calls it for as long as the process runs


def route_llama_logs() -> None:
    """Send llama.cpp's own messages to ThoughtDesk's log instead of stderr (once per process).

    llama-cpp-python prints those at its ERROR level or above to stderr even with
    ``verbose=False``, and llama.cpp logs routine notes there: every load of a Gemma 3 model
    said "llama_kv_cache_iswa: using full-size SWA cache" across the command line's progress
    line. What goes wrong is reported by the backend's own errors; the notes stay in the log.
    """
    global _log_callback
    if _log_callback is not None:
        return
    import ctypes

    import llama_cpp

    log = logging.getLogger("thoughtdesk.llamacpp")

    @llama_cpp.llama_log_callback
    def callback(level: int, text: bytes, _user_data: ctypes.c_void_p) -> None:
        message = text.decode("utf-8", errors="replace").rstrip()
        if message:
            log.log(_LLAMA_LEVELS.get(level, logging.DEBUG), "llama.cpp: %s", message)

    llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))
    _log_callback = callback


def load_key(settings: LlamaCppSettings) -> tuple[object, ...]:
    """What a loaded model depends on: backends with equal keys can share one."""
    return (
        str(Path(settings.model_path).expanduser().resolve()),
        settings.n_ctx,
        settings.n_threads,
        settings.n_gpu_layers,
        settings.seed,
    )
