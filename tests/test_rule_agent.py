"""RuleAgent: legal and reproducible in every configuration, sensible in set-up spots, far ahead of random."""

from __future__ import annotations

import numpy as np
import pytest

from wizard_env.agents import RandomAgent, RuleAgent
from wizard_env.agents.rule_bid import best_bid, foresight_chance, odds_factor, odds_scaled
from wizard_env.agents.rule_view import LAYOUT, pairwise_sum, read_view
from wizard_env.engine.cards import NO_CARD, NO_SUIT, SUITS, WIZARD, parse_card
from wizard_env.engine.game import BID_OFFSET, CARD_OFFSET, TRUMP_OFFSET, Phase, WizardGame, deal
from wizard_env.engine.observation import observe
from wizard_env.engine.rules import MAX_HAND_SIZE, Rules, round_score, trick_winner, trump_from_card
from wizard_env.engine.simulate import play_game


class CheckedRuleAgent(RuleAgent):
    """A RuleAgent that fails the test the moment it picks an action outside the mask."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        action = super().act(observation, action_mask)
        assert isinstance(action, int) and action_mask[action] == 1
        return action


def spot(hand: list[str], turned: str | None, trick: tuple[str, ...] = (), bids: tuple[int, ...] | None = None,
         players: int = 3, phase: Phase = Phase.PLAY, **variant) -> WizardGame:
    """A one-round game at its first trick: seat 0 leads, ``trick`` is already played, the acting seat holds ``hand``."""
    game = WizardGame(Rules.make(players, rounds=[len(hand)], **variant), seed=0)
    seat = len(trick) if phase == Phase.PLAY else 0
    game.dealer, game.leader, game.current = players - 1, 0, seat
    game.hands[:] = 0
    for name in hand:
        game.hands[seat, parse_card(name)] += 1
    game.trump_card = parse_card(turned) if turned else NO_CARD
    game.trump = trump_from_card(game.trump_card)
    game.played[:] = 0
    game.trick_cards = [parse_card(c) for c in trick]
    for s, card in enumerate(game.trick_cards):
        game.played[s, card] += 1
    game.bids[:] = -1 if bids is None else bids
    game.tricks_won[:] = 0
    game.phase = phase
    return game


def decide(game: WizardGame) -> int:
    """The RuleAgent's action for the acting seat, checked against the mask."""
    return CheckedRuleAgent(0).act(observe(game, game.current), game.legal_mask())


def played_card(game: WizardGame) -> int:
    """The card type the RuleAgent plays in ``game``."""
    action = decide(game)
    assert CARD_OFFSET <= action < TRUMP_OFFSET
    return action - CARD_OFFSET


VARIANTS = [
    {},
    {"bidding": "hidden"},
    {"bidding": "secret"},
    {"bid_total_rule": True},
    {"foresight": True, "rounds": 4},
    {"rounds": "amigo"},
]


@pytest.mark.parametrize("players", [3, 4, 5, 6])
@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: ",".join(f"{k}={x}" for k, x in v.items()) or "standard")
def test_only_legal_actions_in_full_games(players: int, variant: dict):
    rules = Rules.make(players, **{"rounds": 6, **variant})
    agents = [CheckedRuleAgent(seat) for seat in range(players - 1)] + [RandomAgent(99)]
    result = play_game(rules, agents, seed=players)
    assert result.game.is_over and result.rounds == rules.num_rounds


def test_only_legal_actions_in_a_standard_game_with_turned_wizards():
    rules = Rules.make(3)
    seed = next(s for s in range(100) if any(deal(s, r, 3, size)[1] == WIZARD for r, size in enumerate(rules.hand_sizes)))
    result = play_game(rules, [CheckedRuleAgent(s) for s in range(3)], seed=seed, record=True)
    assert any(r["trump_card"] == "Wiz" for r in result.game.log)
    assert all(r["trump"] is not None for r in result.game.log if r["trump_card"] == "Wiz")


def test_same_seeds_give_the_same_games():
    def totals() -> list[list[int]]:
        return [play_game(Rules.make(4, rounds=8), [RuleAgent(s) for s in range(4)], seed).totals.tolist() for seed in (1, 2)]

    assert totals() == totals()


def test_three_wizards_in_a_three_card_round_bid_three():
    game = spot(["Wiz", "Wiz", "Wiz"], "2c", phase=Phase.BID)
    assert decide(game) == BID_OFFSET + 3


def test_low_cards_without_trump_bid_zero():
    game = spot(["2c", "3d", "4d", "2h"], "Ks", phase=Phase.BID)
    assert decide(game) == BID_OFFSET + 0


def test_strong_hand_bids_most_tricks():
    game = spot(["Wiz", "As", "Ks", "Qs", "Ah"], "2s", phase=Phase.BID)
    assert decide(game) - BID_OFFSET >= 4


def test_dealer_under_the_bid_total_rule_takes_the_nearest_legal_bid():
    game = spot(["Wiz", "Wiz", "Wiz"], "2c", players=3, phase=Phase.BID, bid_total_rule=True)
    game.current, game.bids[:2] = game.dealer, [0, 0]  # a bid of 3 would make the total equal 3 tricks
    game.hands[[0, game.dealer]] = game.hands[[game.dealer, 0]]
    assert game.legal_mask()[BID_OFFSET + 3] == 0
    assert decide(game) == BID_OFFSET + 2


def test_dealer_names_the_suit_the_hand_is_strongest_in():
    game = spot(["Ah", "Kh", "9h", "4h", "2c", "Td"], "Wiz", phase=Phase.TRUMP)
    game.trump, game.current = NO_SUIT, game.dealer
    game.hands[[0, game.dealer]] = game.hands[[game.dealer, 0]]
    assert decide(game) == TRUMP_OFFSET + SUITS.index("h")


