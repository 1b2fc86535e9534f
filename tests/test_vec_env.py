"""The batched VecEnv: SB3's VecEnv contract and wrappers, returns and observations re-played on a fresh
engine, learner seats, seeds, illegal actions, the opponent pool, attribute access, a MaskablePPO smoke."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported  # noqa: E402
from stable_baselines3.common.vec_env import VecCheckNan, VecMonitor, VecNormalize  # noqa: E402

from wizard_env.agents import Agent, RandomAgent  # noqa: E402
from wizard_env import NUM_ACTIONS, OBS_SIZE, IllegalActionError, Phase, Rules, WizardGame, decode, observe  # noqa: E402
from wizard_env.engine.observation import SLICES  # noqa: E402
from wizard_env.envs.vec_env import WizardVecEnv  # noqa: E402

from helpers import FirstLegal, random_legal  # noqa: E402

SHORT = dict(num_players=4, rounds=3)


class LastLegal(Agent):
    """Plays its highest legal action id."""

    name = "last"

    def act_batch(self, observations, action_masks):
        """The last legal action of each row."""
        return (NUM_ACTIONS - 1 - np.asarray(action_masks)[:, ::-1].argmax(axis=1)).astype(np.int64)


class Counting(Agent):
    """Random legal play that records the size of every act_batch call."""

    def __init__(self, name: str, seed: int = 0):
        self.name, self.calls, self.inner = name, [], RandomAgent(seed)

    def act_batch(self, observations, action_masks):
        """A random legal action per row; the call's batch size is recorded."""
        self.calls.append(len(observations))
        return self.inner.act_batch(observations, action_masks)


class Illegal(Agent):
    """Always plays action 0, legal or not."""

    name = "illegal"

    def act_batch(self, observations, action_masks):
        """Zero for every row."""
        return np.zeros(len(action_masks), dtype=np.int64)


@dataclass
class Episode:
    """One finished game as the VecEnv showed it to the learner."""

    seat: int
    game_seed: int
    agents: list
    observations: list = field(default_factory=list)
    actions: list = field(default_factory=list)
    rewards: list = field(default_factory=list)
    info: dict = field(default_factory=dict)


def play(env: WizardVecEnv, steps: int, policy_seed: int = 0) -> list[Episode]:
    """Reset, take ``steps`` random legal learner steps; return the games that finished, in order."""
    rng = np.random.default_rng(policy_seed)
    obs = env.reset()
    current = [Episode(s, g, a) for s, g, a in zip(*(env.get_attr(n) for n in ("learner_seat", "game_seed", "seat_agents")))]
    finished = []
    for _ in range(steps):
        actions = random_legal(env.action_masks(), rng)
        for i, episode in enumerate(current):
            episode.observations.append(obs[i])
            episode.actions.append(int(actions[i]))
        obs, rewards, dones, infos = env.step(actions)
        for i in range(env.num_envs):
            current[i].rewards.append(float(rewards[i]))
            if dones[i]:
                current[i].info = infos[i]
                finished.append(current[i])
                current[i] = Episode(*(env.get_attr(n, i)[0] for n in ("learner_seat", "game_seed", "seat_agents")))
    return finished


def replay(rules: Rules, episode: Episode) -> WizardGame:
    """Re-play a finished game on a fresh engine: the learner's logged actions, the (deterministic)
    opponents deciding again; check every learner observation on the way."""
    game = WizardGame(rules, episode.game_seed)
    taken = 0
    while not game.is_over:
        if game.current == episode.seat:
            assert np.array_equal(observe(game, episode.seat), episode.observations[taken])
            game.step(episode.actions[taken])
            taken += 1
        else:
            agent = episode.agents[game.current]
            game.step(agent.act(observe(game, game.current), game.legal_mask()))
    assert taken == len(episode.actions)
    return game


# -- the VecEnv contract ---------------------------------------------------------------------------


