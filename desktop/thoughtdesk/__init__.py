"""ThoughtDesk: a local desktop workbench for chain-of-thought reasoning data."""

from __future__ import annotations

__version__: str  # set by __getattr__ on first use (typing is not imported: a start does not need it)


def __getattr__(name: str) -> str:
    """``__version__``, read from the package metadata when first asked: importlib.metadata costs
    a command that does not show the version (every one but ``--version``) a tenth of a second."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        value = version("thoughtdesk")
    except PackageNotFoundError:  # running from a source tree that was not installed
        value = "0.1.0"
    globals()["__version__"] = value
    return value
