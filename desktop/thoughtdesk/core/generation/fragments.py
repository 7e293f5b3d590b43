"""The prompt fragment library: instructions, CoT triggers and answer-extraction prompts.

A fragment is identified by its kind and key (ThoughtSource reuses keys across kinds:
``kojima-01`` is both a CoT trigger and an answer extraction). The defaults ship in
``resources/fragments.json``; they include ThoughtSource's keys with their texts, so a
ThoughtSource collection that names ``qa-01`` or ``lievin-01`` resolves. ThoughtSource's own
``fragments.json`` (``{"version", "instructions", "cot_triggers", "answer_extractions"}``) and
its older ``templates.json`` (``cot-triggers``/``answer-extractions``) can be imported.

Critique templates are fragments too (:data:`CRITIQUE_KINDS`): a template ``K`` is the
``critique`` fragment ``K`` (the main text, with the placeholders of
:mod:`thoughtdesk.core.critiques.prompts`) and the ``critique_system`` fragment ``K`` (its system
text; none means an empty one). The built-in template is part of the defaults and is always
available to runs (:func:`critique_templates`). DS Critique Bank's ``DSCB-prompts.json`` is read by
:func:`read_dscb_prompts`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from thoughtdesk.core.critiques.prompts import BUILTIN_TEMPLATES, CritiqueTemplate
from thoughtdesk.core.errors import DataFileError, ThoughtDeskError
from thoughtdesk.core.files import write_json_atomically
from thoughtdesk.core.generation.guide_prompts import GUIDE_TEXTS
from thoughtdesk.core.judges.prompts import BUILTIN_JUDGE_TEMPLATES, JudgeTemplate
from thoughtdesk.core.paths import resource_path

FragmentKind = Literal[
    "instruction",
    "cot_trigger",
    "answer_extraction",
    "critique",
    "critique_system",
    "rationale_extraction",
    "guide",
    "judge",
    "judge_system",
]
#: The kinds a generation prompt is built from (the run planner's columns).
FRAGMENT_KINDS: tuple[FragmentKind, ...] = ("instruction", "cot_trigger", "answer_extraction")
#: The kinds of a critique template: its main text and its system text, under one key.
CRITIQUE_KINDS: tuple[FragmentKind, ...] = ("critique", "critique_system")
#: The prompt a model rewrites a document with, inserting rationales (core/rationales/extraction.py).
RATIONALE_KINDS: tuple[FragmentKind, ...] = ("rationale_extraction",)
#: The prompts of guided generation, one key per role (:mod:`thoughtdesk.core.generation.guide_prompts`).
GUIDE_KINDS: tuple[FragmentKind, ...] = ("guide",)
#: What the built-in pairwise judge template follows (its text is ThoughtDesk's own).
JUDGE_CITATION = (
    "After MT-bench's pairwise judge prompt (pair-v2): Zheng et al. 2023, Judging LLM-as-a-Judge with "
    "MT-Bench and Chatbot Arena"
)
#: The kinds of a pairwise judge template (:mod:`thoughtdesk.core.judges.prompts`): main and system text.
JUDGE_KINDS: tuple[FragmentKind, ...] = ("judge", "judge_system")
ALL_KINDS: tuple[FragmentKind, ...] = FRAGMENT_KINDS + CRITIQUE_KINDS + RATIONALE_KINDS + GUIDE_KINDS + JUDGE_KINDS

#: ThoughtSource's section names (fragments.json, then templates.json spelling) per kind.
_THOUGHTSOURCE_SECTIONS: dict[FragmentKind, tuple[str, ...]] = {
    "instruction": ("instructions",),
    "cot_trigger": ("cot_triggers", "cot-triggers"),
    "answer_extraction": ("answer_extractions", "answer-extractions"),
}
FORMAT_NAME = "thoughtdesk-fragments"
FORMAT_VERSION = 1


class FragmentError(ThoughtDeskError):
    """A fragment operation that cannot be done (unknown key, duplicate key, empty text)."""


@dataclass(frozen=True, slots=True)
class Fragment:
    """One reusable piece of prompt text.

    ``source`` says where it came from (``thoughtdesk`` defaults, ``thoughtsource`` keys,
    ``user`` edits, or ``import:<file name>``); ``citation`` credits published prompts.
    """

    key: str
    kind: FragmentKind
    text: str
    citation: str | None = None
    source: str = "user"
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The fragment as a JSON object (optional fields only when set)."""
        data: dict[str, Any] = {"key": self.key, "kind": self.kind, "text": self.text}
        if self.citation:
            data["citation"] = self.citation
        data["source"] = self.source
        if self.note:
            data["note"] = self.note
        return data


