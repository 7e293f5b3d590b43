"""Tiny hand-made GGUF files for the header reader's tests: valid ones and broken ones."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64 = 4, 5, 6, 7, 8, 9, 10


def gguf_string(text: str | bytes) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(raw)) + raw


def gguf_value(kind: int, value: Any) -> bytes:
    if kind == STRING:
        return gguf_string(value)
    if kind == ARRAY:
        element, items = value
        return struct.pack("<IQ", element, len(items)) + b"".join(gguf_value(element, item) for item in items)
    return struct.pack("<" + {UINT32: "I", INT32: "i", FLOAT32: "f", BOOL: "?", UINT64: "Q"}[kind], value)


def gguf_bytes(
    metadata: list[tuple[str, int, Any]],
    tensors: list[tuple[str, tuple[int, ...], int]] = (),  # type: ignore[assignment]
    *,
    version: int = 3,
) -> bytes:
    """A GGUF header: magic, version, counts, ``(key, type, value)`` metadata, tensor records."""
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(metadata))
    for key, kind, value in metadata:
        out += gguf_string(key) + struct.pack("<I", kind) + gguf_value(kind, value)
    offset = 0
    for name, shape, kind in tensors:
        out += gguf_string(name) + struct.pack("<I", len(shape)) + struct.pack(f"<{len(shape)}Q", *shape)
        out += struct.pack("<IQ", kind, offset)
        offset += 32
    return out


def tiny_metadata(*, template: str | None = None, file_type: int | None = 15, arch: str = "llama") -> list:
    """A llama-shaped model's keys: 2 layers, 64-wide, 4 heads, 2 KV heads, context 4096."""
    metadata: list[tuple[str, int, Any]] = [
        ("general.architecture", STRING, arch),
        ("general.name", STRING, "Tiny Test"),
        ("general.license", STRING, "apache-2.0"),
        (f"{arch}.context_length", UINT32, 4096),
        (f"{arch}.block_count", UINT32, 2),
        (f"{arch}.embedding_length", UINT32, 64),
        (f"{arch}.attention.head_count", UINT32, 4),
        (f"{arch}.attention.head_count_kv", UINT32, 2),
        ("tokenizer.ggml.tokens", ARRAY, (STRING, [f"t{i}" for i in range(2000)])),
    ]
    if file_type is not None:
        metadata.append(("general.file_type", UINT32, file_type))
    if template is not None:
        metadata.append(("tokenizer.chat_template", STRING, template))
    return metadata


TINY_TENSORS = [
    ("token_embd.weight", (64, 100), 12),
    ("output_norm.weight", (64,), 0),
    ("blk.0.attn_q.weight", (64, 64), 12),
]


def write_tiny_gguf(path: Path, **options: Any) -> Path:
    """A small valid GGUF file (header and a little padding for "tensor data")."""
    path.write_bytes(gguf_bytes(tiny_metadata(**options), TINY_TENSORS) + b"\0" * 96)
    return path
