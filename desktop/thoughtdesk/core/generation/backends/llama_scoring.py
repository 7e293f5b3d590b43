"""Scoring text with a llama-cpp-python model: the token log-probs of continuations after a
shared prefix (:func:`score_with_llama`), and what the scoring instance costs in memory
(:class:`ScoringMemory`, shown before it loads). Used by
:class:`~thoughtdesk.core.generation.backends.llamacpp.LlamaCppBackend`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from thoughtdesk.core.generation.scoring import TokenScores, continuation_start
from thoughtdesk.core.models.fit import ScoringMemory, scoring_memory

__all__ = ["ModelShape", "ScoringMemory", "score_with_llama", "scoring_memory_of"]


@dataclass(frozen=True, slots=True)
class ModelShape:
    """What :func:`scoring_memory_of` reads of a model, from its file (no context loaded)."""

    vocab: int
    metadata: dict[str, str]
    n_batch: int = 512

    def n_vocab(self) -> int:
        return self.vocab

    def n_ctx(self) -> int:
        return 0


def scoring_memory_of(llama: Any, *, n_ctx: int | None = None, n_batch: int | None = None) -> ScoringMemory:
    """The scoring instance's extra memory for the model ``llama`` (any instance of it)."""
    n_ctx = n_ctx or llama.n_ctx()
    n_batch = n_batch or llama.n_batch
    n_vocab = int(llama.n_vocab())
    metadata = getattr(llama, "metadata", None) or {}
    arch = metadata.get("general.architecture", "")

    def number(key: str, default: int = 0) -> int:
        try:
            return int(metadata.get(f"{arch}.{key}", default))
        except (TypeError, ValueError):
            return default

    layers = number("block_count")
    heads = number("attention.head_count", 1) or 1
    kv_heads = number("attention.head_count_kv", heads) or heads
    head_dim = number("attention.key_length") or (number("embedding_length") // heads)
    value_dim = number("attention.value_length") or head_dim
    kv_bytes = layers * n_ctx * kv_heads * (head_dim + value_dim) * 2
    return scoring_memory(n_ctx=n_ctx, n_batch=n_batch, n_vocab=n_vocab, kv_bytes=kv_bytes)


def score_with_llama(
    llama: Any,
    prefix: str,
    continuations: Sequence[str],
    *,
    reuse: bool = True,
    cancel: threading.Event | None = None,
) -> list[TokenScores]:
    """Token log-probs of each continuation after ``prefix`` with a ``logits_all=True`` Llama.

    Texts are tokenised as a completion prompt is (BOS added, special tokens read), prefix and
    prefix + continuation each; the continuation's tokens start where the two differ. With
    ``reuse`` the shared tokens but the last are evaluated once, without logits (only scored
    positions need them), and stay in the KV cache; each continuation then evaluates that last
    shared token and its own tokens, with logits. Without ``reuse`` every continuation
    evaluates its whole text in one go (as a server does with a text it has not seen).

    llama.cpp's CPU results change with how tokens are split into evaluations (by up to ~0.2
    nats a token on the small Q4 test model), so the split is fixed by the texts alone: the
    cache is reused only when it holds exactly the shared tokens, and a score never depends on
    what was scored before. Runs on the thread that owns ``llama``.
    """
    from llama_cpp import Llama

    prefix_tokens = llama.tokenize(prefix.encode("utf-8"), add_bos=True, special=True)
    results: list[TokenScores] = []
    for text in continuations:
        if cancel is not None and cancel.is_set():
            break
        joint = llama.tokenize((prefix + text).encode("utf-8"), add_bos=True, special=True)
        start = continuation_start(prefix_tokens, joint)
        if start == len(joint):
            results.append(TokenScores((), ()))
            continue
        if start == 0:
            raise ValueError("this model adds no beginning-of-text token: give a prefix before the scored text")
        if len(joint) > llama.n_ctx():
            raise ValueError(f"prefix + continuation are {len(joint)} tokens, more than the context ({llama.n_ctx()})")
        evaluated = 0
        if reuse:
            shared = joint[: start - 1]
            if llama.input_ids[: llama.n_tokens].tolist() != shared:
                llama.reset()
                evaluated += _eval(llama, shared, logits=False)
            first = start - 1
        else:
            llama.reset()
            first = 0
        llama.n_tokens = first
        evaluated += _eval(llama, joint[first:], logits=True)
        rows = llama.scores[start - 1 : len(joint) - 1]
        logprobs = Llama.logits_to_logprobs(rows)
        tokens = joint[start:]
        values = tuple(float(logprobs[index, token]) for index, token in enumerate(tokens))
        texts = tuple(
            llama.detokenize([token], prev_tokens=joint[: start + index], special=True).decode(
                "utf-8", errors="replace"
            )
            for index, token in enumerate(tokens)
        )
        results.append(TokenScores(texts, values, evaluated_tokens=evaluated))
        # Forget the continuation, keep the shared part: the next one starts after it.
        llama.n_tokens = first
    return results


def _eval(llama: Any, tokens: Sequence[int], *, logits: bool) -> int:
    """Evaluate ``tokens`` after the cached ones; logits are computed (and kept in
    ``llama.scores``) only when asked for: for a 262k vocabulary they cost more than the model.

    llama-cpp-python's ``eval`` asks llama.cpp for the logits of every position when the
    instance has ``logits_all``; its ``_logits_all`` flag is switched off for the call instead.
    """
    if not tokens:
        return 0
    previous = llama._logits_all
    llama._logits_all = logits and previous
    try:
        llama.eval(tokens)
    finally:
        llama._logits_all = previous
    return len(tokens)
