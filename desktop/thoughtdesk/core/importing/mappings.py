"""Column mappings saved by name for reuse (generic import), in one JSON file per user.

The file is ``<user config dir>/mappings.json``: ``{name: ColumnMapping as a JSON object}``.
It is rewritten atomically, so a crash never leaves it half written.
"""

from __future__ import annotations

import json
from pathlib import Path

from thoughtdesk.core.datasets.generic import ColumnMapping, MappingError, parse_mapping
from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.files import write_json_atomically
from thoughtdesk.core.paths import user_config_dir


def mappings_file() -> Path:
    """The JSON file holding the saved mappings (it may not exist yet)."""
    return user_config_dir() / "mappings.json"


class SavedMappings:
    """Named column mappings in a JSON file (default :func:`mappings_file`)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or mappings_file()

    def _read(self) -> dict[str, dict]:
        if not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise DataFileError(
                self.path,
                f"malformed JSON: {error.msg}",
                line=error.lineno,
                hint="fix or delete the file to reset the saved mappings",
            ) from None
        if not isinstance(data, dict):
            raise DataFileError(self.path, "expected a JSON object of saved mappings")
        return data

    def names(self) -> list[str]:
        """The saved mappings' names, sorted."""
        return sorted(self._read(), key=str.casefold)

    def get(self, name: str) -> ColumnMapping:
        """The mapping saved as ``name``; ``KeyError`` when absent."""
        data = self._read()[name]
        try:
            return ColumnMapping(**data)
        except (TypeError, ValueError) as error:
            raise DataFileError(self.path, f"saved mapping {name!r} is invalid: {error}") from None

    def save(self, name: str, mapping: ColumnMapping) -> None:
        """Save (or overwrite) ``mapping`` as ``name``."""
        name = name.strip()
        if not name:
            raise ValueError("a saved mapping needs a name")
        data = self._read()
        data[name] = json.loads(mapping.to_json())
        write_json_atomically(self.path, data)

    def delete(self, name: str) -> None:
        """Forget the mapping saved as ``name`` (nothing happens when there is none)."""
        data = self._read()
        if data.pop(name, None) is not None:
            write_json_atomically(self.path, data)


def resolve_mapping(text: str, store: SavedMappings | None = None) -> ColumnMapping:
    """A ``--map`` value: ``field=column,...`` (see ``parse_mapping``) or a saved mapping's name.

    Raises :class:`MappingError` for bad mapping text or an unknown name (listing the saved ones).
    """
    if "=" in text:
        return parse_mapping(text)
    store = store or SavedMappings()
    name = text.strip()
    try:
        return store.get(name)
    except KeyError:
        known = ", ".join(store.names()) or "none yet"
        raise MappingError(
            f"no saved mapping named {name!r}: give field=column,... or the name "
            f"of a saved mapping ({known}; kept in {store.path})"
        ) from None
