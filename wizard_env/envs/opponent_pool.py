"""The opponent pool of ``WizardVecEnv``: who plays the seats the learner does not, and their moves.

``OpponentPool`` is the part of ``WizardVecEnv`` (which inherits it) that keeps the pool new games draw
their opponents from, the table of which agent plays each seat of each game, and plays their moves:
at each move, every agent in play makes one ``act_batch`` call for all the games where a seat it plays
is to move (the learner's delegate included), and the engine steps those games together. The pool's
arguments and its seeding are documented with ``WizardVecEnv``.
"""

from __future__ import annotations

import copy
from typing import Sequence

import numpy as np

from wizard_env.agents import Agent
from wizard_env.agents.base import as_actions
from wizard_env.engine.actions import IllegalActionError, chosen_legal
from wizard_env.engine.batch import WizardBatch

from .single_agent import Opponent, build_opponents, check_opponent

#: Marks the learner's seat in the table of who plays which seat.
LEARNER = -1


def check_pool(opponents: Opponent | Sequence[Opponent], weights: Sequence[float] | None) -> tuple[list[Opponent], np.ndarray]:
    """The pool as a list and its draw probabilities; ValueError naming a bad entry or weight."""
    entries = [opponents] if isinstance(opponents, (str, Agent)) else opponents
    if not isinstance(entries, Sequence) or not entries:
        raise ValueError(f"opponents must be an agent spec, an Agent or a non-empty list of them, not {opponents!r}")
    for i, entry in enumerate(entries):
        check_opponent(entry, f"opponents[{i}]")
    if weights is None:
        return list(entries), np.full(len(entries), 1 / len(entries))
    numbers = f"opponent weights must be a flat list of numbers, one per opponent, not {weights!r}"
    if isinstance(weights, (str, bytes)):  # numpy would read "1" as the number 1
        raise ValueError(numbers)
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(numbers) from None
    if w.ndim != 1:
        raise ValueError(numbers)
    if w.shape != (len(entries),):
        raise ValueError(f"{len(entries)} opponents need {len(entries)} weights, got {weights!r}")
    if not (np.isfinite(w).all() and (w >= 0).all() and w.sum() > 0):
        raise ValueError(f"opponent weights must be finite, non-negative and not all zero, not {weights!r}")
    return list(entries), w / w.sum()


class OpponentPool:
    """The opponents of a ``WizardVecEnv``: the pool, the table of who plays which seat, and their batched moves."""

    # set by WizardVecEnv
    rng: np.random.Generator
    batch: WizardBatch | None
    delegate: Agent | None  # the learner's decisions in the phases it does not learn
    _pool_entries: list[Opponent]
    _pool_p: np.ndarray
    _pool_ids: np.ndarray  # the agents new games draw from, as indices into _agents
    _table: np.ndarray  # [game, seat] -> index into _agents, LEARNER for the learner's seat
    _agents: list[Agent]  # agents that play a seat now or are in the pool
    _buffer: np.ndarray  # the opponents' observations

    def set_opponent_pool(self, agents: Opponent | Sequence[Opponent], weights: Sequence[float] | None = None) -> None:
        """Draw opponents from ``agents`` (specs or Agents) by ``weights`` from each game's next start on."""
        entries, p = check_pool(agents, weights)
        rng = copy.deepcopy(self.rng)  # a spec that fails to build leaves the Generator and the pool as they were
        pool = build_opponents(entries, rng)
        self.rng, self._pool_entries, self._pool_p = rng, entries, p
        self._use_pool(pool)

    @property
    def opponent_pool(self) -> list[Agent]:
        """The agents new games draw their opponents from."""
        return [self._agents[i] for i in self._pool_ids]

    def _use_pool(self, pool: list[Agent]) -> None:
        """Make ``pool`` the agents new games draw from; keep only the other agents still in play."""
        used = np.unique(self._table[self._table != LEARNER]) if self.batch is not None else np.zeros(0, dtype=np.int64)
        kept = [self._agents[i] for i in used]
        agents = list({id(a): a for a in kept + pool}.values())  # one entry per distinct agent
        index = {id(a): i for i, a in enumerate(agents)}
        remap = np.full(len(self._agents) + 1, LEARNER, dtype=np.int64)  # remap[LEARNER] stays LEARNER
        remap[used] = [index[id(a)] for a in kept]
        self._table = remap[self._table]
        self._agents = agents
        self._pool_ids = np.array([index[id(a)] for a in pool], dtype=np.int64)

    def _play_opponents(self, games: np.ndarray) -> None:
        """One move in each of ``games`` (an opponent or the delegate to act in each): one act_batch call per agent."""
        batch, k = self._live_batch(), len(games)
        who = self._table[games, batch.current[games]]
        masks = batch.legal_masks(games)
        agents = np.unique(who)
        actions = np.empty(k, dtype=np.int64)
        for a in agents:  # each agent's games observed straight into the buffer (copying rows cost more)
            rows = np.flatnonzero(who == a) if agents.size > 1 else slice(None)
            mine = games[rows]
            observations = batch.observe(mine, out=self._buffer[:len(mine)])
            agent = self._agent(a)
            chosen = agent.act_batch(observations, masks[rows])
            actions[rows] = as_actions(chosen, len(mine), f"{self._role(a)} {agent.name!r}")
        legal = chosen_legal(masks, actions)
        if not legal.all():
            i = int(np.flatnonzero(~legal)[0])
            raise IllegalActionError(
                f"{self._role(who[i])} {self._agent(who[i]).name!r} chose illegal action {actions[i]} in game {games[i]} "
                f"(legal: {np.flatnonzero(masks[i]).tolist()})"
            )
        batch.apply(games, actions, masks)

    @staticmethod
    def _role(index: int) -> str:
        """What the agent at this index of the table plays: the learner's seat (as its delegate) or another."""
        return "delegate" if index == LEARNER else "opponent"

    def _agent(self, index: int) -> Agent:
        """The agent at this index of the table; the delegate for the learner's seat."""
        agent = self.delegate if index == LEARNER else self._agents[index]
        assert agent is not None  # the learner's seat is in the table only where a delegate plays
        return agent

    def _live_batch(self) -> WizardBatch:
        """The games in play."""
        if self.batch is None:
            raise RuntimeError("call reset() first: there are no games in play")
        return self.batch
