"""GPU offload: can this llama-cpp-python use a GPU, how much GPU memory is free, and so how many
of a model's layers to offload (``n_gpu_layers``: -1 all, 0 none).

Detection (:func:`detect_gpu`) imports llama_cpp (loading its library: up to a second) and may
run ``nvidia-smi``: call it once, off the GUI thread; its answer is cached for the process. The
decision (:func:`offload_plan`) is pure arithmetic on the numbers detection gives, so it is
tested with any numbers.

- The build: ``llama_cpp.llama_supports_gpu_offload()`` (True for CUDA, Metal, Vulkan, ROCm,
  SYCL builds; False for a CPU build, the default wheel).
- The memory: NVIDIA cards through ``nvidia-smi`` (free memory of the first card: llama.cpp
  puts every layer on the main GPU unless told to split); Apple silicon (Metal) shares the
  system memory, of which macOS lets the GPU use about three quarters; on Linux, cards whose
  driver publishes its memory in sysfs (``/sys/class/drm/card*/device/mem_info_vram_total`` and
  ``_used``: amdgpu, the card Vulkan and ROCm builds use there). Anything else (Vulkan on
  Windows, an Intel card) is "unknown": the plan then offloads nothing and says how to set it
  by hand.
"""

from __future__ import annotations

import functools
import os
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

#: Of the free GPU memory a model may use: the rest is for llama.cpp's compute buffers and the
#: desktop's own use of the card.
_USABLE = 0.9
#: The share of the system memory macOS lets Metal use by default (recommendedMaxWorkingSetSize).
_METAL_SHARE = 0.75

Backend = Literal["cuda", "metal", "sysfs", "none"]
#: Where Linux lists the graphics cards (one ``cardN`` folder each).
DRM_CARDS = Path("/sys/class/drm")


@dataclass(frozen=True, slots=True)
class GpuInfo:
    """What this machine offers llama.cpp: a GPU build or not, and the GPU memory found."""

    offload_supported: bool | None  # None: llama-cpp-python is not installed
    backend: Backend  # where the memory figure comes from
    name: str  # e.g. "NVIDIA GeForce RTX 4060 Laptop GPU", "Apple M2 (Metal)", ""
    free_bytes: int | None  # None: no GPU memory found

    def describe(self) -> str:
        if self.offload_supported is None:
            return "llama-cpp-python is not installed (install the 'local' extra)"
        if not self.offload_supported:
            return "llama-cpp-python here is a CPU build: models run on the CPU"
        if self.free_bytes is None:
            return "llama-cpp-python here can use a GPU, but no GPU memory was found (nvidia-smi, Metal, sysfs)"
        return f"{self.name}: {self.free_bytes / 1e9:.1f} GB GPU memory free"


@dataclass(frozen=True, slots=True)
class OffloadPlan:
    """How many layers to offload and why, in one line."""

    n_gpu_layers: int  # -1: all; 0: none; else that many
    layers: int | None  # the model's layer count, if its header says
    reason: str

    def describe(self) -> str:
        return self.reason


