"""The observation vector: decoding round trip, agreement with the game state, fixed length,
and no leak of hidden information (other hands, hidden and secret bids, the own card in foresight)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wizard_env import OBS_SIZE, BID_OFFSET, TRUMP_OFFSET, Phase, Rules, WizardGame, decode, observe
from wizard_env.engine.cards import DECK_SIZE, NO_CARD, NO_SUIT, NUM_CARD_TYPES
from wizard_env.engine.observation import FIELDS, ROUND_SCALE, SCORE_SCALE, SLICES, observation_bounds, pack
from wizard_env.engine.rules import MAX_HAND_SIZE, MAX_PLAYERS, MIN_PLAYERS

from helpers import card, deck_counts, oracle_led_suit, suit_index

SEEDS = st.integers(0, 2**40)


# -- layout and round trip -------------------------------------------------------------------------


def test_fields_tile_the_vector_without_gaps():
    stop = 0
    for field in FIELDS:
        assert SLICES[field.name].start == stop
        stop = SLICES[field.name].stop
        assert stop - SLICES[field.name].start == field.size
    assert stop == OBS_SIZE


def field_range(name: str) -> tuple[int, int]:
    """Raw value range a field can take in a game."""
    if name == "scores":
        return -5000, 5000
    if name in ("round", "num_rounds", "hand_size", "bids", "tricks_won"):
        return 0, MAX_HAND_SIZE
    if name in ("hand", "played", "foresight", "unseen"):
        return 0, 4
    return 0, 1


@settings(max_examples=40, deadline=None)
@given(seed=SEEDS)
def test_decode_inverts_pack(seed):
    rng = np.random.default_rng(seed)
    values = {}
    for field in FIELDS:
        low, high = field_range(field.name)
        values[field.name] = rng.integers(low, high + 1, size=field.shape)
    decoded = decode(pack(values))
    assert decoded.keys() == values.keys()
    for name, value in values.items():
        np.testing.assert_array_equal(decoded[name], value, err_msg=name)


def test_pack_leaves_missing_fields_zero():
    decoded = decode(pack({"hand_size": np.array([7])}))
    assert decoded["hand_size"].tolist() == [7]
    assert all(not decoded[f.name].any() for f in FIELDS if f.name != "hand_size")


def test_decode_rejects_a_vector_of_the_wrong_length():
    with pytest.raises(ValueError, match=str(OBS_SIZE)):
        decode(np.zeros(OBS_SIZE - 1, dtype=np.float32))


# -- agreement with the game state -----------------------------------------------------------------


def bid_visible_by_rules(game: WizardGame, observer: int, seat: int) -> bool:
    """docs/rules.md#variants: open bids at once, hidden bids once play starts, secret ones at the end."""
    if game.bids[seat] < 0:
        return False
    if seat == observer or game.phase == Phase.OVER:
        return True
    mode = game.rules.bidding.value
    return mode == "open" or (mode == "hidden" and game.phase == Phase.PLAY)


def expected_view(game: WizardGame, observer: int) -> dict[str, np.ndarray]:
    """What the observer should see, field by field, built directly from the game state."""
    n = game.num_players
    slot = lambda seat: (seat - observer) % n  # noqa: E731
    want = {f.name: np.zeros(f.shape, dtype=np.int64) for f in FIELDS}
    want["num_players"][n - MIN_PLAYERS] = 1
    want["phase"][int(game.phase)] = 1
    want["round"][0] = game.round_index + 1
    want["num_rounds"][0] = game.rules.num_rounds
    want["hand_size"][0] = game.hand_size
    want["dealer"][slot(game.dealer)] = 1
    foresight = game.rules.foresight and game.hand_size == 1
    for seat in range(n):
        if foresight and seat != observer:
            want["foresight"][slot(seat)] = game.hands[seat]
    if not foresight:
        want["hand"][:] = game.hands[observer]
    if game.trump_card != NO_CARD:
        want["trump_card"][game.trump_card] = 1
    if game.phase != Phase.TRUMP:
        want["trump"][4 if game.trump == NO_SUIT else game.trump] = 1
    for seat in range(n):
        if bid_visible_by_rules(game, observer, seat):
            want["bid_known"][slot(seat)] = 1
            want["bids"][slot(seat)] = game.bids[seat]
        want["tricks_won"][slot(seat)] = game.tricks_won[seat]
        want["played"][slot(seat)] = game.played[seat]
        want["scores"][slot(seat)] = game.totals[seat]
    want["leader"][slot(game.leader)] = 1
    for i, c in enumerate(game.trick_cards):
        want["trick"][slot((game.leader + i) % n), c] = 1
    if game.record:
        expected_play_history(game, observer, want)
    return want


