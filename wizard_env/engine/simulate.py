"""Play whole games between agents on the rules engine, and summarise the results."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from wizard_env.util.checks import check_seed

from .batch import MAX_GAME_SEED
from .game import WizardGame
from .observation import observe
from .rules import Rules, winners

#: Anything that maps (observation vector, action mask) to an action id.
Policy = Callable[[np.ndarray, np.ndarray], int]

#: The standard normal quantile of a two-sided 95% interval.
Z_95 = 1.959963984540054


def mean_ci(values: np.ndarray | Sequence[float]) -> tuple[float, float | None]:
    """Mean and half-width of its 95% interval (normal approximation); None with fewer than 2 values."""
    values = np.asarray(values, dtype=np.float64)
    if values.size < 2:
        return float(values.mean()), None
    return float(values.mean()), float(Z_95 * values.std(ddof=1) / np.sqrt(values.size))


@dataclass
class GameResult:
    """Outcome of one game, by seat."""

    seed: int
    totals: np.ndarray
    bids_met: np.ndarray  # rounds in which the seat's bid was met exactly
    rounds: int
    winners: list[int]
    game: WizardGame | None = field(repr=False)  # None once a caller has dropped it to keep only the numbers


def play_game(rules: Rules, agents: Sequence[Policy], seed: int, record: bool = False) -> GameResult:
    """Play one game, agent i in seat i; ``record`` keeps the replay log in ``result.game.log``."""
    if len(agents) != rules.num_players:
        raise ValueError(f"{rules.num_players} players need {rules.num_players} agents, got {len(agents)}")
    game = WizardGame(rules, seed, record=record)
    bids_met = np.zeros(rules.num_players, dtype=np.int64)
    while not game.is_over:
        seat = game.current
        scores = game.step(agents[seat](observe(game, seat), game.legal_mask()), actor=f"seat {seat}")
        if scores is not None:
            bids_met += scores > 0  # a met bid scores at least 20, a missed one at most -10
    return GameResult(seed, game.totals.copy(), bids_met, rules.num_rounds, winners(game.totals.tolist()), game)


@dataclass
class SeatSummary:
    """Statistics of one seat over many games."""

    mean_score: float
    ci95: float  # half-width of the 95% confidence interval of the mean
    win_rate: float  # a shared win counts as 1 / (number of winners)
    bid_accuracy: float  # fraction of rounds with the bid met exactly


def summarise(results: Sequence[GameResult]) -> list[SeatSummary]:
    """Per-seat mean score with a 95% interval, win rate and bid accuracy over ``results``."""
    if not results:
        raise ValueError("no games to summarise")
    totals = np.array([r.totals for r in results], dtype=np.float64)
    n_games, n_seats = totals.shape
    wins = np.zeros(n_seats)
    for r in results:
        wins[r.winners] += 1 / len(r.winners)
    met = np.sum([r.bids_met for r in results], axis=0)
    rounds = sum(r.rounds for r in results)
    intervals = [mean_ci(totals[:, s]) for s in range(n_seats)]
    return [SeatSummary(mean, half or 0.0, wins[s] / n_games, met[s] / rounds) for s, (mean, half) in enumerate(intervals)]


def derive_seeds(seed: int, games: int, players: int) -> tuple[list[int], list[int]]:
    """Game seeds and per-seat agent seeds, all from one seed (prefix-stable: game k is the same for any count)."""
    check_seed(seed, "--seed")
    game_seq, agent_seq = np.random.SeedSequence(seed).spawn(2)
    game_seeds = np.random.default_rng(game_seq).integers(0, MAX_GAME_SEED, size=games)
    agent_seeds = agent_seq.generate_state(players, np.uint64)
    return [int(s) for s in game_seeds], [int(s) for s in agent_seeds]
