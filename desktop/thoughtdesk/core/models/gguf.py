"""What a GGUF model file says about itself, read from its header without loading it.

A GGUF file starts with the magic ``GGUF``, a version (1, 2 or 3), the number of tensors and the
number of metadata key/values; then the key/values (typed: integers, floats, booleans, strings,
arrays), then one record per tensor (name, shape, type, offset), then the tensor data, which is
never read here. Every length and count is checked against the bytes left in the file before it
is used, so a truncated or hostile file fails with one :class:`GgufError` naming the file and
what is wrong, never with a huge allocation or a Python traceback.
"""

from __future__ import annotations

import mmap
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thoughtdesk.core.errors import DataFileError

MAGIC = b"GGUF"

#: llama.cpp's ``enum llama_ftype`` (llama.h): ``general.file_type`` -> the quantization's name.
FILE_TYPES: dict[int, str] = {
    0: "F32",
    1: "F16",
    2: "Q4_0",
    3: "Q4_1",
    7: "Q8_0",
    8: "Q5_0",
    9: "Q5_1",
    10: "Q2_K",
    11: "Q3_K_S",
    12: "Q3_K_M",
    13: "Q3_K_L",
    14: "Q4_K_S",
    15: "Q4_K_M",
    16: "Q5_K_S",
    17: "Q5_K_M",
    18: "Q6_K",
    19: "IQ2_XXS",
    20: "IQ2_XS",
    21: "Q2_K_S",
    22: "IQ3_XS",
    23: "IQ3_XXS",
    24: "IQ1_S",
    25: "IQ4_NL",
    26: "IQ3_S",
    27: "IQ3_M",
    28: "IQ2_S",
    29: "IQ2_M",
    30: "IQ4_XS",
    31: "IQ1_M",
    32: "BF16",
    36: "TQ1_0",
    37: "TQ2_0",
    38: "MXFP4_MOE",
    39: "NVFP4",
    40: "Q1_0",
}

#: ggml's ``enum ggml_type``: a tensor's type, for files without ``general.file_type``.
TENSOR_TYPES: dict[int, str] = {
    0: "F32",
    1: "F16",
    2: "Q4_0",
    3: "Q4_1",
    6: "Q5_0",
    7: "Q5_1",
    8: "Q8_0",
    9: "Q8_1",
    10: "Q2_K",
    11: "Q3_K",
    12: "Q4_K",
    13: "Q5_K",
    14: "Q6_K",
    15: "Q8_K",
    16: "IQ2_XXS",
    17: "IQ2_XS",
    18: "IQ3_XXS",
    19: "IQ1_S",
    20: "IQ4_NL",
    21: "IQ3_S",
    22: "IQ2_S",
    23: "IQ4_XS",
    24: "I8",
    25: "I16",
    26: "I32",
    27: "I64",
    28: "F64",
    29: "IQ1_M",
    30: "BF16",
    34: "TQ1_0",
    35: "TQ2_0",
    39: "MXFP4",
}

# GGUF value types: (name, struct format) for the fixed-size ones.
_UINT8, _INT8, _UINT16, _INT16, _UINT32, _INT32, _FLOAT32, _BOOL, _STRING, _ARRAY, _UINT64, _INT64, _FLOAT64 = range(13)
_FIXED: dict[int, tuple[str, str]] = {
    _UINT8: ("uint8", "B"),
    _INT8: ("int8", "b"),
    _UINT16: ("uint16", "H"),
    _INT16: ("int16", "h"),
    _UINT32: ("uint32", "I"),
    _INT32: ("int32", "i"),
    _FLOAT32: ("float32", "f"),
    _BOOL: ("bool", "?"),
    _UINT64: ("uint64", "Q"),
    _INT64: ("int64", "q"),
    _FLOAT64: ("float64", "d"),
}
_INTEGERS = frozenset({_UINT8, _INT8, _UINT16, _INT16, _UINT32, _INT32, _UINT64, _INT64})
_TYPE_NAMES = {**{code: name for code, (name, _) in _FIXED.items()}, _STRING: "string", _ARRAY: "array"}
#: Arrays longer than this are skipped (a tokenizer's 262,144 tokens), only their length kept.
_KEEP_ARRAY = 1024
#: ggml's GGML_MAX_DIMS: a tensor with more dimensions is not a tensor llama.cpp wrote.
_MAX_DIMS = 4
#: Jinja chat templates that think: they emit or strip a reasoning block (Qwen3, DeepSeek-R1,
#: QwQ, Phi-4-reasoning: <think>; templates that switch it: enable_thinking, reasoning_content).
_THINKING = re.compile(r"</?think>|enable_thinking|reasoning_content|<\|begin_of_thought\|>", re.IGNORECASE)


