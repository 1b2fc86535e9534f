"""The PettingZoo AEC environment: generic API suites for every player count and variant, then
agent names, spaces, errors, rewards, rendering, and the documentation in the module docstring."""

from __future__ import annotations

import re
import textwrap
from functools import partial

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.test import api_test, render_test, seed_test

import wizard_env
from wizard_env import BID_OFFSET, CARD_OFFSET, NUM_ACTIONS, OBS_SIZE, TRUMP_OFFSET, IllegalActionError, Phase, Rules
from wizard_env.envs import aec as env_module
from wizard_env.engine.cards import JESTER, NUM_SUITED, WIZARD, card_name, hand_names
from wizard_env.envs.aec import illegal_action_penalty
from wizard_env.engine.observation import layout_table
from wizard_env.engine.rules import round_scores

PLAYER_COUNTS = (3, 4, 5, 6)
VARIANTS = {
    "standard": {},
    "hidden": {"bidding": "hidden"},
    "secret": {"bidding": "secret"},
    "bid_total_rule": {"bid_total_rule": True},
    "amigo": {"rounds": "amigo"},
    "rounds_5": {"rounds": 5},
    "explicit_rounds": {"rounds": [2, 1, 3]},
    "foresight": {"foresight": True, "rounds": 4},
    "relative": {"reward": "relative"},
    "combined": {"bidding": "secret", "foresight": True, "reward": "relative", "rounds": [1, 3, 1]},
    "terminate": {"illegal_action": "terminate", "rounds": 4},
}
CONFIGS = [(n, name) for n in PLAYER_COUNTS for name in VARIANTS]
CONFIG_IDS = [f"{n}p-{name}" for n, name in CONFIGS]


def seeded_env_fn(n: int, variant: dict, seed: int = 0):
    """An env constructor whose later unseeded resets and action samples are reproducible."""

    def make(**kwargs):
        env = wizard_env.env(num_players=n, **variant, **kwargs)
        env.reset(seed=seed)
        for i, agent in enumerate(env.possible_agents):
            env.action_space(agent).seed(seed + i)
        return env

    return make


def play_random(env, rng: np.random.Generator, until=None) -> dict[str, float]:
    """Play random legal actions (as agent_iter would, but may stop early); return the rewards each
    agent saw via last()."""
    collected = {agent: 0.0 for agent in env.possible_agents}
    while env.agents and not (until is not None and until(env)):
        agent = env.agent_selection
        obs, reward, terminated, truncated, info = env.last()
        collected[agent] += reward
        if terminated or truncated:
            env.step(None)
        else:
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return collected


# -- generic PettingZoo suites ---------------------------------------------------------------------


# A Dict observation (vector + action mask) is PettingZoo's convention for masked actions; the suite
# warns about it for every such env. Any other warning from the suite fails the test.
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be")
@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("n, variant", CONFIGS, ids=CONFIG_IDS)
def test_pettingzoo_api(n, variant):
    api_test(seeded_env_fn(n, VARIANTS[variant])(), num_cycles=500)


@pytest.mark.parametrize("n, variant", CONFIGS, ids=CONFIG_IDS)
def test_pettingzoo_seed(n, variant):
    seed_test(partial(wizard_env.env, num_players=n, **VARIANTS[variant]), num_cycles=500)


@pytest.mark.parametrize("n, variant", CONFIGS, ids=CONFIG_IDS)
def test_pettingzoo_render(n, variant):
    render_test(seeded_env_fn(n, VARIANTS[variant]), custom_tests={"ansi": lambda text: "trump" in text})


# -- agents and spaces -----------------------------------------------------------------------------


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_agents_are_named_player_0_upwards(n):
    env = wizard_env.env(num_players=n)
    env.reset(seed=0)
    assert env.possible_agents == [f"player_{i}" for i in range(n)]
    assert env.agents == env.possible_agents


