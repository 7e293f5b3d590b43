"""Does a model fit this machine? Its memory at a context size against the memory free now.

The need is the weights (the file's size: llama.cpp maps the file and keeps it resident) plus
the KV cache at ``n_ctx`` tokens in f16 (:attr:`~thoughtdesk.core.models.gguf.ModelFacts.
kv_bytes_per_token` x ``n_ctx``, every layer at full context: an upper bound for models with
sliding-window layers, which llama.cpp caches shorter). Free memory is the kernel's
``MemAvailable`` (Linux), ``GlobalMemoryStatusEx`` (Windows) or ``sysconf`` pages elsewhere.
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
class MemoryFit:
    """A model's memory at ``n_ctx`` against the memory available, in bytes."""

    n_ctx: int
    weights: int
    kv_cache: int | None  # None: the header does not give the model's shape
    available: int | None  # None: this system does not say

    @property
    def needed(self) -> int:
        return self.weights + (self.kv_cache or 0)

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
        return f"{self.verdict}: needs {_gb(self.needed)} (weights {_gb(self.weights)} + {kv}) of {free}"

    def to_json(self) -> dict[str, object]:
        return {
            "verdict": self.verdict,
            "n_ctx": self.n_ctx,
            "needed_bytes": self.needed,
            "weights_bytes": self.weights,
            "kv_cache_bytes": self.kv_cache,
            "available_bytes": self.available,
        }


def _gb(count: int | None) -> str:
    return "?" if count is None else f"{count / 1e9:.2f} GB"


def memory_fit(entry: ModelEntry, n_ctx: int, available: int | None) -> MemoryFit:
    """``entry``'s memory at ``n_ctx`` tokens against ``available`` bytes (see :func:`available_memory`)."""
    kv = entry.kv_bytes_per_token * n_ctx if entry.kv_bytes_per_token else None
    return MemoryFit(n_ctx=n_ctx, weights=entry.size, kv_cache=kv, available=available)


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
