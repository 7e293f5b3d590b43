"""Where an export may write (issue 15, point 1: `export ts67 L` onto the open library L exited 0
and destroyed every other collection in it)."""

from __future__ import annotations

import os

import pytest

from thoughtdesk.core.files import ExportTargetError, check_export_target, export_kind, looks_like_export
from thoughtdesk.core.library.store import Library


@pytest.fixture
def library(tmp_path):
    path = tmp_path / "lab.thoughtdesk"
    with Library.open(path):
        pass
    return path


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm", "-journal"])
def test_the_open_library_and_its_companions_are_never_a_target(library, suffix):
    target = library.with_name(library.name + suffix)
    for force in (False, True):
        with pytest.raises(ExportTargetError, match="open library.*would destroy every collection"):
            check_export_target(target, libraries=[library], force=force)


def test_the_library_reached_by_another_name_is_refused(library, tmp_path):
    os.symlink(library, tmp_path / "alias.json")
    with pytest.raises(ExportTargetError, match="the open library"):
        check_export_target(tmp_path / "alias.json", libraries=[library], force=True)
    with pytest.raises(ExportTargetError, match="the open library"):
        check_export_target(tmp_path / "sub" / ".." / library.name, libraries=[library], force=True)


def test_another_database_or_document_needs_force(library, tmp_path):
    other = tmp_path / "other.thoughtdesk"
    with Library.open(other):
        pass
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    for path in (other, notes):
        with pytest.raises(ExportTargetError, match="not an earlier export.*--force"):
            check_export_target(path, libraries=[library])
        assert check_export_target(path, libraries=[library], force=True) == path


def test_earlier_exports_new_files_and_bad_names(library, tmp_path):
    earlier = tmp_path / "earlier.json"
    earlier.write_text('\ufeff{\n  "med_qa": {\n    "test": [\n      {"id": "1", "question": "q"}\n    ]\n  }\n}\n')
    lines = tmp_path / "earlier.jsonl"
    lines.write_text('{"dataset": "gsm8k", "split": "test", "id": "1", "question": "q"}\n')
    assert export_kind(earlier) == "ThoughtSource collection" and export_kind(lines) == "samples-jsonl"
    assert not looks_like_export(library)
    assert check_export_target(earlier, libraries=[library]) == earlier
    assert check_export_target(tmp_path / "new.json", libraries=[library]) == tmp_path / "new.json"
    with pytest.raises(ExportTargetError, match="no file was named"):
        check_export_target("", libraries=[library])
    with pytest.raises(ExportTargetError, match="is a folder"):
        check_export_target(tmp_path, libraries=[library])


@pytest.mark.parametrize(
    "content",
    [
        '{"name": "my notes", "items": [1, 2]}\n',  # someone's notes.json: the old check took any JSON
        '[{"id": 1}]\n',
        '{"id": 1}\n{"id": 2}\n',  # someone's JSON Lines
        '{\n  "med_qa": {"test": [{"id": "1"}]}}',  # a ThoughtSource file ThoughtDesk did not write
        '{"messages": [{"role":"user","content":"hi"}]}\n',  # a chat file spaced otherwise
        "name,dose\nmetformin,500\n",
        "<!DOCTYPE html>\n<html lang=en><title>my page</title>\n",
        "%PDF-1.7\n1 0 obj << /Creator (LibreOffice) >>\n",
    ],
)
def test_a_file_that_is_not_an_earlier_export_needs_force(library, tmp_path, content):
    """Issue 15, point 1 (audit): any JSON or JSONL file counted as an earlier export, so
    `export C notes.json` replaced someone's unrelated JSON without --force."""
    path = tmp_path / "notes.json"
    path.write_text(content)
    assert export_kind(path) is None
    with pytest.raises(ExportTargetError, match="not an earlier export.*--force"):
        check_export_target(path, libraries=[library])
    assert check_export_target(path, libraries=[library], force=True) == path


def test_an_export_that_fails_leaves_nothing_and_names_the_file(tmp_path):
    """Issue 15: a full disk during export printed no path; a killed export left <target>.part."""
    import errno
    import time

    from thoughtdesk.core.files import PART_SUFFIX, export_file

    target = tmp_path / "out.json"
    with pytest.raises(ExportTargetError, match=r"out.json could not be written \(No space left on device\)"):
        with export_file(target) as out:
            out.write("{")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert list(tmp_path.iterdir()) == []

    stale = tmp_path / ("killed.json" + PART_SUFFIX)
    stale.write_text("{ half")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    fresh = tmp_path / ("running.json" + PART_SUFFIX)  # another export still writing: kept
    fresh.write_text("{ going")
    with export_file(target) as out:
        out.write("{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json", fresh.name]
    assert target.read_text() == "{}"
