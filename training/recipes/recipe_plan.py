"""Planning a recipe run (``wizard recipe FILE --out DIR``) before it runs: where each step's folder and checkpoint
are (``step_folder``, ``checkpoint_of``; a step is finished when its ``done.json`` is there, ``DONE``), what each step
runs (``what_it_runs``, ``values_command``) and the ``--list`` of them (``list_steps``, ``step_state``), and the checks
that ``DIR`` can take the run (``check_out``: new, ``--resume`` with the same recipe, ``--from STEP`` with the same
recipe up to STEP) and that ``--until`` and ``--from`` name steps (``check_step_names``). ``recipe_run`` runs it.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from .recipe import Recipe, Step, first_change
from .recipe_keys import SPEED_KEYS
from ..values.values_config import ValuesConfig

DONE = "done.json"


def step_folder(out: Path, step: Step) -> Path:
    return out / "steps" / step.name


def checkpoint_of(out: Path, step: Step) -> Path:
    """The checkpoint a finished step hands to the steps after it."""
    folder = step_folder(out, step)
    return {"train-values": folder / "checkpoints" / "latest.npz", "fit-values": folder / "agent.npz",
            "margins": folder / "chosen.npz"}[step.kind]


def values_command(cfg: ValuesConfig, step: Step) -> str:
    """The ``wizard train-values`` options of a stage that differ from the defaults."""
    parts = []
    for name, value in dataclasses.asdict(cfg).items():
        if value == getattr(ValuesConfig(), name):
            continue
        option = f"--{name.replace('_', '-')}"
        if isinstance(value, bool):  # a flag: --features, --no-advice
            parts.append(option if value else f"--no-{name.replace('_', '-')}")
        else:
            parts.append(f"{option} {','.join(map(str, value)) if isinstance(value, list) else value}")
    if step.keys["players"] != 4:
        parts.append(f"--players {step.keys['players']}")
    if step.keys["rounds"] != "standard":
        rounds = step.keys["rounds"]
        parts.append(f"--rounds {','.join(map(str, rounds)) if isinstance(rounds, list) else rounds}")
    return " ".join(parts)


def what_it_runs(recipe: Recipe, step: Step) -> str:
    """A step's progress line: what it runs."""
    k = step.keys
    if step.kind == "train-values":
        stages = step.values_stages()
        return f"wizard train-values, {len(stages)} command(s), {stages[-1].iterations} iterations"
    if step.kind == "fit-values":
        return (f"a fresh {','.join(map(str, k['hidden']))} network on the data of step {k['data']!r}, "
                f"{k['epochs']} epoch{'s' if k['epochs'] != 1 else ''}, seed {k['seed']}")
    if step.kind == "margins":
        return f"{len(k['grid'])} margin pairs for the checkpoint of step {k['checkpoint']!r} on {k['deals']:,} deals (seeds {k['seed']}, {k['self_play_seed']})"
    if step.kind == "eval-suite":
        return f"wizard eval-suite ppo:CHECKPOINT of step {k['checkpoint']!r}, {k['deals']:,} deals a row, seed {k['seed']}"
    return f"copies the checkpoint of step {k['checkpoint']!r} to agent.npz and writes tables.md"


def list_steps(recipe: Recipe, out: Path | None = None) -> str:
    """The steps of ``recipe``, one paragraph each: its name, kind and what it runs (a train-values step's commands),
    its folder in ``out`` (``OUT`` where None) and, given ``out``, whether it is finished there."""
    where = Path("OUT") if out is None else out
    lines = [f"recipe {recipe.name} ({recipe.path}): {len(recipe.steps)} steps, each into {where / 'steps' / 'NAME'}"]
    for step in recipe.steps:
        folder = step_folder(where, step)
        state = "" if out is None else f" [{step_state(out, step)}]"
        lines.append(f"{step.index}. {step.name} ({step.kind}){state}: {what_it_runs(recipe, step)}")
        if step.kind == "train-values":
            folders = [str(step_folder(where, recipe.step(name))) for name in step.keys["data_from"]]
            for i, cfg in enumerate(step.values_stages(), 1):
                command = values_command(dataclasses.replace(cfg, data_from=folders), step)
                lines.append(f"   command {i}: wizard train-values --out {folder} {command}{' --resume' if i > 1 else ''}")
        writes = f"{folder}" + (f", {where / 'agent.npz'}, {where / 'tables.md'}" if step.kind == "publish" else "")
        lines.append(f"   writes {writes}")
    return "\n".join(lines)


def step_state(out: Path, step: Step) -> str:
    """Whether ``step`` is finished in the run in ``out``, started (cut short) or not started."""
    folder = step_folder(out, step)
    return "finished" if (folder / DONE).is_file() else "started, not finished" if folder.is_dir() else "not started"


