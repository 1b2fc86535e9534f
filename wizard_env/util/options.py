"""Checks of ``wizard`` option values, in one place: each names the option and says what it must be.

The ``*_type`` functions and ``Number`` are argparse ``type=`` callables, so a malformed value is refused while
the command line is parsed, before any work starts or any file is made. Every option that takes a value declares
its type here: a number its range (``Number``, from the config dataclass's ``RANGES`` where it has one), a path
``path_type``, any other text ``text_type`` (or argparse ``choices``); ``tests/test_options_generated.py`` reads
them from the parser and gives each option values outside them. ``check_range`` and ``check_memory`` check
values whose limits depend on other options (a subcommand calls them before its first write). Every message fits
on one line: a value too long to print is described, not echoed.
"""

from __future__ import annotations

import argparse

# check_memory and GAME_BYTES live in checks, which the engine imports without argparse; commands take them from here
from wizard_env.util.checks import (GAME_BYTES, MAX_DIGITS, SEED_LIMIT, check_memory, check_seed,  # noqa: F401
                                    parse_float, parse_int, short_repr, shown_text)

#: The upper bound of a count or an amount with no natural one (decisions, deals, epochs, minutes, a scale): no run
#: reaches it, and a value past it is a typo's extra digits, refused at once instead of running for ever.
MAX_COUNT = 10**12
#: The longest text option (an agent list, a schedule, a host): a value past it is refused, not echoed.
MAX_TEXT = 10_000


def int_type(text: str) -> int:
    """An integer option (argparse ``type``): up to ``MAX_DIGITS`` digits (leading zeros aside) with an optional sign."""
    try:
        return parse_int(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def float_type(text: str) -> float:
    """A finite real-number option (argparse ``type``): NaN and infinity are refused."""
    try:
        return parse_float(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def seed_type(text: str) -> int:
    """A seed option (argparse ``type``): an integer from 0 to 2**63 - 1."""
    try:
        return check_seed(int_type(text), "the seed")
    except (argparse.ArgumentTypeError, ValueError):
        raise argparse.ArgumentTypeError(f"expected an integer from 0 to 2**63 - 1, not {shown_text(text)}") from None


# the declared range of a seed option, which the generated test reads as a Number's
seed_type.kind, seed_type.low, seed_type.high, seed_type.above = int, 0, SEED_LIMIT - 1, False  # type: ignore[attr-defined]


class Number:
    """A number option of a declared range (argparse ``type``): ``Number(int, 1, MAX_COUNT)`` takes 1 .. 10**12,
    ``Number(float, 0, 1, above=True)`` 0 < x <= 1; anything else is refused while the command line is parsed."""

    def __init__(self, kind: type, low: float | None, high: float | None, above: bool = False):
        if kind not in (int, float) or high is None:
            raise ValueError(f"a Number option is an int or a float with an upper bound, not {kind} up to {high}")
        self.kind, self.low, self.high, self.above = kind, low, high, above

    def __call__(self, text: str) -> float:
        value = (int_type if self.kind is int else float_type)(text)
        try:
            check_range("", value, self.low, self.high, self.above)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err).lstrip()) from None
        return value

    def __repr__(self) -> str:  # argparse names the type in a few messages
        return f"Number({self.kind.__name__}, {self.low}, {self.high}{', above=True' if self.above else ''})"


def path_type(text: str) -> str:
    """A file or folder option (argparse ``type``): not empty, no control characters (a NUL cannot be a path)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a path, not an empty string")
    return text_type(text)


def text_type(text: str) -> str:
    """Any other option that takes text (argparse ``type``): at most ``MAX_TEXT`` characters, no control characters."""
    if len(text) > MAX_TEXT:
        raise argparse.ArgumentTypeError(f"expected at most {MAX_TEXT:,} characters, not {len(text):,}")
    odd = next((c for c in text if ord(c) < 32 or ord(c) == 127), None)
    if odd is not None:
        raise argparse.ArgumentTypeError(f"expected text without control characters, not {shown_text(text)}")
    return text


def bound(value: float | None) -> str:
    """A range's bound as a message prints it: an integer in full (``9223372036854775807``), a real number short."""
    if value is None:
        return "none"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer() and abs(value) < 2**53):
        return str(int(value))
    return f"{value:g}"


def check_range(option: str, value: float, low: float | None = None, high: float | None = None, above: bool = False) -> None:
    """ValueError naming ``option`` unless ``low <= value <= high`` (``above``: ``low < value``; None: no bound)."""
    if (low is not None and (value <= low if above else value < low)) or (high is not None and value > high):
        least = f"more than {bound(low)}" if above else f"at least {bound(low)}"
        if high is None:
            need = least
        elif low is None:
            need = f"at most {bound(high)}"
        else:
            need = f"{least} and at most {bound(high)}"
        raise ValueError(f"{option} must be {need}, not {short_repr(value)}")

