"""One reading of a run folder, shared by every ``--resume`` (``wizard train``, ``wizard train-values``, ``wizard
baseline`` and the recipe steps that run them): which command made the run, whether it finished, and what is
missing or damaged.

``read_run`` reads the folder; ``resume_folder`` refuses a resume (ValueError, one line naming the folder, what is
wrong and how to recover) before anything is written where another live process holds the folder's lock, where it
holds no run, another command's run, or a file the resume would read is missing or damaged; ``new_folder`` refuses
a new run in a folder that holds one.

| command | told by | what a resume reads, checked here |
| --- | --- | --- |
| ``wizard train`` | config.json's ``train.timesteps`` | ``checkpoints/latest.npz`` (no checkpoint at all: the run stopped before its first one and starts again) |
| ``wizard train --backend rllib`` | ``train.backend`` rllib | (``rllib_train`` checks ``rllib/``) |
| ``wizard train-values`` | ``train.iterations`` | ``checkpoints/iter-K.npz`` (each one's network of the run's shape), ``latest.npz``, ``init.npz`` |
| ``wizard baseline ALGO`` | config.json's ``algo`` | ``values``: train-values'; ``maskable-ppo``: wizard train's; the others: ``latest.npz`` and ``state.pt`` |
| ``wizard recipe`` | ``recipe.json`` | (``wizard recipe`` resumes it) |

Without config.json the command is told by the latest checkpoint's ``train``, then by the folders a run writes
(``data/``: train-values, ``rllib/``, ``state.pt``). Every layout's ``curve.csv`` must be a readable curve.
"""

from __future__ import annotations

import csv
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from wizard_env.agents.ppo_agent import load_checkpoint
from wizard_env.util.files import not_a_file, read_json

from .common import lock_holder

TRAIN, RLLIB, VALUES, RECIPE = "wizard train", "wizard train --backend rllib", "wizard train-values", "wizard recipe"
#: What a run writes: a folder holding none of these holds no run.
RUN_FILES = ("config.json", "checkpoints", "data", "state.pt", "recipe.json", "rllib")
#: The expected weights of a run's network: each entry's name and shape.
Network = Mapping[str, tuple[int, ...]]


def baseline(algo: str) -> str:
    """The command of ``wizard baseline ALGO``."""
    return f"wizard baseline {algo}"


@dataclass(frozen=True)
class RunFolder:
    """What ``read_run`` found in a run folder."""

    path: Path
    command: str | None  #: the command that made the run (None: no run, or none that can be told)
    config: dict | None  #: config.json, where it holds a JSON object
    started: bool  #: whether the folder holds a run (a file or folder of ``RUN_FILES``)
    finished: bool  #: whether the run reached its budget (steps, iterations)
    problems: tuple[str, ...]  #: what is missing or damaged, each naming its file and how to recover
    holder: int | None  #: the pid of a live process that holds the folder's lock

    def describe(self) -> str:
        """"a finished run of wizard train", "a run of ...", or "a run" when the command cannot be told."""
        return f"a {'finished ' if self.finished else ''}run{f' of {self.command}' if self.command else ''}"


def read_run(out: str | os.PathLike, network: Network | None = None, expected: str | None = None) -> RunFolder:
    """The run in ``out``; with ``network``, a checkpoint the resume reads must hold weights of those shapes; where
    the command cannot be told, its files are checked as a run of ``expected``'s."""
    out = Path(out)
    started, config = any(os.path.lexists(out / name) for name in RUN_FILES), _config(out)
    command = _command(out, config) if started else None
    problems: list[str] = []
    finished = False
    if os.path.lexists(out / "config.json") and not_a_file(out / "config.json") is not None:
        problems.append(f"{out / 'config.json'}: {not_a_file(out / 'config.json')}; move it away and restore the run's")
    kind = command or expected
    if started and kind is not None and kind not in (RECIPE, RLLIB):
        layout = {VALUES: _values, baseline("values"): _values, baseline("maskable-ppo"): _latest, TRAIN: _latest}
        finished = layout.get(kind, _baseline)(out, config or {}, network, problems)
        problems += _curve_problems(out / "curve.csv")
    return RunFolder(out, command, config, started, finished, tuple(problems), lock_holder(out))