def check_out(recipe: Recipe, out: Path, resume: bool, from_step: str | None = None) -> None:
    """ValueError unless ``out`` can take this run: new and empty, or (``resume``) started with the same recipe; with
    ``from_step``, the same recipe up to that step, every step before it finished there."""
    saved = out / "recipe.json"
    if any(s.kind == "eval-suite" for s in recipe.steps) and ":" in str(out.resolve()):
        raise ValueError(f"--out {out}: the eval-suite step names its checkpoint in an agent spec, where ':' separates "
                         "options: choose a folder whose path has no ':'")
    if from_step is not None:
        _check_from(recipe, out, from_step)
        return
    if not resume:
        if saved.exists():
            raise ValueError(f"{out} already holds a recipe run: pass --resume to continue it, or another --out")
        if out.exists() and (not out.is_dir() or any(p.name != ".lock" for p in out.iterdir())):  # a lock left by a kill
            raise ValueError(f"{out} is not an empty folder: choose another --out")
        return
    if not saved.is_file():
        raise ValueError(f"--resume: no recipe run in {out} (no recipe.json)")
    before = saved_recipe(saved, "--resume", ": start the recipe again in another --out")
    change = first_change(without_speed_keys(before), without_speed_keys(json.loads(json.dumps(recipe.raw))))
    if change:
        raise ValueError(f"--resume: {recipe.path} is not the recipe {out} was started with ({change}): restore it, "
                         "or run the changed recipe into another --out")


def _check_from(recipe: Recipe, out: Path, from_step: str) -> None:
    """``check_out`` for ``--from``: the run in ``out`` has the recipe's steps before ``from_step`` (but for their
    ``SPEED_KEYS``), each finished there."""
    index = [s.name for s in recipe.steps].index(from_step)
    before = [s.name for s in recipe.steps[:index]]
    saved = out / "recipe.json"
    if not saved.is_file():
        raise ValueError(f"--from {from_step!r}: no recipe run in {out} (no recipe.json) holds the steps before it"
                         + (f" ({', '.join(before)}): run them first, with --until {before[-1]}" if before else
                            ": start the recipe without --from"))
    earlier = saved_recipe(saved, "--from", ": start the recipe again in another --out")
    change = first_change(_up_to(without_speed_keys(earlier), index),
                          _up_to(without_speed_keys(json.loads(json.dumps(recipe.raw))), index))
    if change:
        raise ValueError(f"--from {from_step!r}: {recipe.path} differs from the recipe {out} was started with before "
                         f"that step ({change}): restore it, or run it into another --out")
    missing = [s for s in recipe.steps[:index] if not (step_folder(out, s) / DONE).is_file()]
    if missing:
        raise ValueError(f"--from {from_step!r}: the steps before it must be finished in {out}, and "
                         f"{', '.join(s.name for s in missing)} {'is' if len(missing) == 1 else 'are'} not (no "
                         f"{step_folder(out, missing[0]) / DONE}): finish them first with --resume --until {before[-1]}")


def _up_to(raw: dict, index: int) -> dict:
    """A parsed recipe with its first ``index`` steps only."""
    steps = raw.get("step")
    return {**raw, "step": steps[:index]} if isinstance(steps, list) else raw


def without_speed_keys(raw: dict) -> dict:
    """A parsed recipe without the keys of its steps that change only how fast they run (``SPEED_KEYS``): what a
    resumed run compares."""
    if not isinstance(raw.get("step"), list):
        return raw
    return {**raw, "step": [step_settings(t) if isinstance(t, dict) else t for t in raw["step"]]}


def step_settings(table: dict) -> dict:
    """A parsed step without the keys that change only how fast it runs (``SPEED_KEYS``)."""
    return {k: v for k, v in table.items() if k not in SPEED_KEYS.get(str(table.get("kind")), ())}


def check_step_names(recipe: Recipe, until: str | None = None, from_step: str | None = None) -> None:
    """ValueError naming ``--until`` or ``--from`` where it names no step of ``recipe`` (listing them), or where
    ``--until`` comes before ``--from``."""
    names = [s.name for s in recipe.steps]
    for option, name in (("--from", from_step), ("--until", until)):
        if name is not None and name not in names:
            raise ValueError(f"{option} {name!r}: the recipe has no such step (steps: {', '.join(names)})")
    if until is not None and from_step is not None and names.index(until) < names.index(from_step):
        raise ValueError(f"--until {until!r} comes before --from {from_step!r}: nothing would run")


def saved_recipe(saved: Path, option: str, remedy: str = "") -> dict:
    """The parsed recipe a run's ``recipe.json`` holds; ValueError naming ``option``, the file and ``remedy`` where it
    cannot be read."""
    try:
        recipe = json.loads(saved.read_text())["recipe"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{option}: {saved} is damaged ({str(e)[:100]}){remedy}") from None
    if not isinstance(recipe, dict):
        raise ValueError(f"{option}: {saved} is damaged (its recipe is not a table){remedy}")
    return recipe
