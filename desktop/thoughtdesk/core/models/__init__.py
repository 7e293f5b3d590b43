"""Local GGUF models: their headers read without loading them, a registry by name, whether they
fit this machine, downloads (docs/models.md)."""

from thoughtdesk.core.models.gguf import GgufError, ModelFacts, read_header, read_model_facts
from thoughtdesk.core.models.registry import (
    AddResult,
    ModelEntry,
    ModelRegistry,
    ModelRegistryError,
    resolve_local_model,
    resolve_model_name,
)

__all__ = [
    "AddResult",
    "GgufError",
    "ModelEntry",
    "ModelFacts",
    "ModelRegistry",
    "ModelRegistryError",
    "read_header",
    "read_model_facts",
    "resolve_local_model",
    "resolve_model_name",
]
