"""The ``thoughtdesk`` command: the GUI without arguments, headless sub-commands otherwise.

Every sub-command works on the same core as the GUI and takes the global ``--library PATH``.
Exit status is 0 on success; on failure one line saying why goes to stderr and the status is 1
(2 for a command line that does not parse).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from collections.abc import Callable, Sequence

from thoughtdesk import __version__
from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.paths import resolve_library_path
from thoughtdesk.core.store import Library

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


class ProgressLine:
    """A one-line progress bar on stderr (only when stderr is a terminal)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.enabled = sys.stderr.isatty()
        self.started = time.monotonic()
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < 0.1 and done != total:
            return
        self._last = now
        if total:
            width = 30
            filled = int(width * done / total)
            bar = "#" * filled + "-" * (width - filled)
            sys.stderr.write(f"\r{self.label} [{bar}] {done}/{total}")
        else:
            sys.stderr.write(f"\r{self.label} {done}")
        sys.stderr.flush()

    def finish(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")


def open_library(args: argparse.Namespace, *, create: bool = True) -> Library:
    """The library named by ``--library`` (or the default one)."""
    return Library.open(resolve_library_path(args.library), create=create)


_open_library = open_library


def cmd_import(args: argparse.Namespace) -> int:
    from thoughtdesk.core.import_report import save_import_report
    from thoughtdesk.core.importing import import_dataset, import_thoughtsource

    mapping = None
    if args.save_mapping is not None and not args.save_mapping.strip():
        raise ThoughtDeskError("--save-mapping needs a name")
    if args.map:
        from thoughtdesk.core.saved_mappings import SavedMappings, resolve_mapping

        mapping = resolve_mapping(args.map)
    elif args.save_mapping:
        raise ThoughtDeskError("--save-mapping needs --map field=column,...")
    if not (args.dataset or mapping):  # a ThoughtSource collection file: checked before the library opens
        if args.on_error != "abort":
            raise ThoughtDeskError("--on-error skip needs --dataset or --map; a ThoughtSource "
                                   "collection file is imported whole or not at all")
        chosen = [f"--{name}" for name in ("split", "limit", "seed") if getattr(args, name) is not None]
        if chosen:
            raise ThoughtDeskError(f"{', '.join(chosen)} need --dataset or --map; a ThoughtSource "
                                   "collection file is imported whole")
    with _open_library(args) as lib:
        bar = ProgressLine("importing")
        if args.dataset or mapping:
            report = import_dataset(
                lib, args.path, dataset=args.dataset, mapping=mapping, collection=args.collection,
                splits=args.split, limit=args.limit, seed=args.seed, on_duplicate=args.on_duplicate,
                on_error=args.on_error, progress=bar,
            )
        else:
            report = import_thoughtsource(
                lib, args.path, collection=args.collection, on_duplicate=args.on_duplicate, progress=bar
            )
        bar.finish()
        saved = save_import_report(lib.path, report, args.path)
    print(report.summary)
    if args.save_mapping:
        SavedMappings().save(args.save_mapping, mapping)
        print(f"mapping saved as {args.save_mapping.strip()!r}; reuse it with --map {args.save_mapping.strip()!r}")
    if saved is not None:
        print(f"{len(report.bad_records)} bad record(s) skipped; report: {saved}")
    return EXIT_OK


def cmd_datasets(args: argparse.Namespace) -> int:
    from thoughtdesk.core.datasets import catalogue

    infos = catalogue()
    if args.name:
        from thoughtdesk.core.datasets import get_dataset

        info = get_dataset(args.name)  # an unknown name lists the known ones
        if args.download:
            return _download(info, args.cache)
        print(json.dumps(info.to_dict(), indent=2, ensure_ascii=False) if args.json else info.describe())
        return EXIT_OK
    if args.download:
        raise ThoughtDeskError("--download needs a dataset name, e.g. `thoughtdesk datasets gsm8k --download`")
    if args.json:
        print(json.dumps([info.to_dict() for info in infos], indent=2, ensure_ascii=False))
        return EXIT_OK
    width = max(len(i.name) for i in infos)
    for info in infos:
        print(f"{info.name.ljust(width)}  {info.answer_type:<14}  {info.licence:<20}  {info.title}")
    return EXIT_OK


def _download(info, cache: str | None) -> int:
    """Fetch a dataset's source files into the cache (resuming a partial download)."""
    from thoughtdesk.core.datasets import dataset_cache_dir, download_dataset
    from thoughtdesk.core.paths import user_cache_dir

    cache_dir = Path(cache) if cache else user_cache_dir() / "datasets"
    bar = ProgressLine(f"downloading {info.name}")
    try:
        paths = download_dataset(info, cache_dir, progress=lambda done, total: bar(done, total or 0))
    except KeyboardInterrupt:
        bar.finish()
        raise ThoughtDeskError(f"download of {info.name} interrupted; run the same command again "
                               "to resume it") from None
    bar.finish()
    folder = dataset_cache_dir(info, cache_dir)
    print(f"{len(paths)} file(s) of {info.name} in {folder}")
    print(f"import them with: thoughtdesk import {folder} --dataset {info.name}")
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    from thoughtdesk.core.importing import export_thoughtsource

    with _open_library(args, create=False) as lib:
        count = export_thoughtsource(lib, args.collection, args.path)
    print(f"{count} sample(s) of {args.collection!r} written to {args.path}")
    return EXIT_OK


def cmd_collections(args: argparse.Namespace) -> int:
    with _open_library(args) as lib:
        collections = lib.collections()
    if args.json:
        print(json.dumps(
            [{"name": c.name, "samples": c.samples, "created": c.created, "source": c.source}
             for c in collections],
            indent=2, ensure_ascii=False,
        ))
    else:
        for c in collections:
            print(f"{c.name}\t{c.samples} samples\tcreated {c.created}")
    return EXIT_OK


def cmd_stats(args: argparse.Namespace) -> int:
    with _open_library(args, create=False) as lib:
        cid = lib.require_collection(args.collection)
        stats = lib.split_stats(cid)
    rows = [
        {"dataset": s.dataset, "split": s.split, "samples": s.samples,
         "generated_cots": s.generated_cots, "answers": s.answers, "annotations": s.annotations}
        for s in stats
    ]
    if args.json:
        print(json.dumps({"collection": args.collection, "splits": rows}, indent=2, ensure_ascii=False))
        return EXIT_OK
    headers = ["dataset", "split", "samples", "generated_cots", "answers", "annotations"]
    table = [headers] + [[str(r[h]) for h in headers] for r in rows]
    total = ["total", "", *(str(sum(r[h] for r in rows)) for h in headers[2:])]
    table.append(total)
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    for row in table:
        print("  ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))))
    return EXIT_OK


def cmd_gui(args: argparse.Namespace) -> int:
    from thoughtdesk.ui.app import run_gui

    return run_gui(args.library)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="thoughtdesk",
        description="ThoughtDesk: a local workbench for chain-of-thought data. "
        "Without a command, the desktop application starts.",
    )
    parser.add_argument("--version", action="version", version=f"thoughtdesk {__version__}")
    parser.add_argument("--self-test", action="store_true",
                        help="check this installation (offscreen: library, import, window, local model) and exit")
    parser.add_argument("--offline", action="store_true", default=None,
                        help="offline mode for this run: no connection except to this machine")
    parser.add_argument(
        "--library", metavar="PATH",
        help="the library file to use (default: $THOUGHTDESK_LIBRARY, else the user data folder)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("import", help="import a ThoughtSource collection JSON file, a dataset's "
                       "original files (--dataset) or any table (--map)")
    p.add_argument("path", help="the file to import")
    p.add_argument("--collection", metavar="NAME", help="target collection (default: the file's name)")
    p.add_argument(
        "--on-duplicate", choices=["fail", "skip", "replace"], default="fail",
        help="what to do with samples already in the collection (default: fail)",
    )
    p.add_argument("--dataset", metavar="NAME",
                   help="read PATH as this dataset's original files (see `thoughtdesk datasets`)")
    p.add_argument("--map", metavar="FIELD=COLUMN,...",
                   help="generic import of JSON/JSONL/CSV/TSV: e.g. question=problem,answer=label, "
                   "or the name of a saved mapping")
    p.add_argument("--save-mapping", metavar="NAME",
                   help="after the import, save the --map mapping under NAME (shared with the GUI)")
    p.add_argument("--split", action="append", metavar="S", help="only these splits (repeatable)")
    p.add_argument("--limit", type=int, metavar="N", help="at most N samples per split")
    p.add_argument("--seed", type=int, metavar="K",
                   help="with --limit: a random sample drawn with this seed instead of the first N")
    p.add_argument("--on-error", choices=["abort", "skip"], default="abort",
                   help="bad records: abort (the default; nothing is stored) or skip them and "
                   "write a report next to the library")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("datasets", help="list the dataset catalogue (or one dataset's metadata)")
    p.add_argument("name", nargs="?", help="show this dataset's description, citation, licence, "
                   "homepage, source URLs and answer type")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--download", action="store_true",
                   help="fetch the dataset's files from its source URLs into the cache (resumes a "
                   "partial download; files already there and verified are reused)")
    p.add_argument("--cache", metavar="DIR", help="the download cache (default: the user cache folder)")
    p.set_defaults(func=cmd_datasets)

    p = sub.add_parser("export", help="export a collection as ThoughtSource collection JSON")
    p.add_argument("collection", help="the collection's name")
    p.add_argument("path", help="the file to write")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("collections", help="list the collections in the library")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_collections)

    p = sub.add_parser("stats", help="counts per dataset and split of a collection")
    p.add_argument("collection", help="the collection's name")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("gui", help="start the desktop application (the default)")
    p.set_defaults(func=cmd_gui)

    from thoughtdesk.commands import register_all

    register_all(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = getattr(args, "func", cmd_gui)
    from thoughtdesk.core.config import apply_startup_config

    apply_startup_config(offline=args.offline)  # offline mode, the key file if agreed
    if args.self_test:
        from thoughtdesk.ui.selftest import run_self_test

        func = run_self_test
    try:
        return func(args)
    except ThoughtDeskError as error:
        print(f"thoughtdesk: {error}", file=sys.stderr)
        return EXIT_FAIL
    except KeyboardInterrupt:
        print("thoughtdesk: interrupted; nothing was changed by the interrupted step", file=sys.stderr)
        return 130
    except OSError as error:
        print(f"thoughtdesk: {error.filename or ''}: {error.strerror or error}", file=sys.stderr)
        return EXIT_FAIL


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
