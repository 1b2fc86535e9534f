"""Neural Fictitious Self-Play in self-play (Heinrich and Silver, 2016), from scratch: ``wizard baseline nfsp-self``.

``nfsp``'s learner (its networks, buffers, losses and loop: ``nfsp.learn``) in every seat of every game, as in the
paper: one best response Q and one average policy Pi, shared by the seats, and each seat drawing its own mode at
every round start (Q's epsilon-greedy choices with probability ``eta``, else a sample of Pi). The seats play each
other, so Pi approximates the average of best responses to itself, the equilibrium-seeking part that ``nfsp``, which
plays the setting's fixed opponents, leaves out. The setting gives the rules; its opponents only measure the curve:
as for every baseline, Pi plays greedily in one seat against them (``training.evaluation.evaluate``), and Pi is the saved agent.

The games are a ``WizardBatch`` (the engine, restarting each finished game from its seeded generator), stepped one
decision at a time in every game, whoever's turn it is: every seat's decision is a learner decision (``--steps``
counts them all). Every seat's transitions go into the replay buffer and its best-response decisions into the
reservoir. A seat's next decision comes a varying number of decisions later (a trick's winner leads the next), so
each stored decision is linked to its seat's next one when that comes; at a round's end every seat's last decision
of the round gets the seat's score of the round, scaled, and ends the episode.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np

from wizard_env.engine.batch import WizardBatch
from wizard_env.engine.game import NUM_ACTIONS
from wizard_env.engine.observation import OBS_SIZE
from wizard_env.envs.settings import get_setting

from . import dqn, nfsp
from .nfsp import RANGES as RANGES, Args as Args

NAME = "nfsp-self"


class EverySeat:
    """``num_envs`` games with the learner in every seat, and the replay buffer of every seat's transitions."""

    def __init__(self, args: Args, seed: int):
        rules = get_setting(args.setting).rules()
        self.batch = WizardBatch(rules, args.num_envs, seed=seed)
        self.replay = SeatReplay(args.buffer_size, args.num_envs, rules.num_players)
        self.reward_scale = args.reward_scale

    @staticmethod
    def seats(num_players: int) -> int:
        """The learner's seats in each game of ``num_players``: all of them."""
        return num_players

    @property
    def acting(self) -> np.ndarray:
        """The seat to decide in each game."""
        return self.batch.current

    def reset(self) -> np.ndarray:
        """The first decisions' observations (the games are dealt when made; a resumed run makes new ones)."""
        return self.batch.observe()

    def action_masks(self) -> np.ndarray:
        """The legal actions of the seat to decide in each game, bool [num_envs, NUM_ACTIONS]."""
        return self.batch.legal_masks() != 0

    def step(self, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Play ``actions`` (IllegalActionError for an illegal one) and keep the transitions; the next decisions'
        observations and which games' rounds ended (a finished game starts again at once)."""
        seats = self.batch.current.copy()
        self.batch.step(actions)
        ended = self.batch.round_over.copy()
        self.replay.add(obs, masks, actions, seats, self.batch.round_scores * self.reward_scale, ended)
        return self.batch.observe(), ended


class SeatReplay:
    """Decisions of every seat of ``num_envs`` games, each linked to its seat's next decision of the round or ending
    the round with its reward; ``dqn.Replay``'s ``ready`` and ``sample``, as many rows as it would have."""

    def __init__(self, capacity: int, num_envs: int, num_players: int):
        self.rows = dqn.Replay.size(capacity, num_envs)
        self.obs = np.zeros((self.rows, OBS_SIZE), dtype=np.float16)
        self.masks = np.zeros((self.rows, NUM_ACTIONS), dtype=bool)
        self.actions = np.zeros(self.rows, dtype=np.int64)
        self.rewards = np.zeros(self.rows, dtype=np.float32)
        self.dones = np.zeros(self.rows, dtype=bool)
        self.following = np.zeros(self.rows, dtype=np.int64)  # the row of the seat's next decision (unless done)
        self.complete = np.zeros(self.rows, dtype=bool)  # its next decision or the round's end has come
        self.open = np.full((num_envs, num_players), -1, dtype=np.int64)  # [game, seat]: its last decision, -1: none
        self.written = 0  # decisions stored so far; decision i is in row i % rows until overwritten

    def add(self, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray, seats: np.ndarray, rewards: np.ndarray,
            ended: np.ndarray) -> None:
        """One decision of every game, by ``seats``; where ``ended``, the round ended after it, with each seat's
        ``rewards`` [num_envs, num_players]."""
        games = np.arange(len(actions))
        before, numbers = self.open[games, seats], self.written + games
        rows = numbers % self.rows
        self.obs[rows], self.masks[rows], self.actions[rows] = obs, masks, actions
        self.rewards[rows], self.dones[rows], self.complete[rows] = 0.0, False, False
        self.written += len(actions)
        self.open[games, seats] = numbers
        kept = self._stored(before)  # each seat's decision before this one: this one follows it
        self.following[before[kept] % self.rows], self.complete[before[kept] % self.rows] = rows[kept], True
        over = np.flatnonzero(ended)  # each seat's last decision of the round ends its episode, with its reward
        last = self.open[over]
        kept = self._stored(last)
        self.rewards[last[kept] % self.rows] = rewards[over][kept]
        self.dones[last[kept] % self.rows], self.complete[last[kept] % self.rows] = True, True
        self.open[over] = -1

    def _stored(self, numbers: np.ndarray) -> np.ndarray:
        """Which of these decisions (by number, -1 for none) are still stored."""
        return numbers >= max(self.written - self.rows, 0)

    def ready(self, count: int) -> bool:
        """Whether ``count`` complete transitions are stored."""
        return int(np.count_nonzero(self.complete)) >= count

    def sample(self, size: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        """``size`` complete transitions (obs, action, reward, done, next obs, next mask), drawn with replacement; a
        round's last decision has itself as its next one, which the update ignores."""
        stored = np.flatnonzero(self.complete)
        rows = stored[rng.integers(len(stored), size=size)]
        following = np.where(self.dones[rows], rows, self.following[rows])
        return (self.obs[rows].astype(np.float32), self.actions[rows], self.rewards[rows], self.dones[rows],
                self.obs[following].astype(np.float32), self.masks[following])


def train(args: Args, out: str | Path, resume: bool = False, quiet: bool = False,
          log: Callable[[str], object] = print) -> dict:
    """Train NFSP in self-play as ``args`` say into ``out`` (``--resume``: continue the run there); what the run did."""
    return nfsp.learn(NAME, EverySeat, args, out, resume, quiet, log)
