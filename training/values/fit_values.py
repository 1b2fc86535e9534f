"""A fresh network fitted on the data of several iterations of ``wizard train-values`` (a recipe's ``fit-values``
step; ``ppo-v1`` is such a fit, ``docs/history.md``).

A train-values iteration fits from the previous iteration's weights; this fit starts from a new network of its
own size, seeded with its own seed, and reads the chunks of the iterations it is given, in iteration order: of
each iteration the chunks that iteration used (the first in index order that hold ``--samples`` decisions, so a
seed gives one data set whatever order the workers finished in). Every ``held_out_every``-th chunk of that list
is held out (``chunk % 12 == 11`` by default, as train-values does); up to 30,000 of its decisions measure the
fit (``rollout_values.gains``). The checkpoint is in the format of ``PPOAgent``, with the run's config and the
fit's settings, and plays with ``margin`` and ``play_margin`` (a recipe's ``margins`` step chooses others).

With ``advice`` false the network reads the observation alone, not RuleAgent's choice stored with each decision, and
plays the plain argmax of its values (``features`` false, margins 0), as a ``--no-advice`` run's networks do: on data
stored with RuleAgent's choice it measures what that input is worth (``training/recipes/ablation-advice.toml``). Data
stored with the action played (a ``--no-advice`` run's) are fitted only so: their stored action is no advice.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from wizard_env.agents.ppo_agent import phase_bonus, save_checkpoint
from wizard_env.engine.rules import Rules
from wizard_env.util.options import MAX_COUNT

from . import rollout_values as rv
from ..common import check_ranges
from .chunk_worker import CHUNK_RECOVERY
from .values_config import ValuesConfig, advice_bonus, check_config, checkpoint_config

#: Held-out decisions that measure a fit, at most (as train-values measures its iterations).
CHECK_DECISIONS = 30_000


@dataclass
class FitConfig:
    """The settings of a fresh fit (a recipe's ``fit-values`` step takes them as keys)."""

    hidden: list[int] = field(default_factory=lambda: [512, 256])  #: hidden layers of the new network
    features: bool = True  #: the network also reads RuleAgent's numbers for every action
    advice: bool = True  #: the network reads RuleAgent's choice and plays with the margins over it; false: the observation alone, the plain argmax of its values (features false, margins 0)
    epochs: int = 3  #: passes over the data
    learning_rate: float = 1e-3  #: Adam's step size, decayed linearly to 5% over the fit
    batch_size: int = 512  #: decisions per gradient step
    seed: int = 11  #: seeds torch (the new network's weights) and the order of the minibatches
    held_out_every: int = 12  #: every N-th chunk of the data is held out (chunk % N == N - 1)
    margin: float = 1.5  #: points a departure from RuleAgent's bid must promise, saved in the checkpoint
    play_margin: float = 1.5  #: the same for card play
    torch_threads: int = 1  #: torch threads of the fit (one: on a busy 2-core machine two threads ran 7x slower)


#: The range of every numeric setting, (least, most) (MAX_COUNT where nothing else bounds it).
RANGES: dict[str, tuple[float | None, float | None]] = {
    "epochs": (1, MAX_COUNT), "learning_rate": (0, 1), "batch_size": (1, MAX_COUNT), "seed": (0, 2**63 - 1),
    "held_out_every": (2, MAX_COUNT), "margin": (0, MAX_COUNT), "play_margin": (0, MAX_COUNT),
    "torch_threads": (1, 256),
}


def fitted_config(run: ValuesConfig, fit: FitConfig) -> ValuesConfig:
    """The run's config with the fit's network and margins, and no ``start`` (the new network starts from none of its
    weights, so its shape need not be the start's): what the checkpoint records as its training config. A fit without
    advice has no play margin unless one is given, which ``check_config`` then refuses as a --no-advice run's."""
    play_margin = fit.play_margin if fit.advice or fit.play_margin else None
    return dataclasses.replace(run, start="", hidden=list(fit.hidden), features=fit.features, advice=fit.advice,
                               epochs=fit.epochs, learning_rate=fit.learning_rate, batch_size=fit.batch_size,
                               margin=fit.margin, play_margin=play_margin)


def check_fit(run: ValuesConfig, fit: FitConfig) -> None:
    """ValueError naming (as its option) the first impossible setting of the fit."""
    check_ranges(fit, RANGES, ("learning_rate",))
    if fit.advice and not run.advice:
        raise ValueError("--advice: the data are stored with the action played (their run read no advice), not RuleAgent's "
                         "choice; a fit of them reads the observation alone (advice false, features false, margins 0)")
    check_config(fitted_config(run, fit))  # the network's size, and without advice no setting that needs RuleAgent


def fit_fresh(chunks: list[Path], run: ValuesConfig, fit: FitConfig, rules: Rules, out: Path, iteration: int,
              log: Callable[[str], object] = print) -> dict:
    """Fit a new network on ``chunks`` and save it to ``out`` (``iteration``: the last iteration of its data, for the
    config); the fit's figures (decisions, loss, held-out departures and gains by phase)."""
    import torch

    check_fit(run, fit)
    torch.set_num_threads(fit.torch_threads)
    try:
        samples, chunk = rv.load_samples(chunks)
    except ValueError as e:
        raise ValueError(f"{e}; {CHUNK_RECOVERY}") from None
    held_out = chunk % fit.held_out_every == fit.held_out_every - 1
    if held_out.all():
        held_out[:] = False
    train, check = np.flatnonzero(~held_out), np.flatnonzero(held_out)[:CHECK_DECISIONS]
    log(f"fitting {len(train):,} decisions of {len(chunks)} chunks ({len(samples.advice) - len(train):,} held out), "
        f"network {','.join(map(str, fit.hidden))}, {fit.epochs} epochs")
    torch.manual_seed(fit.seed)
    net = rv.value_network(rv.input_width(fit.features, fit.advice), list(fit.hidden))
    loss = rv.fit(net, samples, train, fit.epochs, fit.learning_rate, fit.batch_size, fit.seed, features=fit.features,
                  advice=fit.advice)
    cfg = fitted_config(run, fit)
    bonus = phase_bonus(advice_bonus(cfg), True, str(out))
    stats = {"decisions": int(len(train)), "held_out": int(len(samples.advice) - len(train)), "loss": loss,
             **(rv.gains(net, samples, check, bonus, fit.features, advice=fit.advice) if check.size else {})}
    config = checkpoint_config(cfg, rules, iteration, int(len(samples.advice)), Path(out).parent)  # paths from its folder
    config["fit"] = {"method": "fresh fit", **dataclasses.asdict(fit), "chunks": len(chunks), **stats}
    save_checkpoint(out, config, rv.network_weights(net))
    return stats
