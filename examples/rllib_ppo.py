"""Ray RLlib on Wizard: one shared masked PPO policy for all four seats, RLlib's new API stack.

    python examples/rllib_ppo.py                      # 5 iterations of 1,000 decisions (2-round games), about 30 s
    python examples/rllib_ppo.py --iterations 50 --rounds 5

Needs the rllib extra, in a venv of its own (RLlib pins its gymnasium): ``make install-rllib``, then
``.venv-rllib/bin/python examples/rllib_ppo.py``. ``wizard_env.integrations.rllib.WizardMultiAgentEnv`` is the
PettingZoo env as an RLlib ``MultiAgentEnv``: observations ``{"observations", "action_mask"}`` as RLlib's
``ActionMaskingTorchRLModule`` reads them, each seat's reward since its last turn. ``wizard train
--backend rllib`` is the same setup with checkpoints, a cluster and export (docs/scaling.md).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np
import ray
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

from wizard_env.integrations.rllib import WizardMultiAgentEnv
from wizard_env.training.rllib.rllib_train import count_illegal_actions


@dataclass
class Args:
    """One run."""

    seed: int = 0  #: seeds the games and torch
    iterations: int = 5  #: PPO iterations
    steps: int = 1000  #: decisions sampled per iteration, every seat's
    num_players: int = 4  #: seats, all played by the one policy
    rounds: int = 2  #: rounds 1..rounds (short games)
    hidden: int = 64  #: width of the two hidden layers


@dataclass
class Result:
    """What a run did: the weights before and after, and the decisions it played."""

    initial: dict[str, np.ndarray]  #: the module's state dict by name
    final: dict[str, np.ndarray]
    decisions: int  #: actions the policy chose
    illegal: int  #: of those, actions outside the acting seat's mask (each would end the game)
    mean_return: float  #: mean final total per seat over the last 100 games, in points


def main(args: Args) -> Result:
    """Train and report."""
    if not ray.is_initialized():
        ray.init(num_cpus=2, object_store_memory=128 * 2**20, include_dashboard=False)
    scale = 0.01  # round scores of -100..+200 to about -1..+2
    config = (
        PPOConfig()
        .environment(WizardMultiAgentEnv, env_config={"num_players": args.num_players, "rounds": args.rounds,
                                                     "reward_scale": scale})
        .env_runners(num_env_runners=0, num_envs_per_env_runner=2)  # 0: the games run in this process
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kwargs: "shared")
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"shared": RLModuleSpec(
            module_class=ActionMaskingTorchRLModule,
            model_config=DefaultModelConfig(fcnet_hiddens=[args.hidden] * 2, fcnet_activation="relu",
                                            vf_share_layers=False))}))
        .training(train_batch_size_per_learner=args.steps, minibatch_size=min(250, args.steps), num_epochs=4,
                  lr=3e-4, gamma=1.0, lambda_=1.0, vf_clip_param=float("inf"))
        .callbacks(on_episode_end=count_illegal_actions)  # the metric env_runners/illegal_actions
        .debugging(seed=args.seed)
    )
    algo = config.build_algo()
    initial = algo.learner_group.get_weights(["shared"])["shared"]  # the learner's (the env runners get the policy only)
    decisions = illegal = 0
    returns = float("nan")
    for iteration in range(1, args.iterations + 1):
        runners = algo.train()["env_runners"]
        decisions += int(runners["num_env_steps_sampled"])
        illegal += int(runners.get("illegal_actions", 0))
        returns = runners.get("episode_return_mean", float("nan")) / args.num_players / scale
        print(f"iteration {iteration}/{args.iterations}: {decisions} decisions, mean return per seat {returns:.1f}")
    final = algo.learner_group.get_weights(["shared"])["shared"]
    algo.stop()
    print(f"done: {decisions} decisions, {illegal} illegal")
    return Result(initial, final, decisions, illegal, returns)


def parse_args(argv: list[str] | None = None) -> Args:
    defaults = Args()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--iterations", type=int, default=defaults.iterations, help="PPO iterations (the budget)")
    parser.add_argument("--steps", type=int, default=defaults.steps, help="decisions per iteration")
    parser.add_argument("--rounds", type=int, default=defaults.rounds, help="rounds 1..N per game")
    return Args(**vars(parser.parse_args(argv)))


if __name__ == "__main__":
    main(parse_args())
