"""Determinization: copies of games in which everything one seat cannot see is redrawn (no RL imports).

A search player may not look at a ``WizardBatch`` directly: its arrays hold every hand, and the deck
order of every round to come. ``determinize(batch, games, observers, rng)`` returns a new batch of
copies of the games (as ``WizardBatch.copy_games`` makes them) in which:

- everything the observer sees is kept: their own hand (in a foresight round, everyone else's hand
  and not their own), the cards played, the turned-up card, the trump, the visible bids, tricks,
  scores, the trick in play, voids, seats, dealer and phase, so the observer's observation of each
  copy equals their observation of the original;
- the cards they cannot see (the hidden hands and the undealt stack) are dealt again from the cards
  they have not seen, uniformly among the deals consistent with what they saw: every hidden hand
  keeps its card count, and a seat that showed out of a suit this round gets no card of that suit;
- a bid they cannot see yet (hidden or secret bidding) is redrawn uniformly from 0 to the hand size;
- the deck orders of every other round (the rounds to come, and those played) are shuffled anew,
  and the current round's order is rewritten to deal the new hands; ``game_seed`` is -1 (no seed
  deals these cards).

Sampling is exact. The unseen cards are taken as distinct physical cards (the four Wizards apart),
and the target is the uniform distribution over their assignments to the hidden hands and the stack
that respect the voids: a shuffled deck conditioned on what the observer saw. Hidden seats with no
constraining void and the stack take their cards from one shuffled remainder, so only the seats
with a void need care (``_VoidDeals``): the deals are counted class by class (each void suit, and
one class for every other card), each such seat's number of cards of each class is drawn in
proportion to the number of deals that complete it, and its cards uniformly within each class.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .batch import OVER, WizardBatch
from .cards import CARD_SUIT, DECK, DECK_SIZE, NO_CARD, NUM_CARD_TYPES
from .observation import SLICES

#: ``game_seed`` of a determinized game: no seed deals its cards.
NO_SEED = -1
_STACK = -1  # the slot of the undealt stack in a deal plan


def determinize(batch: WizardBatch, games, observers, rng: np.random.Generator, samples: int = 1) -> WizardBatch:
    """A new batch of ``samples`` copies of each of ``games``, redrawn as ``observers[i]`` may believe game ``games[i]`` is.

    Copy ``i * samples + j`` is sample j of game ``games[i]``. Draws only from ``rng``. ValueError for
    games out of range or listed twice, observers not seats, a finished game or samples < 1; nothing changes then.
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, not {type(rng).__name__}")
    if isinstance(samples, (bool, np.bool_)) or not isinstance(samples, (int, np.integer)) or samples < 1:
        raise ValueError(f"samples must be a positive integer, not {samples!r}")
    g = batch._select(np.asarray(games))  # the engine's own checks of game indices and seats
    observers = batch.check_observers(g, observers)
    over = g[batch.phase[g] == OVER] if g.size else g
    if over.size:
        raise ValueError(f"game {int(over[0])} is over: a finished game has nothing hidden to determinize")
    new = batch.copy_games(g, int(samples))  # checks the games are distinct
    visible = batch.bids_visible(g, observers)
    for i, (game, observer) in enumerate(zip(g.tolist(), observers.tolist())):
        rows = np.arange(i * samples, (i + 1) * samples)
        _redraw(batch, new, game, observer, rows, visible[i], rng)
    new.game_seed[:] = NO_SEED
    new.final_seed[:] = NO_SEED
    new.mask_stale[:] = True
    new._seed_rng = np.random.default_rng(rng.integers(2**63))  # not the original's stream of game seeds
    new._bind_kernels()
    return new


def hidden_seats(batch: WizardBatch, game: int, observer: int) -> list[int]:
    """Seats whose hand ``observer`` cannot see in ``game``: the others, or in a foresight round their own."""
    size = batch.hand_sizes[batch.round_index[game]]
    if batch.rules.foresight and size == 1:
        return [observer]
    return [s for s in range(batch.num_players) if s != observer]


def unseen_cards(batch: WizardBatch, game: int, observer: int) -> np.ndarray:
    """Counts [card types] of the cards ``observer`` has not seen: in hidden hands or the undealt stack
    (the observation's ``unseen`` field)."""
    observation = batch.observe(np.array([game]), np.array([observer]))[0]
    return np.rint(observation[SLICES["unseen"]]).astype(np.int64)


