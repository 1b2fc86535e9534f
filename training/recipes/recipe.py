"""A recipe: every step that builds a checkpoint, with its settings and seeds, in one TOML file (``wizard recipe``;
``docs/training.md``; the recipes of the shipped agents and of experiments are in ``training/recipes/``).

A recipe has a ``name``, an optional ``description`` and its steps, each a ``[[step]]`` table with a ``name`` (a
folder name: letters, digits, ``-`` and ``_``), a ``kind`` and the keys of that kind:

| kind | what it runs | keys (default) |
| --- | --- | --- |
| ``train-values`` | ``wizard train-values``: one command per ``[[step.stage]]``, the later ones with ``--resume`` | every ``ValuesConfig`` field (its default; a relative ``start``, and a relative checkpoint path in ``pool``, a list of strings, is read from the recipe's folder; ``data_from`` names earlier train-values steps), ``players`` (4, the evaluations), ``rounds`` ("standard"); a stage sets what a resume may change (``values_config.RESUME_MAY_CHANGE``) |
| ``fit-values`` | a fresh network on the data of a train-values step (``fit_values``) | ``data`` (the step), ``iterations`` (all of them), every ``FitConfig`` field |
| ``margins`` | the margin grid on held-out deals (``margins``) | ``checkpoint`` (a step), every ``MarginGrid`` field |
| ``eval-suite`` | ``wizard eval-suite ppo:CHECKPOINT`` (``eval_suite``) | ``checkpoint``, ``deals`` (2000), ``seed`` (1), ``references`` (["ppo"]), ``reference_deals``, ``players`` ([3, 5, 6]), ``skip`` ([]), ``workers`` (1: processes playing its tables; the figures do not depend on it, and a resumed run may change it) |
| ``publish`` | copies the checkpoint to ``OUT/agent.npz`` and writes ``OUT/tables.md`` from the steps before | ``checkpoint`` |

A ``checkpoint`` names an earlier step: a train-values step's latest checkpoint, a fit's, or the margins' choice.
``load`` parses and checks a file before anything is written: every key against its kind of value and range
(``recipe_keys.KEYS``, the ranges of the commands' own checks), each step's settings with its command's check
function, and what a step reads from another (checkpoints that load and play the step's player counts); every
error names the file, the step and the key. The margins' seeds must be other than every eval-suite step's (S, S + 1,
S + 2), so the margins are not chosen on the deals that measure them.

``extends = "other.toml"`` (read from the file's folder) makes a recipe the other one with changes: a ``[[step]]``
named as one of the other's gives the keys that replace that step's (a list whole), one of a new name is added
after the other's steps, or with ``after = "STEP"`` right after the other's step of that name. The recipe a run
records and compares (``Recipe.raw``) is the one written out.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from wizard_env.engine.rules import Rules
from wizard_env.util.checks import short_repr
from wizard_env.util.files import read_toml

from ..evaluation import eval_suite
from ..values.fit_values import FitConfig, check_fit
from ..values.margins import MarginGrid, check_grid
from ..values.opponent_pool import names_checkpoint
from ..values.values_config import RESUME_MAY_CHANGE, ValuesConfig, check_config
from .recipe_keys import CHECKPOINT_KINDS, KEYS, KINDS, REQUIRED, SUITE_OPTION_KEYS, key_problem

STEP_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


@dataclass(frozen=True)
class Step:
    """One step of a recipe: its name, kind and keys (defaults filled in)."""

    index: int
    name: str
    kind: str
    keys: dict[str, Any]

    def where(self, key: str | None = None) -> str:
        """How errors name this step (and ``key``)."""
        return f"step {self.index} {self.name!r}" + (f", key {key!r}" if key else "")

    def values_stages(self) -> list[ValuesConfig]:
        """A train-values step's config of each stage, in order (one stage when it has none)."""
        base = ValuesConfig(**{k: v for k, v in self.keys.items() if k in KEYS["train-values"] and k not in ("players", "rounds", "stage")})
        return [dataclasses.replace(base, **stage) for stage in self.keys["stage"]] or [base]

    def rules(self) -> Rules:
        """The rules of a train-values or margins step's games (its ``players`` and ``rounds``)."""
        return Rules.make(self.keys["players"], self.keys["rounds"])

    def fit_config(self) -> FitConfig:
        return FitConfig(**{k: v for k, v in self.keys.items() if k in KEYS["fit-values"] and k not in ("data", "iterations")})

    def margin_grid(self) -> MarginGrid:
        return MarginGrid(**{k: v for k, v in self.keys.items() if k != "checkpoint"})

    def suite_config(self, agent: str) -> eval_suite.SuiteConfig:
        k = self.keys
        return eval_suite.SuiteConfig(agent, k["deals"], k["seed"], tuple(k["references"]), k["reference_deals"],
                                      tuple(k["players"]), tuple(k["skip"]), k["workers"])


