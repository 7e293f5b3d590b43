"""Where the user's prompt fragments live between sessions: an overlay over the built-in ones.

The fragment library a user sees is the built-in fragments (``resources/fragments.json``) with
the user's changes applied. Only the changes are saved, in ``<user config folder>/fragments.json``
(``~/.config/ThoughtDesk/fragments.json`` on Linux; ``THOUGHTDESK_CONFIG_DIR`` overrides the
folder), as ThoughtDesk fragments JSON with one extra list:

- ``fragments``: every fragment that is new or differs from the built-in one with its kind and key;
- ``hidden_builtin``: ``[{"kind", "key"}]`` of built-in fragments the user deleted.

So built-in fragments stay available (a new ThoughtDesk version's defaults appear; a deleted one
comes back with :meth:`FragmentStore.restore_builtin`), and the user's file stays small and
readable. Fragments are not kept in the library database because they are the user's tools,
shared by every library; the texts used for a CoT are stored with the CoT itself.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.files import write_json_atomically
from thoughtdesk.core.generation.fragments import (
    ALL_KINDS,
    FORMAT_NAME,
    FORMAT_VERSION,
    Fragment,
    FragmentKind,
    FragmentLibrary,
)
from thoughtdesk.core.paths import user_config_dir

USER_FRAGMENTS_FILENAME = "fragments.json"


def default_user_fragments_path() -> Path:
    """The user's fragment overlay file in the settings folder."""
    return user_config_dir() / USER_FRAGMENTS_FILENAME


def replace_contents(library: FragmentLibrary, fragments: Iterable[Fragment]) -> None:
    """Make ``library`` hold exactly ``fragments`` in this order (used by undo/redo snapshots)."""
    wanted = list(fragments)
    for fragment in list(library):
        library.delete(fragment.kind, fragment.key)
    for fragment in wanted:
        library.add(fragment)


@dataclass(slots=True)
class FragmentStore:
    """Loads the built-in fragments with the user's overlay applied, and saves the overlay.

    ``unreadable`` holds the error when the user file could not be read at load time; the
    library then holds the built-in fragments, and the next :meth:`save` first moves the bad file
    aside (``fragments.json.unreadable-<time>``) so nothing the user wrote is overwritten.
    """

    path: Path = field(default_factory=default_user_fragments_path)
    builtin: FragmentLibrary = field(default_factory=FragmentLibrary.defaults)
    unreadable: DataFileError | None = None

    def load(self) -> FragmentLibrary:
        """A new library: the built-in fragments with the saved changes applied."""
        library = FragmentLibrary(self.builtin)
        self.unreadable = None
        if not self.path.exists():
            return library
        try:
            changed, hidden = _read_overlay(self.path)
        except DataFileError as error:
            self.unreadable = error
            return library
        for kind, key in hidden:
            if (kind, key) in library:
                library.delete(kind, key)
        for fragment in changed:
            if (fragment.kind, fragment.key) in library:
                library.delete(fragment.kind, fragment.key)
            library.add(fragment)
        # Keep built-in order for the fragments the overlay replaced: rebuild in that order.
        order = {(f.kind, f.key): index for index, f in enumerate(self.builtin)}
        ordered = sorted(library, key=lambda f: order.get((f.kind, f.key), len(order)))
        replace_contents(library, ordered)
        return library

    def save(self, library: FragmentLibrary) -> None:
        """Write the differences between ``library`` and the built-in fragments atomically."""
        if self.unreadable is not None and self.path.exists():
            aside = self.path.with_name(f"{self.path.name}.unreadable-{time.strftime('%Y%m%d-%H%M%S')}")
            os.replace(self.path, aside)
            self.unreadable = None
        present = {(f.kind, f.key) for f in library}
        changed = [f for f in library if not _same_as_builtin(self.builtin, f)]
        hidden = [{"kind": f.kind, "key": f.key} for f in self.builtin if (f.kind, f.key) not in present]
        document: dict[str, Any] = {
            "format": FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "about": "Your changes to ThoughtDesk's built-in prompt fragments (edit them in the app).",
            "fragments": [f.to_json() for f in changed],
            "hidden_builtin": hidden,
        }
        _write_atomically(self.path, document)

    def is_builtin(self, fragment: Fragment) -> bool:
        """True if ``fragment`` is exactly a built-in one (not edited by the user)."""
        return _same_as_builtin(self.builtin, fragment)

    def restore_builtin(self, library: FragmentLibrary) -> list[Fragment]:
        """Put back built-in fragments that were deleted (edited ones are left as edited)."""
        restored = []
        for fragment in self.builtin:
            if (fragment.kind, fragment.key) not in library:
                restored.append(library.add(fragment))
        return restored


def _same_as_builtin(builtin: FragmentLibrary, fragment: Fragment) -> bool:
    if (fragment.kind, fragment.key) not in builtin:
        return False
    return builtin.get(fragment.kind, fragment.key) == fragment


def _read_overlay(path: Path) -> tuple[list[Fragment], list[tuple[FragmentKind, str]]]:
    """The changed fragments and the hidden built-in keys of a user overlay file."""
    changed = list(FragmentLibrary.load(path))
    # FragmentLibrary.load has validated the JSON already; only the extra list is read here.
    document = json.loads(path.read_text(encoding="utf-8"))
    hidden_entries = document.get("hidden_builtin", [])
    if not isinstance(hidden_entries, list):
        raise DataFileError(path, '\'hidden_builtin\' must be a list of {"kind", "key"}')
    hidden: list[tuple[FragmentKind, str]] = []
    for index, entry in enumerate(hidden_entries, 1):
        kind = entry.get("kind") if isinstance(entry, dict) else None
        key = entry.get("key") if isinstance(entry, dict) else None
        if kind not in ALL_KINDS or not isinstance(key, str):
            raise DataFileError(
                path, 'expected {"kind", "key"} with a known kind', where=f"hidden_builtin entry {index}"
            )
        hidden.append((kind, key))
    return changed, hidden


def _write_atomically(path: Path, document: dict[str, Any]) -> None:
    write_json_atomically(path, document)
