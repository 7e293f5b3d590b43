"""Does a model fit: weights + KV cache at a context against free memory, with the figures."""

from __future__ import annotations

from dataclasses import replace
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


def test_scoring_adds_the_scorers_own_estimate(gguf_model: Path, tmp_path: Path):
    """With scoring the need is weights + KV cache + what the scorer estimates for its instance,
    with llama.cpp's own vocabulary size (read by llama.cpp, vocab only)."""
    from thoughtdesk.core.generation.backends.llama_setup import LlamaCppSettings, estimate_scoring_memory

    [result] = ModelRegistry(tmp_path / "models.json", tmp_path / "m").add(gguf_model)
    entry = result.entry
    for n_ctx in (2048, 512):
        plain = memory_fit(entry, n_ctx, available=8_000_000_000)
        scored = memory_fit(entry, n_ctx, available=8_000_000_000, scoring=True)
        estimate = estimate_scoring_memory(LlamaCppSettings(model_path=gguf_model, n_ctx=n_ctx))  # n_batch 512
        assert entry.vocab_size == estimate.n_vocab == 262_144
        assert plain.kv_cache is not None
        assert scored.needed == plain.weights + plain.kv_cache + estimate.total
        assert scored.scoring == estimate
    scored = memory_fit(entry, 2048, available=8_000_000_000, scoring=True)
    assert scored.describe() == (
        "fits: needs 3.01 GB (weights 0.25 GB + KV cache 0.04 GB at 2,048 tokens + scoring 2.72 GB) of 8.00 GB free"
    )
    # 2,048 x 262,144 x 4 logits + 512 x 262,144 x 4 output buffer + a second 2,048-token KV cache
    assert scored.to_json()["scoring_bytes"] == (2048 + 512) * 262_144 * 4 + 18 * 512 * 2 * 2048
    assert memory_fit(entry, 2048, None).to_json()["scoring_bytes"] is None
    # A smaller batch: a smaller output buffer, the same formula.
    small = memory_fit(entry, 2048, None, scoring=True, n_batch=64)
    assert small.scoring is not None and small.scoring.output_bytes == 64 * 262_144 * 4


def test_scoring_memory_unknown_without_a_vocabulary_size(gguf_model: Path, tmp_path: Path):
    [result] = ModelRegistry(tmp_path / "models.json", tmp_path / "m").add(gguf_model)
    older = replace(result.entry, vocab_size=None)  # an entry from a models.json before vocab_size
    fit = memory_fit(older, 2048, available=8_000_000_000, scoring=True)
    assert fit.scoring is None and fit.needed == memory_fit(older, 2048, 8_000_000_000).needed
    assert "+ scoring memory unknown)" in fit.describe()
    assert fit.to_json()["scoring"] is True and fit.to_json()["scoring_bytes"] is None
