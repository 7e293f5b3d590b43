"""Sub-commands over the library itself: import, datasets, export, collections."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from thoughtdesk.cli.commands import add_command
from thoughtdesk.cli.common import EXIT_OK, ProgressLine, library_for_import, open_library, spool_stdin, whole
from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.importing.formats import FLAT_FORMATS, PREFERENCE_FORMATS, PREFERENCE_SOURCES, STEP_FORMATS
from thoughtdesk.core.settings.saved import resolve_library_path


def cmd_import(args: argparse.Namespace) -> int:
    import tempfile

    from thoughtdesk.core.importing.importer import import_dataset, import_thoughtsource
    from thoughtdesk.core.importing.skip_log import save_skip_log

    if args.path == "-":  # standard input: spooled to a file, since readers sniff and re-read it
        if not args.collection:
            raise ThoughtDeskError("importing from standard input (-) needs --collection NAME")
        with tempfile.TemporaryDirectory(prefix="thoughtdesk-stdin-") as folder:
            args.path = str(spool_stdin(Path(folder)))
            return cmd_import(args)
    mapping = None
    if args.save_mapping is not None and not args.save_mapping.strip():
        raise ThoughtDeskError("--save-mapping needs a name")
    if args.map:
        from thoughtdesk.core.datasets.generic import first_row_is_data
        from thoughtdesk.core.importing.mappings import SavedMappings, resolve_mapping

        mapping = resolve_mapping(args.map)
        if args.no_header:
            mapping.header = False
        elif mapping.header and first_row_is_data(args.path):
            print(
                f"thoughtdesk: note: the first row of {args.path} looks like data, not a header; if it is, "
                "add --no-header and map columns by position (question=1,...)",
                file=sys.stderr,
            )
    elif args.no_header:
        raise ThoughtDeskError("--no-header needs --map: the columns are then named by position, e.g. question=1")
    elif args.save_mapping:
        raise ThoughtDeskError("--save-mapping needs --map field=column,...")
    from thoughtdesk.core.files import library_part
    from thoughtdesk.core.importing.detect import check_importable, import_of_the_library, options_needed

    what = library_part(args.path, resolve_library_path(args.library))
    if what is not None:  # never read: the library is opened below, and reading it would drop its locks
        raise ThoughtDeskError(import_of_the_library(args.path, what))
    check_importable(args.path)  # a picture or a binary file: said before any library is created
    from thoughtdesk.core.importing.detect import looks_like_trace_file

    if args.traces or (not (args.dataset or mapping) and looks_like_trace_file(args.path)):
        if args.dataset or mapping:
            raise ThoughtDeskError("--traces cannot be used with --dataset or --map")
        return _import_traces(args)
    if not (args.dataset or mapping):
        from thoughtdesk.core.critiques.dscb import looks_like_dscb

        if looks_like_dscb(args.path):
            return _import_dscb(args)
        from thoughtdesk.core.importing.step_files import step_file_format

        if step_file_format(args.path) is not None:
            return _import_steps(args)
        guidance = options_needed(args.path)  # a dataset's files or a table: which option imports it
        if guidance is not None:
            raise ThoughtDeskError(guidance)
    if not (args.dataset or mapping):  # a ThoughtSource collection file: checked before the library opens
        if args.on_error != "abort":
            raise ThoughtDeskError(
                "--on-error skip needs --dataset or --map; a ThoughtSource "
                "collection file is imported whole or not at all"
            )
        chosen = [f"--{name}" for name in ("split", "limit", "seed") if getattr(args, name) is not None]
        if chosen:
            raise ThoughtDeskError(
                f"{', '.join(chosen)} need --dataset or --map; a ThoughtSource collection file is imported whole"
            )
    with library_for_import(args) as lib:
        bar = ProgressLine("importing", unit="samples")
        if args.dataset or mapping:
            report = import_dataset(
                lib,
                args.path,
                dataset=args.dataset,
                mapping=mapping,
                collection=args.collection,
                splits=args.split,
                limit=args.limit,
                seed=args.seed,
                on_duplicate=args.on_duplicate,
                on_error=args.on_error,
                progress=bar,
            )
        else:
            report = import_thoughtsource(
                lib, args.path, collection=args.collection, on_duplicate=args.on_duplicate, progress=bar
            )
        bar.finish()
        saved = save_skip_log(lib.path, report, args.path)
    if args.save_mapping and mapping is not None:  # --save-mapping without --map was refused above
        SavedMappings().save(args.save_mapping, mapping)
    _print_import(args, lib.path, report, saved)
    return EXIT_OK


def _import_traces(args: argparse.Namespace) -> int:
    """A reasoning-trace JSON Lines file (``--traces``, or recognised by its first record)."""
    from thoughtdesk.core.importing.skip_log import save_skip_log
    from thoughtdesk.core.importing.traces import import_traces

    chosen = [f"--{name}" for name in ("limit", "seed", "save_mapping") if getattr(args, name) is not None]
    if chosen:
        raise ThoughtDeskError(f"{', '.join(chosen)} cannot be used with a reasoning-trace file; it is imported whole")
    if args.split is not None and len(args.split) != 1:
        raise ThoughtDeskError("a reasoning-trace file goes into one split: give --split once")
    with library_for_import(args) as lib:
        bar = ProgressLine("importing", unit="samples")
        report = import_traces(
            lib,
            args.path,
            collection=args.collection,
            split=args.split[0] if args.split else "train",
            on_duplicate=args.on_duplicate,
            on_error=args.on_error,
            progress=bar,
        )
        bar.finish()
        saved = save_skip_log(lib.path, report, args.path)
    _print_import(args, lib.path, report, saved)
    return EXIT_OK


def _import_dscb(args: argparse.Namespace) -> int:
    """A DS Critique Bank JSON Lines file, recognised by its records' fields."""
    from thoughtdesk.core.importing.dscb import import_dscb
    from thoughtdesk.core.importing.skip_log import save_skip_log

    chosen = [f"--{name}" for name in ("limit", "seed", "save_mapping") if getattr(args, name) is not None]
    if chosen:
        raise ThoughtDeskError(f"{', '.join(chosen)} cannot be used with a DS Critique Bank file; it is imported whole")
    if args.split is not None and len(args.split) != 1:
        raise ThoughtDeskError("a DS Critique Bank file goes into one split: give --split once")
    with library_for_import(args) as lib:
        bar = ProgressLine("importing", unit="samples")
        report = import_dscb(
            lib,
            args.path,
            collection=args.collection,
            split=args.split[0] if args.split else None,
            on_duplicate=args.on_duplicate,
            on_error=args.on_error,
            progress=bar,
        )
        bar.finish()
        saved = save_skip_log(lib.path, report, args.path)
    _print_import(args, lib.path, report, saved)
    return EXIT_OK


