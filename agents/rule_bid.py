"""RuleAgent's trump choice and bids, for a batch of decisions at once.

Every card in hand gets a chance of taking a trick, estimated from the cards it cannot see (how
many higher cards of its suit are likely in other hands, how likely an opponent can trump it); the
odds of those chances are scaled so that all hands together expect as many tricks as are dealt,
then towards what the bids already made leave over, and the bid is the legal value with the best
expected score. One-card rounds are estimated from sampled deals, foresight rounds exactly.
"""

from __future__ import annotations

import numpy as np

from wizard_env.cards import COPIES_OF_SPECIAL, NO_CARD, NO_SUIT, NUM_CARD_TYPES, NUM_RANKS, NUM_SUITED, NUM_SUITS, WIZARD
from wizard_env.rules import MAX_HAND_SIZE, round_score

from .rule_view import SUIT_OF, Views, above_in_suit, at_most_chance, none_chance, play_order, trick_winners

#: Chance that a Wizard in hand takes a trick (it loses only to an earlier Wizard in the same trick).
WIZARD_CHANCE = 0.95
#: Chance of taking a trick for a trump, an off-trump card and a card of a no-trump round with no
#: higher card of its suit in other hands; each higher card expected there cuts it by the decay, and
#: each higher card I have not seen cuts a card that is not trump by SIDE_RANK_DECAY as well.
#: Calibrated on 3-player self-play; the odds scaling of ``normalised_chances`` fixes the overall level.
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

#: Suited cards in the order the estimate lists a hand: by suit, highest rank first.
_HAND_ORDER = np.array([s * NUM_RANKS + r for s in range(NUM_SUITS) for r in reversed(range(NUM_RANKS))])
_MOST_CHANCES = COPIES_OF_SPECIAL + MAX_HAND_SIZE
#: [tricks taken, bid]: the round's score.
_SCORES = np.array([[round_score(b, t) for b in range(MAX_HAND_SIZE + 1)] for t in range(_MOST_CHANCES + 1)], dtype=np.float64)
_HIGH_CARD = np.maximum(0, np.arange(NUM_RANKS) - 8)  # ranks above ten: J 1, Q 2, K 3, A 4


def one_card_rows(v: Views) -> np.ndarray:
    """Bids that are estimated from sampled deals: one card in a hand I can see."""
    return (v.hand_size == 1) & v.hand.any(axis=1)


def choose_trumps(v: Views) -> np.ndarray:
    """Suit (0..3) to name as trump: where the hand is strongest, length plus weight for cards above ten.

    With no card in view (a foresight round) it is the suit my unseen card most likely wins in.
    """
    by_suit = v.hand[:, :NUM_SUITED].reshape(-1, NUM_SUITS, NUM_RANKS)
    strength = by_suit.sum(axis=2) + TRUMP_HIGH_CARD_WEIGHT * (by_suit * _HIGH_CARD).sum(axis=2)
    blind = np.flatnonzero(~v.hand.any(axis=1))
    if blind.size:
        b = v.rows(blind)
        strength[blind] = np.stack([foresight_chance(b, np.full(blind.size, suit)) for suit in range(NUM_SUITS)], axis=1)
    return strength.argmax(axis=1)


def choose_bids(v: Views, legal: np.ndarray, uniforms: np.ndarray | None) -> np.ndarray:
    """The legal bid (``legal`` [k, 21]) with the best expected score under each estimated trick distribution.

    ``uniforms`` [rows of ``one_card_rows``, ONE_CARD_SAMPLES, >= n - 1]: the draws of the sampled deals.
    """
    bids = np.zeros(len(v.phase), dtype=np.int64)
    blind = ~v.hand.any(axis=1)
    single = one_card_rows(v)
    for rows, chances in (
        (blind, lambda b: foresight_chance(b, b.trump)[:, None]),
        (single, lambda b: one_card_chance(b, uniforms)[:, None]),
        (~blind & ~single, normalised_chances),
    ):
        rows = np.flatnonzero(rows)
        if rows.size:
            bids[rows] = best_bids(chances(v.rows(rows)), legal[rows])
    return bids