@dataclass(frozen=True)
class Recipe:
    """A checked recipe: its file, its parsed TOML (what a resumed run compares) and its steps."""

    path: Path
    name: str
    description: str
    raw: dict[str, Any]
    steps: tuple[Step, ...]

    def step(self, name: str) -> Step:
        return next(s for s in self.steps if s.name == name)


def _option_key(message: str, kind: str) -> tuple[str | None, str]:
    """The key an error about a step of ``kind`` is about (its first ``--option``, or the key it starts with), and the
    message in key names."""
    def key_of(option: str) -> str:
        name = option.replace("-", "_")
        return SUITE_OPTION_KEYS.get(name, name) if kind == "eval-suite" else name

    found = re.search(r"--([a-z][a-z-]*)", message) or re.match(r"([A-Za-z_]+)\b", message)
    return (key_of(found[1]) if found else None), re.sub(r"--([a-z][a-z-]*)", lambda m: key_of(m[1]), message)


def load(path: str | Path) -> Recipe:
    """Read and check a recipe file (and the recipes it ``extends``); ValueError naming the file, the step and the key
    at fault."""
    path = Path(path)
    try:
        return parse(_expanded(path, ()), path)
    except MemoryError:  # a limit on this process's memory (ulimit -v) that the checks of memory cannot see
        raise ValueError(f"recipe {path}: out of memory while reading and checking it") from None


def _read(path: Path) -> dict[str, Any]:
    """A recipe file's TOML; ValueError naming the file."""
    return read_toml(path, "recipe")


