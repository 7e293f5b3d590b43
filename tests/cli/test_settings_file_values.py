"""Issue 28, point 15: a command reads the settings file through the declared options; a value
none of them allows ends the command with one line naming the file, the line, the key, what is
allowed and what to do, never a traceback and never a guess (an unreadable ``network/offline``
was read as "online" before)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_cli, run_cli_process
from tests.helpers.libraries import DEMO
from thoughtdesk.core.paths import CONFIG_DIR_ENV, settings_file
from thoughtdesk.core.settings import network


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CONFIG_DIR_ENV, str(tmp_path / "config"))
    monkeypatch.delenv("THOUGHTDESK_OFFLINE", raising=False)
    monkeypatch.delenv("THOUGHTDESK_LIBRARY", raising=False)
    path = settings_file()
    path.parent.mkdir(parents=True)
    return path


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_an_unreadable_offline_mode_stops_the_command_in_one_line(settings: Path, tmp_path: Path) -> None:
    settings.write_text("[General]\n\n[network]\noffline=maybe\n", encoding="utf-8")
    done = run_cli_process("library", "path", env={CONFIG_DIR_ENV: str(tmp_path / "config")})
    assert done.returncode == 1
    line = _one_line(done.stderr)
    assert line == (
        f"thoughtdesk: {settings}, line 4: network/offline is 'maybe', not true or false; "
        "correct that line, or delete it to use the default (false)"
    )
    assert done.stdout == ""


def test_offline_given_on_the_command_line_does_not_need_the_saved_one(settings: Path, library_path: Path) -> None:
    settings.write_text("[network]\noffline=maybe\n", encoding="utf-8")
    result = run_cli("--offline", "collections", library=library_path)
    assert result.returncode == 0, result.stderr
    assert network.is_offline()


def test_a_library_path_with_unquoted_commas_is_named(settings: Path) -> None:
    settings.write_text("[library]\npath=/data/ward 7, icu/library.thoughtdesk\n", encoding="utf-8")
    result = run_cli("library", "path")
    assert result.returncode == 1
    line = _one_line(result.stderr)
    assert f"{settings}, line 2: library/path is a list ('/data/ward 7', 'icu/library.thoughtdesk')" in line
    assert "put text with a comma in double quotes" in line
    settings.write_text('[library]\npath="/data/ward 7, icu/library.thoughtdesk"\n', encoding="utf-8")
    result = run_cli("library", "path")
    assert result.returncode == 0 and result.stdout.strip() == "/data/ward 7, icu/library.thoughtdesk"


def test_a_bad_reasoning_effort_is_named_before_a_run_is_planned(settings: Path, library_path: Path) -> None:
    settings.write_text("[providers]\nopenai\\enabled=true\nopenai\\reasoning_effort=turbo\n", encoding="utf-8")
    result = run_cli("generate", DEMO, "--model", "openai:m", "--dataset", "gsm8k", "--plan-only", library=library_path)
    assert result.returncode == 1
    line = _one_line(result.stderr)
    assert f"{settings}, line 3: providers/openai/reasoning_effort is 'turbo', not one of '', 'none'" in line


def test_a_bad_largest_answer_stops_the_command_before_a_run_is_planned(
    settings: Path, library_path: Path, refused_port: int
) -> None:
    settings.write_text("[generation]\nmax_response_mb=lots\n", encoding="utf-8")
    command = ["generate", DEMO, "--model", "openai:m", "--base-url", f"http://127.0.0.1:{refused_port}/v1"]
    result = run_cli(*command, "--dataset", "gsm8k", "--limit", "1", "--one-step", library=library_path)
    assert result.returncode == 1
    line = _one_line(result.stderr)
    assert f"{settings}, line 2: generation/max_response_mb is 'lots', not a whole number from 1 to 4096" in line
    assert run_cli("runs", "--json", library=library_path).stdout.strip() == "[]"  # nothing planned, nothing sent
    ok = run_cli(
        *command, "--dataset", "gsm8k", "--limit", "1", "--max-response-mb", "8", "--plan-only", library=library_path
    )
    assert ok.returncode == 0, ok.stderr  # --max-response-mb decides for this command: the saved value is not read
