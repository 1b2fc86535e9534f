"""Checks of argument values that every layer makes: seeds, and values shown in error messages."""

from __future__ import annotations

import numpy as np

#: Every seed (of a game, a batch, an env or a command) is an integer 0 <= seed < SEED_LIMIT: games store theirs as int64.
SEED_LIMIT = 2**63

def check_seed(seed: object, name: str = "seed") -> int:
    """A seed as an int in 0 .. SEED_LIMIT - 1, or ValueError naming ``name``."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"{name} must be an integer from 0 to 2**63 - 1, not {short_repr(seed)}")
    return int(seed)


def short_repr(value: object, limit: int = 40) -> str:
    """``repr(value)`` cut to ``limit`` characters (an int too long to print is described by its digits)."""
    if isinstance(value, (int, np.integer)) and abs(int(value)).bit_length() > 3 * limit:
        return f"an integer of about {int(abs(int(value)).bit_length() * 0.30103) + 1} digits"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
