"""``thoughtdesk library path|metadata``, ``thoughtdesk backup [PATH]`` and
``thoughtdesk keys set|list|delete PROVIDER``: the library file and the API keys, for scripts
and for tools such as Datasette (``datasette "$(thoughtdesk library path)"``)."""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys

from thoughtdesk.cli.commands import add_command
from thoughtdesk.cli.common import EXIT_OK, ProgressLine, open_library, server_url
from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.paths import resource_path
from thoughtdesk.core.settings.saved import resolve_library_path

#: Providers whose keys ThoughtDesk keeps (llamacpp needs none).
KEY_PROVIDERS = ("openai", "anthropic")
DATASETTE_METADATA = "datasette-metadata.json"


def cmd_library_path(args: argparse.Namespace) -> int:
    path = resolve_library_path(args.library)
    if args.check and not path.exists():
        raise ThoughtDeskError(f"no library at {path}")
    print(path)
    return EXIT_OK


def cmd_library_metadata(args: argparse.Namespace) -> int:
    """The shipped Datasette metadata fitted to this library (sqlite-utils' introspection: its
    full-text index and internal tables), keyed by its database name (the file's stem, as
    Datasette names it), on stdout or into ``--output``."""
    from thoughtdesk.core.library.schema import library_metadata

    template = json.loads(resource_path(DATASETTE_METADATA).read_text(encoding="utf-8"))
    from thoughtdesk.core.files import check_export_target, export_file

    with open_library(args) as lib:  # a missing library is "no library at ..."; an old one is upgraded first
        path = lib.path
    target = check_export_target(args.output, libraries=[path], force=args.force) if args.output is not None else None
    document = library_metadata(path, template)  # the tables and index this file really has
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if target is not None:
        with export_file(target) as out:
            out.write(text)
        print(args.output)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def cmd_backup(args: argparse.Namespace) -> int:
    from pathlib import Path

    from thoughtdesk.core.library.backup import backup_connection, default_backup_path

    with open_library(args) as lib:
        target = Path(args.path).expanduser() if args.path else default_backup_path(lib.path)
        bar = ProgressLine("backing up", unit="pages")
        written = backup_connection(lib.conn, lib.path, target, progress=bar)
        bar.finish()
    size = written.stat().st_size
    if args.json:
        print(json.dumps({"library": str(lib.path), "backup": str(written), "bytes": size}))
    else:
        print(f"backed up {lib.path} to {written} ({size / 1e6:.1f} MB)")
    return EXIT_OK


def cmd_keys_list(args: argparse.Namespace) -> int:
    from thoughtdesk.core.generation.runs.providers import KEY_ENVIRONMENT
    from thoughtdesk.core.settings.config import keyring_name, load_config
    from thoughtdesk.core.settings.secrets import get_api_key, masked

    origins = load_config().key_origins
    rows = []
    for provider in KEY_PROVIDERS:
        key = get_api_key(provider)
        variable = KEY_ENVIRONMENT[provider]
        rows.append(
            {
                "provider": provider,
                "stored": key is not None,
                "key": masked(key) if key else None,  # the last four characters only
                "server": origins.get(provider) if key else None,
                "environment": variable if os.environ.get(variable) else None,
            }
        )
    if args.json:
        print(json.dumps({"keyring": keyring_name(), "keys": rows}, indent=2, ensure_ascii=False))
        return EXIT_OK
    for row in rows:
        stored = f"{row['key']} (for {row['server'] or 'the official server'})" if row["stored"] else "no stored key"
        env = f"; {row['environment']} is set" if row["environment"] else ""
        print(f"{row['provider']}\t{stored}{env}")
    return EXIT_OK


def cmd_keys_set(args: argparse.Namespace) -> int:
    from thoughtdesk.core.generation.defaults import DEFAULT_BASE_URLS
    from thoughtdesk.core.settings import config

    where = _key_store(args)  # before the key is asked for: a key nothing can keep is never typed
    if sys.stdin.isatty():
        key = getpass.getpass(f"API key for {args.provider} (not shown): ")
    else:  # piped: the first line, so the key never appears on a command line or in shell history
        key = sys.stdin.readline()
    base_url = args.base_url or DEFAULT_BASE_URLS[args.provider]
    if args.key_file and not config.keyring_is_usable():
        config.agree_to_key_file()  # remembered in core.json, as the app's consent does
    config.store_api_key(args.provider, key, base_url)  # checked: a key with a stray character is refused
    if args.json:
        print(json.dumps({"provider": args.provider, "stored": True, "in": where, "server": base_url}))
    else:
        print(f"key for {args.provider} stored in {where}; it is sent to {base_url} only")
    return EXIT_OK


