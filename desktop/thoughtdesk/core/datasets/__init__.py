"""Dataset library: loaders for each supported dataset's original files, downloads, generic import.

Public API::

    catalogue() -> list[DatasetInfo]
    get_dataset(name) -> DatasetInfo
    load_dataset(name, path, *, splits=None, on_error="raise", errors=None, **options)
        -> Iterator[tuple[str, Sample]]
    detect_dataset(path) -> str | None
    download_dataset(info, cache_dir, *, progress=None, cancel=None, client=None) -> list[Path]
    ColumnMapping, parse_mapping, preview, load_generic   (generic JSON/JSONL/CSV/TSV import)
"""

from thoughtdesk.core.datasets.catalogue import DatasetInfo, SourceFile, UnknownDatasetError
from thoughtdesk.core.datasets.download import DownloadError, dataset_cache_dir, download_dataset
from thoughtdesk.core.datasets.generic import ColumnMapping, MappingError, load_generic, parse_mapping, preview

# After the submodule ``catalogue`` was imported (above), so this package's ``catalogue``
# attribute is the function: ``from thoughtdesk.core.datasets import catalogue`` means it.
from thoughtdesk.core.datasets.registry import (
    catalogue,
    dataset_files,
    detect_dataset,
    get_dataset,
    load_dataset,
)

__all__ = [
    "DatasetInfo",
    "SourceFile",
    "UnknownDatasetError",
    "catalogue",
    "get_dataset",
    "dataset_files",
    "detect_dataset",
    "load_dataset",
    "DownloadError",
    "dataset_cache_dir",
    "download_dataset",
    "ColumnMapping",
    "MappingError",
    "load_generic",
    "parse_mapping",
    "preview",
]
