"""``thoughtdesk models``: the local model library (docs/models.md): add GGUF files or a folder of
them, list them with what their headers say and whether they fit this machine, show one, remove
one, download one. A registered name works wherever a local model is given: ``--model llamacpp:NAME``."""

from __future__ import annotations

import argparse
import json
from typing import Any

from thoughtdesk.cli.commands import add_command
from thoughtdesk.cli.common import EXIT_OK, ProgressLine, whole
from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.models.fit import available_memory, memory_fit
from thoughtdesk.core.models.registry import ModelEntry, ModelRegistry

#: The context size the memory estimate uses unless --n-ctx says otherwise (ModelSpec's default).
DEFAULT_N_CTX = 2048

EXAMPLES: dict[str, tuple[str, ...]] = {
    "models": (
        "thoughtdesk models add ~/Downloads/qwen3-1.7b-q4_k_m.gguf --name qwen3",
        "thoughtdesk models list",
        "thoughtdesk generate quiz --model llamacpp:qwen3 --limit 5",
    ),
    "models add": (
        "thoughtdesk models add ~/Downloads/qwen3-1.7b-q4_k_m.gguf --name qwen3",
        "thoughtdesk models add /media/usb/models --copy",
    ),
    "models list": ("thoughtdesk models list", "thoughtdesk models list --json --n-ctx 8192"),
    "models show": ("thoughtdesk models show qwen3", "thoughtdesk models show qwen3 --json"),
    "models remove": ("thoughtdesk models remove qwen3",),
    "models download": (
        "thoughtdesk models download --list",
        "thoughtdesk models download qwen3-1.7b",
        "thoughtdesk models download https://huggingface.co/unsloth/Qwen3-1.7B-GGUF/resolve/main/"
        "Qwen3-1.7B-Q4_K_M.gguf --name qwen3 --sha256 HEX",
    ),
}


def cmd_add(args: argparse.Namespace) -> int:
    registry = ModelRegistry()
    line = ProgressLine("copying" if args.copy else "checksumming", unit="bytes")
    try:
        results = registry.add(args.path, name=args.name, copy=args.copy, progress=lambda d, t, _p: line(d, t))
    finally:
        line.finish()
    if args.json:
        print(
            json.dumps(
                {"models": [{**_entry_json(r.entry), "outcome": r.outcome, "source": str(r.source)} for r in results]},
                indent=2,
                ensure_ascii=False,
            )
        )
        return EXIT_OK
    for result in results:
        said = {
            "added": "added",
            "known": "already registered",
            "moved": "found again (its file had moved)",
        }[result.outcome]
        print(f"{result.entry.name}\t{said}\t{result.entry.path}")
    return EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    entries = ModelRegistry().entries()
    free = available_memory()
    if args.json:
        print(
            json.dumps(
                {"models": [_entry_json(e, args.n_ctx, free) for e in entries], "available_bytes": free},
                indent=2,
                ensure_ascii=False,
            )
        )
        return EXIT_OK
    if not entries:
        print("no models registered; add one with `thoughtdesk models add FILE.gguf` (or a folder of them)")
        return EXIT_OK
    for entry in entries:
        status = entry.status()
        fit = memory_fit(entry, args.n_ctx, free)
        where = entry.path if status == "ok" else f"{status.upper()}: {entry.path}"
        print(
            f"{entry.name}\t{entry.architecture}\t{entry.quantization or '?'}\t{_params(entry.parameter_count)}\t"
            f"ctx {entry.context_length or '?'}\t{entry.size / 1e9:.2f} GB\t{fit.describe()}\t{where}"
        )
    return EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    from thoughtdesk.core.models.gpu import detect_gpu, offload_plan  # loads llama.cpp's library: show only

    entry = ModelRegistry().get(args.name)
    free = available_memory()
    record = _entry_json(entry, args.n_ctx, free)
    fit = memory_fit(entry, args.n_ctx, free)
    plan = offload_plan(detect_gpu(), fit.needed, entry.size, entry.block_count)
    record["gpu"] = {"n_gpu_layers": plan.n_gpu_layers, "reason": plan.reason}
    if args.json:
        print(json.dumps(record, indent=2, ensure_ascii=False))
        return EXIT_OK
    rows = [
        ("name", entry.name),
        ("status", record["status"]),
        ("path", entry.path),
        ("size", f"{entry.size:,} bytes ({entry.size / 1e9:.2f} GB)"),
        ("sha256", entry.sha256),
        ("architecture", entry.architecture),
        ("model name", entry.model_name or "-"),
        ("parameters", f"{entry.parameter_count:,} ({_params(entry.parameter_count)})"),
        ("quantization", entry.quantization or "-"),
        ("context length", f"{entry.context_length:,}" if entry.context_length else "-"),
        ("chat template", "yes" if entry.chat_template else "no"),
        ("thinks", "yes (think tags in the template)" if entry.thinks else "no"),
        ("license", entry.license or "-"),
        ("memory", fit.describe()),
        ("with scoring", memory_fit(entry, args.n_ctx, fit.available, scoring=True).describe()),
        ("GPU", f"{plan.describe()} (n_gpu_layers {plan.n_gpu_layers})"),
        ("use it as", f"--model llamacpp:{entry.name}"),
    ]
    for label, value in rows:
        print(f"{label + ':':16}{value}")
    return EXIT_OK


def cmd_remove(args: argparse.Namespace) -> int:
    entry = ModelRegistry().remove(args.name)
    if args.json:
        print(json.dumps({"removed": entry.name, "path": entry.path}, ensure_ascii=False))
    else:
        print(f"removed {entry.name} from the model library; the file stays at {entry.path}")
    return EXIT_OK


