"""python_wizard, Wizard as an OpenSpiel game: OpenSpiel's own checks, agreement with the engine, resampling, ISMCTS."""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python.algorithms import ismcts, mcts  # noqa: E402

from wizard_env.engine.cards import DECK_COUNTS, DECK_SIZE, NUM_CARD_TYPES, WIZARD  # noqa: E402
from wizard_env.engine.game import Phase, WizardGame  # noqa: E402
from wizard_env.engine.observation import OBS_SIZE, is_foresight_round, observe  # noqa: E402
from wizard_env.integrations.openspiel_game import rules_from_params  # noqa: E402
from wizard_env.engine.rules import Rules  # noqa: E402

VARIANTS = [
    {"players": 3, "rounds": 3},
    {"players": 4, "rounds": 3, "bidding": "hidden"},
    {"players": 5, "rounds": 2, "bidding": "secret", "foresight": True},
    {"players": 6, "rounds": 2, "bid_total_rule": True},
    {"players": 4, "schedule": "amigo", "rounds": 2, "foresight": True},
]


def play_random(state, rng: np.random.Generator, moves: int | None = None) -> list[bool]:
    """Play chance outcomes by their probabilities and uniform legal moves (to the end, or ``moves`` steps);
    return, per step, whether it was a chance step."""
    chance: list[bool] = []
    while not state.is_terminal() and (moves is None or len(chance) < moves):
        chance.append(state.is_chance_node())
        if chance[-1]:
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    return chance


def reference_engine(rules: Rules, history: list[int], chance: list[bool]) -> WizardGame:
    """A WizardGame dealing from the deck orders that the history's chance outcomes make (the rest of each
    deck in id order), its rounds started by the engine itself."""
    runs = [[action for action, _ in run] for is_chance, run in itertools.groupby(zip(history, chance), key=lambda x: x[1])
            if is_chance]  # the first dealer and the first deal, then one deal a round
    first_dealer, runs[0] = runs[0][0], runs[0][1:]
    orders = np.zeros((rules.num_rounds, DECK_SIZE), dtype=np.int8)
    for r, dealt in enumerate(runs):
        rest = np.repeat(np.arange(NUM_CARD_TYPES), DECK_COUNTS - np.bincount(dealt, minlength=NUM_CARD_TYPES))
        orders[r] = np.concatenate([dealt, rest])
    game = WizardGame(rules, seed=0)
    game.batch.orders[0] = orders
    game.first_dealer = first_dealer
    game.batch.deal_round()
    return game


@pytest.mark.parametrize("params", VARIANTS + [{"players": 3}, {"players": 6, "schedule": "amigo"}])
def test_load_game_builds_the_rules_of_its_parameters(params):
    game = pyspiel.load_game("python_wizard", params)
    rules = rules_from_params(params)
    assert game.num_players() == rules.num_players
    assert game.num_distinct_actions() == 79
    assert game.max_chance_outcomes() == NUM_CARD_TYPES
    assert game.observation_tensor_shape() == game.information_state_tensor_shape() == [OBS_SIZE]
    assert game.max_utility() == sum(20 + 10 * size for size in rules.hand_sizes)
    assert game.min_utility() == -10 * sum(rules.hand_sizes)
    if params.get("schedule") == "amigo":
        assert rules.hand_sizes[: params.get("rounds") or None] == rules.hand_sizes
        assert rules.hand_sizes[0] == {3: 2, 4: 1, 5: 2, 6: 1}[rules.num_players]


def test_load_game_from_a_game_string():
    game = pyspiel.load_game("python_wizard(players=5,rounds=2,bidding=secret)")
    assert rules_from_params(game.get_parameters()) == Rules.make(5, 2, "secret")


@pytest.mark.parametrize("params", [{"players": 7}, {"players": 4, "rounds": 16}, {"schedule": "short"},
                                    {"bidding": "hidden", "bid_total_rule": True}, {"rounds": -1}])
def test_impossible_parameters_are_refused(params):
    with pytest.raises((ValueError, pyspiel.SpielError)):
        pyspiel.load_game("python_wizard", params)