@pytest.mark.parametrize("others, bid", [(("Wiz", "Wiz"), 0), (("2c", "3d"), 1)])
def test_foresight_bid_follows_the_visible_cards(others: tuple[str, str], bid: int):
    game = spot(["5c"], "7h", phase=Phase.BID, foresight=True)
    for seat, name in enumerate(others, start=1):
        game.hands[seat, parse_card(name)] = 1
    assert decide(game) == BID_OFFSET + bid


def test_met_bid_ducks_with_the_highest_losing_card():
    game = spot(["As", "Qs", "5s", "9c"], "2h", trick=("Ks",), bids=(1, 0, 1))
    card = played_card(game)
    assert trick_winner(game.trick_cards + [card], game.trump) != 1
    assert card == parse_card("Qs")


def test_met_bid_throws_a_jester_rather_than_win():
    game = spot(["Wiz", "Ah", "Jes"], "2h", trick=("3h",), bids=(1, 0, 1))
    assert played_card(game) == parse_card("Jes")


def test_met_bid_forced_to_win_sheds_the_highest_card():
    game = spot(["As", "Ts"], "2h", trick=("3s", "5s"), bids=(1, 1, 0))
    assert played_card(game) == parse_card("As")


def test_short_of_the_bid_wins_with_the_cheapest_winning_card_when_last():
    game = spot(["Ks", "Ts", "Ah", "2c"], "2h", trick=("5s", "9s"), bids=(1, 1, 1))
    assert played_card(game) == parse_card("Ts")


def test_short_of_the_bid_plays_the_wizard_when_it_must_win():
    game = spot(["Wiz", "2d"], "2h", trick=("As",), bids=(0, 2, 0))
    assert played_card(game) == WIZARD


def test_short_of_the_bid_leads_a_sure_winner():
    game = spot(["Wiz", "2d", "3c"], "2h", bids=(1, 0, 0))
    assert played_card(game) == WIZARD


def test_met_bid_leads_a_low_card():
    game = spot(["As", "Ah", "2d"], "Kh", bids=(0, 1, 1))
    assert played_card(game) == parse_card("2d")


def test_beats_random_agents_by_a_wide_margin():
    margins = []
    for seed in range(30):
        seat = seed % 3
        agents = [RuleAgent(seed) if s == seat else RandomAgent(seed * 3 + s) for s in range(3)]
        totals = play_game(Rules.make(3, rounds=10), agents, seed).totals
        margins.append(totals[seat] - (totals.sum() - totals[seat]) / 2)
    assert np.mean(margins) > 150
    assert np.mean(np.array(margins) > 0) > 0.8


# -- the compiled parts against references computed another way --------------------------------------

def test_pairwise_sum_adds_as_numpy_sums_a_row():
    rng = np.random.default_rng(0)
    for count in range(1, 61):
        values = rng.uniform(0, 1, (4, count)) * 10.0 ** rng.integers(-6, 6, (4, count))
        assert [pairwise_sum(row, count) for row in values] == values.sum(axis=1).tolist()


def test_best_bid_has_the_best_expected_score_over_every_outcome():
    rng = np.random.default_rng(1)
    for m in range(1, 6):
        chances = rng.uniform(0, 1, m)
        legal = rng.uniform(size=MAX_HAND_SIZE + 1) < 0.7
        legal[rng.integers(m + 1)] = True
        expected = np.zeros(MAX_HAND_SIZE + 1)
        for wins in np.ndindex(*(2,) * m):  # every outcome, card by card
            chance = np.prod([c if w else 1 - c for c, w in zip(chances, wins)])
            expected += chance * np.array([round_score(b, sum(wins)) for b in range(MAX_HAND_SIZE + 1)])
        bid = best_bid(chances, legal)
        assert legal[bid] and expected[bid] >= expected[legal].max() - 1e-9


@pytest.mark.parametrize("others", [("Wiz", "2c"), ("Jes", "Kh"), ("9c", "Ad")])
def test_foresight_chance_is_the_share_of_unseen_cards_that_win(others: tuple[str, str]):
    game = spot(["5c"], "7h", phase=Phase.BID, foresight=True)
    for seat, name in enumerate(others, start=1):
        game.hands[seat, parse_card(name)] = 1
    v = read_view(observe(game, game.current)[None], 0, LAYOUT)
    order = [(game.dealer + 1 + k) % 3 for k in range(3)]  # seats in play order; I am seat 0
    wins = 0
    for card, count in enumerate(v.unseen):
        cards = [card if seat == 0 else parse_card(others[seat - 1]) for seat in order]
        wins += count * (order[trick_winner(cards, game.trump)] == 0)
    assert foresight_chance(v, v.trump) == pytest.approx(wins / v.unseen.sum(), abs=1e-12)


def test_odds_factor_makes_the_weighted_chances_add_up_to_the_total():
    rng = np.random.default_rng(2)
    for rows in (1, 7, 40):  # several halvings at once for few rows, one at a time for many
        chances, weights = rng.uniform(0.01, 0.98, (rows, 52)), rng.uniform(0, 1, (rows, 52))
        counts = rng.integers(1, 53, rows)
        totals = np.array([rng.uniform(0.2, 0.8) * w[:c].sum() for w, c in zip(weights, counts)])
        factor = odds_factor(chances, weights, counts, totals)
        for i in range(rows):
            scaled = odds_scaled(chances[i, : counts[i]], factor[i])
            assert (weights[i, : counts[i]] * scaled).sum() == pytest.approx(totals[i], rel=1e-6)