def test_reset_and_step_return_what_sb3_expects():
    env = WizardVecEnv(6, seed=0, **SHORT, opponents="random")
    obs = env.reset()
    assert obs.shape == (6, OBS_SIZE) and obs.dtype == np.float32
    assert all(env.observation_space.contains(row) for row in obs)
    assert [set(info) for info in env.reset_infos] == [{"learner_seat", "game_seed"}] * 6
    new_obs, rewards, dones, infos = env.step(random_legal(env.action_masks(), np.random.default_rng(0)))
    assert new_obs.shape == (6, OBS_SIZE) and new_obs.dtype == np.float32
    assert rewards.shape == (6,) and rewards.dtype == np.float32
    assert dones.shape == (6,) and dones.dtype == np.bool_
    assert isinstance(infos, list) and len(infos) == 6 and all(isinstance(i, dict) for i in infos)
    assert not np.shares_memory(obs, new_obs)  # SB3 keeps the previous observations


def test_done_gives_terminal_observation_and_the_next_games_first_decision():
    env = WizardVecEnv(5, seed=1, num_players=3, rounds=2, opponents=[FirstLegal(), LastLegal()])
    episodes = play(env, steps=12)
    assert len(episodes) >= 5
    for episode in episodes:
        info = episode.info
        assert set(info) == {"terminal_observation", "final_totals", "learner_seat", "game_seed", "episode"}
        game = replay(env.rules, episode)
        assert np.array_equal(info["terminal_observation"], observe(game, episode.seat))
        assert decode(info["terminal_observation"])["phase"][Phase.OVER] == 1
    # after a done, the returned observation is the learner's first decision of a new game
    rng = np.random.default_rng(0)
    env.reset()
    while True:
        obs, _, dones, infos = env.step(random_legal(env.action_masks(), rng))
        if dones.any():
            break
    for i in np.flatnonzero(dones):
        view = decode(obs[i])
        assert view["round"] == 1 and view["phase"][Phase.OVER] == 0 and not view["scores"].any()
        assert env.get_attr("game_seed", int(i))[0] != infos[i]["game_seed"]


@pytest.mark.parametrize("n, scale", [(3, 1.0), (4, 0.01), (5, 0.5)])
def test_episode_return_is_the_learners_final_total_on_a_replayed_game(n, scale):
    env = WizardVecEnv(4, seed=n, num_players=n, rounds=3, bidding="hidden", reward_scale=scale,
                       opponents=[FirstLegal(), LastLegal()])
    episodes = play(env, steps=3 * 6 + 2, policy_seed=n)
    assert len(episodes) >= 8
    for episode in episodes:
        totals = replay(env.rules, episode).totals
        assert episode.info["final_totals"] == totals.tolist()
        assert sum(episode.rewards) == pytest.approx(totals[episode.seat] * scale, abs=1e-5)  # float32 rewards
        assert episode.info["episode"] == {"r": pytest.approx(totals[episode.seat] * scale), "l": len(episode.actions)}
        assert episode.info["learner_seat"] == episode.seat and episode.info["game_seed"] == episode.game_seed


def test_rewards_follow_the_learner_not_another_seat():
    # Over many games the learner's total differs from every other seat's somewhere, so a reward
    # taken from a wrong seat would show.
    env = WizardVecEnv(16, seed=3, num_players=4, rounds=2, opponents="random")
    episodes = play(env, steps=12)
    differs = set()
    for episode in episodes:
        totals = episode.info["final_totals"]
        assert sum(episode.rewards) == totals[episode.seat]
        differs |= {s for s in range(4) if totals[s] != totals[episode.seat]}
    assert differs == {0, 1, 2, 3}


def test_sb3_vec_wrappers_work_and_vec_monitor_logs_the_same_returns():
    env = WizardVecEnv(8, seed=2, num_players=3, rounds=2, opponents="random", reward_scale=0.1)
    wrapped = VecMonitor(VecCheckNan(VecNormalize(env, norm_reward=False), raise_exception=True))
    assert is_masking_supported(wrapped)
    obs = wrapped.reset()
    assert obs.shape == (8, OBS_SIZE)
    rng = np.random.default_rng(0)
    logged = 0
    for _ in range(8):
        masks = get_action_masks(wrapped)
        assert masks.dtype == np.bool_ and masks.shape == (8, NUM_ACTIONS)
        assert np.array_equal(masks, env.action_masks())
        obs, rewards, dones, infos = wrapped.step(random_legal(masks, rng))
        for i in np.flatnonzero(dones):
            totals, seat = infos[i]["final_totals"], infos[i]["learner_seat"]
            assert infos[i]["episode"]["r"] == pytest.approx(totals[seat] * 0.1, abs=1e-5)
            logged += 1
    assert logged >= 8