@pytest.mark.parametrize("params", VARIANTS)
def test_openspiel_random_sim_test_with_serialization(params):
    pyspiel.random_sim_test(pyspiel.load_game("python_wizard", params), num_sims=2, serialize=True, verbose=False)


def test_chance_nodes_draw_the_first_dealer_then_deal_card_by_card():
    game = pyspiel.load_game("python_wizard", {"players": 3, "rounds": 2})
    state = game.new_initial_state()
    assert state.chance_outcomes() == [(0, 1 / 3), (1, 1 / 3), (2, 1 / 3)]
    state.apply_action(2)
    outcomes = dict(state.chance_outcomes())
    assert sorted(outcomes) == list(range(NUM_CARD_TYPES))
    assert outcomes[WIZARD] == pytest.approx(4 / 60) and outcomes[0] == pytest.approx(1 / 60)
    assert sum(outcomes.values()) == pytest.approx(1)
    state.apply_action(WIZARD)
    assert dict(state.chance_outcomes())[WIZARD] == pytest.approx(3 / 59)
    for card in (0, 1, 2):  # round 1: seat 0 got the Wizard, seat 1 gets 2c, seat 2 3c, then 4c is turned up
        assert state.is_chance_node()
        state.apply_action(card)
    assert not state.is_chance_node() and state.current_player() == 0  # dealer 2: seat 0 bids first
    assert state.engine.hands[0, WIZARD] == 1 and state.engine.hands[1, 0] == 1 and state.engine.hands[2, 1] == 1
    assert state.engine.trump_card == 2 and state.engine.trump == 0  # the turned 4c makes clubs trump


def test_a_failed_action_changes_nothing():
    game = pyspiel.load_game("python_wizard", {"players": 3, "rounds": 2})
    state = game.new_initial_state()
    for bad in (3, -1):  # not a seat
        with pytest.raises((ValueError, pyspiel.SpielError)):
            state.apply_action(bad)
    state.apply_action(0)
    for card in (WIZARD,) * 4:
        state.apply_action(card)
    with pytest.raises((ValueError, pyspiel.SpielError)):
        state.apply_action(WIZARD)  # no fifth Wizard
    play_random(state, np.random.default_rng(0), moves=5)
    before, strings = state.history(), [state.information_state_string(p) for p in range(3)]
    illegal = next(a for a in range(79) if a not in state.legal_actions())
    with pytest.raises((ValueError, pyspiel.SpielError)):
        state.apply_action(illegal)
    assert state.history() == before and [state.information_state_string(p) for p in range(3)] == strings


@pytest.mark.parametrize("params", VARIANTS + [{"players": 4}])
def test_playouts_agree_with_the_engine(params):
    """Legal actions, observations, rewards and returns equal the engine's on the same deals and moves."""
    game = pyspiel.load_game("python_wizard", params)
    rules = rules_from_params(params)
    for seed in range(2):
        played = game.new_initial_state()
        chance = play_random(played, np.random.default_rng(seed))
        history = played.history()
        reference = reference_engine(rules, history, chance)
        state, totals = game.new_initial_state(), np.zeros(rules.num_players)
        for action, is_chance in zip(history, chance):
            if not is_chance:
                assert state.current_player() == reference.current
                assert state.legal_actions() == reference.legal_actions()
                for p in range(rules.num_players):
                    expected = observe(reference, p)
                    np.testing.assert_array_equal(state.information_state_tensor(p), expected)
                    np.testing.assert_array_equal(state.observation_tensor(p), expected)
                scores = reference.step(action)
                state.apply_action(action)
                totals += state.rewards()
                assert state.rewards() == (scores.tolist() if scores is not None else [0.0] * rules.num_players)
            else:
                state.apply_action(action)
        assert state.is_terminal() and reference.is_over
        assert state.returns() == played.returns() == reference.totals.tolist() == totals.tolist()


def test_information_state_string_hides_the_other_hands():
    game = pyspiel.load_game("python_wizard", {"players": 4, "rounds": 3})
    state = game.new_initial_state()
    play_random(state, np.random.default_rng(3), moves=1 + 4 * 1 + 1)  # the first round is dealt
    assert not state.is_chance_node()
    for p in range(4):
        lines = state.information_state_string(p).splitlines()
        assert sum(line.endswith("dealt ?") for line in lines) == 3  # three hidden cards, own card named
        assert f"seat {p} dealt ?" not in lines


