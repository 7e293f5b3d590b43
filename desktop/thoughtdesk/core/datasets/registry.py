"""The datasets ThoughtDesk knows, by name: the one place that lists the family modules.

Each family module (``math_word``, ``medical``, ``commonsense``, ``science``) exports its
datasets as data, ``LOADERS``: a tuple of :class:`~thoughtdesk.core.datasets.loading.DatasetLoader`
(metadata + read + sniff). :func:`loaders` collects them; everything that looks a dataset up by
name goes through it. Nothing registers itself at import.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from thoughtdesk.core.datasets.catalogue import DatasetInfo, UnknownDatasetError
from thoughtdesk.core.datasets.loading import DatasetLoader, detect, find_files, read_dataset
from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.library.records import Sample


@functools.cache
def loaders() -> dict[str, DatasetLoader]:
    """All loaders by dataset name, in catalogue order (family by family)."""
    # Imported on first use rather than with this module: the families (and xml.etree) take
    # tens of milliseconds to import, which start-up need not pay.
    from thoughtdesk.core.datasets import commonsense, math_word, medical, science

    families = (commonsense, math_word, medical, science)
    return {loader.info.name: loader for family in families for loader in family.LOADERS}


def loader_for(name: str) -> DatasetLoader:
    """The loader of dataset ``name``; raises :class:`UnknownDatasetError` listing known names."""
    registry = loaders()
    try:
        return registry[name]
    except KeyError:
        raise UnknownDatasetError(name, sorted(registry)) from None


def catalogue() -> list[DatasetInfo]:
    """Every supported dataset's metadata, sorted by name."""
    return sorted((loader.info for loader in loaders().values()), key=lambda info: info.name)


def get_dataset(name: str) -> DatasetInfo:
    """The metadata of dataset ``name``; raises :class:`UnknownDatasetError` listing known names."""
    return loader_for(name).info


def dataset_files(name: str, path: str | Path) -> list[tuple[str, Path]]:
    """The ``(split, file)`` pairs of dataset ``name`` in ``path`` (a file or a folder).

    A folder is searched a few levels deep; for each split the file matching the earliest
    pattern wins. Raises :class:`DataFileError` when nothing fits or a file has the wrong format.
    """
    return find_files(loader_for(name), path)


def load_dataset(
    name: str,
    path: str | Path,
    *,
    splits: Iterable[str] | None = None,
    on_error: str = "raise",
    errors: list[DataFileError] | None = None,
    **options: Any,
) -> Iterator[tuple[str, Sample]]:
    """Yield ``(split, Sample)`` for dataset ``name`` read from its original files in ``path``.

    ``path`` is one file or a folder holding the files (as downloaded or unpacked). ``splits``
    limits the splits read. ``on_error="raise"`` stops at the first bad record with a
    :class:`DataFileError` (file, line, field); ``"skip"`` appends it to ``errors`` and goes on.
    Dataset-specific ``options`` (see ``DatasetInfo.options``), e.g. ``ecqa=PATH`` for
    commonsense_qa or ``facts=PATH`` for worldtree.
    """
    # A generator, as it always was: nothing is checked or read until the first item is asked for.
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', not {on_error!r}")
    loader = loader_for(name)
    yield from read_dataset(loader, path, splits=splits, on_error=on_error, errors=errors, options=options)


def detect_dataset(path: str | Path) -> str | None:
    """The dataset a file or folder holds, or ``None`` when unknown or ambiguous."""
    return detect(loaders().values(), path)