@dataclass(slots=True)
class FragmentImportOutcome:
    """What an import did: fragments added, replaced, already present, and conflicts kept."""

    added: list[Fragment] = field(default_factory=list)
    replaced: list[Fragment] = field(default_factory=list)
    unchanged: int = 0
    conflicts: list[Fragment] = field(default_factory=list)


def _check_kind(kind: str) -> FragmentKind:
    if kind not in ALL_KINDS:
        raise FragmentError(f"unknown fragment kind {kind!r}; use one of {', '.join(ALL_KINDS)}")
    return kind


class FragmentLibrary:
    """An editable, ordered set of fragments, keyed by (kind, key)."""

    def __init__(self, fragments: Iterable[Fragment] = ()) -> None:
        self._items: dict[tuple[str, str], Fragment] = {}
        for fragment in fragments:
            self.add(fragment)

    # --- loading and saving -------------------------------------------------------------

    @classmethod
    def defaults(cls) -> FragmentLibrary:
        """The fragments ThoughtDesk ships (its own, ThoughtSource's keys, cited triggers) and the
        built-in critique templates and guided-generation prompts."""
        library = cls.load(resource_path("fragments.json"))
        for template in BUILTIN_TEMPLATES.values():
            for fragment in template_fragments(template, source="thoughtdesk"):
                if (fragment.kind, fragment.key) not in library:
                    library.add(fragment)
        for key, text in GUIDE_TEXTS.items():
            if ("guide", key) not in library:
                library.add(Fragment(key, "guide", text, source="thoughtdesk"))
        for judge in BUILTIN_JUDGE_TEMPLATES.values():
            texts: tuple[tuple[FragmentKind, str], ...] = (("judge", judge.main), ("judge_system", judge.system))
            for kind, text in texts:
                if (kind, judge.key) not in library:
                    library.add(Fragment(judge.key, kind, text, citation=JUDGE_CITATION, source="thoughtdesk"))
        return library

    @classmethod
    def load(cls, path: str | Path) -> FragmentLibrary:
        """Read a ThoughtDesk or a ThoughtSource fragments file into a new library."""
        library = cls()
        library.import_file(path)
        return library

    def import_file(
        self, path: str | Path, *, on_conflict: Literal["keep", "replace"] = "keep"
    ) -> FragmentImportOutcome:
        """Merge the fragments of a ThoughtDesk or ThoughtSource JSON file into this library.

        A key already present with the same text is left alone; with a different text it is
        kept (and listed in ``conflicts``) unless ``on_conflict="replace"``.
        """
        return self.merge(_read_fragments_file(Path(path)), on_conflict=on_conflict)

    def merge(
        self, incoming: Iterable[Fragment], *, on_conflict: Literal["keep", "replace"] = "keep"
    ) -> FragmentImportOutcome:
        """Merge ``incoming`` fragments as :meth:`import_file` does (all read before any is
        merged, so a bad file changes nothing)."""
        report = FragmentImportOutcome()
        for fragment in list(incoming):
            current = self._items.get((fragment.kind, fragment.key))
            if current is None:
                self._items[(fragment.kind, fragment.key)] = fragment
                report.added.append(fragment)
            elif current.text == fragment.text:
                report.unchanged += 1
            elif on_conflict == "replace":
                self._items[(fragment.kind, fragment.key)] = fragment
                report.replaced.append(fragment)
            else:
                report.conflicts.append(fragment)
        return report

    def save(self, path: str | Path) -> None:
        """Write the library as ThoughtDesk JSON to ``path`` atomically (no half-written file)."""
        path = Path(path)
        document = {
            "format": FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "fragments": [fragment.to_json() for fragment in self],
        }
        write_json_atomically(path, document)

    # --- reading ------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Fragment]:
        return iter(self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, kind_and_key: object) -> bool:
        return kind_and_key in self._items

    def of_kind(self, kind: FragmentKind) -> list[Fragment]:
        """All fragments of one kind, in library order."""
        _check_kind(kind)
        return [fragment for fragment in self if fragment.kind == kind]

    def get(self, kind: FragmentKind, key: str) -> Fragment:
        """The fragment of ``kind`` called ``key``; FragmentError naming close keys if absent."""
        _check_kind(kind)
        try:
            return self._items[(kind, key)]
        except KeyError:
            known = [fragment.key for fragment in self.of_kind(kind)]
            close = [name for name in known if name.split("-")[0] == key.split("-")[0]][:5]
            hint = f"; similar keys: {', '.join(close)}" if close else ""
            raise FragmentError(
                f"no {kind.replace('_', ' ')} fragment with key {key!r}{hint} "
                "(add it in the fragment editor or import the fragments.json that defines it)"
            ) from None

    def text(self, kind: FragmentKind, key: str | None) -> str | None:
        """The text of a fragment, or None for key None (ThoughtSource's 'no fragment')."""
        return None if key is None else self.get(kind, key).text

    # --- editing ------------------------------------------------------------------------

    def add(self, fragment: Fragment) -> Fragment:
        """Add a new fragment; FragmentError if its kind and key exist or its text is empty."""
        _check_kind(fragment.kind)
        if not fragment.key.strip():
            raise FragmentError("a fragment needs a non-empty key")
        if not fragment.text.strip():
            raise FragmentError(f"fragment {fragment.key!r} needs a non-empty text")
        if (fragment.kind, fragment.key) in self._items:
            raise FragmentError(
                f"a {fragment.kind.replace('_', ' ')} fragment with key {fragment.key!r} already "
                "exists; edit it, or choose another key"
            )
        self._items[(fragment.kind, fragment.key)] = fragment
        return fragment

    def edit(
        self,
        kind: FragmentKind,
        key: str,
        *,
        text: str | None = None,
        new_key: str | None = None,
        citation: str | None = None,
        note: str | None = None,
    ) -> Fragment:
        """Change a fragment's text, key, citation or note; order in the library is kept.

        An edited fragment's source becomes ``user``. CoTs generated earlier keep the text
        they were generated with (the run stores texts, not only keys).
        """
        current = self.get(kind, key)
        changes: dict[str, Any] = {"source": "user"}
        if text is not None:
            if not text.strip():
                raise FragmentError(f"fragment {key!r} needs a non-empty text")
            changes["text"] = text
        if citation is not None:
            changes["citation"] = citation or None
        if note is not None:
            changes["note"] = note or None
        if new_key is not None and new_key != key:
            if not new_key.strip():
                raise FragmentError("a fragment needs a non-empty key")
            if (kind, new_key) in self._items:
                raise FragmentError(f"a {kind.replace('_', ' ')} fragment {new_key!r} already exists")
            changes["key"] = new_key
        updated = replace(current, **changes)
        # Rebuild to keep the edited fragment at its place when the key changes.
        self._items = {
            ((updated.kind, updated.key) if item_key == (kind, key) else item_key): (
                updated if item_key == (kind, key) else item
            )
            for item_key, item in self._items.items()
        }
        return updated

    def duplicate(self, kind: FragmentKind, key: str, new_key: str | None = None) -> Fragment:
        """Copy a fragment under ``new_key`` (default ``<key>-copy``, ``<key>-copy-2``...)."""
        current = self.get(kind, key)
        if new_key is None:
            new_key, number = f"{key}-copy", 2
            while (kind, new_key) in self._items:
                new_key, number = f"{key}-copy-{number}", number + 1
        return self.add(replace(current, key=new_key, source="user"))

    def delete(self, kind: FragmentKind, key: str) -> Fragment:
        """Remove a fragment and return it; stored CoTs keep their own copy of its text."""
        fragment = self.get(kind, key)
        del self._items[(kind, key)]
        return fragment


