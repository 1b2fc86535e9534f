"""Engine behaviour: seeded deals, validation of actions, bid visibility and foresight rounds."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import assert_same_snapshot, find_seed, play, play_random_game, position, snapshot
from wizard_env import (
    BID_OFFSET,
    CARD_OFFSET,
    NUM_ACTIONS,
    TRUMP_OFFSET,
    IllegalActionError,
    Phase,
    Rules,
    WizardGame,
    action_name,
    decode,
    observe,
)
from wizard_env.engine.cards import WIZARD, parse_card


def record_deals(rules: Rules, seed: int, action_seed: int) -> tuple[list, list]:
    """Play a random game; return (hands and turned card at each round start, actions taken)."""
    game = WizardGame(rules, seed)
    rng = np.random.default_rng(action_seed)
    deals, actions = [], []
    while not game.is_over:
        if len(deals) == game.round_index:
            deals.append((game.hands.copy(), game.trump_card))
        action = int(rng.choice(game.legal_actions()))
        actions.append(action)
        game.step(action)
    return deals, actions


# -- deals -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_same_seed_deals_same_cards_whatever_is_played(n):
    rules = Rules.make(n, rounds=[3, 1, 4, 2])
    deals_a, actions_a = record_deals(rules, seed=99, action_seed=1)
    deals_b, actions_b = record_deals(rules, seed=99, action_seed=2)
    assert actions_a != actions_b  # the games really were played differently
    assert len(deals_a) == len(deals_b) == 4
    for (hands_a, turned_a), (hands_b, turned_b) in zip(deals_a, deals_b):
        np.testing.assert_array_equal(hands_a, hands_b)
        assert turned_a == turned_b


def test_different_seeds_deal_different_cards():
    rules = Rules.make(4, rounds=[5, 5])
    deals = [record_deals(rules, seed, action_seed=0)[0] for seed in (1, 2, 3)]
    for i in range(3):
        for j in range(i + 1, 3):
            for r in range(2):
                assert not np.array_equal(deals[i][r][0], deals[j][r][0])


def test_deal_of_a_round_does_not_depend_on_earlier_rounds():
    # the same seed and round number give the same deal even after differently sized earlier rounds
    deals_a, _ = record_deals(Rules.make(4, rounds=[1, 5]), seed=7, action_seed=0)
    deals_b, _ = record_deals(Rules.make(4, rounds=[3, 5]), seed=7, action_seed=3)
    np.testing.assert_array_equal(deals_a[1][0], deals_b[1][0])
    assert deals_a[1][1] == deals_b[1][1]


def test_same_seed_same_first_dealer_and_round_one_state():
    a, b = WizardGame(Rules.make(5), 123), WizardGame(Rules.make(5), 123)
    assert a.dealer == b.dealer
    assert_same_snapshot(snapshot(a), snapshot(b))


@pytest.mark.parametrize("seed", [-1, 1.5, "3", None, True])
def test_bad_seed_raises_value_error(seed):
    with pytest.raises(ValueError, match="seed"):
        WizardGame(Rules.make(4), seed)


# -- illegal and malformed actions -----------------------------------------------------------------


def trump_phase_game() -> WizardGame:
    game = WizardGame(Rules.make(4, rounds=[3]), find_seed(4, 3, WIZARD))
    assert game.phase == Phase.TRUMP
    return game


def bid_phase_game() -> WizardGame:
    game = WizardGame(Rules.make(4, rounds=[3]), seed=5)
    if game.phase == Phase.TRUMP:
        game.step(TRUMP_OFFSET)
    game.step(BID_OFFSET + 1)
    assert game.phase == Phase.BID
    return game


def play_phase_game() -> WizardGame:
    # seat 2 must follow hearts: Ac is held but illegal
    return position([["Ah"], ["5h"], ["Kh", "Ac"], ["2c"]], trump="s", leader=1, trick=["5h"], hand_size=2)


def over_game() -> WizardGame:
    game = WizardGame(Rules.make(3, rounds=[1, 2]), seed=8)
    scores = play_random_game(game, np.random.default_rng(0))
    assert len(scores) == 2 and game.is_over
    return game


MALFORMED = [-1, NUM_ACTIONS, NUM_ACTIONS + 1, 10**12, 2.0, 3.5, "3", None, [1], np.float64(1.0), True, False]

ILLEGAL_CASES = [
    ("trump", trump_phase_game, [BID_OFFSET + 0, CARD_OFFSET + parse_card("2c"), *MALFORMED]),
    ("bid", bid_phase_game, [BID_OFFSET + 4, BID_OFFSET + 20, TRUMP_OFFSET, CARD_OFFSET + WIZARD, *MALFORMED]),
    ("play", play_phase_game, [play("Ac"), play("Ah"), play("Wiz"), BID_OFFSET + 0, TRUMP_OFFSET + 3, *MALFORMED]),
]


@pytest.mark.parametrize("phase, make, actions", ILLEGAL_CASES, ids=[c[0] for c in ILLEGAL_CASES])
def test_illegal_action_raises_naming_player_and_legal_actions_and_changes_nothing(phase, make, actions):
    game = make()
    legal = game.legal_actions()
    assert legal
    before = snapshot(game)
    for action in actions:
        with pytest.raises(IllegalActionError) as err:
            game.step(action)
        message = str(err.value)
        assert f"seat {game.current}" in message
        for a in legal:
            assert action_name(a) in message, (action, message)
        assert_same_snapshot(before, snapshot(game))


def test_illegal_action_message_uses_the_actor_name():
    game = play_phase_game()
    with pytest.raises(IllegalActionError, match="player_2"):
        game.step(play("Ac"), actor="player_2")


def test_illegal_action_message_does_not_list_illegal_cards_as_legal():
    game = play_phase_game()
    with pytest.raises(IllegalActionError) as err:
        game.step(play("Ac"))
    listed = str(err.value).split("legal:")[-1]
    assert "play Kh" in listed
    assert "play Ac" not in listed


def test_illegal_action_error_is_a_value_error():
    assert issubclass(IllegalActionError, ValueError)
    with pytest.raises(ValueError):
        play_phase_game().step(-1)


def test_action_after_game_over_raises_and_changes_nothing():
    game = over_game()
    before = snapshot(game)
    for action in (0, CARD_OFFSET, TRUMP_OFFSET, None):
        with pytest.raises(IllegalActionError, match="over"):
            game.step(action)
    assert_same_snapshot(before, snapshot(game))


@pytest.mark.parametrize("wrap", [np.int64, np.int32, np.int8, np.uint8, np.array], ids=["int64", "int32", "int8", "uint8", "0-d array"])
def test_numpy_integer_actions_are_accepted(wrap):
    reference, game = play_phase_game(), play_phase_game()
    reference.step(play("Kh"))
    game.step(wrap(play("Kh")))
    assert_same_snapshot(snapshot(reference), snapshot(game))


# -- bid visibility --------------------------------------------------------------------------------


def expected_visible(mode: str, phase: Phase, observer: int, seat: int, made: bool) -> bool:
    """docs/rules.md#variants: open bids are seen at once; hidden ones when play starts; secret ones at the end."""
    if not made:
        return False
    if observer == seat or mode == "open" or phase == Phase.OVER:
        return True
    if mode == "hidden":
        return phase == Phase.PLAY
    return False


