"""The model library: local GGUF models by name, with what their headers say, in one JSON file.

The registry is ``models.json`` in the user data folder (:func:`~thoughtdesk.core.paths.
model_registry_file`). Each entry keeps the file's path, size, modification time, SHA-256 and
the header facts (:class:`~thoughtdesk.core.models.gguf.ModelFacts`), so listing never opens a
model file: only a ``stat`` per entry tells whether the file is still there (``missing``) and
unchanged (``changed`` when its size or time differ).

Adding is all or nothing: every file's header is read first, so one bad file stops the whole
``add`` with one line naming it and nothing is registered; the registry is written once, at the
end, atomically, under a lock file beside it (``models.json.lock``), so two processes (the app
and the command line) changing the library at once lose nothing. The same file added twice (by path, or the same bytes by SHA-256) is one entry;
a registered file that went missing and is added again from its new place keeps its entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal

from thoughtdesk.core.errors import DataFileError, ThoughtDeskError
from thoughtdesk.core.files import write_json_atomically
from thoughtdesk.core.models.gguf import ModelFacts, read_model_facts
from thoughtdesk.core.paths import model_registry_file, user_models_dir

#: progress(done_bytes, total_bytes, the file being hashed or copied)
Progress = Callable[[int, int, Path], None]
Status = Literal["ok", "missing", "changed"]
_CHUNK = 1 << 20
_FORMAT = 1
#: How long a change waits for another process's change to the registry (which takes milliseconds).
LOCK_TIMEOUT = 30.0
#: A name may not look like a path or a provider prefix (``llamacpp:NAME`` resolves it).
_BAD_NAME = re.compile(r"[/\\:]|^\s|\s$|^\.")


class ModelRegistryError(ThoughtDeskError):
    """A registry operation that cannot be done (an unknown name, a name taken, nothing to add)."""


@dataclass(frozen=True, slots=True)
class ModelEntry:
    """One registered model: where it is, what it is, and what its header said when added."""

    name: str
    path: str
    size: int
    mtime_ns: int
    sha256: str
    added: str
    copied: bool  # True: the file was copied into the models folder by ``add --copy``
    architecture: str
    context_length: int | None
    quantization: str | None
    file_type: int | None
    parameter_count: int
    chat_template: bool
    thinks: bool
    license: str | None
    model_name: str | None  # general.name
    block_count: int | None
    kv_bytes_per_token: int | None
    vocab_size: int | None = None  # None: added before it was recorded (remove and add the file again to fill it)

    def status(self) -> Status:
        """``missing`` (no file at the path), ``changed`` (another size or time) or ``ok``: one ``stat``."""
        try:
            info = os.stat(self.path)
        except OSError:
            return "missing"
        if info.st_size != self.size or info.st_mtime_ns != self.mtime_ns:
            return "changed"
        return "ok"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> ModelEntry:
        known = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in record.items() if key in known})


@dataclass(slots=True)
class AddResult:
    """What ``add`` did with one file: ``added``, ``known`` (already registered: one entry) or
    ``moved`` (a missing entry found again at this path)."""

    entry: ModelEntry
    outcome: Literal["added", "known", "moved"]
    source: Path


@dataclass(slots=True)
class _Pending:
    source: Path
    facts: ModelFacts
    name: str | None = None
    results: list[AddResult] = field(default_factory=list)


def sha256_of(path: Path, report: Callable[[int], None] | None = None) -> str:
    """The SHA-256 of ``path`` (hex), read in 1 MiB blocks; ``report(bytes_done)`` after each."""
    digest = hashlib.sha256()
    done = 0
    with open(path, "rb") as handle:
        buffer = bytearray(_CHUNK)
        view = memoryview(buffer)
        while count := handle.readinto(buffer):
            digest.update(view[:count])
            done += count
            if report:
                report(done)
    return digest.hexdigest()


#: llama.cpp's split models: ``NAME-00001-of-00003.gguf``; the first part loads the others.
_SPLIT = re.compile(r"-(\d{5})-of-(\d{5})\.gguf$", re.IGNORECASE)


def gguf_files(path: Path) -> list[Path]:
    """``path`` itself, or every ``*.gguf`` under the folder ``path`` (sorted, hidden ones and
    partial downloads left out; of a split model only its first part, which loads the others)."""
    if path.is_dir():
        found = [
            file
            for file in sorted(path.rglob("*"))
            if file.suffix.lower() == ".gguf"
            and file.is_file()
            and not file.name.startswith(".")
            and not _later_split_part(file)
        ]
        if not found:
            raise ModelRegistryError(f"{path}: no .gguf files in this folder or below it")
        return found
    if not path.exists():
        raise ModelRegistryError(f"{path}: no such file or folder")
    if _later_split_part(path):
        match = _SPLIT.search(path.name)
        assert match is not None
        first = _SPLIT.sub(f"-00001-of-{match.group(2)}.gguf", path.name)
        raise ModelRegistryError(
            f"{path}: this is part {int(match.group(1))} of {int(match.group(2))} of a split model; add its first "
            f"part ({first}), which llama.cpp loads the others from"
        )
    return [path]


def _later_split_part(path: Path) -> bool:
    match = _SPLIT.search(path.name)
    return match is not None and int(match.group(1)) > 1


class ModelRegistry:
    """The registered models (``models.json``); every method reads the file afresh, so two
    processes see each other's changes."""

    def __init__(self, file: Path | None = None, models_dir: Path | None = None) -> None:
        self.file = file or model_registry_file()
        self.models_dir = models_dir or user_models_dir()

    # --- reading ---------------------------------------------------------------------------

    def entries(self) -> list[ModelEntry]:
        """Every entry, in the order added; never opens a model file."""
        try:
            text = self.file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        try:
            document = json.loads(text)
            return [ModelEntry.from_json(record) for record in document["models"]]
        except (ValueError, KeyError, TypeError) as error:
            raise DataFileError(
                self.file,
                f"the model registry cannot be read ({type(error).__name__}: {error})",
                hint="move the file away and add the models again with `thoughtdesk models add`",
            ) from None

    def find(self, name: str) -> ModelEntry | None:
        return next((entry for entry in self.entries() if entry.name == name), None)

    def get(self, name: str) -> ModelEntry:
        entry = self.find(name)
        if entry is None:
            raise ModelRegistryError(f"no registered model is named {name!r}; {self.names_hint()}")
        return entry

    def names_hint(self) -> str:
        names = [entry.name for entry in self.entries()]
        if not names:
            return "no model is registered yet (`thoughtdesk models add FILE.gguf`)"
        shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
        return f"registered: {shown} (`thoughtdesk models list`)"

    # --- changing --------------------------------------------------------------------------

    def add(
        self,
        path: str | Path,
        *,
        name: str | None = None,
        copy: bool = False,
        progress: Progress | None = None,
    ) -> list[AddResult]:
        """Register the GGUF file ``path``, or every GGUF under the folder ``path``.

        ``copy`` copies each file into the models folder first (the entry then points at the
        copy); otherwise the entry points at the file where it is. ``name`` names a single file
        (default: the file's stem, made unique with ``-2``, ``-3``...). Every header is read
        before anything is copied or registered: a bad file raises its
        :class:`~thoughtdesk.core.models.gguf.GgufError` and nothing changes."""
        files = gguf_files(Path(path).expanduser())
        if name is not None:
            if len(files) > 1:
                raise ModelRegistryError(f"--name names one model; {path} holds {len(files)} GGUF files")
            check_name(name)
        pending = [_Pending(file.resolve(), read_model_facts(file)) for file in files]
        entries = self.entries()
        if name is not None and any(entry.name == name and entry.path != str(pending[0].source) for entry in entries):
            raise ModelRegistryError(f"the name {name!r} is taken; choose another with --name")
        total = sum(item.source.stat().st_size for item in pending)
        done = 0
        results: list[AddResult] = []
        original = {entry.name for entry in entries}  # the names before this call
        made: list[Path] = []  # copies made by this call, removed again if it fails
        try:
            for item in pending:
                size = item.source.stat().st_size

                def report(count: int, base: int = done, source: Path = item.source) -> None:
                    if progress:
                        progress(base + count, total, source)

                result = self._add_one(entries, item, name, copy, report, made)
                done += size
                if progress:
                    progress(done, total, item.source)
                results.append(result)
            if any(result.outcome != "known" for result in results):
                results = self._merge(results, original)
        except BaseException:
            for copied in made:
                copied.unlink(missing_ok=True)
            raise
        return results

    def _merge(self, results: list[AddResult], original: set[str]) -> list[AddResult]:
        """Write this call's changes into the registry as it is now (another process may have
        changed it while files were hashed): an entry that existed before is replaced by name; a
        new one is appended, renamed when another process took its name meanwhile (or dropped
        when that process registered the same bytes)."""
        with self.locked():
            return self._merge_locked(results, original)

    def _merge_locked(self, results: list[AddResult], original: set[str]) -> list[AddResult]:
        fresh = self.entries()
        merged: list[AddResult] = []
        for result in results:
            entry = result.entry
            if result.outcome != "known" or entry.name not in original:
                names = [other.name for other in fresh]
                same = next((other for other in fresh if other.sha256 == entry.sha256), None)
                if entry.name in original and entry.name in names:
                    fresh[names.index(entry.name)] = entry
                elif same is not None and same.name not in original:
                    result = AddResult(same, "known", result.source)  # registered meanwhile elsewhere
                else:
                    if entry.name in names:
                        entry = replace(entry, name=_unique_name(entry.name, set(names)))
                    fresh.append(entry)
                    result = AddResult(entry, result.outcome, result.source)
            merged.append(result)
        self._save(fresh)
        return merged

    def _add_one(
        self,
        entries: list[ModelEntry],
        item: _Pending,
        name: str | None,
        copy: bool,
        report: Callable[[int], None],
        made: list[Path],
    ) -> AddResult:
        source = item.source
        info = source.stat()
        for entry in entries:  # this very file, unchanged: no need to hash it again
            if entry.path == str(source) and entry.size == info.st_size and entry.mtime_ns == info.st_mtime_ns:
                return AddResult(entry, "known", source)
        if copy and any(entry.size == info.st_size and entry.status() == "ok" for entry in entries):
            # Maybe a copy of a registered model (same size): compare checksums before copying.
            digest = sha256_of(source, report)
            known = next((entry for entry in entries if entry.sha256 == digest and entry.status() == "ok"), None)
            if known is not None:
                return AddResult(known, "known", source)
        if copy:
            target, digest = self._copy_in(source, report, made)
        else:
            target, digest = source, sha256_of(source, report)
        stat = target.stat()
        for index, entry in enumerate(entries):
            same_path = entry.path == str(target)
            if entry.sha256 == digest and (same_path or entry.status() != "ok"):
                # The same bytes at its registered place, or the registered file gone: one entry.
                moved = replace(entry, path=str(target), size=stat.st_size, mtime_ns=stat.st_mtime_ns)
                entries[index] = moved
                return AddResult(moved, "known" if same_path else "moved", source)
            if entry.sha256 == digest:
                return AddResult(entry, "known", source)
            if same_path:  # the file at this path changed: its entry is refreshed
                refreshed = _entry(entry.name, target, stat, digest, item.facts, copied=entry.copied)
                entries[index] = refreshed
                return AddResult(refreshed, "added", source)
        chosen = name or _unique_name(_default_name(source), {entry.name for entry in entries})
        entry = _entry(chosen, target, stat, digest, item.facts, copied=copy)
        entries.append(entry)
        return AddResult(entry, "added", source)

    def _copy_in(self, source: Path, report: Callable[[int], None], made: list[Path]) -> tuple[Path, str]:
        """Copy ``source`` into the models folder (through a ``.part`` file), hashing as it goes."""
        self.models_dir.mkdir(parents=True, exist_ok=True)
        target = self.models_dir / source.name
        counter = 2
        while target.exists():
            if target.resolve() == source:
                return target, sha256_of(target, report)
            target = self.models_dir / f"{source.stem}-{counter}{source.suffix}"
            counter += 1
        part = target.with_name(target.name + ".part")
        digest = hashlib.sha256()
        done = 0
        try:
            with open(source, "rb") as reader, open(part, "wb") as writer:
                while block := reader.read(_CHUNK):
                    writer.write(block)
                    digest.update(block)
                    done += len(block)
                    report(done)
            shutil.copystat(source, part)
            os.replace(part, target)
        except BaseException:
            part.unlink(missing_ok=True)
            raise
        made.append(target)
        return target, digest.hexdigest()

    def remove(self, name: str) -> ModelEntry:
        """Unregister ``name`` (the file stays where it is); return the entry removed."""
        with self.locked():
            entries = self.entries()
            entry = self.get(name)
            self._save([other for other in entries if other.name != name])
        return entry

    def rename(self, name: str, new_name: str) -> ModelEntry:
        check_name(new_name)
        with self.locked():
            entries = self.entries()
            self.get(name)
            if any(entry.name == new_name for entry in entries):
                raise ModelRegistryError(f"the name {new_name!r} is taken")
            renamed = [replace(entry, name=new_name) if entry.name == name else entry for entry in entries]
            self._save(renamed)
        return next(entry for entry in renamed if entry.name == new_name)

    def register_verified(self, path: Path, sha256: str, *, name: str | None = None, copied: bool = True) -> ModelEntry:
        """Register a file whose SHA-256 is already known (a finished download): its header is
        read, nothing is hashed again. A file already registered (by checksum) keeps its entry."""
        facts = read_model_facts(path)
        with self.locked():
            entries = self.entries()
            for entry in entries:
                if entry.sha256 == sha256 and entry.status() == "ok":
                    return entry
            if name is not None:
                check_name(name)
                if any(entry.name == name for entry in entries):
                    raise ModelRegistryError(f"the name {name!r} is taken; choose another with --name")
            chosen = name or _unique_name(_default_name(path), {entry.name for entry in entries})
            entry = _entry(chosen, path.resolve(), path.stat(), sha256, facts, copied=copied)
            entries.append(entry)
            self._save(entries)
        return entry

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold ``models.json.lock`` (an OS file lock: released when the process ends, even
        killed) around a read-modify-write of the registry. Reading alone needs no lock: the file
        is replaced atomically."""
        import filelock  # here: listing (the command line's `models list`) needs no lock, and it costs ~30 ms

        lock_file = self.file.with_name(self.file.name + ".lock")
        try:
            lock_file.parent.mkdir(parents=True, exist_ok=True)
            with filelock.FileLock(lock_file, timeout=LOCK_TIMEOUT):
                yield
        except filelock.Timeout:
            raise ModelRegistryError(
                f"{lock_file}: another ThoughtDesk process has been changing the model library for over "
                f"{LOCK_TIMEOUT:.0f} s; try again when it is done"
            ) from None

    def _save(self, entries: Iterable[ModelEntry]) -> None:
        write_json_atomically(self.file, {"format": _FORMAT, "models": [entry.to_json() for entry in entries]})


def check_name(name: str) -> None:
    if not name or _BAD_NAME.search(name):
        raise ModelRegistryError(
            f"{name!r} cannot be a model's name: it may not be empty, start with a dot or a space, or contain / \\ or :"
        )


def _default_name(path: Path) -> str:
    stem = path.stem.strip().lstrip(".") or "model"
    return re.sub(r"[/\\:]", "-", stem)


def _unique_name(base: str, taken: set[str]) -> str:
    if base not in taken:
        return base
    counter = 2
    while f"{base}-{counter}" in taken:
        counter += 1
    return f"{base}-{counter}"


def _entry(name: str, path: Path, stat: os.stat_result, digest: str, facts: ModelFacts, *, copied: bool) -> ModelEntry:
    return ModelEntry(
        name=name,
        path=str(path),
        size=stat.st_size,
        mtime_ns=stat.st_mtime_ns,
        sha256=digest,
        added=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        copied=copied,
        architecture=facts.architecture,
        context_length=facts.context_length,
        quantization=facts.quantization,
        file_type=facts.file_type,
        parameter_count=facts.parameter_count,
        chat_template=facts.chat_template,
        thinks=facts.thinks,
        license=facts.license,
        model_name=facts.name,
        block_count=facts.block_count,
        kv_bytes_per_token=facts.kv_bytes_per_token,
        vocab_size=facts.vocab_size,
    )


def resolve_model_name(text: str, registry: ModelRegistry | None = None) -> str | None:
    """The path of the registered model named ``text``, or None when no entry has that name."""
    entry = (registry or ModelRegistry()).find(text)
    return entry.path if entry else None


def resolve_local_model(text: str, registry: ModelRegistry | None = None) -> str:
    """What ``llamacpp:TEXT`` names: an existing file as it is, else the file of the registered
    model named ``TEXT``, else ``TEXT`` as a path when it looks like one (a missing file is then
    reported where model files are checked). A bare word that is neither raises
    :class:`ModelRegistryError` saying so and listing the registered names."""
    path = Path(text).expanduser()
    if path.exists():
        return str(path)
    registry = registry or ModelRegistry()
    entry = registry.find(text)
    if entry is not None:
        if entry.status() == "missing":
            raise ModelRegistryError(
                f"llamacpp:{text}: the registered model's file is missing ({entry.path}); add it again from "
                f"its new place with `thoughtdesk models add PATH`, or remove it with `thoughtdesk models remove {text}`"
            )
        return entry.path
    if _looks_like_path(text):
        return str(path)
    raise ModelRegistryError(
        f"llamacpp:{text}: no registered model is named {text!r} and there is no such file; "
        f"{registry.names_hint()}, or give the path of a .gguf file"
    )


def _looks_like_path(text: str) -> bool:
    return (
        text.lower().endswith(".gguf") or any(sep in text for sep in ("/", "\\", os.sep)) or text.startswith(("~", "."))
    )
