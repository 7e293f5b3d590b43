"""The command line's conventions (issue 16, point 12): options after the sub-command, help
with examples for every command and every option, --json from write commands, `-` for standard
input and output, one-line errors with documented exit codes, the log file, progress lines,
fragments, library path and Datasette metadata, backups and keys."""

from __future__ import annotations

import argparse
import io
import json
import sys

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.libraries import DEMO
from tests.helpers.paths import FIXTURES, ROOT
from thoughtdesk.cli import common, library
from thoughtdesk.cli.main import build_parser, main, sub_commands
from thoughtdesk.core.library.store import Library

EDGE = FIXTURES / "thoughtsource" / "edge_cases.json"


def test_global_options_work_after_the_sub_command(library_path, capsys):
    assert main(["collections", "--json", "--library", str(library_path)]) == 0
    assert [c["name"] for c in json.loads(capsys.readouterr().out)] == [DEMO]
    assert main(["stats", DEMO, "--library", str(library_path), "--offline", "-v"]) == 0
    assert "total" in capsys.readouterr().out


def test_every_command_has_examples_and_every_option_a_description():
    parser = build_parser()
    missing_help, missing_examples = [], []
    for command in [parser, *sub_commands(parser)]:
        if command is not parser and not (command.epilog or "").startswith("examples:"):
            missing_examples.append(command.prog)
        for action in command._actions:
            if isinstance(action, argparse._SubParsersAction):
                for choice in action._choices_actions:  # each sub-command's one-line help
                    if not choice.help:
                        missing_help.append(f"{command.prog} {choice.dest}")
            elif not action.help and action.help is not argparse.SUPPRESS:
                missing_help.append(f"{command.prog} {'/'.join(action.option_strings) or action.dest}")
    assert not missing_help, f"options without help: {missing_help}"
    assert not missing_examples, f"commands without examples: {missing_examples}"
    generate = next(c for c in sub_commands(parser) if c.prog.endswith(" generate"))
    assert "examples:\n  thoughtdesk generate" in generate.format_help()


#: Commands without --json: the GUI, and the two that print a path or a metadata file for Datasette.
NO_JSON = {"gui", "library path", "library metadata"}


def test_every_command_has_json_output():
    """Issue 16, point 12: every command a script may call (every write command) has --json."""
    parser = build_parser()
    missing = []
    for command in sub_commands(parser):
        if any(isinstance(a, argparse._SubParsersAction) for a in command._actions):
            continue  # a group (keys, library, rationales...): its sub-commands are checked
        name = command.prog.removeprefix(parser.prog).strip()
        if name not in NO_JSON and not any("--json" in a.option_strings for a in command._actions):
            missing.append(name)
    assert not missing, f"commands without --json: {missing}"


def test_exit_codes_are_documented():
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for code in ("| 0 |", "| 1 |", "| 2 |", "| 3 |", "| 130 |"):
        assert code in text


