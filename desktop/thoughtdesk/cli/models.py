"""The models of ``thoughtdesk generate`` and ``critique``: their options, and the defaults the run
planner starts from (:mod:`thoughtdesk.core.generation.defaults`): the local model and the
providers' addresses chosen in the app's Settings, a local model's chat template."""

from __future__ import annotations

import argparse

from thoughtdesk.cli.common import base_url_options, number, server_urls, whole
from thoughtdesk.core.generation.defaults import TEMPERATURE_RANGE, ModelDefaults, default_chat, model_defaults
from thoughtdesk.core.generation.runs import ModelSpec, RunSpecError
from thoughtdesk.core.thinking import MAX_TOKENS_FOR_EFFORT, REASONING_EFFORTS, parse_think_tags

#: Max tokens per CoT when neither --max-tokens nor a reasoning effort says otherwise.
DEFAULT_MAX_TOKENS = 256

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
    text: str,
    options: dict[str, object],
    defaults: ModelDefaults,
    *,
    chat: bool | None = None,
    settings_effort: bool = False,
) -> ModelSpec:
    """``PROVIDER:MODEL`` with the command's options, filled in as the planner fills its form:
    ``llamacpp`` alone is the local model set in Settings; a remote model without ``--base-url``
    goes to the address set in Settings for its provider (else the official one); ``chat``
    unset is the provider's default (a local model's chat template; ``--completion`` turns it off).
    ``settings_effort``: without ``--reasoning-effort``, the effort set in Settings for the provider
    (generate's CoT models; critique and helper models keep the provider's default)."""
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
    if settings_effort and chosen.get("reasoning_effort") is None and defaults.effort(provider):
        chosen["reasoning_effort"] = defaults.effort(provider)
    if chosen.get("max_tokens") is None:
        # A model asked to think gets room for a typical trace; 256 cut nearly all of them.
        effort = chosen.get("reasoning_effort")
        chosen["max_tokens"] = MAX_TOKENS_FOR_EFFORT[str(effort)] if effort else DEFAULT_MAX_TOKENS
    if not chosen.get("reasoning_effort"):
        chosen.pop("reasoning_effort", None)
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
    return tuple(
        model_spec(text, options, defaults, chat=args.chat, settings_effort=True)
        for text in model_texts(args, defaults)
    )


def sampling_options(args: argparse.Namespace) -> dict[str, object]:
    """ModelSpec options common to ``generate``'s models (no ``chat``: it is per provider)."""
    options: dict[str, object] = {
        "temperature": args.temperature,
        "max_tokens": args.max_tokens,  # None: from the reasoning effort (model_spec)
        "timeout": args.timeout,
        "seed": args.model_seed,
        "n_ctx": args.n_ctx,  # llamacpp only (the default is ModelSpec's)
    }
    if getattr(args, "reasoning_effort", None):
        options["reasoning_effort"] = args.reasoning_effort
    if getattr(args, "think_tags", None) is not None:
        options["think_tags"] = think_tags_option(args.think_tags)
    if getattr(args, "stream", False):
        options["stream"] = True
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
        "--max-tokens",
        type=whole(1, 1_000_000),
        metavar="M",
        help=f"tokens per CoT (default {DEFAULT_MAX_TOKENS}; with a reasoning effort more: "
        + ", ".join(f"{effort} {tokens:,}" for effort, tokens in MAX_TOKENS_FOR_EFFORT.items())
        + ")",
    )
    add_reasoning_options(p)
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


def think_tags_option(text: str) -> tuple[str, str] | None:
    """``--think-tags OPEN,CLOSE`` (or ``none``) as ModelSpec's think_tags."""
    try:
        return parse_think_tags(text)
    except ValueError as error:
        raise RunSpecError(f"--think-tags: {error}") from None


def add_reasoning_options(p: argparse.ArgumentParser) -> None:
    """--reasoning-effort, --think-tags and --stream: how a reasoning model is asked and read."""
    p.add_argument(
        "--reasoning-effort",
        choices=REASONING_EFFORTS,
        metavar="EFFORT",
        help="how hard a reasoning model thinks: " + ", ".join(REASONING_EFFORTS) + " (sent as reasoning_effort "
        "to OpenAI-compatible servers, as a thinking budget to Anthropic, as enable_thinking to a local model's "
        "chat template; none turns thinking off where it can be); default: the one set in Settings for the "
        "provider, else the provider's own",
    )
    p.add_argument(
        "--think-tags",
        metavar="OPEN,CLOSE",
        help="the tags the model writes around its thinking, split off the visible text (default "
        "'<think>,</think>'; none: never split)",
    )
    p.add_argument(
        "--stream",
        action="store_true",
        help="openai: ask answers as a stream of events (some servers send the thinking only when streaming)",
    )
