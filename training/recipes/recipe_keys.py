"""The schema of a recipe's steps: every key of every kind of step, with its kind of value, its default and the range
of its numbers (``KEYS``), and the check of one key's value against it (``key_problem``).

The kinds of value and the defaults are those of the config dataclasses (``ValuesConfig``, ``FitConfig``,
``MarginGrid``, ``SuiteConfig``), and the ranges those their check functions refuse past (``values_config.RANGES``,
``fit_values.RANGES``, ``margins.RANGES``, ``eval_suite.RANGES``; a player count's and a hand size's are the
rules'): a recipe and the commands check one declaration. ``recipe.load`` checks every key against this schema, then
each step's settings with the check function of its command, before anything is written.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from wizard_env.engine.rules import MAX_HAND_SIZE, MAX_PLAYERS, MIN_PLAYERS
from wizard_env.util.checks import short_repr

from ..common import check_ranges
from ..evaluation import eval_suite
from ..values import fit_values, margins, values_config

KINDS = ("train-values", "fit-values", "margins", "eval-suite", "publish")
#: The kinds of step whose checkpoint another step may name.
CHECKPOINT_KINDS = ("train-values", "fit-values", "margins")
Range = tuple[float | None, float | None]
#: The range of a player count, and of ``rounds`` given as a round count or as hand sizes (each).
PLAYERS: Range = (MIN_PLAYERS, MAX_PLAYERS)
ROUNDS: Range = (1, MAX_HAND_SIZE)


@dataclass(frozen=True)
class Key:
    """One key of a kind of step: its kind of value (``WANTED``), its default and the range of its numbers (of each
    number of a list), ``above``: more than ``low``, not ``low`` itself."""

    kind: str
    default: Any
    range: Range | None = None
    above: bool = False


def _kind_of(default: Any, annotation: object) -> str:
    """The kind of value of a dataclass field with this default and type annotation."""
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, (list, tuple)):
        return "grid" if default and isinstance(default[0], list) else "ints"
    if default is None:  # an optional number
        return "int" if str(annotation).startswith("int") else "float"
    return {int: "int", float: "float", str: "str"}[type(default)]


def _dataclass_keys(cls, ranges: dict[str, Range], above: tuple[str, ...] = ()) -> dict[str, Key]:
    """A key for each field of the config dataclass ``cls`` that has a default, with its range."""
    keys = {}
    for f in dataclasses.fields(cls):
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            continue
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[operator]
        default = list(default) if isinstance(default, tuple) else default
        keys[f.name] = (Key("rounds", default, ROUNDS) if f.name == "rounds" else
                        Key(_kind_of(default, f.type), default, ranges.get(f.name), f.name in above))
    return keys


#: The eval-suite keys under their ``SuiteConfig`` names, but ``checkpoint`` (the step whose checkpoint it measures).
_SUITE = _dataclass_keys(eval_suite.SuiteConfig, {**eval_suite.RANGES, **eval_suite.RANGES_IF_GIVEN})
#: The keys of each kind of step besides ``name`` and ``kind``.
KEYS: dict[str, dict[str, Key]] = {
    "train-values": {**_dataclass_keys(values_config.ValuesConfig, {**values_config.RANGES, **values_config.RANGES_IF_GIVEN},
                                       values_config.ABOVE_ZERO),
                     "pool": Key("strs", []), "data_from": Key("steps", []), "players": Key("int", 4, PLAYERS),
                     "rounds": Key("rounds", "standard", ROUNDS), "stage": Key("stages", [])},
    "fit-values": {"data": Key("step", None), "iterations": Key("ints", None, (0, values_config.MAX_ITERATIONS - 1)),
                   **_dataclass_keys(fit_values.FitConfig, fit_values.RANGES, ("learning_rate",))},
    "margins": {"checkpoint": Key("step", None), **_dataclass_keys(margins.MarginGrid, margins.RANGES)},
    "eval-suite": {"checkpoint": Key("step", None), **_SUITE, "references": Key("strs", list(eval_suite.DEFAULT_REFERENCES)),
                   "skip": Key("strs", [])},
    "publish": {"checkpoint": Key("step", None)},
}
#: Keys a step must give.
REQUIRED = {"fit-values": ("data",), "margins": ("checkpoint",), "eval-suite": ("checkpoint",), "publish": ("checkpoint",)}
#: Keys of a kind of step that change how fast it runs, not what it makes: a resumed run may change them.
SPEED_KEYS: dict[str, tuple[str, ...]] = {"eval-suite": ("workers",)}
#: The recipe's key of each ``wizard eval-suite`` option (``eval_suite.OPTIONS``; ``AGENT``: the checkpoint's step).
SUITE_OPTION_KEYS = {**{option.lstrip("-").replace("-", "_"): key for key, option in eval_suite.OPTIONS.items()},
                     "AGENT": "checkpoint"}

WANTED = {"int": "an integer", "float": "a number", "bool": "true or false", "str": "a string",
          "step": "the name of an earlier step", "steps": "a list of names of earlier steps", "ints": "a list of integers",
          "strs": "a list of strings", "rounds": "'standard', 'amigo', a round count or a list of hand sizes",
          "grid": "a list of [bid, play] pairs", "stages": "[[step.stage]] tables"}


def _fits(kind: str, value: Any) -> bool:
    """Whether ``value`` is of the kind of value ``kind``."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    ints = isinstance(value, list) and all(type(v) is int for v in value)
    strs = isinstance(value, list) and all(isinstance(v, str) for v in value)
    return {"int": type(value) is int, "float": number, "bool": isinstance(value, bool), "str": isinstance(value, str),
            "step": isinstance(value, str), "steps": strs, "ints": ints, "strs": strs,
            "rounds": isinstance(value, str) or type(value) is int or ints and bool(value),
            "grid": isinstance(value, list) and all(isinstance(v, list) for v in value),
            "stages": isinstance(value, list) and all(isinstance(v, dict) for v in value)}[kind]


def non_finite(value: Any) -> float | None:
    """The first infinite or NaN number in ``value`` (in its lists and tables too); None where there is none."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return item
        stack.extend(item.values() if isinstance(item, dict) else item if isinstance(item, list) else ())
    return None


def key_problem(key: Key, name: str, value: Any) -> str | None:
    """What is wrong with ``value`` as the key ``name`` (None: nothing): not of its kind of value, a number that is
    not finite, or outside the key's range; the message names the key."""
    if not _fits(key.kind, value):
        return f"expected {WANTED[key.kind]}, not {short_repr(value)}"
    wrong = None if key.kind == "stages" else non_finite(value)  # a stage's keys are checked one by one
    if wrong is not None:
        return f"expected finite numbers, not {wrong}"
    if key.range is None or isinstance(value, str):
        return None
    try:
        check_ranges(SimpleNamespace(**{name: value}), {name: key.range}, (name,) if key.above else (), lambda n: n)
    except ValueError as e:
        return str(e)
    return None
