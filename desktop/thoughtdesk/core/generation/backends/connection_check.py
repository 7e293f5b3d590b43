""" "Test connection": one cheap authenticated request to a provider, reported in words.

The request lists the provider's models (``GET {base}/models``), which needs a valid key but
costs nothing. The result says what worked or exactly what failed (refused connection, DNS,
TLS, timeout, HTTP status with the server's own message), and never contains the key.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from urllib.parse import quote

import httpx

from thoughtdesk.core.generation.backends.http import credentials_in, credentials_refused, error_text
from thoughtdesk.core.settings.network import OfflineError, require_network
from thoughtdesk.core.settings.transport import sync_client

ANTHROPIC_VERSION = "2023-06-01"


@dataclass(frozen=True, slots=True)
class ConnectionResult:
    """``ok`` and the sentence to show; ``models`` lists up to 20 model ids the server offered."""

    ok: bool
    message: str
    models: tuple[str, ...] = ()


def check_openai_compatible(base_url: str, api_key: str | None, *, timeout: float = 10.0) -> ConnectionResult:
    """Ask an OpenAI-compatible server at ``base_url`` for its models (timeout in seconds)."""
    if refused := _credentials_refused("OpenAI-compatible server", base_url):
        return refused
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return _check("OpenAI-compatible server", base_url.rstrip("/") + "/models", headers, timeout)


def check_anthropic(
    api_key: str | None, *, base_url: str = "https://api.anthropic.com", timeout: float = 10.0
) -> ConnectionResult:
    """Ask Anthropic's API (or a server at ``base_url`` speaking it) for its models."""
    if refused := _credentials_refused("Anthropic", base_url):
        return refused
    if not api_key:
        return ConnectionResult(False, "no Anthropic API key: paste the key first")
    headers = {"x-api-key": api_key, "anthropic-version": ANTHROPIC_VERSION}
    return _check("Anthropic", base_url.rstrip("/") + "/v1/models", headers, timeout)


def _credentials_refused(what: str, base_url: str) -> ConnectionResult | None:
    """The refusal of a base URL with ``user:pass@`` in it, as model calls refuse it: httpx would
    send them as Basic auth, and the address is stored with every run (None: none in it)."""
    if not credentials_in(base_url):
        return None
    error = credentials_refused(what, base_url)
    return ConnectionResult(False, f"{error.message}; {error.hint}")


def _check(what: str, url: str, headers: dict[str, str], timeout: float) -> ConnectionResult:
    if not url.startswith(("http://", "https://")):
        return ConnectionResult(False, f"{url!r} is not an http:// or https:// address")
    try:
        require_network(f"testing the connection to {what}", url)
    except OfflineError as error:
        return ConnectionResult(False, str(error))
    try:
        # No redirects: httpx drops only Authorization on a cross-origin redirect, not x-api-key,
        # and a key goes only to the address it was given for (runs do not follow them either).
        with sync_client(timeout=timeout, follow_redirects=False) as client:  # the network's proxy and CAs
            response = client.get(url, headers=headers)
    except httpx.ConnectError as error:
        return ConnectionResult(False, f"cannot connect to {url}: {error}")
    except httpx.TimeoutException:
        return ConnectionResult(False, f"no answer from {url} within {timeout:g} s")
    except httpx.HTTPError as error:
        return ConnectionResult(False, f"request to {url} failed: {type(error).__name__}: {error}")
    except OfflineError as error:  # the process-wide guard caught a redirect off this machine
        return ConnectionResult(False, str(error))
    body = response.text
    if response.is_redirect:
        target = response.headers.get("location", "another address")
        return ConnectionResult(
            False,
            f"{url} redirects to {target}; put the address the API really "
            "answers at into Base URL (no key was sent there)",
        )
    if response.status_code in (401, 403):
        return ConnectionResult(
            False, f"the API key was refused by {url} (HTTP {response.status_code}): {error_text(body)}"
        )
    if not 200 <= response.status_code < 300:
        return ConnectionResult(False, f"{url} answered HTTP {response.status_code}: {error_text(body)}")
    try:
        data = response.json()
        models = tuple(str(m.get("id")) for m in data.get("data", []) if isinstance(m, dict))[:20]
    except (ValueError, AttributeError):
        return ConnectionResult(
            False, f"{url} answered, but not with JSON: is the base URL the API address (it usually ends in /v1)?"
        )
    shown = ", ".join(models[:5]) + (" …" if len(models) > 5 else "")
    detail = f"; models: {shown}" if models else ""
    return ConnectionResult(True, f"connected to {what} at {url} (HTTP {response.status_code}){detail}", models)


@dataclass(frozen=True, slots=True)
class ModelLookup:
    """What a provider said of one model name: ``known`` True (it has it), False (it said it has
    not), None (it could not tell: no model list, no answer, a refused key...); ``offered`` the
    names it offers that look like the one asked for (for "did you mean")."""

    known: bool | None
    offered: tuple[str, ...] = ()


def look_up_model(
    provider: str, base_url: str, api_key: str | None, model: str, *, timeout: float = 10.0
) -> ModelLookup:
    """Ask the server at ``base_url`` whether it serves ``model``, without generating anything.

    Anthropic: ``GET /v1/models/{id}`` (ids and aliases) answers 200 or 404. An OpenAI-compatible
    server: ``GET /models``; a name among the ids is known, and a name missing from a list of two
    or more is not (OpenAI, vLLM with several models, Ollama, LM Studio). A list of one says
    nothing: a llama.cpp server lists the model it loaded under one name and answers to any.
    Everything else (no /models, an error, no answer) is unknown, never a refusal; nothing is
    sent to an address with a user name or password in it."""
    if credentials_in(base_url):
        return ModelLookup(None)
    if provider == "anthropic":
        if not api_key:
            return ModelLookup(None)
        headers = {"x-api-key": api_key, "anthropic-version": ANTHROPIC_VERSION}
        response = _get(base_url.rstrip("/") + "/v1/models/" + quote(model, safe=""), headers, timeout)
        if response is None:
            return ModelLookup(None)
        # Anthropic's answer for an unknown model names it ("model: claude-..."); a 404 that
        # does not (a server speaking the API without this route) says nothing.
        if response.status_code == 404 and "not_found" in response.text and model in response.text:
            return ModelLookup(False)
        return ModelLookup(True if response.status_code == 200 else None)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    response = _get(base_url.rstrip("/") + "/models", headers, timeout)
    if response is None or response.status_code != 200:
        return ModelLookup(None)
    try:
        ids = [str(m["id"]) for m in response.json().get("data", []) if isinstance(m, dict) and "id" in m]
    except (ValueError, AttributeError, TypeError):
        return ModelLookup(None)
    if model in ids or f"{model}:latest" in ids:  # Ollama lists "llama3:latest" and answers to "llama3"
        return ModelLookup(True)
    if len(ids) < 2:
        return ModelLookup(None)
    return ModelLookup(False, tuple(difflib.get_close_matches(model, ids, n=3, cutoff=0.5)))


def _get(url: str, headers: dict[str, str], timeout: float) -> httpx.Response | None:
    """One GET without redirects (a key goes only where it was given for); None when no answer
    came (refused, timeout, TLS, offline)."""
    try:
        require_network("looking up the model", url)
        with sync_client(timeout=timeout, follow_redirects=False) as client:
            return client.get(url, headers=headers)
    except (httpx.HTTPError, OfflineError):
        return None