def _key_store(args: argparse.Namespace) -> str:
    """Where ``keys set`` will keep the key, in words; a ThoughtDeskError when nothing can:
    without a system keyring (keyring's null or fail backend) a key "stored" there would be
    silently lost, so the key file is used only after the user agreed (``--key-file`` here, or
    the app's question earlier)."""
    from thoughtdesk.core.generation.runs.providers import KEY_ENVIRONMENT
    from thoughtdesk.core.settings import config, secrets

    if isinstance(config.current_keyring(), secrets.FileKeyring):  # agreed earlier, in the app or here
        return f"{secrets.FileKeyring().path} (readable only by you, not encrypted)"
    if config.keyring_is_usable():
        return f"the system keyring ({config.keyring_name()})"
    key_file = secrets.FileKeyring().path
    if args.key_file:
        return f"{key_file} (readable only by you, not encrypted)"
    raise ThoughtDeskError(
        f"no system keyring (keyring backend: {config.keyring_name()}), so the {args.provider} key cannot be stored "
        f"securely and was NOT stored; run again with --key-file to keep API keys in {key_file} (readable only "
        f"by you, not encrypted), or set {KEY_ENVIRONMENT[args.provider]} in the environment instead"
    )


def cmd_keys_delete(args: argparse.Namespace) -> int:
    from thoughtdesk.core.settings.secrets import delete_api_key

    deleted = delete_api_key(args.provider)
    if args.json:
        print(json.dumps({"provider": args.provider, "deleted": deleted}))
    elif deleted:
        print(f"key for {args.provider} deleted from the keyring")
    else:
        print(f"no stored key for {args.provider}; nothing deleted")
    return EXIT_OK


def register(sub: argparse._SubParsersAction) -> None:
    """Add library, backup and keys."""
    p = add_command(
        sub,
        "library",
        description="Print the path of the library this command would use (--library, "
        "$THOUGHTDESK_LIBRARY, the one chosen in the app, else the default), or Datasette metadata "
        "for it (from the shipped datasette-metadata.json) that names the full-text index.",
    )
    actions = p.add_subparsers(dest="library_command", required=True, metavar="COMMAND")
    q = actions.add_parser("path", help="print the library's path")
    q.add_argument("--check", action="store_true", help="fail (exit 1) when no library exists there")
    q.set_defaults(func=cmd_library_path)
    q = actions.add_parser(
        "metadata",
        help="print Datasette metadata for the library (names its full-text index, hides internal tables)",
    )
    q.add_argument("--output", metavar="FILE", help="write it to FILE instead of standard output")
    q.add_argument("--force", action="store_true", help="overwrite a FILE that is not earlier metadata or export")
    q.set_defaults(func=cmd_library_metadata)

    p = add_command(
        sub,
        "backup",
        description="Copy a consistent snapshot of the library, even while the app or a run uses it. "
        "Without PATH the copy goes to a 'backups' folder beside the library, named with the date and "
        "time. A library is also copied there automatically before an upgrade changes its schema.",
    )
    p.add_argument("path", nargs="?", help="the new file to write (never an existing one)")
    p.add_argument("--json", action="store_true", help="print what was written as JSON")
    p.set_defaults(func=cmd_backup)

    p = add_command(
        sub,
        "keys",
        description="API keys live in the operating system's keyring, never in the library, logs or "
        "exports. `keys set` reads the key from the terminal without showing it, or the first line "
        "of standard input when piped.",
    )
    actions = p.add_subparsers(dest="keys_command", required=True, metavar="COMMAND")
    q = actions.add_parser("set", help="store PROVIDER's key (asked for, or read from standard input)")
    q.add_argument("provider", choices=KEY_PROVIDERS, help="the provider the key is for")
    q.add_argument(
        "--base-url",
        type=server_url,
        metavar="URL",
        help="the only server the key is sent to (default: the provider's official API)",
    )
    q.add_argument(
        "--key-file",
        action="store_true",
        help="where the system has no keyring: keep API keys in a file in the settings folder that only "
        "your user can read (NOT encrypted); remembered, as when the app asks",
    )
    q.add_argument("--json", action="store_true", help="print what was done as JSON")
    q.set_defaults(func=cmd_keys_set)
    q = actions.add_parser("list", help="which providers have a stored key (last four characters only)")
    q.add_argument("--json", action="store_true", help="print JSON")
    q.set_defaults(func=cmd_keys_list)
    q = actions.add_parser("delete", help="delete PROVIDER's stored key")
    q.add_argument("provider", choices=KEY_PROVIDERS, help="the provider whose key to delete")
    q.add_argument("--json", action="store_true", help="print what was done as JSON")
    q.set_defaults(func=cmd_keys_delete)
