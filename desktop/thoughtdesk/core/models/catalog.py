"""A short, curated list of GGUF models worth having for ThoughtDesk's work, to download when asked.

Nothing here downloads anything: the list is data (shown by Edit ▸ Models… ▸ Download… and
``thoughtdesk models download --list``); a download starts only when the user asks for one.
Each entry is one quantization (Q4_K_M where the repository has it: a good size/quality
balance on a laptop) of a public Hugging Face repository that needs no log-in. Sizes are those
the repositories list, for the user to judge the download and the memory (the exact size is
what the server sends); no checksum is given, so the SHA-256 of what arrives is recorded, and a
user who has the publisher's checksum can give it (``--sha256``, or the dialog's field).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True, slots=True)
class CatalogModel:
    """One model to offer: the name it is registered under, where it comes from, what it is for."""

    name: str
    title: str
    url: str
    size: int  # bytes, as the repository lists it
    licence: str
    good_for: str

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def _hf(repo: str, file: str) -> str:
    return f"https://huggingface.co/{repo}/resolve/main/{file}?download=true"


CATALOG: tuple[CatalogModel, ...] = (
    CatalogModel(
        name="digital-socrates-7b",
        title="Digital Socrates 7B (Q4_K_M)",
        url=_hf("TheBloke/digital-socrates-7B-GGUF", "digital-socrates-7b.Q4_K_M.gguf"),
        size=4_080_000_000,
        licence="Llama 2 Community License (a Llama 2 fine-tune; the card says Apache-2.0)",
        good_for="Critiques of explanations as in the Digital Socrates paper: Generate ▸ Critique… with "
        "the Digital Socrates preset (main flaw, dimensions, feedback, a 0-5 score); fits a 16 GB laptop",
    ),
    CatalogModel(
        name="digital-socrates-13b",
        title="Digital Socrates 13B (Q4_K_M)",
        url=_hf("TheBloke/digital-socrates-13B-GGUF", "digital-socrates-13b.Q4_K_M.gguf"),
        size=7_870_000_000,
        licence="Llama 2 Community License (a Llama 2 fine-tune; the card says Apache-2.0)",
        good_for="The same critiques, closer to the paper's best critic; needs about 10 GB free",
    ),
    CatalogModel(
        name="qwen3-1.7b",
        title="Qwen3 1.7B (Q4_K_M), a small reasoning model",
        url=_hf("ggml-org/Qwen3-1.7B-GGUF", "Qwen3-1.7B-Q4_K_M.gguf"),
        size=1_280_000_000,
        licence="Apache-2.0",
        good_for="Chains of thought with a reasoning trace (<think>) on a CPU: quick generation runs, "
        "reasoning capture and answer extraction tests; small enough for any laptop",
    ),
    CatalogModel(
        name="llama-3.1-8b-instruct",
        title="Llama 3.1 8B Instruct (Q4_K_M)",
        url=_hf("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf"),
        size=4_920_000_000,
        licence="Llama 3.1 Community License",
        good_for="A general CoT generator; the rationale model and scorer of RATIONALYST-style guided "
        "generation (the paper's models are Llama 3 8B Instruct); a judge for pairwise comparisons",
    ),
    CatalogModel(
        name="gemma-3-4b-it",
        title="Gemma 3 4B Instruct (Q4_K_M)",
        url=_hf("unsloth/gemma-3-4b-it-GGUF", "gemma-3-4b-it-Q4_K_M.gguf"),
        size=2_490_000_000,
        licence="Gemma Terms of Use",
        good_for="A compact multilingual instruction model with a long context: CoTs for non-English "
        "datasets, a light critique or judge model; the bigger sibling of the 270M test model",
    ),
)


def catalog_model(name: str) -> CatalogModel | None:
    """The curated model named ``name``, or None."""
    return next((model for model in CATALOG if model.name == name), None)
