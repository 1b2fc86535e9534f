"""RuleAgent's trump choice and bids.

Every card in hand gets a chance of taking a trick, estimated from the cards it cannot see (how
many higher cards of its suit are likely in other hands, how likely an opponent can trump it); the
odds of those chances are scaled so that all hands together expect as many tricks as are dealt,
then towards what the bids already made leave over, and the bid is the legal value with the best
expected score. One-card rounds are estimated from sampled deals, foresight rounds exactly.

The per-row work is compiled (numba). The exponentials and powers are numpy's own (``np.exp``,
``np.power`` on whole arrays), which ``hand_chances`` takes between its kernels: numpy's are not
libm's on every machine (SIMD versions differ in the last bit), and the bids must not change.
"""

from __future__ import annotations

import numba
import numpy as np

from wizard_env.engine.cards import COPIES_OF_SPECIAL, NO_CARD, NO_SUIT, NUM_CARD_TYPES, NUM_RANKS, NUM_SUITED, NUM_SUITS, WIZARD
from wizard_env.engine.actions import BID_OFFSET
from wizard_env.engine.rules import MAX_HAND_SIZE, round_score

from .rule_view import SUIT_OF, View, above_in_suit, pairwise_sum, read_view, trick_winner

#: Chance that a Wizard in hand takes a trick (it loses only to an earlier Wizard in the same trick).
WIZARD_CHANCE = 0.95
#: Chance of taking a trick for a trump, an off-trump card and a card of a no-trump round with no
#: higher card of its suit in other hands; each higher card expected there cuts it by the decay, and
#: each higher card I have not seen cuts a card that is not trump by SIDE_RANK_DECAY as well.
#: Calibrated on 3-player self-play; the odds scaling of ``hand_chances`` fixes the overall level.
TRUMP_TOP, TRUMP_DECAY = 1.0, 0.15
SIDE_TOP, SIDE_DECAY, SIDE_RANK_DECAY = 0.6, 0.3, 0.1
NO_TRUMP_TOP = 0.65
#: Weight of the tricks the others' known bids leave over, against my own estimate, and the most
#: tricks those bids may move the estimate by (so that wild bids do not mislead).
BIDS_SEEN_WEIGHT, BIDS_SEEN_REACH = 0.7, 1.0
#: Largest chance of a trick any single card is given.
MAX_CHANCE = 0.98
#: Deals of the others' cards sampled to estimate a one-card round.
ONE_CARD_SAMPLES = 200
#: Weight of a high card when the dealer names trump (per rank above ten).
TRUMP_HIGH_CARD_WEIGHT = 0.5
#: Bisection steps that find an odds factor.
ODDS_STEPS = 30
#: RuleAgent's numbers per action (``rule_features``): a card's chance of holding the trick and its strength, a bid's
#: chance of being met exactly and its expected score.
FEATURES = 2
#: Scale of a bid's expected score among those numbers (scores run to a few hundred points).
SCORE_SCALE = 0.01

#: Suited cards in the order the estimate lists a hand: by suit, highest rank first.
_HAND_ORDER = np.array([s * NUM_RANKS + r for s in range(NUM_SUITS) for r in reversed(range(NUM_RANKS))])
_MOST_CHANCES = COPIES_OF_SPECIAL + MAX_HAND_SIZE
#: [tricks taken, bid]: the round's score.
_SCORES = np.array([[round_score(b, t) for b in range(MAX_HAND_SIZE + 1)] for t in range(_MOST_CHANCES + 1)], dtype=np.float64)
_HIGH_CARD = np.maximum(0, np.arange(NUM_RANKS) - 8)  # ranks above ten: J 1, Q 2, K 3, A 4


@numba.njit(cache=True)
def one_card_row(v: View) -> bool:
    """Whether a bid is estimated from sampled deals: one card in a hand I can see."""
    return v.hand_size == 1 and v.hand.sum() > 0


