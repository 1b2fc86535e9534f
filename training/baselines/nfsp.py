"""Neural Fictitious Self-Play's learner (Heinrich and Silver, 2016), from scratch: ``wizard baseline nfsp``.

Two networks: a best response Q, trained by Double DQN (``dqn``'s replay buffer and update) on every transition, and
an average policy Pi, trained by cross-entropy on a reservoir buffer of the best response's own choices (a uniform
sample of all of them so far), so that Pi approximates the average of the best responses played. At every round
start each game draws its mode: with probability ``eta`` (the anticipatory parameter) the learner plays that round by
its best response (epsilon-greedy over Q, its decisions kept for Pi), otherwise by sampling Pi over the legal actions.
Pi is NFSP's result: the checkpoint, the curve and ``baseline:PATH`` play it (greedily, its most likely legal action).

Here the learner plays one seat against the setting's fixed opponents, as the other baselines do, not against
copies of itself as in the paper's self-play: the method's networks and buffers, not its equilibrium argument.
Observations are stored as float16 in both buffers; neither is saved, so a resumed run refills them.
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


RANGES: Ranges = {**dqn.RANGES, "eta": (0, 1), "reservoir_size": (1, None), "sl_starts": (1, None), "sl_learning_rate": (0, 1)}


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


def train(args: Args, out: str | Path, resume: bool = False, quiet: bool = False,
          log: Callable[[str], object] = print) -> dict:
    """Train NFSP's learner as ``args`` say into ``out`` (``--resume``: continue the run there); what the run did."""
    import torch

    check_args(args, RANGES)
    dqn.check_buffer(args)
    check_memory("--set reservoir_size", args.reservoir_size, dqn.ROW_BYTES)
    with Run(NAME, args, out, resume, quiet, log) as run:
        q, target, pi = q_network(args.hidden), q_network(args.hidden), q_network(args.hidden)
        q_optimizer = torch.optim.Adam(q.parameters(), lr=args.learning_rate)
        pi_optimizer = torch.optim.Adam(pi.parameters(), lr=args.sl_learning_rate)
        target.load_state_dict(q.state_dict())
        run.track(q=q, target=target, pi=pi, q_optimizer=q_optimizer, pi_optimizer=pi_optimizer)
        run.extra.setdefault("gradient_steps", 0)
        run.begin(pi)
        env = WizardVecEnv(args.num_envs, seed=run.seed(), setting=args.setting, episode="round",
                           reward_scale=args.reward_scale)
        replay, reservoir = dqn.Replay(args.buffer_size, args.num_envs), Reservoir(args.reservoir_size)
        obs, steps = np.asarray(env.reset()), 0
        best = run.rng.random(args.num_envs) < args.eta  # each game's mode for its round: best response or Pi
        while run.going():
            masks = env.action_masks()
            epsilon = linear(args.epsilon_start, args.epsilon_end, args.epsilon_decay, run.decisions)
            actions = sample_policy(pi, obs, masks, run.rng)
            if best.any():
                actions[best] = epsilon_greedy(q, obs[best], masks[best], epsilon, run.rng)
                reservoir.add(obs[best], masks[best], actions[best], run.rng)
            next_obs, rewards, dones, _ = env.step(actions)
            replay.add(obs, masks, actions, rewards, dones)
            obs, steps = np.asarray(next_obs), steps + 1
            best = np.where(dones, run.rng.random(args.num_envs) < args.eta, best)
            if steps % args.train_every == 0 and replay.ready(max(args.learning_starts, args.batch_size)):
                for _ in range(args.gradient_steps):
                    dqn.update(q, target, q_optimizer, replay.sample(args.batch_size, run.rng), args.max_grad_norm)
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