@pytest.mark.parametrize("n, variant", CONFIGS, ids=CONFIG_IDS)
def test_same_action_space_and_observation_length_for_every_config(n, variant):
    env = wizard_env.env(num_players=n, **VARIANTS[variant])
    env.reset(seed=1)
    for agent in env.possible_agents:
        assert env.action_space(agent) == spaces.Discrete(NUM_ACTIONS)
        space = env.observation_space(agent)
        assert space["observation"].shape == (OBS_SIZE,)
        assert space["action_mask"].shape == (NUM_ACTIONS,)
        obs = env.observe(agent)
        assert obs["observation"].shape == (OBS_SIZE,) and obs["observation"].dtype == np.float32
        assert obs["action_mask"].shape == (NUM_ACTIONS,) and obs["action_mask"].dtype == np.int8


def test_non_acting_agents_have_all_zero_masks():
    env = wizard_env.env(num_players=5, rounds=3)
    env.reset(seed=2)
    rng = np.random.default_rng(0)
    while env.agents and not env.terminations[env.agent_selection]:
        for agent in env.agents:
            mask = env.observe(agent)["action_mask"]
            assert mask.any() == (agent == env.agent_selection)
        obs = env.observe(env.agent_selection)
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def test_game_end_terminates_every_agent_and_truncates_none():
    env = wizard_env.env(num_players=3, rounds=2)
    env.reset(seed=3)
    play_random(env, np.random.default_rng(0), until=lambda e: e.unwrapped.game.is_over)
    assert env.unwrapped.game.is_over
    assert all(env.terminations.values()) and not any(env.truncations.values())
    assert set(env.terminations) == set(env.possible_agents)
    for agent in env.agent_iter():
        assert env.last()[2]
        env.step(None)
    assert env.agents == []


# -- illegal actions -------------------------------------------------------------------------------


def test_illegal_action_through_env_names_agent_and_leaves_everything_unchanged():
    env = wizard_env.env(num_players=4, rounds=[3, 3])
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    play_random(env, rng, until=lambda e: e.agent_selection == "player_2" and e.unwrapped.game.phase == Phase.PLAY)
    assert env.agent_selection == "player_2"
    before = {agent: env.observe(agent) for agent in env.possible_agents}
    cumulative = dict(env.unwrapped._cumulative_rewards)
    mask = before["player_2"]["action_mask"]
    for action in [int(np.flatnonzero(mask == 0)[0]), BID_OFFSET, -1, NUM_ACTIONS, None, 1.0, "x"]:
        with pytest.raises(IllegalActionError, match="player_2"):
            env.step(action)
        assert env.agent_selection == "player_2"
        for agent in env.possible_agents:
            after = env.observe(agent)
            np.testing.assert_array_equal(before[agent]["observation"], after["observation"])
            np.testing.assert_array_equal(before[agent]["action_mask"], after["action_mask"])
        assert dict(env.unwrapped._cumulative_rewards) == cumulative


def test_illegal_action_error_lists_legal_actions():
    env = wizard_env.env(num_players=3)
    env.reset(seed=0)
    legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
    with pytest.raises(IllegalActionError) as err:
        env.step(NUM_ACTIONS - 1 if NUM_ACTIONS - 1 not in legal else 0)
    for action in legal:
        assert wizard_env.action_name(action) in str(err.value)


def test_illegal_action_defaults_to_raise():
    assert env_module.raw_env(num_players=3).illegal_action == "raise"
    assert env_module.raw_env(num_players=3, illegal_action="terminate").illegal_action == "terminate"


def env_with_rewards_pending(**kwargs):
    """A 4-player env at the first decision of round 2, with round 1's scores not yet collected via last()."""
    env = wizard_env.env(num_players=4, rounds=[2, 3, 2], **kwargs)
    env.reset(seed=4)
    collected = play_random(env, np.random.default_rng(3), until=lambda e: e.unwrapped.game.round_index == 1)
    assert all(env.unwrapped._cumulative_rewards.values())  # a round score is never 0
    return env, collected