@numba.njit(cache=True)
def choose_trump(v: View) -> int:
    """Suit (0..3) to name as trump: where the hand is strongest, length plus weight for cards above ten.

    With no card in view (a foresight round) it is the suit my unseen card most likely wins in.
    """
    strength = np.zeros(NUM_SUITS)
    for suit in range(NUM_SUITS):
        if v.hand.sum() == 0:
            strength[suit] = foresight_chance(v, suit)
        else:
            length, high = 0, 0
            for rank in range(NUM_RANKS):
                length += v.hand[suit * NUM_RANKS + rank]
                high += v.hand[suit * NUM_RANKS + rank] * _HIGH_CARD[rank]
            strength[suit] = length + TRUMP_HIGH_CARD_WEIGHT * high
    return int(np.argmax(strength))


@numba.njit(cache=True)
def trick_distribution(chances: np.ndarray) -> np.ndarray:
    """[len(chances) + 1]: the chance of taking each number of tricks when each card wins independently with its chance."""
    m = len(chances)
    dist = np.zeros(m + 1)
    dist[0] = 1.0
    for j in range(m):
        p = chances[j]
        for tricks in range(j + 1, 0, -1):
            dist[tricks] = dist[tricks] * (1 - p) + dist[tricks - 1] * p
        dist[0] = dist[0] * (1 - p)
    return dist


@numba.njit(cache=True)
def expected_score(dist: np.ndarray, bid: int) -> float:
    """The expected round score of ``bid`` when the tricks taken follow ``dist`` (``trick_distribution``)."""
    expected = 0.0
    for tricks in range(len(dist)):  # trick by trick, as always summed: equal scores stay equal to the bit
        expected += dist[tricks] * _SCORES[tricks, bid]
    return expected


@numba.njit(cache=True)
def best_bid(chances: np.ndarray, legal: np.ndarray) -> int:
    """Legal bid (``legal`` [21]) with the best expected score when each card wins independently with its chance."""
    dist = trick_distribution(chances)
    best, top = 0, -np.inf
    for bid in range(MAX_HAND_SIZE + 1):
        expected = expected_score(dist, bid)
        if legal[bid] and expected > top:
            best, top = bid, expected
    return best


@numba.njit(cache=True)
def bid_features(chances: np.ndarray, legal: np.ndarray, out: np.ndarray) -> None:
    """Each legal bid's chance of being met exactly and its expected score, into ``out`` [FEATURES, NUM_ACTIONS]."""
    dist = trick_distribution(chances)
    for bid in range(MAX_HAND_SIZE + 1):
        if legal[BID_OFFSET + bid]:
            out[0, BID_OFFSET + bid] = dist[bid] if bid < len(dist) else 0.0
            out[1, BID_OFFSET + bid] = expected_score(dist, bid) * SCORE_SCALE


@numba.njit(cache=True)
def judge_bids(observations: np.ndarray, legal: np.ndarray, rows: np.ndarray, mine: np.ndarray, counts: np.ndarray,
               layout: tuple, out: np.ndarray) -> None:
    """Fill ``out`` [k, FEATURES, NUM_ACTIONS] for the bids of ``rows`` from the chances of their cards in hand
    (``hand_chances``: ``mine``, ``counts``), the Wizards first, as RuleAgent bids."""
    for i in range(len(rows)):
        wizards = read_view(observations, rows[i], layout).hand[WIZARD]
        bid_features(hand_trick_chances(wizards, mine[i], counts[i]), legal[rows[i]], out[rows[i]])


@numba.njit(cache=True)
def hand_trick_chances(wizards: int, mine: np.ndarray, count: int) -> np.ndarray:
    """The chance of a trick for every card in a hand, as RuleAgent bids from them: ``wizards`` Wizards first, then
    the ``count`` suited cards' chances ``mine`` (a row of ``hand_chances``), each capped at MAX_CHANCE."""
    chances = np.full(wizards + count, WIZARD_CHANCE)
    chances[wizards:] = np.minimum(mine[:count], MAX_CHANCE)
    return chances


