"""The learner's side of B batched games, as an SB3 VecEnv for ``wizard train``.

Each slot of a ``WizardBatch`` is one game with one learner seat (drawn per game); the other
seats are played by agents drawn per game from an opponent pool, and the learner's own decisions
in the phases it does not learn (``learn="bid"``: card play; ``learn="play"``: trump and bids) by
RuleAgent. After every step all B games wait for a learner decision in a learned phase.

Episodes are rounds (``episode="round"``, the default) or games. A round's score depends only on the
decisions of that round, so ending the learner's episode at each round end gives the same optimum
with far less variance: the value is the expected score of the rest of the round. Rewards are the
learner's round scores times ``reward_scale``; ``info["episode"]`` holds the final total (unscaled)
when a game ends, which SB3 logs as ``rollout/ep_rew_mean``.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from agents.base import Agent
from agents.ppo_agent import LEARNED_PHASES
from agents.rule_agent import RuleAgent
from wizard_env.actions import Phase
from wizard_env.batch import WizardBatch
from wizard_env.environment import _observation_bounds
from wizard_env.game import NUM_ACTIONS
from wizard_env.rules import Rules

EPISODES = ("round", "game")


class LearnerVecEnv(VecEnv):
    """B games in lockstep seen from one learner seat each (see the module docstring)."""

    def __init__(self, rules: Rules, num_envs: int, seed: int, learn: str = "both", episode: str = "round",
                 reward_scale: float = 0.01, pool: Sequence[Agent] = (), weights: Sequence[float] = ()):
        if learn not in LEARNED_PHASES:
            raise ValueError(f"learn must be one of {sorted(LEARNED_PHASES)}, not {learn!r}")
        if episode not in EPISODES:
            raise ValueError(f"episode must be one of {EPISODES}, not {episode!r}")
        low, high = _observation_bounds()
        self.render_mode = None
        super().__init__(num_envs, spaces.Box(low, high, dtype=np.float32), spaces.Discrete(NUM_ACTIONS))
        self.rules, self.learn, self.episode, self.reward_scale = rules, learn, episode, float(reward_scale)
        self.learned = np.zeros(len(Phase), dtype=bool)
        self.learned[list(LEARNED_PHASES[learn])] = True
        self.rng = np.random.default_rng([seed, 2])
        self.batch = WizardBatch(rules, num_envs, seed=seed, autoreset=True)
        self.delegate = RuleAgent(seed=np.random.default_rng([seed, 3]))
        self.pool: list[Agent] = []
        self.pool_weights = np.ones(0)
        self.set_opponent_pool(list(pool) or [RuleAgent(seed=np.random.default_rng([seed, 4]))], list(weights) or [1.0])
        self.seats = np.zeros(num_envs, dtype=np.int64)
        self.table = np.zeros((num_envs, rules.num_players), dtype=np.int64)  # agent index by seat; -1 the learner
        self.game_steps = np.zeros(num_envs, dtype=np.int64)
        self._actions: np.ndarray | None = None

    def set_opponent_pool(self, agents: Sequence[Agent], weights: Sequence[float]) -> None:
        """Opponents for the games that start from now on, drawn per seat with these relative weights."""
        w = np.asarray(weights, dtype=np.float64)
        if len(agents) == 0 or len(agents) != len(w) or not np.all(w >= 0) or w.sum() <= 0:
            raise ValueError(f"need one non-negative weight per pool agent with a positive sum, got {list(weights)}")
        self.pool, self.pool_weights = list(agents), w / w.sum()

    def _new_tables(self, games: np.ndarray) -> None:
        n = self.rules.num_players
        self.seats[games] = self.rng.integers(n, size=games.size)
        self.table[games] = self.rng.choice(len(self.pool), size=(games.size, n), p=self.pool_weights)
        self.table[games, self.seats[games]] = -1
        self.game_steps[games] = 0

    # -- the VecEnv interface ----------------------------------------------------------------

    def reset(self) -> np.ndarray:
        """Draw seats and opponents for the B current games and play up to the learner's decisions."""
        self._new_tables(np.arange(self.num_envs))
        self._rewards, self._dones, self._infos = self._empty()
        self._advance()
        return self.batch.observe(None, self.seats)

    def step_async(self, actions: np.ndarray) -> None:
        """Remember the learner's actions for ``step_wait``."""
        self._actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        """Apply the learner's actions, then everyone else's until the learner is to decide again."""
        self._rewards, self._dones, self._infos = self._empty()
        last_obs = self.batch.observe(None, self.seats)
        self.game_steps += 1
        self._apply(np.arange(self.num_envs), self._actions)
        self._advance()
        for g in np.flatnonzero(self._dones):
            self._infos[g]["terminal_observation"] = last_obs[g]
        return self.batch.observe(None, self.seats), self._rewards * self.reward_scale, self._dones.copy(), self._infos

    def action_masks(self) -> np.ndarray:
        """bool [B, NUM_ACTIONS]: the learner's legal actions in every game."""
        return self.batch.legal_masks().astype(bool)

    def env_method(self, method_name: str, *args, indices=None, **kwargs) -> list[Any]:
        """Only ``action_masks`` is supported: one mask per game (what sb3-contrib asks for)."""
        if method_name != "action_masks":
            raise AttributeError(f"LearnerVecEnv has no per-env method {method_name!r}")
        masks = self.action_masks()
        return list(masks[list(self._get_indices(indices))])

    def has_attr(self, attr_name: str) -> bool:
        """True for ``action_masks``, so MaskablePPO uses the masks."""
        return attr_name == "action_masks" or hasattr(self, attr_name)

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        """The attribute of this env, once per requested game."""
        return [getattr(self, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        """Set an attribute of this env (shared by all games)."""
        setattr(self, attr_name, value)

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        """No game is wrapped."""
        return [False for _ in self._get_indices(indices)]

    def close(self) -> None:
        """Nothing to release."""

    def seed(self, seed: int | None = None) -> list[None]:
        """Seeds are fixed at construction; kept for the interface."""
        return [None] * self.num_envs

    # -- playing the other decisions ---------------------------------------------------------

    def _empty(self) -> tuple[np.ndarray, np.ndarray, list[dict]]:
        return np.zeros(self.num_envs, np.float32), np.zeros(self.num_envs, bool), [{} for _ in range(self.num_envs)]

    def _waiting(self) -> np.ndarray:
        """Bool [B]: the learner is to act in a learned phase."""
        b = self.batch
        return (b.current == self.seats) & self.learned[b.phase]

    def _advance(self) -> None:
        """Play the opponents' and delegated decisions until every game waits for the learner."""
        b = self.batch
        while (pending := np.flatnonzero(~self._waiting())).size:
            who = self.table[pending, b.current[pending]]  # -1: the learner's delegated phase
            observations, masks = b.observe(pending), b.legal_masks(pending)
            actions = np.empty(pending.size, dtype=np.int64)
            for a in np.unique(who):
                mine = who == a
                agent = self.delegate if a < 0 else self.pool[a]
                actions[mine] = agent.act_batch(observations[mine], masks[mine])
            self._apply(pending, actions)

    def _apply(self, games: np.ndarray, actions: np.ndarray) -> None:
        """Step these games and book the learner's round scores, round ends and game ends."""
        b = self.batch
        b.step(actions, games)
        ended = np.flatnonzero(b.round_over)
        self._rewards[ended] += b.round_scores[ended, self.seats[ended]]
        if self.episode == "round":
            self._dones[ended] = True
        over = np.flatnonzero(b.game_over)
        for g in over:
            self._infos[g]["episode"] = {"r": float(b.final_totals[g, self.seats[g]]), "l": int(self.game_steps[g])}
        self._dones[over] = True
        if over.size:
            self._new_tables(over)