@pytest.mark.parametrize("bad", ["illegal", "out of range", "not an integer"])
def test_terminate_mode_ends_the_game_with_the_penalty_to_the_offender_only(bad):
    env, collected = env_with_rewards_pending(illegal_action="terminate")
    raw, offender = env.unwrapped, env.agent_selection
    totals = raw.game.totals.copy()
    obs, reward, *_ = env.last()  # as an agent_iter loop reads its turn
    collected[offender] += reward
    mask = obs["action_mask"]
    action = {"illegal": int(np.flatnonzero(mask == 0)[-1]), "out of range": NUM_ACTIONS, "not an integer": "x"}[bad]
    env.step(action)
    penalty = illegal_action_penalty(raw.rules)
    assert raw.rewards == {a: (penalty if a == offender else 0.0) for a in env.possible_agents}
    assert all(env.terminations.values()) and not any(env.truncations.values())
    assert {a: info["illegal_action"] for a, info in env.infos.items()} == {a: a == offender for a in env.possible_agents}
    assert not any(info["round_over"] or any(info["round_scores"]) for info in env.infos.values())
    assert not any(env.observe(a)["action_mask"].any() for a in env.possible_agents)
    # The others still collect round 1's score through last(), and the offender the penalty on top.
    rest = play_random(env, np.random.default_rng(0))
    assert env.agents == []
    for seat, agent in enumerate(env.possible_agents):
        expected = totals[seat] + (penalty if agent == offender else 0.0)
        assert collected[agent] + rest[agent] == pytest.approx(expected)
    with pytest.raises(RuntimeError, match="call reset"):
        raw.step(0)
    env.reset(seed=1)
    assert env.agents == env.possible_agents and not any(info["illegal_action"] for info in env.infos.values())


def test_terminate_mode_plays_a_legal_action_as_raise_mode_does():
    a, _ = env_with_rewards_pending(illegal_action="terminate")
    b, _ = env_with_rewards_pending()
    action = int(np.flatnonzero(a.observe(a.agent_selection)["action_mask"])[0])
    a.step(action), b.step(action)
    for agent in a.possible_agents:
        np.testing.assert_array_equal(a.observe(agent)["observation"], b.observe(agent)["observation"])
    assert a.infos == b.infos and a.unwrapped._cumulative_rewards == b.unwrapped._cumulative_rewards
    assert not any(a.terminations.values())


@pytest.mark.parametrize("n, seed", [(3, 0), (4, 1), (6, 2)])
def test_terminate_mode_runs_games_of_unmasked_sampled_actions(n, seed):
    # What action_space.sample()-style tooling does: the first illegal sample ends the game cleanly.
    env = wizard_env.env(num_players=n, illegal_action="terminate")
    env.reset(seed=seed)
    for i, agent in enumerate(env.possible_agents):
        env.action_space(agent).seed(seed + i)
    penalised = []
    for agent in env.agent_iter():
        _, reward, terminated, truncated, info = env.last()
        assert not truncated
        if reward == illegal_action_penalty(env.unwrapped.rules):
            penalised.append(agent)
            assert info["illegal_action"]
        env.step(None if terminated else env.action_space(agent).sample())
    assert env.agents == [] and len(penalised) == 1


@pytest.mark.parametrize("mode", ["penalty", "Raise", None, 1])
def test_unknown_illegal_action_mode_raises_value_error_naming_the_choices(mode):
    with pytest.raises(ValueError, match=rf"unknown illegal_action {re.escape(repr(mode))}: expected one of \('raise', 'terminate'\)"):
        wizard_env.env(illegal_action=mode)


@pytest.mark.parametrize("n, hand_size", [(3, 1), (3, 3), (4, 2), (5, 2)])
def test_no_round_pays_less_than_the_penalty_counts_per_round_and_card(n, hand_size):
    # The penalty's reasoning (module docstring) checked against the scoring rules: over every bid and
    # trick outcome of a round, the lowest score and the lowest relative reward are >= -(20 + 20 * cards).
    bids = np.stack(np.meshgrid(*[np.arange(hand_size + 1)] * n, indexing="ij"), -1).reshape(-1, n)
    tricks = bids[bids.sum(1) == hand_size]
    worst_score = worst_relative = 0.0
    for t in tricks:
        scores = round_scores(bids, np.broadcast_to(t, bids.shape))
        relative = scores - (scores.sum(1, keepdims=True) - scores) / (n - 1)
        worst_score, worst_relative = min(worst_score, scores.min()), min(worst_relative, relative.min())
    bound = illegal_action_penalty(Rules.make(n, [hand_size]))
    assert bound == -(20 + 20 * hand_size)
    assert worst_score >= bound and worst_relative >= bound
    assert worst_relative < worst_score  # the relative mode is what needs the wider bound


