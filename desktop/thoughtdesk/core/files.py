"""Writing small files so that a crash never leaves half of one."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_text_atomically(path: str | Path, text: str, *, private: bool = False) -> Path:
    """Write ``text`` (UTF-8) to a temporary file beside ``path``, then rename it into place.

    ``private`` makes the file readable by its owner only (0600), for key material.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        if private:
            os.chmod(temporary, 0o600)
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def write_json_atomically(path: str | Path, document: Any, *, indent: int = 2) -> Path:
    """``document`` as indented JSON (non-ASCII kept) with a final newline, written atomically."""
    return write_text_atomically(path, json.dumps(document, indent=indent, ensure_ascii=False) + "\n")
