"""Duplicate-deal evaluation of agents (the method of ``wizard eval``, ``wizard_env.cli.eval``).

Every deal (a game seed: the cards of every round and the first dealer follow from it) is played
once for each rotation of the agents around the table, or for every ordering with
``permutations=True``, so each agent meets the same cards from every seat. Scores are averaged
over the games of a deal first; means, 95% intervals and paired differences are then taken over
deals, which removes most of the luck of the cards from the comparison.

An agent spec named at several seats (``rule,rule,random,random``) is one row: its seats are
pooled. Each seat of the agents list (an *entry*) also has its own row in the JSON.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from wizard_env.agents.base import Agent, as_actions
from wizard_env.agents.registry import make_agent
from wizard_env.engine.actions import IllegalActionError, Phase, chosen_legal
from wizard_env.engine.batch import WizardBatch
from wizard_env.util.extras import MissingExtra, install_command, require_extra  # noqa: F401 (MissingExtra re-exported for eval_report and rllib_train)
from wizard_env.engine.rules import Rules
from wizard_env.engine.simulate import Z_95, mean_ci  # noqa: F401 (re-exported: scripts import them from here)

if TYPE_CHECKING:
    from openskill.models import PlackettLuce

#: Games ``play_games`` runs in lockstep at most (their observations take 4.5 KB each per step).
DEFAULT_BATCH_SIZE = 4096
#: What an evaluation keeps per game played (its record row, seat table and seed: about 1.5 kB at 4 players).
EVAL_BYTES_PER_GAME = 2000
#: The most duplicate deals a recipe or a trainer's evaluation plays (2,000 take minutes; this many, days).
MAX_DEALS = 10_000_000
#: Shuffled game orders the ratings are averaged over (openskill rates games one after another).
RATING_ORDERS = 10
#: The optional packages of the report (the ``eval`` extra): the ratings and the plot.
EVAL_PACKAGES = ("openskill", "matplotlib")
EVAL_INSTALL = install_command("eval")


def require_eval_extra(user: str = "wizard eval") -> None:
    """MissingExtra naming the first package of the ``eval`` extra that is not installed, if any (nothing is imported)."""
    require_extra("eval", EVAL_PACKAGES, user)


# -- playing ----------------------------------------------------------------------------------


@dataclass
class GameRecords:
    """Outcomes of N games in columns (n seats, R rounds); game k's arrays are row k."""

    seeds: np.ndarray  # [N] game seeds
    totals: np.ndarray  # [N, n] final score by seat
    bids: np.ndarray  # [N, R, n]
    tricks: np.ndarray  # [N, R, n] tricks won
    hand_sizes: np.ndarray  # [N, R]
    dealers: np.ndarray  # [N, R] seat of the dealer

    @classmethod
    def empty(cls, games: int, num_players: int, num_rounds: int) -> "GameRecords":
        """Zero-filled records for ``games`` games."""
        shape = (games, num_rounds)
        return cls(
            np.zeros(games, np.int64), np.zeros((games, num_players), np.int64),
            np.zeros((*shape, num_players), np.int64), np.zeros((*shape, num_players), np.int64),
            np.zeros(shape, np.int64), np.zeros(shape, np.int64),
        )