def test_docstring_penalty_example_matches_the_function():
    assert "(-2700 for four players and the standard 15 rounds)" in " ".join(env_module.__doc__.split())
    assert illegal_action_penalty(Rules.make(4)) == -2700


# -- rewards ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("n, seed", [(3, 0), (4, 1), (5, 2), (6, 3)])
def test_score_rewards_add_up_to_final_totals(n, seed):
    env = wizard_env.env(num_players=n, rounds=[1, 3, 2, 4])
    env.reset(seed=seed)
    collected = play_random(env, np.random.default_rng(seed))
    totals = env.unwrapped.game.totals
    assert env.unwrapped.game.is_over
    for i, agent in enumerate(env.possible_agents):
        assert collected[agent] == pytest.approx(float(totals[i]))


def test_last_gives_every_seat_each_round_score_at_its_next_turn():
    # One-step learners (Tianshou) read the reward at each of their turns: whoever played a round's last
    # card, every other seat finds its score of that round in last() at its next turn.
    env = wizard_env.env(num_players=4, rounds=[1, 3, 2, 4, 2])
    env.reset(seed=13)
    rng = np.random.default_rng(13)
    seen = {agent: [] for agent in env.possible_agents}
    scored = []
    for agent in env.agent_iter():
        obs, reward, terminated, _, _ = env.last()
        if reward:
            seen[agent].append(reward)
        env.step(None if terminated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if env.agents and env.infos[env.agents[0]]["round_over"]:
            scored.append(env.infos[env.agents[0]]["round_scores"])
    assert len(scored) == 5
    for seat, agent in enumerate(env.possible_agents):
        assert seen[agent] == [float(s[seat]) for s in scored]  # a round score is never 0


INFO_TYPES = {"seed": int, "round_over": bool, "round_scores": list, "illegal_action": bool}


def check_info_types(env) -> None:
    for agent in env.agents:
        info = env.infos[agent]
        assert {k: type(v) for k, v in info.items()} == INFO_TYPES, agent
        assert len(info["round_scores"]) == len(env.possible_agents)
        assert all(type(x) is int for x in info["round_scores"])


@pytest.mark.parametrize("n, variant", [(3, "standard"), (4, "relative"), (5, "combined"), (6, "rounds_5")])
def test_infos_hold_the_same_keys_and_types_from_reset_on(n, variant):
    env = wizard_env.env(num_players=n, **VARIANTS[variant])
    env.reset(seed=n)
    raw, rng = env.unwrapped, np.random.default_rng(n)
    check_info_types(env)
    assert not any(info["round_over"] or any(info["round_scores"]) for info in env.infos.values())
    summed = np.zeros(n, dtype=np.int64)
    round_ends = 0
    while not raw.game.is_over:
        round_before = raw.game.round_index
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
        check_info_types(env)
        ended = raw.game.is_over or raw.game.round_index != round_before
        for info in env.infos.values():
            assert info["round_over"] == ended and not info["illegal_action"]
            assert info["round_scores"] == (raw.game.round_scores.tolist() if ended else [0] * n)
        summed += env.infos["player_0"]["round_scores"]
        round_ends += ended
    assert round_ends == raw.rules.num_rounds
    assert summed.tolist() == raw.game.totals.tolist()
    while env.agents:  # and the dead steps that end the game keep them, as steps that end no round
        env.step(None)
        check_info_types(env)
        assert not any(info["round_over"] or any(info["round_scores"]) for info in env.infos.values())


@pytest.mark.parametrize("n, seed", [(3, 5), (4, 6), (5, 7), (6, 8)])
def test_relative_rewards_are_zero_sum_and_equal_total_minus_mean_of_others(n, seed):
    env = wizard_env.env(num_players=n, rounds=[2, 1, 3], reward="relative")
    env.reset(seed=seed)
    collected = play_random(env, np.random.default_rng(seed))
    totals = env.unwrapped.game.totals.astype(float)
    assert sum(collected.values()) == pytest.approx(0.0, abs=1e-9)
    for i, agent in enumerate(env.possible_agents):
        others = np.delete(totals, i)
        assert collected[agent] == pytest.approx(totals[i] - others.mean())
    assert any(abs(v) > 0 for v in collected.values())


def test_reward_is_given_at_the_end_of_each_round_only():
    env = wizard_env.env(num_players=4, rounds=[2, 2])
    env.reset(seed=9)
    rng = np.random.default_rng(1)
    raw = env.unwrapped
    while not raw.game.is_over:
        round_before = raw.game.round_index
        obs = env.observe(env.agent_selection)
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        round_ended = raw.game.round_index != round_before or raw.game.is_over
        if round_ended:
            assert [raw.rewards[a] for a in raw.possible_agents] == raw.game.round_scores.tolist()
        else:
            assert not any(raw.rewards.values())


# -- rendering -------------------------------------------------------------------------------------


def env_in_second_round_play(render_mode="ansi", **kwargs):
    """An env after one scored round, in the play phase of round 2 with some cards played."""
    env = wizard_env.env(num_players=4, rounds=[1, 3], render_mode=render_mode, **kwargs)
    env.reset(seed=10)
    game = env.unwrapped.game
    play_random(env, np.random.default_rng(2), until=lambda e: game.round_index == 1 and len(game.trick_cards) == 2)
    assert game.phase == Phase.PLAY and game.totals.any()
    return env


def seat_line(text: str, agent: str) -> str:
    (line,) = [row for row in text.splitlines() if re.search(rf"\b{agent}\b", row) and "Final" not in row]
    return line


def test_ansi_render_shows_trump_bids_and_scores():
    env = env_in_second_round_play()
    game = env.unwrapped.game
    text = env.render()
    assert isinstance(text, str)
    trump = re.search(r"trump: (\w+)", text).group(1)
    assert trump == ("none" if game.trump < 0 else "cdhs"[game.trump])
    for seat, agent in enumerate(env.possible_agents):
        line = seat_line(text, agent)
        assert re.search(rf"score\s+{game.totals[seat]}\b", line), line
        assert re.search(rf"bid\s+{game.bids[seat]}\b", line), line
        assert " ".join(hand_names(game.hands[seat])) in line


def test_ansi_render_at_game_over_shows_final_totals():
    env = wizard_env.env(num_players=3, rounds=1, render_mode="ansi")
    env.reset(seed=1)
    play_random(env, np.random.default_rng(0), until=lambda e: e.unwrapped.game.is_over)
    text = env.render()
    for seat, agent in enumerate(env.possible_agents):
        assert f"{agent} {env.unwrapped.game.totals[seat]}" in text


def test_human_render_prints_the_ansi_text(capsys):
    ansi = env_in_second_round_play("ansi")
    human = env_in_second_round_play("human")
    capsys.readouterr()
    assert human.render() is None
    printed = capsys.readouterr().out
    assert printed.strip() == ansi.render().strip()
    assert "trump" in printed


def test_render_without_mode_returns_none():
    env = wizard_env.env(num_players=3)
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert env.unwrapped.render() is None


def test_render_view_acting_hides_other_hands():
    env = env_in_second_round_play(render_view="acting")
    game = env.unwrapped.game
    text = env.render()
    for seat, agent in enumerate(env.possible_agents):
        line = seat_line(text, agent)
        cards = hand_names(game.hands[seat])
        if seat == game.current:
            assert " ".join(cards) in line
        else:
            assert not any(re.search(rf"\b{c}\b", line.split("hand:")[-1]) for c in cards), line


def test_render_view_acting_hides_secret_bids():
    env = env_in_second_round_play(render_view="acting", bidding="secret")
    game = env.unwrapped.game
    text = env.render()
    for seat, agent in enumerate(env.possible_agents):
        bid_text = re.search(r"bid\s+(\S+)", seat_line(text, agent)).group(1)
        if seat == game.current:
            assert bid_text == str(game.bids[seat])
        else:
            assert not bid_text.isdigit()


def test_render_view_acting_in_foresight_round_hides_own_card_only():
    env = wizard_env.env(num_players=3, rounds=[1], foresight=True, render_mode="ansi", render_view="acting")
    env.reset(seed=6)
    game = env.unwrapped.game
    text = env.render()
    for seat, agent in enumerate(env.possible_agents):
        (own,) = hand_names(game.hands[seat])
        shown = own in seat_line(text, agent).split("hand:")[-1]
        assert shown == (seat != game.current)


def test_render_view_all_shows_every_hand():
    env = env_in_second_round_play(render_view="all")
    game = env.unwrapped.game
    text = env.render()
    for seat, agent in enumerate(env.possible_agents):
        assert " ".join(hand_names(game.hands[seat])) in seat_line(text, agent)


# -- constructor errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, why",
    [
        (dict(reward="win"), "reward"),
        (dict(reward=None), "reward"),
        (dict(render_mode="video"), "render_mode"),
        (dict(render_view="nobody"), "render_view"),
        (dict(num_players=7), "3 to 6"),
        (dict(num_players=2), "3 to 6"),
        (dict(bidding="loud"), "bidding"),
        (dict(rounds=0), "rounds"),
        (dict(rounds="forever"), "rounds"),
        (dict(bidding="hidden", bid_total_rule=True), "open bidding"),
        (dict(num_players=4, rounds=[16]), "does not fit"),
    ],
)
def test_bad_constructor_arguments_raise_value_error(kwargs, why):
    with pytest.raises(ValueError, match=why):
        wizard_env.env(**kwargs)


