"""MixedVecEnv (several player counts in one batch of training games), RuleAgent's advice as an input,
and the credit of card play: a card's consequences reach the learner that played it."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from wizard_env.agents import RuleAgent  # noqa: E402
from wizard_env import NUM_ACTIONS, OBS_SIZE, Phase, decode  # noqa: E402
from wizard_env.envs.mixed_vec_env import MixedVecEnv  # noqa: E402
from wizard_env.envs.vec_env import WizardVecEnv  # noqa: E402
from wizard_env.training.ppo.advice import AdviceVecEnv  # noqa: E402

from helpers import FirstLegal, oracle_score, random_legal  # noqa: E402


def test_one_batch_holds_every_player_count_and_each_game_sees_its_own():
    env = MixedVecEnv(10, players=(3, 4, 5, 6), seed=0, rounds=2, opponents="random")
    obs = env.reset()
    counts = env.get_attr("num_players")
    assert counts == [3, 3, 3, 4, 4, 4, 5, 5, 6, 6]  # 10 games split as evenly as possible
    assert obs.shape == (10, OBS_SIZE) and env.action_masks().shape == (10, NUM_ACTIONS)
    rng, totals, finished = np.random.default_rng(1), np.zeros(10), set()
    for _ in range(60):
        for row, n in zip(obs, counts):
            assert decode(row)["num_players"].tolist().index(1) + 3 == n
        obs, rewards, dones, infos = env.step(random_legal(env.action_masks(), rng))
        totals += rewards
        for g in np.flatnonzero(dones):
            assert len(infos[g]["final_totals"]) == counts[g]
            assert totals[g] == infos[g]["final_totals"][infos[g]["learner_seat"]]
            totals[g] = 0
            finished.add(counts[g])
    assert finished == {3, 4, 5, 6}


def test_same_seed_same_games_and_bad_arguments_are_named():
    a, b = (MixedVecEnv(8, players=(3, 5), seed=4, rounds=3, opponents="rule") for _ in range(2))
    assert np.array_equal(a.reset(), b.reset())
    assert a.get_attr("game_seed") == b.get_attr("game_seed")
    other = MixedVecEnv(8, players=(3, 5), seed=5, rounds=3)
    other.reset()
    assert other.get_attr("game_seed") != a.get_attr("game_seed")
    for players, why in (((2, 4), "player counts"), ((4, 4), "distinct"), ("x", "player counts")):
        with pytest.raises(ValueError, match=why):
            MixedVecEnv(8, players=players)
    with pytest.raises(ValueError, match="at least one game per player count"):
        MixedVecEnv(3, players=(3, 4, 5, 6))


def test_advice_is_rule_agents_choice_for_the_learners_decision():
    env = AdviceVecEnv(MixedVecEnv(6, players=(4, 6), seed=2, rounds=3, opponents="rule"), seed=9)
    obs, rng = env.reset(), np.random.default_rng(0)
    assert env.observation_space.shape == (OBS_SIZE + NUM_ACTIONS,)
    for _ in range(20):
        masks = env.action_masks()
        hint = obs[:, OBS_SIZE:]
        assert (hint.sum(axis=1) == 1).all() and masks[np.arange(6), hint.argmax(axis=1)].all()
        # RuleAgent decides from the observation alone: a fresh one agrees except where it samples (one-card bids)
        plays = decode_phases(obs[:, :OBS_SIZE]) == int(Phase.PLAY)
        rule = RuleAgent(seed=0).act_batch(obs[:, :OBS_SIZE], masks)
        assert np.array_equal(hint.argmax(axis=1)[plays], rule[plays])
        obs, _, _, _ = env.step(random_legal(masks, rng))


def test_the_observation_space_holds_every_player_counts_observations():
    env = MixedVecEnv(8, players=(3, 6), seed=1, opponents="rule")  # 20 and 10 rounds
    space, rng = env.observation_space, np.random.default_rng(1)
    assert space.high.max() < np.inf and space.low.min() > -np.inf
    assert [part.observation_space.high.max() for part in env.parts] == [25.0, 7.5] == [space.high.max(), 7.5]  # scores
    obs = env.reset()
    for _ in range(50):
        assert all(space.contains(row) for row in obs)
        obs, _, _, _ = env.step(random_legal(env.action_masks(), rng))


def decode_phases(obs: np.ndarray) -> np.ndarray:
    return np.array([decode(row)["phase"].argmax() for row in obs])


def play_round(choose_last: bool) -> tuple[np.ndarray, list[list[float]], np.ndarray, np.ndarray]:
    """One 3-card round in 16 games, the learner (seat 0) playing its first or last legal card.

    Returns the learner's round reward per game, the returns credited to each of its card plays
    (the rewards from that play to the round's done), and the engine's bids and tricks of the round.
    """
    env = WizardVecEnv(16, seed=5, num_players=4, rounds=[3], opponents=FirstLegal(), learner_seat=0,
                       learn="play", episode="round")
    env.reset()
    pending: list[list[int]] = [[] for _ in range(16)]  # steps of each game's plays awaiting the round's reward
    rewards_by_step: list[np.ndarray] = []
    credited: list[list[float]] = [[] for _ in range(16)]
    reward, bids, tricks = np.zeros(16), np.zeros((16, 4), int), np.zeros((16, 4), int)
    open_games = np.ones(16, dtype=bool)
    while open_games.any():
        masks = env.action_masks()
        actions = np.array([np.flatnonzero(m)[-1 if choose_last else 0] for m in masks])
        for g in np.flatnonzero(open_games):
            pending[g].append(len(rewards_by_step))
        batch = env.batch
        _, r, dones, _ = env.step(actions)
        rewards_by_step.append(r)
        for g in np.flatnonzero(dones & open_games):
            credited[g] = [float(sum(rewards_by_step[s][g] for s in range(step, len(rewards_by_step)))) for step in pending[g]]
            reward[g], bids[g], tricks[g] = r[g], batch.round_bids[g], batch.round_tricks[g]
            open_games[g] = False
    return reward, credited, bids, tricks


def test_every_card_the_learner_plays_is_credited_with_its_own_round_score():
    reward, credited, bids, tricks = play_round(choose_last=False)
    for g in range(16):
        own = oracle_score(int(bids[g, 0]), int(tricks[g, 0]))
        assert reward[g] == own
        assert len(credited[g]) == 3 and credited[g] == [own] * 3  # all three plays of the round, nothing else
    others = [oracle_score(int(b), int(t)) for b, t in zip(bids[:, 1:].ravel(), tricks[:, 1:].ravel())]
    assert any(o != r for o, r in zip(others, np.repeat(reward, 3)))  # not another seat's score


def test_a_different_card_changes_the_learners_reward_by_its_score_change():
    first, _, bids_a, tricks_a = play_round(choose_last=False)
    last, _, bids_b, tricks_b = play_round(choose_last=True)
    assert np.array_equal(bids_a, bids_b)  # same deals and bids: only the learner's cards differ
    changed = tricks_a[:, 0] != tricks_b[:, 0]
    assert changed.any()
    for g in np.flatnonzero(changed):
        assert last[g] - first[g] == oracle_score(int(bids_b[g, 0]), int(tricks_b[g, 0])) - oracle_score(int(bids_a[g, 0]), int(tricks_a[g, 0]))


def test_a_failed_seed_or_pool_change_leaves_the_mixed_env_as_it_was():
    env, twin = (MixedVecEnv(6, players=(3, 4), seed=2, rounds=2) for _ in range(2))
    env.reset(), twin.reset()
    for call in (lambda: env.seed(-1), lambda: env.seed(2**63), lambda: env.set_opponent_pool(["rule", "ppo:/no/such.npz"])):
        with pytest.raises(ValueError):
            call()
    assert np.array_equal(env.reset(), twin.reset())
    assert env.get_attr("game_seed") == twin.get_attr("game_seed")
    with pytest.raises(ValueError, match=r"seed must be an integer from 0 to 2\*\*63 - 1"):
        MixedVecEnv(6, players=(3, 4), seed=2**63)
