"""How every outside HTTP call is made: the network's proxy and certificates, as users have them.

Hospital and company networks put a proxy in front of the internet and often inspect TLS with
their own certificate authority. Model calls, "Test connection" and dataset downloads therefore
all honour the environment (``HTTPS_PROXY``, ``HTTP_PROXY``, ``ALL_PROXY``, ``NO_PROXY``;
on Windows and macOS also the system proxy settings, which ``urllib.request.getproxies`` reads)
and verify certificates against:

1. ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` when set (what IT hands out for an inspecting proxy);
2. else the operating system's trust store through ``truststore`` when it is installed (so a
   certificate authority IT installed on the machine is trusted, as the browser trusts it);
3. else certifi's bundle (httpx's default).

Loopback addresses (``127.0.0.1``, ``localhost``, ``::1``) always go direct, whatever the proxy
settings say: a local model server must never be sent through the hospital's proxy.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import ipaddress
import os
import ssl
import urllib.request
from collections.abc import Callable
from typing import Any

import httpx

#: URL patterns that never use a proxy (httpx mounts: ``None`` means a direct connection).
LOOPBACK_PATTERNS = ("all://127.0.0.1", "all://localhost", "all://*.localhost", "all://[::1]")


def trust_source() -> str:
    """Where certificates are verified against, in words (for logs and the self-test)."""
    if os.environ.get("SSL_CERT_FILE"):
        return f"SSL_CERT_FILE ({os.environ['SSL_CERT_FILE']})"
    if os.environ.get("SSL_CERT_DIR"):
        return f"SSL_CERT_DIR ({os.environ['SSL_CERT_DIR']})"
    return "the system trust store (truststore)" if _truststore_available() else "certifi's bundle"


def ssl_context() -> ssl.SSLContext:
    """The context every outside HTTPS call verifies with (see the module docstring)."""
    return _context(os.environ.get("SSL_CERT_FILE") or None, os.environ.get("SSL_CERT_DIR") or None)


@functools.cache
def _context(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    # Cached per setting: building a context reads the CA files (tens of milliseconds).
    if cafile or capath:
        return ssl.create_default_context(cafile=cafile, capath=capath)
    if _truststore_available():
        truststore = importlib.import_module("truststore")  # optional: not every install has it
        context: ssl.SSLContext = truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        return context
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


@functools.cache
def _truststore_available() -> bool:
    return importlib.util.find_spec("truststore") is not None


def client_options() -> dict[str, Any]:
    """Keyword arguments for ``httpx.Client`` / ``httpx.AsyncClient``: the environment's proxies
    (``trust_env``), the certificates above, and loopback always direct."""
    return {
        "trust_env": True,
        "verify": ssl_context(),
        "mounts": dict.fromkeys(LOOPBACK_PATTERNS),
    }


def sync_client(**options: Any) -> httpx.Client:
    """An ``httpx.Client`` for an outside call (``options`` as for httpx: timeout, redirects...)."""
    return httpx.Client(**client_options(), **options)


def environment_mounts(
    proxy_transport: Callable[[str], httpx.AsyncBaseTransport],
) -> dict[str, httpx.AsyncBaseTransport | None]:
    """httpx mounts for an ``AsyncClient`` made with its own transport (which makes httpx read no
    proxies): the environment's proxies (``urllib.request.getproxies``: the variables, and the
    system settings on Windows and macOS) through ``proxy_transport(url)``, ``NO_PROXY`` hosts
    and loopback direct (``None``: the client's own transport), with httpx's rules for them."""
    proxies = urllib.request.getproxies()
    mounts: dict[str, httpx.AsyncBaseTransport | None] = {}
    bypass = [host.strip() for host in proxies.get("no", "").split(",") if host.strip()]
    if "*" not in bypass:
        for scheme in ("all", "http", "https"):  # httpx picks the most specific pattern
            url = proxies.get(scheme)
            if url:
                mounts[f"{scheme}://"] = proxy_transport(url if "://" in url else f"http://{url}")
        for host in bypass:
            if "://" in host:
                mounts[host] = None
            elif _is_ip(host) or host.lower() == "localhost":
                mounts[f"all://[{host}]" if ":" in host else f"all://{host}"] = None
            else:
                mounts[f"all://*{host}"] = None
    mounts.update(dict.fromkeys(LOOPBACK_PATTERNS))
    return mounts


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
