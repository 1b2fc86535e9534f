"""MaskablePPO (sb3-contrib) from scratch: ``wizard baseline maskable-ppo --setting NAME``.

This is ``wizard train``'s trainer (``wizard_env.training.ppo.train``), not a second implementation, run with nothing
from RuleAgent: no advice input (``--no-advice``), no cloning (``--bc-epochs 0``: PPO starts from random weights), the
setting's opponents as the whole opponent pool (no self-play snapshots, no RandomAgent), one player count, rounds as
episodes. What differs from the other baselines is that trainer's:

- its folder is ``wizard train``'s: ``config.json`` holds ``{"train": TrainConfig, "rules": ...}`` and this
  baseline's algorithm and arguments (a resume keeps them), the curve's
  columns are ``timesteps`` and ``ppo_mean`` (the others as the other baselines'), TensorBoard logs go to ``tb/``, and
  the resume state is the checkpoint itself (``checkpoints/latest.npz``: the policy and its step count; the optimizer
  and the value net's running statistics start again);
- ``minutes`` caps each session (``--max-minutes``), not the whole run, and PPO stops at whole rollouts of
  ``num_envs`` x ``n_steps`` decisions, so ``steps`` is rounded up to them;
- the network has a value head besides the policy; the agent plays the policy's masked argmax (``baseline:OUT``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from wizard_env.envs.settings import get_setting
from wizard_env.util.options import MAX_COUNT

from ..common import rule_opponents
from ..ppo.train import TrainConfig, run_training
from .common import Ranges, RunArgs, check_args, run_header

NAME = "maskable-ppo"


@dataclass
class Args(RunArgs):
    """MaskablePPO's settings (``RunArgs``' and these; ``learning_rate`` and ``batch_size`` are PPO's)."""

    learning_rate: float = 3e-4  #: PPO's step size (sb3's default; wizard train's 1e-4 is for fine-tuning a clone)
    batch_size: int = 1024  #: PPO minibatch
    num_envs: int = 256  #: games played in lockstep
    n_steps: int = 16  #: steps per game per rollout (a rollout is num_envs x n_steps decisions)
    n_epochs: int = 6  #: PPO epochs per rollout
    ent_coef: float = 0.01  #: entropy bonus (from scratch there is no smoothed clone to keep exploring)
    clip_range: float = 0.2  #: PPO's clip of the policy ratio


RANGES: Ranges = {
    "n_steps": (1, MAX_COUNT), "n_epochs": (1, MAX_COUNT), "ent_coef": (0, MAX_COUNT), "clip_range": (0, MAX_COUNT),
}


def config(args: Args) -> TrainConfig:
    """The ``wizard train`` config of this baseline: the setting's opponents alone, no advice, no cloning."""
    setting = get_setting(args.setting)
    return TrainConfig(
        learn="both", mix=[setting.num_players], timesteps=args.steps, max_minutes=args.minutes, seed=args.seed,
        num_envs=args.num_envs, n_steps=args.n_steps, batch_size=args.batch_size, n_epochs=args.n_epochs,
        learning_rate=args.learning_rate, ent_coef=args.ent_coef, clip_range=args.clip_range, episode="round",
        reward_scale=args.reward_scale, hidden=list(args.hidden), advice=False, pool={setting.opponent_spec(): 1.0},
        snapshots=0, bc_epochs=0, eval_every=args.eval_every, eval_deals=args.eval_deals,
        checkpoint_every=args.checkpoint_every, torch_threads=args.torch_threads)


def train(args: Args, out: str | Path, resume: bool = False, quiet: bool = False,
          log: Callable[[str], object] = print) -> dict:
    """Train MaskablePPO as ``args`` say into ``out`` (``--resume``: continue the run there); what the run did."""
    check_args(args, RANGES)
    setting = get_setting(args.setting)
    rule_opponents(setting, "maskable-ppo (wizard train's trainer)")
    trainer = run_training(config(args), setting.rules(), out, resume, quiet, log, rounds=list(setting.rules().hand_sizes),
                           header=run_header(NAME, args))
    sys.stdout.flush()
    return {"decisions": trainer.model.num_timesteps, "wall_s": round(trainer.elapsed(), 1),
            "stopped_by": "minutes" if trainer.capped else "steps"}
