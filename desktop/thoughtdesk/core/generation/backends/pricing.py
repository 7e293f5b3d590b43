"""An editable table of model prices and token estimates for planning a run.

Prices are US dollars per million tokens, input and output separately. The defaults are a
starting point dated in ``DEFAULT_PRICES_AS_OF``: providers change prices, so users edit the
table (saved as JSON at a path the caller chooses). Local models cost nothing.
"""

from __future__ import annotations

import fnmatch
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.files import write_json_atomically
from thoughtdesk.core.generation.backends.base import Request

DEFAULT_PRICES_AS_OF = "2024-12"
#: What a provider's batch API charges of the normal price (OpenAI's Batch API and Anthropic's
#: Message Batches both take half).
BATCH_DISCOUNT = 0.5
#: Characters per token in English text (OpenAI's rule of thumb); used when no tokenizer is at hand.
CHARS_PER_TOKEN = 4.0


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """The price of one model, or of every model matching a glob such as ``claude-3-5-haiku*``."""

    provider: str
    model: str
    input_per_million: float  # USD per 1,000,000 prompt tokens
    output_per_million: float  # USD per 1,000,000 completion tokens
    note: str = ""


DEFAULT_PRICES: tuple[ModelPrice, ...] = (
    ModelPrice("openai", "gpt-4o-mini*", 0.15, 0.60),
    ModelPrice("openai", "gpt-4o*", 2.50, 10.00),
    ModelPrice("openai", "gpt-3.5-turbo*", 0.50, 1.50),
    ModelPrice("anthropic", "claude-3-5-haiku*", 0.80, 4.00),
    ModelPrice("anthropic", "claude-3-5-sonnet*", 3.00, 15.00),
    ModelPrice("anthropic", "claude-3-haiku*", 0.25, 1.25),
    ModelPrice("llamacpp", "*", 0.0, 0.0, "local model: no charge"),
    ModelPrice("local", "*", 0.0, 0.0, "local OpenAI-compatible server: no charge"),
)


class PriceTable:
    """Prices by provider and model; exact model names win over glob patterns."""

    def __init__(self, prices: tuple[ModelPrice, ...] | list[ModelPrice] = DEFAULT_PRICES) -> None:
        self.prices: list[ModelPrice] = list(prices)

    def price_for(self, provider: str, model: str) -> ModelPrice | None:
        """The price entry for ``model`` of ``provider``, or None when the table has none."""
        candidates = [p for p in self.prices if p.provider == provider]
        for price in candidates:
            if price.model == model:
                return price
        for price in candidates:
            if fnmatch.fnmatchcase(model, price.model):
                return price
        return None

    def unpriced(self, models) -> list[str]:
        """The labels of ``models`` (anything with ``price_provider``, ``model_name`` and
        ``label``, i.e. ModelSpecs) that this table has no price for: their cost is unknown."""
        return [m.label for m in models if self.price_for(m.price_provider, m.model_name) is None]

    def cost(self, provider: str, model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        """Cost in USD of the given token counts, or None when the model has no price."""
        price = self.price_for(provider, model)
        if price is None:
            return None
        return (prompt_tokens * price.input_per_million + completion_tokens * price.output_per_million) / 1_000_000

    def batch_cost(self, provider: str, model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        """Cost in USD of the tokens sent through the provider's batch API (``BATCH_DISCOUNT`` of
        :meth:`cost`), or None when the model has no price."""
        cost = self.cost(provider, model, prompt_tokens, completion_tokens)
        return None if cost is None else cost * BATCH_DISCOUNT

    def set(self, price: ModelPrice) -> None:
        """Add or replace the entry for the same provider and model pattern."""
        self.remove(price.provider, price.model)
        # Exact names first so they are not shadowed by a pattern when listed.
        self.prices.insert(0, price)

    def remove(self, provider: str, model: str) -> None:
        self.prices = [p for p in self.prices if not (p.provider == provider and p.model == model)]

    def save(self, path: str | Path) -> None:
        """Write the table as JSON atomically."""
        write_json_atomically(path, {"prices": [asdict(p) for p in self.prices]})

    @classmethod
    def load(cls, path: str | Path) -> PriceTable:
        """Read a table written by :meth:`save`; DataFileError naming the entry when malformed."""
        path = Path(path)
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise DataFileError(path, "price table not found") from None
        except json.JSONDecodeError as error:
            raise DataFileError(path, f"not valid JSON: {error.msg}", line=error.lineno, column=error.colno) from None
        entries = document.get("prices") if isinstance(document, dict) else None
        if not isinstance(entries, list):
            raise DataFileError(path, 'expected {"prices": [...]}')
        prices = []
        for index, entry in enumerate(entries, 1):
            try:
                prices.append(
                    ModelPrice(
                        provider=str(entry["provider"]),
                        model=str(entry["model"]),
                        input_per_million=float(entry["input_per_million"]),
                        output_per_million=float(entry["output_per_million"]),
                        note=str(entry.get("note", "")),
                    )
                )
            except (KeyError, TypeError, ValueError) as error:
                raise DataFileError(path, f"bad price entry ({error})", where=f"entry {index}") from None
        return cls(prices)


def estimate_tokens(text: str) -> int:
    """Estimated token count of ``text`` (about four characters per token, at least one)."""
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN)) if text else 0


def estimate_request_tokens(request: Request) -> tuple[int, int]:
    """(prompt tokens, most completion tokens) a request may use, for budgets and rate limits.

    The prompt is counted once per sample, as providers bill it for each of the ``n`` samples
    when ``n`` is emulated and count it once otherwise; the upper bound is what planning needs.
    """
    if request.messages is not None:
        # A few tokens of chat formatting per message.
        prompt = sum(estimate_tokens(m.content) + 4 for m in request.messages)
    else:
        prompt = estimate_tokens(request.prompt or "")
    return prompt * request.n, request.max_tokens * request.n


def default_price_path() -> Path:
    """Where the user's price table is kept (the planner's price editor saves it there)."""
    from thoughtdesk.core.paths import user_config_dir

    return user_config_dir() / "prices.json"


def load_price_table(path: Path | None = None) -> tuple[PriceTable, str | None]:
    """The user's price table (defaults when none is saved) and a problem message, if any
    (an unreadable file is named and the defaults are used)."""
    path = path or default_price_path()
    if not path.exists():
        return PriceTable(), None
    try:
        return PriceTable.load(path), None
    except DataFileError as error:
        return PriceTable(), f"{error}; using the default prices"