@numba.njit(cache=True)
def foresight_chance(v: View, trump: int) -> float:
    """Chance that my unseen card wins a one-card round with trump ``trump``, given the others' visible cards."""
    n = v.n
    order = (v.dealer + 1 + np.arange(n)) % n  # slots in play order
    trick = np.empty(n, dtype=np.int64)
    wins = 0
    for card in range(NUM_CARD_TYPES):  # a candidate for my card sits in every slot whose card I cannot see
        for j in range(n):
            trick[j] = card if v.visible[order[j]] == NO_CARD else v.visible[order[j]]
        if order[trick_winner(trick, trump)] == 0:
            wins += v.unseen[card]
    return wins / max(1, v.pool)


@numba.njit(cache=True)
def one_card_chance(v: View, uniforms: np.ndarray) -> float:
    """Chance that my single card wins a one-card round, over sampled cards of the others.

    Each sample deals n - 1 distinct cards of the unseen pool to the others, uniformly at random
    (``uniforms`` [samples, >= n - 1] in [0, 1) drive the draws).
    """
    n = v.n
    pool = np.repeat(np.arange(NUM_CARD_TYPES), v.unseen)  # unseen cards, listed card type by card type
    me = (n - 1 - v.dealer) % n  # my place in play order
    mine = np.argmax(v.hand == 1)
    taken = np.empty(n, dtype=np.int64)  # positions dealt so far, ascending
    trick = np.empty(n, dtype=np.int64)
    wins = 0
    for sample in range(len(uniforms)):
        for t in range(n - 1):
            # The t-th draw takes the pick-th position not yet taken, stepping over the taken ones.
            pick = int(uniforms[sample, t] * (v.pool - t))
            at = t
            for i in range(t):
                if pick >= taken[i]:
                    pick += 1
                elif at == t:
                    at = i
            taken[at + 1 : t + 1] = taken[at:t].copy()
            taken[at] = pick
            trick[t if t < me else t + 1] = pool[pick]
        trick[me] = mine
        wins += trick_winner(trick, v.trump) == me
    return wins / len(uniforms)


# -- the estimate of a hand of several cards --------------------------------------------------------

@numba.njit(cache=True)
def power_inputs(obs: np.ndarray, rows: np.ndarray, layout: tuple, tables: tuple) -> tuple:
    """The inputs of numpy's exponentials and powers for rows ``rows``: ([m, 2, 52] the exponents of
    ``card_chance``, [m, 4, 13] the bases of ``not_ruffed`` and [m, 4, 13] their powers, n - 1)."""
    m = len(rows)
    exponents = np.zeros((m, 2, NUM_SUITED))
    bases, powers = np.zeros((m, NUM_SUITS, NUM_RANKS)), np.zeros((m, NUM_SUITS, NUM_RANKS))
    for i in range(m):
        v = read_view(obs, rows[i], layout)
        held_above, higher = facing(v)
        for c in range(NUM_SUITED):
            exponents[i, 0, c] = -TRUMP_DECAY * held_above[c]
            exponents[i, 1, c] = -SIDE_DECAY * held_above[c] - SIDE_RANK_DECAY * higher[c]
        bases[i] = not_ruffed_bases(v, tables)
        powers[i] = v.n - 1
    return exponents, bases, powers


@numba.njit(cache=True)
def facing(v: View) -> tuple:
    """[52] the higher cards of each suited card's suit expected in the hands facing it, and [52] those not seen.

    A card in hand faces the others; an unseen card faces my hand and one hand fewer of the others.
    """
    size, opponents, pool = v.hand_size, v.n - 1, max(1, v.pool)
    my_higher = above_in_suit(v.hand)
    held_above, higher = np.zeros(NUM_SUITED), np.zeros(NUM_SUITED, dtype=np.int64)
    for c in range(NUM_SUITED):
        if v.hand[c] > 0:
            held_above[c] = v.higher[c] * size * opponents / pool
            higher[c] = v.higher[c]
        else:
            held_above[c] = my_higher[c] + v.higher[c] * size * (opponents - 1) / pool
            higher[c] = v.higher[c] + my_higher[c]
    return held_above, higher