@pytest.mark.parametrize("params", VARIANTS)
def test_resample_from_infostate_keeps_what_the_player_knows(params):
    game = pyspiel.load_game("python_wizard", params)
    rng = np.random.default_rng(5)
    sampler = pyspiel.UniformProbabilitySampler(7, 0.0, 1.0)
    state, changed = game.new_initial_state(), 0
    while not state.is_terminal():
        for p in range(game.num_players()):
            other = state.resample_from_infostate(p, sampler)
            assert other.information_state_string(p) == state.information_state_string(p)
            assert other.information_state_tensor(p) == state.information_state_tensor(p)
            assert other.observation_string(p) == state.observation_string(p)
            assert other.current_player() == state.current_player()
            if state.current_player() == p and is_foresight_round(state.engine) and state.engine.phase == Phase.PLAY:
                assert len(other.legal_actions()) == len(state.legal_actions()) == 1  # the unseen card, forced
            elif state.current_player() == p:
                assert other.legal_actions() == state.legal_actions()
            changed += not state.is_chance_node() and other.history() != state.history()
        play_random(state, rng, moves=1)
    assert changed > 0  # the hidden cards were redrawn at decision nodes


def test_resampled_states_play_on_to_the_end():
    game = pyspiel.load_game("python_wizard", {"players": 4, "rounds": 4, "bidding": "hidden"})
    state = game.new_initial_state()
    play_random(state, np.random.default_rng(1), moves=40)
    sampler = pyspiel.UniformProbabilitySampler(7, 0.0, 1.0)
    for p in range(4):
        other = state.resample_from_infostate(p, sampler)
        play_random(other, np.random.default_rng(p))
        assert other.is_terminal() and len(other.returns()) == 4


def test_clone_is_independent_and_serialization_round_trips():
    game = pyspiel.load_game("python_wizard", {"players": 3, "rounds": 3, "bidding": "secret"})
    state = game.new_initial_state()
    play_random(state, np.random.default_rng(2), moves=30)
    copy = state.clone()
    history = state.history()
    play_random(copy, np.random.default_rng(3), moves=10)
    assert state.history() == history and copy.history()[: len(history)] == history and copy.history() != history
    _, restored = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
    assert restored.history() == history
    assert [restored.information_state_string(p) for p in range(3)] == [state.information_state_string(p) for p in range(3)]


def play_ismcts(seed: int) -> list[int]:
    """One game of OpenSpiel's ISMCTS bot in every seat (chance drawn from ``seed``); every move checked legal."""
    game = pyspiel.load_game("python_wizard", {"players": 3, "rounds": 2})
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(seed))
    bot = ismcts.ISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=20, random_state=np.random.RandomState(seed))
    sampler = pyspiel.UniformProbabilitySampler(seed, 0.0, 1.0)  # the bot's default sampler is not seeded
    bot.set_resampler(lambda state, player: state.resample_from_infostate(player, sampler))
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            play_random(state, rng, moves=1)
        else:
            action = bot.step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
    assert state.returns() == state.engine.totals.tolist()
    return state.history()


def test_ismcts_plays_legal_games_reproducibly():
    """OpenSpiel's information-set MCTS (its Python ISMCTSBot, which calls ``resample_from_infostate``)."""
    assert play_ismcts(0) == play_ismcts(0)


def test_the_example_of_docs_openspiel_runs(capsys):
    """Every ```python block of docs/openspiel.md runs as written (read from the page itself)."""
    page = (Path(__file__).resolve().parent.parent / "docs" / "openspiel.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    assert blocks
    for index, block in enumerate(blocks):
        exec(compile(block, f"docs/openspiel.md python block {index + 1}", "exec"), {})
    totals, last = capsys.readouterr().out.splitlines()[-2:]
    assert len(ast.literal_eval(totals)) == 3 and last.startswith("round ends: bids")
