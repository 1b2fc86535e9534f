"""Rollouts: the value of every legal action of a decision, on copies of the games (no RL imports).

Each legal action is applied on its own copy of the game (``WizardBatch.copy_games``, every copy of
every game stepped in lockstep) and the rest of the round is played out by a rollout agent at every
seat; the acting seat's round score is that action's value in that deal. ``search_values`` averages
these values over determinized deals (what ``pimc`` chooses by), and ``wizard train-values`` fits a
network to them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from wizard_env.engine.actions import NUM_ACTIONS, IllegalActionError
from wizard_env.engine.batch import WizardBatch
from wizard_env.engine.determinize import determinize

from .base import Agent

if TYPE_CHECKING:
    from .inference import BidInference


def seated_actions(agent: Agent, others: Agent | Sequence[Agent] | None, theirs: np.ndarray | None,
                   observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Each row's action, one ``act_batch`` call per agent that has rows: by ``others`` where ``theirs`` [k] (bool) marks
    the row's seat as one of theirs, or with a sequence of others by ``others[j]`` where ``theirs`` [k] (int) is j;
    ``agent`` plays the other rows (False, or a negative owner). ``others`` None: ``agent`` plays every row, in one call."""
    if others is None or theirs is None:
        return agent.act_batch(observations, masks)
    owners = theirs.astype(np.int64) - 1 if theirs.dtype == bool else theirs  # a bool mark: True is others[0], False agent
    if not (owners >= 0).any():
        return agent.act_batch(observations, masks)
    players = (agent, others) if isinstance(others, Agent) else (agent, *others)
    actions = np.empty(len(observations), dtype=np.int64)
    for owner, player in enumerate(players, -1):  # the agent's rows (owner -1) first, then each other's in turn
        rows = owners == owner
        if rows.any():
            actions[rows] = player.act_batch(observations[rows], masks[rows])
    return actions


def rollout_values(batch: WizardBatch, games: np.ndarray, rollout: Agent, masks: np.ndarray | None = None,
                   others: Agent | Sequence[Agent] | None = None, theirs: np.ndarray | None = None) -> np.ndarray:
    """float32 [k, NUM_ACTIONS]: the acting seat's round score after each legal action of each game
    (the round played out by ``rollout`` at every seat); NaN for illegal actions. ``masks`` [k, NUM_ACTIONS]:
    the actions to play out, some of the legal ones (default: all of them); NaN for the others. ``others`` plays
    the seats that ``theirs`` [k, seats] (bool) marks in each game instead (a table of RuleAgents, say); with a
    sequence of others, ``theirs`` (int) names each seat's player: ``others[j]`` for j >= 0, ``rollout`` for a
    negative one (``seated_actions``: one call per agent, the rows of every game together)."""
    masks = batch.legal_masks(games) if masks is None else masks
    rows, actions = np.nonzero(masks)
    seats = batch.current[games][rows]
    seated = None if others is None or theirs is None else theirs[rows]  # by copy
    sim = batch.copy_games(games, masks.sum(axis=1))
    scores = np.full(len(rows), np.nan, dtype=np.float32)
    live = sim.all_games
    sim.apply(live, actions.astype(np.int64))
    while True:
        ended = live[sim.round_over[live]]
        scores[ended] = sim.round_scores[ended, seats[ended]]
        live = live[~sim.round_over[live]]
        if not live.size:
            break
        try:  # checked: an agent's illegal action would otherwise corrupt the copies' state
            theirs_now = None if seated is None else seated[live, sim.current[live]]
            sim.step(seated_actions(rollout, others, theirs_now, sim.observe(live), sim.legal_masks(live)), live)
        except IllegalActionError as error:
            raise IllegalActionError(f"rollout agent {rollout.name!r}: {error}") from None
    values = np.full((len(games), NUM_ACTIONS), np.nan, dtype=np.float32)
    values[rows, actions] = scores
    return values