class GgufError(DataFileError):
    """A file that is not a GGUF model ThoughtDesk can describe: names the file and what is wrong."""

    def __init__(self, path: str | Path, message: str) -> None:
        super().__init__(path, message, hint="is it a complete GGUF model file?")


@dataclass(frozen=True, slots=True)
class ArrayValue:
    """A metadata array: its element type's name, length and (for short ones) its items."""

    element_type: str
    length: int
    items: tuple[Any, ...] | None  # None: longer than kept


@dataclass(frozen=True, slots=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]
    type: int

    @property
    def elements(self) -> int:
        count = 1
        for dim in self.shape:
            count *= dim
        return count


@dataclass(frozen=True, slots=True)
class GgufHeader:
    """Everything before the tensor data: version, metadata (key -> value) and tensor records."""

    version: int
    metadata: dict[str, Any]
    tensors: tuple[TensorInfo, ...]


@dataclass(frozen=True, slots=True)
class ModelFacts:
    """What the registry keeps of a GGUF file's header (the keys of ``models list --json``)."""

    architecture: str
    context_length: int | None
    quantization: str | None  # e.g. Q4_K_M
    file_type: int | None  # general.file_type as written (None: absent, then guessed from the tensors)
    parameter_count: int
    chat_template: bool
    thinks: bool
    license: str | None
    name: str | None  # general.name
    block_count: int | None
    kv_bytes_per_token: int | None  # the f16 KV cache's bytes per token of context, all layers
    vocab_size: int | None = None  # tokens in the vocabulary (tokenizer.ggml.tokens' length): the logits' width


class _Reader:
    """Bounds-checked little- (or big-) endian reads from a memory-mapped file."""

    def __init__(self, data: mmap.mmap | bytes, path: Path) -> None:
        self.data = data
        self.path = path
        self.pos = 0
        self.order = "<"
        self.wide = True  # version >= 2: 64-bit counts and string lengths

    def fail(self, message: str) -> GgufError:
        return GgufError(self.path, message)

    @property
    def left(self) -> int:
        return len(self.data) - self.pos

    def unpack(self, fmt: str, what: str) -> Any:
        size = struct.calcsize(fmt)
        if size > self.left:
            raise self.fail(f"the file ends inside {what} (byte {self.pos:,} of {len(self.data):,}): truncated")
        (value,) = struct.unpack_from(self.order + fmt, self.data, self.pos)
        self.pos += size
        return value

    def count(self, what: str, smallest: int) -> int:
        value = self.unpack("Q" if self.wide else "I", what)
        if value * smallest > self.left:
            raise self.fail(
                f"{what} says {value:,}, more than the {self.left:,} bytes left in the file could hold: "
                "truncated or damaged"
            )
        return int(value)

    def string(self, what: str) -> str:
        length = self.count(f"the length of {what}", 1)
        raw = bytes(self.data[self.pos : self.pos + length])
        self.pos += length
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self.fail(f"{what} is not UTF-8 text") from None

    def skip_string(self, what: str) -> None:
        length = self.count(f"the length of {what}", 1)  # first: count() moves pos
        self.pos += length

    def skip_strings(self, count: int, what: str) -> None:
        """Past ``count`` strings (a tokenizer's vocabulary) in one tight loop."""
        data, pos, end = self.data, self.pos, len(self.data)
        fmt = self.order + ("Q" if self.wide else "I")
        step = struct.calcsize(fmt)
        unpack = struct.unpack_from
        for _ in range(count):
            if pos + step > end:
                raise self.fail(f"the file ends inside {what}: truncated")
            pos += step + unpack(fmt, data, pos)[0]
        if pos > end:
            raise self.fail(f"the file ends inside {what}: truncated")
        self.pos = pos

    def value(self, kind: int, what: str, depth: int = 0) -> Any:
        if kind in _FIXED:
            return self.unpack(_FIXED[kind][1], what)
        if kind == _STRING:
            return self.string(what)
        if kind == _ARRAY:
            if depth > 2:
                raise self.fail(f"{what} nests arrays more than 3 deep")
            element = self.unpack("I", f"the element type of {what}")
            if element not in _TYPE_NAMES:
                raise self.fail(f"{what} has elements of unknown type {element}")
            smallest = struct.calcsize(_FIXED[element][1]) if element in _FIXED else 8 if self.wide else 4
            length = self.count(f"the length of {what}", smallest)
            if length > _KEEP_ARRAY:
                if element in _FIXED:
                    self.pos += length * smallest
                elif element == _STRING:
                    self.skip_strings(length, what)
                else:
                    for _ in range(length):
                        self.skip(element, what, depth + 1)
                return ArrayValue(_TYPE_NAMES[element], length, None)
            items = tuple(self.value(element, what, depth + 1) for _ in range(length))
            return ArrayValue(_TYPE_NAMES[element], length, items)
        raise self.fail(f"{what} has unknown value type {kind}")

    def skip(self, kind: int, what: str, depth: int) -> None:
        if kind == _STRING:
            self.skip_string(what)
        else:
            self.value(kind, what, depth)