def play_games(
    rules: Rules,
    agents_by_seat_per_game: Sequence[Sequence[Agent]],
    seeds: Sequence[int],
    progress: Callable[[int], object] | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> GameRecords:
    """Play game k with seed ``seeds[k]`` and ``agents_by_seat_per_game[k][s]`` in seat s; return the records.

    Up to ``batch_size`` games run in lockstep on ``WizardBatch``; at each step every agent
    decides, in one ``act_games(batch, games)`` call, for all the games where it is to move: by default
    ``act_batch`` on their observations; a search agent such as ``pimc`` reads the games themselves,
    hidden state only through ``wizard_env.engine.determinize``. An agent that declares ``sees_hidden`` (``oracle``,
    for measurement) is the one exception: it is handed the true games, every hidden card, by ``act_hidden``; no
    other agent's ``act_hidden`` is ever called. ``progress(count)``
    is called as rounds finish (``count`` rounds of any games). Same arguments, same records.
    """
    n = rules.num_players
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")
    if len(agents_by_seat_per_game) != len(seeds):
        raise ValueError(f"{len(seeds)} game seeds but {len(agents_by_seat_per_game)} seatings of agents")
    for k, agents in enumerate(agents_by_seat_per_game):
        if len(agents) != n:
            raise ValueError(f"game {k}: {n} players need {n} agents, got {len(agents)}")
    records = GameRecords.empty(len(seeds), n, rules.num_rounds)
    for start in range(0, len(seeds), batch_size):
        stop = min(start + batch_size, len(seeds))
        _play_batch(rules, agents_by_seat_per_game[start:stop], seeds[start:stop], records, start, progress)
    return records


def _play_batch(rules: Rules, tables: Sequence[Sequence[Agent]], seeds: Sequence[int], records: GameRecords,
                offset: int, progress: Callable[[int], object] | None) -> None:
    """Play one batch of games to the end, writing their records from row ``offset`` on."""
    batch = WizardBatch(rules, seeds=[int(s) for s in seeds], autoreset=False)
    distinct = list({id(a): a for table in tables for a in table}.values())  # in order of first seat taken
    index = {id(a): i for i, a in enumerate(distinct)}
    agent_at = np.array([[index[id(a)] for a in table] for table in tables])  # [game, seat] -> agent
    rounds_done = np.zeros(len(seeds), dtype=np.int64)
    records.seeds[offset:offset + len(seeds)] = batch.game_seed
    while (live := np.flatnonzero(batch.phase != Phase.OVER)).size:
        who = agent_at[live, batch.current[live]]
        actions = np.empty(live.size, dtype=np.int64)
        for a in np.unique(who):
            mine = who == a
            agent = distinct[a]
            act = agent.act_hidden if agent.sees_hidden is True else agent.act_games  # the true deal: only if declared
            actions[mine] = as_actions(act(batch, live[mine]), int(mine.sum()), f"agent {agent.name!r}")
        try:
            batch.step(actions, live)
        except IllegalActionError as error:  # the step changed nothing: name the agent of the first illegal action
            first = np.argmin(chosen_legal(batch.legal_masks(live), actions))
            raise IllegalActionError(f"agent {distinct[who[first]].name!r}: {error}") from None
        ended = np.flatnonzero(batch.round_over)
        rows, rnd = offset + ended, rounds_done[ended]
        records.bids[rows, rnd], records.tricks[rows, rnd] = batch.round_bids[ended], batch.round_tricks[ended]
        records.hand_sizes[rows, rnd] = batch.round_hand_size[ended]
        records.dealers[rows, rnd] = batch.round_dealer[ended]
        rounds_done[ended] += 1
        over = np.flatnonzero(batch.game_over)
        records.totals[offset + over] = batch.final_totals[over]
        if progress is not None and ended.size:
            progress(int(ended.size))  # by rounds: games in lockstep all finish at the very end


def seatings(num_players: int, permutations: bool = False) -> list[tuple[int, ...]]:
    """The orders each deal is played in: ``order[s]`` is the agent (entry) in seat s.

    Rotations put entry e in seat (e + r) mod n in order r; permutations are every ordering.
    """
    if permutations:
        return list(itertools.permutations(range(num_players)))
    return [tuple((s - r) % num_players for s in range(num_players)) for r in range(num_players)]


# -- statistics -------------------------------------------------------------------------------


def win_shares(totals: np.ndarray) -> np.ndarray:
    """Per game and seat: 1/k for each of the k seats with the best total, else 0."""
    best = totals == totals.max(axis=1, keepdims=True)
    return best / best.sum(axis=1, keepdims=True)


@dataclass
class Rating:
    """An openskill (Plackett-Luce) rating, averaged over shuffled orders of the games."""

    mu: float
    sigma: float
    mu_spread: float = 0.0  # standard deviation of mu over those orders: how much one order could move it

    @property
    def ordinal(self) -> float:
        """A cautious estimate: mu - 3 sigma."""
        return self.mu - 3 * self.sigma


def _rate_in_order(model: PlackettLuce, scores: np.ndarray) -> np.ndarray:
    """openskill's (mu, sigma) of each player, ``[player, 2]``, after rating the games one after another."""
    current = [model.rating(name=str(p)) for p in range(scores.shape[1])]
    for row in scores:
        playing = np.flatnonzero(~np.isnan(row))  # NaN: the player is not in this game
        rated = model.rate([[current[p]] for p in playing], scores=row[playing].tolist())
        for p, team in zip(playing, rated):
            current[p] = team[0]
    return np.array([(r.mu, r.sigma) for r in current])


def ratings(scores: np.ndarray, seed: int = 0, orders: int = RATING_ORDERS) -> list[Rating]:
    """Plackett-Luce ratings of K players from their scores in each game, ``scores[game, player]`` (NaN where a player
    is not in the game: ``wizard league``'s games seat two of them).

    Higher scores rank first; equal scores share a rank. openskill updates the ratings one game at a
    time, so its result depends on the order of the games. Here the games are first sorted (which makes
    the result the same for any order they come in), then rated in ``orders`` shuffled orders drawn from
    ``seed``; mu and sigma are the means over those orders and ``mu_spread`` the standard deviation of mu.
    """
    try:
        from openskill.models import PlackettLuce
    except ImportError:
        raise MissingExtra(f"the ratings need openskill, from the eval extra: {EVAL_INSTALL}") from None
    scores = np.asarray(scores)
    if scores.ndim != 2 or scores.shape[1] < 2:
        raise ValueError(f"scores must be [games, players] with at least 2 players, not shape {scores.shape}")
    if orders < 1:
        raise ValueError(f"orders must be at least 1, not {orders}")
    if (np.sum(~np.isnan(scores), axis=1) < 2).any():
        raise ValueError("every game needs the scores of at least 2 players (NaN: not in the game)")
    canonical = scores[np.lexsort(scores.T[::-1])]  # by the first player's score, then the second's, ...
    rng = np.random.default_rng(np.random.SeedSequence([seed, orders]))
    model = PlackettLuce()
    fits = np.stack([_rate_in_order(model, canonical[rng.permutation(len(canonical))]) for _ in range(orders)])
    mu, sigma = fits.mean(axis=0).T
    spread = fits[:, :, 0].std(axis=0, ddof=1) if orders > 1 else np.zeros(len(mu))
    return [Rating(float(m), float(s), float(d)) for m, s, d in zip(mu, sigma, spread)]


@dataclass
class Stats:
    """One row of the evaluation: an agent spec with its seats pooled, or one entry of the agents list."""

    name: str
    entries: list[int]  # positions in the agents list this row pools
    mean_score: float  # mean final score of one seat per game
    ci95: float | None  # half-width of the 95% interval over deals
    diff: float  # mean paired difference (by deal) to the reference
    diff_ci95: float | None
    win_rate: float  # a shared win counts 1/k
    bid_accuracy: float  # fraction of rounds bid exactly
    by_hand_size: list[tuple[int, float, int]]  # (hand size, bid accuracy, rounds)
    by_position: list[tuple[int, float, int]]  # (bidding position, 0 = left of dealer; accuracy, rounds)
    rating: Rating | None  # from per-game rankings (a spec ranks by its seats' mean total); None if alone


def _accuracy_by(keys: np.ndarray, met: np.ndarray) -> list[tuple[int, float, int]]:
    return [(int(k), float(met[keys == k].mean()), int((keys == k).sum())) for k in np.unique(keys)]


def _stats(name: str, entries: list[int], deal_scores: np.ndarray, ref: np.ndarray, wins: np.ndarray,
           met: np.ndarray, hand: np.ndarray, position: np.ndarray, rating: Rating | None) -> Stats:
    """A row from per-entry arrays (last axis: entries), pooling the columns ``entries``."""
    mine = deal_scores[:, entries].mean(axis=1)
    mean, ci = mean_ci(mine)
    diff, diff_ci = mean_ci(mine - ref)
    met, hand, position = met[..., entries], hand[..., entries], position[..., entries]
    return Stats(name, entries, mean, ci, diff, diff_ci, float(wins[:, entries].mean()), float(met.mean()),
                 _accuracy_by(hand, met), _accuracy_by(position, met), rating)


@dataclass
class EvalResult:
    """Everything ``wizard eval`` reports; games are ordered deal by deal, ``game = deal * orders + order``."""

    rules: Rules
    agent_specs: list[str]
    seed: int
    permutations: bool
    reference: str
    deal_seeds: list[int]
    agent_seeds: list[int]
    seatings: list[tuple[int, ...]]
    records: GameRecords
    deal_scores: np.ndarray  # [deals, entries]: mean score of each entry over the games of a deal
    specs: list[Stats]  # one row per distinct spec, in order of first appearance
    entries: list[Stats]  # one row per position of the agents list

    @property
    def deals(self) -> int:
        """Number of deals."""
        return len(self.deal_seeds)


def seats_of_entries(orders: Sequence[tuple[int, ...]], games: int) -> np.ndarray:
    """``[games, entry] -> seat`` for ``games`` games played deal by deal in the ``orders`` of ``seatings``."""
    seating = np.tile(np.asarray(orders), (games // len(orders), 1))  # [games, seat] -> entry
    return np.argsort(seating, axis=1)


def bid_accuracy_by_deal(result: "EvalResult") -> np.ndarray:
    """``[deals, entries]``: the fraction of its rounds each entry bid exactly, over the games of each deal."""
    records, per_deal = result.records, len(result.seatings)
    seat_of = seats_of_entries(result.seatings, len(records.seeds))
    met = (records.bids == records.tricks).mean(axis=1)  # [games, seat]
    by_entry = np.take_along_axis(met, seat_of, axis=1)
    return by_entry.reshape(-1, per_deal, by_entry.shape[1]).mean(axis=1)


def summarise(rules: Rules, specs: Sequence[str], orders: Sequence[tuple[int, ...]], records: GameRecords,
              reference: str, seed: int = 0) -> tuple[np.ndarray, list[Stats], list[Stats]]:
    """Per-deal entry scores, spec rows and entry rows from the records of the games, deal by deal.

    Spec rows are compared with the reference spec's pooled seats, entry rows with its first entry;
    ``seed`` draws the game orders the ratings are averaged over.
    """
    n, per_deal = rules.num_players, len(orders)
    games = len(records.seeds)
    seat_of = seats_of_entries(orders, games)
    rows = np.arange(games)[:, None]
    totals = records.totals[rows, seat_of]  # [games, entries]
    deal_scores = totals.reshape(-1, per_deal, n).mean(axis=1)
    wins = win_shares(records.totals)[rows, seat_of]
    rounds = np.arange(rules.num_rounds)[None, :, None]
    met = (records.bids == records.tricks)[rows[:, :, None], rounds, seat_of[:, None, :]]  # [games, rounds, entries]
    hand = np.broadcast_to(records.hand_sizes[:, :, None], met.shape)
    position = (seat_of[:, None, :] - records.dealers[:, :, None] - 1) % n
    names = list(dict.fromkeys(specs))
    groups = {name: [e for e, s in enumerate(specs) if s == name] for name in names}
    # In a game a spec scores the mean total of its seats; a spec alone has nobody to be ranked against.
    spec_totals = np.stack([totals[:, groups[name]].mean(axis=1) for name in names], axis=1)
    spec_ratings: Sequence[Rating | None] = ratings(spec_totals, seed) if len(names) > 1 else [None]
    ref_scores = deal_scores[:, groups[reference]].mean(axis=1)
    spec_rows = [_stats(name, groups[name], deal_scores, ref_scores, wins, met, hand, position, rating)
                 for name, rating in zip(names, spec_ratings)]
    ref_entry = deal_scores[:, groups[reference][0]]
    entry_rows = [_stats(spec, [e], deal_scores, ref_entry, wins, met, hand, position, rating)
                  for e, (spec, rating) in enumerate(zip(specs, ratings(totals, seed)))]
    return deal_scores, spec_rows, entry_rows


def default_reference(specs: Sequence[str]) -> str:
    """The first ``rule`` agent, else the first agent."""
    return next((s for s in specs if s.partition(":")[0] == "rule"), specs[0])


def evaluate(
    rules: Rules,
    agent_specs: Sequence[str],
    deals: int,
    seed: int,
    permutations: bool = False,
    reference: str | None = None,
    agents: Sequence[Agent] | None = None,
    progress: Callable[[int], object] | None = None,
) -> EvalResult:
    """Play ``deals`` duplicate deals between the agents (one per seat) and summarise the results.

    Agents are built from their specs, each seeded from ``seed`` (the evaluator builds ``oracle`` too, which sees every
    hidden card); pass ``agents`` to evaluate already-built ones (then ``agent_specs`` only names them). Same
    arguments, same result.
    """
    from wizard_env.engine.simulate import derive_seeds  # the seeds `wizard simulate` uses: same seed, same deals

    n = rules.num_players
    specs = [s.strip() for s in agent_specs]
    if len(specs) != n:
        raise ValueError(f"{n} players need {n} agents, got {len(specs)}: {','.join(specs)}")
    if isinstance(deals, bool) or not isinstance(deals, (int, np.integer)) or deals < 1:
        raise ValueError(f"the number of deals must be a positive integer, not {deals!r}")
    reference = default_reference(specs) if reference is None else reference.strip()
    if reference not in specs:
        raise ValueError(f"reference agent {reference!r} is not one of the agents: {', '.join(dict.fromkeys(specs))}")
    deal_seeds, agent_seeds = derive_seeds(seed, deals, n)
    if agents is None:
        agents = [make_agent(spec, agent_seed, sees_hidden=True) for spec, agent_seed in zip(specs, agent_seeds)]
    elif len(agents) != n:
        raise ValueError(f"{n} agent specs but {len(agents)} agents")
    orders = seatings(n, permutations)
    game_seeds = [s for s in deal_seeds for _ in orders]
    table = [[agents[e] for e in order] for _ in deal_seeds for order in orders]
    records = play_games(rules, table, game_seeds, progress)
    deal_scores, spec_rows, entry_rows = summarise(rules, specs, orders, records, reference, seed)
    return EvalResult(rules, specs, seed, permutations, reference, deal_seeds, agent_seeds, orders, records,
                      deal_scores, spec_rows, entry_rows)