def test_bad_reset_seed_raises_value_error():
    env = wizard_env.env(num_players=4)
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-3)


def test_reset_with_seed_replays_the_same_game_and_unseeded_reset_follows_it():
    a, b = wizard_env.env(num_players=4, rounds=3), wizard_env.env(num_players=4, rounds=3)
    for env in (a, b):
        env.reset(seed=12)
    np.testing.assert_array_equal(a.unwrapped.game.hands, b.unwrapped.game.hands)
    assert a.infos["player_0"]["seed"] == 12
    a.reset()
    b.reset()
    assert a.infos["player_0"]["seed"] == b.infos["player_0"]["seed"]
    np.testing.assert_array_equal(a.observe("player_1")["observation"], b.observe("player_1")["observation"])


# -- documentation ---------------------------------------------------------------------------------


def test_docstring_holds_the_generated_observation_table():
    assert textwrap.indent(layout_table(), "    ") in env_module.__doc__
    assert f"length {OBS_SIZE}" in env_module.__doc__


def test_docstring_action_offsets_match_the_constants():
    doc = env_module.__doc__
    assert f"Discrete({NUM_ACTIONS})" in doc
    assert f"int8, length {NUM_ACTIONS}" in doc
    assert re.search(rf"``BID_OFFSET = {BID_OFFSET}``", doc)
    assert re.search(rf"``CARD_OFFSET = {CARD_OFFSET}``", doc)
    assert re.search(rf"``TRUMP_OFFSET = {TRUMP_OFFSET}``", doc)
    assert re.search(rf"^{BID_OFFSET} \.\. {CARD_OFFSET - 1}\s+bid", doc, re.M)
    assert re.search(rf"^{CARD_OFFSET} \.\. {CARD_OFFSET + NUM_SUITED - 1}\s+play a suited card", doc, re.M)
    assert re.search(rf"^{CARD_OFFSET + WIZARD}\s+play a Wizard", doc, re.M)
    assert re.search(rf"^{CARD_OFFSET + JESTER}\s+play a Jester", doc, re.M)
    assert re.search(rf"^{TRUMP_OFFSET} \.\. {NUM_ACTIONS - 1}\s+the dealer names trump", doc, re.M)
    assert wizard_env.action_name(CARD_OFFSET + WIZARD) == "play Wiz"
    assert wizard_env.action_name(CARD_OFFSET) == f"play {card_name(0)}" == "play 2c"
    assert wizard_env.action_name(TRUMP_OFFSET + 3) == "trump s"