def check_visibility(game: WizardGame, mode: str) -> None:
    n = game.num_players
    for observer in range(n):
        seen = decode(observe(game, observer))["bid_known"]
        for seat in range(n):
            want = expected_visible(mode, game.phase, observer, seat, game.bids[seat] >= 0)
            assert game.bid_visible(observer, seat) == want, (mode, game.phase, observer, seat)
            assert seen[(seat - observer) % n] == want


@pytest.mark.parametrize("mode", ["open", "hidden", "secret"])
def test_bid_visibility_over_the_phases(mode):
    game = WizardGame(Rules.make(4, rounds=[2, 1], bidding=mode), seed=17)
    rng = np.random.default_rng(1)
    phases_seen = set()
    while not game.is_over:
        check_visibility(game, mode)
        phases_seen.add(game.phase)
        round_before = game.round_index
        game.step(int(rng.choice(game.legal_actions())))
        if game.round_index != round_before:
            assert not any(game.bid_visible(o, s) for o in range(4) for s in range(4))  # a new round: no bids
    check_visibility(game, mode)
    assert all(game.bid_visible(o, s) for o in range(4) for s in range(4))
    assert {Phase.BID, Phase.PLAY} <= phases_seen


def test_hidden_bids_are_all_revealed_when_the_dealer_bids():
    game = WizardGame(Rules.make(3, rounds=[2], bidding="hidden"), seed=4)
    if game.phase == Phase.TRUMP:
        game.step(TRUMP_OFFSET)
    first = game.current
    game.step(BID_OFFSET + 2)
    game.step(BID_OFFSET + 1)
    observer = game.dealer
    assert not game.bid_visible(observer, first)
    game.step(BID_OFFSET + 0)
    assert game.phase == Phase.PLAY
    assert game.bid_visible(observer, first)
    assert decode(observe(game, observer))["bids"][(first - observer) % 3] == 2


# -- foresight -------------------------------------------------------------------------------------


def test_foresight_applies_only_to_one_card_rounds():
    game = WizardGame(Rules.make(4, rounds=[1, 2, 1], foresight=True), seed=12)
    rng = np.random.default_rng(0)
    checked = []
    while not game.is_over:
        if not checked or checked[-1] != game.round_index:
            checked.append(game.round_index)
            for observer in range(4):
                view = decode(observe(game, observer))
                others = [(observer + k) % 4 for k in range(1, 4)]
                if game.hand_size == 1:
                    assert not view["hand"].any()
                    assert not view["foresight"][0].any()
                    for k, seat in enumerate(others, start=1):
                        np.testing.assert_array_equal(view["foresight"][k], game.hands[seat])
                else:
                    np.testing.assert_array_equal(view["hand"], game.hands[observer])
                    assert not view["foresight"].any()
        game.step(int(rng.choice(game.legal_actions())))
    assert checked == [0, 1, 2]


def test_one_card_round_without_foresight_shows_own_card_only():
    game = WizardGame(Rules.make(4, rounds=[1]), seed=12)
    for observer in range(4):
        view = decode(observe(game, observer))
        np.testing.assert_array_equal(view["hand"], game.hands[observer])
        assert not view["foresight"].any()


def test_foresight_round_is_played_normally():
    game = WizardGame(Rules.make(3, rounds=[1], foresight=True), seed=2)
    scores = None
    rng = np.random.default_rng(5)
    while not game.is_over:
        scores = game.step(int(rng.choice(game.legal_actions())))
    assert scores is not None and game.tricks_won.sum() == 1