def cmd_download(args: argparse.Namespace) -> int:
    from thoughtdesk.core.models.catalog import CATALOG, catalog_model
    from thoughtdesk.core.models.download import download_model

    if args.list:
        if args.json:
            print(json.dumps({"models": [model.to_json() for model in CATALOG]}, indent=2, ensure_ascii=False))
            return EXIT_OK
        for model in CATALOG:
            print(f"{model.name}\t{model.size / 1e9:.2f} GB\t{model.licence}\t{model.good_for}")
        print("download one with `thoughtdesk models download NAME` (nothing is downloaded until you ask)")
        return EXIT_OK
    if not args.url:
        raise ThoughtDeskError("models download: give a URL or a name from `thoughtdesk models download --list`")
    url, name = args.url, args.name
    curated = catalog_model(args.url) if "://" not in args.url else None
    if curated is not None:
        url, name = curated.url, name or curated.name
    elif "://" not in url:
        names = ", ".join(model.name for model in CATALOG)
        raise ThoughtDeskError(f"models download: {url!r} is neither a URL nor a curated model ({names})")
    line = ProgressLine(f"downloading {name or url.rsplit('/', 1)[-1]}", unit="bytes")
    try:
        entry = download_model(
            url,
            name=name,
            sha256=args.sha256,
            progress=lambda done, total: line(done, total or 0),
            keep_partial=not args.remove_partial,
        )
    finally:
        line.finish()
    if args.json:
        print(json.dumps(_entry_json(entry, DEFAULT_N_CTX, available_memory()), indent=2, ensure_ascii=False))
    else:
        checked = "checksum verified" if args.sha256 else "no checksum given, SHA-256 recorded"
        print(f"{entry.name}\tdownloaded and registered ({checked})\t{entry.path}")
    return EXIT_OK


def _params(count: int) -> str:
    if count >= 1e9:
        return f"{count / 1e9:.1f}B"
    return f"{count / 1e6:.0f}M"


def _entry_json(entry: ModelEntry, n_ctx: int = DEFAULT_N_CTX, free: int | None = None) -> dict[str, Any]:
    record = entry.to_json()
    record["status"] = entry.status()
    record["fit"] = memory_fit(entry, n_ctx, free).to_json()
    record["fit_with_scoring"] = memory_fit(entry, n_ctx, free, scoring=True).to_json()
    return record


def register(sub: argparse._SubParsersAction) -> None:
    """``models`` and its sub-commands."""
    models = add_command(sub, "models")
    actions = models.add_subparsers(dest="models_command", metavar="ACTION", required=True)

    p = actions.add_parser("add", help="register a GGUF file, or every GGUF file under a folder")
    p.add_argument("path", metavar="FILE_OR_DIR", help="a .gguf file, or a folder (a USB stick) searched for them")
    p.add_argument("--name", help="the model's name (one file only; default: the file's name without .gguf)")
    how = p.add_mutually_exclusive_group()
    how.add_argument(
        "--copy", action="store_true", help="copy the files into the models folder ($THOUGHTDESK_MODELS_DIR)"
    )
    how.add_argument(
        "--link", dest="copy", action="store_false", help="register the files where they are (the default)"
    )
    p.add_argument("--json", action="store_true", help="print what was registered as JSON")
    p.set_defaults(func=cmd_add)

    context: dict[str, Any] = {
        "type": whole(1),
        "default": DEFAULT_N_CTX,
        "metavar": "N",
        "help": f"the context size the memory estimate is for (default {DEFAULT_N_CTX})",
    }
    p = actions.add_parser("list", help="the registered models, what they are and whether they fit this machine")
    p.add_argument("--json", action="store_true", help="a JSON object with the list under `models`")
    p.add_argument("--n-ctx", **context)
    p.set_defaults(func=cmd_list)

    p = actions.add_parser("show", help="one registered model in full")
    p.add_argument("name", metavar="NAME", help="the model's registered name")
    p.add_argument("--json", action="store_true", help="print it as JSON")
    p.add_argument("--n-ctx", **context)
    p.set_defaults(func=cmd_show)

    p = actions.add_parser("remove", help="unregister a model (its file is not deleted)")
    p.add_argument("name", metavar="NAME", help="the model's registered name")
    p.add_argument("--json", action="store_true", help="print what was removed as JSON")
    p.set_defaults(func=cmd_remove)

    p = actions.add_parser(
        "download", help="download a GGUF model (resumable; checked before it is registered), only when asked"
    )
    p.add_argument(
        "url",
        metavar="URL_OR_NAME",
        nargs="?",
        help="a plain URL or a Hugging Face /resolve/ URL of a .gguf file, or a curated model's name (--list)",
    )
    p.add_argument("--list", action="store_true", help="the curated models: sizes, licences, what each is for")
    p.add_argument("--name", help="the model's name (default: the file's name without .gguf)")
    p.add_argument("--sha256", metavar="HEX", help="the file's SHA-256: a file that differs is removed, not registered")
    p.add_argument(
        "--remove-partial",
        action="store_true",
        help="on a failure or Ctrl+C, delete the bytes downloaded so far (default: keep them to resume)",
    )
    p.add_argument("--json", action="store_true", help="print the registered model as JSON")
    p.set_defaults(func=cmd_download)

    for name, parser in [("models", models), *((f"models {n}", c) for n, c in actions.choices.items())]:
        parser.epilog = "examples:\n" + "\n".join(f"  {line}" for line in EXAMPLES[name])
