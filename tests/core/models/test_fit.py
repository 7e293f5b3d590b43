"""Does a model fit: weights + KV cache at a context against free memory, with the figures."""

from __future__ import annotations

from pathlib import Path

from thoughtdesk.core.models import ModelRegistry
from thoughtdesk.core.models.fit import available_memory, memory_fit


def test_test_model_fit_figures(gguf_model: Path, tmp_path: Path):
    [result] = ModelRegistry(tmp_path / "models.json", tmp_path / "m").add(gguf_model)
    entry = result.entry
    size = gguf_model.stat().st_size
    fit = memory_fit(entry, 2048, available=10 * size)
    assert fit.weights == size and fit.kv_cache == 18 * 512 * 2 * 2048
    assert fit.verdict == "fits"
    assert memory_fit(entry, 2048, available=int(fit.needed / 0.9)).verdict == "tight"
    assert memory_fit(entry, 2048, available=fit.needed - 1).verdict == "does not fit"
    assert memory_fit(entry, 2048, available=None).verdict == "unknown"
    text = memory_fit(entry, 2048, available=8_000_000_000).describe()
    assert text == "fits: needs 0.29 GB (weights 0.25 GB + KV cache 0.04 GB at 2,048 tokens) of 8.00 GB free"
    # A longer context needs a bigger cache.
    assert memory_fit(entry, 32768, available=None).kv_cache == 16 * fit.kv_cache


def test_available_memory_is_the_kernels_figure():
    free = available_memory()
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        line = next(x for x in meminfo.read_text().splitlines() if x.startswith("MemAvailable:"))
        expected = int(line.split()[1]) * 1024
        assert free is not None and abs(free - expected) < expected * 0.5  # it moves between the reads
    else:
        assert free is None or free > 0
