"""Tianshou on the PettingZoo env: one shared masked PPO for all four seats, trained on whole games.

    python examples/tianshou_ppo.py                # 30 updates of 8 short games (2 rounds), about 25 s
    python examples/tianshou_ppo.py --updates 200 --rounds 5

Tianshou's ``PettingZooEnv`` gives each step as ``{"agent_id", "obs", "mask"}`` with the acting seat's
legal actions; the actor below puts the mask on its logits. The one PPO is every seat's algorithm in
``wizard_env.integrations.tianshou_marl.TurnBasedOnPolicyAlgorithm``, Tianshou's ``MultiAgentOnPolicyAlgorithm`` with
each seat's transitions regrouped into its own turns (rewards since its turn, its own next observation),
so that a seat learns from every round score of its own (see docs/adapters.md).
"""

from __future__ import annotations

import argparse
import logging
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from tianshou.algorithm import PPO
from tianshou.algorithm.modelfree.reinforce import ProbabilisticActorPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, VectorReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.utils.torch_utils import policy_within_training_step
from torch import nn

from wizard_env import NUM_ACTIONS, OBS_SIZE, wizard_v1
from wizard_env.integrations.tianshou_marl import TurnBasedOnPolicyAlgorithm


@dataclass
class Args:
    """One run."""

    seed: int = 0  #: seeds the games and torch
    updates: int = 30  #: PPO updates, each on freshly played games
    games: int = 8  #: whole games played per update
    num_players: int = 4  #: seats, all played by the one policy
    rounds: int = 2  #: rounds 1..rounds (short games)
    epochs: int = 4  #: passes over each seat's transitions per update
    learning_rate: float = 3e-4
    hidden: int = 128  #: width of the two hidden layers


@dataclass
class Result:
    """What a run did: the weights before and after, and the decisions it played."""

    initial: dict[str, torch.Tensor]
    final: dict[str, torch.Tensor]
    decisions: int  #: actions the policy chose for the seat to act
    illegal: int  #: of those, actions outside the seat's mask (the env would have raised)
    mean_return: float  #: mean final total per seat over the last update's games, in points


class Body(nn.Module):
    """The shared trunk: an observation to features."""

    def __init__(self, hidden: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(OBS_SIZE, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())

    def forward(self, obs: Any) -> torch.Tensor:
        return self.net(torch.as_tensor(obs.obs, dtype=torch.float32))


class MaskedActor(nn.Module):
    """Logits over the 79 actions, illegal ones at -inf (Tianshou's actor protocol: obs -> (logits, state))."""

    def __init__(self, body: Body, hidden: int):
        super().__init__()
        self.body, self.head = body, nn.Linear(hidden, NUM_ACTIONS)

    def forward(self, obs: Any, state: Any = None, info: Any = None) -> tuple[torch.Tensor, Any]:
        logits = self.head(self.body(obs))
        legal = torch.as_tensor(np.asarray(obs.mask, dtype=bool))
        return logits.masked_fill(~legal, torch.finfo(logits.dtype).min), state


class Critic(nn.Module):
    """The value of an observation."""

    def __init__(self, body: Body, hidden: int):
        super().__init__()
        self.body, self.head = body, nn.Linear(hidden, 1)

    def forward(self, obs: Any, **kwargs: Any) -> torch.Tensor:
        return self.head(self.body(obs))


def make_env(args: Args) -> PettingZooEnv:
    """The AEC env as Tianshou's PettingZooEnv."""
    return PettingZooEnv(wizard_v1.env(num_players=args.num_players, rounds=args.rounds))


def build_algorithm(args: Args) -> tuple[TurnBasedOnPolicyAlgorithm, nn.ModuleList]:
    """One PPO as every seat's algorithm (a shared policy), and its networks."""
    env = make_env(args)
    body = Body(args.hidden)
    actor, critic = MaskedActor(body, args.hidden), Critic(body, args.hidden)
    policy = ProbabilisticActorPolicy(actor=actor, dist_fn=lambda logits: torch.distributions.Categorical(logits=logits),
                                      action_space=env.action_space, action_scaling=False, action_bound_method=None)
    ppo = PPO(policy=policy, critic=critic, optim=AdamOptimizerFactory(lr=args.learning_rate),
              gamma=1.0, gae_lambda=0.95, ent_coef=0.0, max_grad_norm=0.5)
    return TurnBasedOnPolicyAlgorithm(algorithms=[ppo] * len(env.agents), env=env), nn.ModuleList([actor, critic])


def main(args: Args) -> Result:
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)  # episode returns are vectors, one per seat
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    algorithm, networks = build_algorithm(args)
    train_envs = DummyVectorEnv([lambda: make_env(args)])  # one slot: the buffer holds each game's steps in order
    train_envs.seed(args.seed)
    collector = Collector(algorithm, train_envs, VectorReplayBuffer(100_000, 1))
    collector.reset()
    initial = {k: v.clone() for k, v in networks.state_dict().items()}
    decisions = illegal = 0
    mean_return = 0.0
    start = time.time()
    for update in range(1, args.updates + 1):
        with policy_within_training_step(algorithm.policy):
            stats = collector.collect(n_episode=args.games)
            data = collector.buffer[collector.buffer.sample_indices(0)]
            decisions += len(data)
            illegal += int((~np.asarray(data.obs.mask, dtype=bool)[np.arange(len(data)), data.act]).sum())
            mean_return = float(np.asarray(data.rew).sum() / (args.games * args.num_players))
            algorithm.update(buffer=collector.buffer, batch_size=64, repeat=args.epochs)
        collector.reset_buffer(keep_statistics=True)
        print(f"update {update}/{args.updates}: {stats.n_collected_steps} decisions, "
              f"mean total per seat {mean_return:+.1f}, {time.time() - start:.0f}s", flush=True)
    final = {k: v.clone() for k, v in networks.state_dict().items()}
    print(f"done: {decisions} decisions in {args.updates} updates, {illegal} illegal, "
          f"mean total per seat {mean_return:+.1f} in the last games")
    return Result(initial, final, decisions, illegal, mean_return)


def parse_args(argv: list[str] | None = None) -> Args:
    defaults = Args()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--updates", type=int, default=defaults.updates, help="PPO updates (the budget)")
    parser.add_argument("--games", type=int, default=defaults.games, help="games per update")
    parser.add_argument("--rounds", type=int, default=defaults.rounds, help="rounds 1..N per game")
    return Args(**vars(parser.parse_args(argv)))


if __name__ == "__main__":
    main(parse_args())