def offload_plan(gpu: GpuInfo, needed_bytes: int, weights_bytes: int, layers: int | None) -> OffloadPlan:
    """The layers to offload for a model needing ``needed_bytes`` (weights + KV cache) with
    ``weights_bytes`` of weights in ``layers`` layers, on ``gpu``. All layers (-1) when it fits
    in the usable GPU memory; else as many whole layers as fit, with the KV cache counted; none
    on a CPU build or when no GPU memory is known. The reason says which, with the figures."""
    need = f"{needed_bytes / 1e9:.2f} GB"
    if not gpu.offload_supported:
        return OffloadPlan(0, layers, f"CPU only: {gpu.describe()}")
    if gpu.free_bytes is None:
        return OffloadPlan(
            0, layers, f"CPU only: {gpu.describe()}; set GPU layers by hand (-1: all) if the card has room for {need}"
        )
    usable = int(gpu.free_bytes * _USABLE)
    free = f"{gpu.free_bytes / 1e9:.1f} GB free on {gpu.name}"
    if needed_bytes <= usable:
        count = f"all {layers} layers" if layers else "all layers"
        return OffloadPlan(-1, layers, f"fits the GPU: {count} offloaded (needs {need}; {free})")
    if layers:
        per_layer = weights_bytes / layers
        kv_and_rest = max(0, needed_bytes - weights_bytes)
        fitting = int((usable - kv_and_rest) // per_layer) if usable > kv_and_rest else 0
        if fitting > 0:
            return OffloadPlan(
                min(fitting, layers - 1),
                layers,
                f"does not fit the GPU whole (needs {need}; {free}): {min(fitting, layers - 1)} of {layers} layers "
                "offloaded, the rest on the CPU",
            )
    return OffloadPlan(0, layers, f"does not fit the GPU (needs {need}; {free}): it runs on the CPU")


@functools.cache
def detect_gpu() -> GpuInfo:
    """This machine's answer (cached): the build's GPU support and the GPU memory free now."""
    try:
        import llama_cpp  # loads its shared library: only here, only once
    except ImportError:
        return GpuInfo(None, "none", "", None)
    except OSError:  # a broken install: its library would not load either
        return GpuInfo(None, "none", "", None)
    supported = bool(llama_cpp.llama_supports_gpu_offload())
    if not supported:
        return GpuInfo(False, "none", "", None)
    memory = nvidia_free_memory() or metal_memory() or sysfs_vram()
    if memory is None:
        return GpuInfo(True, "none", "", None)
    backend, name, free = memory
    return GpuInfo(True, backend, name, free)


def nvidia_free_memory() -> tuple[Backend, str, int] | None:
    """The first NVIDIA card's name and free memory (bytes) from ``nvidia-smi``, else None."""
    command = shutil.which("nvidia-smi")
    if command is None:
        return None
    try:
        done = subprocess.run(
            [command, "--query-gpu=name,memory.free", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_nvidia_smi(done.stdout) if done.returncode == 0 else None


def parse_nvidia_smi(text: str) -> tuple[Backend, str, int] | None:
    """``NAME, FREE_MIB`` lines (``nvidia-smi --query-gpu=name,memory.free --format=csv,noheader,
    nounits``): the first card's name and free bytes."""
    for line in text.splitlines():
        name, _, free = line.rpartition(",")
        if name.strip() and free.strip().isdigit():
            return "cuda", name.strip(), int(free.strip()) * 1024 * 1024
    return None


def metal_memory() -> tuple[Backend, str, int] | None:
    """Apple silicon: the GPU shares the system memory; about three quarters of it is usable."""
    if sys.platform != "darwin" or platform.machine() != "arm64":
        return None
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
    return "metal", "Apple silicon (Metal, shared memory)", int(total * _METAL_SHARE)


def sysfs_vram(cards: Path = DRM_CARDS) -> tuple[Backend, str, int] | None:
    """Linux: the card with the most free video memory among those whose driver publishes it in
    sysfs (``device/mem_info_vram_total`` and ``device/mem_info_vram_used``, in bytes: amdgpu),
    with its ``product_name`` where the driver gives one; else None."""
    best: tuple[Backend, str, int] | None = None
    try:
        folders = sorted(cards.glob("card[0-9]*"))
    except OSError:
        return None
    for card in folders:
        device = card / "device"
        try:
            total = int((device / "mem_info_vram_total").read_text().strip())
            used = int((device / "mem_info_vram_used").read_text().strip())
        except (OSError, ValueError):
            continue
        try:
            name = (device / "product_name").read_text().strip()
        except OSError:
            name = ""
        free = max(total - used, 0)
        if best is None or free > best[2]:
            best = ("sysfs", name or f"GPU {card.name}", free)
    return best
