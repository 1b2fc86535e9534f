"""Zero: ``wizard train-values --zero``, expert iteration from the rules alone (the recipes
``training/recipes/zero-*.toml``).

A zero run is a ``--no-advice`` run (``values_config.check_from_scratch``: the network reads the observation alone,
plays the plain argmax of its values, no margin, every phase its own) in which RuleAgent takes no part in training:

| where RuleAgent enters other runs | in a zero run |
| --- | --- |
| network inputs (its choice, ``--features``' numbers) | the observation alone (``--no-advice``) |
| the first network (a clone of it, or ``--start`` from a line that began as one) | ``checkpoints/init.npz``: random weights from a numpy Generator seeded by ``--seed`` (``initial_weights``); ``--start`` only from a zero run's checkpoint |
| the margin over its choice at play time | none (plain argmax) |
| who plays and rolls out iteration 0 | the random network (not uniformly random play: the network of ``init.npz`` collects, its weights start the first fit) |
| rollout policy, search prior, bid model of ``--search-infer`` | the network that collects (``rollout_values.collect_values`` with a ``PPOAgent``) |
| opponents (``--rule-tables``, ``--pool`` of registry agents) | none: ``--rule-tables 0``, ``--pool`` of ``previous`` (the run's own earlier networks, ``init.npz`` first) and zero checkpoints |
| ``--data-from`` | only zero runs |

RuleAgent stays a yardstick: each iteration's evaluation row plays the network against RuleAgents
(``ValuesTrainer.evaluate``), and ``wizard eval-iterations`` or an eval-suite step may measure against ``rule``; none of
it decides what the run trains on. ``tests/test_zero.py`` runs a tiny zero recipe with every RuleAgent method and
heuristic function made to raise outside those evaluations.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from wizard_env.agents.ppo_agent import load_checkpoint, save_checkpoint

from . import rollout_values as rv
from .opponent_pool import PREVIOUS

if TYPE_CHECKING:
    from wizard_env.engine.rules import Rules

    from .values_config import ValuesConfig

#: The stream of the run's seed the initial network's weights are drawn from (``rollout_values``' streams end at 13).
INIT_STREAM = 20
#: The initial network's checkpoint, in the run's ``checkpoints/`` folder.
INIT_NAME = "init.npz"


def initial_path(out: str | Path) -> Path:
    """Where a zero run in ``out`` keeps its initial, randomly initialised network."""
    return Path(out) / "checkpoints" / INIT_NAME


def initial_weights(hidden: list[int], seed: int) -> dict[str, np.ndarray]:
    """Random weights of the run's network (observation alone, ``hidden`` layers), named as a checkpoint names them:
    each layer's weights and biases uniform in +-1/sqrt(its inputs), as torch's ``Linear`` draws them, but from
    ``np.random.default_rng([seed, INIT_STREAM])``, so a seed gives the same network with any torch."""
    rng = np.random.default_rng([seed, INIT_STREAM])
    shapes = {name: array.shape for name, array in rv.network_weights(rv.value_network(rv.input_width(False, False), hidden)).items()}
    weights = {}
    for name, shape in shapes.items():
        fan_in = shape[1] if len(shape) == 2 else shapes[name.replace("bias", "weight")][1]
        bound = 1.0 / np.sqrt(fan_in)
        weights[name] = rng.uniform(-bound, bound, size=shape).astype(np.float32)
    return weights


def write_initial(path: Path, cfg: ValuesConfig, rules: Rules) -> None:
    """Write the initial network to ``path`` (atomically) unless it is there: a checkpoint of the run's settings that
    collects iteration 0's data and whose weights iteration 0's fit starts from. Its ``iteration`` is -1 (no data)."""
    if path.is_file():
        return
    from .values_config import checkpoint_config

    config = {**checkpoint_config(cfg, rules, -1, 0), "init": f"random weights, seed [{cfg.seed}, {INIT_STREAM}]"}
    path.parent.mkdir(parents=True, exist_ok=True)
    save_checkpoint(path, config, initial_weights(list(cfg.hidden), cfg.seed))


def is_zero(config: dict) -> bool:
    """Whether a checkpoint's config, or a run's config.json, is a zero run's."""
    return bool((config.get("train") or {}).get("zero"))


def check_zero(cfg: ValuesConfig) -> None:
    """ValueError naming the first setting that would bring RuleAgent into a ``--zero`` run's training (what
    ``check_from_scratch`` refuses beside ``--no-advice`` is refused there)."""
    if cfg.advice:
        raise ValueError("--zero needs --no-advice: the network reads the observation alone, not RuleAgent's choice")
    if cfg.rule_tables:
        raise ValueError(f"--rule-tables {cfg.rule_tables:g} and --zero: a zero run plays no RuleAgent (--rule-tables 0); "
                         "it meets its own earlier networks at --pool-tables")
    for entry in cfg.pool:
        if entry != PREVIOUS and not _zero_checkpoint(entry):
            raise ValueError(f"--pool {entry!r} and --zero: a zero run's pool is {PREVIOUS} (its own earlier networks) "
                             "and checkpoints of zero runs")
    if cfg.start and not _zero_checkpoint(cfg.start):
        raise ValueError(f"--start {cfg.start} and --zero: not a checkpoint of a zero run (a zero run starts from random "
                         "weights, or from a zero run's network)")


def _zero_checkpoint(entry: str) -> bool:
    """Whether ``entry`` (a path, or ``ppo:PATH``) names a readable checkpoint of a zero run."""
    try:
        config, _ = load_checkpoint(entry.removeprefix("ppo:"))
    except (ValueError, OSError):
        return False
    return is_zero(config)


def check_earlier(folder: Path, config: dict) -> None:
    """ValueError naming the ``--data-from`` run in ``folder`` (its config.json ``config``) unless it is a zero run."""
    if not is_zero(config):
        raise ValueError(f"--data-from {folder}: not a zero run; a --zero run reads only the data of zero runs")