def _import_steps(args: argparse.Namespace) -> int:
    """A ProcessBench or PRM800K file, recognised by its first record's fields."""
    from thoughtdesk.core.importing.skip_log import save_skip_log
    from thoughtdesk.core.importing.step_files import import_step_file, read_step_file

    chosen = [f"--{name}" for name in ("limit", "seed", "save_mapping") if getattr(args, name) is not None]
    if chosen:
        raise ThoughtDeskError(
            f"{', '.join(chosen)} cannot be used with a ProcessBench or PRM800K file; it is imported whole"
        )
    if args.on_error != "abort":
        raise ThoughtDeskError(
            "--on-error skip cannot be used with a ProcessBench or PRM800K file; it is imported whole"
        )
    if args.split is not None and len(args.split) != 1:
        raise ThoughtDeskError("a ProcessBench or PRM800K file goes into one split: give --split once")
    read = read_step_file(args.path)  # checked before any library is opened or created
    with library_for_import(args) as lib:
        bar = ProgressLine("importing", unit="samples")
        report = import_step_file(
            lib,
            read,
            collection=args.collection,
            split=args.split[0] if args.split else None,
            on_duplicate=args.on_duplicate,
            progress=bar,
        )
        bar.finish()
        saved = save_skip_log(lib.path, report, args.path)
    _print_import(args, lib.path, report, saved)
    return EXIT_OK


def _print_import(args: argparse.Namespace, library: Path, report, saved: Path | None) -> None:
    """What an import did: a JSON object with ``--json``, else lines of text."""
    mapping_name = (getattr(args, "save_mapping", None) or "").strip()
    if args.json:
        print(
            json.dumps(
                {
                    "library": str(library),
                    "collection": report.collection,
                    "created_collection": report.created,
                    "inserted": report.inserted,
                    "replaced": report.replaced,
                    "skipped_duplicates": report.skipped,
                    "bad_records": len(report.bad_records),
                    "skip_log": str(saved) if saved is not None else None,
                    "saved_mapping": mapping_name or None,
                },
                ensure_ascii=False,
            )
        )
        return
    print(report.summary)
    if mapping_name:
        print(f"mapping saved as {mapping_name!r}; reuse it with --map {mapping_name!r}")
    if saved is not None:
        print(f"{len(report.bad_records)} bad record(s) skipped; skip log: {saved}")


def cmd_datasets(args: argparse.Namespace) -> int:
    from thoughtdesk.core.datasets import catalogue

    infos = catalogue()
    if args.name:
        from thoughtdesk.core.datasets import get_dataset

        info = get_dataset(args.name)  # an unknown name lists the known ones
        if args.download:
            return _download(info, args.cache, as_json=args.json)
        print(json.dumps(info.to_dict(), indent=2, ensure_ascii=False) if args.json else info.describe())
        return EXIT_OK
    if args.download:
        raise ThoughtDeskError("--download needs a dataset name, e.g. `thoughtdesk datasets gsm8k --download`")
    if args.json:
        print(json.dumps([info.to_dict() for info in infos], indent=2, ensure_ascii=False))
        return EXIT_OK
    # Columns as wide as their widest cell, under a header; the licence, the longest and most
    # varied text, comes last so that it cannot push the other columns out of line.
    rows = [("NAME", "ANSWER TYPE", "TITLE", "LICENCE")]
    rows += [(info.name, info.answer_type, info.title, info.licence) for info in infos]
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[3])
    return EXIT_OK


def _download(info, cache: str | None, *, as_json: bool = False) -> int:
    """Fetch a dataset's source files into the cache (resuming a partial download)."""
    from thoughtdesk.core.datasets import dataset_cache_dir, download_dataset
    from thoughtdesk.core.paths import user_cache_dir

    cache_dir = Path(cache) if cache else user_cache_dir() / "datasets"
    bar = ProgressLine(f"downloading {info.name}", unit="bytes")
    try:
        paths = download_dataset(info, cache_dir, progress=lambda done, total: bar(done, total or 0))
    except KeyboardInterrupt:
        bar.finish()
        raise ThoughtDeskError(
            f"download of {info.name} interrupted; run the same command again to resume it"
        ) from None
    bar.finish()
    folder = dataset_cache_dir(info, cache_dir)
    if as_json:
        print(json.dumps({"dataset": info.name, "folder": str(folder), "files": [str(p) for p in paths]}))
        return EXIT_OK
    print(f"{len(paths)} file(s) of {info.name} in {folder}")
    print(f"import them with: thoughtdesk import {folder} --dataset {info.name}")
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    import shutil
    import tempfile

    from thoughtdesk.core.datasets.ts_extras import side_path
    from thoughtdesk.core.files import check_export_target
    from thoughtdesk.core.importing.importer import export_thoughtsource

    if args.path == "-":  # standard output: written to a file first, so a failure sends nothing half-done
        with tempfile.TemporaryDirectory(prefix="thoughtdesk-stdout-") as folder:
            args.path = str(Path(folder) / f"export{_SUFFIXES.get(args.format, '.json')}")
            args.stdout = True
            return cmd_export(args)
    to_stdout = getattr(args, "stdout", False)
    chat_options = [
        f"--{n.replace('_', '-')}"
        for n in ("correct_only", "preferred_only", "label", "system", "chat_thinking")
        if getattr(args, n)
    ]
    if chat_options and args.format != "chat-jsonl":
        raise ThoughtDeskError(f"{', '.join(chat_options)} only apply to --format chat-jsonl")
    preference_options = [f"--{n}" for n in ("source", "judge") if getattr(args, n)]
    if preference_options and args.format not in PREFERENCE_FORMATS:
        raise ThoughtDeskError(f"{', '.join(preference_options)} only apply to --format dpo or reward")
    if args.format == "parquet":
        from thoughtdesk.core.importing.flat_export import require_pyarrow

        require_pyarrow()  # said before anything is opened or written
    also = ""
    with open_library(args, create=False) as lib:
        target = check_export_target(args.path, libraries=[lib.path], force=args.force)
        if args.format in FLAT_FORMATS:
            from thoughtdesk.core.importing.flat_export import ChatFilter, describe_written, export_flat

            bar = ProgressLine("exporting", unit="samples")
            count = export_flat(
                lib,
                args.collection,
                target,
                args.format,
                filters=ChatFilter(args.correct_only, args.preferred_only, tuple(args.label or ())),
                system=args.system,
                thinking=args.chat_thinking or "think",
                progress=bar,
            )
            bar.finish()
            written = describe_written(lib, args.collection, args.format, count)  # what the rows are
        elif args.format in PREFERENCE_FORMATS:
            from thoughtdesk.core.importing.preference_export import export_preferences

            done = export_preferences(
                lib, args.collection, target, args.format, source=args.source or "both", judge=args.judge
            )
            count = done.records
            left = f"; {done.conflicts} pair(s) its sources disagree on left out" if done.conflicts else ""
            written = (
                f"{count} preference pair(s) ({args.format}; from {done.human} human preference(s) and "
                f"{done.judge} consistent judge verdict pair(s){left})"
            )
        elif args.format == "dscb":
            from thoughtdesk.core.importing.dscb import export_dscb

            bar = ProgressLine("exporting", unit="records")
            count = export_dscb(lib, args.collection, target, progress=lambda done: bar(done, 0))
            bar.finish()
            written = f"{count} DS Critique Bank record(s)"
        elif args.format in STEP_FORMATS:
            from thoughtdesk.core.importing.step_files import export_steps

            bar = ProgressLine("exporting", unit="records")
            result = export_steps(lib, args.collection, target, args.format, progress=lambda done: bar(done, 0))
            bar.finish()
            count = result.records
            left = f" ({result.left_out} CoT(s) without {args.format} labels left out)" if result.left_out else ""
            written = f"{count} {args.format} record(s){left}"
        else:
            samples = next((c.samples for c in lib.collections() if c.name == args.collection), 0)
            bar = ProgressLine("exporting", unit="samples")
            count = export_thoughtsource(
                lib,
                args.collection,
                target,
                progress=lambda done: bar(done, samples),
                side_file=not to_stdout,  # one stream: ThoughtDesk's extras stay inline
            )
            bar.finish()
            written = f"{count} sample(s)"
            side = side_path(target)
            if not to_stdout and side.is_file():
                also = f" (ThoughtDesk's extras, which ThoughtSource's loader refuses, in {side.name} beside it)"
    where = "standard output" if to_stdout else args.path
    if to_stdout:
        with open(target, "rb") as source:
            shutil.copyfileobj(source, sys.stdout.buffer)
        sys.stdout.flush()
    if args.json:
        print(
            json.dumps({"collection": args.collection, "format": args.format, "records": count, "path": where}),
            file=sys.stderr if to_stdout else sys.stdout,
        )
    else:
        print(
            f"{written} of {args.collection!r} written to {where}{also}", file=sys.stderr if to_stdout else sys.stdout
        )
    return EXIT_OK


