"""determinize: samples keep what the observer sees, respect every constraint, and are uniform over the consistent deals."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from scipy.stats import chisquare

from wizard_env.engine.batch import OVER, PLAY, WizardBatch, deal_hands
from wizard_env.engine.cards import CARD_SUIT, DECK, DECK_COUNTS, DECK_SIZE, NO_CARD, NUM_CARD_TYPES
from wizard_env.engine.determinize import NO_SEED, deal_plan, determinize, hidden_seats
from wizard_env.engine.rules import Rules

VARIANTS = [
    Rules.make(3, 5), Rules.make(4, 4, "hidden"), Rules.make(5, 3, "secret"), Rules.make(6, 3, bid_total_rule=True),
    Rules.make(4, [1, 2, 3], foresight=True), Rules.make(3, [1, 20], "secret", foresight=True), Rules.make(4, [15]),
    Rules.make(6, [10], "hidden"), Rules.make(5, [1, 12]),
]


def random_moves(batch: WizardBatch, game: int, moves: int, rng: np.random.Generator) -> None:
    """Play up to ``moves`` random legal actions in ``game`` (stopping when it ends)."""
    for _ in range(moves):
        if batch.phase[game] == OVER:
            return
        legal = np.flatnonzero(batch.legal_masks(np.array([game]))[0])
        batch.step(np.array([rng.choice(legal)]), np.array([game]))


def positions(rules: Rules, count: int, seed: int) -> WizardBatch:
    """A batch of ``count`` games, each moved a random number of random moves (none over)."""
    rng = np.random.default_rng(seed)
    batch = WizardBatch(rules, count, seed=seed, autoreset=False)
    total = sum(rules.hand_sizes) * (rules.num_players + 1)
    for game in range(count):
        random_moves(batch, game, int(rng.integers(total)), rng)
        while batch.phase[game] == OVER:  # the game ran out: start again, fewer moves
            batch.new_games(np.array([game]))
            random_moves(batch, game, int(rng.integers(total // 2)), rng)
    return batch


def check_sample(batch: WizardBatch, game: int, observer: int, new: WizardBatch, row: int) -> None:
    """Assert every promise of ``determinize`` for copy ``row`` of ``game`` seen by ``observer``."""
    n, r = batch.num_players, int(batch.round_index[game])
    size = int(batch.hand_sizes[r])
    g, o = np.array([game]), np.array([observer])
    np.testing.assert_array_equal(new.observe(np.array([row]), o), batch.observe(g, o))
    hidden = hidden_seats(batch, game, observer)
    for seat in range(n):
        assert new.hands[row, seat].sum() == batch.hands[game, seat].sum()
        if seat not in hidden:
            np.testing.assert_array_equal(new.hands[row, seat], batch.hands[game, seat])
        for suit in np.flatnonzero(batch.voids[game, seat]):
            assert new.hands[row, seat, CARD_SUIT == suit].sum() == 0, f"seat {seat} holds a card of void suit {suit}"
    for name in ("played", "trick", "trick_len", "voids", "tricks_won", "totals", "phase", "current", "dealer", "leader",
                 "trump", "trump_card", "round_index", "first_dealer"):
        np.testing.assert_array_equal(getattr(new, name)[row], getattr(batch, name)[game], err_msg=name)
    visible = batch.bids_visible(g, o)[0]
    np.testing.assert_array_equal(new.bids[row, visible], batch.bids[game, visible])
    made = batch.bids[game] >= 0
    assert ((new.bids[row] >= 0) == made).all() and (new.bids[row] <= size).all()
    # the current round's order deals the new hands (with the cards played) and the kept turned card
    hands, turned = deal_hands(new.orders[row, r][None], np.array([size]), n)
    np.testing.assert_array_equal(hands[0], new.hands[row] + new.played[row])
    assert turned[0] == batch.trump_card[game]
    for order in new.orders[row]:
        np.testing.assert_array_equal(np.sort(order), np.sort(DECK))
    assert new.game_seed[row] == NO_SEED


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: f"{r.num_players}p-{r.hand_sizes}-{r.bidding.value}-{r.foresight}")
def test_samples_keep_the_view_and_break_no_constraint(rules):
    batch = positions(rules, 25, seed=rules.num_players)
    rng = np.random.default_rng(1)
    observers = rng.integers(rules.num_players, size=25)
    before = {name: getattr(batch, name).copy() for name in batch._state}
    new = determinize(batch, np.arange(25), observers, rng, samples=4)
    assert new.batch_size == 100
    for game in range(25):
        for j in range(4):
            check_sample(batch, game, int(observers[game]), new, game * 4 + j)
    for name, value in before.items():  # the original is untouched
        np.testing.assert_array_equal(getattr(batch, name), value, err_msg=name)


def test_future_decks_and_hidden_hands_are_redrawn():
    batch = positions(Rules.make(4, 10), 20, seed=3)
    new = determinize(batch, np.arange(20), batch.current.copy(), np.random.default_rng(0), samples=2)
    for game in range(20):
        r = int(batch.round_index[game])
        for row in (2 * game, 2 * game + 1):
            for later in range(r + 1, 10):
                assert not np.array_equal(new.orders[row, later], batch.orders[game, later])
    others = [(g, s) for g in range(20) for s in range(4) if s != batch.current[g] and batch.hands[g, s].sum() > 2]
    changed = [not np.array_equal(new.hands[2 * g, s], batch.hands[g, s]) for g, s in others]
    assert others and np.mean(changed) > 0.5


def test_copies_play_on_to_the_end_legally():
    rules = Rules.make(4, 5, "secret")
    batch = positions(rules, 10, seed=5)
    new = determinize(batch, np.arange(10), batch.current.copy(), np.random.default_rng(2), samples=3)
    rng = np.random.default_rng(3)
    for game in range(new.batch_size):
        random_moves(new, game, 10_000, rng)  # step validates every action against the rules
    assert (new.phase == OVER).all()


def test_same_seed_same_samples():
    batch = positions(Rules.make(5, 6, "hidden"), 8, seed=7)
    one = determinize(batch, np.arange(8), batch.current.copy(), np.random.default_rng(11), samples=3)
    two = determinize(batch, np.arange(8), batch.current.copy(), np.random.default_rng(11), samples=3)
    for name in batch._state:
        np.testing.assert_array_equal(getattr(one, name), getattr(two, name), err_msg=name)


def test_bad_input_is_refused():
    batch = positions(Rules.make(4, 2), 3, seed=0)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="observers"):
        determinize(batch, np.arange(3), np.array([0, 1, 4]), rng)
    with pytest.raises(ValueError, match="out of range"):
        determinize(batch, np.array([3]), np.array([0]), rng)
    with pytest.raises(ValueError, match="twice"):
        determinize(batch, np.array([1, 1]), np.array([0, 0]), rng)
    with pytest.raises(ValueError, match="samples"):
        determinize(batch, np.arange(3), np.zeros(3, dtype=int), rng, samples=0)
    with pytest.raises(ValueError, match="Generator"):
        determinize(batch, np.arange(3), np.zeros(3, dtype=int), 0)
    random_moves(batch, 0, 10_000, rng)
    with pytest.raises(ValueError, match="is over"):
        determinize(batch, np.arange(3), np.zeros(3, dtype=int), rng)


# -- uniformity against exact enumeration --------------------------------------------------------


def consistent_deals(batch: WizardBatch, game: int, observer: int) -> Counter:
    """Every deal of the unseen physical cards to the hidden hands and the stack that respects the voids,
    counted by the hidden hands it gives (a tuple of card type tuples, seat order)."""
    pool, plan = deal_plan(batch, game, observer)
    seats = sorted(seat for seat, _, _ in plan if seat >= 0)
    count_of = {seat: count for seat, count, _ in plan}
    deals: Counter = Counter()

    def fill(left: tuple[int, ...], index: int, hands: dict) -> None:
        if index == len(seats):
            deals[tuple(tuple(sorted(pool[list(hands[s])])) for s in seats)] += 1
            return
        seat = seats[index]
        void = np.flatnonzero(batch.voids[game, seat])
        for chosen in itertools.combinations(left, count_of[seat]):
            if not np.isin(CARD_SUIT[pool[list(chosen)]], void).any():
                fill(tuple(c for c in left if c not in chosen), index + 1, {**hands, seat: chosen})

    fill(tuple(range(len(pool))), 0, {})
    return deals


def small_positions(rules: Rules, wanted: int, seed: int, need_void: bool) -> list[tuple[WizardBatch, int, int]]:
    """Positions in the play phase of a full-deck round (no stack) with at most 3 cards in a hand."""
    rng = np.random.default_rng(seed)
    found = []
    size = rules.hand_sizes[0]
    for attempt in range(400):
        batch = WizardBatch(rules, 1, seed=seed * 1000 + attempt, autoreset=False)
        random_moves(batch, 0, rules.num_players + rules.num_players * (size - int(rng.integers(1, 4))), rng)
        observer = int(rng.integers(rules.num_players))
        if batch.phase[0] != PLAY:
            continue
        pool, plan = deal_plan(batch, 0, observer)
        left, deals = len(pool), 1
        for _, count, _ in plan:
            deals, left = deals * math.comb(left, count), left - count
        if need_void != any(not allowed.all() for _, _, allowed in plan) or deals > 2000:
            continue  # small enough to enumerate quickly, and to sample 150 times per deal
        if len(consistent_deals(batch, 0, observer)) > 2:
            found.append((batch, 0, observer))
        if len(found) == wanted:
            break
    assert len(found) == wanted
    return found


def assert_uniform(batch: WizardBatch, game: int, observer: int, seed: int) -> None:
    """Chi-square test of the sampled hidden hands against the enumerated consistent deals (p > 0.001)."""
    expected = consistent_deals(batch, game, observer)
    seats = sorted(s for s in hidden_seats(batch, game, observer) if batch.hands[game, s].sum() > 0)
    samples = 150 * len(expected)
    new = determinize(batch, np.array([game]), np.array([observer]), np.random.default_rng(seed), samples=samples)
    seen = Counter(tuple(tuple(np.repeat(np.arange(NUM_CARD_TYPES), new.hands[row, s])) for s in seats)
                   for row in range(samples))
    assert set(seen) <= set(expected), "a sample is not among the consistent deals"
    keys = list(expected)
    weights = np.array([expected[k] for k in keys], dtype=float)
    statistic, p = chisquare([seen[k] for k in keys], weights / weights.sum() * samples)
    assert p > 0.001, (statistic, p, len(keys))


@pytest.mark.parametrize("rules", [Rules.make(3, [20]), Rules.make(4, [15]), Rules.make(5, [12], "secret")],
                         ids=lambda r: f"{r.num_players}p")
@pytest.mark.parametrize("need_void", [False, True], ids=["no-void", "void"])
def test_samples_are_uniform_over_the_consistent_deals(rules, need_void):
    for i, (batch, game, observer) in enumerate(small_positions(rules, 2, seed=rules.num_players, need_void=need_void)):
        assert_uniform(batch, game, observer, seed=i)


def test_foresight_samples_the_observers_own_card_uniformly():
    rules = Rules.make(4, [1], foresight=True)
    batch = WizardBatch(rules, 1, seed=4, autoreset=False)
    observer = int(batch.current[0])
    assert hidden_seats(batch, 0, observer) == [observer]
    unseen = DECK_COUNTS.astype(int) - batch.hands[0].sum(axis=0) + batch.hands[0, observer]
    if batch.trump_card[0] != NO_CARD:
        unseen[batch.trump_card[0]] -= 1
    samples = 100 * DECK_SIZE
    new = determinize(batch, np.array([0]), np.array([observer]), np.random.default_rng(0), samples=samples)
    drawn = np.bincount(new.hands[:, observer].argmax(axis=1), minlength=NUM_CARD_TYPES)
    assert (drawn[unseen == 0] == 0).all()
    statistic, p = chisquare(drawn[unseen > 0], unseen[unseen > 0] / unseen.sum() * samples)
    assert p > 0.001, (statistic, p)
