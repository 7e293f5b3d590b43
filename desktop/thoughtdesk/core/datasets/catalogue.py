"""The dataset catalogue's records: what each supported dataset is and where it comes from.

:class:`DatasetInfo` is plain metadata (shown by the UI and ``thoughtdesk datasets``), defined
by the ``*_info`` modules; the family modules (``math_word``, ``medical``, ``commonsense``,
``science``) pair each with the functions that read its files (``LOADERS``), and
:mod:`~thoughtdesk.core.datasets.registry` collects them: look datasets up there.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from thoughtdesk.core.errors import ThoughtDeskError


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One file of a dataset at its public source URL.

    ``path`` is where the file goes inside the dataset's cache folder (and the name the loader
    recognises); ``size`` is in bytes; ``sha256`` is the hex digest of the exact bytes.
    """

    url: str
    path: str
    size: int | None = None
    sha256: str | None = None
    split: str | None = None


@dataclass(frozen=True, slots=True)
class DatasetInfo:
    """Metadata of one dataset as shown in the UI and CLI.

    ``file_patterns`` recognise its files: ``(glob, split)`` pairs matched against a file's path
    relative to the folder given (a pattern also matches at any depth), in order of preference.
    ``file_format`` describes the expected format in words, for error messages.
    """

    name: str
    title: str
    description: str
    citation: str
    licence: str
    homepage: str
    answer_type: str
    file_format: str
    splits: tuple[str, ...]
    file_patterns: tuple[tuple[str, str], ...]
    sources: tuple[SourceFile, ...] = ()
    reference_cot: str = ""
    family: str = ""
    notes: str = ""
    options: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        """All of the metadata as plain text, one item a line (the UI and ``datasets NAME``)."""
        parts = [
            f"{self.title} ({self.name})",
            "",
            self.description,
            "",
            f"Answer type: {self.answer_type}",
            f"Licence: {self.licence}",
            f"Homepage: {self.homepage}",
        ]
        if self.reference_cot:
            parts.append(f"Reference CoTs: {self.reference_cot}")
        parts.append(f"Splits: {', '.join(self.splits)}")
        parts.append(f"File format: {self.file_format}")
        if self.sources:
            parts.append("Source URLs:")
            parts.extend(f"  {source.url}" for source in self.sources)
        if self.options:
            parts.append("Options: " + "; ".join(f"{k}: {v}" for k, v in self.options.items()))
        if self.notes:
            parts.append(f"Notes: {self.notes}")
        parts += ["", "Citation:", self.citation]
        return "\n".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict of all fields (for ``thoughtdesk datasets --json``)."""
        data = asdict(self)
        data["file_patterns"] = [list(pair) for pair in self.file_patterns]
        return data


def _unknown_message(name: str, known: list[str]) -> str:
    return f"unknown dataset {name!r}; known datasets: {', '.join(known)}"


class UnknownDatasetError(ThoughtDeskError, KeyError):
    """A dataset name that is not in the catalogue."""

    def __init__(self, name: str, known: list[str]) -> None:
        self.name = name
        self.known = known
        super().__init__(_unknown_message(name, known))

    def __str__(self) -> str:
        return _unknown_message(self.name, self.known)


GITHUB_RAW = "https://raw.githubusercontent.com"


def github_file(
    repo: str, commit: str, path_in_repo: str, local: str, size: int, sha256: str, split: str | None = None
) -> SourceFile:
    """A :class:`SourceFile` served by raw.githubusercontent.com at a pinned commit."""
    return SourceFile(f"{GITHUB_RAW}/{repo}/{commit}/{path_in_repo}", local, size, sha256, split)