def resume_folder(out: str | os.PathLike, commands: tuple[str, ...], network: Network | None = None) -> RunFolder:
    """The run in ``out`` that a ``--resume`` of ``commands[0]`` (or of another of ``commands``, which share its
    folder) continues; ValueError, before anything is written, where it cannot."""
    run = read_run(out, network, commands[0])
    if run.holder is not None:
        raise ValueError(f"--resume: {out} is in use by another process (pid {run.holder}) writing a run"
                         f"{f' of {run.command}' if run.command else ''}: wait for it to end, or stop it, then --resume")
    if not run.started:
        raise ValueError(f"--resume: no run in {out} (none of {', '.join(RUN_FILES)}): start it without --resume")
    if run.command is not None and run.command not in commands:
        raise ValueError(f"--resume: {out} holds {run.describe()}, not of {commands[0]}: resume it with "
                         f"{run.command}{' RECIPE' if run.command == RECIPE else ''} --out {out} --resume")
    if run.problems:
        more = f" (and {len(run.problems) - 1} more)" if len(run.problems) > 1 else ""
        raise ValueError(f"--resume: {out} holds {run.describe()} that cannot go on: {run.problems[0]}{more}")
    return run


def new_folder(out: str | os.PathLike, command: str) -> None:
    """ValueError unless ``out`` holds no run, for a new run of ``command`` to start there."""
    out = Path(out)
    if not any(os.path.lexists(out / name) for name in RUN_FILES):
        return
    found = _command(out, _config(out), checkpoints=False)
    if found in (command, None):
        raise ValueError(f"{out} already holds a run: pass --resume to continue it, or another --out")
    raise ValueError(f"{out} already holds a run of {found}: use another --out (or continue it with "
                     f"{found}{' RECIPE' if found == RECIPE else ''} --out {out} --resume)")


# -- which command ------------------------------------------------------------------------------------------------


def _config(out: Path) -> dict | None:
    """``out``'s config.json, where it holds a JSON object."""
    config = read_json(out / "config.json")[0] if os.path.lexists(out / "config.json") else None
    return config if isinstance(config, dict) else None


def _command(out: Path, config: dict | None, checkpoints: bool = True) -> str | None:
    """The command that wrote config.json ``config`` (then the latest checkpoint's config, then the folders a run
    writes, says it); None where none does."""
    for source in (config, _checkpoint_train(out) if checkpoints else None):
        if not isinstance(source, dict):
            continue
        algo, train = source.get("algo"), source.get("train")
        if isinstance(algo, str) and algo:
            return baseline(algo)
        if isinstance(train, dict):
            method = train.get("method")
            if isinstance(method, str) and method.startswith("baseline-"):
                return baseline(method.removeprefix("baseline-"))
            if train.get("backend") == "rllib":
                return RLLIB
            if method == "rollout-values" or "iterations" in train:
                return VALUES
            if "timesteps" in train:
                return TRAIN
    for name, command in (("recipe.json", RECIPE), ("data", VALUES), ("rllib", RLLIB)):
        if os.path.lexists(out / name):
            return command
    return None


def _checkpoint_train(out: Path) -> dict | None:
    """The config of the run's latest checkpoint, where it is a readable one (the method is in its ``train``)."""
    for path in (out / "checkpoints" / "latest.npz", out / "latest.npz"):
        if not_a_file(path) is None:
            try:
                return load_checkpoint(path)[0]
            except ValueError:
                return None
    return None


# -- what is missing or damaged, by layout (each returns whether the run finished) ------------------------------


def _checkpoint_problem(path: Path, network: Network | None, recovery: str) -> tuple[dict | None, str | None]:
    """The config of the checkpoint at ``path`` and None, or None and what is wrong with it (``recovery`` follows)."""
    problem = not_a_file(path)
    if problem is not None:
        return None, f"{path}: {problem}; {recovery}"
    try:
        config, weights = load_checkpoint(path)
    except ValueError as e:
        return None, f"{e}; {recovery}"
    for name, shape in (network or {}).items():
        found = tuple(weights[name].shape) if name in weights else None
        if found != tuple(shape):
            return None, (f"{path}: its network's {name} has shape {found}, the run's network {tuple(shape)} (a "
                          f"checkpoint of another run?); {recovery}")
    return config, None