def _read_fragments_file(path: Path) -> Iterator[Fragment]:
    """Fragments of a ThoughtDesk or ThoughtSource JSON file, with errors naming the place."""
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataFileError(path, "fragments file not found") from None
    except (OSError, UnicodeDecodeError) as error:
        raise DataFileError(path, f"cannot read fragments file: {error}") from None
    try:
        document = json.loads(raw)
    except json.JSONDecodeError as error:
        raise DataFileError(path, f"not valid JSON: {error.msg}", line=error.lineno, column=error.colno) from None
    if not isinstance(document, dict):
        raise DataFileError(path, "expected a JSON object of fragments", line=1)
    if document.get("format") == FORMAT_NAME or "fragments" in document:
        yield from _read_thoughtdesk(path, raw, document)
    else:
        yield from _read_thoughtsource(path, raw, document)


def _required_text(item: dict[str, Any], name: str, path: Path, line: int | None, where: str) -> str:
    """Field ``name`` of a fragment file's item, which must be a non-empty string."""
    value = item.get(name)
    if not isinstance(value, str) or not value.strip():
        raise DataFileError(path, f"field {name!r} must be a non-empty string", line=line, where=where)
    return value


def _line_of(raw: str, needle: str) -> int | None:
    """1-based line of the first occurrence of a JSON key, to point users at the spot."""
    position = raw.find(json.dumps(needle, ensure_ascii=False))
    if position < 0:
        position = raw.find(json.dumps(needle))
    return raw.count("\n", 0, position) + 1 if position >= 0 else None


