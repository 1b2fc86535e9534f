"""Deep Monte-Carlo (DouZero-style action values from episode returns), from scratch: ``wizard baseline dmc``.

The learner plays one seat of ``num_envs`` games in lockstep (``WizardVecEnv``) against the setting's opponents; an
episode is a round (its score depends on its own decisions alone). A network Q(obs) gives one value per action of
the flat action space; the learner acts epsilon-greedily over the legal actions. When a round ends, each of the
learner's decisions in it gets the rest of the round's return (its score there, scaled), with no bootstrapping, and
goes to a queue; once ``batch_size`` decisions wait, Q(obs, action) is regressed on them (mean squared error, one
pass in minibatches) and the queue is emptied, so every decision is learned from once, fresh, as in DouZero.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from wizard_env.engine.observation import OBS_SIZE
from wizard_env.envs.vec_env import WizardVecEnv
from wizard_env.util.checks import check_memory
from wizard_env.util.options import MAX_COUNT

from .common import Ranges, RunArgs, Run, check_args, check_learns, epsilon_greedy, linear, q_network

NAME = "dmc"


@dataclass
class Args(RunArgs):
    """Deep Monte-Carlo's settings (``RunArgs``' and these)."""

    queue: int = 4096  #: decisions with their returns gathered before a learning pass over them
    epsilon_start: float = 0.2  #: exploration at the start
    epsilon_end: float = 0.01  #: exploration after epsilon_decay decisions (DouZero's)
    epsilon_decay: int = 200_000  #: learner decisions over which exploration falls linearly
    max_grad_norm: float = 40.0  #: gradient clipping (DouZero's)


#: Bytes a queued decision holds: its float32 observation (the step's rows stay alive while any is queued) and the rest.
QUEUE_ROW_BYTES = 4 * OBS_SIZE + 64

RANGES: Ranges = {
    "queue": (1, MAX_COUNT), "epsilon_start": (0, 1), "epsilon_end": (0, 1), "epsilon_decay": (0, MAX_COUNT),
    "max_grad_norm": (0, MAX_COUNT),
}


class Episodes:
    """Each game's decisions in its current round, and the finished ones with their returns, waiting to be learned."""

    def __init__(self, num_envs: int):
        self.open: list[list[tuple[np.ndarray, int, float]]] = [[] for _ in range(num_envs)]  # (obs, action, reward)
        self.obs: list[np.ndarray] = []
        self.actions: list[int] = []
        self.returns: list[float] = []

    def add(self, obs: np.ndarray, actions: np.ndarray, rewards: np.ndarray, dones: np.ndarray) -> None:
        """One step of every game; a game's round that ended gives each of its decisions the rewards from it on."""
        for g in range(len(actions)):
            self.open[g].append((obs[g], int(actions[g]), float(rewards[g])))
            if dones[g]:
                rest = 0.0
                for o, a, r in reversed(self.open[g]):
                    rest += r
                    self.obs.append(o)
                    self.actions.append(a)
                    self.returns.append(rest)
                self.open[g] = []

    def take(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The finished decisions (observations, actions, returns), emptying the queue."""
        batch = np.stack(self.obs), np.asarray(self.actions, dtype=np.int64), np.asarray(self.returns, dtype=np.float32)
        self.obs, self.actions, self.returns = [], [], []
        return batch

    def __len__(self) -> int:
        return len(self.actions)


def train(args: Args, out: str | Path, resume: bool = False, quiet: bool = False,
          log: Callable[[str], object] = print) -> dict:
    """Train Deep Monte-Carlo as ``args`` say into ``out`` (``--resume``: continue the run there); what the run did."""
    import torch

    check_args(args, RANGES)
    check_learns(args, "queue", args.queue)
    check_memory("--set queue", args.queue, QUEUE_ROW_BYTES)
    with Run(NAME, args, out, resume, quiet, log) as run:
        q = q_network(args.hidden)
        optimizer = torch.optim.Adam(q.parameters(), lr=args.learning_rate)
        run.track(q=q, optimizer=optimizer)
        run.begin(q)
        env = WizardVecEnv(args.num_envs, seed=run.seed(), setting=args.setting, episode="round",
                           reward_scale=args.reward_scale)
        episodes = Episodes(args.num_envs)
        obs = np.asarray(env.reset())
        while run.going():
            masks = env.action_masks()
            epsilon = linear(args.epsilon_start, args.epsilon_end, args.epsilon_decay, run.decisions)
            actions = epsilon_greedy(q, obs, masks, epsilon, run.rng)
            next_obs, rewards, dones, _ = env.step(actions)
            episodes.add(obs, actions, rewards, dones)
            obs = np.asarray(next_obs)
            if len(episodes) >= args.queue:
                learn(q, optimizer, episodes.take(), args, run.rng)
            run.advance(args.num_envs, q)
        return run.finish(q)


def learn(q, optimizer, batch: tuple[np.ndarray, np.ndarray, np.ndarray], args: Args, rng: np.random.Generator) -> float:
    """One pass over the decisions of ``batch`` in shuffled minibatches: Q(obs, action) toward the return; the mean loss."""
    import torch

    obs, actions, returns = (torch.as_tensor(x) for x in batch)
    order, losses = rng.permutation(len(actions)), []
    for start in range(0, len(order), args.batch_size):
        rows = torch.as_tensor(order[start:start + args.batch_size])
        value = q(obs[rows]).gather(1, actions[rows, None]).squeeze(1)
        loss = torch.nn.functional.mse_loss(value, returns[rows])
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(q.parameters(), args.max_grad_norm)
        optimizer.step()
        losses.append(float(loss.detach()))
    return float(np.mean(losses))
