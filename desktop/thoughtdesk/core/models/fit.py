"""Does a model fit this machine? Its memory at a context size against the memory free now.

The need is the weights (the file's size: llama.cpp maps the file and keeps it resident) plus
the KV cache at ``n_ctx`` tokens in f16 (:attr:`~thoughtdesk.core.models.gguf.ModelFacts.
kv_bytes_per_token` x ``n_ctx``, every layer at full context: an upper bound for models with
sliding-window layers, which llama.cpp caches shorter). Free memory is the kernel's
``MemAvailable`` (Linux), ``GlobalMemoryStatusEx`` (Windows) or ``sysconf`` pages elsewhere.

With ``scoring`` the need also counts the scoring instance that log-probs use (:func:`scoring_memory`:
every position's logits, llama.cpp's output buffer and a second KV cache), the formula the scorer's
own estimate (:func:`~thoughtdesk.core.generation.backends.llama_scoring.scoring_memory_of`) uses.
"""

from __future__ import annotations

import ctypes
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from thoughtdesk.core.models.registry import ModelEntry

Verdict = Literal["fits", "tight", "does not fit", "unknown"]
#: Within this share of the free memory a model "fits"; up to all of it, it is "tight".
_COMFORTABLE = 0.8
_MEMINFO = Path("/proc/meminfo")


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


def scoring_memory(*, n_ctx: int, n_batch: int, n_vocab: int, kv_bytes: int) -> ScoringMemory:
    """The scoring instance's extra memory at ``n_ctx`` tokens: float32 logits of every position
    (n_ctx x n_vocab x 4), the output buffer (min(n_batch, n_ctx) x n_vocab x 4) and ``kv_bytes``
    for its own KV cache. The one formula of the fit and the scorer's estimate."""
    n_batch = min(n_batch, n_ctx)
    return ScoringMemory(
        n_ctx=n_ctx,
        n_vocab=n_vocab,
        logits_bytes=n_ctx * n_vocab * 4,
        output_bytes=n_batch * n_vocab * 4,
        kv_bytes=kv_bytes,
    )


@dataclass(frozen=True, slots=True)
class MemoryFit:
    """A model's memory at ``n_ctx`` against the memory available, in bytes."""

    n_ctx: int
    weights: int
    kv_cache: int | None  # None: the header does not give the model's shape
    available: int | None  # None: this system does not say
    with_scoring: bool = False  # True: the need includes the scoring instance (log-probs)
    scoring: ScoringMemory | None = None  # None with with_scoring: unknown (no vocabulary size or shape)

    @property
    def needed(self) -> int:
        return self.weights + (self.kv_cache or 0) + (self.scoring.total if self.scoring else 0)

    @property
    def verdict(self) -> Verdict:
        if self.available is None:
            return "unknown"
        if self.needed <= self.available * _COMFORTABLE:
            return "fits"
        if self.needed <= self.available:
            return "tight"
        return "does not fit"

    def describe(self) -> str:
        """E.g. ``fits: needs 0.29 GB (weights 0.25 GB + KV cache 0.04 GB at 2,048 tokens) of 11.2 GB free``."""
        kv = (
            f"KV cache {_gb(self.kv_cache)} at {self.n_ctx:,} tokens"
            if self.kv_cache is not None
            else "KV cache unknown"
        )
        free = f"{_gb(self.available)} free" if self.available is not None else "free memory unknown"
        scoring = ""
        if self.with_scoring:
            scoring = f" + scoring {_gb(self.scoring.total)}" if self.scoring else " + scoring memory unknown"
        return f"{self.verdict}: needs {_gb(self.needed)} (weights {_gb(self.weights)} + {kv}{scoring}) of {free}"

    def to_json(self) -> dict[str, object]:
        return {
            "verdict": self.verdict,
            "n_ctx": self.n_ctx,
            "needed_bytes": self.needed,
            "weights_bytes": self.weights,
            "kv_cache_bytes": self.kv_cache,
            "available_bytes": self.available,
            "scoring": self.with_scoring,
            "scoring_bytes": self.scoring.total if self.scoring else None,
        }


def _gb(count: int | None) -> str:
    return "?" if count is None else f"{count / 1e9:.2f} GB"


def memory_fit(
    entry: ModelEntry, n_ctx: int, available: int | None, *, scoring: bool = False, n_batch: int = 512
) -> MemoryFit:
    """``entry``'s memory at ``n_ctx`` tokens against ``available`` bytes (see :func:`available_memory`);
    with ``scoring``, plus the scoring instance's (unknown when the entry has no vocabulary size,
    from a models.json written before it was recorded, or no KV shape)."""
    kv = entry.kv_bytes_per_token * n_ctx if entry.kv_bytes_per_token else None
    extra = None
    if scoring and entry.vocab_size and kv is not None:
        extra = scoring_memory(n_ctx=n_ctx, n_batch=n_batch, n_vocab=entry.vocab_size, kv_bytes=kv)
    return MemoryFit(
        n_ctx=n_ctx, weights=entry.size, kv_cache=kv, available=available, with_scoring=scoring, scoring=extra
    )


def available_memory() -> int | None:
    """The memory free for a new process now, in bytes; None when the system does not say."""
    try:
        for line in _MEMINFO.read_text(encoding="ascii").splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024  # the kernel writes kB (KiB)
    except (OSError, ValueError, IndexError):
        pass
    if sys.platform == "win32":
        return _windows_available()
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _windows_available() -> int | None:  # pragma: no cover - Windows only
    class MemoryStatus(ctypes.Structure):
        _fields_ = [
            ("dwLength", ctypes.c_ulong),
            ("dwMemoryLoad", ctypes.c_ulong),
            ("ullTotalPhys", ctypes.c_ulonglong),
            ("ullAvailPhys", ctypes.c_ulonglong),
            ("ullTotalPageFile", ctypes.c_ulonglong),
            ("ullAvailPageFile", ctypes.c_ulonglong),
            ("ullTotalVirtual", ctypes.c_ulonglong),
            ("ullAvailVirtual", ctypes.c_ulonglong),
            ("ullAvailExtendedVirtual", ctypes.c_ulonglong),
        ]

    status = MemoryStatus()
    status.dwLength = ctypes.sizeof(MemoryStatus)
    if not ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):  # type: ignore[attr-defined]
        return None
    return int(status.ullAvailPhys)