def _read_thoughtdesk(path: Path, raw: str, document: Mapping[str, Any]) -> Iterator[Fragment]:
    version = document.get("format_version", FORMAT_VERSION)
    if isinstance(version, int) and version > FORMAT_VERSION:
        raise DataFileError(
            path,
            f"fragments format version {version} is newer than this ThoughtDesk",
            hint="update ThoughtDesk to read it",
        )
    items = document.get("fragments")
    if not isinstance(items, list):
        raise DataFileError(path, "'fragments' must be a list", line=_line_of(raw, "fragments"))
    for index, item in enumerate(items):
        where = f"fragment {index + 1}"
        if not isinstance(item, dict):
            raise DataFileError(path, "expected an object", where=where)
        raw_key = item.get("key")
        line = _line_of(raw, raw_key) if isinstance(raw_key, str) else None
        key, kind, text = (_required_text(item, name, path, line, where) for name in ("key", "kind", "text"))
        if kind not in ALL_KINDS:
            raise DataFileError(
                path, f"unknown kind {kind!r} (use {', '.join(ALL_KINDS)})", line=line, where=f"{where} ({key})"
            )
        citation = item.get("citation")
        yield Fragment(
            key=key,
            kind=kind,
            text=text,
            citation=citation if isinstance(citation, str) else None,
            source=str(item.get("source") or f"import:{path.name}"),
            note=item.get("note") if isinstance(item.get("note"), str) else None,
        )


def _read_thoughtsource(path: Path, raw: str, document: Mapping[str, Any]) -> Iterator[Fragment]:
    found = False
    for kind, sections in _THOUGHTSOURCE_SECTIONS.items():
        for section in sections:
            if section not in document:
                continue
            found = True
            entries = document[section]
            if not isinstance(entries, dict):
                raise DataFileError(path, f"section {section!r} must map keys to texts", line=_line_of(raw, section))
            for key, text in entries.items():
                if not isinstance(text, str) or not text.strip():
                    raise DataFileError(
                        path,
                        "fragment text must be a non-empty string",
                        line=_line_of(raw, key),
                        where=f"{section}, key {key}",
                    )
                yield Fragment(key=key, kind=kind, text=text, source=f"import:{path.name}")
    if not found:
        raise DataFileError(
            path,
            "no fragments found",
            hint="expected ThoughtDesk's {'fragments': [...]} or ThoughtSource's "
            "'instructions', 'cot_triggers' and 'answer_extractions' sections",
        )


# --- critique templates ---------------------------------------------------------------------


def template_fragments(template: CritiqueTemplate, *, source: str = "user", note: str | None = None) -> list[Fragment]:
    """The fragments that hold ``template``: its main text and (when it has one) its system text."""
    out = [Fragment(template.key, "critique", template.main, source=source, note=note)]
    if template.system.strip():
        out.append(Fragment(template.key, "critique_system", template.system, source=source, note=note))
    return out


def critique_templates(library: FragmentLibrary) -> dict[str, CritiqueTemplate]:
    """The critique templates of ``library`` by key, after the built-in ones (which a user's
    deletion does not remove: runs can always use them; an edit of one is used as edited)."""
    out = dict(BUILTIN_TEMPLATES)
    for fragment in library.of_kind("critique"):
        system = library.text("critique_system", fragment.key) if ("critique_system", fragment.key) in library else ""
        out[fragment.key] = CritiqueTemplate(fragment.key, system or "", fragment.text, fragment.source)
    return out


def judge_templates(library: FragmentLibrary) -> dict[str, JudgeTemplate]:
    """The pairwise judge templates of ``library`` by key, after the built-in one (a user's
    deletion does not remove it; an edit is used as edited, and is a new template version)."""
    out = dict(BUILTIN_JUDGE_TEMPLATES)
    for fragment in library.of_kind("judge"):
        system = library.text("judge_system", fragment.key) if ("judge_system", fragment.key) in library else ""
        out[fragment.key] = JudgeTemplate(fragment.key, system or "", fragment.text, fragment.source)
    return out