def test_action_masks_are_the_learners_legal_actions():
    env = WizardVecEnv(4, seed=0, **SHORT, opponents="random")
    obs = env.reset()
    masks = env.action_masks()
    assert masks.dtype == np.bool_ and masks.shape == (4, NUM_ACTIONS) and masks.any(axis=1).all()
    for i, seat in enumerate(env.get_attr("learner_seat")):
        view = decode(obs[i])
        assert view["phase"][Phase.BID] == 1 or view["phase"][Phase.TRUMP] == 1
        assert np.array_equal(masks[i], env.batch.legal_masks(np.array([i]))[0] != 0)
        assert env.batch.current[i] == seat
    assert [row.tolist() for row in env.env_method("action_masks", indices=[2, 0])] == [masks[2].tolist(), masks[0].tolist()]


# -- seats and seeds -------------------------------------------------------------------------------


def test_learner_seat_varies_by_game_and_a_fixed_seat_leaves_the_games_unchanged():
    free = WizardVecEnv(32, seed=4, num_players=5, rounds=1, opponents="random")
    fixed = WizardVecEnv(32, seed=4, num_players=5, rounds=1, opponents="random", learner_seat=2)
    free.reset(), fixed.reset()
    assert set(free.get_attr("learner_seat")) == set(range(5))
    assert set(fixed.get_attr("learner_seat")) == {2}
    assert free.get_attr("game_seed") == fixed.get_attr("game_seed")


def test_same_seed_same_trajectory_and_seed_then_reset_matches_the_constructor():
    reseeded = WizardVecEnv(6, seed=99, **SHORT)
    play(reseeded, steps=3)  # use up some of seed 99's draws and the agents' generators
    reseeded.seed(7)  # SB3's seed(): applied at the next reset
    a, b = (play(env, steps=14, policy_seed=1) for env in (WizardVecEnv(6, seed=7, **SHORT), reseeded))
    assert len(a) == len(b) > 0
    for x, y in zip(a, b):
        assert (x.seat, x.game_seed, x.actions, x.rewards) == (y.seat, y.game_seed, y.actions, y.rewards)
        assert all(np.array_equal(o, p) for o, p in zip(x.observations, y.observations))
        assert x.info["final_totals"] == y.info["final_totals"]
    other = WizardVecEnv(6, seed=8, **SHORT)
    other.reset()
    assert set(other.get_attr("game_seed")).isdisjoint(g.game_seed for g in a)


# -- illegal actions -------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["illegal", NUM_ACTIONS, -1, "float", "short"])
def test_illegal_learner_action_raises_and_changes_nothing(bad):
    env, twin = WizardVecEnv(4, seed=5, **SHORT), WizardVecEnv(4, seed=5, **SHORT)
    obs, _ = env.reset(), twin.reset()
    masks = env.action_masks()
    actions = masks.argmax(axis=1)
    if bad == "illegal":
        actions[2] = np.flatnonzero(~masks[2])[0]
    elif bad == "float":
        actions = actions.astype(np.float64)
    elif bad == "short":
        actions = actions[:3]
    else:
        actions[2] = bad
    with pytest.raises(IllegalActionError, match="learner's action"):
        env.step(actions)
    assert np.array_equal(env.batch.observe(observers=np.array(env.get_attr("learner_seat"))), obs)
    assert np.array_equal(env.action_masks(), masks)
    legal = masks.argmax(axis=1)
    after, after_twin = env.step(legal), twin.step(legal)
    assert np.array_equal(after[0], after_twin[0]) and np.array_equal(after[1], after_twin[1])


def test_opponent_returning_an_illegal_action_is_named():
    env = WizardVecEnv(2, seed=0, num_players=3, rounds=3, opponents=Illegal(), learner_seat=0)
    with pytest.raises(IllegalActionError, match="opponent 'illegal'"):
        play(env, steps=6)


class Malformed(Agent):
    """Legal actions, but as floats or one too few."""

    name = "malformed"

    def __init__(self, how: str):
        self.how = how

    def act_batch(self, observations, action_masks):
        """The first legal action of each row, spoilt as ``how`` says."""
        actions = np.argmax(action_masks, axis=1)
        return actions.astype(np.float64) + 0.5 if self.how == "float" else actions[1:]


