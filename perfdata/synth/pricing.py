"""Cost estimate from token counts. Prices are USD per 1M tokens (standard paid tier, prompts
<= 200k tokens, as published by Google in 2025); override them in SynthConfig when they change
or for other models. Thinking tokens are billed as output."""
from __future__ import annotations

PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "gemini-2.5-flash": (0.30, 2.50),
    "gemini-2.5-flash-lite": (0.10, 0.40),
    "gemini-2.5-pro": (1.25, 10.00),
    "gemini-2.0-flash": (0.10, 0.40),
}


def prices_for(model: str, price_in: float | None, price_out: float | None) -> tuple[float, float, bool]:
    """(input price, output price, known) for ``model``; explicit prices win."""
    table = PRICES_PER_MTOK.get(model)
    known = table is not None or (price_in is not None and price_out is not None)
    tin, tout = table or (0.0, 0.0)
    return (price_in if price_in is not None else tin,
            price_out if price_out is not None else tout, known)


def estimate_cost(prompt_tokens: int, output_tokens: int, price_in: float, price_out: float) -> float:
    return (prompt_tokens * price_in + output_tokens * price_out) / 1e6