def test_docstring_usage_example_runs_to_the_end():
    usage = env_module.__doc__.split("Usage::")[1].split("\nAgents are")[0]
    code = textwrap.dedent(usage).replace("num_players=4", "num_players=4, rounds=3")
    namespace = {"np": np}
    exec(compile(code, "<docstring usage>", "exec"), namespace)
    assert namespace["env"].unwrapped.game.is_over
    assert namespace["env"].agents == []


# -- misuse: clear errors, and a failed reset changes nothing (issue 9) ---------------------------------


@pytest.mark.parametrize("call", ["step", "observe", "last"])
def test_calls_before_reset_say_to_reset_first(call):
    env = env_module.raw_env(num_players=3, rounds=1)
    args = {"step": (0,), "observe": ("player_0",), "last": ()}[call]
    with pytest.raises(RuntimeError, match=rf"call reset\(\) before {call}\(\)"):
        getattr(env, call)(*args)


def test_calls_after_the_game_is_over_say_so():
    env = env_module.raw_env(num_players=3, rounds=1)
    env.reset(seed=2)
    while env.agents:
        obs, _, done, _, _ = env.last()
        env.step(None if done else int(np.flatnonzero(obs["action_mask"])[0]))
    for call in (lambda: env.step(0), lambda: env.step(None), env.last):
        with pytest.raises(RuntimeError, match=r"the game is over .* call reset\(\)"):
            call()
    env.reset()  # and a new game starts
    assert env.agents