def test_an_internal_error_is_one_line_and_its_traceback_goes_to_the_log(library_path, capsys, monkeypatch, tmp_path):
    def broken(args):
        raise KeyError("boom")

    monkeypatch.setenv("THOUGHTDESK_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setattr(library, "cmd_collections", broken)
    assert main(["--library", str(library_path), "collections"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error (KeyError: 'boom')" in err and "Traceback" not in err
    log = (tmp_path / "logs" / "thoughtdesk.log").read_text(encoding="utf-8")
    assert "Traceback" in log and "KeyError: 'boom'" in log


def test_fragments_lists_keys_with_and_without_a_sub_command(capsys):
    assert main(["fragments"]) == 0
    plain = capsys.readouterr().out
    assert main(["fragments", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {"kind", "key", "source", "text"} <= listed[0].keys()
    assert len(plain.splitlines()) == len(listed)
    assert main(["fragments", "list", "--kind", "cot_trigger", "--json"]) == 0
    assert {f["kind"] for f in json.loads(capsys.readouterr().out)} == {"cot_trigger"}


def test_library_path_and_datasette_metadata(library_path, capsys, tmp_path):
    assert main(["library", "path", "--library", str(library_path)]) == 0
    assert capsys.readouterr().out.strip() == str(library_path)
    assert main(["library", "path", "--check", "--library", str(tmp_path / "none.thoughtdesk")]) == 1
    assert "no library at" in capsys.readouterr().err
    out = tmp_path / "meta.json"
    assert main(["library", "metadata", "--output", str(out), "--library", str(library_path)]) == 0
    tables = json.loads(out.read_text(encoding="utf-8"))["databases"][library_path.stem]["tables"]
    assert tables["sample"]["fts_table"] == "sample_fts" and tables["sample"]["fts_pk"] == "id"
    with Library.open(library_path) as lib:  # the index named there is the real one, keyed by sample id
        hit = lib.conn.execute(
            "SELECT s.id FROM sample_fts f JOIN sample s ON s.id = f.rowid WHERE sample_fts MATCH 'the' LIMIT 1"
        ).fetchone()
        names = {row[0] for row in lib.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert hit is not None
    assert {name for name in tables if tables[name].get("hidden")} <= names


@pytest.mark.parametrize(
    "command",
    [
        ["annotations", "export", "{target}"],
        ["library", "metadata", "--output", "{target}"],
        ["export", DEMO, "{target}"],
    ],
)
def test_no_export_writes_onto_the_library_and_another_file_needs_force(library_path, capsys, tmp_path, command):
    """Issue 15, point 1 (audit): `annotations export L` and `library metadata --output L` exited
    0 and destroyed the library L."""
    before = library_path.read_bytes()
    for target in (library_path, f"{library_path}-wal"):
        for force in ([], ["--force"]):
            args = [a.format(target=target) for a in command] + force + ["--library", str(library_path)]
            assert main(args) == 1
            err = capsys.readouterr().err
            assert "open library" in err and "destroy" in err and len(err.strip().splitlines()) == 1
    assert library_path.read_bytes() == before
    with Library.open(library_path) as lib:
        assert [c.name for c in lib.collections()] == [DEMO]

    notes = tmp_path / "notes.json"  # someone's JSON, not an earlier export: kept unless --force
    notes.write_text('{"my": "notes"}\n')
    args = [a.format(target=notes) for a in command] + ["--library", str(library_path)]
    assert main(args) == 1
    assert "not an earlier export" in capsys.readouterr().err and notes.read_text() == '{"my": "notes"}\n'
    assert main(args + ["--force"]) == 0
    assert main(args) == 0  # now an earlier export: replaced again without --force
    capsys.readouterr()
    assert json.loads(notes.read_text()) != {"my": "notes"}


def test_backup_writes_a_consistent_copy_and_never_overwrites(library_path, capsys, tmp_path):
    target = tmp_path / "copy.thoughtdesk"
    assert main(["backup", str(target), "--json", "--library", str(library_path)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["backup"] == str(target) and result["bytes"] == target.stat().st_size
    with Library.open(target, create=False) as copy:
        assert [c.name for c in copy.collections()] == [DEMO]
    assert main(["backup", str(target), "--library", str(library_path)]) == 1
    assert "already exists; a backup never overwrites a file" in capsys.readouterr().err
    assert main(["backup", "--library", str(library_path)]) == 0
    assert list((library_path.parent / "backups").glob("library-*.thoughtdesk"))


def test_keys_set_list_delete_never_show_the_key(capsys, monkeypatch):
    key = "sk-test-0123456789abcdef"
    monkeypatch.setattr(sys, "stdin", io.StringIO(key + "\n"))
    assert main(["keys", "set", "openai", "--base-url", "http://127.0.0.1:8080/v1"]) == 0
    assert main(["keys", "list", "--json"]) == 0
    out = capsys.readouterr().out
    assert key not in out
    listed = {row["provider"]: row for row in json.loads(out.split("\n", 1)[1])["keys"]}
    assert listed["openai"]["stored"] and listed["openai"]["key"].endswith("cdef")
    assert listed["openai"]["server"] == "http://127.0.0.1:8080"
    assert not listed["anthropic"]["stored"]
    assert main(["keys", "delete", "openai", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"provider": "openai", "deleted": True}
    assert main(["keys", "delete", "openai"]) == 0
    assert "nothing deleted" in capsys.readouterr().out
    monkeypatch.setattr(sys, "stdin", io.StringIO("sk-bad key\n"))
    assert main(["keys", "set", "anthropic"]) == 1
    err = capsys.readouterr().err
    assert "has a space at position 7" in err and "sk-bad" not in err


def test_import_from_standard_input_with_json_output(tmp_path, capsys, monkeypatch):
    target = tmp_path / "lib.thoughtdesk"
    stdin = io.TextIOWrapper(io.BytesIO(EDGE.read_bytes()), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)
    assert main(["import", "-", "--library", str(target)]) == 1
    assert "needs --collection NAME" in capsys.readouterr().err
    assert main(["import", "-", "--collection", "piped", "--json", "--library", str(target)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["collection"] == "piped" and result["inserted"] == 4 and result["bad_records"] == 0


def test_export_to_standard_output(tmp_path):
    lib = tmp_path / "lib.thoughtdesk"
    assert main(["import", str(EDGE), "--collection", "edge", "--library", str(lib)]) == 0
    result = run_cli("export", "edge", "-", "--json", library=lib)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == json.loads(EDGE.read_text(encoding="utf-8"))
    assert json.loads(result.stderr)["records"] == 4


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_shows_rate_and_time_left_and_ends_cleanly(monkeypatch):
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    bar = common.ProgressLine("importing a long label", unit="samples")
    bar(0, 200)
    bar.label = "short"
    bar._last = 0.0  # draw now, not 0.1 s later
    bar(100, 200)
    bar.finish()
    text = terminal.getvalue()
    assert "100/200" in text and "samples/s" in text and "short" in text
    assert text.count("\r\x1b[2K") >= 2  # every redraw erases the whole line first: no tail of a longer label
    assert text.removesuffix("\x1b[?25h").endswith("\n")  # the line is ended (then the cursor shown again)
    assert common._ACTIVE == set()


def test_download_reports_its_files_as_json(tmp_path, shared, capsys):
    import shutil

    cache = tmp_path / "cache"
    (cache / "gsm8k").mkdir(parents=True)
    for name in ("train.jsonl", "test.jsonl"):
        shutil.copy(shared("gsm8k") / name, cache / "gsm8k" / name)
    assert main(["datasets", "gsm8k", "--download", "--cache", str(cache), "--json", "--offline"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["dataset"] == "gsm8k" and len(result["files"]) == 2


def test_keys_set_without_a_keyring_stores_nothing_unless_the_key_file_is_agreed(capsys, monkeypatch, tmp_path):
    """Audit of issue 16: on keyring's null backend `keys set` said "stored in the keyring" and
    recorded the key's server, but nothing was stored."""
    import keyring.backends.null

    from thoughtdesk.core.settings import config
    from thoughtdesk.core.settings.secrets import FileKeyring, get_api_key, use_keyring

    use_keyring(keyring.backends.null.Keyring())
    key = "sk-test-0123456789abcdef"
    monkeypatch.setattr(sys, "stdin", io.StringIO(key + "\n"))
    assert main(["keys", "set", "openai"]) == 1
    out, err = capsys.readouterr()
    assert "no system keyring" in err and "NOT stored" in err and "--key-file" in err and "OPENAI_API_KEY" in err
    assert err.count("\n") == 1 and key not in out + err and "stored in" not in out
    assert config.load_config().key_origins == {} and not config.load_config().keys_in_file
    assert sys.stdin.read() == key + "\n"  # refused before the key was read

    monkeypatch.setattr(sys, "stdin", io.StringIO(key + "\n"))
    assert main(["keys", "set", "openai", "--key-file", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    key_file = FileKeyring().path
    assert result["stored"] and str(key_file) in result["in"] and "not encrypted" in result["in"]
    assert get_api_key("openai") == key and key in key_file.read_text(encoding="utf-8")
    assert config.load_config().keys_in_file  # remembered: the next command reads the file
    monkeypatch.setattr(sys, "stdin", io.StringIO("sk-second-0123456789\n"))
    assert main(["keys", "set", "anthropic"]) == 0  # agreed once: no --key-file needed again
    assert str(key_file) in capsys.readouterr().out


def test_datasette_examples_pass_a_metadata_file_not_its_text():
    """Audit of issue 16: `datasette ... --metadata "$(thoughtdesk library metadata)"` passed the
    JSON text as a file name ("File name too long"). Every example giving Datasette --metadata
    names a file that an example before it writes with `library metadata --output`."""
    import shlex

    from thoughtdesk.cli.help import EXAMPLES

    checked = 0
    for lines in EXAMPLES.values():
        written: set[str] = set()
        for line in lines:
            words = shlex.split(line, comments=True)  # as a shell reads it: a comment may hold an apostrophe
            if words[:3] == ["thoughtdesk", "library", "metadata"] and "--output" in words:
                written.add(words[words.index("--output") + 1])
            if words[0] == "datasette" and "--metadata" in words:
                name = words[words.index("--metadata") + 1]
                assert "$(" not in name and name in written, line
                checked += 1
    assert checked >= 2