def _latest(out: Path, config: dict, network: Network | None, problems: list[str]) -> bool:
    """``wizard train``'s layout: ``checkpoints/latest.npz``, or no checkpoint at all (stopped before the first)."""
    folder = out / "checkpoints"
    if os.path.lexists(folder) and not folder.is_dir():
        problems.append(f"{folder}: {not_a_file(folder) or 'not a folder'}; move it away to resume")
        return False
    steps = sorted(folder.glob("step-*.npz")) if folder.is_dir() else []
    latest = folder / "latest.npz"
    if not os.path.lexists(latest):
        if steps:
            problems.append(f"{latest}: missing, and the run saved {steps[-1].name}: copy {steps[-1].name} to "
                            "latest.npz to resume from it")
        return False
    recovery = (f"replace it with a copy of {steps[-1].name}, the run's newest checkpoint" if steps else
                "move it away to start the run again")
    saved, problem = _checkpoint_problem(latest, network, recovery)
    if saved is None:
        problems.append(str(problem))
        return False
    timesteps, steps_saved = _entry(config, "train").get("timesteps"), saved.get("num_timesteps")
    return isinstance(timesteps, int) and isinstance(steps_saved, int) and steps_saved >= timesteps


def _baseline(out: Path, config: dict, network: Network | None, problems: list[str]) -> bool:
    """A from-scratch baseline's layout: ``wizard train``'s, ``config.json`` and, once it saved, ``state.pt``."""
    _latest(out, config, network, problems)
    state, saved = out / "state.pt", sorted((out / "checkpoints").glob("*.npz")) if (out / "checkpoints").is_dir() else []
    if not os.path.lexists(out / "config.json"):
        problems.append(f"{out / 'config.json'}: missing (the run's algorithm and arguments); restore it, or start a new "
                        "run in another --out")
    if os.path.lexists(state):
        problem = not_a_file(state)
        if problem is not None:
            problems.append(f"{state}: {problem}; move it away and restore the run's state.pt")
    elif saved:
        problems.append(f"{state}: missing, and checkpoints/ holds the run's networks: the run cannot go on without its "
                        "optimizers, counters and random state; restore it, or start a new run in another --out")
    return _entry(config, "done").get("stopped_by") == "steps"


def _values(out: Path, config: dict, network: Network | None, problems: list[str]) -> bool:
    """``wizard train-values``' layout: ``checkpoints/iter-K.npz`` from 0 up, ``latest.npz``, ``init.npz``, ``data/``."""
    folder = out / "checkpoints"
    for path in (folder, out / "data"):
        if os.path.lexists(path) and not path.is_dir():
            problems.append(f"{path}: {not_a_file(path) or 'not a folder'}; move it away to resume")
            return False
    names = [p.name for p in folder.iterdir()] if folder.is_dir() else []
    done = sorted(int(m.group(1)) for m in map(re.compile(r"iter-(\d+)\.npz").fullmatch, names) if m)
    for k in done:
        path = folder / f"iter-{k}.npz"
        if k and k - 1 not in done:
            problems.append(f"{folder / f'iter-{k - 1}.npz'}: missing, and {path.name}, fitted from it, is there; restore "
                            f"it, or delete {path.name} and the later iterations to play them again")
        problem = _checkpoint_problem(path, network, f"restore this run's, or delete it and the later iterations to "
                                      "play them again")[1]
        problems += [problem] if problem else []
    for name in ("latest.npz", "init.npz"):
        if os.path.lexists(folder / name):
            problem = _checkpoint_problem(folder / name, network, "restore this run's, or delete it and the "
                                          "iterations after the last one it holds to play them again")[1]
            problems += [problem] if problem else []
    iterations = _entry(config, "train").get("iterations")
    return _entry(config, "done").get("stopped_by") == "patience" or isinstance(iterations, int) and iterations - 1 in done


def _entry(config: dict, key: str) -> dict:
    """config.json's object ``key`` ({} where it is not an object)."""
    entry = config.get(key)
    return entry if isinstance(entry, dict) else {}


def _curve_problems(path: Path) -> list[str]:
    """What is wrong with a run's curve.csv (none: it is absent, or a curve a resume appends to)."""
    if not os.path.lexists(path):
        return []
    problem = not_a_file(path)
    if problem is None:
        try:
            with open(path, newline="") as f:
                rows = list(csv.reader(f))
            if not rows or rows[0][:1] not in (["timesteps"], ["decisions"]):
                problem = "not a learning curve (its first column is not timesteps or decisions)"
            elif any(not row or not row[0].isdigit() for row in rows[1:]):
                problem = "damaged (a row's first column is not a count)"
        except (OSError, UnicodeDecodeError, csv.Error) as e:
            problem = f"cannot be read ({type(e).__name__})"
    return [] if problem is None else [f"{path}: {problem}; move it away (the resumed run starts a new curve)"]
