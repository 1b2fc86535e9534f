"""Neural Fictitious Self-Play's learner (Heinrich and Silver, 2016), from scratch: ``wizard baseline nfsp``.

Two networks: a best response Q, trained by Double DQN (``dqn``'s replay buffer and update) on every transition, and
an average policy Pi, trained by cross-entropy on a reservoir buffer of the best response's own choices (a uniform
sample of all of them so far), so that Pi approximates the average of the best responses played. At every round
start each game draws its mode: with probability ``eta`` (the anticipatory parameter) the learner plays that round by
its best response (epsilon-greedy over Q, its decisions kept for Pi), otherwise by sampling Pi over the legal actions.
Pi is NFSP's result: the checkpoint, the curve and ``baseline:PATH`` play it (greedily, its most likely legal action).

Here the learner plays one seat against the setting's fixed opponents, as the other baselines do, not against
copies of itself as in the paper's self-play: the method's networks and buffers, not its equilibrium argument.
``nfsp_self`` is the paper's self-play, the same loop (``learn``) with the learner in every seat.
Observations are stored as float16 in both buffers; neither is saved, so a resumed run refills them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol

import numpy as np

from wizard_env.engine.game import NUM_ACTIONS
from wizard_env.engine.observation import OBS_SIZE
from wizard_env.envs.settings import get_setting
from wizard_env.envs.vec_env import WizardVecEnv
from wizard_env.util.checks import check_memory
from wizard_env.util.options import MAX_COUNT

from . import dqn
from .common import Ranges, Run, check_args, epsilon_greedy, linear, masked, q_network

NAME = "nfsp"


@dataclass
class Args(dqn.Args):
    """NFSP's settings: the best response's (``dqn.Args``') and these."""

    eta: float = 0.1  #: anticipatory parameter: share of rounds played by the best response
    epsilon_start: float = 0.06  #: the best response's exploration at the start (the paper's)
    epsilon_end: float = 0.0  #: its exploration after epsilon_decay decisions
    reservoir_size: int = 32_000  #: the average policy's reservoir of best-response decisions (about 3.7 kB each)
    sl_starts: int = 1_000  #: best-response decisions in the reservoir before the average policy learns
    sl_learning_rate: float = 1e-4  #: the average policy's Adam step size


RANGES: Ranges = {
    **dqn.RANGES, "eta": (0, 1), "reservoir_size": (1, MAX_COUNT), "sl_starts": (1, MAX_COUNT),
    "sl_learning_rate": (0, 1),
}


class Reservoir:
    """A uniform sample of at most ``capacity`` of the decisions added so far (reservoir sampling)."""

    def __init__(self, capacity: int):
        self.obs = np.zeros((capacity, OBS_SIZE), dtype=np.float16)
        self.masks = np.zeros((capacity, NUM_ACTIONS), dtype=bool)
        self.actions = np.zeros(capacity, dtype=np.int64)
        self.seen = 0  # decisions offered so far

    def add(self, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray, rng: np.random.Generator) -> None:
        """Offer these decisions: the k-th one offered takes a slot with probability capacity / k."""
        capacity = len(self.actions)
        for o, m, a in zip(obs, masks, actions):
            slot = self.seen if self.seen < capacity else int(rng.integers(self.seen + 1))
            self.seen += 1
            if slot < capacity:
                self.obs[slot], self.masks[slot], self.actions[slot] = o, m, a

    def sample(self, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``size`` stored decisions, drawn with replacement."""
        rows = rng.integers(min(self.seen, len(self.actions)), size=size)
        return self.obs[rows].astype(np.float32), self.masks[rows], self.actions[rows]


def sample_policy(pi, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """An action per row drawn from Pi's softmax over the legal actions (Gumbel-max with ``rng``'s draws)."""
    import torch

    with torch.no_grad():
        logits = masked(pi(torch.as_tensor(observations)), masks).numpy()
    return np.argmax(logits - np.log(-np.log(rng.random(logits.shape))), axis=1)


class Table(Protocol):
    """What ``learn`` plays in: games, the learner's seats in them, and the replay buffer of its transitions there
    (``dqn.Replay``'s ``ready`` and ``sample``). ``OneSeat`` here, ``nfsp_self.EverySeat`` in self-play."""

    replay: Any

    def __init__(self, args: Args, seed: int) -> None: ...

    @property
    def acting(self) -> np.ndarray:
        """Which of the learner's seats decides in each game, int [num_envs]."""

    @staticmethod
    def seats(num_players: int) -> int:
        """The learner's seats in each game of ``num_players``."""

    def reset(self) -> np.ndarray:
        """Start the games; the observations of the first decisions."""

    def action_masks(self) -> np.ndarray:
        """The legal actions of the decisions to make, bool [num_envs, NUM_ACTIONS]."""

    def step(self, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Play ``actions`` (chosen on ``obs``, ``masks``) and keep the transitions; the observations of the next
        decisions and which games' rounds ended."""


class OneSeat:
    """The learner in one seat of each game against the setting's opponents (``WizardVecEnv``), and the replay
    buffer of its transitions."""

    def __init__(self, args: Args, seed: int):
        self.env = WizardVecEnv(args.num_envs, seed=seed, setting=args.setting, episode="round",
                                reward_scale=args.reward_scale)
        self.replay = dqn.Replay(args.buffer_size, args.num_envs)
        self.acting = np.zeros(args.num_envs, dtype=np.int64)  # which of its seats decides in each game: its only one

    @staticmethod
    def seats(num_players: int) -> int:
        """The learner's seats in each game of ``num_players``."""
        return 1

    def reset(self) -> np.ndarray:
        """Start the games; the learner's first observations."""
        return np.asarray(self.env.reset())

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions, bool [num_envs, NUM_ACTIONS]."""
        return self.env.action_masks()

    def step(self, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Play ``actions`` and the opponents' replies, keep the transitions; the next observations, the round ends."""
        next_obs, rewards, dones, _ = self.env.step(actions)
        self.replay.add(obs, masks, actions, rewards, dones)
        return np.asarray(next_obs), dones


def train(args: Args, out: str | Path, resume: bool = False, quiet: bool = False,
          log: Callable[[str], object] = print) -> dict:
    """Train NFSP's learner as ``args`` say into ``out`` (``--resume``: continue the run there); what the run did."""
    return learn(NAME, OneSeat, args, out, resume, quiet, log)


def learn(name: str, seating: type[Table], args: Args, out: str | Path, resume: bool = False, quiet: bool = False,
          log: Callable[[str], object] = print) -> dict:
    """NFSP's loop, the learner in the seats ``seating`` gives it, as ``args`` say, into ``out``; what the run did.

    Each seat the learner plays draws its mode at every round start: the best response with probability ``eta``,
    else the average policy."""
    import torch

    check_args(args, RANGES)
    seats = (args.num_envs, seating.seats(get_setting(args.setting).num_players))  # [game, the learner's seat in it]
    dqn.check_buffer(args, seats[1])
    check_memory("--set reservoir_size", args.reservoir_size, dqn.ROW_BYTES)
    with Run(name, args, out, resume, quiet, log) as run:
        q, target, pi = q_network(args.hidden), q_network(args.hidden), q_network(args.hidden)
        q_optimizer = torch.optim.Adam(q.parameters(), lr=args.learning_rate)
        pi_optimizer = torch.optim.Adam(pi.parameters(), lr=args.sl_learning_rate)
        target.load_state_dict(q.state_dict())
        run.track(q=q, target=target, pi=pi, q_optimizer=q_optimizer, pi_optimizer=pi_optimizer)
        run.extra.setdefault("gradient_steps", 0)
        run.begin(pi)
        table, reservoir = seating(args, run.seed()), Reservoir(args.reservoir_size)
        obs, steps, games = table.reset(), 0, np.arange(args.num_envs)
        best = run.rng.random(seats) < args.eta  # each seat's mode for its round: best response or Pi
        while run.going():
            masks = table.action_masks()
            epsilon = linear(args.epsilon_start, args.epsilon_end, args.epsilon_decay, run.decisions)
            actions = sample_policy(pi, obs, masks, run.rng)
            mine = best[games, table.acting]  # the games whose deciding seat plays its best response
            if mine.any():
                actions[mine] = epsilon_greedy(q, obs[mine], masks[mine], epsilon, run.rng)
                reservoir.add(obs[mine], masks[mine], actions[mine], run.rng)
            obs, dones = table.step(obs, masks, actions)
            steps += 1
            best = np.where(dones[:, None], run.rng.random(seats) < args.eta, best)
            if steps % args.train_every == 0 and table.replay.ready(max(args.learning_starts, args.batch_size)):
                for _ in range(args.gradient_steps):
                    dqn.update(q, target, q_optimizer, table.replay.sample(args.batch_size, run.rng), args.max_grad_norm)
                    run.extra["gradient_steps"] += 1
                    if run.extra["gradient_steps"] % args.target_every == 0:
                        target.load_state_dict(q.state_dict())
            if steps % args.train_every == 0 and reservoir.seen >= max(args.sl_starts, args.batch_size):
                for _ in range(args.gradient_steps):
                    imitate(pi, pi_optimizer, reservoir.sample(args.batch_size, run.rng))
            run.advance(args.num_envs, pi)
        return run.finish(pi)


def imitate(pi, optimizer, batch: tuple[np.ndarray, np.ndarray, np.ndarray]) -> float:
    """One gradient step of Pi toward the best response's choices (cross-entropy over the legal actions); the loss."""
    import torch

    obs, masks, actions = (torch.as_tensor(x) for x in batch)
    loss = torch.nn.functional.cross_entropy(masked(pi(obs), masks), actions)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return float(loss.detach())
