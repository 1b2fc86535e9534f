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

import numpy as np

from wizard_env.agents.ppo_agent import save_checkpoint

from . import rollout_values as rv


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
    shapes = rv.network_shapes(rv.input_width(False, False), hidden)
    weights = {}
    for name, shape in shapes.items():
        fan_in = shape[1] if len(shape) == 2 else shapes[name.replace("bias", "weight")][1]
        bound = 1.0 / np.sqrt(fan_in)
        weights[name] = rng.uniform(-bound, bound, size=shape).astype(np.float32)
    return weights


def write_initial(path: Path, config: dict, seed: int) -> None:
    """Write the initial network to ``path`` (atomically) unless it is there: ``config`` (the run's checkpoint config,
    ``values_config.checkpoint_config`` at iteration -1) with weights drawn from ``seed``; it collects iteration 0's
    data and iteration 0's fit starts from its weights."""
    if path.is_file():
        return
    config = {**config, "init": f"random weights, seed [{seed}, {INIT_STREAM}]"}
    path.parent.mkdir(parents=True, exist_ok=True)
    save_checkpoint(path, config, initial_weights(list(config["hidden"]), seed))


def is_zero(config: dict) -> bool:
    """Whether a checkpoint's config, or a run's config.json, is a zero run's."""
    return bool((config.get("train") or {}).get("zero"))