def expected_play_history(game: WizardGame, observer: int, want: dict[str, np.ndarray]) -> None:
    """The v1 fields, read from the replay log's tricks (the plays in order) with the oracle's rules."""
    n = game.num_players
    slot = lambda seat: (seat - observer) % n  # noqa: E731
    tricks = game.log[-1]["tricks"] if game.log else []
    for trick in tricks:
        names = [p["card"] for p in trick["plays"]]
        for i, p in enumerate(trick["plays"]):
            led, suit = oracle_led_suit(names[:i]), names[i][1] if names[i] not in ("Wiz", "Jes") else None
            if led is not None and suit is not None and suit != led:
                want["voids"][slot(p["seat"]), suit_index(led)] = 1
    done = [t for t in tricks if t["winner"] is not None]
    if done:
        for p in done[-1]["plays"]:
            want["last_trick"][slot(p["seat"]), card(p["card"])] = 1
        want["last_winner"][slot(done[-1]["winner"])] = 1
    if tricks and tricks[-1]["winner"] is None:
        led = oracle_led_suit([p["card"] for p in tricks[-1]["plays"]])
        if led is not None:
            want["lead_suit"][suit_index(led)] = 1
    seen = sum(want[name].sum(axis=0) for name in ("played", "foresight")) + want["hand"] + want["trump_card"]
    want["unseen"][:] = deck_counts() - seen


def assert_view_matches(game: WizardGame, observer: int) -> None:
    vector = observe(game, observer)
    assert vector.shape == (OBS_SIZE,) and vector.dtype == np.float32
    got, want = decode(vector), expected_view(game, observer)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name], err_msg=f"{name} (observer {observer}, {game.phase.name})")


