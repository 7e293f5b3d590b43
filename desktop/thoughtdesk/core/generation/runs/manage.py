"""Managing stored runs: what is checked before a run is created, renaming and deleting runs.

A run that cannot start (offline mode and a provider on another machine, a local model file
that is missing or no GGUF, llama.cpp not installed) is refused by :func:`check_models_ready`
*before* ``create_run`` writes it, so no "planned" or "failed" run is left behind for a command
that never sent anything. Deleting a run removes its request rows (``ON DELETE CASCADE``) and
keeps what it produced: the CoTs and answers are the collection's data, and critique rows lose
only their link to the run (``ON DELETE SET NULL``).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.backends import check_gguf_file
from thoughtdesk.core.generation.backends.base import ModelFileError, ModelNotFound
from thoughtdesk.core.generation.backends.connection_check import look_up_model
from thoughtdesk.core.generation.backends.http import credentials_in, credentials_refused
from thoughtdesk.core.generation.defaults import DEFAULT_BASE_URLS
from thoughtdesk.core.generation.runs.lease import describe_holder, holder_alive
from thoughtdesk.core.generation.runs.providers import api_key_for
from thoughtdesk.core.generation.runs.read import resolve_run_id
from thoughtdesk.core.generation.runs.spec import ModelSpec
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.timestamps import now_iso
from thoughtdesk.core.settings.network import host_of_url, is_loopback_host, is_offline, require_network
from thoughtdesk.core.thinking import LIKELY_TOO_SMALL, MAX_TOKENS_FOR_EFFORT, anthropic_thinking


class RunInUseError(ThoughtDeskError):
    """A run another live process is executing cannot be deleted."""


def check_models_ready(models: Iterable[ModelSpec]) -> None:
    """Raise the error that would stop a run with ``models`` at its first request, if it can be
    told without sending anything: offline mode and a provider on another machine
    (:class:`~thoughtdesk.core.settings.network.OfflineError`), a local model file that is
    missing or not GGUF, llama.cpp not installed (``ModelFileError``), a base URL with a user
    name or password in it (``BadRequest``: never sent, and it would be stored with the run)."""
    for model in models:
        if model.provider == "llamacpp":
            check_gguf_file(model.model)
            if importlib.util.find_spec("llama_cpp") is None:
                raise ModelFileError(
                    "llamacpp",
                    "llama-cpp-python is not installed",
                    hint="install ThoughtDesk's 'local' extra: pip install 'thoughtdesk[local]'",
                )
            continue
        for address in model.base_urls:
            if credentials_in(address):
                raise credentials_refused(model.provider, address)
        url = model.base_url or DEFAULT_BASE_URLS.get(model.provider, DEFAULT_BASE_URLS["openai"])
        require_network(f"the {model.provider} API (model {model.model})", url)


def offline_pool_warnings(models: Iterable[ModelSpec]) -> list[str]:
    """One line for each pool (a model on several servers) that offline mode cuts down to its
    servers on this machine: the others are refused at every request, and the run used to go
    on the local part alone without a word (issue 23, point 13). Empty while online. A pool
    with no server on this machine is refused by :func:`check_models_ready` instead."""
    if not is_offline():
        return []
    warnings = []
    for model in models:
        if len(model.base_urls) < 2:
            continue
        remote = [url for url in model.base_urls if not is_loopback_host(host_of_url(url))]
        local = len(model.base_urls) - len(remote)
        if remote and local:
            warnings.append(
                f"offline mode is on: the pool of {model.model} runs on its {local} server(s) on this machine "
                f"only; {', '.join(remote)} {'is' if len(remote) == 1 else 'are'} on another machine and get no "
                "requests (turn offline mode off to use them)"
            )
    return warnings


def reasoning_budget_warnings(models: Iterable[ModelSpec]) -> list[str]:
    """One line for each model asked to think whose max tokens will likely cut its thinking
    (below thinking.LIKELY_TOO_SMALL: a trace cut by the limit has no answer), or, for
    Anthropic, too small for any thinking budget (then thinking is not asked for at all)."""
    warnings = []
    for model in models:
        effort = model.reasoning_effort
        if effort is None or effort == "none":
            continue
        suggested = MAX_TOKENS_FOR_EFFORT[effort]
        if model.provider == "anthropic" and anthropic_thinking(effort, model.max_tokens) is None:
            warnings.append(
                f"{model.label}: max tokens {model.max_tokens:,} leave no room for a thinking budget (at least "
                f"1,024 tokens besides the answer): thinking is not requested; raise max tokens to about {suggested:,}"
            )
        elif model.max_tokens < LIKELY_TOO_SMALL:
            warnings.append(
                f"{model.label}: max tokens {model.max_tokens:,} will likely cut its thinking (reasoning effort "
                f"{effort}; typical traces run to thousands of tokens, and a cut trace has no answer); raise max "
                f"tokens to about {suggested:,}"
            )
    return warnings


def check_models_exist(models: Iterable[ModelSpec], *, timeout: float = 10.0) -> None:
    """Raise :class:`ModelNotFound` for a remote model its server says it does not have, before a
    run is written (a misspelled name used to leave a run behind, failed at its first request,
    that no resume could fix: the model is stored in the run). Asks each server once, without
    generating anything (:func:`~thoughtdesk.core.generation.backends.connection_check.look_up_model`);
    a server that cannot tell (no model list, no answer yet) lets the run be written as before.
    Call after :func:`check_models_ready` (offline mode is refused there first)."""
    asked: set[tuple[str, str, str]] = set()
    for model in models:
        if model.provider == "llamacpp":
            continue
        url = model.base_url or DEFAULT_BASE_URLS[model.provider]
        if (model.provider, url, model.model) in asked:
            continue
        asked.add((model.provider, url, model.model))
        try:
            key = api_key_for(model.provider, url)
        except ThoughtDeskError:  # a bad key in the environment: the run says so at its first request
            key = None
        found = look_up_model(model.provider, url, key, model.model, timeout=min(timeout, model.timeout))
        if found.known is False:
            guess = f"; did you mean {' or '.join(repr(name) for name in found.offered)}?" if found.offered else ""
            raise ModelNotFound(
                model.provider,
                f"the server at {url} has no model {model.model!r}{guess}",
                hint="check the model name (and the base URL); nothing was written",
            )


def stopped_for_good(error: BaseException | None, run_id: int, done: int) -> str | None:
    """Advice for a run stopped by an error no resume can fix, else None: its requests were all
    answered "model not found" (none done), and the model is stored in the run, so resuming it
    would fail the same way. Say to start a new run with the right model, and that this one is
    empty and can go."""
    if not isinstance(error, ModelNotFound) or done > 0:
        return None
    return (
        f"run {run_id} has no answers and cannot be resumed with another model (a run keeps the model it was "
        "planned with): start a new run with the right model name and address, and delete this empty one"
    )


def rename_run(lib: Library, run: int | str, name: str) -> int:
    """Give run ``run`` (id or name) a new name; returns its id. An empty name is refused."""
    name = name.strip()
    if not name:
        raise ThoughtDeskError("a run's new name cannot be empty")
    run_id = resolve_run_id(lib, run)
    with lib.transaction() as conn:
        conn.execute("UPDATE run SET name = ?, updated = ? WHERE id = ?", (name, now_iso(), run_id))
    return run_id


def delete_run(lib: Library, run: int | str) -> tuple[int, int]:
    """Delete run ``run`` (id or name) and its request rows; returns ``(run id, requests
    deleted)``. The CoTs, answers and critiques it produced stay. A run a live process is
    executing is refused (:class:`RunInUseError`): pause or cancel it there first."""
    run_id = resolve_run_id(lib, run)
    with lib.transaction() as conn:
        holder, expires = conn.execute("SELECT holder, lease_expires FROM run WHERE id = ?", (run_id,)).fetchone()
        if holder and holder_alive(holder, expires, library=lib.path, run_id=run_id):
            raise RunInUseError(
                f"run {run_id} is being executed by {describe_holder(holder)}; cancel it there first, then delete it"
            )
        (requests,) = conn.execute("SELECT count(*) FROM request WHERE run_id = ?", (run_id,)).fetchone()
        conn.execute("DELETE FROM run WHERE id = ?", (run_id,))
    return run_id, int(requests)
