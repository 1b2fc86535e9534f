"""Running a recipe (``wizard recipe FILE --out DIR``): every step in its folder, resumable after a kill or a reboot.

``DIR`` holds ``recipe.json`` (the recipe as parsed when the run started; a resumed run refuses a recipe that
differs from it, naming the first difference) and a copy of the file, ``steps/NAME/`` for each step, and at the
end ``agent.npz`` and ``tables.md`` (a ``publish`` step). A step is finished when ``steps/NAME/done.json`` is
there (written atomically, last): a resumed run skips finished steps, resumes a train-values step with its
``--resume`` (finished chunks and iterations are kept), reuses the margins already measured, and runs a fit or an
evaluation that was cut short again from its start (same seeds, same result). The run holds ``DIR``'s lock.

``--from STEP`` runs STEP and the steps after it again from their start, in a run of ``DIR`` whose steps before STEP
are finished (the same recipe up to STEP; STEP and those after it may differ, and the recipe the run records becomes
this one): their folders are removed first (and ``agent.npz`` and ``tables.md`` with the publish step's).
``recipe_plan`` checks ``DIR`` and the step names before a run, and lists the steps (``--list``).

``--reuse OTHER`` (``reuse_steps``) copies into ``DIR`` the finished steps of the recipe run in ``OTHER`` that would
run alike here, from the first step on, instead of running them again: to vary a later step, or to run a recipe
that extends ``OTHER``'s. A train-values step that goes on here (``goes_on``: its commands there are the first of its
commands here, which has more ``[[step.stage]]`` tables) is copied too, and resumed with the stages it lacks; its
``--start`` (the same bytes), ``--pool`` and ``--data-from`` then name this run's files.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any, Callable

from wizard_env.util.files import read_json, regular_file, remove_temps, write_atomic
from wizard_env.util.stopwatch import Stopwatch

from ..evaluation import eval_suite
from .. import train_report
from ..common import run_lock
from ..values.fit_values import fit_fresh
from ..values.margins import copy_checkpoint, run_grid
from .recipe import Recipe, Step, first_change
from .recipe_keys import KEYS
from .recipe_plan import (DONE, check_out, check_step_names, checkpoint_of, saved_recipe, step_folder, step_settings,
                          values_command, what_it_runs)
from ..values.train_values import ValuesTrainer, run_chunks, run_training

FORMAT = "wizard-recipe-run/1"


def _write_json(path: Path, data: Any) -> None:
    write_atomic(path, lambda file: file.write(json.dumps(data, indent=1, allow_nan=False) + "\n"))


def run_recipe(recipe: Recipe, out: str | Path, resume: bool = False, until: str | None = None,
               log: Callable[[str], object] = print, version: str = "unknown", reuse: str | Path | None = None,
               from_step: str | None = None) -> list[str]:
    """Run the steps of ``recipe`` not finished yet in ``out`` (up to and including ``until``; with ``from_step``,
    that step and those after it again, from their start), after copying those of the run in ``reuse`` that run alike
    (``reuse_steps``); the names of the steps run now."""
    out = Path(out)
    check_step_names(recipe, until, from_step)
    if from_step is not None and reuse is not None:
        raise ValueError(f"--from {from_step!r} runs steps again in a run whose earlier steps are there: copy them "
                         "with --reuse first (with --until), then give --from")
    check_out(recipe, out, resume, from_step)
    reused = None if reuse is None else (Path(reuse), read_reused(Path(reuse), out))  # before anything is written
    out.mkdir(parents=True, exist_ok=True)
    ran: list[str] = []
    started = time.monotonic()
    with run_lock(out, "wizard recipe"):
        if from_step is not None:
            again(recipe, out, from_step, log)
        if not resume or from_step is not None:  # --from: the recipe may differ from that step on
            _write_json(out / "recipe.json", {"format": FORMAT, "file": str(recipe.path), "recipe": recipe.raw})
            text = recipe.path.read_text(encoding="utf-8")
            write_atomic(out / "recipe.toml", lambda file: file.write(text))
        if reused is not None:
            reuse_steps(recipe, out, *reused, log)
        for step in recipe.steps:
            folder = step_folder(out, step)
            head = f"recipe {recipe.name}: step {step.index}/{len(recipe.steps)} {step.name} ({step.kind})"
            if (folder / DONE).is_file():
                log(f"{head}: finished earlier, kept")
            else:
                folder.mkdir(parents=True, exist_ok=True)
                for stale in remove_temps(folder):
                    log(f"removed {stale}, left by a run killed while writing")
                log(f"{head}: {what_it_runs(recipe, step)} ...")
                with Stopwatch() as watch:
                    outputs = STEPS[step.kind](recipe, step, out, folder, lambda line, s=step: log(f"  {s.name}: {line}"), version)
                _write_json(folder / DONE, {"step": step.name, "kind": step.kind, "seconds": round(watch.seconds, 1),
                                            "outputs": outputs})
                ran.append(step.name)
                log(f"{head}: done in {_minutes(watch.seconds)} (this session {_minutes(time.monotonic() - started)})")
            if step.name == until:
                if step is not recipe.steps[-1]:
                    log(f"recipe {recipe.name}: stopped after step {until!r} (--until); continue with --resume")
                break
    return ran


def again(recipe: Recipe, out: Path, from_step: str, log: Callable[[str], object]) -> None:
    """Remove the folders of ``from_step`` and the steps after it (and what a publish step among them wrote), so that
    they run again from their start."""
    index = [s.name for s in recipe.steps].index(from_step)
    for step in recipe.steps[index:]:
        folder = step_folder(out, step)
        made = [folder] + ([out / "agent.npz", out / "tables.md"] if step.kind == "publish" else [])
        if any(path.exists() for path in made):
            log(f"recipe {recipe.name}: step {step.index}/{len(recipe.steps)} {step.name}: its outputs removed, to run "
                "again from its start (--from)")
        shutil.rmtree(folder, ignore_errors=True)
        for path in made[1:]:
            path.unlink(missing_ok=True)


def read_reused(source: Path, out: Path) -> dict[str, dict]:
    """The steps of the recipe run in ``source`` by name, as its recipe.json has them; ValueError naming ``--reuse``
    and the remedy where there is no such run or it is ``out`` itself."""
    if source.resolve() == out.resolve():
        raise ValueError(f"--reuse {source}: that is --out itself: name the folder of another recipe run")
    saved = source / "recipe.json"
    if not saved.is_file():
        raise ValueError(f"--reuse {source}: no recipe run there (no recipe.json)")
    steps = saved_recipe(saved, "--reuse").get("step")
    if not isinstance(steps, list) or not all(isinstance(t, dict) and isinstance(t.get("name"), str) for t in steps):
        raise ValueError(f"--reuse: {saved} is damaged (its recipe has no list of named steps)")
    return {t["name"]: t for t in steps}


def reuse_steps(recipe: Recipe, out: Path, source: Path, theirs: dict[str, dict], log: Callable[[str], object]) -> list[str]:
    """Copy into ``out`` the finished steps of the run in ``source`` (``theirs``: its steps by name) that would run
    alike here, from the first step on; the names of the steps copied. A step is copied while it has the same
    settings there (as the recipe files say them, but for ``SPEED_KEYS``), is finished there, is not in ``out``
    yet (one finished here is passed over) and is no ``publish`` step; a train-values step's ``start`` must be the
    same file, byte for byte (the sha256 the step recorded in done.json, or for a step run before it did, the file its
    config.json names). A train-values step that goes on here (``goes_on``) is copied without its done.json, naming
    this run's files, and ends the copying. The first step that is not copied ends it too (a line of ``log`` says
    why): the steps after it may read it. Each step is copied whole into a hidden folder and renamed into place, so
    a kill leaves no step half copied."""
    ours = {t["name"]: t for t in json.loads(json.dumps(recipe.raw))["step"]}
    copied: list[str] = []
    for step in recipe.steps:
        folder, there = step_folder(out, step), step_folder(source, step)
        if (folder / DONE).is_file():  # copied by an earlier --reuse that was cut short, or run here
            continue
        why = _not_reused(step, ours[step.name], theirs.get(step.name), there, folder)
        if why:
            log(f"--reuse {source}: no step copied from {step.name!r} on: {why}")
            break
        temp = folder.with_name(f".{step.name}.reuse")
        shutil.rmtree(temp, ignore_errors=True)  # left by a kill during a copy
        shutil.copytree(there, temp, symlinks=True)
        more = goes_on(step, ours[step.name], theirs[step.name])
        if more:  # not finished here: its run names the files of this run, which are those it read there
            (temp / DONE).unlink()
            cfg = step.values_stages()[0]
            config = json.loads((temp / "config.json").read_text())
            config["train"].update(start=cfg.start, pool=cfg.pool, data_from=data_from_folders(recipe, step, out))
            _write_json(temp / "config.json", config)
        temp.rename(folder)
        copied.append(step.name)
        where = f"recipe {recipe.name}: step {step.index}/{len(recipe.steps)} {step.name}: copied from {there}"
        if more:
            log(f"{where} (finished there with its first {more} command(s); the others run here)")
            break  # the steps after it read what it has not made yet
        log(f"{where} (finished there, the same settings)")
    return copied


def goes_on(step: Step, ours: dict, theirs: dict) -> int:
    """How many commands of the train-values step ``ours`` (its recipe table here) ``theirs`` (there) ran, where its
    commands are the first of ours and ours has more; 0 where it is not so cut short."""
    if step.kind != "train-values":
        return 0
    mine, done = _commands(ours), _commands(theirs)
    return len(done) if len(mine) > len(done) and mine[:len(done)] == done else 0


def _commands(table: dict) -> list[dict]:
    """A train-values step's commands as its recipe table says them: every key (the default where it gives none), with
    each ``[[step.stage]]``'s."""
    keys = {**{k: key.default for k, key in KEYS["train-values"].items()}, **step_settings(table)}
    stages = keys.pop("stage") or [{}]
    return [{**keys, **stage} for stage in stages]