def _open(path: Path) -> tuple[Any, mmap.mmap | bytes]:
    handle = open(path, "rb")
    try:
        return handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except ValueError:  # an empty file cannot be mapped
        return handle, b""


def read_header(path: str | Path) -> GgufHeader:
    """The header of the GGUF file ``path``: metadata and tensor records, no tensor data.

    Raises :class:`GgufError` (file and what is wrong) for anything that is not a complete,
    well-formed GGUF header, and :class:`OSError` when the file cannot be opened."""
    path = Path(path)
    handle, data = _open(path)
    try:
        return _parse(_Reader(data, path))
    finally:
        if isinstance(data, mmap.mmap):
            data.close()
        handle.close()


def _parse(reader: _Reader) -> GgufHeader:
    if len(reader.data) < 4 or reader.data[:4] != MAGIC:
        start = bytes(reader.data[:4])
        if not start:
            raise reader.fail("the file is empty, not a GGUF model")
        raise reader.fail(f"not a GGUF file (it starts with {start!r}, a GGUF model with b'GGUF')")
    reader.pos = 4
    version = reader.unpack("I", "the version")
    if version not in (1, 2, 3):
        swapped = struct.unpack(">I", struct.pack("<I", version))[0]
        if swapped in (1, 2, 3):
            reader.order, version = ">", swapped  # a big-endian GGUF (s390x builds)
        else:
            raise reader.fail(f"GGUF version {version} is not one this version of ThoughtDesk reads (1 to 3)")
    reader.wide = version >= 2
    tensor_count = reader.count("the tensor count", 8)
    kv_count = reader.count("the metadata count", 8)
    metadata: dict[str, Any] = {}
    for index in range(kv_count):
        key = reader.string(f"metadata key {index + 1}")
        kind = reader.unpack("I", f"the type of metadata key {key!r}")
        if kind not in _TYPE_NAMES:
            raise reader.fail(f"metadata key {key!r} has unknown value type {kind}")
        if key in metadata:
            raise reader.fail(f"metadata key {key!r} appears twice")
        metadata[key] = (kind, reader.value(kind, f"metadata key {key!r}"))
    tensors = []
    for index in range(tensor_count):
        name = reader.string(f"the name of tensor {index + 1}")
        dims = reader.unpack("I", f"the dimensions of tensor {name!r}")
        if not 1 <= dims <= _MAX_DIMS:
            raise reader.fail(f"tensor {name!r} has {dims} dimensions (1 to {_MAX_DIMS} are possible)")
        shape = tuple(reader.unpack("Q" if reader.wide else "I", f"the shape of tensor {name!r}") for _ in range(dims))
        kind = reader.unpack("I", f"the type of tensor {name!r}")
        reader.unpack("Q", f"the offset of tensor {name!r}")
        tensors.append(TensorInfo(name, shape, kind))
    return GgufHeader(version, metadata, tuple(tensors))


def _typed(header: GgufHeader, path: Path) -> Callable[..., Any]:
    def get(key: str, want: str) -> Any:
        """The value of ``key`` if it is of the kind ``want`` (int, str); None when absent."""
        if key not in header.metadata:
            return None
        kind, value = header.metadata[key]
        if want == "int" and kind in _INTEGERS:
            return int(value)
        if want == "str" and kind == _STRING:
            return value
        if want == "int-or-array" and kind in _INTEGERS:
            return int(value)
        if want == "int-or-array" and kind == _ARRAY and value.items and all(isinstance(v, int) for v in value.items):
            return value.items
        expected = {"int": "an integer", "str": "a string", "int-or-array": "an integer"}[want]
        found = _TYPE_NAMES[kind]
        article = "an" if found.startswith(("array", "int")) else "a"
        raise GgufError(path, f"metadata key {key!r} is {article} {found}, expected {expected}")

    return get