#: What each export format counts, for the message after it.
_SUFFIXES = {
    "dscb": ".jsonl",
    "processbench": ".jsonl",
    "prm800k": ".jsonl",
    "prm-jsonl": ".jsonl",
    "dpo": ".jsonl",
    "reward": ".jsonl",
    "samples-jsonl": ".jsonl",
    "chat-jsonl": ".jsonl",
    "samples-csv": ".csv",
    "answers-csv": ".csv",
    "parquet": ".parquet",
}


def cmd_collections(args: argparse.Namespace) -> int:
    with open_library(args) as lib:
        collections = lib.collections()
    if args.json:
        print(
            json.dumps(
                [{"name": c.name, "samples": c.samples, "created": c.created, "source": c.source} for c in collections],
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        for c in collections:
            print(f"{c.name}\t{c.samples} samples\tcreated {c.created}")
    return EXIT_OK


def register(sub: argparse._SubParsersAction) -> None:
    """Add import, datasets, export, collections and stats."""
    p = add_command(sub, "import")
    p.add_argument("path", help="the file to import, or - for standard input (then --collection is needed)")
    p.add_argument("--json", action="store_true", help="print what was imported as one JSON object")
    p.add_argument("--collection", metavar="NAME", help="target collection (default: the file's name)")
    p.add_argument(
        "--on-duplicate",
        choices=["fail", "skip", "replace"],
        default="fail",
        help="what to do with samples already in the collection (default: fail)",
    )
    p.add_argument(
        "--dataset", metavar="NAME", help="read PATH as this dataset's original files (see `thoughtdesk datasets`)"
    )
    p.add_argument(
        "--map",
        metavar="FIELD=COLUMN,...",
        help="generic import of JSON/JSONL/CSV/TSV: e.g. question=problem,answer=label, or the name of a saved mapping",
    )
    p.add_argument(
        "--traces",
        action="store_true",
        help="read PATH as reasoning traces (JSONL: chat records whose assistant turn holds <think>...</think> or "
        "a reasoning field; question + reasoning + answer records as OpenThoughts and s1K share them): each "
        "line a sample with a generated CoT, its thinking apart (docs/reasoning.md); found by itself in such files",
    )
    p.add_argument(
        "--no-header",
        action="store_true",
        help="with --map: the CSV/TSV file's first row is data (as in MMLU's files); its columns are "
        "named by position, e.g. --map question=1,choices=2|3|4|5,answer=6",
    )
    p.add_argument(
        "--save-mapping",
        metavar="NAME",
        help="after the import, save the --map mapping under NAME (shared with the GUI)",
    )
    p.add_argument(
        "--split",
        action="append",
        metavar="S",
        help="only these splits (repeatable); for a DS Critique Bank file the split to import into "
        "(default: the file's name without DSCB-, e.g. train-silver)",
    )
    p.add_argument("--limit", type=whole(1), metavar="N", help="at most N samples per split")
    p.add_argument(
        "--seed",
        type=whole(0),
        metavar="K",
        help="with --limit: a random sample drawn with this seed instead of the first N",
    )
    p.add_argument(
        "--on-error",
        choices=["abort", "skip"],
        default="abort",
        help="bad records: abort (the default; nothing is stored) or skip them and list them in a skip log next to the library",
    )
    p.set_defaults(func=cmd_import)

    p = add_command(sub, "datasets")
    p.add_argument(
        "name",
        nargs="?",
        help="show this dataset's description, citation, licence, homepage, source URLs and answer type",
    )
    p.add_argument("--json", action="store_true", help="print JSON (with --download: the files fetched)")
    p.add_argument(
        "--download",
        action="store_true",
        help="fetch the dataset's files from its source URLs into the cache (resumes a "
        "partial download; files already there and verified are reused)",
    )
    p.add_argument("--cache", metavar="DIR", help="the download cache (default: the user cache folder)")
    p.set_defaults(func=cmd_datasets)

    p = add_command(sub, "export")
    p.add_argument("collection", help="the collection's name")
    p.add_argument("path", help="the file to write, or - for standard output")
    p.add_argument("--json", action="store_true", help="print what was written as JSON (on stderr when PATH is -)")
    p.add_argument(
        "--force",
        action="store_true",
        help="overwrite PATH even when it is not an earlier export (never the open library itself)",
    )
    p.add_argument(
        "--format",
        choices=["thoughtsource", "dscb", *STEP_FORMATS, *FLAT_FORMATS, *PREFERENCE_FORMATS],
        default="thoughtsource",
        help="thoughtsource (the default; critiques and ratings in the thoughtdesk_critiques field of each CoT); "
        "dscb (one DS Critique Bank record per generated CoT, JSON Lines); processbench, prm800k (step-labelled "
        "records, imported ones equal to the file's; docs/steps.md); prm-jsonl (prompt, completions and per-step "
        "labels for process reward model training); samples-jsonl (one object per sample "
        "with its CoTs, answers and verdicts); samples-csv (one row per generated CoT); answers-csv (one row per "
        "answer); chat-jsonl (messages for fine-tuning); parquet (the samples-csv rows; needs pyarrow); dpo (TRL "
        "prompt/chosen/rejected preference pairs); reward (TRL chosen/rejected conversations for reward models)",
    )
    p.add_argument(
        "--source",
        choices=list(PREFERENCE_SOURCES),
        help="dpo/reward: pairs from human pairwise preferences, consistent judge verdicts, or both (default both)",
    )
    p.add_argument("--judge", metavar="MODEL", help="dpo/reward: only this judge model's verdicts")
    p.add_argument("--correct-only", action="store_true", help="chat-jsonl: only CoTs with an answer judged correct")
    p.add_argument("--preferred-only", action="store_true", help="chat-jsonl: only CoTs a reviewer marked preferred")
    p.add_argument(
        "--label",
        action="append",
        metavar="KEY",
        help="chat-jsonl: only CoTs annotated with this label set to true (repeatable: all of them)",
    )
    p.add_argument("--system", metavar="TEXT", help="chat-jsonl: a system message put before every example")
    p.add_argument(
        "--chat-thinking",
        choices=("think", "field", "none"),
        help="chat-jsonl: a CoT's thinking as <think>...</think> before the answer (the default), as the "
        "assistant message's reasoning_content field, or left out",
    )
    p.set_defaults(func=cmd_export)

    p = add_command(sub, "collections")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_collections)
