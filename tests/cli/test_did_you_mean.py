"""A mistyped command or option value gets one line with the closest name (issue 28, point 10:
argparse printed the whole usage and every command, and suggested nothing)."""

from __future__ import annotations

import pytest

from tests.helpers.cli import run_cli


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["genrate"], "thoughtdesk: error: 'genrate' is not a command here; did you mean 'generate'?"),
        (["colections"], "thoughtdesk: error: 'colections' is not a command here; did you mean 'collections'?"),
        (["models", "lst"], "thoughtdesk models: error: 'lst' is not a command here; did you mean 'list'?"),
        (
            ["export", "C", "out.json", "--format", "thoughsource"],
            "thoughtdesk export: error: --format: invalid choice 'thoughsource'; did you mean 'thoughtsource'?",
        ),
    ],
)
def test_a_mistyped_name_gets_one_line_with_the_closest(argv, expected, tmp_path):
    result = run_cli(*argv, library=tmp_path / "lib.thoughtdesk")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(expected), result.stderr


def test_nothing_close_names_no_command_and_points_to_help(tmp_path):
    result = run_cli("zzz", library=tmp_path / "lib.thoughtdesk")
    assert result.returncode == 2
    assert result.stderr.strip() == "thoughtdesk: error: 'zzz' is not a command here; `thoughtdesk --help` lists them"
