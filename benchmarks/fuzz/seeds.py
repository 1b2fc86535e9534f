"""The valid documents the structured targets mutate, and the folder the targets work in.

Each is made by the project's own writers where there is one (a recorded game, ``save_checkpoint``; a small recipe and
the play page's settings are written out here), once per process, so a mutation starts from what a user would have.
"""

from __future__ import annotations

import functools
import importlib
import json
import shutil
import tempfile
from importlib.util import find_spec
from pathlib import Path

import numpy as np

from wizard_env.agents.checkpoint import weight_names
from wizard_env.agents.ppo_agent import FORMAT, save_checkpoint
from wizard_env.agents.rule_agent import RuleAgent
from wizard_env.engine.game import NUM_ACTIONS
from wizard_env.engine.observation import OBS_SIZE, OBS_VERSION, version_columns
from wizard_env.engine.replay import game_record
from wizard_env.engine.rules import Rules
from wizard_env.engine.simulate import play_game

#: The games recorded: (players, rounds, bidding, foresight, seed, with legal choices).
GAMES = ((3, [1, 2], "open", False, 0, True), (4, 3, "hidden", False, 5, False), (6, [1], "open", True, 2, False),
         (5, [2, 3], "open", False, 11, True))


@functools.cache
def replay_records() -> tuple[str, ...]:
    """Recorded games of several rule sets, as JSON lines (one of them with a Wizard turned, so a trump chosen)."""
    lines = []
    for players, rounds, bidding, foresight, seed, legal in GAMES:
        rules = Rules.make(players, rounds, bidding, False, foresight)
        agents = [RuleAgent(seed=[seed, s]).act for s in range(players)]
        game = play_game(rules, agents, seed, record=True).game
        lines.append(json.dumps(game_record(game, ["rule"] * players, with_legal=legal)))
    wizard_turned = next(seed for seed in range(1000) if _trump(seed) == "Wiz")
    game = play_game(Rules.make(3, [1]), [RuleAgent(seed=s).act for s in range(3)], wizard_turned, record=True).game
    lines.append(json.dumps(game_record(game, ["rule"] * 3)))
    return tuple(lines)


def _trump(seed: int) -> str | None:
    from wizard_env.engine.game import WizardGame

    return WizardGame(Rules.make(3, [1]), seed, record=True).log[0]["trump_card"]


#: The checkpoints a structured input starts from: (hidden, advice, features, obs_version, value net, learn, activation).
NETWORKS = (([3], True, False, OBS_VERSION, False, "both", "relu"), ([2, 2], False, False, 0, True, "both", "tanh"),
            ([], False, True, OBS_VERSION, False, "play", "relu"))


@functools.cache
def network(index: int, seed: int = 0) -> tuple[dict, dict[str, np.ndarray]]:
    """A small valid checkpoint's (config, weights): ``NETWORKS[index]``, weights drawn from ``seed`` (the same objects
    at every call: copy before changing them)."""
    from wizard_env.agents.rule_features import FEATURES

    hidden, advice, features, version, critic, learn, activation = NETWORKS[index]
    inputs = (OBS_SIZE if version == OBS_VERSION else len(version_columns(version))) + NUM_ACTIONS * (advice + FEATURES * features)
    config = {"format": FORMAT, "hidden": hidden, "advice": advice, "features": features, "obs_version": version,
              "learn": learn, "activation": activation, "advice_bonus": 0.5 if advice else 0.0, "num_actions": NUM_ACTIONS,
              "obs_size": inputs, "rules": {"num_players": 4, "rounds": 3}, "train": {"mix": [3, 4], "seed": 1}}
    rng = np.random.default_rng(seed)
    actor, value = weight_names(hidden)
    weights = {}
    for names, out in ((actor, NUM_ACTIONS), (value, 1) if critic else ((), 1)):
        width = inputs
        for i in range(0, len(names), 2):
            rows = hidden[i // 2] if i // 2 < len(hidden) else out
            weights[names[i]] = rng.normal(size=(rows, width)).astype(np.float32)
            weights[names[i + 1]] = rng.normal(size=rows).astype(np.float32)
            width = rows
    return config, weights


#: A recipe with a step of every kind, small, naming the work folder's checkpoint (``workdir``: ``RECIPE_FOLDER/small.toml``).
SMALL_RECIPE = """\
name = "small"
description = "every kind of step, small"
[[step]]
name = "data"
kind = "train-values"
start = "../../net.npz"
players = 3
rounds = [1, 2]
mix = [3, 4]
seed = 5
iterations = 2
samples = 1000
pool = ["rule", "../../net.npz"]
pool_tables = 0.5
hidden = [3]
[[step.stage]]
iterations = 1
[[step.stage]]
iterations = 2
[[step]]
name = "fit"
kind = "fit-values"
data = "data"
iterations = [0, 1]
[[step]]
name = "margins"
kind = "margins"
checkpoint = "fit"
[[step]]
name = "battery"
kind = "eval-suite"
checkpoint = "margins"
deals = 20
references = ["rule", "random"]
players = [3, 4]
[[step]]
name = "publish"
kind = "publish"
checkpoint = "margins"
"""
#: A recipe that extends it: a step's keys replaced, a step added after another.
EXTENDING_RECIPE = """\
extends = "small.toml"
name = "extending"
[[step]]
name = "data"
samples = 2000
pool = ["random"]
[[step]]
name = "again"
after = "fit"
kind = "fit-values"
data = "data"
"""
#: Where the work folder holds its recipes: two folders down, as the shipped ones are below the repository.
RECIPE_FOLDER = "training/recipes"


@functools.cache
def recipes() -> tuple[str, ...]:
    """The two recipes as JSON, for a mutation to start from."""
    reader = importlib.import_module("tomllib" if find_spec("tomllib") else "tomli")  # tomli on Python 3.10
    return tuple(json.dumps(reader.loads(text)) for text in (SMALL_RECIPE, EXTENDING_RECIPE))


#: The play page's settings for a new table, as it sends them.
TABLE_BODIES = (
    {"players": 4, "rounds": "standard", "bidding": "open", "bid_total_rule": False, "foresight": False, "seat": 0,
     "opponents": ["rule"], "seed": 7},
    {"players": 3, "rounds": "1,2", "seat": 2, "opponents": ["random", 0], "seed": 1},
    {"players": 5, "rounds": 1, "foresight": True, "seat": 1, "opponents": [1], "seed": 3},
    {"players": 3, "rounds": "2", "bid_total_rule": True, "opponents": "rule", "seed": 12},
)


@functools.cache
def workdir() -> Path:
    """A folder for the targets' files: the small recipe (in ``RECIPE_FOLDER``), a valid checkpoint ``net.npz``, a run
    folder ``run/`` holding one, and a folder of replays ``replays/`` (removed when the process ends)."""
    memory = Path("/dev/shm")  # a file written at every input: in memory where the system offers it
    folder = Path(tempfile.mkdtemp(prefix="wizard-fuzz-", dir=memory if memory.is_dir() else None))
    (folder / RECIPE_FOLDER).mkdir(parents=True)
    (folder / RECIPE_FOLDER / "small.toml").write_text(SMALL_RECIPE)
    save_checkpoint(folder / "net.npz", *network(0))
    save_checkpoint(folder / "run" / "checkpoints" / "latest.npz", *network(1))
    save_checkpoint(folder / "baseline.npz", *network(1, seed=1))
    (folder / "replays").mkdir()
    import atexit

    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder
