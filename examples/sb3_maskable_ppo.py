"""sb3-contrib's MaskablePPO on ``WizardVecEnv`` (one learner seat against RuleAgents): no wrapper at all.

    python examples/sb3_maskable_ppo.py                     # 8,192 learner decisions, about 10 s
    python examples/sb3_maskable_ppo.py --total-timesteps 500000 --rounds 15

``WizardVecEnv`` is a stable-baselines3 ``VecEnv`` with ``action_masks()``, which MaskablePPO reads
by itself; ``WizardSingleAgentEnv`` (or ``gymnasium.make("wizard_env/Wizard-v1")``) is the same game as
one gymnasium env. ``wizard train`` (wizard_env.training.ppo.train) is the full-size version of this run.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback

from wizard_env.envs.vec_env import WizardVecEnv


@dataclass
class Args:
    """One run."""

    seed: int = 0  #: seeds the games, the opponents and torch
    total_timesteps: int = 8_192  #: learner decisions in all, rounded up to whole rollouts
    num_envs: int = 64  #: games played side by side
    n_steps: int = 32  #: steps per game per rollout
    rounds: int = 2  #: rounds 1..rounds (short games)
    reward_scale: float = 0.01  #: round scores (tens of points) to about unit size


@dataclass
class Result:
    """What a run did: the weights before and after, and the decisions it played."""

    initial: dict[str, torch.Tensor]
    final: dict[str, torch.Tensor]
    decisions: int  #: learner actions taken
    illegal: int  #: of those, actions outside the learner's mask (the env would have raised)
    mean_return: float  #: SB3's rollout/ep_rew_mean at the end, in points


class CountIllegal(BaseCallback):
    """Counts the learner's actions and those outside its mask, at every step of the rollouts."""

    def __init__(self) -> None:
        super().__init__()
        self.decisions = self.illegal = 0

    def _on_step(self) -> bool:
        actions = self.locals["actions"]
        masks = np.stack(self.locals["action_masks"])
        self.decisions += len(actions)
        self.illegal += int((~masks[np.arange(len(actions)), actions]).sum())
        return True


def main(args: Args) -> Result:
    torch.set_num_threads(1)
    env = WizardVecEnv(num_envs=args.num_envs, seed=args.seed, rounds=args.rounds, opponents="rule",
                       reward_scale=args.reward_scale)
    model = MaskablePPO("MlpPolicy", env, n_steps=args.n_steps, batch_size=512, gamma=1.0, seed=args.seed,
                        policy_kwargs={"net_arch": [128, 128]}, verbose=1)
    initial = {k: v.clone() for k, v in model.policy.state_dict().items()}
    counter = CountIllegal()
    model.learn(args.total_timesteps, callback=counter)
    final = {k: v.clone() for k, v in model.policy.state_dict().items()}
    mean_return = float(np.mean([e["r"] for e in model.ep_info_buffer])) / args.reward_scale
    print(f"done: {counter.decisions} decisions, {counter.illegal} illegal, learner's mean total {mean_return:+.1f}")
    return Result(initial, final, counter.decisions, counter.illegal, mean_return)


def parse_args(argv: list[str] | None = None) -> Args:
    defaults = Args()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--total-timesteps", type=int, default=defaults.total_timesteps, help="learner decisions (the budget)")
    parser.add_argument("--num-envs", type=int, default=defaults.num_envs, help="games side by side")
    parser.add_argument("--n-steps", type=int, default=defaults.n_steps, help="steps per game per rollout")
    parser.add_argument("--rounds", type=int, default=defaults.rounds, help="rounds 1..N per game")
    return Args(**vars(parser.parse_args(argv)))


if __name__ == "__main__":
    main(parse_args())