@st.composite
def configs(draw) -> tuple[int, dict]:
    n = draw(st.integers(3, 6))
    rounds = draw(st.lists(st.integers(1, DECK_SIZE // n), min_size=1, max_size=2))
    bidding = draw(st.sampled_from(["open", "hidden", "secret"]))
    return n, dict(rounds=rounds, bidding=bidding, foresight=draw(st.booleans()))


@settings(max_examples=30, deadline=None)
@given(config=configs(), seed=SEEDS, action_seed=SEEDS)
def test_decoded_observation_matches_game_state(config, seed, action_seed):
    n, options = config
    game = WizardGame(Rules.make(n, **options), seed, record=True)
    rng = np.random.default_rng(action_seed)
    while True:
        for observer in range(n):
            assert_view_matches(game, observer)
        if game.is_over:
            break
        game.step(int(rng.choice(game.legal_actions())))


VARIANTS = [{}, {"bidding": "hidden"}, {"bidding": "secret"}, {"bid_total_rule": True}, {"rounds": "amigo"},
            {"rounds": 5}, {"foresight": True, "rounds": 3}]


@pytest.mark.parametrize("n", range(MIN_PLAYERS, MAX_PLAYERS + 1))
@pytest.mark.parametrize("options", VARIANTS)
def test_voids_and_last_trick_match_the_trick_history_in_every_variant(n, options):
    game = WizardGame(Rules.make(n, **options), seed=n * 100 + len(options), record=True)
    rng = np.random.default_rng(n)
    voids_seen = 0
    while not game.is_over:
        for observer in range(n):
            assert_view_matches(game, observer)
        voids_seen += int(decode(observe(game, game.current))["voids"].sum())
        game.step(int(rng.choice(game.legal_actions())))
    assert voids_seen > 0  # random play shows out of suits in every variant's games


def test_observation_of_a_turned_wizard_shows_no_trump_while_the_dealer_chooses():
    from helpers import find_seed
    from wizard_env.engine.cards import WIZARD

    game = WizardGame(Rules.make(4, rounds=[2]), find_seed(4, 2, WIZARD))
    view = decode(observe(game, game.dealer))
    assert view["phase"][int(Phase.TRUMP)] == 1
    assert view["trump_card"][WIZARD] == 1
    assert not view["trump"].any()
    game.step(TRUMP_OFFSET + 2)
    assert decode(observe(game, game.dealer))["trump"].tolist() == [0, 0, 1, 0, 0]


def test_slot_zero_is_the_observer():
    game = WizardGame(Rules.make(5, rounds=[3]), seed=4)
    for observer in range(5):
        view = decode(observe(game, observer))
        np.testing.assert_array_equal(view["hand"], game.hands[observer])
        assert view["dealer"].tolist().index(1) == (game.dealer - observer) % 5
        assert not view["dealer"][5:].any()


@pytest.mark.parametrize("n", range(MIN_PLAYERS, MAX_PLAYERS + 1))
@pytest.mark.parametrize("options", VARIANTS)
def test_observation_length_is_the_same_for_every_config(n, options):
    game = WizardGame(Rules.make(n, **options), seed=0)
    for observer in range(n):
        assert observe(game, observer).shape == (OBS_SIZE,)


# -- bounds of the observation space ---------------------------------------------------------------


ONE_HOTS = ("num_players", "phase", "dealer", "trump_card", "trump", "bid_known", "leader", "trick", "voids",
            "last_trick", "last_winner", "lead_suit")


def test_bounds_are_finite_and_follow_each_field():
    rules = Rules.make(3)  # 20 rounds of 1 to 20 cards: 210 cards dealt to each player
    low, high = observation_bounds(rules)
    assert np.isfinite(low).all() and np.isfinite(high).all()
    for name in ONE_HOTS:
        assert low[SLICES[name]].min() == 0 and high[SLICES[name]].max() == 1, name
    for name in ("hand", "unseen"):  # 4 Wizards, 4 Jesters, 1 of each suited card
        np.testing.assert_array_equal(high[SLICES[name]], deck_counts())
    assert high[SLICES["num_rounds"]][0] == np.float32(20 * ROUND_SCALE)
    assert high[SLICES["bids"]].max() == np.float32(MAX_HAND_SIZE * ROUND_SCALE)
    # scores: every bid missed by every trick (-10 each), or every bid of all tricks met (20 + 10 each)
    assert low[SLICES["scores"]][0] == np.float32(-10 * 210 * SCORE_SCALE)
    assert high[SLICES["scores"]][0] == np.float32((20 * 20 + 10 * 210) * SCORE_SCALE)


def test_a_sample_of_the_space_respects_the_fields():
    import wizard_env

    space = wizard_env.env(num_players=4).observation_space("player_0")["observation"]
    space.seed(0)
    sample = space.sample()
    assert sample[SLICES["phase"]].max() <= 1 and sample[SLICES["hand"]].max() <= 4
    assert -100 < sample[SLICES["scores"]].min() and sample[SLICES["round"]][0] <= 15 * ROUND_SCALE


@pytest.mark.parametrize("n", range(MIN_PLAYERS, MAX_PLAYERS + 1))
@pytest.mark.parametrize("options", VARIANTS)
def test_every_observation_lies_within_the_bounds_of_its_rules(n, options):
    rules = Rules.make(n, **options)
    low, high = observation_bounds(rules)
    game = WizardGame(rules, seed=n * 10 + len(options))
    rng = np.random.default_rng(n)
    while True:
        for observer in range(n):
            vector = observe(game, observer)
            outside = np.flatnonzero((vector < low) | (vector > high))
            assert not outside.size, [f.name for f in FIELDS if SLICES[f.name].start <= outside[0] < SLICES[f.name].stop]
        if game.is_over:
            break
        game.step(int(rng.choice(game.legal_actions())))


# -- no leaks --------------------------------------------------------------------------------------


def play_to(game: WizardGame, rng: np.random.Generator, steps: int) -> None:
    for _ in range(steps):
        if game.is_over:
            return
        game.step(int(rng.choice(game.legal_actions())))


def undealt_cards(game: WizardGame) -> list[int]:
    """Card types of which some copy is in nobody's hand, not played and not turned up."""
    seen = game.hands.sum(axis=0).astype(int) + game.played.sum(axis=0)
    if game.trump_card != NO_CARD:
        seen[game.trump_card] += 1
    return [c for c in range(NUM_CARD_TYPES) if seen[c] < deck_counts()[c]]


def swap_one_card(game: WizardGame, a: int, b: int) -> bool:
    """Exchange a card of seat a for a different card of seat b; False if no such pair exists."""
    for ca in np.flatnonzero(game.hands[a]):
        for cb in np.flatnonzero(game.hands[b]):
            if ca != cb:
                game.hands[a, ca] -= 1
                game.hands[a, cb] += 1
                game.hands[b, cb] -= 1
                game.hands[b, ca] += 1
                return True
    return False


def replace_with_undealt(game: WizardGame, seat: int) -> bool:
    """Replace one card of ``seat`` by a card that is still in the undealt stack."""
    held = np.flatnonzero(game.hands[seat])
    spare = [c for c in undealt_cards(game) if c not in held]
    if not len(held) or not spare:
        return False
    game.hands[seat, held[0]] -= 1
    game.hands[seat, spare[0]] += 1
    return True


@settings(max_examples=40, deadline=None)
@given(n=st.integers(3, 6), size=st.integers(2, 8), seed=SEEDS, action_seed=SEEDS, steps=st.integers(0, 30))
def test_other_players_hidden_cards_do_not_change_the_observation(n, size, seed, action_seed, steps):
    game = WizardGame(Rules.make(n, rounds=[size, size]), seed)
    play_to(game, np.random.default_rng(action_seed), steps)
    if game.is_over:
        return
    for observer in range(n):
        x, y = (observer + 1) % n, (observer + 2) % n
        swapped = copy.deepcopy(game)
        if swap_one_card(swapped, x, y):
            np.testing.assert_array_equal(observe(game, observer), observe(swapped, observer))
            assert not np.array_equal(observe(game, x), observe(swapped, x))  # the change is real
        replaced = copy.deepcopy(game)
        if replace_with_undealt(replaced, x):
            np.testing.assert_array_equal(observe(game, observer), observe(replaced, observer))
            assert not np.array_equal(observe(game, x), observe(replaced, x))


@pytest.mark.parametrize("n", [3, 4, 6])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_foresight_hides_own_card_and_shows_the_others(n, seed):
    game = WizardGame(Rules.make(n, rounds=[1], foresight=True), seed)
    for observer in range(n):
        own_changed = copy.deepcopy(game)
        assert replace_with_undealt(own_changed, observer)
        np.testing.assert_array_equal(observe(game, observer), observe(own_changed, observer))
        for other in range(n):
            if other != observer:
                assert not np.array_equal(observe(game, other), observe(own_changed, other))


def test_without_foresight_one_card_round_shows_own_card_and_hides_others():
    game = WizardGame(Rules.make(4, rounds=[1]), seed=3)
    for observer in range(4):
        own_changed = copy.deepcopy(game)
        assert replace_with_undealt(own_changed, observer)
        assert not np.array_equal(observe(game, observer), observe(own_changed, observer))
        for other in range(4):
            if other != observer:
                np.testing.assert_array_equal(observe(game, other), observe(own_changed, other))


def bids_so_far(game: WizardGame) -> list[int]:
    return [s for s in range(game.num_players) if game.bids[s] >= 0]


@pytest.mark.parametrize("mode", ["hidden", "secret"])
def test_opponent_bid_values_do_not_leak_while_hidden(mode):
    game = WizardGame(Rules.make(4, rounds=[3, 2], bidding=mode), seed=6)
    if game.phase == Phase.TRUMP:
        game.step(TRUMP_OFFSET)
    game.step(BID_OFFSET + 1)
    game.step(BID_OFFSET + 2)
    (first, second) = bids_so_far(game)
    other = copy.deepcopy(game)
    other.bids[first] = 3
    for observer in range(4):
        if observer != first:
            np.testing.assert_array_equal(observe(game, observer), observe(other, observer))
    assert not np.array_equal(observe(game, first), observe(other, first))


def test_open_bids_are_seen_at_once():
    game = WizardGame(Rules.make(4, rounds=[3], bidding="open"), seed=6)
    if game.phase == Phase.TRUMP:
        game.step(TRUMP_OFFSET)
    bidder = game.current
    game.step(BID_OFFSET + 2)
    for observer in range(4):
        view = decode(observe(game, observer))
        assert view["bid_known"][(bidder - observer) % 4] == 1
        assert view["bids"][(bidder - observer) % 4] == 2


@pytest.mark.parametrize("mode", ["hidden", "secret"])
def test_hidden_and_secret_bids_over_a_game(mode):
    game = WizardGame(Rules.make(4, rounds=[2, 1], bidding=mode), seed=13)
    rng = np.random.default_rng(3)
    saw_play = False
    while True:
        for observer in range(4):
            view = decode(observe(game, observer))
            for seat in range(4):
                k = (seat - observer) % 4
                made = game.bids[seat] >= 0
                if seat == observer or game.phase == Phase.OVER:
                    visible = made
                elif game.phase == Phase.PLAY:
                    visible = mode == "hidden"  # hidden bids are revealed together when play starts
                else:
                    visible = False
                assert view["bid_known"][k] == visible, (mode, game.phase.name, observer, seat)
                assert view["bids"][k] == (game.bids[seat] if visible else 0)
        if game.is_over:
            break
        saw_play |= game.phase == Phase.PLAY
        game.step(int(rng.choice(game.legal_actions())))
    assert saw_play
    assert decode(observe(game, 0))["bid_known"][:4].all()  # the end of the game reveals every bid


def test_python_m_wizard_env_layout_prints_the_table_without_a_warning():
    import subprocess
    import sys

    from wizard_env.engine.observation import layout_table

    done = subprocess.run([sys.executable, "-m", "wizard_env.engine.layout"], capture_output=True, text=True, check=True)
    assert done.stderr == "" and layout_table() in done.stdout
