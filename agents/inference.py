"""Inference for search: weigh determinized worlds by how likely the bids seen are in each (no RL imports).

``determinize`` deals the hidden cards uniformly among the deals consistent with the cards seen and the
voids; it ignores the bids, yet a seat that bid 3 of 4 tricks likely holds Wizards or high trumps.
``BidInference`` corrects that by sampling importance resampling: ``search_values`` draws
``oversample`` times the worlds it needs, this module gives each world the likelihood of the bids the
observer sees under a bid model, and ``samples`` worlds are drawn from them, with replacement, in
proportion to it (with the search's own generator). A world drawn twice is played out once and counts
twice in the mean. The draws are independent (``resample="multinomial"``, the default) or systematic
(``"systematic"``: one uniform offset, then ``samples`` evenly spaced points over the cumulative
chances), which keeps each world's count within one of its expected count, so fewer likely worlds are
left out or kept many times by chance.

The bid model is a judgement of each legal bid's round score in points: by default RuleAgent's own
(``rule_features.action_features``: each bid's expected round score, from ``rule_bid``'s chances of the
cards in hand), or with ``model`` a network's (``PPOAgent.logits``, the value a value-trained network
gives each bid, in points: logits over ``VALUE_UNIT``). A seat bids ``b`` with chance proportional to
``exp(score(b) / temperature)`` over its legal bids, mixed with ``FLOOR`` of the uniform choice so that
no bid is impossible (a seat that bids unlike the model only flattens the weights). A world's
likelihood is the product of that chance over every other seat whose bid the observer sees, each
judged on the hand that world gives it.

Approximations:

- a seat's hand at bidding time is the cards the world gives it now plus those it played this round
  (``bid_time_copies`` rewinds the round: exact for the hand, the turned-up card, trump and the bids
  made before it; the trump a dealer chose after a turned-up Wizard is kept as chosen);
- the bid model is the same, whoever sits there; with RuleAgent's, one-card rounds (which RuleAgent
  estimates from random deals, so its numbers are zeros) carry no weight: every world is as likely there;
- only bids are read, not the cards played (a seat's plays are as informative, and not used), and
  bids the observer cannot see yet (hidden or secret bidding) stay as ``determinize`` drew them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wizard_env.engine.actions import BID_OFFSET, Phase
from wizard_env.engine.batch import WizardBatch
from wizard_env.engine.cards import NO_CARD
from wizard_env.engine.determinize import row_counts
from wizard_env.engine.rules import MAX_HAND_SIZE

from .ppo_agent import SHIPPED, VALUE_UNIT, PPOAgent
from .rule_bid import FEATURES, SCORE_SCALE
from .rule_features import action_features

#: What ``infer=`` may name: the bids seen.
INFERENCES = ("bids",)
#: What ``model=`` may name: RuleAgent's judgement, or a value-trained network (not ``net-bid``, alias ``ppo-bid``, whose
#: logits are no values in points).
MODELS = ("rule", *(name for name in SHIPPED if name not in ("net-bid", "ppo-bid")))
DEFAULT_OVERSAMPLE = 4
#: Worlds drawn for each one kept by the search targets of ``wizard train-values --search-infer`` (and ``search``'s
#: ``over=8``); a run's expert (``eval-iterations --expert-games``) draws as many.
INFER_OVERSAMPLE = 8
#: Points of expected score that make a bid e times likelier than another (round scores step by 10 a trick).
DEFAULT_TEMPERATURE = 10.0
#: How the kept worlds are drawn from the likelihoods: independently, or at evenly spaced points.
RESAMPLINGS = ("multinomial", "systematic")
#: Share of the uniform choice over the legal bids in the bid model.
FLOOR = 0.05
_BIDS = slice(BID_OFFSET, BID_OFFSET + MAX_HAND_SIZE + 1)


@dataclass(frozen=True)
class BidInference:
    """Resampling of determinized worlds by the likelihood of the bids the observer sees (see the module)."""

    oversample: int = DEFAULT_OVERSAMPLE  #: worlds drawn per world kept
    temperature: float = DEFAULT_TEMPERATURE  #: of the bid model, in points of expected score
    #: The network whose bid values are the bid model (a value-trained ``PPOAgent``), or None for RuleAgent's.
    model: PPOAgent | None = None
    resample: str = "multinomial"  #: one of RESAMPLINGS

    def __post_init__(self) -> None:
        over, temp = self.oversample, self.temperature
        if isinstance(over, (bool, np.bool_)) or not isinstance(over, (int, np.integer)) or over < 1:
            raise ValueError(f"oversample must be a positive integer, not {over!r}")
        if isinstance(temp, (bool, np.bool_)) or not isinstance(temp, (int, float, np.number)) or not 0 < temp < np.inf:
            raise ValueError(f"temperature must be a positive number, not {temp!r}")
        if self.resample not in RESAMPLINGS:
            raise ValueError(f"resample must be {' or '.join(RESAMPLINGS)}, not {self.resample!r}")

    def select(self, worlds: WizardBatch, observers: np.ndarray, samples: int,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """The worlds kept and their weights: of ``worlds`` (``samples * oversample`` a game, as ``determinize``
        lays them out, ``observers`` [games]), rows drawn by likelihood (ascending, distinct) and the share of
        the ``samples`` draws of its game each row took."""
        group = samples * self.oversample
        seats = np.repeat(np.asarray(observers, dtype=np.int64), group)
        log_w = bid_log_likelihoods(worlds, seats, self.temperature, self.model).reshape(-1, group)
        log_w = np.where(np.isfinite(log_w).any(axis=1, keepdims=True), log_w, 0.0)  # no world fits: all alike
        chances = np.exp(log_w - log_w.max(axis=1, keepdims=True))
        chances /= chances.sum(axis=1, keepdims=True)
        if self.resample == "systematic":
            edges = np.cumsum(chances, axis=1)
            edges[:, -1] = 1.0  # rounding: the last point always falls inside
            points = (rng.random((len(chances), 1)) + np.arange(samples)) / samples
            drawn = np.stack([np.searchsorted(e, p, side="right") for e, p in zip(edges, points)])
        else:
            drawn = np.stack([rng.choice(group, samples, p=p) for p in chances])
        counts = row_counts(drawn, group).ravel()
        rows = np.flatnonzero(counts)
        return rows, counts[rows] / samples


def bid_time_copies(batch: WizardBatch, games: np.ndarray, seats: np.ndarray) -> WizardBatch:
    """Copies of ``games`` rewound to the moment ``seats[i]`` bid in the current round (copy i is game i).

    Each seat gets back the cards it has played this round, the tricks, voids and trick in play are
    cleared, and the bids of the seats from ``seats[i]`` on in bidding order are unmade; the phase is
    BID with ``seats[i]`` to act. Trump, the turned-up card, hands sizes, scores and dealer are kept.
    """
    games, seats = np.asarray(games, dtype=np.int64), np.asarray(seats, dtype=np.int64)
    unique, counts = np.unique(games, return_counts=True)  # copy_games takes each game once, with a count
    new = batch.copy_games(unique, counts)  # in ascending order of the games
    if (np.diff(games) < 0).any():
        new = new.copy_games(np.argsort(np.argsort(games, kind="stable"), kind="stable"))  # in the order of ``games``
    seats = seats.astype(new.current.dtype)
    n = batch.num_players
    new.hands += new.played
    new.played[:] = 0
    new.trick[:] = NO_CARD
    new.trick_len[:] = 0
    new.voids[:] = 0
    new.last_trick[:] = NO_CARD
    new.last_winner[:] = -1
    new.tricks_won[:] = 0
    new.leader[:] = (new.dealer + 1) % n
    position = (np.arange(n)[None, :] - new.dealer[:, None].astype(np.int64) - 1) % n  # bidding order of each seat
    mine = (seats.astype(np.int64) - new.dealer.astype(np.int64) - 1) % n
    new.bids[position >= mine[:, None]] = -1
    new.phase[:] = int(Phase.BID)
    new.current[:] = seats
    new.mask_stale[:] = True
    return new


def bid_chances(observations: np.ndarray, masks: np.ndarray, temperature: float,
                model: PPOAgent | None = None) -> np.ndarray:
    """float64 [k, MAX_HAND_SIZE + 1]: the bid model's chance of each bid from bid-time ``observations`` and
    legal ``masks`` (zero for illegal bids): softmax of each bid's score in points over ``temperature`` (RuleAgent's
    expected scores, or ``model``'s values), mixed with FLOOR of the uniform choice."""
    if model is None:
        numbers = action_features(observations, masks).reshape(len(observations), FEATURES, -1)
        scores = numbers[:, 1, _BIDS].astype(np.float64) / SCORE_SCALE
    else:
        scores = model.logits(observations, masks)[:, _BIDS].astype(np.float64) / VALUE_UNIT
    legal = masks[:, _BIDS] != 0
    logits = np.where(legal, scores / temperature, -np.inf)
    top = logits.max(axis=1, keepdims=True)
    soft = np.where(legal, np.exp(logits - np.where(np.isfinite(top), top, 0)), 0.0)
    count = np.maximum(legal.sum(axis=1, keepdims=True), 1)  # a row with no legal bid: all zeros
    return (1 - FLOOR) * soft / np.maximum(soft.sum(axis=1, keepdims=True), 1e-300) + FLOOR * legal / count


def bid_log_likelihoods(worlds: WizardBatch, observers: np.ndarray, temperature: float = DEFAULT_TEMPERATURE,
                        model: PPOAgent | None = None) -> np.ndarray:
    """float64 [worlds.batch_size]: the log chance under the bid model (RuleAgent's, or ``model``'s) of the bids
    ``observers[w]`` sees the other seats make in world w (0 where it sees none), each bid judged on the hand the world
    gives that seat."""
    observers = np.asarray(observers, dtype=np.int64)
    visible = worlds.bids_visible(None, observers) & (worlds.bids >= 0)
    visible[np.arange(worlds.batch_size), observers] = False
    rows, seats = np.nonzero(visible)
    log_l = np.zeros(worlds.batch_size)
    if rows.size:
        copies = bid_time_copies(worlds, rows, seats)
        chances = bid_chances(copies.observe(copies.all_games, seats), copies.legal_masks(), temperature, model)
        made = worlds.bids[rows, seats].astype(np.int64)
        with np.errstate(divide="ignore"):
            np.add.at(log_l, rows, np.log(chances[np.arange(rows.size), made]))
    return log_l
