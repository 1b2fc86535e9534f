"""TorchRL on the PettingZoo env: one shared masked policy for all four seats, trained by PPO on whole games.

    python examples/torchrl_ppo.py                 # 30 updates of 8 short games (2 rounds), about 25 s
    python examples/torchrl_ppo.py --updates 200 --rounds 5

TorchRL's ``PettingZooWrapper(use_mask=True)`` steps the AEC env as it is: all seats in one group
``"agents"``, ``("agents", "mask")`` marks the seat to act, ``("agents", "action_mask")`` its legal
actions (all True for the seats not acting, whose sampled actions are ignored). The wrapper records at
every step every seat's reward of that step, so a round's scores appear on the step of whoever played its
last card; ``wizard_env.integrations.adapters.turn_transitions`` credits each seat's rewards to its own turns (what
PettingZoo's ``last()`` pays at the seat's next turn) before the returns are computed. See docs/adapters.md.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.envs.utils import MarlGroupMapType
from torchrl.modules import MaskedCategorical, ProbabilisticActor

from wizard_env import NUM_ACTIONS, OBS_SIZE, wizard_v1
from wizard_env.integrations.adapters import turn_returns, turn_transitions

GROUP = "agents"  # PettingZooWrapper's name for the one group of all seats
OBS = (GROUP, "observation", "observation")
ACTION_MASK = (GROUP, "action_mask")
ACTION = (GROUP, "action")


@dataclass
class Args:
    """One run."""

    seed: int = 0  #: seeds the games and torch
    updates: int = 30  #: PPO updates, each on freshly played games
    games: int = 8  #: whole games played per update
    num_players: int = 4  #: seats, all played by the one policy
    rounds: int = 2  #: rounds 1..rounds (short games)
    epochs: int = 4  #: passes over each batch
    learning_rate: float = 3e-4
    clip: float = 0.2  #: PPO's clip of the policy ratio
    reward_scale: float = 0.01  #: round scores (tens of points) to about unit size
    hidden: int = 128  #: width of the two hidden layers


@dataclass
class Result:
    """What a run did: the weights before and after, and the decisions it played."""

    initial: dict[str, torch.Tensor]
    final: dict[str, torch.Tensor]
    decisions: int  #: actions the policy chose for the seat to act
    illegal: int  #: of those, actions outside the seat's mask (the env would have raised)
    mean_return: float  #: mean final total per seat over the last update's games, in points


class ActorCritic(nn.Module):
    """Logits over the 79 actions and a value, from one observation."""

    def __init__(self, hidden: int):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(OBS_SIZE, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.logits = nn.Linear(hidden, NUM_ACTIONS)
        self.value = nn.Linear(hidden, 1)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.logits(self.body(obs))

    def critic(self, obs: torch.Tensor) -> torch.Tensor:
        return self.value(self.body(obs)).squeeze(-1)


def play_games(env: PettingZooWrapper, actor: ProbabilisticActor, games: int) -> TensorDict:
    """``games`` whole games, one after the other: TorchRL rollouts of [steps] each, concatenated."""
    with torch.no_grad():
        played = [env.rollout(10_000, actor, break_when_any_done=True) for _ in range(games)]
    return torch.cat(played, dim=0)


def main(args: Args) -> Result:
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    env = PettingZooWrapper(wizard_v1.env(num_players=args.num_players, rounds=args.rounds), use_mask=True,
                            group_map=MarlGroupMapType.ALL_IN_ONE_GROUP, seed=args.seed)
    net = ActorCritic(args.hidden)
    actor = ProbabilisticActor(
        TensorDictModule(net, in_keys=[OBS], out_keys=[(GROUP, "logits")]),
        in_keys={"logits": (GROUP, "logits"), "mask": ACTION_MASK},
        out_keys=[ACTION],
        distribution_class=MaskedCategorical,
    )
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate)
    initial = {k: v.clone() for k, v in net.state_dict().items()}
    decisions = illegal = 0
    mean_return = 0.0
    start = time.time()
    for update in range(1, args.updates + 1):
        data = play_games(env, actor, args.games)
        # Each step's acting seat, and every seat's reward of that step.
        actors = data[GROUP, "mask"].long().argmax(-1)
        steps = torch.arange(len(actors))
        rewards = data["next", GROUP, "reward"].squeeze(-1).numpy()
        ends = data["next", "done"].squeeze(-1).numpy()
        turn_reward, next_turn = turn_transitions(actors.numpy(), rewards, ends)
        returns = torch.as_tensor(turn_returns(turn_reward * args.reward_scale, next_turn), dtype=torch.float32)
        obs = data[OBS][steps, actors]
        mask = data[ACTION_MASK][steps, actors]
        action = data[ACTION][steps, actors]
        decisions += len(action)
        illegal += int((~mask[steps, action]).sum())
        mean_return = float(rewards.sum() / (ends.sum() * args.num_players))

        with torch.no_grad():
            old_log_prob = MaskedCategorical(logits=net(obs), mask=mask).log_prob(action)
            advantage = returns - net.critic(obs)
            advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
        for _ in range(args.epochs):
            dist = MaskedCategorical(logits=net(obs), mask=mask)
            ratio = (dist.log_prob(action) - old_log_prob).exp()
            policy_loss = -torch.min(ratio * advantage, ratio.clamp(1 - args.clip, 1 + args.clip) * advantage).mean()
            value_loss = 0.5 * (net.critic(obs) - returns).pow(2).mean()
            loss = policy_loss + value_loss
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), 0.5)
            optimizer.step()
        print(f"update {update}/{args.updates}: {len(action)} decisions, mean total per seat {mean_return:+.1f}, "
              f"loss {loss.item():.3f}, {time.time() - start:.0f}s", flush=True)
    env.close()
    final = {k: v.clone() for k, v in net.state_dict().items()}
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
