"""Checks of argument values that every layer makes: seeds, values shown in error messages, JSON from outside."""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any

import numpy as np

#: Every seed (of a game, a batch, an env or a command) is an integer 0 <= seed < SEED_LIMIT: games store theirs as int64.
SEED_LIMIT = 2**63

def check_seed(seed: object, name: str = "seed") -> int:
    """A seed as an int in 0 .. SEED_LIMIT - 1, or ValueError naming ``name``."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"{name} must be an integer from 0 to 2**63 - 1, not {short_repr(seed)}")
    return int(seed)


#: Digits an integer read from text may have (Python refuses to convert more than 4,300 anyway).
MAX_DIGITS = 30


def parse_int(text: str) -> int:
    """An integer written in ASCII digits (``'²'`` and ``'٣'`` are not), up to ``MAX_DIGITS`` of them (leading zeros
    aside) with an optional sign; ValueError saying what it expected otherwise."""
    match = re.fullmatch(r"\s*([+-]?)([0-9]+)\s*", text) if isinstance(text, str) else None
    if not match:
        raise ValueError(f"expected an integer, not {shown_text(text)}")
    digits = match[2].lstrip("0") or "0"
    if len(digits) > MAX_DIGITS:
        raise ValueError(f"expected an integer of at most {MAX_DIGITS} digits, not one of {len(digits):,} digits")
    return int(match[1] + digits)


def parse_float(text: str) -> float:
    """A finite real number written as text; ValueError saying what it expected otherwise (NaN and infinity too)."""
    try:
        value = float(text) if isinstance(text, str) and len(text) <= 100 else math.nan
    except ValueError:
        raise ValueError(f"expected a number, not {shown_text(text)}") from None
    if not math.isfinite(value):
        raise ValueError(f"expected a finite number, not {shown_text(text)}")
    return value


def shown_text(text: object) -> str:
    """A value read from outside as a message shows it: its repr, or its length when too long to print."""
    return short_repr(text) if not isinstance(text, str) or len(text) <= 100 else f"a value of {len(text):,} characters"


def short_repr(value: object, limit: int = 40) -> str:
    """``repr(value)`` cut to ``limit`` characters (an int too long to print is described by its digits)."""
    if isinstance(value, (int, np.integer)) and abs(int(value)).bit_length() > 3 * limit:
        return f"an integer of about {int(abs(int(value)).bit_length() * 0.30103) + 1} digits"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


#: The most digits a JSON integer read from outside may have (a seed has 19): Python refuses past 4,300 with no field named.
MAX_JSON_DIGITS = 40


class JSONIntegerError(ValueError):
    """A JSON text holds an integer with more than ``MAX_JSON_DIGITS`` digits; the message names its field."""


def json_loads(text: str | bytes, max_digits: int = MAX_JSON_DIGITS) -> Any:
    """``json.loads``, refusing an integer past ``max_digits`` digits with JSONIntegerError naming its field
    (``seed``, ``rounds[0].bids[1].bid``); json.JSONDecodeError and RecursionError as ``json.loads``."""
    oversized: list[str] = []

    def parse_int(digits: str) -> Any:
        if len(digits.lstrip("-")) <= max_digits:
            return int(digits)
        oversized.append(digits)
        return _Oversized(digits)

    value = json.loads(text, parse_int=parse_int)
    if oversized:
        path, digits = _find_oversized(value)
        raise JSONIntegerError(f"{path[:100]}: an integer of {len(digits.lstrip('-')):,} digits; at most {max_digits} are read")
    return value


class _Oversized(str):
    """An integer's digits standing in for it while the field that holds it is found."""


def _find_oversized(value: Any) -> tuple[str, str]:
    """(the path of the first oversized integer in a parsed JSON value, its digits), searched without recursion."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, _Oversized):
            return path or "the value", str(item)
        if isinstance(item, dict):
            stack.extend((f"{path}.{key}" if path else str(key), v) for key, v in reversed(list(item.items())))
        elif isinstance(item, list):
            stack.extend((f"{path}[{k}]", v) for k, v in reversed(list(enumerate(item))))
    raise AssertionError("an oversized integer was parsed but not found")


#: Memory one batched game takes with its observation and mask buffers (measured: about 20 kB at 4 players).
GAME_BYTES = 32 * 1024


def check_memory(option: str, count: int, bytes_each: float) -> None:
    """ValueError naming ``option`` when ``count`` items of about ``bytes_each`` bytes would not fit in the memory the
    system can give now (``available_memory``): past it, the kernel's OOM killer would end the run."""
    have = available_memory()
    if have is None:  # no such query on this system: nothing to compare with
        return
    try:
        need = float(count * bytes_each)
    except OverflowError:  # a count past a float's range (a recipe's TOML integers have no bound)
        need = math.inf
    if need > have[0]:
        amount, shown = ((f"about {_gib(need)} of memory", f"{count:,}") if math.isfinite(need)
                         else ("more memory than any machine holds", short_repr(count)))
        raise ValueError(f"{option} {shown} would need {amount}; this machine has {_gib(have[0])} "
                         f"available now (of {_gib(have[1])}), enough for at most about {int(have[0] // bytes_each):,}")


def available_memory() -> tuple[int, int] | None:
    """(bytes the system can give a process now, its physical memory); None where the system does not say.

    Now: Linux's ``MemAvailable`` (free memory and caches it can drop), at most the physical memory; elsewhere
    the physical memory.
    """
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return min(physical, int(line.split()[1]) * 1024), physical
    except (OSError, ValueError, IndexError):
        pass
    return physical, physical


def _gib(nbytes: float) -> str:
    return f"{nbytes / 2**30:,.1f} GiB"
