"""Double DQN with action masks, from scratch: ``wizard baseline dqn --setting NAME``.

The learner plays one seat of ``num_envs`` games in lockstep (``WizardVecEnv``) against the setting's opponents; an
episode is a round (its score depends on its own decisions alone), undiscounted. Each step it acts epsilon-greedily
over the legal actions, stores the transitions in a replay buffer and, once ``learning_starts`` are stored, takes
``gradient_steps`` of Double DQN: the online network picks the best legal action of the next decision (masked
argmax), the target network rates it, and the Huber loss pulls Q(s, a) toward r + Q_target(s', a*) (r alone at a
round's end). The target network copies the online one every ``target_every`` gradient steps.

The buffer keeps each observation once: the next decision of the transition in row j is row j + ``num_envs`` (the
same game's next decision), so the rows of the newest step wait one step before they can be sampled. Observations
are stored as float16 (counts and scores scaled to about 0..1). The buffer is not saved: a resumed run refills it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from wizard_env.engine.game import NUM_ACTIONS
from wizard_env.engine.observation import OBS_SIZE
from wizard_env.envs.vec_env import WizardVecEnv
from wizard_env.util.checks import check_memory
from wizard_env.util.options import MAX_COUNT

from .common import Ranges, RunArgs, Run, check_args, check_learns, epsilon_greedy, linear, masked, q_network

NAME = "dqn"


@dataclass
class Args(RunArgs):
    """Double DQN's settings (``RunArgs``' and these)."""

    buffer_size: int = 64_000  #: transitions in the replay buffer (a multiple of num_envs; about 3.7 kB each)
    learning_starts: int = 10_000  #: transitions stored before the first gradient step
    train_every: int = 1  #: env steps (of num_envs decisions each) between gradient steps
    gradient_steps: int = 1  #: gradient steps each time
    target_every: int = 500  #: gradient steps between copies into the target network
    epsilon_start: float = 1.0  #: exploration at the start
    epsilon_end: float = 0.05  #: exploration after epsilon_decay decisions
    epsilon_decay: int = 200_000  #: learner decisions over which exploration falls linearly
    max_grad_norm: float = 10.0  #: gradient clipping


RANGES: Ranges = {
    "buffer_size": (1, MAX_COUNT), "learning_starts": (1, MAX_COUNT), "train_every": (1, MAX_COUNT),
    "gradient_steps": (1, MAX_COUNT), "target_every": (1, MAX_COUNT), "epsilon_start": (0, 1), "epsilon_end": (0, 1),
    "epsilon_decay": (0, MAX_COUNT), "max_grad_norm": (0, MAX_COUNT),
}


#: Bytes a stored decision takes: its float16 observation, mask, action, reward and end flag.
ROW_BYTES = 2 * OBS_SIZE + NUM_ACTIONS + 8 + 4 + 1


def check_buffer(args: Args, seats: int = 1) -> None:
    """ValueError unless the replay buffer fits in memory and holds ``learning_starts`` transitions and a batch beside
    the decisions still waiting for their next one, one per seat the learner plays in each game (else learning might
    never start)."""
    rows = Replay.size(args.buffer_size, args.num_envs)
    check_memory("--set buffer_size", rows, ROW_BYTES)
    room = max(rows - seats * args.num_envs, 0)
    if max(args.learning_starts, args.batch_size) > room:
        raise ValueError(f"--set learning_starts={args.learning_starts} and batch_size={args.batch_size}: a buffer of "
                         f"{rows:,} rows for {args.num_envs} games holds {'at most' if seats == 1 else 'as few as'} "
                         f"{room:,} transitions to learn from: give a larger buffer_size")
    check_learns(args, "learning_starts", args.learning_starts)


class Replay:
    """Transitions of ``num_envs`` games, one row per decision, the next decision ``num_envs`` rows later."""

    def __init__(self, capacity: int, num_envs: int):
        self.rows, self.width = self.size(capacity, num_envs), num_envs
        self.obs = np.zeros((self.rows, OBS_SIZE), dtype=np.float16)
        self.masks = np.zeros((self.rows, NUM_ACTIONS), dtype=bool)
        self.actions = np.zeros(self.rows, dtype=np.int64)
        self.rewards = np.zeros(self.rows, dtype=np.float32)
        self.dones = np.zeros(self.rows, dtype=bool)
        self.head, self.filled = 0, 0  # the next row to write; rows written so far (at most self.rows)

    @staticmethod
    def size(capacity: int, num_envs: int) -> int:
        """The rows a buffer of ``capacity`` for ``num_envs`` games has: whole steps, at least two."""
        return max(capacity // num_envs, 2) * num_envs

    def add(self, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray, rewards: np.ndarray, dones: np.ndarray) -> None:
        """One step of every game: its decision, the reward and whether the episode ended after it."""
        rows = slice(self.head, self.head + self.width)
        self.obs[rows], self.masks[rows], self.actions[rows] = obs, masks, actions
        self.rewards[rows], self.dones[rows] = rewards, dones
        self.head = (self.head + self.width) % self.rows
        self.filled = min(self.filled + self.width, self.rows)

    def sample(self, size: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        """``size`` transitions (obs, action, reward, done, next obs, next mask) whose next decision is stored."""
        steps, stored = self.rows // self.width, self.filled // self.width
        newest = (self.head // self.width - 1) % steps  # the newest step: its next decisions are not stored yet
        step = (newest - rng.integers(1, stored, size=size)) % steps
        rows = step * self.width + rng.integers(self.width, size=size)  # any game of the chosen step
        following = (rows + self.width) % self.rows
        return (self.obs[rows].astype(np.float32), self.actions[rows], self.rewards[rows], self.dones[rows],
                self.obs[following].astype(np.float32), self.masks[following])

    def ready(self, count: int) -> bool:
        """Whether ``count`` transitions with their next decision are stored."""
        return self.filled >= 2 * self.width and self.filled - self.width >= count


def train(args: Args, out: str | Path, resume: bool = False, quiet: bool = False,
          log: Callable[[str], object] = print) -> dict:
    """Train Double DQN as ``args`` say into ``out`` (``--resume``: continue the run there); what the run did."""
    import torch

    check_args(args, RANGES)
    check_buffer(args)
    with Run(NAME, args, out, resume, quiet, log) as run:
        q, target = q_network(args.hidden), q_network(args.hidden)
        optimizer = torch.optim.Adam(q.parameters(), lr=args.learning_rate)
        target.load_state_dict(q.state_dict())
        run.track(q=q, target=target, optimizer=optimizer)
        run.extra.setdefault("gradient_steps", 0)
        run.begin(q)
        env = WizardVecEnv(args.num_envs, seed=run.seed(), setting=args.setting, episode="round",
                           reward_scale=args.reward_scale)
        replay = Replay(args.buffer_size, args.num_envs)
        obs, steps = np.asarray(env.reset()), 0
        while run.going():
            masks = env.action_masks()
            epsilon = linear(args.epsilon_start, args.epsilon_end, args.epsilon_decay, run.decisions)
            actions = epsilon_greedy(q, obs, masks, epsilon, run.rng)
            next_obs, rewards, dones, _ = env.step(actions)
            replay.add(obs, masks, actions, rewards, dones)
            obs, steps = np.asarray(next_obs), steps + 1
            if steps % args.train_every == 0 and replay.ready(max(args.learning_starts, args.batch_size)):
                for _ in range(args.gradient_steps):
                    update(q, target, optimizer, replay.sample(args.batch_size, run.rng), args.max_grad_norm)
                    run.extra["gradient_steps"] += 1
                    if run.extra["gradient_steps"] % args.target_every == 0:
                        target.load_state_dict(q.state_dict())
            run.advance(args.num_envs, q)
        return run.finish(q)


def update(q, target, optimizer, batch: tuple[np.ndarray, ...], max_grad_norm: float) -> float:
    """One gradient step of Double DQN on ``batch`` (``Replay.sample``'s); the loss."""
    import torch

    obs, actions, rewards, dones, next_obs, next_masks = (torch.as_tensor(x) for x in batch)
    with torch.no_grad():
        best = masked(q(next_obs), next_masks).argmax(dim=1, keepdim=True)  # the online network chooses
        following = target(next_obs).gather(1, best).squeeze(1)  # the target network rates its choice
        goal = rewards + torch.where(dones, 0.0, following)
    value = q(obs).gather(1, actions[:, None]).squeeze(1)
    loss = torch.nn.functional.smooth_l1_loss(value, goal)
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(q.parameters(), max_grad_norm)
    optimizer.step()
    return float(loss.detach())
