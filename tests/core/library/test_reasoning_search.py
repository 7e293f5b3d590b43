"""Full-text search covers a reasoning model's thinking (issue 24, point 6): imported CoTs through
the bulk writer and CoTs a run commits (the run engine's search-index update) alike."""

from __future__ import annotations

from tests.helpers.reasoning import reasoning_cot, write_samples
from thoughtdesk.core.library.queries import SampleFilter, sample_keys
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.writer import FTS_CHARS


def _found(lib: Library, words: str) -> list[int]:
    return list(sample_keys(lib, SampleFilter(search=words)))


def test_imported_thinking_is_searchable(tmp_path):
    path = tmp_path / "lib.thoughtdesk"
    thought = reasoning_cot(0, "stop", True, reasoning="Let me check the zygomatic arch first.", tokens=9)
    plain = reasoning_cot(1, "stop", True, reasoning=None, tokens=None)
    write_samples(path, "c", [[thought], [plain]])
    with Library.open(path) as lib:
        (hit,) = _found(lib, "zygomatic")
        assert lib.conn.execute("SELECT sample_id FROM sample WHERE id = ?", (hit,)).fetchone()[0] == "s0"
        assert len(_found(lib, "answer")) == 2  # the visible text is still indexed


def test_a_committed_cot_adds_its_thinking_to_the_index(tmp_path):
    from thoughtdesk.core.generation.runs.commit import add_to_search  # the run engine's index update

    path = tmp_path / "lib.thoughtdesk"
    write_samples(path, "c", [[]])
    long_thinking = "x " * FTS_CHARS + "beyondtheprefix"
    with Library.open(path) as lib, lib.transaction() as conn:
        sample = conn.execute("SELECT id FROM sample").fetchone()[0]
        for position, (cot, reasoning) in enumerate(
            [("The answer is 7.", "Wait, hypotenuse first."), ("", "only thought: quaternion"), ("x", long_thinking)]
        ):
            cot_pk = conn.execute(
                "INSERT INTO generated_cot (sample_pk, position, cot, reasoning) VALUES (?, ?, ?, ?)",
                (sample, position, cot, reasoning),
            ).lastrowid
            assert cot_pk is not None
            add_to_search(conn, cot_pk, sample)
    with Library.open(path) as lib:
        assert _found(lib, "hypotenuse") == _found(lib, "quaternion") == _found(lib, "answer") == [sample]
        assert _found(lib, "beyondtheprefix") == []  # each text indexed up to FTS_CHARS characters
