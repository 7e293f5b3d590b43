"""Names of a package loaded from its modules on first use (PEP 562): a package's public API
without importing what stands behind every name at ``import`` time (the run engine and the
model backends cost a start-up that lists runs or shows the window a few hundred ms)."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from importlib import import_module


def lazy_attribute(package: str, table: Mapping[str, str], namespace: MutableMapping[str, object], name: str) -> object:
    """``name`` of ``package``, read from its module ``table[name]`` (a submodule's name) and
    kept in ``namespace`` (the package's globals), so later uses are plain attribute reads.
    For a package's ``__getattr__``; AttributeError for a name the table does not have."""
    try:
        module = table[name]
    except KeyError:
        raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
    value = getattr(import_module(f"{package}.{module}"), name)
    namespace[name] = value
    return value
