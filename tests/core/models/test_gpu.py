"""GPU offload: the decision from given numbers (no GPU here), this machine's answer (a CPU
build of llama-cpp-python), and nvidia-smi's output read from a real child process."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from thoughtdesk.core.models import gpu
from thoughtdesk.core.models.gpu import GpuInfo, detect_gpu, nvidia_free_memory, offload_plan, parse_nvidia_smi

GB = 1_000_000_000
CARD = GpuInfo(True, "cuda", "Test GPU", 8 * GB)


def test_a_model_that_fits_the_gpu_gets_all_layers():
    plan = offload_plan(CARD, needed_bytes=5 * GB, weights_bytes=4_900_000_000, layers=32)
    assert plan.n_gpu_layers == -1
    assert plan.reason == "fits the GPU: all 32 layers offloaded (needs 5.00 GB; 8.0 GB free on Test GPU)"


def test_a_model_too_big_for_the_gpu_gets_the_layers_that_fit_or_none():
    small_card = GpuInfo(True, "cuda", "Small GPU", 4 * GB)  # 3.6 GB usable
    plan = offload_plan(small_card, needed_bytes=5_400_000_000, weights_bytes=4_900_000_000, layers=32)
    # (3.6 GB - 0.5 GB of KV cache) / (4.9 GB / 32 layers) = 20.2: 20 layers
    assert plan.n_gpu_layers == 20
    assert plan.reason.startswith("does not fit the GPU whole (needs 5.40 GB; 4.0 GB free on Small GPU): 20 of 32")
    tiny_card = GpuInfo(True, "cuda", "Tiny GPU", GB // 2)
    plan = offload_plan(tiny_card, needed_bytes=8 * GB, weights_bytes=7 * GB, layers=40)
    assert plan.n_gpu_layers == 0
    assert plan.reason == "does not fit the GPU (needs 8.00 GB; 0.5 GB free on Tiny GPU): it runs on the CPU"


def test_a_cpu_build_or_an_unknown_card_offloads_nothing():
    cpu = GpuInfo(False, "none", "", None)
    plan = offload_plan(cpu, needed_bytes=GB, weights_bytes=GB, layers=24)
    assert (
        plan.n_gpu_layers == 0
        and plan.reason == "CPU only: llama-cpp-python here is a CPU build: models run on the CPU"
    )
    unknown = GpuInfo(True, "none", "", None)
    plan = offload_plan(unknown, needed_bytes=GB, weights_bytes=GB, layers=24)
    assert plan.n_gpu_layers == 0 and "set GPU layers by hand (-1: all) if the card has room for 1.00 GB" in plan.reason
    absent = GpuInfo(None, "none", "", None)
    assert "not installed" in offload_plan(absent, GB, GB, None).reason


def test_this_machine_is_a_cpu_build():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    import llama_cpp

    if llama_cpp.llama_supports_gpu_offload():
        pytest.skip("this llama-cpp-python is a GPU build")
    assert detect_gpu() == GpuInfo(False, "none", "", None)


def test_nvidia_smi_is_read(tmp_path: Path, monkeypatch):
    assert parse_nvidia_smi("NVIDIA GeForce RTX 4060 Laptop GPU, 7805\nOther, 100\n") == (
        "cuda",
        "NVIDIA GeForce RTX 4060 Laptop GPU",
        7805 * 1024 * 1024,
    )
    assert parse_nvidia_smi("No devices were found\n") is None
    if shutil.which("nvidia-smi") is None:
        assert nvidia_free_memory() is None  # this machine: no NVIDIA driver
    fake = tmp_path / "bin" / "nvidia-smi"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\necho "Fake Card 24GB, 20000"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    assert gpu.nvidia_free_memory() == ("cuda", "Fake Card 24GB", 20000 * 1024 * 1024)


def test_linux_cards_that_publish_their_memory_in_sysfs_are_read(tmp_path: Path) -> None:
    # amdgpu (the card of Linux Vulkan and ROCm builds) publishes total and used video memory;
    # the card with the most free memory is chosen; a card without them (an integrated Intel
    # card, a connector folder) is passed over; none at all is None, as on this machine's VM.
    def card(name: str, total: int | None, used: int | None, product: str | None = None) -> None:
        device = tmp_path / name / "device"
        device.mkdir(parents=True)
        if total is not None:
            (device / "mem_info_vram_total").write_text(f"{total}\n")
        if used is not None:
            (device / "mem_info_vram_used").write_text(f"{used}\n")
        if product is not None:
            (device / "product_name").write_text(f"{product}\n")

    assert gpu.sysfs_vram(tmp_path) is None
    card("card0", None, None)  # no memory published
    card("card0-eDP-1", None, None)  # a connector, not a card
    assert gpu.sysfs_vram(tmp_path) is None
    card("card1", 8 * 2**30, 2 * 2**30, "Radeon RX 7600")
    card("card2", 4 * 2**30, 1 * 2**30)
    assert gpu.sysfs_vram(tmp_path) == ("sysfs", "Radeon RX 7600", 6 * 2**30)
    card("card3", 16 * 2**30, 0)
    assert gpu.sysfs_vram(tmp_path) == ("sysfs", "GPU card3", 16 * 2**30)
    (tmp_path / "card3" / "device" / "mem_info_vram_used").write_text("garbage\n")
    assert gpu.sysfs_vram(tmp_path) == ("sysfs", "Radeon RX 7600", 6 * 2**30)
    free = gpu.sysfs_vram(tmp_path)
    assert free is not None
    plan = offload_plan(GpuInfo(True, "sysfs", free[1], free[2]), 5 * 10**9, 4 * 10**9, 32)
    assert plan.n_gpu_layers == -1  # fits the 6 GiB free: all layers