#: The student prompts of DSCB-prompts.json (placeholder ``[[QUESTION]]``).
DSCB_STUDENT_KEYS = ("QA_zeroshot1", "QA_explanation1", "QA_reasoning_step1")
DSCB_CRITIQUE_KEY = "digital_socrates_v1"


def read_dscb_prompts(path: str | Path) -> list[Fragment]:
    """The fragments in DS Critique Bank's ``DSCB-prompts.json``.

    ``digital_socrates_v1`` (``system`` and ``main``) becomes a critique template of that key. Each
    student prompt (``QA_*``, one text around ``[[QUESTION]]``) becomes an instruction (the text
    before the question) and a CoT trigger (the text after it) of its key, so that a generation
    run with both puts the question where the prompt had it (choices follow the question on
    their own line). Other keys are ignored. Errors name the file, the line and the key.
    """
    path = Path(path)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataFileError(path, "DSCB prompts file not found") from None
    except (OSError, UnicodeDecodeError) as error:
        raise DataFileError(path, f"cannot read DSCB prompts file: {error}") from None
    try:
        document = json.loads(raw)
    except json.JSONDecodeError as error:
        raise DataFileError(path, f"not valid JSON: {error.msg}", line=error.lineno, column=error.colno) from None
    if not isinstance(document, dict):
        raise DataFileError(path, "expected a JSON object of prompts (keys such as digital_socrates_v1)", line=1)
    source = f"import:{path.name}"
    out: list[Fragment] = []
    critique = document.get(DSCB_CRITIQUE_KEY)
    if critique is not None:
        line = _line_of(raw, DSCB_CRITIQUE_KEY)
        if not isinstance(critique, dict):
            raise DataFileError(path, "expected an object with 'system' and 'main'", line=line, where=DSCB_CRITIQUE_KEY)
        main = _required_text(critique, "main", path, line, DSCB_CRITIQUE_KEY)
        system = critique.get("system") or ""
        if not isinstance(system, str):
            raise DataFileError(path, "field 'system' must be a string", line=line, where=DSCB_CRITIQUE_KEY)
        template = CritiqueTemplate(DSCB_CRITIQUE_KEY, system, main, source)
        out.extend(template_fragments(template, source=source, note="DS Critique Bank critique prompt"))
    for key in DSCB_STUDENT_KEYS:
        if key not in document:
            continue
        line = _line_of(raw, key)
        text = document[key]
        if isinstance(text, dict):  # a prompt object like the critique's: its main text
            text = text.get("main")
        if not isinstance(text, str) or not text.strip():
            raise DataFileError(path, "a student prompt must be a non-empty string", line=line, where=key)
        if "[[QUESTION]]" not in text:
            raise DataFileError(path, "a student prompt must contain [[QUESTION]]", line=line, where=key)
        before, after = text.split("[[QUESTION]]", 1)
        note = "DS Critique Bank student prompt"
        if before.strip():
            out.append(
                Fragment(key, "instruction", before.rstrip(), source=source, note=f"{note}: before the question")
            )
        if after.strip():
            out.append(Fragment(key, "cot_trigger", after.strip(), source=source, note=f"{note}: after the question"))
    if not out:
        raise DataFileError(
            path, f"no DSCB prompts found (expected {DSCB_CRITIQUE_KEY} or {', '.join(DSCB_STUDENT_KEYS)})", line=1
        )
    return out


def is_dscb_prompts(path: str | Path) -> bool:
    """True if ``path`` looks like DSCB-prompts.json (a JSON object with a DSCB key) rather than a
    fragments file."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(document, dict) and any(k in document for k in (DSCB_CRITIQUE_KEY, *DSCB_STUDENT_KEYS))


def import_fragments(
    library: FragmentLibrary, path: str | Path, *, on_conflict: Literal["keep", "replace"] = "keep"
) -> FragmentImportOutcome:
    """Merge a fragments file (ThoughtDesk, ThoughtSource) or DSCB-prompts.json into ``library``."""
    if not is_dscb_prompts(path):
        return library.import_file(path, on_conflict=on_conflict)
    return library.merge(read_dscb_prompts(path), on_conflict=on_conflict)
