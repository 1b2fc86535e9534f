"""Action values from rollouts, from scratch: ``wizard baseline values --setting NAME``.

This is ``wizard train-values``' trainer (``wizard_env.training.values.train_values``), not a second implementation, run with
``--no-advice``: a network of the observation alone, random weights, plain argmax, no RuleAgent numbers. Each
iteration plays ``num_envs`` games a chunk with the learner in one seat (game g's seat g mod the players) and the
setting's opponents in the others (``--rule-tables 1``), tries every legal action of a ``share`` of the learner's
decisions on copies of the deal with the round played out (the opponents playing their seats, the learner's policy
its own), fits the network to those round scores and evaluates it against the opponents. Iteration 0's learner is
uniformly random legal play (drawn from the run's seeded Generators), each later one the network of the one before: a
step of policy improvement per iteration. What differs from the other baselines is that trainer's:

- a step is a **decision with action values** (``samples`` of them an iteration), not a decision played: about one
  in ``share`` of the learner's decisions with a choice gets values, each at the cost of playing out every legal
  action; the run ends at whole iterations (``steps`` rounded up to them);
- its folder is ``wizard train-values``': ``config.json`` holds this baseline's arguments and budget, the trainer's
  config (``train``, which ``--resume`` checks) and ``done``; ``data/iter-K/`` the chunks, ``checkpoints/iter-K.npz``
  and ``latest.npz`` the networks (``baseline:OUT`` plays the latest), ``curve.csv`` one evaluation per iteration
  (its columns are train-values': ``timesteps`` are decisions with values, ``ppo_mean`` the learner's, ...);
- ``minutes`` stops the collection at the next chunk once they are up, the unfinished iteration's chunks kept for
  ``--resume``; the first iteration is always finished, so a run has an agent. Ctrl-C stops at once, keeping every
  finished chunk and iteration, and records where it stopped;
- evaluations and checkpoints come with every iteration, so ``eval_every`` and ``checkpoint_every`` are refused, as is
  ``reward_scale`` (the network fits round scores in tens of points).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from wizard_env.envs.settings import get_setting
from wizard_env.util.options import MAX_COUNT

from ..common import rule_opponents
from ..values.train_values import run_training
from ..values.values_config import DATA, MAX_ITERATIONS, TARGETS, ValuesConfig
from .common import Ranges, RunArgs, check_args, check_same_run, run_header

NAME = "values"


@dataclass
class Args(RunArgs):
    """The settings of action values from scratch (``RunArgs``' and these)."""

    num_envs: int = 192  #: games played in lockstep in one data chunk (train-values' --games)
    learning_rate: float = 1e-3  #: Adam's step size, decayed linearly to 5% over each fit
    batch_size: int = 512  #: decisions per gradient step of a fit
    samples: int = 100_000  #: decisions with action values per iteration (each: collect, fit from the last weights, evaluate)
    share: float = 0.25  #: share of the learner's decisions with a choice that get action values
    targets: str = "rollout"  #: rollout (each action's round score in the true deal) or search (its mean over search_samples deals redrawn from what the learner sees)
    search_samples: int = 8  #: with targets search: deals redrawn per decision
    data: str = "last"  #: what an iteration fits: its own data (last) or every iteration's so far (all)
    epochs: int = 4  #: passes over the data of a fit
    workers: int = 2  #: processes collecting data chunks (the data do not depend on it)


RANGES: Ranges = {
    "samples": (1, MAX_COUNT), "share": (0, 1), "search_samples": (1, MAX_COUNT), "epochs": (1, MAX_COUNT),
    "workers": (1, 256),
}
#: The ``RunArgs`` this trainer has no use for, and why.
UNUSED = {"eval_every": ("--eval-every", "it evaluates after every iteration (--set samples)"),
          "checkpoint_every": ("--checkpoint-every", "it saves after every iteration (--set samples)"),
          "reward_scale": ("--set reward_scale", "it fits round scores in tens of points")}


def config(args: Args) -> ValuesConfig:
    """The ``wizard train-values`` config of this baseline: no advice, the learner against the setting's opponents."""
    setting = get_setting(args.setting)
    return ValuesConfig(
        learn="both", mix=[setting.num_players], iterations=math.ceil(args.steps / args.samples), samples=args.samples,
        games=args.num_envs, share=args.share, targets=args.targets,
        search_samples=args.search_samples, rule_tables=1.0, workers=args.workers, margin=0.0,
        hidden=list(args.hidden), data=args.data, epochs=args.epochs, learning_rate=args.learning_rate,
        batch_size=args.batch_size, seed=args.seed, eval_deals=args.eval_deals, torch_threads=args.torch_threads,
        advice=False)


def train(args: Args, out: str | Path, resume: bool = False, quiet: bool = False,
          log: Callable[[str], object] = print) -> dict:
    """Learn action values from scratch as ``args`` say into ``out`` (``--resume``: continue the run there); what the run did."""
    check_args(args, RANGES)
    iterations = math.ceil(args.steps / args.samples)
    if iterations > MAX_ITERATIONS:  # train-values' own check would name its --iterations, which this command has not
        raise ValueError(f"--steps {args.steps:,} is {iterations:,} iterations of --set samples={args.samples:,}, more than "
                         f"{MAX_ITERATIONS:,}: lower --steps or raise samples")
    for name, (option, why) in UNUSED.items():
        if getattr(args, name) != getattr(RunArgs, name):
            raise ValueError(f"{option} does not apply to values: {why}")
    for name, choices in (("targets", TARGETS), ("data", DATA)):
        if getattr(args, name) not in choices:
            raise ValueError(f"--set {name} must be one of {', '.join(choices)}, not {getattr(args, name)!r}")
    setting = get_setting(args.setting)
    rule_opponents(setting, "values (wizard train-values' trainer)")
    if resume and (Path(out) / "config.json").is_file():
        check_same_run(Path(out), NAME, args)
    rules = setting.rules()
    trainer = run_training(config(args), rules, out, resume, quiet, log, rounds=list(rules.hand_sizes),
                           minutes=args.minutes, header=run_header(NAME, args))
    sys.stdout.flush()
    return trainer.done()