def draw_worlds(batch: WizardBatch, games: np.ndarray, rng: np.random.Generator, samples: int,
                inference: BidInference | None = None) -> tuple[WizardBatch, np.ndarray, np.ndarray]:
    """The worlds a search of ``games`` plays out: the determinizations of what each acting seat sees (``group``
    rows a game, in the order of ``games``: ``samples``, times ``inference.oversample`` with inference), the rows kept
    (ascending) and the share of the game's ``samples`` draws each kept row carries (every row, ``1 / samples`` each,
    without inference)."""
    seats = batch.current[games].astype(np.int64)
    if inference is None:
        worlds = determinize(batch, games, seats, rng, samples)
        return worlds, worlds.all_games, np.full(worlds.batch_size, 1 / samples)
    worlds = determinize(batch, games, seats, rng, samples * inference.oversample)
    rows, weights = inference.select(worlds, seats, samples, rng)
    return worlds, rows, weights


def search_values(batch: WizardBatch, games: np.ndarray, rollout: Agent, rng: np.random.Generator, samples: int,
                  inference: BidInference | None = None, masks: np.ndarray | None = None,
                  others: Agent | Sequence[Agent] | None = None,
                  theirs: np.ndarray | None = None) -> np.ndarray:
    """float64 [k, NUM_ACTIONS]: each legal action's mean round score for the acting seat of each of ``games`` over
    ``samples`` determinizations of what that seat sees (``determinize``: never the hidden cards themselves), each
    played out by ``rollout``; NaN for illegal actions. ``masks`` [k, NUM_ACTIONS]: the actions to search, some of
    the legal ones (default: all of them; ``search_prior`` picks some); NaN for the others. The worlds drawn do not
    depend on ``masks``. ``others`` and ``theirs``: who plays which seats in the rollouts, as ``rollout_values`` takes
    them.

    ``inference``: draw ``samples * inference.oversample`` worlds and keep ``samples`` of them, drawn by the
    likelihood of the bids seen (``agents.inference``); a world kept twice counts twice in the mean.
    """
    worlds, rows, weights = draw_worlds(batch, games, rng, samples, inference)
    if inference is None:  # game i's samples: rows i*s .. i*s + s - 1
        searched = None if masks is None else np.repeat(masks, samples, axis=0)
        seated = None if theirs is None else np.repeat(theirs, samples, axis=0)
        values = rollout_values(worlds, rows, rollout, searched, others, seated).reshape(len(games), samples, NUM_ACTIONS)
        return values.astype(np.float64).mean(axis=1)  # a sample's legal actions are the game's: NaN elsewhere
    game = rows // (samples * inference.oversample)  # of each kept world
    searched = None if masks is None else masks[game]
    seated = None if theirs is None else theirs[game]
    values = rollout_values(worlds, rows, rollout, searched, others, seated).astype(np.float64) * weights[:, None]
    mean = np.zeros((len(games), NUM_ACTIONS))
    np.add.at(mean, game, values)  # NaN for the illegal actions, as every world of a game has them
    return mean


def search_prior(prior: Agent, observations: np.ndarray, masks: np.ndarray, top: int,
                 keep: np.ndarray | None = None) -> np.ndarray:
    """bool [k, NUM_ACTIONS]: of each row's legal actions (``masks``), the ``top`` that ``prior`` (an agent with
    ``logits``, such as ``PPOAgent``) rates highest (ties: the lower action id), and the action ``keep`` [k] of the
    row where given: the actions a search with ``prior`` as its prior plays out. A row with at most ``top`` legal
    actions keeps them all."""
    legal = masks != 0
    logits = np.where(legal, prior.logits(observations, masks), -np.inf)  # type: ignore[attr-defined]
    order = np.argsort(-logits, axis=1, kind="stable")[:, :top]
    chosen = np.zeros_like(legal)
    np.put_along_axis(chosen, order, True, axis=1)
    if keep is not None:
        chosen[np.arange(len(chosen)), keep] = True
    return chosen & legal
