"""Property tests: random legal games, for random configurations, keep every invariant of docs/rules.md."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import wizard_env
from helpers import deck_counts, oracle_legal, oracle_score, oracle_winner
from wizard_env import BID_OFFSET, CARD_OFFSET, TRUMP_OFFSET, Phase, Rules, WizardGame
from wizard_env.engine.cards import DECK_SIZE, NO_CARD, NO_SUIT, SUITS, WIZARD, card_name, hand_names

SEEDS = st.integers(0, 2**40)


@st.composite
def configs(draw) -> tuple[int, dict]:
    """A player count and short-game options (any variant, rounds as a small k or a short list)."""
    n = draw(st.integers(3, 6))
    most = DECK_SIZE // n
    rounds = draw(st.one_of(st.integers(1, 3), st.lists(st.integers(1, most), min_size=1, max_size=2)))
    bidding = draw(st.sampled_from(["open", "hidden", "secret"]))
    bid_total_rule = bidding == "open" and draw(st.booleans())
    options = dict(rounds=rounds, bidding=bidding, bid_total_rule=bid_total_rule, foresight=draw(st.booleans()))
    return n, options


def trump_letter(trump: int) -> str | None:
    return None if trump == NO_SUIT else SUITS[trump]


def check_round_start(game: WizardGame) -> np.ndarray:
    """Check a fresh deal; return the dealt hands."""
    n, size = game.num_players, game.hand_size
    assert game.hands.sum(axis=1).tolist() == [size] * n
    assert not game.played.any() and not game.tricks_won.any() and (game.bids == -1).all()
    assert game.trick_cards == []
    in_play = game.hands.sum(axis=0).astype(np.int64)
    if n * size == DECK_SIZE:
        assert game.trump_card == NO_CARD and game.trump == NO_SUIT
    else:
        assert game.trump_card != NO_CARD
        in_play[game.trump_card] += 1
    assert (in_play <= deck_counts()).all(), "a card appears more often than the deck holds it"
    assert in_play.sum() == min(n * size + 1, DECK_SIZE)
    assert game.dealer == (game.first_dealer + game.round_index) % n
    if game.trump_card == WIZARD:
        assert game.phase == Phase.TRUMP and game.current == game.dealer
    else:
        assert game.phase == Phase.BID and game.current == (game.dealer + 1) % n
    return game.hands.copy()


def check_mask(game: WizardGame, mask: np.ndarray) -> None:
    """The mask against an independent reading of the rules."""
    legal = set(np.flatnonzero(mask).tolist())
    if game.phase == Phase.TRUMP:
        assert legal == {TRUMP_OFFSET + s for s in range(4)}
    elif game.phase == Phase.BID:
        allowed = set(range(game.hand_size + 1))
        if game.rules.bid_total_rule and game.current == game.dealer:
            allowed.discard(game.hand_size - int(game.bids[game.bids >= 0].sum()))
        assert legal == {BID_OFFSET + b for b in allowed}
    else:
        hand = hand_names(game.hands[game.current])
        trick = [card_name(c) for c in game.trick_cards]
        assert {card_name(a - CARD_OFFSET) for a in legal} == oracle_legal(hand, trick)


def play_checked(game: WizardGame, rng: np.random.Generator) -> list[np.ndarray]:
    """Play random legal actions, checking the invariants at every step; return the round scores."""
    n = game.num_players
    all_scores = []
    dealt = check_round_start(game)
    tricks_this_round = 0
    while not game.is_over:
        # conservation: every dealt card is in a hand or has been played (the current trick included)
        np.testing.assert_array_equal(game.hands.astype(int) + game.played, dealt)
        assert (game.hands >= 0).all()
        for seat, c in zip(game.trick_seats, game.trick_cards):
            assert game.played[seat, c] >= 1
        assert int(game.tricks_won.sum()) == tricks_this_round
        mask = game.legal_mask()
        assert mask.any()
        check_mask(game, mask)

        action = int(rng.choice(np.flatnonzero(mask)))
        phase, round_index = game.phase, game.round_index
        bids, tricks, totals = game.bids.copy(), game.tricks_won.copy(), game.totals.copy()
        trick = [card_name(c) for c in game.trick_cards]
        leader, trump = game.leader, trump_letter(game.trump)
        scores = game.step(action)

        completes_trick = phase == Phase.PLAY and len(trick) == n - 1
        if not completes_trick:
            assert scores is None
            continue
        tricks_this_round += 1
        winner = (leader + oracle_winner(trick + [card_name(action - CARD_OFFSET)], trump)) % n
        tricks[winner] += 1
        if scores is None:
            assert game.round_index == round_index
            np.testing.assert_array_equal(game.tricks_won, tricks)
            assert game.current == game.leader == winner
            continue
        # the round ended: exactly hand_size tricks, scored by the formula of docs/rules.md#scoring
        size = game.rules.hand_sizes[round_index]
        assert tricks_this_round == size == int(tricks.sum())
        assert scores.tolist() == [oracle_score(int(b), int(t)) for b, t in zip(bids, tricks)]
        np.testing.assert_array_equal(game.totals, totals + scores)
        all_scores.append(scores)
        tricks_this_round = 0
        if not game.is_over:
            assert game.round_index == round_index + 1
            dealt = check_round_start(game)
    assert len(all_scores) == game.rules.num_rounds
    return all_scores


@settings(max_examples=50, deadline=None)
@given(config=configs(), seed=SEEDS, action_seed=SEEDS)
def test_random_games_keep_every_invariant(config, seed, action_seed):
    n, options = config
    game = WizardGame(Rules.make(n, **options), seed)
    scores = play_checked(game, np.random.default_rng(action_seed))
    np.testing.assert_array_equal(game.totals, np.sum(scores, axis=0))
    assert not game.legal_actions()


@settings(max_examples=30, deadline=None)
@given(config=configs(), reward=st.sampled_from(["score", "relative"]), seed=SEEDS, action_seed=SEEDS)
def test_env_masks_only_the_acting_agent_and_rewards_add_up(config, reward, seed, action_seed):
    n, options = config
    env = wizard_env.env(num_players=n, reward=reward, **options)
    env.reset(seed=seed)
    rng = np.random.default_rng(action_seed)
    collected = dict.fromkeys(env.possible_agents, 0.0)
    while env.agents:
        acting = env.agent_selection
        obs, reward_seen, terminated, truncated, _ = env.last()
        collected[acting] += reward_seen
        for agent in env.agents:
            mask = env.observe(agent)["action_mask"]
            assert mask.any() == (agent == acting and not terminated), (agent, acting)
        env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    totals = env.unwrapped.game.totals.astype(float)
    for seat, agent in enumerate(env.possible_agents):
        expected = totals[seat] if reward == "score" else totals[seat] - np.delete(totals, seat).mean()
        assert abs(collected[agent] - expected) < 1e-6
