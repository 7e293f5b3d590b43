"""What a scorer can do, said before it is used (docs/rationales.md, "Which backends can"):
whether it can score text and why not, what an in-process GGUF's scoring copy costs in memory,
and a one-request check that an OpenAI-compatible server echoes prompt log-probs.

Used by the run planner's Guide tab and summary, ``thoughtdesk generate --guide rationalyst``,
and the rationale filter (dialog and CLI). Nothing here loads a model or sends a request except
:func:`probe_scorer`.
"""

from __future__ import annotations

import asyncio
import functools
import os
from dataclasses import dataclass
from pathlib import Path

from thoughtdesk.core.generation.backends import AnthropicBackend, BackendError, ModelFileError
from thoughtdesk.core.generation.backends.base import ScoringUnsupported
from thoughtdesk.core.generation.backends.llama_scoring import ScoringMemory
from thoughtdesk.core.generation.backends.llamacpp import estimate_scoring_memory
from thoughtdesk.core.generation.backends.openai_compat import CHAT_CANNOT_SCORE
from thoughtdesk.core.generation.runs.providers import build_backend, llama_settings
from thoughtdesk.core.generation.runs.spec import GuideSpec, ModelSpec

#: Seconds :func:`probe_scorer` waits for the server's answer before letting the run find out.
PROBE_TIMEOUT = 20.0
#: What the probe scores: a few tokens, so it costs next to nothing on a paid API.
PROBE_PREFIX, PROBE_CONTINUATION = "Scoring check: two plus two is", " four."
#: Failures of the probe that would stop the run at its first step anyway (others, such as a
#: timeout or a busy server, are left to the run's retries).
PROBE_STOPS = ("ScoringUnsupported", "AuthError", "ModelNotFound", "ServerDown", "BadRequest")


@dataclass(frozen=True, slots=True)
class ScorerReport:
    """A scorer before use: ``can_score``; ``detail`` one line for people (what it costs, or
    why it cannot); ``memory`` the extra memory of an in-process scoring copy; ``probed_at_start``
    when whether the server echoes log-probs is only known by asking it (:func:`probe_scorer`)."""

    label: str
    can_score: bool
    detail: str
    memory: ScoringMemory | None = None
    probed_at_start: bool = False


def scorer_report(model: ModelSpec) -> ScorerReport:
    """What ``model`` can do as a scorer. Blocking for a local model (reads the GGUF's
    vocabulary, about a second; remembered per file, size, date and context size)."""
    label = model.label
    if model.provider == "llamacpp":
        try:
            memory = _memory(str(Path(model.model).expanduser()), model.n_ctx, *_stamp(model.model))
        except ModelFileError as error:
            return ScorerReport(label, False, f"{label} cannot score text: {error.message}")
        return ScorerReport(
            label,
            True,
            f"{label} scores text exactly in-process, with a second copy of the model loaded for it: "
            f"{memory.describe()}",
            memory,
        )
    if model.provider == "anthropic":
        return ScorerReport(label, False, f"{label} cannot score text: {AnthropicBackend.scoring_unsupported_reason}")
    if model.endpoint != "completions" or model.chat:
        return ScorerReport(label, False, f"{label} cannot score text: {CHAT_CANNOT_SCORE}")
    return ScorerReport(
        label,
        True,
        f"{label} scores on its /v1/completions with echo + log-probs (vLLM, llama-cpp-python's server); "
        "a server that ignores echo (llama.cpp's own llama-server) is found with one tiny request when the "
        "run starts",
        probed_at_start=True,
    )


def guide_scorer_report(guide: GuideSpec | None) -> ScorerReport | None:
    """The report of a guided run's scorer (None when its guide scores nothing)."""
    return None if guide is None or guide.scorer is None else scorer_report(guide.scorer)


def _stamp(path: str) -> tuple[int, int]:
    try:
        info = os.stat(Path(path).expanduser())
    except OSError:
        return (0, 0)
    return (info.st_size, info.st_mtime_ns)


@functools.lru_cache(maxsize=32)
def _memory(path: str, n_ctx: int, _size: int, _mtime: int) -> ScoringMemory:
    return estimate_scoring_memory(llama_settings(ModelSpec("llamacpp", path, n_ctx=n_ctx)))


async def probe_scorer(model: ModelSpec, *, timeout: float = PROBE_TIMEOUT) -> None:
    """Ask an OpenAI-compatible scorer to score a few tokens once; raise the error that would
    stop a run at its first step (:data:`PROBE_STOPS`: no echoed log-probs, a refused key, an
    unknown model, nothing answering). Other failures and a slow server are left to the run.
    Other providers are not asked (their ability is known without a request)."""
    if model.provider != "openai" or not scorer_report(model).can_score:
        return
    backend = build_backend(model)
    try:
        async with asyncio.timeout(timeout):
            await backend.score(PROBE_PREFIX, [PROBE_CONTINUATION])
    except TimeoutError:
        return
    except BackendError as error:
        if isinstance(error, ScoringUnsupported) or error.kind in PROBE_STOPS:
            raise
    finally:
        await backend.aclose()