@pytest.mark.parametrize("how, why", [("float", "float64 actions"), ("short", r"int64 actions of shape \(\d+,\), not \d+ integer")])
def test_an_opponent_returning_malformed_actions_is_named_not_truncated(how, why):
    env = WizardVecEnv(4, seed=0, num_players=3, rounds=3, opponents=Malformed(how), learner_seat=0)
    with pytest.raises(IllegalActionError, match=f"opponent 'malformed' returned {why}"):
        play(env, steps=6)


def test_step_before_reset_and_step_wait_without_actions_raise():
    env = WizardVecEnv(2, seed=0, **SHORT)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(2, dtype=np.int64))
    env.reset()
    with pytest.raises(RuntimeError, match="step_async"):
        env.step_wait()


# -- the opponent pool -----------------------------------------------------------------------------


def test_each_agent_decides_once_per_move_for_all_its_games():
    a, b = Counting("a", 1), Counting("b", 2)
    env = WizardVecEnv(24, seed=0, num_players=4, rounds=3, opponents=[a, b])
    rng = np.random.default_rng(0)
    env.reset()
    for _ in range(8):
        a.calls.clear(), b.calls.clear()
        env.step(random_legal(env.action_masks(), rng))
        # at most 2n - 1 opponent moves separate two learner decisions (a trick's end, a new round or game)
        assert 0 < len(a.calls) <= 7 and 0 < len(b.calls) <= 7
        assert sum(a.calls) + sum(b.calls) > 24  # the moves of many games, batched


def test_weights_choose_pool_members_and_a_new_pool_starts_with_each_next_game():
    old, new = Counting("old"), Counting("new")
    env = WizardVecEnv(12, seed=6, num_players=3, rounds=2, opponents=[old, FirstLegal()], opponent_weights=[1, 0])
    rng = np.random.default_rng(0)
    env.reset()
    assert {a.name for seats in env.get_attr("seat_agents") for a in seats if a is not None} == {"old"}
    env.set_opponent_pool([new])
    assert env.opponent_pool == [new]
    before = env.get_attr("seat_agents")
    dones = np.zeros(12, dtype=bool)
    while not dones.all():
        _, _, done, _ = env.step(random_legal(env.action_masks(), rng))
        dones |= done
        for i, seats in enumerate(env.get_attr("seat_agents")):
            expected = "new" if dones[i] else "old"  # running games keep their players
            assert {a.name for a in seats if a is not None} == {expected}
            assert seats == before[i] or dones[i]
    assert old.calls and new.calls


@pytest.mark.parametrize(
    "kwargs, why",
    [
        (dict(num_envs=0), "num_envs must be a positive integer"),
        (dict(num_envs=2, seed=-1), r"seed must be an integer from 0 to 2\*\*63 - 1, not -1"),
        (dict(num_envs=2, opponents=[]), "non-empty list"),
        (dict(num_envs=2, opponents="nosuch"), "unknown agent 'nosuch'"),
        (dict(num_envs=2, opponents=["rule", 5]), r"opponents\[1\] must be an agent spec"),
        (dict(num_envs=2, opponents=["rule", "random"], opponent_weights=[1]), "2 opponents need 2 weights"),
        (dict(num_envs=2, opponents=["rule", "random"], opponent_weights=[0, 0]), "not all zero"),
        (dict(num_envs=2, opponent_weights=[-1]), "non-negative"),
        (dict(num_envs=2, learner_seat=4), "learner_seat must be None or a seat 0..3"),
        (dict(num_envs=2, reward_scale=0), "reward_scale must be a positive"),
        (dict(num_envs=2, num_players=7), "num_players"),
        (dict(num_envs=2, learn="trump"), "learn must be one of both, bid, play, not 'trump'"),
        (dict(num_envs=2, episode="trick"), "episode must be one of game, round, not 'trick'"),
    ],
)
def test_bad_arguments_raise_value_error_naming_the_problem(kwargs, why):
    with pytest.raises(ValueError, match=why):
        WizardVecEnv(**kwargs)


# -- learned phases and rounds as episodes ----------------------------------------------------------


