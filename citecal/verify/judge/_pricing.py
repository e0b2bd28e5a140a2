"""Judge cost from token counts and a pricing table (README "The LLM judge").

Prices are USD per one million tokens, from ``[judge.pricing]`` of the user's config
(defaults: README "The LLM judge"). Model names are matched exactly, then without a
provider prefix (OpenRouter's ``openai/gpt-4o-mini``), then by the longest
table entry the name starts with (dated snapshots such as
``gpt-4o-mini-2024-07-18``). A model with no price costs 0 and the caller
warns once: a local model is free, a missing price must not look free silently.
"""

from __future__ import annotations

from collections.abc import Mapping

from citecal.config import PriceConfig


def find_price(model: str, pricing: Mapping[str, PriceConfig]) -> PriceConfig | None:
    """The price entry for ``model``, or None when the table has none."""
    names = [model]
    if "/" in model:
        names.append(model.rsplit("/", 1)[1])
    for name in names:
        if name in pricing:
            return pricing[name]
    for name in names:
        prefixes = [k for k in pricing if name.startswith(k + "-") or name.startswith(k + ":")]
        if prefixes:
            return pricing[max(prefixes, key=len)]
    return None


def cost_usd(
    model: str, prompt_tokens: int, completion_tokens: int, pricing: Mapping[str, PriceConfig]
) -> float | None:
    """Dollars for one call's usage, or None when the model has no price."""
    price = find_price(model, pricing)
    if price is None:
        return None
    return (prompt_tokens * price.input + completion_tokens * price.output) / 1_000_000