@numba.njit(cache=True)
def not_ruffed_bases(v: View, tables: tuple) -> np.ndarray:
    """[suit, depth]: chance that one opponent does not trump my card of an off-trump suit that has
    ``depth`` cards of its suit above it in my hand (0 .. 12); all n - 1 of them: its power n - 1."""
    none, at_most = tables
    size, pool = v.hand_size, max(1, v.pool)
    trumps = v.suit_unseen[v.trump]  # the last entry, 0, with no trump
    base = np.empty((NUM_SUITS, NUM_RANKS))
    for suit in range(NUM_SUITS):
        in_suit = v.suit_unseen[suit]
        has_trump = 1 - none[pool - in_suit, trumps, size]
        for depth in range(NUM_RANKS):
            base[suit, depth] = 1 - at_most[pool, in_suit, size, depth] * has_trump
    return base


@numba.njit(cache=True)
def suited_chances(obs: np.ndarray, rows: np.ndarray, layout: tuple, exps: np.ndarray, spared: np.ndarray) -> tuple:
    """For rows ``rows``: [m, 52] each suited card's chance to take a trick (0 for a card I know is out
    of play), [m, 52] its weight in the tricks all hands expect, and [m] those tricks less the Wizards'.

    ``exps`` and ``spared`` are numpy's exponentials and powers of ``power_inputs``.
    """
    m = len(rows)
    chances, weights, totals = np.zeros((m, NUM_SUITED)), np.zeros((m, NUM_SUITED)), np.zeros(m)
    for i in range(m):
        v = read_view(obs, rows[i], layout)
        size = v.hand_size
        in_other_hands = size * (v.n - 1) / max(1, v.pool)
        my_higher = above_in_suit(v.hand)
        for c in range(NUM_SUITED):
            held = v.hand[c] > 0
            suit = c // NUM_RANKS
            if held or v.unseen[c] > 0:
                not_ruffed = spared[i, suit, my_higher[c]] if held else spared[i, suit, 0]
                if SUIT_OF[c] == v.trump:
                    chance = TRUMP_TOP * exps[i, 0, c]
                elif v.trump == NO_SUIT:
                    chance = NO_TRUMP_TOP * exps[i, 1, c]
                else:
                    chance = SIDE_TOP * not_ruffed * exps[i, 1, c]
                chances[i, c] = min(chance, MAX_CHANCE)
            weights[i, c] = 1.0 if held else in_other_hands * v.unseen[c]
        wizards = WIZARD_CHANCE * v.hand[WIZARD]
        their_wizards = WIZARD_CHANCE * v.unseen[WIZARD] * in_other_hands
        totals[i] = max(0.0, size - wizards - their_wizards)
    return chances, weights, totals


@numba.njit(cache=True)
def odds_points(low: np.ndarray, width: float, parts: int) -> np.ndarray:
    """[m, parts - 1]: the points low + width * (1 .. parts - 1) of each row (dyadic: exactly the bisection's midpoints)."""
    points = np.empty((len(low), parts - 1))
    for i in range(len(low)):
        for j in range(parts - 1):
            points[i, j] = low[i] + width * (j + 1)
    return points


@numba.njit(cache=True)
def odds_step(exps: np.ndarray, chances: np.ndarray, weights: np.ndarray, counts: np.ndarray, totals: np.ndarray,
              low: np.ndarray, width: float) -> np.ndarray:
    """One round of the bisection: move each row's ``low`` up by ``width`` for every factor of ``exps`` [m, p]
    (numpy's exp of its points) that leaves its weighted chances (the first ``counts``) below its total, that
    is sum(weight * f c / (1 - c + f c)) < total summed as numpy sums; returns the next round's points."""
    m, width_next = len(low), width / (exps.shape[1] + 1)
    terms = np.empty(chances.shape[1])
    for i in range(m):
        below = 0
        for point in range(exps.shape[1]):
            for j in range(counts[i]):
                win = exps[i, point] * chances[i, j]
                terms[j] = weights[i, j] * (win / ((1 - chances[i, j]) + win))
            below += pairwise_sum(terms, counts[i]) < totals[i]
        low[i] = low[i] + width * below
    return odds_points(low, width_next, exps.shape[1] + 1)