class Spy(RandomAgent):
    """RandomAgent that records the phase of every observation it is asked about."""

    name = "spy"

    def __init__(self, seed: int):
        super().__init__(seed)
        self.phases: set[int] = set()

    def act_batch(self, observations, action_masks):
        """A random legal action per row; the phases seen are recorded."""
        self.phases |= set(observations[:, SLICES["phase"]].argmax(axis=1).tolist())
        return super().act_batch(observations, action_masks)


@pytest.mark.parametrize("learn, phases", [("bid", {Phase.TRUMP, Phase.BID}), ("play", {Phase.PLAY}),
                                           ("both", {Phase.TRUMP, Phase.BID, Phase.PLAY})])
def test_the_learner_only_sees_decisions_of_the_phases_it_learns_and_rounds_end_episodes(learn, phases):
    env = WizardVecEnv(16, seed=1, num_players=4, rounds=[1, 3, 5], opponents=RandomAgent(0), learn=learn,
                       episode="round")
    obs, rng, seen, games, rounds = env.reset(), np.random.default_rng(1), set(), 0, 0
    for _ in range(80):
        seen |= set(obs[:, SLICES["phase"]].argmax(axis=1).tolist())
        seats = np.array(env.get_attr("learner_seat"))
        assert np.array_equal(obs, env.batch.observe(observers=seats)) and (env.batch.current == seats).all()
        obs, rewards, dones, infos = env.step(random_legal(env.action_masks(), rng))
        games += sum("episode" in i for i in infos)
        rounds += int(dones.sum())
    assert seen <= {int(p) for p in phases}
    assert {int(p) for p in phases if p != Phase.TRUMP} <= seen  # the dealer chooses trump only under a Wizard
    assert games > 0 and rounds >= 3 * games  # an episode per round


@pytest.mark.parametrize("learn, delegated", [("bid", {Phase.PLAY}), ("play", {Phase.BID, Phase.TRUMP}), ("both", set())])
def test_the_learners_other_phases_go_to_the_delegate_and_only_those(learn, delegated):
    env = WizardVecEnv(8, seed=3, num_players=4, rounds=[2, 3], opponents=RandomAgent(0), learn=learn)
    assert (env.delegate is None) == (learn == "both")
    spy = env.delegate = Spy(1)
    obs, rng = env.reset(), np.random.default_rng(2)
    for _ in range(30):
        obs, *_ = env.step(random_legal(env.action_masks(), rng))
    delegated = {int(p) for p in delegated}
    assert delegated - {int(Phase.TRUMP)} <= spy.phases <= delegated  # trump is chosen only under a Wizard


@pytest.mark.parametrize("learn", ["bid", "play", "both"])
def test_round_episodes_reward_each_round_and_log_the_unscaled_final_total(learn):
    env = WizardVecEnv(8, seed=2, num_players=4, rounds=[2, 4], opponents=FirstLegal(), learn=learn,
                       episode="round", reward_scale=0.5)
    obs, rng = env.reset(), np.random.default_rng(3)
    game, checked = np.zeros(8), 0
    for _ in range(40):
        before = obs
        obs, rewards, dones, infos = env.step(random_legal(env.action_masks(), rng))
        game += rewards / 0.5
        assert not rewards[~dones].any()  # a round's score comes with its done
        for g in np.flatnonzero(dones):
            if "episode" in infos[g]:  # the game ended: its real last view
                totals = infos[g]["final_totals"]
                assert game[g] == totals[infos[g]["learner_seat"]] == infos[g]["episode"]["r"]
                assert decode(infos[g]["terminal_observation"])["phase"][Phase.OVER] == 1
                game[g], checked = 0, checked + 1
            else:  # the learner's last decision of the round
                assert set(infos[g]) == {"terminal_observation"}
                assert np.array_equal(infos[g]["terminal_observation"], before[g])
    assert checked >= 8


# -- attributes and methods through the VecEnv interface ------------------------------------------


