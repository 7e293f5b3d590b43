"""The models of ``thoughtdesk generate`` and ``critique``: their options, and the defaults the run
planner starts from (:mod:`thoughtdesk.core.generation.defaults`): the local model and the
providers' addresses chosen in the app's Settings, a local model's chat template."""

from __future__ import annotations

import argparse

from thoughtdesk.cli.common import base_url_options, number, server_urls, whole
from thoughtdesk.core.generation.defaults import TEMPERATURE_RANGE, ModelDefaults, default_chat, model_defaults
from thoughtdesk.core.generation.runs import ModelSpec, RunSpecError

LOW, HIGH = TEMPERATURE_RANGE


def temperature(text: str) -> float:
    """An argparse type: a sampling temperature in the one range the planner allows too."""
    return number(LOW, HIGH)(text)


def model_texts(args: argparse.Namespace, defaults: ModelDefaults) -> list[str]:
    """``--model`` as given, else the model the planner would start with (the local model set in
    Settings, else the first enabled provider's default model)."""
    if args.model:
        return list(args.model)
    chosen = defaults.default_model()
    if chosen is None and defaults.offline and defaults.providers:
        raise RunSpecError(
            "--model PROVIDER:MODEL is needed: offline mode is on and Settings choose no local model and no "
            "provider on this machine, e.g. --model llamacpp:/path/model.gguf (or turn offline mode off in "
            "Settings, or with THOUGHTDESK_OFFLINE=0)"
        )
    if chosen is None:
        raise RunSpecError(
            "--model PROVIDER:MODEL is needed (no local model or provider is chosen in the app's Settings), "
            "e.g. --model openai:gpt-4o-mini or --model llamacpp:/path/model.gguf"
        )
    return [chosen]


def model_spec(
    text: str, options: dict[str, object], defaults: ModelDefaults, *, chat: bool | None = None
) -> ModelSpec:
    """``PROVIDER:MODEL`` with the command's options, filled in as the planner fills its form:
    ``llamacpp`` alone is the local model set in Settings; a remote model without ``--base-url``
    goes to the address set in Settings for its provider (else the official one); ``chat``
    unset is the provider's default (a local model's chat template; ``--completion`` turns it off)."""
    provider = text.partition(":")[0]
    if provider == "llamacpp" and not text.partition(":")[2].strip():
        if not defaults.local_model:
            raise RunSpecError(
                f"--model {text!r}: name the GGUF file (llamacpp:/path/model.gguf); no local model is set in the "
                "app's Settings"
            )
        text = f"llamacpp:{defaults.local_model}"
    chosen = dict(options)
    if "base_url" not in chosen and defaults.base_url(provider):
        chosen["base_url"] = defaults.base_url(provider)
    if chat is None:
        chat = default_chat(provider, str(chosen.get("endpoint", "chat")))
        if provider == "llamacpp" and "completion_template" in chosen:
            chat = False  # a completion template is a raw completion's wrapper
    chosen["chat"] = chat
    return ModelSpec.parse(text, **chosen)


def generation_models(args: argparse.Namespace, defaults: ModelDefaults | None = None) -> tuple[ModelSpec, ...]:
    """The models of ``generate``, from its options and the app's Settings."""
    defaults = defaults or model_defaults()
    options = sampling_options(args)
    return tuple(model_spec(text, options, defaults, chat=args.chat) for text in model_texts(args, defaults))


def sampling_options(args: argparse.Namespace) -> dict[str, object]:
    """ModelSpec options common to ``generate``'s models (no ``chat``: it is per provider)."""
    options: dict[str, object] = {
        "temperature": args.temperature,
        "max_tokens": args.max_tokens,
        "timeout": args.timeout,
        "seed": args.model_seed,
        "n_ctx": args.n_ctx,  # llamacpp only (the default is ModelSpec's)
    }
    options.update(base_url_options(args.base_url))
    if args.endpoint:
        options["endpoint"] = args.endpoint
    if args.completion_template:
        options["completion_template"] = args.completion_template.replace("\\n", "\n")
    return options


def add_model_options(p: argparse.ArgumentParser) -> None:
    """``generate``'s model options: which models, where, in which form, how they sample."""
    p.add_argument(
        "--model",
        action="append",
        metavar="PROVIDER:MODEL",
        help="openai:NAME, anthropic:NAME or llamacpp:PATH.gguf (repeatable; `llamacpp` alone: the local model "
        "set in the app's Settings); default: the model the run planner starts with (the local model set in "
        "Settings, else the first provider enabled there). API keys come from the system keyring, else from "
        "OPENAI_API_KEY / ANTHROPIC_API_KEY",
    )
    p.add_argument(
        "--base-url",
        type=server_urls,
        action="append",
        metavar="URL",
        help="OpenAI-compatible or Anthropic server address (default: the one set in the app's Settings, else "
        "the official API); repeat it (or separate with commas) for a pool of OpenAI-compatible servers "
        "serving the same model",
    )
    p.add_argument("--endpoint", choices=["chat", "completions"], help="OpenAI endpoint (default chat)")
    add_chat_options(p)
    p.add_argument(
        "--temperature",
        type=temperature,
        default=0.0,
        metavar="T",
        help=f"sampling temperature, {LOW:g} to {HIGH:g} (default 0: greedy, the same CoT every time)",
    )
    p.add_argument(
        "--max-tokens", type=whole(1, 1_000_000), default=256, metavar="M", help="tokens per CoT (default 256)"
    )
    p.add_argument(
        "--n-ctx",
        type=whole(64, 1_000_000),
        default=2048,
        metavar="N",
        help="llamacpp: context size in tokens (default 2048; a local scorer's memory grows with it)",
    )
    p.add_argument("--timeout", type=number(1, 86400), default=120.0, metavar="S", help="seconds per call")
    p.add_argument("--model-seed", type=whole(0), metavar="K", help="sampling seed sent to the model")


def add_chat_options(p: argparse.ArgumentParser) -> None:
    """--chat / --completion (one of them) and --completion-template: how prompts reach a model
    (generate, critique and rationales extract; defaults from core/generation/defaults.py)."""
    form = p.add_mutually_exclusive_group()
    form.add_argument(
        "--chat",
        dest="chat",
        action="store_const",
        const=True,
        default=None,
        help="send prompts as chat messages (the default for llamacpp, whose GGUF chat template is used, "
        "and for the chat endpoint)",
    )
    form.add_argument(
        "--completion",
        "--no-chat",
        dest="chat",
        action="store_const",
        const=False,
        help="llamacpp: send each prompt as a raw completion (as it is, or wrapped by --completion-template) "
        "instead of through the GGUF's chat template",
    )
    p.add_argument(
        "--completion-template",
        metavar="TEXT",
        help="llamacpp raw completion (implies --completion): wrap each prompt, {prompt} marking where it goes "
        "(\\n for a line break), e.g. '<start_of_turn>user\\n{prompt}<end_of_turn>\\n"
        "<start_of_turn>model\\n'",
    )