def odds_factor(chances: np.ndarray, weights: np.ndarray, counts: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """[m]: the odds factor that makes each row's weighted chances (its first ``counts``) add up to its ``total``.

    Bisection of the log factor over [-8, 8] in ODDS_STEPS halvings. For a few rows, several halvings
    are taken at once: the points they would visit are all tried in one go, which finds the same
    interval in fewer calls of numpy's exp.
    """
    bits = 5 if len(totals) <= 4 else 3 if len(totals) <= 16 else 1  # each divides ODDS_STEPS
    parts, low, width = 1 << bits, np.full(len(totals), -8.0), 16.0
    points = odds_points(low, width / parts, parts)
    for _ in range(ODDS_STEPS // bits):
        width /= parts
        points = odds_step(np.exp(points), chances, weights, counts, totals, low, width)
    return np.exp(low + width / 2)


@numba.njit(cache=True)
def in_hand(obs: np.ndarray, rows: np.ndarray, layout: tuple, chances: np.ndarray, factor: np.ndarray) -> tuple:
    """The chances [m, 52] with their odds scaled by ``factor`` [m] (``odds_scaled``), those of my cards
    in hand order [m, MAX_HAND_SIZE] left-aligned, their count [m], and the tricks they should add up to
    where the others' known bids move the estimate ([m], -1 elsewhere), as ``hand_chances`` describes."""
    m = len(rows)
    mine, counts, totals = np.zeros((m, MAX_HAND_SIZE)), np.zeros(m, dtype=np.int64), np.full(m, -1.0)
    for i in range(m):
        v = read_view(obs, rows[i], layout)
        for c in _HAND_ORDER:
            if v.hand[c] > 0:
                mine[i, counts[i]] = odds_scaled(chances[i, c], factor[i])
                counts[i] += 1
        size, opponents = v.hand_size, v.n - 1
        known, bids_left = 0, size
        for slot in range(1, v.n):
            if v.bids[slot] >= 0:
                known += 1
                bids_left -= v.bids[slot]
        if known == 0 or counts[i] == 0:
            continue
        wizards = WIZARD_CHANCE * v.hand[WIZARD]
        expected = wizards + pairwise_sum(mine[i], counts[i])
        unknown = (size - expected) * (opponents - known) / opponents
        shift = min(max(bids_left - unknown - expected, -BIDS_SEEN_REACH), BIDS_SEEN_REACH)
        target = min(max(expected + BIDS_SEEN_WEIGHT * shift, 0), size)
        totals[i] = max(0.0, target - wizards)
    return mine, counts, totals


@numba.njit(cache=True)
def odds_scaled(chance: float, factor: float) -> float:
    """A chance with its odds multiplied by ``factor``: sure cards stay nearly sure, the rest move most."""
    return factor * chance / (1 - chance + factor * chance)


@numba.njit(cache=True)
def rescaled(mine: np.ndarray, counts: np.ndarray, rows: np.ndarray, factor: np.ndarray) -> None:
    """Scale the odds of mine[rows[i], :counts] by factor[i], in place."""
    for i in range(len(rows)):
        for j in range(counts[rows[i]]):
            mine[rows[i], j] = odds_scaled(mine[rows[i], j], factor[i])


def hand_chances(obs: np.ndarray, rows: np.ndarray, layout: tuple, tables: tuple) -> tuple[np.ndarray, np.ndarray]:
    """[m, MAX_HAND_SIZE] the chances of the suited cards in hand of rows ``rows`` (in hand order,
    left-aligned) and [m] their count: scaled so that all hands together expect the tricks dealt, then
    towards the tricks the others' known bids leave over. Each row is estimated as if it were alone."""
    exponents, bases, powers = power_inputs(obs, rows, layout, tables)
    chances, weights, totals = suited_chances(obs, rows, layout, np.exp(exponents), np.power(bases, powers))
    factor = odds_factor(chances, weights, np.full(len(rows), NUM_SUITED), totals)
    mine, counts, totals = in_hand(obs, rows, layout, chances, factor)
    moved = np.flatnonzero(totals >= 0)
    if moved.size:
        again = odds_factor(mine[moved], np.ones((moved.size, MAX_HAND_SIZE)), counts[moved], totals[moved])
        rescaled(mine, counts, moved, again)
    return mine, counts