def model_facts(header: GgufHeader, path: str | Path) -> ModelFacts:
    """The facts the registry keeps, from a header read by :func:`read_header`."""
    path = Path(path)
    get = _typed(header, path)
    arch = get("general.architecture", "str")
    if not arch:
        raise GgufError(path, "the header names no architecture (metadata key 'general.architecture')")
    file_type = get("general.file_type", "int")
    quantization = FILE_TYPES.get(file_type, f"type {file_type}") if file_type is not None else None
    if quantization is None:
        quantization = _guess_quantization(header.tensors)
    parameters = get("general.parameter_count", "int")
    if parameters is None:
        parameters = sum(tensor.elements for tensor in header.tensors)
    template = get("tokenizer.chat_template", "str")
    return ModelFacts(
        architecture=arch,
        context_length=get(f"{arch}.context_length", "int"),
        quantization=quantization,
        file_type=file_type,
        parameter_count=parameters,
        chat_template=template is not None,
        thinks=bool(template and _THINKING.search(template)),
        license=get("general.license", "str"),
        name=get("general.name", "str"),
        block_count=get(f"{arch}.block_count", "int"),
        kv_bytes_per_token=_kv_bytes_per_token(get, arch),
        vocab_size=_vocab_size(header, get, arch),
    )


def _vocab_size(header: GgufHeader, get: Callable[..., Any], arch: str) -> int | None:
    """The vocabulary's size: the length of ``tokenizer.ggml.tokens`` (known without its strings,
    what llama.cpp's ``n_vocab`` is), else ``{arch}.vocab_size``; None when neither is there."""
    tokens = header.metadata.get("tokenizer.ggml.tokens")
    if tokens is not None and isinstance(tokens[1], ArrayValue):
        return tokens[1].length or None
    return get(f"{arch}.vocab_size", "int") or None


def read_model_facts(path: str | Path) -> ModelFacts:
    """:func:`read_header` and :func:`model_facts` in one."""
    return model_facts(read_header(path), path)


def _guess_quantization(tensors: tuple[TensorInfo, ...]) -> str | None:
    """The type most of the weights (by elements, matrices only) are stored in, as llama.cpp
    guesses a file type when ``general.file_type`` is absent."""
    weights: dict[int, int] = {}
    for tensor in tensors:
        if len(tensor.shape) >= 2:
            weights[tensor.type] = weights.get(tensor.type, 0) + tensor.elements
    if not weights:
        return None
    common = max(weights, key=lambda kind: weights[kind])
    return f"{TENSOR_TYPES.get(common, f'type {common}')} (guessed)"


def _kv_bytes_per_token(get: Callable[..., Any], arch: str) -> int | None:
    """Bytes of an f16 KV cache per token of context: layers x KV heads x (key + value dims) x 2.
    Per-layer head counts (an array) are summed layer by layer. None when the header lacks the
    shape (then no KV estimate is given)."""
    layers = get(f"{arch}.block_count", "int")
    heads = get(f"{arch}.attention.head_count", "int-or-array")
    embedding = get(f"{arch}.embedding_length", "int")
    if not layers or not heads:
        return None
    kv_heads = get(f"{arch}.attention.head_count_kv", "int-or-array") or heads
    per_layer_heads = heads if isinstance(heads, tuple) else (heads,) * layers
    per_layer_kv = kv_heads if isinstance(kv_heads, tuple) else (kv_heads,) * layers
    key_dim = get(f"{arch}.attention.key_length", "int")
    value_dim = get(f"{arch}.attention.value_length", "int")
    total = 0
    for layer in range(layers):
        head_count = per_layer_heads[layer] if layer < len(per_layer_heads) else per_layer_heads[-1]
        kv_count = per_layer_kv[layer] if layer < len(per_layer_kv) else per_layer_kv[-1]
        if not head_count or not kv_count:
            continue  # a layer without attention (recurrent layers of hybrid models)
        k = key_dim or ((embedding or 0) // head_count)
        v = value_dim or k
        total += kv_count * (k + v) * 2
    return total or None