def _expanded(path: Path, seen: tuple[Path, ...]) -> dict[str, Any]:
    """The file's TOML with its ``extends`` written out: the base's steps in order, each with the keys a ``[[step]]``
    of its name here gives in place of its own, then this file's steps of new names (``after = "STEP"``: after the
    base's STEP); this file's ``name``, and its ``description`` or else the base's. ``seen``: the files extending it."""
    raw = _read(path)
    if "extends" not in raw:
        return raw

    def fail(where: str, problem: str) -> ValueError:
        return ValueError(f"recipe {path}: {where}: {problem}")

    named = raw.pop("extends")
    if not isinstance(named, str) or not named.strip():
        raise fail("key 'extends'", f"expected the path of the recipe file it extends, not {named!r}")
    base_path = path.parent / named
    chain = (*seen, path.resolve())
    if base_path.resolve() in chain:
        raise fail("key 'extends'", f"{named!r} extends this file in turn: the recipes extend each other in a circle")
    base = _expanded(base_path, chain)
    parse(base, base_path)  # a fault of the base is named in its own file
    tables = raw.pop("step", [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise fail("key 'step'", "expected [[step]] tables")
    steps = [_rebased(dict(t), base_path.parent, path.parent) for t in base["step"]]
    later: dict[Any, list[dict]] = {t["name"]: [] for t in [*steps, {"name": None}]}  # new steps after each (None: all)
    for index, table in enumerate(tables):
        if any(t.get("name") == table.get("name") for t in tables[:index]):
            raise fail(f"step {table.get('name')!r}, key 'name'", "named by an earlier [[step]] of this file too")
        same = next((s for s in steps if s.get("name") == table.get("name")), None)
        after = table.pop("after", None)
        if after is not None and (same is not None or not isinstance(after, str) or after not in later):
            raise fail(f"step {table.get('name')!r}, key 'after'", f"{table['name']!r} is a step of {base_path}, which "
                       "keeps its place" if same is not None else f"expected a step of {base_path}, not {after!r}")
        if same is None:
            later[after].append(table)
        elif table.get("kind", same.get("kind")) != same.get("kind"):
            raise fail(f"step {table['name']!r}, key 'kind'", f"{base_path} has it as a {same.get('kind')} step: a step of the "
                       f"same name overrides its keys and keeps its kind, not {table['kind']!r} (give it another name)")
        else:
            same.update(table)
    steps = [*(step for t in steps for step in (t, *later[t["name"]])), *later[None]]
    description = {"description": base["description"]} if "description" in base and "description" not in raw else {}
    return {**raw, **description, "step": steps}


def _rebased(table: dict[str, Any], base: Path, folder: Path) -> dict[str, Any]:
    """A base recipe's step with its relative checkpoint paths made relative to the folder of the file that extends
    it, so they name the same files."""
    if table.get("kind") == "train-values" and base.resolve() != folder.resolve():
        _relative_paths(table, lambda entry: os.path.relpath((base / entry).resolve(), folder.resolve()))
    return table


def _relative_paths(keys: dict[str, Any], change: Callable[[str], str]) -> None:
    """Apply ``change`` to a train-values step's relative checkpoint paths: ``start``, and those in ``pool``."""
    def relative(entry: Any) -> bool:
        return isinstance(entry, str) and bool(entry) and not Path(entry).is_absolute()

    if relative(keys.get("start")):
        keys["start"] = change(keys["start"])
    if isinstance(keys.get("pool"), list):
        keys["pool"] = [change(e) if relative(e) and names_checkpoint(e) else e for e in keys["pool"]]


def parse(raw: dict[str, Any], path: Path) -> Recipe:
    """Check a parsed recipe; ValueError naming ``path``, the step and the key at fault."""
    def fail(where: str, problem: str) -> ValueError:
        return ValueError(f"recipe {path}: {where}: {problem}")

    unknown = [k for k in raw if k not in ("name", "description", "step")]
    if unknown:
        raise fail(f"key {unknown[0]!r}", "unknown key (a recipe has name, description, extends and [[step]] tables)")
    for key in ("name", "description"):
        if key in raw and not isinstance(raw[key], str) or key == "name" and not str(raw.get(key, "")).strip():
            raise fail(f"key {key!r}", "expected a string" + (" that is not empty" if key == "name" else ""))
    tables = raw.get("step", [])
    if not isinstance(tables, list) or not tables or not all(isinstance(t, dict) for t in tables):
        raise fail("key 'step'", "expected one or more [[step]] tables")
    steps: list[Step] = []
    for index, table in enumerate(tables, 1):
        steps.append(_step(index, table, steps, fail, path.parent))
    _check_seeds(steps, fail)
    return Recipe(path, raw["name"], raw.get("description", ""), raw, tuple(steps))


def _step(index: int, table: dict[str, Any], before: list[Step], fail, folder: Path) -> Step:
    """One checked step; ``before``: the steps above it; ``folder``: the recipe's, which a relative ``start`` (the
    checkpoint a train-values step starts from) is read from."""
    name = table.get("name")
    if not isinstance(name, str) or not STEP_NAME.fullmatch(name):
        raise fail(f"step {index}, key 'name'", f"expected a folder name of letters, digits, '-' and '_', not {name!r}")
    if any(s.name == name for s in before):
        raise fail(f"step {index}, key 'name'", f"{name!r} names an earlier step too")
    kind = table.get("kind")
    where = f"step {index} {name!r}"
    if kind not in KINDS:
        raise fail(f"{where}, key 'kind'", f"expected one of {', '.join(KINDS)}, not {kind!r}")
    schema = KEYS[kind]
    keys: dict[str, Any] = {}
    for key, value in table.items():
        if key in ("name", "kind"):
            continue
        if key not in schema:
            raise fail(f"{where}, key {key!r}", f"unknown key of a {kind} step (keys: {', '.join(schema)})")
        problem = key_problem(schema[key], key, value)
        if problem is not None:
            raise fail(f"{where}, key {key!r}", problem.removeprefix(f"{key} "))
        keys[key] = value
    for key in REQUIRED.get(kind, ()):
        if key not in keys:
            raise fail(f"{where}, key {key!r}", f"missing: a {kind} step names it")
    keys = {k: keys.get(k, spec.default) for k, spec in schema.items()}
    if kind == "train-values":
        _relative_paths(keys, lambda entry: str((folder / entry).resolve()))
    step = Step(index, name, kind, keys)
    for key, spec in schema.items():  # a step named (data_from: several) is an earlier one of a kind that fits
        names = keys[key] if spec.kind == "steps" else [keys[key]] if spec.kind == "step" and keys[key] is not None else []
        wanted = ("train-values",) if kind == "fit-values" or spec.kind == "steps" else CHECKPOINT_KINDS
        for named in names:
            found = next((s for s in before if s.name == named), None)
            if found is None or found.kind not in wanted:
                raise fail(step.where(key), f"{named!r} is not an earlier step of kind {' or '.join(wanted)}")
    try:
        _check_settings(step, before)
    except ValueError as e:
        at, message = _option_key(str(e), kind)
        if at not in schema:
            raise fail(step.where(), message) from None
        message = message.removeprefix(f"{at}: ")
        raise fail(step.where(at), message[len(at) + 1:] if message.startswith(f"{at} must ") else message) from None
    return step


def _check_settings(step: Step, before: list[Step]) -> None:
    """ValueError (naming the option or key) for the first impossible setting of ``step``, with the check function of
    its command; and what the step reads from an earlier one: a checkpoint that plays its player counts."""
    k = step.keys
    if step.kind in ("train-values", "margins"):
        try:
            Rules.make(k["players"], k["rounds"])
        except ValueError as e:
            raise ValueError(f"--rounds {short_repr(k['rounds'])}: {e}") from None
    if step.kind == "train-values":
        _check_stages(k["stage"])
        for cfg in step.values_stages():
            check_config(cfg)
        _check_data_from(step, before)
    elif step.kind == "fit-values":
        data = next(s for s in before if s.name == k["data"])
        run = data.values_stages()[-1]
        iterations = k["iterations"]
        if iterations is not None and (not iterations or len(set(iterations)) != len(iterations)
                                       or not all(0 <= i < run.iterations for i in iterations)):
            raise ValueError(f"--iterations {short_repr(iterations)}: expected distinct iterations of step {data.name!r} "
                             f"(0 to {run.iterations - 1})")
        check_fit(run, step.fit_config())
    elif step.kind == "margins":
        check_grid(step.margin_grid())
        _check_plays(step, before, {k["players"]}, "players", "its tables have {}")
    elif step.kind == "eval-suite":
        config = step.suite_config("ppo")
        config.check()
        eval_suite.check_references(config.references)
        if set(eval_suite.ROW_KINDS) - {"players"} - set(config.skip):
            _check_plays(step, before, {eval_suite.TABLE_PLAYERS}, "checkpoint", "the battery's rows but 'players' have {} "
                         "(skip rule, reference, play and self-play to measure the players rows alone)")


def _check_stages(stages: list[dict[str, Any]]) -> None:
    """ValueError naming ``--stage`` and the first stage that sets a key a resumed run may not change, a value that is
    not one of its key, or fewer iterations than the stage before."""
    last = 0
    for i, stage in enumerate(stages, 1):
        wrong = next((key for key in stage if key not in RESUME_MAY_CHANGE), None)
        if wrong is not None:
            raise ValueError(f"--stage {i} sets {short_repr(wrong)}: a stage (a resumed run) may set only "
                             f"{', '.join(RESUME_MAY_CHANGE)}")
        for key, value in stage.items():
            problem = key_problem(KEYS["train-values"][key], key, value)
            if problem is not None:
                raise ValueError(f"--stage {i}: {key!r}: {problem.removeprefix(f'{key} ')}")
        if stage.get("iterations", last) <= last:
            raise ValueError(f"--stage {i}: 'iterations' must grow from stage to stage (the total after the stage)")
        last = stage["iterations"]


def _check_data_from(step: Step, before: list[Step]) -> None:
    """ValueError naming ``--data-from`` and the first earlier step whose data this step cannot fit, as
    ``values_config.earlier_runs`` would refuse it when the step runs: data stored with RuleAgent's choice where this
    step's are stored with the action played (``advice`` false), or the other way round; a step that is no zero run
    where this one is."""
    cfg = step.values_stages()[-1]
    for name in step.keys["data_from"]:
        earlier = next(s for s in before if s.name == name).values_stages()[-1]
        if earlier.advice != cfg.advice:
            stored = {True: "RuleAgent's choice", False: "the action played (advice false)"}
            raise ValueError(f"--data-from: step {name!r} stores its decisions with {stored[earlier.advice]}, this "
                             f"step with {stored[cfg.advice]}")
        if cfg.zero and not earlier.zero:
            raise ValueError(f"--data-from: step {name!r} is no zero run; a zero step reads only the data of zero runs")


def plays(step: Step, before: list[Step]) -> set[int]:
    """The player counts the checkpoint of ``step`` (a train-values, fit-values or margins step) plays: those of the
    train-values step it comes from (its ``mix`` and the ``players`` of its evaluations)."""
    while step.kind != "train-values":
        step = next(s for s in before if s.name == step.keys["data" if step.kind == "fit-values" else "checkpoint"])
    return {*step.keys["mix"], step.keys["players"]}


def _check_plays(step: Step, before: list[Step], needed: set[int], key: str, tables: str) -> None:
    """ValueError naming ``key`` where the checkpoint ``step`` reads does not play the player counts ``needed``
    (``tables``: where they are needed, ``{}`` standing for the first count missing)."""
    source = step.keys["checkpoint"]
    counts = plays(next(s for s in before if s.name == source), before)
    missing = sorted(needed - counts)
    if missing:
        raise ValueError(f"{key}: the checkpoint of step {source!r} plays {'/'.join(map(str, sorted(counts)))} players, "
                         f"and {tables.format(missing[0])}")


def _check_seeds(steps: list[Step], fail) -> None:
    """The margins' deals must not be the deals of an evaluation."""
    for suite in (s for s in steps if s.kind == "eval-suite"):
        used = {suite.keys["seed"] + d for d in range(3)}
        for grid in (s for s in steps if s.kind == "margins"):
            for key in ("seed", "self_play_seed"):
                if grid.keys[key] in used:
                    raise fail(grid.where(key), f"seed {grid.keys[key]} plays deals of the evaluation of step {suite.name!r} "
                               f"(its seeds {', '.join(map(str, sorted(used)))}): choose margins on other deals")


def first_change(before: Any, now: Any, where: str = "") -> str | None:
    """Where two parsed recipes first differ, in words (None: they are the same)."""
    if isinstance(before, dict) and isinstance(now, dict):
        for key in list(dict.fromkeys([*before, *now])):
            if key not in now or key not in before:
                return f"{where}key {key!r} is {'gone' if key not in now else 'new'}"
            found = first_change(before[key], now[key], f"{where}{key}.")
            if found:
                return found
        return None
    tables = isinstance(before, list) and isinstance(now, list) and all(isinstance(t, dict) for t in [*before, *now])
    if tables and len(before) != len(now):
        head, _, table = where[:-1].rpartition(": ")
        return f"{head + ': ' if head else ''}it had {len(before)} [[{'step.' if head else ''}{table}]] tables, has {len(now)}"
    if tables:
        for i, (b, n) in enumerate(zip(before, now), 1):
            label = f"{where[:-1]} {i}" + (f" {b.get('name')!r}" if isinstance(b, dict) and "name" in b else "")
            found = first_change(b, n, f"{label}: ")
            if found:
                return found
        return None
    if before != now or type(before) is not type(now):
        return f"{where[:-1] or 'the recipe'} was {short_repr(before)}, is now {short_repr(now)}"
    return None
