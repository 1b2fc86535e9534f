"""Checks of ``wizard`` option values, in one place: each names the option and says what it must be.

The ``*_type`` functions are argparse ``type=`` callables, so a malformed value is refused while the
command line is parsed, before any work starts or any file is made. ``check_range`` and
``check_memory`` check values whose limits depend on other options (a subcommand calls them first
thing). Every message fits on one line: a value too long to print is described, not echoed.
"""

from __future__ import annotations

import argparse
import math
import re

# check_memory and GAME_BYTES live in checks, which the engine imports without argparse; commands take them from here
from wizard_env.util.checks import GAME_BYTES, check_memory, check_seed, short_repr  # noqa: F401

#: Digits an integer option may have (Python refuses to convert more than 4,300 anyway).
MAX_DIGITS = 30


def _shown(text: str) -> str:
    return short_repr(text) if len(text) <= 100 else f"a value of {len(text):,} characters"


def int_type(text: str) -> int:
    """An integer option (argparse ``type``): up to ``MAX_DIGITS`` digits (leading zeros aside) with an optional sign."""
    match = re.fullmatch(r"\s*([+-]?)([0-9]+)\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"expected an integer, not {_shown(text)}")
    digits = match[2].lstrip("0") or "0"
    if len(digits) > MAX_DIGITS:
        raise argparse.ArgumentTypeError(f"expected an integer of at most {MAX_DIGITS} digits, not one of {len(digits):,} digits")
    return int(match[1] + digits)


def float_type(text: str) -> float:
    """A finite real-number option (argparse ``type``): NaN and infinity are refused."""
    try:
        value = float(text) if len(text) <= 100 else math.nan
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, not {_shown(text)}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, not {_shown(text)}")
    return value


def seed_type(text: str) -> int:
    """A seed option (argparse ``type``): an integer from 0 to 2**63 - 1."""
    try:
        return check_seed(int_type(text), "the seed")
    except (argparse.ArgumentTypeError, ValueError):
        raise argparse.ArgumentTypeError(f"expected an integer from 0 to 2**63 - 1, not {_shown(text)}") from None


def path_type(text: str) -> str:
    """A file or folder option (argparse ``type``): not empty."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a path, not an empty string")
    return text


def check_range(option: str, value: float, low: float | None = None, high: float | None = None, above: bool = False) -> None:
    """ValueError naming ``option`` unless ``low <= value <= high`` (``above``: ``low < value``; None: no bound)."""
    if (low is not None and (value <= low if above else value < low)) or (high is not None and value > high):
        least = f"more than {_bound(low)}" if above else f"at least {_bound(low)}"
        if high is None:
            need = least
        elif low is None:
            need = f"at most {_bound(high)}"
        else:
            need = f"{least} and at most {_bound(high)}"
        raise ValueError(f"{option} must be {need}, not {short_repr(value)}")


def _bound(number: float | None) -> str:
    """A bound as a message writes it: an integer with every digit (a seed's 9223372036854775807, not 9.22337e+18),
    any other number as ``:g`` writes it."""
    return str(number) if isinstance(number, int) else f"{number:g}"