@pytest.mark.parametrize("seed", [2**63, 2**64 + 1, -1, True])
def test_a_bad_reset_seed_leaves_the_seed_stream_alone(seed):
    env, twin = env_module.raw_env(num_players=3), env_module.raw_env(num_players=3)
    env.reset(seed=11), twin.reset(seed=11)
    with pytest.raises(ValueError, match=r"seed must be an integer from 0 to 2\*\*63 - 1"):
        env.reset(seed=seed)
    env.reset(), twin.reset()
    assert env.infos["player_0"]["seed"] == twin.infos["player_0"]["seed"]


# -- the order-enforcing wrapper that env() returns --------------------------------------------------


def play_through(env, seed: int) -> list:
    """Every last() of one game played by first legal actions, with the terminal steps."""
    seen = []
    env.reset(seed=seed)
    for _ in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        seen.append((env.agent_selection, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward,
                     terminated, truncated, repr(info)))
        env.step(None if terminated or truncated else int(np.flatnonzero(obs["action_mask"])[0]))
    return seen


@pytest.mark.parametrize("n, variant", [(3, {}), (5, {"bidding": "secret", "rounds": 4}), (4, {"foresight": True, "rounds": [1, 2]})])
def test_env_plays_as_under_pettingzoos_own_order_enforcing_wrapper(n, variant):
    from pettingzoo.utils import wrappers

    ours = wizard_env.env(num_players=n, **variant)
    theirs = wrappers.OrderEnforcingWrapper(env_module.raw_env(num_players=n, **variant))
    assert isinstance(ours, wrappers.OrderEnforcingWrapper) and str(ours) == str(theirs) == "wizard_v1"
    for env in (ours, theirs):  # before reset, the base class's checks
        with pytest.raises(AttributeError, match="cannot be accessed before reset"):
            env.last()
        with pytest.raises(AssertionError, match="reset"):
            env.step(0)
    assert play_through(ours, 7) == play_through(theirs, 7)
    with pytest.raises(RuntimeError, match="the game is over"):  # PettingZoo's own wrapper: KeyError 'player_0'
        ours.last()