def deal_plan(batch: WizardBatch, game: int, observer: int) -> tuple[np.ndarray, list[tuple[int, int, np.ndarray]]]:
    """The unseen cards (one card type per physical card) and the slots they fill: (seat or -1 for the stack,
    card count, bool mask over the unseen cards of those the slot may hold), constrained seats first, fewest
    allowed cards first."""
    pool = np.repeat(np.arange(NUM_CARD_TYPES), unseen_cards(batch, game, observer))
    suits = CARD_SUIT[pool]
    constrained: list[tuple[int, int, np.ndarray]] = []
    free: list[tuple[int, int, np.ndarray]] = []
    for seat in hidden_seats(batch, game, observer):
        count = int(batch.hands[game, seat].sum())
        if count == 0:
            continue
        allowed = ~np.isin(suits, np.flatnonzero(batch.voids[game, seat]))
        (free if allowed.all() else constrained).append((seat, count, allowed))
    size = int(batch.hand_sizes[batch.round_index[game]])
    stack = DECK_SIZE - batch.num_players * size - (batch.trump_card[game] != NO_CARD)
    constrained.sort(key=lambda slot: int(slot[2].sum()))
    plan = constrained + free + [(_STACK, int(stack), np.ones(len(pool), dtype=bool))]
    if sum(slot[1] for slot in plan) != len(pool):
        raise AssertionError(f"game {game}: {len(pool)} unseen cards for {sum(s[1] for s in plan)} places")
    return pool, plan


def sample_deals(pool: np.ndarray, plan: list[tuple[int, int, np.ndarray]], rng: np.random.Generator,
                 samples: int) -> np.ndarray:
    """[samples, len(pool)] arrangements of the unseen cards (indices into ``pool``): slot after slot of ``plan``,
    each slot's cards in a run of its count, uniform over the arrangements that respect the slots' masks."""
    deals = rng.random((samples, len(pool))).argsort(axis=1)  # no void: one shuffle deals everything
    constrained = [slot for slot in plan if not slot[2].all()]
    if constrained:
        counter = _VoidDeals(pool, constrained)
        for i in range(samples):
            deals[i] = counter.sample(rng)
    return deals


class _VoidDeals:
    """Exact sampler of the constrained seats' cards, by counting deals suit by suit.

    Classes of cards: each suit some constrained seat is void in, and "free" (every other card,
    Wizards and Jesters included). ``weight(j, left)`` is the number of ways, up to a constant, to
    deal the cards still ``left`` (counts per void suit) to seats j.. and the free slots: the sum over
    seat j's class counts y of ``prod 1/y! * weight(j + 1, left - y)``, and at the end ``prod 1/left!``
    for the free slots (a count of distinct cards split into groups is a multinomial). Seat j's class
    counts are drawn in proportion to those terms, then its cards uniformly within each class.
    """

    def __init__(self, pool: np.ndarray, constrained: list[tuple[int, int, np.ndarray]]):
        suits = CARD_SUIT[pool]
        void_suits = sorted({int(x) for _, _, allowed in constrained for x in suits[~allowed]})
        self.classes = [np.flatnonzero(suits == suit) for suit in void_suits]
        self.classes.append(np.flatnonzero(~np.isin(suits, void_suits)))  # the free class, last
        self.counts = [int(slot[1]) for slot in constrained]
        # may_hold[j][k]: seat j may hold cards of class k (the free class always)
        self.may_hold = [[bool(allowed[members].all()) if len(members) else True for members in self.classes]
                         for _, _, allowed in constrained]
        self.total = len(pool)
        self._weights: dict = {}
        self._options: dict = {}  # (j, left): seat j's class counts and their chances

    def _splits(self, j: int, left: tuple[int, ...]) -> list[tuple[tuple[int, ...], float]]:
        """Seat j's possible class counts from ``left`` (counts per class, free last), with the weight of each."""
        options = []
        ranges = [range(min(n, self.counts[j]) + 1) if ok else range(1) for n, ok in zip(left[:-1], self.may_hold[j][:-1])]
        for y in itertools.product(*ranges):
            free = self.counts[j] - sum(y)
            if 0 <= free <= left[-1]:
                y = (*y, free)
                rest = tuple(n - k for n, k in zip(left, y))
                term = self.weight(j + 1, rest) / math.prod(math.factorial(k) for k in y)
                if term > 0:
                    options.append((y, term))
        return options

    def weight(self, j: int, left: tuple[int, ...]) -> float:
        """Weighted count of the deals of ``left`` to seats j.. and the free slots."""
        if j == len(self.counts):
            return 1.0 / math.prod(math.factorial(n) for n in left)
        key = (j, left)
        if key not in self._weights:
            self._weights[key] = sum(term for _, term in self._splits(j, left))
        return self._weights[key]

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """One arrangement: the constrained seats' cards in order, then the free slots' cards shuffled."""
        left = tuple(len(c) for c in self.classes)
        members = [c[rng.random(len(c)).argsort()] for c in self.classes]  # each class shuffled: take from the front
        taken, used = [], [0] * len(self.classes)
        for j in range(len(self.counts)):
            if (j, left) not in self._options:
                options = self._splits(j, left)
                terms = np.array([term for _, term in options])
                self._options[j, left] = [y for y, _ in options], terms / terms.sum()
            splits, chances = self._options[j, left]
            y = splits[rng.choice(len(splits), p=chances)]
            for k, count in enumerate(y):
                taken.append(members[k][used[k]:used[k] + count])
                used[k] += count
            left = tuple(n - k for n, k in zip(left, y))
        rest = np.concatenate([m[u:] for m, u in zip(members, used)])
        return np.concatenate(taken + [rest[rng.random(len(rest)).argsort()]]).astype(np.int64)


