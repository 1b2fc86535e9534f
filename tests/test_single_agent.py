"""The single-agent Gymnasium view: API checkers, reward attribution (re-played on a fresh engine), infos,
learner seats, seeding, illegal actions in both modes, opponents and their sampler, bad arguments, a
MaskablePPO smoke."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env

from wizard_env.agents import Agent, RandomAgent
from wizard_env import NUM_ACTIONS, OBS_SIZE, IllegalActionError, Phase, Rules, WizardGame, decode, observe
from wizard_env.envs.aec import illegal_action_penalty
from wizard_env.envs.single_agent import WizardSingleAgentEnv

CHECK_CONFIGS = {
    "3p-standard": dict(num_players=3),
    "4p-standard": dict(num_players=4),
    "3p-one-round": dict(num_players=3, rounds=1),
    "4p-secret-short": dict(num_players=4, bidding="secret", rounds=3),
    "5p-foresight-bid-total": dict(num_players=5, foresight=True, bid_total_rule=True, rounds=[1, 2]),
    "4p-amigo-random": dict(num_players=4, rounds="amigo", opponents="random"),
}


class Recorder(Agent):
    """Plays random legal actions and writes (its id, action) to a log shared with the test."""

    def __init__(self, ident: str, log: list, seed: int):
        self.ident, self.log, self.rng = ident, log, np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """A random legal action, logged."""
        action = int(self.rng.choice(np.flatnonzero(action_mask)))
        self.log.append((self.ident, action))
        return action


def play_episode(env: WizardSingleAgentEnv, seed: int | None, policy_seed: int = 0, log: list | None = None):
    """Play one game with random legal learner actions; return (observations, rewards, infos)."""
    rng = np.random.default_rng(policy_seed)
    obs, info = env.reset(seed=seed)
    observations, rewards, infos = [obs], [], [info]
    terminated = False
    while not terminated:
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        if log is not None:
            log.append(("learner", action))
        obs, reward, terminated, truncated, info = env.step(action)
        assert not truncated
        observations.append(obs)
        rewards.append(reward)
        infos.append(info)
    return observations, rewards, infos


# -- API checkers ----------------------------------------------------------------------------------
# The checkers step unmasked action_space.sample(): with illegal_action="terminate" they pass on the env
# itself. Any warning they give fails the test.


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("config", CHECK_CONFIGS.values(), ids=CHECK_CONFIGS.keys())
def test_gymnasium_check_env_passes(config):
    gym_check_env(WizardSingleAgentEnv(**config, illegal_action="terminate"), skip_render_check=True)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("config", CHECK_CONFIGS.values(), ids=CHECK_CONFIGS.keys())
def test_stable_baselines3_check_env_passes(config):
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    sb3_checker.check_env(WizardSingleAgentEnv(**config, illegal_action="terminate"), warn=True)


def test_checkers_step_illegal_actions_so_they_need_the_terminate_mode():
    # What makes the mode necessary: the checkers' sampled actions are illegal, which raise by default.
    with pytest.raises(IllegalActionError):
        gym_check_env(WizardSingleAgentEnv(num_players=3, rounds=2), skip_render_check=True)


def test_spaces_match_the_aec_env():
    env = WizardSingleAgentEnv(num_players=6)
    assert env.action_space == gym.spaces.Discrete(NUM_ACTIONS)
    assert env.observation_space.shape == (OBS_SIZE,) and env.observation_space.dtype == np.float32
    import wizard_env

    aec = wizard_env.env(num_players=6)
    assert env.observation_space == aec.observation_space("player_0")["observation"]


# -- rewards and their attribution -----------------------------------------------------------------


def replay_totals(rules: Rules, game_seed: int, log: list, seat_of: dict[str, int]) -> np.ndarray:
    """Final totals from re-playing the logged actions in order on a fresh engine, checking that each
    action comes from the player in the acting seat."""
    game = WizardGame(rules, game_seed)
    for ident, action in log:
        assert seat_of[ident] == game.current, f"{ident} acted in seat {game.current}"
        game.step(action)
    assert game.is_over
    return game.totals


@pytest.mark.parametrize("n, seed, scale", [(3, 0, 1.0), (4, 1, 0.01), (5, 2, 1.0), (6, 3, 0.5)])
def test_episode_return_is_the_learners_final_total_on_a_replayed_game(n, seed, scale):
    rules_kwargs = dict(num_players=n, rounds=4, bidding="hidden")
    log: list = []
    opponents = [Recorder(f"opp{i}", log, seed * 10 + i) for i in range(n - 1)]
    env = WizardSingleAgentEnv(**rules_kwargs, opponents=opponents, reward_scale=scale)
    _, rewards, infos = play_episode(env, seed, policy_seed=seed, log=log)
    learner = infos[-1]["learner_seat"]
    seat_of = {"learner": learner} | {f"opp{i}": (learner + 1 + i) % n for i in range(n - 1)}
    totals = replay_totals(Rules.make(**rules_kwargs), infos[-1]["game_seed"], log, seat_of)
    assert sum(rewards) == pytest.approx(totals[learner] * scale)
    assert infos[-1]["final_totals"] == totals.tolist()


def test_reward_follows_the_learner_not_another_seat():
    # Over many games the learner's total differs from every other seat's in some game, so a reward
    # taken from the wrong seat (PettingZoo's SB3 tutorial once trained on the opponent's) shows up.
    differs = set()
    for seed in range(12):
        env = WizardSingleAgentEnv(num_players=4, rounds=3, opponents="random")
        _, rewards, infos = play_episode(env, seed, policy_seed=seed)
        totals, learner = infos[-1]["final_totals"], infos[-1]["learner_seat"]
        assert sum(rewards) == totals[learner]
        differs |= {s for s in range(4) if totals[s] != totals[learner]}
    assert differs == {0, 1, 2, 3}


def test_rewards_come_only_on_steps_that_end_a_round():
    env = WizardSingleAgentEnv(num_players=3, rounds=5, opponents="random", learner_seat=1)
    rng = np.random.default_rng(4)
    env.reset(seed=4)
    terminated, rounds_scored = False, 0
    while not terminated:
        before = env.game.round_index
        _, reward, terminated, _, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        round_ended = terminated or env.game.round_index != before
        rounds_scored += round_ended
        assert (reward != 0) == round_ended  # a round's score is never 0: 20+ if met, -10 per trick off
    assert rounds_scored == 5


# -- the learner's seat and view -------------------------------------------------------------------


def test_learner_seat_varies_across_resets():
    env = WizardSingleAgentEnv(num_players=5, rounds=1, opponents="random")
    env.reset(seed=0)
    seats = {env.reset()[1]["learner_seat"] for _ in range(40)}
    assert seats == set(range(5))


def test_fixed_learner_seat_is_kept_and_leaves_the_games_unchanged():
    fixed = WizardSingleAgentEnv(num_players=4, rounds=1, opponents="random", learner_seat=2)
    free = WizardSingleAgentEnv(num_players=4, rounds=1, opponents="random")
    fixed_infos = [fixed.reset(seed=9)[1]] + [fixed.reset()[1] for _ in range(10)]
    free_infos = [free.reset(seed=9)[1]] + [free.reset()[1] for _ in range(10)]
    assert {info["learner_seat"] for info in fixed_infos} == {2}
    assert [i["game_seed"] for i in fixed_infos] == [i["game_seed"] for i in free_infos]


@pytest.mark.parametrize("n", [3, 4, 6])
def test_every_observation_is_the_learners_turn_and_own_view(n):
    env = WizardSingleAgentEnv(num_players=n, rounds=3, opponents="random")
    rng = np.random.default_rng(n)
    obs, info = env.reset(seed=n)
    seat = info["learner_seat"]
    while True:
        assert env.game.current == seat
        assert np.array_equal(decode(obs)["hand"], env.game.hands[seat])
        assert np.array_equal(env.action_masks(), env.game.legal_mask().astype(bool))
        assert env.action_masks().dtype == np.bool_ and env.action_masks().any()
        obs, _, terminated, _, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if terminated:
            break
    assert env.game.phase == Phase.OVER and not env.action_masks().any()
    assert decode(obs)["phase"][Phase.OVER] == 1


# -- seeds -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("opponents", ["random", "rule"])
def test_same_seed_same_trajectory(opponents):
    runs = []
    for _ in range(2):
        env = WizardSingleAgentEnv(num_players=4, rounds=4, opponents=opponents)
        first = play_episode(env, seed=21, policy_seed=5)
        second = play_episode(env, seed=None, policy_seed=5)  # the next game from the same Generator
        runs.append((first, second))
    (a1, a2), (b1, b2) = runs
    for a, b in ((a1, b1), (a2, b2)):
        assert len(a[0]) == len(b[0]) and all(np.array_equal(x, y) for x, y in zip(a[0], b[0]))
        assert a[1] == b[1] and a[2] == b[2]
    assert a1[2][0]["game_seed"] != a2[2][0]["game_seed"]


def test_different_seeds_give_different_games():
    env = WizardSingleAgentEnv(num_players=4, opponents="random")
    seeds = {env.reset(seed=s)[1]["game_seed"] for s in range(5)}
    assert len(seeds) == 5


# -- illegal actions -------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [NUM_ACTIONS, -1, 1.5, "3", None])
def test_illegal_action_raises_and_leaves_the_game_unchanged(bad):
    env = WizardSingleAgentEnv(num_players=4, rounds=3, opponents="random")
    twin = WizardSingleAgentEnv(num_players=4, rounds=3, opponents="random")
    obs, _ = env.reset(seed=3)
    twin.reset(seed=3)
    mask = env.action_masks()
    illegal = [bad] + [int(a) for a in np.flatnonzero(~mask)[:3]]
    for action in illegal:
        with pytest.raises(IllegalActionError, match="learner .*legal: ") as caught:
            env.step(action)
        assert all(f"{a} (" in str(caught.value) for a in np.flatnonzero(mask))
        assert np.array_equal(observe(env.game, env.learner_seat), obs)
        assert np.array_equal(env.action_masks(), mask)
    legal = int(np.flatnonzero(mask)[0])
    after, after_twin = env.step(legal), twin.step(legal)
    assert np.array_equal(after[0], after_twin[0]) and after[1:] == after_twin[1:]


def test_step_after_game_over_raises():
    env = WizardSingleAgentEnv(num_players=3, rounds=1, opponents="random")
    play_episode(env, seed=0)
    with pytest.raises(IllegalActionError, match="game is over"):
        env.step(0)


INFO_TYPES = {"learner_seat": int, "game_seed": int, "final_totals": list, "illegal_action": bool}


@pytest.mark.parametrize("illegal_action", ["raise", "terminate"])
def test_infos_hold_the_same_keys_and_types_from_reset_on(illegal_action):
    env = WizardSingleAgentEnv(num_players=4, rounds=3, opponents="random", illegal_action=illegal_action)
    _, rewards, infos = play_episode(env, seed=7)
    for info in infos:
        assert {k: type(v) for k, v in info.items()} == INFO_TYPES
        assert len(info["final_totals"]) == 4 and all(type(x) is int for x in info["final_totals"])
        assert not info["illegal_action"]
    assert all(info["final_totals"] == [0, 0, 0, 0] for info in infos[:-1])
    assert infos[-1]["final_totals"] == env.game.totals.tolist() and any(infos[-1]["final_totals"])


def test_illegal_action_defaults_to_raise():
    assert WizardSingleAgentEnv(num_players=3).illegal_action == "raise"


@pytest.mark.parametrize("bad", [NUM_ACTIONS, -1, "3", None, "illegal"])
def test_terminate_mode_ends_the_episode_with_the_scaled_penalty(bad):
    env = WizardSingleAgentEnv(num_players=3, rounds=[1, 2, 2], opponents="random", reward_scale=0.5,
                               illegal_action="terminate")
    rng = np.random.default_rng(0)
    env.reset(seed=3)
    while env.game.round_index < 2:  # two rounds scored, so the totals are not all zero
        env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
    if bad == "illegal":
        bad = int(np.flatnonzero(~env.action_masks())[0])
    totals, before = env.game.totals.tolist(), env.game.phase
    obs, reward, terminated, truncated, info = env.step(bad)
    assert reward == illegal_action_penalty(env.rules) * 0.5 == -(20 * 3 + 20 * 5) * 0.5
    assert terminated is True and truncated is False
    assert info == {"learner_seat": env.learner_seat, "game_seed": env.game.seed, "final_totals": totals,
                    "illegal_action": True}
    assert any(totals) and env.game.phase == before  # the game stopped where it was
    assert np.array_equal(obs, observe(env.game, env.learner_seat)) and not env.action_masks().any()
    with pytest.raises(IllegalActionError, match="game is over"):
        env.step(0)
    _, info = env.reset()
    assert not info["illegal_action"] and env.action_masks().any()


def test_terminate_mode_with_legal_actions_plays_as_raise_mode():
    runs = [play_episode(WizardSingleAgentEnv(num_players=4, rounds=3, illegal_action=mode), seed=2, policy_seed=2)
            for mode in ("raise", "terminate")]
    (obs_a, rewards_a, infos_a), (obs_b, rewards_b, infos_b) = runs
    assert all(np.array_equal(x, y) for x, y in zip(obs_a, obs_b)) and len(obs_a) == len(obs_b)
    assert rewards_a == rewards_b and infos_a == infos_b


def test_step_before_reset_raises():
    with pytest.raises(RuntimeError, match="reset"):
        WizardSingleAgentEnv(num_players=3).step(0)


# -- opponents -------------------------------------------------------------------------------------


def test_opponents_sit_to_the_learners_left_in_list_order():
    log: list = []
    opponents = [Recorder(f"opp{i}", log, i) for i in range(3)]
    env = WizardSingleAgentEnv(num_players=4, rounds=2, opponents=opponents)
    for seed in range(4):
        log.clear()
        _, _, infos = play_episode(env, seed, log=log)
        learner = infos[0]["learner_seat"]
        seat_of = {"learner": learner} | {f"opp{i}": (learner + 1 + i) % 4 for i in range(3)}
        replay_totals(env.rules, infos[0]["game_seed"], log, seat_of)  # asserts who acts where


def test_opponent_sampler_is_called_at_every_reset_with_the_envs_generator():
    calls = []
    log: list = []

    def sampler(rng):
        calls.append(rng)
        return [Recorder(f"pool{len(calls)}", log, int(rng.integers(1000)))]

    env = WizardSingleAgentEnv(num_players=3, rounds=2, opponent_sampler=sampler)
    for seed in (0, None, None):
        play_episode(env, seed)
    assert len(calls) == 3 and all(rng is env.np_random for rng in calls)
    assert {ident for ident, _ in log} == {"pool1", "pool2", "pool3"}


def test_opponent_sampler_result_is_checked_at_reset():
    env = WizardSingleAgentEnv(num_players=4, opponent_sampler=lambda rng: ["random", "rule"])
    with pytest.raises(ValueError, match="opponent_sampler result: 4 players need 1 .* or 3 .* got 2"):
        env.reset(seed=0)


def test_one_agent_object_may_play_every_opponent_seat():
    log: list = []
    env = WizardSingleAgentEnv(num_players=4, rounds=2, opponents=Recorder("shared", log, 0))
    play_episode(env, seed=1, log=log)
    assert sum(ident == "shared" for ident, _ in log) > sum(ident == "learner" for ident, _ in log)


@pytest.mark.parametrize(
    "kwargs, why",
    [
        (dict(num_players=4, opponents=["rule", "rule"]), "4 players need 1 opponent .* or 3 .* got 2"),
        (dict(num_players=3, opponents=[]), "3 players need 1 opponent .* or 2 .* got 0"),
        (dict(num_players=4, opponents="nosuch"), "unknown agent 'nosuch'"),
        (dict(num_players=3, opponents=["rule", "bogus"]), "unknown agent 'bogus'"),
        (dict(num_players=3, opponents=["rule", 5]), r"opponents\[1\] must be an agent spec"),
        (dict(num_players=3, opponents=42), "must be an agent spec, an Agent or a list"),
        (dict(num_players=3, opponents="rule", opponent_sampler=lambda rng: ["rule"]), "not both"),
        (dict(num_players=3, opponent_sampler="rule"), "opponent_sampler must be callable"),
        (dict(num_players=3, learner_seat=3), "learner_seat must be None or a seat 0..2"),
        (dict(num_players=3, learner_seat=True), "learner_seat"),
        (dict(num_players=3, reward_scale=0), "reward_scale must be a positive"),
        (dict(num_players=3, reward_scale=float("nan")), "reward_scale must be a positive"),
        (dict(num_players=3, reward_scale="1"), "reward_scale must be a positive"),
        (dict(num_players=7), "num_players"),
        (dict(num_players=3, render_mode="video"), "unknown render_mode"),
        (dict(num_players=3, illegal_action="penalty"), r"unknown illegal_action 'penalty': expected one of \('raise', 'terminate'\)"),
        (dict(num_players=3, illegal_action=None), "unknown illegal_action None"),
    ],
)
def test_bad_arguments_raise_value_error_naming_the_problem(kwargs, why):
    with pytest.raises(ValueError, match=why):
        WizardSingleAgentEnv(**kwargs)


def test_unknown_reset_options_raise_value_error():
    with pytest.raises(ValueError, match="unknown reset options"):
        WizardSingleAgentEnv(num_players=3).reset(seed=0, options={"learner_seat": 1})


def test_ansi_render_marks_the_learner():
    env = WizardSingleAgentEnv(num_players=3, rounds=2, opponents="random", render_mode="ansi")
    _, info = env.reset(seed=0)
    assert f"player_{info['learner_seat']} (learner)" in env.render()


# -- training smoke --------------------------------------------------------------------------------


def test_maskable_ppo_trains_on_legal_actions_and_logs_returns_equal_to_final_totals():
    pytest.importorskip("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.monitor import Monitor

    class Episodes(BaseCallback):
        """Collects (logged return, learner's final total) for every finished episode."""

        def __init__(self):
            super().__init__()
            self.pairs: list[tuple[float, float]] = []
            self.seats: set[int] = set()

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "episode" in info:
                    self.pairs.append((info["episode"]["r"], info["final_totals"][info["learner_seat"]] * 0.01))
                    self.seats.add(info["learner_seat"])
            return True

    env = Monitor(WizardSingleAgentEnv(num_players=3, rounds=3, opponents="random", reward_scale=0.01))
    env.reset(seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=2, seed=0,
                        policy_kwargs=dict(net_arch=[32]), device="cpu")
    before = [p.detach().clone() for p in model.policy.parameters()]
    episodes = Episodes()
    # Any illegal learner action would raise IllegalActionError and fail the test here.
    model.learn(total_timesteps=320, callback=episodes)
    assert len(episodes.pairs) >= 10 and len(episodes.seats) > 1
    for logged, total in episodes.pairs:
        assert logged == pytest.approx(total, abs=1e-6)
    assert any(not torch.equal(b, a) for b, a in zip(before, model.policy.parameters()))


# -- a failed reset changes nothing; seeds as the AEC env takes them (issue 9) ---------------------------


def test_a_reset_whose_sampler_fails_leaves_the_env_as_it_was():
    fail = {"now": False}

    def sampler(rng):
        if fail["now"]:
            raise RuntimeError("sampler broke")
        return "random"

    env, twin = (WizardSingleAgentEnv(num_players=3, rounds=2, opponent_sampler=sampler) for _ in range(2))
    obs, info = env.reset(seed=5)
    twin.reset(seed=5)
    fail["now"] = True
    with pytest.raises(RuntimeError, match="sampler broke"):
        env.reset()
    fail["now"] = False
    action = int(np.flatnonzero(env.action_masks())[0])
    assert env.learner_seat == info["learner_seat"] and env.game.seed == info["game_seed"]
    step, twin_step = env.step(action), twin.step(action)  # the old game goes on
    assert np.array_equal(step[0], twin_step[0]) and step[1:] == twin_step[1:]
    assert env.reset()[1] == twin.reset()[1]  # and the Generator did not move


@pytest.mark.parametrize("seed", [True, np.bool_(False), -1, 2**63, 2**80, 1.0, "3"])
def test_reset_rejects_the_seeds_the_aec_env_rejects_and_changes_nothing(seed):
    from wizard_env.envs.aec import raw_env

    env = WizardSingleAgentEnv(num_players=3, rounds=2)
    _, info = env.reset(seed=1)
    with pytest.raises(ValueError, match=r"seed must be an integer from 0 to 2\*\*63 - 1"):
        env.reset(seed=seed)
    with pytest.raises(ValueError, match=r"seed must be an integer from 0 to 2\*\*63 - 1"):
        raw_env(num_players=3, rounds=2).reset(seed=seed)
    assert env.np_random_seed == 1 and env.game.seed == info["game_seed"]


def test_reset_takes_numpy_integer_seeds_like_the_aec_env():
    env = WizardSingleAgentEnv(num_players=3, rounds=2)
    assert env.reset(seed=np.int64(4))[1] == env.reset(seed=4)[1]
    env.reset(seed=2**63 - 1)
