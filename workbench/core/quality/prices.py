"""Money per token: the price table the cost ledger uses. Layer: core (pure).

`DEFAULT_PRICES` are DeepSeek's published API list prices in USD per 1M tokens (cache-hit input,
cache-miss input, output) as shown on https://api-docs.deepseek.com/quick_start/pricing, checked
against a copy of that page from May 2026 (`AS_OF`; the cache-hit price there took effect on
2026-04-26 12:15 UTC). Prices change: pass your own `PriceTable` (or a mapping with the three
keys) to the ledger, e.g. ``session.ledger_df(prices={"cache_hit": 0.01, "cache_miss": 0.2,
"output": 0.5})`` (USD per 1M tokens).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workbench.errors import PriceError

AS_OF = "2026-05"
"""When `DEFAULT_PRICES` were checked against DeepSeek's pricing page."""


@dataclass(frozen=True, slots=True)
class PriceTable:
    """Prices per 1M tokens (`per_million`); the ledger reads the per-token properties."""

    cache_hit_per_million: float
    cache_miss_per_million: float
    output_per_million: float
    currency: str = "USD"
    name: str = "custom"
    as_of: str | None = None

    @property
    def cache_hit(self) -> float:
        return self.cache_hit_per_million / 1e6

    @property
    def cache_miss(self) -> float:
        return self.cache_miss_per_million / 1e6

    @property
    def output(self) -> float:
        return self.output_per_million / 1e6

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "currency": self.currency, "as_of": self.as_of,
                "cache_hit_per_million": self.cache_hit_per_million,
                "cache_miss_per_million": self.cache_miss_per_million,
                "output_per_million": self.output_per_million}


DEFAULT_PRICES: dict[str, PriceTable] = {
    "deepseek-v4-flash": PriceTable(0.0028, 0.14, 0.28, name="deepseek-v4-flash", as_of=AS_OF),
    "deepseek-v4-pro": PriceTable(0.003625, 0.435, 0.87, name="deepseek-v4-pro", as_of=AS_OF),
}
"""DeepSeek's list prices by model (module doc)."""
DEFAULT_MODEL = "deepseek-v4-flash"


def price_table(prices: PriceTable | Mapping[str, Any] | str | None = None) -> PriceTable:
    """A `PriceTable` from a table, a model name of `DEFAULT_PRICES`, a mapping with
    ``cache_hit`` / ``cache_miss`` / ``output`` (per 1M tokens) or None (the default model)."""
    if prices is None:
        return DEFAULT_PRICES[DEFAULT_MODEL]
    if isinstance(prices, PriceTable):
        return prices
    if isinstance(prices, str):
        try:
            return DEFAULT_PRICES[prices]
        except KeyError:
            raise PriceError(f"no default prices for {prices!r}; known: "
                             f"{', '.join(DEFAULT_PRICES)}") from None
    try:
        values = [float(prices[k]) for k in ("cache_hit", "cache_miss", "output")]
    except (KeyError, TypeError, ValueError):
        raise PriceError("a price mapping needs numeric cache_hit, cache_miss and output "
                         "(per 1M tokens)") from None
    if any(v < 0 or v != v for v in values):
        raise PriceError("prices must be non-negative numbers")
    return PriceTable(*values, currency=str(prices.get("currency", "USD")),
                      name=str(prices.get("name", "custom")), as_of=prices.get("as_of"))