def data_from_folders(recipe: Recipe, step: Step, out: Path) -> list[str]:
    """The folders of the steps a train-values step's ``data_from`` names, in this run (its ``--data-from``)."""
    return [str(step_folder(out, recipe.step(name)).resolve()) for name in step.keys["data_from"]]


def _not_reused(step: Step, ours: dict, theirs: dict | None, there: Path, folder: Path) -> str | None:
    """Why ``step`` is not copied from ``there`` (None: it is)."""
    if step.kind == "publish":
        return "a publish step writes this run's agent.npz and tables.md"
    if folder.exists():
        return f"{folder} was started in this run"
    if theirs is None:
        return "that run has no step of this name"
    change = first_change(step_settings(theirs), step_settings(ours), f"{step.name!r}: ")
    if change and not goes_on(step, ours, theirs):
        return f"its settings differ ({change})"
    if not (there / DONE).is_file():
        return f"it is not finished there (no {there / DONE})"
    start = step.values_stages()[0].start if step.kind == "train-values" else ""
    if start:
        try:  # the fingerprint the step recorded; a run from before it: the file its config.json names, now
            done, config = read_json(there / DONE)[0], read_json(there / "config.json")[0]  # None: not a regular file, ...
            recorded = done["outputs"].get("start_sha256")
            used = recorded or _sha256(regular_file(config["train"]["start"], "--start"))
            same = used == _sha256(Path(start))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            same = False
        if not same:
            return f"the checkpoint it started from there is not {start}, byte for byte"
    return None


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _minutes(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 60 else f"{seconds / 60:.1f} min"


def _train_values(recipe: Recipe, step: Step, out: Path, folder: Path, log, version: str) -> dict:
    stages = [dataclasses.replace(cfg, data_from=data_from_folders(recipe, step, out)) for cfg in step.values_stages()]
    for i, cfg in enumerate(stages, 1):
        trainer = ValuesTrainer(cfg, step.rules(), folder, quiet=True, log=lambda line: None, rounds=step.keys["rounds"])
        if trainer.finished(trainer.played() - 1):  # its last checkpoint (--patience: where it stops), and its verdict
            log(f"command {i}/{len(stages)} finished earlier, kept")
            continue
        resume = (folder / "config.json").exists() or (folder / "data").exists()
        log(f"command {i}/{len(stages)}: wizard train-values --out {folder} {values_command(cfg, step)}{' --resume' if resume else ''}")
        run_training(cfg, step.rules(), folder, resume=resume, log=log, rounds=step.keys["rounds"])
    start = stages[0].start  # its fingerprint, for a --reuse of this step (``_not_reused``)
    return {"checkpoint": str(checkpoint_of(out, step)), "iterations": trainer.played(),
            **({"start_sha256": _sha256(Path(start))} if start else {})}


def _fit_values(recipe: Recipe, step: Step, out: Path, folder: Path, log, version: str) -> dict:
    data = recipe.step(step.keys["data"])
    run = data.values_stages()[-1]
    played = ValuesTrainer(run, data.rules(), step_folder(out, data), quiet=True, log=lambda line: None, rounds=data.keys["rounds"]).played()
    iterations = step.keys["iterations"] or list(range(played))
    chunks, _ = run_chunks(step_folder(out, data), run, data.rules(), iterations, data.keys["rounds"])
    with Stopwatch() as watch:
        stats = fit_fresh(chunks, run, step.fit_config(), data.rules(), checkpoint_of(out, step), max(iterations), log)
    stats = {"iterations": iterations, "chunks": len(chunks), **stats, "wall_seconds": round(watch.seconds, 1)}
    _write_json(folder / "fit.json", stats)
    log(f"fitted {stats['decisions']:,} decisions, loss {stats['loss']:.3f}; {held_out_text(stats)}")
    return {"checkpoint": str(checkpoint_of(out, step))}


def held_out_text(stats: dict, table: bool = False) -> str:
    """What a fit's figures (``fit_values.fit_fresh``'s) say of the decisions it held out; that none were, if so.
    ``table``: as a sentence of tables.md (gains by phase as trump / bid / play)."""
    if "differs" not in stats:
        return ("Nothing was held out (fewer chunks than held_out_every)." if table else
                "nothing held out (fewer chunks than the fit's held_out_every)")
    if table:
        gains = " / ".join(f"{stats[k]:+.2f}" if k in stats else "-" for k in ("trump", "bid", "play"))
        return (f"On held-out decisions it departs from RuleAgent at {stats['differs']:.1%}; gain over RuleAgent's "
                f"choice, trump / bid / play: {gains} points.")
    return (f"on held-out decisions it departs from RuleAgent at {stats['differs']:.1%}, gain per decision: "
            + ", ".join(f"{k} {v:+.2f}" for k, v in stats.items() if k in ("trump", "bid", "play")))


def _margins(recipe: Recipe, step: Step, out: Path, folder: Path, log, version: str) -> dict:
    data = run_grid(checkpoint_of(out, recipe.step(step.keys["checkpoint"])), step.margin_grid(), folder, log)
    chosen = data["rows"][data["chosen"]]
    log(f"chose bid margin {chosen['bid']:g}, play margin {chosen['play']:g}")
    return {"checkpoint": str(checkpoint_of(out, step)), "bid": chosen["bid"], "play": chosen["play"]}


def _eval_suite(recipe: Recipe, step: Step, out: Path, folder: Path, log, version: str) -> dict:
    # relative to the working folder, as the command was given: the suite's JSON and the tables name no machine's folders
    agent = f"ppo:{os.path.relpath(checkpoint_of(out, recipe.step(step.keys['checkpoint'])))}"
    eval_suite.run_to(folder, step.suite_config(agent), log=log, version=version)
    return {"suite": str(folder / eval_suite.JSON_NAME)}


def _publish(recipe: Recipe, step: Step, out: Path, folder: Path, log, version: str) -> dict:
    source = checkpoint_of(out, recipe.step(step.keys["checkpoint"]))
    copy_checkpoint(source, out / "agent.npz")
    tables = tables_markdown(recipe, out, step)
    write_atomic(out / "tables.md", lambda file: file.write(tables))
    log(f"wrote {out / 'agent.npz'} (from {source}) and {out / 'tables.md'}")
    return {"agent": str(out / "agent.npz"), "tables": str(out / "tables.md")}


STEPS: dict[str, Callable[..., dict]] = {"train-values": _train_values, "fit-values": _fit_values, "margins": _margins,
                                         "eval-suite": _eval_suite, "publish": _publish}


def tables_markdown(recipe: Recipe, out: Path, publish: Step) -> str:
    """The model card's tables from the outputs of the steps before ``publish``."""
    lines = [f"# Recipe `{recipe.name}`: its tables", "",
             f"Written by `wizard recipe {recipe.path.name} --out {os.path.relpath(out)}`; `agent.npz` is the checkpoint of step "
             f"{publish.keys['checkpoint']!r}. {recipe.description}".rstrip(), ""]
    for step in recipe.steps[:publish.index - 1]:
        folder = step_folder(out, step)
        seconds = json.loads((folder / DONE).read_text())["seconds"]
        lines += [f"## Step {step.index}: {step.name} ({step.kind}, {_minutes(seconds)})", ""]
        if step.kind == "train-values":
            rows = train_report.read_curve(folder / "curve.csv")
            lines += ["| iteration | decisions | wall min | diff to RuleAgent | bid accuracy (agent / rule) |",
                      "| ---: | ---: | ---: | ---: | ---: |"]
            lines += [f"| {i} | {int(r['timesteps']):,} | {float(r['wall_s']) / 60:.1f} | {float(r['diff']):+.1f} ± "
                      f"{float(r['diff_ci95']):.1f} | {float(r['bid_accuracy']):.1%} / {float(r['rule_bid_accuracy']):.1%} |"
                      for i, r in enumerate(rows)]
        elif step.kind == "fit-values":
            fit = json.loads((folder / "fit.json").read_text())
            lines += [f"{fit['decisions']:,} decisions fitted (iterations {', '.join(map(str, fit['iterations']))}; "
                      f"{fit['held_out']:,} held out), final loss {fit['loss']:.3f}. {held_out_text(fit, table=True)}"]
        elif step.kind == "margins":
            lines += [(folder / "margins.md").read_text().rstrip()]
        elif step.kind == "eval-suite":
            lines += [eval_suite.format_markdown(json.loads((folder / eval_suite.JSON_NAME).read_text())).rstrip()]
        lines.append("")
    return "\n".join(lines)