def row_counts(values: np.ndarray, length: int) -> np.ndarray:
    """[rows, length] int64 counts of each row of ``values`` ([rows, k] integers from 0 to length - 1): a bincount
    per row, in one call."""
    rows = len(values)
    offsets = np.arange(rows)[:, None] * length
    return np.bincount((offsets + values).ravel(), minlength=rows * length).reshape(rows, length)


def _redraw(batch: WizardBatch, new: WizardBatch, game: int, observer: int, rows: np.ndarray, visible: np.ndarray,
            rng: np.random.Generator) -> None:
    """Write into rows ``rows`` of ``new`` (copies of ``game``) the redrawn hands, stack, deck orders and hidden bids."""
    n, r = batch.num_players, int(batch.round_index[game])
    size = int(batch.hand_sizes[r])
    pool, plan = deal_plan(batch, game, observer)
    deals = sample_deals(pool, plan, rng, len(rows))
    turned = int(batch.trump_card[game])
    cards, start = pool[deals], 0  # [copies, unseen cards]: each copy's cards, slot after slot of the plan
    stack = cards[:, :0]
    for seat, count, _ in plan:
        mine = cards[:, start:start + count]
        start += count
        if seat == _STACK:
            stack = mine
        else:
            new.hands[rows, seat] = row_counts(mine, NUM_CARD_TYPES)
    # This round's deck order deals each seat its cards (the new hand and those it played), by card type, seat
    # after seat, then the turned-up card and the stack.
    dealt = (new.hands[rows] + new.played[rows]).astype(np.int64)  # [copies, seats, card types]
    assert (dealt.sum(axis=2) == size).all()
    types = np.broadcast_to(np.arange(NUM_CARD_TYPES), dealt.shape)
    by_seat = np.repeat(types.ravel(), dealt.ravel()).reshape(len(rows), n * size)
    up = np.full((len(rows), int(turned != NO_CARD)), turned, dtype=np.int64)
    order = np.concatenate([by_seat, up, stack], axis=1)
    assert order.shape[1] == DECK_SIZE
    new.orders[rows, r] = order
    others = [k for k in range(batch.rules.num_rounds) if k != r]
    if others:
        shuffles = rng.random((len(rows), len(others), DECK_SIZE)).argsort(axis=2)
        new.orders[rows[:, None], np.array(others)[None, :]] = DECK[shuffles]
    hidden_bids = [s for s in range(n) if batch.bids[game, s] >= 0 and not visible[s]]
    if hidden_bids:
        new.bids[rows[:, None], np.array(hidden_bids)[None, :]] = rng.integers(0, size + 1, (len(rows), len(hidden_bids)))