def best_bids(chances: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Legal bid with the best expected score when each card wins independently with its chance [k, m]."""
    k, m = chances.shape
    dist = np.zeros((k, m + 1))  # distribution of the number of tricks taken
    dist[:, 0] = 1.0
    for j in range(m):
        p = chances[:, j : j + 1]
        spread = dist * (1 - p)
        spread[:, 1:] += dist[:, :-1] * p
        dist = spread
    expected = np.zeros((k, MAX_HAND_SIZE + 1))
    for tricks in range(m + 1):  # trick by trick, as always summed: equal scores stay equal to the bit
        expected += dist[:, tricks : tricks + 1] * _SCORES[tricks]
    return np.where(legal, expected, -np.inf).argmax(axis=1)


def foresight_chance(v: Views, trump: np.ndarray) -> np.ndarray:
    """Chance that my unseen card wins a one-card round with trump ``trump``, given the others' visible cards."""
    n = v.num_players
    order = play_order(v.dealer, n)
    # A candidate for my card sits in every slot whose card I cannot see (mine, at least).
    slots = np.where(v.visible[:, None, :] != NO_CARD, v.visible[:, None, :], np.arange(NUM_CARD_TYPES)[None, :, None])
    tricks = np.take_along_axis(slots, np.broadcast_to(order[:, None, :], slots.shape), axis=2)
    winner = trick_winners(tricks, trump[:, None])
    mine = np.take_along_axis(order, winner, axis=1) == 0
    return (v.unseen * mine).sum(axis=1) / np.maximum(1, v.pool)


def one_card_chance(v: Views, uniforms: np.ndarray) -> np.ndarray:
    """Chance that my single card wins a one-card round, over sampled cards of the others.

    Each sample deals n - 1 distinct cards of the unseen pool to the others, uniformly at random
    (``uniforms`` [k, samples, >= n - 1] in [0, 1) drive the draws).
    """
    n, k = v.num_players, len(v.phase)
    # Positions in the pool, listed card type by card type: the t-th draw takes the pick-th position
    # not yet taken, stepping over the taken ones (kept in ascending order).
    start = np.cumsum(v.pool) - v.pool
    pool = np.repeat(np.tile(np.arange(NUM_CARD_TYPES), k), v.unseen.ravel())
    dealt, taken = [], []
    for t in range(n - 1):
        pick = (uniforms[:, :, t] * (v.pool[:, None] - t)).astype(np.int64)
        for low in taken:
            pick += pick >= low
        dealt.append(pool[start[:, None] + pick])
        ascending = []
        for low in taken:
            ascending.append(np.minimum(low, pick))
            pick = np.maximum(low, pick)
        taken = ascending + [pick]
    # The trick in play order: my card where I sit, the dealt cards in the other places.
    me = ((n - 1 - v.dealer) % n)[:, None]
    mine = (v.hand == 1).argmax(axis=1)[:, None]
    places = [np.where(j < me, dealt[min(j, n - 2)], dealt[max(j - 1, 0)]) for j in range(n)]
    tricks = np.stack([np.where(me == j, mine, place) for j, place in enumerate(places)], axis=2)
    wins = (trick_winners(tricks, v.trump[:, None]) == me).sum(axis=1)
    return wins / uniforms.shape[1]


def normalised_chances(v: Views) -> np.ndarray:
    """[k, m] chances of my cards taking a trick, Wizards first, then the suited ones scaled so that all
    hands together expect the tricks dealt, then towards the tricks the others' known bids leave over."""
    size, opponents = v.hand_size, v.num_players - 1
    in_other_hands = size * opponents / np.maximum(1, v.pool)
    wizards = WIZARD_CHANCE * v.hand[:, WIZARD]
    their_wizards = WIZARD_CHANCE * v.unseen[:, WIZARD] * in_other_hands
    held, out = v.hand[:, :NUM_SUITED] > 0, v.unseen[:, :NUM_SUITED] > 0
    chances = np.where(held | out, suited_chances(v), 0.0)
    weights = np.where(held, 1.0, in_other_hands[:, None] * v.unseen[:, :NUM_SUITED])
    factor = odds_factor(chances, weights, np.maximum(0.0, size - wizards - their_wizards))
    scaled = odds_scaled(chances, factor[:, None])

    # My cards in hand order, left-aligned.
    count = held.sum(axis=1)
    width = int(count.max(initial=0))
    first = np.argsort(~held[:, _HAND_ORDER], axis=1, kind="stable")[:, :width]
    valid = np.arange(width) < count[:, None]
    mine = np.where(valid, np.take_along_axis(scaled[:, _HAND_ORDER], first, axis=1), 0.0)

    known = v.bids[:, 1:] >= 0
    moved = np.flatnonzero(known.any(axis=1) & (count > 0))
    if moved.size:
        kn, n_known = known[moved], known[moved].sum(axis=1)
        expected = wizards[moved] + numpy_sum(mine[moved], count[moved])
        unknown = (size[moved] - expected) * (opponents - n_known) / opponents
        bids_left = size[moved] - np.where(kn, v.bids[moved, 1:], 0).sum(axis=1)
        shift = np.clip(bids_left - unknown - expected, -BIDS_SEEN_REACH, BIDS_SEEN_REACH)
        target = np.clip(expected + BIDS_SEEN_WEIGHT * shift, 0, size[moved])
        again = odds_factor(mine[moved], valid[moved].astype(np.float64), np.maximum(0.0, target - wizards[moved]))
        mine[moved] = odds_scaled(mine[moved], again[:, None])
    own_wizards = np.arange(v.hand[:, WIZARD].max(initial=0)) < v.hand[:, WIZARD, None]
    return np.concatenate([np.where(own_wizards, WIZARD_CHANCE, 0.0), np.minimum(mine, MAX_CHANCE)], axis=1)


def suited_chances(v: Views) -> np.ndarray:
    """[k, 52] chance that each suited card takes a trick: in my hand, or unseen (in a hand facing mine)."""
    k, size, opponents = len(v.phase), v.hand_size[:, None], v.num_players - 1
    pool = np.maximum(1, v.pool)[:, None]
    higher, my_higher = v.higher, above_in_suit(v.hand)
    spared = not_ruffed_chances(v)
    held = v.hand[:, :NUM_SUITED] > 0
    # An unseen card faces my hand and one hand fewer of the others, and is the top of its suit there.
    held_above = np.where(held, higher * size * opponents / pool, my_higher + higher * size * (opponents - 1) / pool)
    spared = np.where(
        held,
        np.take_along_axis(spared, my_higher.reshape(k, NUM_SUITS, NUM_RANKS), axis=2).reshape(k, NUM_SUITED),
        np.repeat(spared[:, :, 0], NUM_RANKS, axis=1),
    )
    return np.minimum(card_chances(v, held_above, np.where(held, higher, higher + my_higher), spared), MAX_CHANCE)


def card_chances(v: Views, held_above: np.ndarray, higher: np.ndarray, spared: np.ndarray) -> np.ndarray:
    """[k, 52] chance that each suited card takes a trick, given the higher cards of its suit expected in
    the hands facing it (``held_above``) and not seen (``higher``), and its chance not to be trumped."""
    trump = v.trump[:, None]
    trumps = TRUMP_TOP * np.exp(-TRUMP_DECAY * held_above)
    side = np.exp(-SIDE_DECAY * held_above - SIDE_RANK_DECAY * higher)
    plain = np.where(trump == NO_SUIT, NO_TRUMP_TOP * side, SIDE_TOP * spared * side)
    return np.where(SUIT_OF[:NUM_SUITED] == trump, trumps, plain)


def not_ruffed_chances(v: Views) -> np.ndarray:
    """[k, suit, depth]: chance that no opponent trumps my card of an off-trump suit that has ``depth``
    cards of its suit above it in my hand (0 .. 12)."""
    size, pool = v.hand_size[:, None, None], np.maximum(1, v.pool)[:, None, None]
    in_suit = v.suit_unseen[:, :NUM_SUITS, None]
    trumps = v.suit_unseen[np.arange(len(v.trump)), v.trump][:, None, None]
    short = at_most_chance(pool, in_suit, size, np.arange(NUM_RANKS))
    has_trump = 1 - none_chance(pool - in_suit, trumps, size)
    base = 1 - short * has_trump
    return np.power(base, np.full(base.shape, float(v.num_players - 1)))  # an array exponent: libm's pow


def odds_scaled(chances: np.ndarray, factor: np.ndarray) -> np.ndarray:
    """Chances with their odds multiplied by ``factor``: sure cards stay nearly sure, the rest move most."""
    return factor * chances / (1 - chances + factor * chances)


def odds_factor(chances: np.ndarray, weights: np.ndarray, total: np.ndarray) -> np.ndarray:
    """[k]: the odds factor that makes each row's weighted chances add up to its ``total``.

    Bisection of the log factor over [-8, 8] in ODDS_STEPS halvings. For a few rows, several
    halvings are taken at once: the points they would visit are all tried in one go, which finds
    the same interval in fewer numpy calls.
    """
    low, width = np.full(len(total), -8.0), 16.0
    lose = 1 - chances
    bits = 5 if len(total) <= 4 else 3 if len(total) <= 16 else 1
    steps = ODDS_STEPS
    while steps:
        take = min(bits, steps)
        parts, steps = 1 << take, steps - take
        width /= parts
        points = low[:, None] + width * np.arange(1, parts)  # dyadic, so exactly the bisection's midpoints
        win = np.exp(points)[:, :, None] * chances[:, None, :]
        below = (weights[:, None, :] * (win / (lose[:, None, :] + win))).sum(axis=2) < total[:, None]
        low = low + width * below.sum(axis=1)
    return np.exp(low + width / 2)


def numpy_sum(values: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Sum of the first ``count`` values of each row, added in the order numpy sums a 1-D array
    (one running sum below 8 values, else 8 running sums, paired, then the rest), so equal to the bit."""
    k, width = values.shape
    short = np.full(k, -0.0)
    for i in range(min(width, 7)):
        short = np.where(i < count, short + values[:, i], short)
    if width < 8:
        return short
    lanes = [values[:, j] for j in range(8)]
    blocks = count // 8
    for i in range(8, width):
        lanes[i % 8] = np.where(i < 8 * blocks, lanes[i % 8] + values[:, i], lanes[i % 8])
    total = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))
    for i in range(8, width):
        total = np.where((i >= 8 * blocks) & (i < count), total + values[:, i], total)
    return np.where(count < 8, short, total)
