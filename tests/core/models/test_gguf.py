"""The GGUF header reader: the real test model, hand-made files, and broken ones (one clear error each)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from tests.helpers.gguf_files import (
    ARRAY,
    FLOAT32,
    STRING,
    TINY_TENSORS,
    UINT32,
    gguf_bytes,
    gguf_string,
    tiny_metadata,
    write_tiny_gguf,
)
from thoughtdesk.core.models.gguf import GgufError, read_header, read_model_facts


def test_the_test_model_header(gguf_model: Path):
    facts = read_model_facts(gguf_model)
    assert facts.architecture == "gemma3"
    assert facts.context_length == 32768
    assert facts.quantization == "Q4_K_M"  # general.file_type 15
    assert facts.file_type == 15
    assert facts.license == "gemma"
    assert 260_000_000 < facts.parameter_count < 280_000_000  # "270M", counted from the tensor shapes
    assert facts.block_count == 18
    # 18 layers x 1 KV head x (256 + 256) x 2 bytes
    assert facts.kv_bytes_per_token == 18 * 1 * 512 * 2


def test_a_hand_made_file(tmp_path: Path):
    path = write_tiny_gguf(tmp_path / "tiny.gguf", template="{% if enable_thinking %}<think>{% endif %}")
    facts = read_model_facts(path)
    assert (facts.architecture, facts.context_length, facts.quantization) == ("llama", 4096, "Q4_K_M")
    assert facts.parameter_count == 64 * 100 + 64 + 64 * 64
    assert facts.chat_template and facts.thinks
    assert facts.license == "apache-2.0" and facts.name == "Tiny Test"
    assert facts.kv_bytes_per_token == 2 * 2 * (16 + 16) * 2  # layers x kv heads x (k + v dims) x f16


def test_template_without_thinking_and_parameter_count_key(tmp_path: Path):
    metadata = tiny_metadata(template="{{ messages }}") + [("general.parameter_count", 10, 7_000_000_000)]
    path = tmp_path / "m.gguf"
    path.write_bytes(gguf_bytes(metadata, TINY_TENSORS))
    facts = read_model_facts(path)
    assert facts.chat_template and not facts.thinks
    assert facts.parameter_count == 7_000_000_000


def test_quantization_guessed_from_tensor_types_without_file_type(tmp_path: Path):
    path = tmp_path / "m.gguf"
    path.write_bytes(gguf_bytes(tiny_metadata(file_type=None), TINY_TENSORS))
    assert read_model_facts(path).quantization == "Q4_K (guessed)"


def test_version_1_and_big_endian_headers_read(tmp_path: Path):
    v1 = b"GGUF" + struct.pack("<III", 1, 0, 1) + struct.pack("<I", 20) + b"general.architecture"
    v1 += struct.pack("<I", STRING) + struct.pack("<I", 5) + b"llama"
    (tmp_path / "v1.gguf").write_bytes(v1)
    assert read_model_facts(tmp_path / "v1.gguf").architecture == "llama"
    be = b"GGUF" + struct.pack(">IQQ", 3, 0, 1) + struct.pack(">Q", 20) + b"general.architecture"
    be += struct.pack(">I", STRING) + struct.pack(">Q", 4) + b"phi3"
    (tmp_path / "be.gguf").write_bytes(be)
    assert read_model_facts(tmp_path / "be.gguf").architecture == "phi3"


def _error(path: Path) -> str:
    with pytest.raises(GgufError) as caught:
        read_model_facts(path)
    text = str(caught.value)
    assert str(path) in text and "\n" not in text
    return text


def test_non_gguf_and_empty_files(tmp_path: Path):
    (tmp_path / "page.gguf").write_bytes(b"<!DOCTYPE html><html>")
    assert "not a GGUF file (it starts with b'<!DO'" in _error(tmp_path / "page.gguf")
    (tmp_path / "empty.gguf").write_bytes(b"")
    assert "empty" in _error(tmp_path / "empty.gguf")


def test_every_truncation_of_a_header_is_one_clear_error(tmp_path: Path):
    whole = gguf_bytes(tiny_metadata(template="<think>"), TINY_TENSORS)
    path = tmp_path / "cut.gguf"
    for cut in [*range(0, 64), *range(64, len(whole), 97)]:
        path.write_bytes(whole[:cut])
        text = _error(path)
        assert "truncated" in text or "empty" in text or "not a GGUF" in text, (cut, text)


def test_hostile_counts_do_not_allocate(tmp_path: Path):
    path = tmp_path / "huge.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 2**62))
    assert "metadata count says" in _error(path)
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 2**60) + b"x" * 20)
    assert "the length of metadata key 1 says" in _error(path)
    array = gguf_string("a") + struct.pack("<IIQ", ARRAY, UINT32, 2**61)
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + array)
    assert "the length of metadata key 'a'" in _error(path)


def test_odd_keys(tmp_path: Path):
    path = tmp_path / "odd.gguf"
    path.write_bytes(gguf_bytes([("general.architecture", UINT32, 7)]))
    assert "metadata key 'general.architecture' is a uint32, expected a string" in _error(path)
    path.write_bytes(gguf_bytes([("general.name", STRING, "x")]))
    assert "names no architecture" in _error(path)
    metadata = [("general.architecture", STRING, "llama"), ("llama.context_length", FLOAT32, 1.5)]
    path.write_bytes(gguf_bytes(metadata))
    assert "'llama.context_length' is a float32, expected an integer" in _error(path)
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + gguf_string("k") + struct.pack("<I", 99) + b"\0" * 8)
    assert "metadata key 'k' has unknown value type 99" in _error(path)
    path.write_bytes(gguf_bytes([("general.architecture", STRING, "llama")] * 2))
    assert "appears twice" in _error(path)
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 7, 0, 0))
    assert "GGUF version 7" in _error(path)
    path.write_bytes(gguf_bytes([("general.architecture", STRING, b"\xff\xfe")]))
    assert "not UTF-8" in _error(path)
    path.write_bytes(gguf_bytes([("general.architecture", STRING, "llama")], [("t", (1, 1, 1, 1, 1), 0)]))
    assert "tensor 't' has 5 dimensions" in _error(path)


def test_header_keeps_short_arrays_and_skips_long_ones(tmp_path: Path):
    header = read_header(write_tiny_gguf(tmp_path / "t.gguf"))
    kind, tokens = header.metadata["tokenizer.ggml.tokens"]
    assert kind == ARRAY and tokens.length == 2000 and tokens.items is None
    assert [t.name for t in header.tensors] == [name for name, _, _ in TINY_TENSORS]


def test_an_array_where_a_number_belongs(tmp_path: Path):
    metadata = [("general.architecture", STRING, "llama"), ("llama.context_length", ARRAY, (UINT32, [1, 2]))]
    path = tmp_path / "odd.gguf"
    path.write_bytes(gguf_bytes(metadata))
    assert "'llama.context_length' is an array, expected an integer" in _error(path)


def test_vocabulary_size_is_the_token_lists_length(gguf_model: Path, tmp_path: Path):
    # The test model's tokenizer.ggml.tokens: 262,144 strings, counted without reading them.
    assert read_model_facts(gguf_model).vocab_size == 262_144
    assert read_model_facts(write_tiny_gguf(tmp_path / "tiny.gguf")).vocab_size == 2000
    # Without a token list: the architecture's vocab_size key, else unknown.
    no_tokens = [item for item in tiny_metadata() if item[0] != "tokenizer.ggml.tokens"]
    path = tmp_path / "m.gguf"
    path.write_bytes(gguf_bytes(no_tokens, TINY_TENSORS))
    assert read_model_facts(path).vocab_size is None
    path.write_bytes(gguf_bytes([*no_tokens, ("llama.vocab_size", UINT32, 32000)], TINY_TENSORS))
    assert read_model_facts(path).vocab_size == 32000
