"""Rule scenarios written from docs/rules.md, one named test per rule and edge case, each linked from its row there."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from helpers import (
    find_seed,
    legal_card_names,
    oracle_score,
    play,
    position,
)
from wizard_env import BID_OFFSET, NUM_ACTIONS, TRUMP_OFFSET, Phase, Rules, WizardGame
from wizard_env.engine.cards import (
    CARD_RANK,
    CARD_SUIT,
    DECK,
    DECK_SIZE,
    JESTER,
    NO_CARD,
    NO_SUIT,
    NUM_CARD_TYPES,
    WIZARD,
    card_name,
    parse_card,
)
from wizard_env.engine.rules import legal_bids, round_score, trick_winner, winners

STANDARD_ROUNDS = {3: 20, 4: 15, 5: 12, 6: 10}
PLAYER_COUNTS = (3, 4, 5, 6)


def names(trick: list[str]) -> list[int]:
    return [parse_card(c) for c in trick]


def start_bidding(game: WizardGame, suit: int = 0) -> WizardGame:
    """Name a trump if a Wizard was turned, so the game is in the bidding phase."""
    if game.phase == Phase.TRUMP:
        game.step(TRUMP_OFFSET + suit)
    assert game.phase == Phase.BID
    return game


def round_starts(rules: Rules, seed: int, action_seed: int = 0) -> list[dict]:
    """Play a random game and record what each round looked like when it was dealt."""
    game = WizardGame(rules, seed)
    rng = np.random.default_rng(action_seed)
    starts = []
    while not game.is_over:
        if not starts or starts[-1]["round"] != game.round_index:
            starts.append(
                {
                    "round": game.round_index,
                    "hand_sizes": game.hands.sum(axis=1).tolist(),
                    "hands": game.hands.copy(),
                    "trump_card": game.trump_card,
                    "trump": game.trump,
                    "dealer": game.dealer,
                    "phase": game.phase,
                }
            )
        game.step(int(rng.choice(game.legal_actions())))
    return starts


# -- deck ------------------------------------------------------------------------------------------


def test_deck_has_60_cards():
    assert len(DECK) == 60
    assert DECK_SIZE == 60


def test_deck_has_four_wizards_and_four_jesters():
    assert int(np.sum(DECK == WIZARD)) == 4
    assert int(np.sum(DECK == JESTER)) == 4
    assert card_name(WIZARD) == "Wiz" and card_name(JESTER) == "Jes"


def test_deck_has_13_distinct_cards_in_each_of_four_suits():
    suited = [int(c) for c in DECK if c not in (WIZARD, JESTER)]
    assert len(suited) == 52
    assert len(set(suited)) == 52
    for suit in "cdhs":
        in_suit = [c for c in suited if card_name(c)[1] == suit]
        assert len(in_suit) == 13
        assert sorted(card_name(c)[0] for c in in_suit) == sorted("23456789TJQKA")


def test_card_ranks_run_from_2_to_ace():
    assert CARD_RANK[parse_card("2h")] < CARD_RANK[parse_card("Th")] < CARD_RANK[parse_card("Jh")]
    assert CARD_RANK[parse_card("Jh")] < CARD_RANK[parse_card("Qh")] < CARD_RANK[parse_card("Kh")] < CARD_RANK[parse_card("Ah")]
    assert CARD_SUIT[parse_card("Ah")] == CARD_SUIT[parse_card("2h")] != CARD_SUIT[parse_card("2s")]


# -- players -------------------------------------------------------------------------------------


def test_three_to_six_players_and_no_other_count():
    for n in PLAYER_COUNTS:
        assert Rules.make(n).num_players == n
        assert WizardGame(Rules.make(n, rounds=1), seed=0).hands.shape[0] == n
    for n in (1, 2, 7, 8):
        with pytest.raises(ValueError, match="3 to 6 players"):
            Rules.make(n)


# -- round schedules -------------------------------------------------------------------------------


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_standard_game_deals_r_cards_in_round_r(n):
    rules = Rules.make(n)
    assert rules.num_rounds == STANDARD_ROUNDS[n]
    assert rules.hand_sizes == tuple(range(1, STANDARD_ROUNDS[n] + 1))


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_standard_game_plays_every_round_and_last_round_deals_whole_deck_without_trump(n):
    starts = round_starts(Rules.make(n), seed=11 + n)
    assert [s["round"] for s in starts] == list(range(STANDARD_ROUNDS[n]))
    for r, start in enumerate(starts):
        assert start["hand_sizes"] == [r + 1] * n
    last = starts[-1]
    np.testing.assert_array_equal(last["hands"].sum(axis=0), np.bincount(DECK, minlength=NUM_CARD_TYPES))
    assert last["trump_card"] == NO_CARD
    assert last["trump"] == NO_SUIT
    assert last["phase"] == Phase.BID


@pytest.mark.parametrize(
    "n, sizes",
    [
        (3, (2, 4, 6, 8, 10, 12, 14, 16, 18, 20)),
        (4, (1, 3, 5, 7, 9, 11, 12, 13, 14, 15)),
        (5, (2, 4, 5, 6, 7, 8, 9, 10, 11, 12)),
        (6, (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)),
    ],
)
def test_amigo_schedule(n, sizes):
    rules = Rules.make(n, rounds="amigo")
    assert rules.hand_sizes == sizes
    assert rules.num_rounds == 10


def test_amigo_game_deals_the_listed_hand_sizes():
    starts = round_starts(Rules.make(4, rounds="amigo"), seed=3)
    assert [s["hand_sizes"][0] for s in starts] == [1, 3, 5, 7, 9, 11, 12, 13, 14, 15]
    assert starts[-1]["trump_card"] == NO_CARD  # 4 x 15 deals the whole deck


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_rounds_k_plays_rounds_1_to_k(n):
    assert Rules.make(n, rounds=5).hand_sizes == (1, 2, 3, 4, 5)
    assert Rules.make(n, rounds=1).hand_sizes == (1,)
    assert Rules.make(n, rounds=STANDARD_ROUNDS[n]).hand_sizes == Rules.make(n).hand_sizes


def test_explicit_round_list_is_played_in_order():
    rules = Rules.make(5, rounds=[3, 1, 12, 2])
    assert rules.hand_sizes == (3, 1, 12, 2)
    starts = round_starts(rules, seed=5)
    assert [s["hand_sizes"] for s in starts] == [[3] * 5, [1] * 5, [12] * 5, [2] * 5]


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_round_that_deals_whole_deck_has_no_trump(n):
    game = WizardGame(Rules.make(n, rounds=[DECK_SIZE // n]), seed=1)
    assert game.trump_card == NO_CARD
    assert game.trump == NO_SUIT
    assert game.phase == Phase.BID
    np.testing.assert_array_equal(game.hands.sum(axis=0), np.bincount(DECK, minlength=NUM_CARD_TYPES))


# -- dealer ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_first_dealer_is_a_seeded_random_seat(n):
    rules = Rules.make(n, rounds=2)
    dealers = [WizardGame(rules, seed).dealer for seed in range(200)]
    assert dealers == [WizardGame(rules, seed).dealer for seed in range(200)]
    assert set(dealers) == set(range(n))


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_deal_passes_to_the_left_every_round(n):
    starts = round_starts(Rules.make(n, rounds=[1, 2, 1, 2, 1, 1, 1, 1]), seed=21)
    first = starts[0]["dealer"]
    assert [s["dealer"] for s in starts] == [(first + r) % n for r in range(8)]


# -- trump -----------------------------------------------------------------------------------------


def test_turned_suited_card_sets_trump():
    for turned in ("7h", "Ac", "2d", "Ks"):
        seed = find_seed(4, 3, parse_card(turned))
        game = WizardGame(Rules.make(4, rounds=[3]), seed)
        assert game.trump_card == parse_card(turned)
        assert game.trump == "cdhs".index(turned[1])
        assert game.phase == Phase.BID


def test_turned_jester_means_no_trump():
    game = WizardGame(Rules.make(4, rounds=[3]), find_seed(4, 3, JESTER))
    assert game.trump_card == JESTER
    assert game.trump == NO_SUIT
    assert game.phase == Phase.BID
    assert game.current == (game.dealer + 1) % 4


@pytest.mark.parametrize("suit", range(4))
def test_turned_wizard_dealer_names_trump_then_bidding_starts_left_of_dealer(suit):
    game = WizardGame(Rules.make(5, rounds=[4]), find_seed(5, 4, WIZARD))
    assert game.trump_card == WIZARD
    assert game.phase == Phase.TRUMP
    assert game.current == game.dealer
    game.step(TRUMP_OFFSET + suit)
    assert game.trump == suit
    assert game.phase == Phase.BID
    assert game.current == (game.dealer + 1) % 5


def test_turned_wizard_does_not_offer_no_trump():
    game = WizardGame(Rules.make(3, rounds=[2]), find_seed(3, 2, WIZARD))
    assert game.legal_actions() == [TRUMP_OFFSET, TRUMP_OFFSET + 1, TRUMP_OFFSET + 2, TRUMP_OFFSET + 3]
    assert NUM_ACTIONS == TRUMP_OFFSET + 4  # no fifth "no trump" action exists at all


# -- bidding ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_bidding_starts_left_of_dealer_and_ends_with_dealer(n):
    game = start_bidding(WizardGame(Rules.make(n, rounds=[2]), seed=n))
    order = []
    while game.phase == Phase.BID:
        order.append(game.current)
        game.step(BID_OFFSET + 0)
    assert order == [(game.dealer + 1 + i) % n for i in range(n)]
    assert order[-1] == game.dealer
    assert game.phase == Phase.PLAY


@pytest.mark.parametrize("hand_size", [1, 3, 15])
def test_bids_range_from_zero_to_hand_size(hand_size):
    game = start_bidding(WizardGame(Rules.make(4, rounds=[hand_size]), seed=2))
    while game.phase == Phase.BID:
        assert game.legal_actions() == [BID_OFFSET + b for b in range(hand_size + 1)]
        game.step(BID_OFFSET + hand_size)


def bid_until_dealer(game: WizardGame, bids: list[int]) -> None:
    for bid in bids:
        assert game.current != game.dealer
        game.step(BID_OFFSET + bid)
    assert game.current == game.dealer


@pytest.mark.parametrize("earlier, forbidden", [([0, 0, 0], 3), ([1, 0, 0], 2), ([1, 1, 1], 0), ([2, 0, 1], 0), ([0, 1, 0], 2)])
def test_bid_total_rule_forbids_dealer_the_bid_that_makes_total_equal_tricks(earlier, forbidden):
    game = start_bidding(WizardGame(Rules.make(4, rounds=[3], bid_total_rule=True), seed=4))
    bid_until_dealer(game, earlier)
    assert game.legal_actions() == [BID_OFFSET + b for b in range(4) if b != forbidden]
    assert sum(earlier) + forbidden == 3


def test_bid_total_rule_does_not_restrict_players_before_the_dealer():
    game = start_bidding(WizardGame(Rules.make(3, rounds=[3], bid_total_rule=True), seed=4))
    game.step(BID_OFFSET + 3)  # now a 0 from the next player would make the total 3: still allowed
    assert game.current != game.dealer
    assert game.legal_actions() == [BID_OFFSET + b for b in range(4)]


def test_bid_total_rule_no_restriction_when_total_already_exceeds_tricks():
    game = start_bidding(WizardGame(Rules.make(4, rounds=[3], bid_total_rule=True), seed=4))
    bid_until_dealer(game, [3, 2, 0])
    assert game.legal_actions() == [BID_OFFSET + b for b in range(4)]


def test_without_bid_total_rule_dealer_may_make_total_equal_tricks():
    game = start_bidding(WizardGame(Rules.make(4, rounds=[3]), seed=4))
    bid_until_dealer(game, [1, 0, 0])
    assert BID_OFFSET + 2 in game.legal_actions()
    game.step(BID_OFFSET + 2)
    assert game.bids.sum() == 3


@pytest.mark.parametrize("bidding", ["hidden", "secret"])
def test_bid_total_rule_is_refused_beside_hidden_or_secret_bidding(bidding):
    # the dealer could not see the bids the rule counts
    with pytest.raises(ValueError, match="bid_total_rule needs open bidding"):
        Rules.make(4, bidding=bidding, bid_total_rule=True)
    assert Rules.make(4, bidding="open", bid_total_rule=True).bid_total_rule


def test_legal_bids_function_restricts_only_the_last_bidder():
    assert legal_bids(2, [1, 0], is_last=False, bid_total_rule=True)[:3].all()
    assert legal_bids(2, [1, 0], is_last=True, bid_total_rule=True)[:3].tolist() == [True, False, True]
    assert legal_bids(2, [1, 0], is_last=True, bid_total_rule=False)[:3].all()
    assert not legal_bids(2, [], is_last=True, bid_total_rule=True)[3:].any()


# -- following suit --------------------------------------------------------------------------------


def test_must_follow_suit_led():
    game = position([["5h"], ["Kh", "2h", "Ac", "3s"], ["2c"], ["3c"]], trump="s", trick=["5h"], hand_size=4)
    assert legal_card_names(game) == {"Kh", "2h"}


def test_wizard_or_jester_may_be_played_instead_of_following():
    game = position([[], ["Kh", "Wiz", "Jes", "Ac"], ["2c"], ["3c"]], trump="c", trick=["5h"], hand_size=4)
    assert legal_card_names(game) == {"Kh", "Wiz", "Jes"}


def test_player_who_cannot_follow_may_play_anything():
    game = position([[], ["Kd", "Ac", "3s", "Jes"], ["2c"], ["3c"]], trump="c", trick=["5h"], hand_size=4)
    assert legal_card_names(game) == {"Kd", "Ac", "3s", "Jes"}


def test_leader_may_play_anything():
    game = position([["Kd", "Ac", "3s", "Wiz", "Jes"], ["2c"], ["3c"]], trump="c")
    assert legal_card_names(game) == {"Kd", "Ac", "3s", "Wiz", "Jes"}


def test_wizard_led_every_other_player_may_play_anything():
    game = position([[], ["Kh", "2c", "Jes"], ["Ah", "2d"]], trump="h", trick=["Wiz"], hand_size=3)
    assert legal_card_names(game) == {"Kh", "2c", "Jes"}
    game.step(play("2c"))  # a club after a Wizard lead sets no suit either
    assert legal_card_names(game) == {"Ah", "2d"}


def test_jester_led_next_non_jester_card_sets_the_suit():
    game = position([[], ["5h", "2c"], ["Kh", "2c", "3s"], ["Qs", "Wiz"]], trump="s", trick=["Jes"], hand_size=3)
    assert legal_card_names(game) == {"5h", "2c"}  # nothing set yet: anything
    game.step(play("5h"))
    assert legal_card_names(game) == {"Kh"}  # hearts now to follow
    game.step(play("Kh"))
    assert legal_card_names(game) == {"Qs", "Wiz"}  # no hearts: anything


def test_jesters_led_keep_the_suit_open():
    game = position([[], [], ["Kh", "2c"], ["Qs"]], trump="s", trick=["Jes", "Jes"], hand_size=2)
    assert legal_card_names(game) == {"Kh", "2c"}


def test_jester_led_then_wizard_rest_may_play_anything():
    game = position([[], [], ["Kh", "2c", "Jes"], ["Qs"]], trump="s", trick=["Jes", "Wiz"], hand_size=3)
    assert legal_card_names(game) == {"Kh", "2c", "Jes"}


# -- winner of a trick -----------------------------------------------------------------------------


def test_all_jesters_the_first_jester_wins():
    assert trick_winner(names(["Jes", "Jes", "Jes", "Jes"]), 0) == 0
    game = position([["Jes"], ["Jes"], ["Jes"]], trump="h", leader=2)
    for _ in range(3):
        game.step(play("Jes"))
    assert game.tricks_won.tolist() == [0, 0, 1]  # seat 2 led the first Jester


def test_first_wizard_wins_over_later_wizards():
    assert trick_winner(names(["5h", "Wiz", "Wiz", "Ah"]), 2) == 1
    assert trick_winner(names(["Jes", "Wiz", "Wiz"]), 2) == 1


def test_wizard_beats_trump():
    assert trick_winner(names(["Ah", "Wiz", "Ks"]), 3) == 1


def test_highest_trump_wins():
    assert trick_winner(names(["Ah", "2s", "Ks", "Kh"]), 3) == 2


def test_low_trump_beats_higher_card_of_suit_led():
    assert trick_winner(names(["Ah", "2s", "Kh"]), 3) == 1


def test_highest_card_of_suit_led_wins_without_trump():
    assert trick_winner(names(["Th", "2c", "Qh", "3h"]), 3) == 2
    assert trick_winner(names(["Th", "Ac", "Qh"]), NO_SUIT) == 2


def test_off_suit_high_card_loses():
    assert trick_winner(names(["2h", "Ad", "Ac"]), 3) == 0
    assert trick_winner(names(["2h", "As", "Ad"]), NO_SUIT) == 0


def test_jester_led_suit_is_set_by_the_next_card_for_the_winner():
    assert trick_winner(names(["Jes", "5h", "Ac", "3h"]), NO_SUIT) == 1
    assert trick_winner(names(["Jes", "Jes", "2d", "Kh"]), NO_SUIT) == 2


def test_jester_loses_to_any_card():
    assert trick_winner(names(["2c", "Jes", "Jes"]), 3) == 0
    assert trick_winner(names(["Jes", "Jes", "2c"]), 3) == 2


def test_wizard_after_jester_lead_wins():
    assert trick_winner(names(["Jes", "Wiz", "As"]), 3) == 1


# -- who leads -------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_first_trick_is_led_by_player_left_of_dealer(n):
    game = start_bidding(WizardGame(Rules.make(n, rounds=[3]), seed=30 + n))
    while game.phase == Phase.BID:
        game.step(BID_OFFSET + 1)
    assert game.phase == Phase.PLAY
    assert game.current == game.leader == (game.dealer + 1) % n


def test_trick_winner_leads_the_next_trick():
    # seat 3 leads; seat 1 wins with the trump and must lead the second trick
    game = position([["Ah", "2c"], ["3s", "4c"], ["Kh", "5c"], ["Qh", "6c"]], trump="s", leader=3)
    for seat, name in ((3, "Qh"), (0, "Ah"), (1, "3s"), (2, "Kh")):
        assert game.current == seat
        game.step(play(name))
    assert game.tricks_won.tolist() == [0, 1, 0, 0]
    assert game.current == game.leader == 1
    assert game.trick_cards == []


# -- scoring ---------------------------------------------------------------------------------------


def test_score_bid_4_took_4_is_60():
    assert round_score(4, 4) == 60


def test_score_bid_0_took_0_is_20():
    assert round_score(0, 0) == 20


def test_score_bid_5_took_3_is_minus_20():
    assert round_score(5, 3) == -20


def test_score_formula_for_every_bid_and_trick_count():
    for bid in range(21):
        for took in range(21):
            expected = 20 + 10 * took if bid == took else -10 * abs(bid - took)
            assert round_score(bid, took) == expected, (bid, took)


def test_round_end_scores_every_player_and_adds_to_totals():
    # one card each, spades trump: seat 2's 2s takes the trick
    game = position([["Ah"], ["Kh"], ["2s"]], trump="s", leader=0, bids=[1, 0, 0])
    game.totals[:] = [30, -10, 0]
    assert game.step(play("Ah")) is None
    assert game.step(play("Kh")) is None
    scores = game.step(play("2s"))
    assert scores.tolist() == [-10, 20, -10]
    assert game.totals.tolist() == [20, 10, -10]
    assert game.phase == Phase.OVER


def test_oracle_score_agrees_on_the_rules_examples():
    assert (oracle_score(4, 4), oracle_score(0, 0), oracle_score(5, 3)) == (60, 20, -20)


def test_highest_total_wins():
    assert winners([10, 50, 30]) == [1]


def test_tied_highest_totals_share_the_win():
    assert winners([40, 10, 40, -20]) == [0, 2]


def test_winner_may_have_a_negative_score():
    assert winners([-30, -10, -50]) == [1]


# -- configuration errors --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, why",
    [
        (dict(num_players=7), "3 to 6"),
        (dict(num_players=2), "3 to 6"),
        (dict(num_players=4, rounds=[16]), "does not fit"),
        (dict(num_players=6, rounds=[1, 11]), "does not fit"),
        (dict(num_players=4, rounds=[0]), "does not fit"),
        (dict(num_players=4, rounds=0), "1 to 15"),
        (dict(num_players=4, rounds=16), "1 to 15"),
        (dict(num_players=3, rounds=21), "1 to 20"),
        (dict(num_players=4, rounds=[]), "empty"),
        (dict(bidding="hidden", bid_total_rule=True), "open bidding"),
        (dict(bidding="secret", bid_total_rule=True), "open bidding"),
        (dict(bidding="closed"), "unknown bidding"),
        (dict(bidding=None), "unknown bidding"),
        (dict(rounds="long"), "unknown rounds"),
        (dict(num_players=4.0), "integer"),
        (dict(num_players="4"), "integer"),
        (dict(num_players=True), "integer"),
        (dict(rounds=2.5), "rounds"),
        (dict(rounds=None), "rounds"),
        (dict(rounds=True), "rounds"),
        (dict(rounds=[1, 2.0]), "not an integer"),
        (dict(rounds=[1, "2"]), "not an integer"),
        (dict(rounds=[[1]]), "not an integer"),
        (dict(bid_total_rule="yes"), "True or False"),
        (dict(foresight="no"), "True or False"),
    ],
)
def test_impossible_configuration_raises_value_error_saying_why(kwargs, why):
    with pytest.raises(ValueError, match=why):
        Rules.make(**kwargs)
    direct = {("hand_sizes" if key == "rounds" else key): value for key, value in kwargs.items()}
    with pytest.raises(ValueError, match=why):  # building the dataclass directly checks the same
        Rules(**direct)


def test_direct_construction_equals_make_and_defaults_to_the_standard_game():
    assert Rules() == Rules.make() and Rules().hand_sizes == tuple(range(1, 16))
    assert Rules(3, [2, 3], "hidden", foresight=True) == Rules.make(3, [2, 3], "hidden", foresight=True)
    assert Rules(6).hand_sizes == tuple(range(1, 11))


def test_numpy_integers_are_accepted_as_configuration():
    rules = Rules.make(np.int64(5), rounds=[np.int32(2), np.int64(3)])
    assert rules.num_players == 5 and rules.hand_sizes == (2, 3)



def test_the_number_of_rounds_is_bounded_before_the_round_counter_can_wrap():
    from wizard_env.engine.rules import MAX_ROUNDS

    assert Rules.make(3, [1] * MAX_ROUNDS).num_rounds == MAX_ROUNDS
    for rounds in ([1] * 32_769, [1] * (MAX_ROUNDS + 1), itertools.repeat(1)):
        with pytest.raises(ValueError, match=f"a game has at most {MAX_ROUNDS} rounds"):
            Rules.make(3, rounds)