def test_get_set_attr_env_method_and_env_is_wrapped():
    env = WizardVecEnv(3, seed=0, num_players=3, rounds=1, opponents="random")
    with pytest.raises(RuntimeError, match="reset"):
        env.get_attr("learner_seat")
    env.reset()
    assert env.get_attr("reward_scale", [0, 2]) == [1.0, 1.0]
    with pytest.raises(AttributeError, match="no attribute 'nosuch'"):
        env.get_attr("nosuch")
    env.set_attr("reward_scale", 0.5)
    assert env.reward_scale == 0.5
    with pytest.raises(ValueError, match="every game at once"):
        env.set_attr("reward_scale", 2.0, indices=[0])
    with pytest.raises(AttributeError, match="cannot set 'rules'"):
        env.set_attr("rules", None)
    with pytest.raises(ValueError, match="reward_scale must be a positive"):
        env.set_attr("reward_scale", -1)
    assert env.env_method("set_opponent_pool", ["rule"]) == [None] * 3
    assert [a.name for a in env.opponent_pool] == ["rule"]
    with pytest.raises(AttributeError, match="no env method 'reset'"):
        env.env_method("reset")
    with pytest.raises(ValueError, match="env indices must be in 0..2"):
        env.get_attr("game_seed", [3])
    assert env.env_is_wrapped(VecMonitor) == [False] * 3
    env.set_options({"learner_seat": 1})
    with pytest.raises(ValueError, match=r"unknown reset options \['learner_seat'\]"):
        env.reset()
    assert env.reset().shape == (3, OBS_SIZE)  # the rejected options are dropped


# -- training smoke --------------------------------------------------------------------------------


def test_maskable_ppo_trains_on_it_and_logs_returns():
    pytest.importorskip("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices: extra threads only wait on each other on a busy machine
    try:
        env = WizardVecEnv(8, num_players=3, rounds=2, opponents="random", reward_scale=0.01)
        model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=64, n_epochs=2, seed=0,
                            policy_kwargs=dict(net_arch=[32]), device="cpu")
        before = [p.detach().clone() for p in model.policy.parameters()]
        # Any illegal learner action would raise IllegalActionError here.
        model.learn(total_timesteps=512)
    finally:
        torch.set_num_threads(threads)
    assert len(model.ep_info_buffer) >= 50
    # a logged return is a learner's final total (a multiple of 10 points) times the scale; a game
    # is 2 bids and 3 cards, and a trump choice for a dealer who turns up a Wizard
    for info in model.ep_info_buffer:
        assert abs(info["r"] * 10 - round(info["r"] * 10)) < 1e-6 and 5 <= info["l"] <= 7
    assert any(not torch.equal(b, a) for b, a in zip(before, model.policy.parameters()))


# -- a failed call changes nothing (issue 9) ----------------------------------------------------------


def _two_resets(env: WizardVecEnv) -> tuple[np.ndarray, list[int]]:
    obs = env.reset()
    return obs, env.get_attr("game_seed")


@pytest.mark.parametrize(
    "call, why",
    [
        (lambda env: env.set_opponent_pool(["rule", "ppo:/no/such/checkpoint.npz"]), "no such file"),
        (lambda env: env.set_opponent_pool(["rule", "random"], [1, float("nan")]), "finite"),
        (lambda env: env.seed(-1), r"seed must be an integer from 0 to 2\*\*63 - 1"),
        (lambda env: env.seed(2**63), r"seed must be an integer from 0 to 2\*\*63 - 1"),
        (lambda env: env.seed(True), r"seed must be an integer from 0 to 2\*\*63 - 1, not True"),
    ],
)
def test_a_failed_call_leaves_the_vec_env_as_it_was(call, why):
    env, twin = (WizardVecEnv(4, seed=3, **SHORT, opponents=["rule", "random"]) for _ in range(2))
    env.reset(), twin.reset()
    with pytest.raises(ValueError, match=why):
        call(env)
    obs, seeds = _two_resets(env)
    twin_obs, twin_seeds = _two_resets(twin)
    assert seeds == twin_seeds and np.array_equal(obs, twin_obs)
    assert [a.name for a in env.opponent_pool] == ["rule", "random"]
    env.step(random_legal(env.action_masks(), np.random.default_rng(0)))


def test_seeds_at_the_int64_limit():
    WizardVecEnv(2, seed=2**63 - 1, **SHORT).reset()
    with pytest.raises(ValueError, match=r"seed must be an integer from 0 to 2\*\*63 - 1"):
        WizardVecEnv(2, seed=2**63, **SHORT)

