"""The other RL libraries on Wizard: each script of examples/ trains on a tiny budget (the weights change, no
action falls outside its mask), and the adapters that credit each seat's rewards to its own turns
(wizard_env.integrations.adapters, wizard_env.integrations.tianshou_marl) give each seat what PettingZoo's ``last()`` gives it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from helpers import uninstalled
from wizard_env import wizard_v1
from wizard_env.integrations.adapters import NO_NEXT_TURN, turn_returns, turn_transitions

if importlib.util.find_spec("torch") is not None:  # the examples' tests only (the adapters themselves need no torch)
    import torch

ROOT = Path(__file__).resolve().parent.parent


def needs(*packages: str) -> pytest.MarkDecorator:
    """Skip the test, naming them, where any of ``packages`` is not installed (they come with the adapters extra)."""
    missing = [package for package in packages if importlib.util.find_spec(package) is None]
    return pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)} (the adapters extra), not installed")


#: What each script of examples/ imports, beyond the env.
EXAMPLE_NEEDS = {
    "torchrl_ppo": needs("torch", "torchrl", "tensordict"),
    "tianshou_ppo": needs("torch", "tianshou"),
    "cleanrl_ppo": needs("torch"),
    "sb3_maskable_ppo": needs("torch", "stable_baselines3", "sb3_contrib"),
}


def example(name: str) -> ModuleType:
    """examples/<name>.py as a module (examples/ is a folder of scripts, not a package)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def changed(result) -> list[str]:
    """The names of the weights that training changed."""
    assert result.initial.keys() == result.final.keys()
    return [k for k in result.initial if not torch.equal(result.initial[k], result.final[k])]


def play(seed: int, games: int, num_players: int = 4, rounds: int = 3):
    """Random legal games through agent_iter: the step stream a library records (acting seat, every seat's
    reward of the step, episode end) and, by seat, the rewards ``last()`` gave at each of its turns and at the end."""
    env = wizard_v1.env(num_players=num_players, rounds=rounds)
    rng = np.random.default_rng(seed)
    actors, rewards, ends = [], [], []
    paid: list[list[list[float]]] = []  # by game, by seat: last()'s rewards in order
    for game in range(games):
        env.reset(seed=seed + game)
        paid.append([[] for _ in range(num_players)])
        for agent in env.agent_iter():
            seat = env.possible_agents.index(agent)
            obs, reward, terminated, truncated, _ = env.last()
            paid[-1][seat].append(reward)
            if terminated or truncated:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            actors.append(seat)
            rewards.append([env.unwrapped.rewards[a] for a in env.possible_agents])
            ends.append(all(env.unwrapped.terminations.values()))
    return np.array(actors), np.array(rewards), np.array(ends), paid


def test_a_turns_reward_is_what_last_pays_the_seat_at_its_next_turn():
    actors, rewards, ends, paid = play(seed=3, games=3)
    turn_reward, next_turn = turn_transitions(actors, rewards, ends)
    starts = np.r_[0, np.flatnonzero(ends)[:-1] + 1]
    for game, (lo, hi) in enumerate(zip(starts, np.flatnonzero(ends) + 1)):
        for seat, received in enumerate(paid[game]):
            turns = lo + np.flatnonzero(actors[lo:hi] == seat)
            # last() at the seat's first turn pays what came before it (nothing: no round ends before every bid);
            # at each later turn and at the end, what the seat got since its previous turn.
            assert received[0] == 0.0
            assert turn_reward[turns].tolist() == received[1:]
            assert next_turn[turns].tolist() == turns[1:].tolist() + [NO_NEXT_TURN]
            assert turn_reward[turns].sum() == rewards[lo:hi, seat].sum() != 0  # no round score lost
    returns = turn_returns(turn_reward, next_turn)
    first_turns = [lo + np.flatnonzero(actors[lo:] == seat)[0] for lo in starts for seat in range(4)]
    totals = [rewards[lo:hi, seat].sum() for lo, hi in zip(starts, np.flatnonzero(ends) + 1) for seat in range(4)]
    assert returns[first_turns].tolist() == totals


def test_turn_returns_discounts_over_the_seats_own_turns():
    returns = turn_returns(np.array([1.0, 0.0, 2.0, 4.0]), np.array([2, 3, NO_NEXT_TURN, NO_NEXT_TURN]), gamma=0.5)
    assert returns.tolist() == [2.0, 2.0, 2.0, 4.0]


@pytest.mark.parametrize("actors, rewards, ends, message", [
    ([0, 1, 0], np.ones((3, 2)), [False, False, False], "must end with an episode end"),
    ([0, 2], np.ones((2, 2)), [False, True], "seats 0..1"),
    ([0, 1], np.ones((3, 2)), [False, True], r"\[steps, seats\]"),
    ([0, 1], np.ones((2, 2)), [0, 1], "bool array"),
])
def test_turn_transitions_rejects_a_record_it_cannot_credit(actors, rewards, ends, message):
    with pytest.raises(ValueError, match=message):
        turn_transitions(np.array(actors), rewards, np.array(ends))


@EXAMPLE_NEEDS["torchrl_ppo"]
def test_torchrl_ppo_learns_with_masked_actions_only():
    run = example("torchrl_ppo")
    result = run.main(run.Args(updates=2, games=3))
    assert result.decisions > 100 and result.illegal == 0
    assert {"logits.weight", "value.weight", "body.0.weight"} <= set(changed(result))
    again = run.main(run.Args(updates=2, games=3))  # same seed, same run
    assert all(torch.equal(result.final[k], again.final[k]) for k in result.final)


@EXAMPLE_NEEDS["tianshou_ppo"]
def test_tianshou_ppo_learns_with_masked_actions_only():
    run = example("tianshou_ppo")
    result = run.main(run.Args(updates=2, games=3))
    assert result.decisions > 100 and result.illegal == 0
    assert {"0.head.weight", "1.head.weight", "0.body.net.0.weight"} <= set(changed(result))


@EXAMPLE_NEEDS["tianshou_ppo"]
def test_tianshou_sees_each_seats_round_scores_on_its_own_turns():
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.utils.torch_utils import policy_within_training_step

    run = example("tianshou_ppo")
    torch.manual_seed(0)
    algorithm, _ = run.build_algorithm(run.Args())
    envs = DummyVectorEnv([lambda: run.make_env(run.Args())])
    envs.seed(5)
    collector = Collector(algorithm, envs, VectorReplayBuffer(10_000, 1))
    collector.reset()
    with policy_within_training_step(algorithm.policy):
        collector.collect(n_episode=2)
    buffer = collector.buffer
    indices = buffer.sample_indices(0)
    recorded = buffer[indices]
    seats = np.array([int(a.rsplit("_", 1)[1]) for a in recorded.obs.agent_id])
    ends = np.flatnonzero(recorded.terminated)
    assert len(ends) == 2 and ends[-1] == len(indices) - 1
    totals = [np.asarray(recorded.rew)[lo:hi + 1].sum(0) for lo, hi in zip([0, ends[0] + 1], ends)]
    with policy_within_training_step(algorithm.policy):
        algorithm._preprocess_batch(recorded, buffer, indices)
    rewritten = buffer[indices]
    rew = np.asarray(rewritten.rew)
    for game, (lo, hi) in enumerate(zip([0, ends[0] + 1], ends)):
        for seat in range(4):
            turns = lo + np.flatnonzero(seats[lo:hi + 1] == seat)
            assert rew[turns, seat].sum() == totals[game][seat]  # every round score of the seat, on its turns
            assert rewritten.terminated[turns].tolist() == [False] * (len(turns) - 1) + [True]
            assert (rewritten.obs_next.agent_id[turns[:-1]] == f"player_{seat}").all()  # its own next view
            assert np.array_equal(rewritten.obs_next.obs[turns[:-1]], recorded.obs.obs[turns[1:]])


@EXAMPLE_NEEDS["cleanrl_ppo"]
def test_cleanrl_ppo_learns_with_masked_actions_only():
    run = example("cleanrl_ppo")
    args = run.Args(total_timesteps=1024, num_envs=16, num_steps=32)
    result = run.main(args)
    assert result.decisions == 1024 and result.illegal == 0
    assert {"actor.4.weight", "critic.4.weight"} <= set(changed(result))
    again = run.main(args)
    assert all(torch.equal(result.final[k], again.final[k]) for k in result.final)


@EXAMPLE_NEEDS["sb3_maskable_ppo"]
def test_sb3_maskable_ppo_learns_with_masked_actions_only():
    run = example("sb3_maskable_ppo")
    result = run.main(run.Args(total_timesteps=1024, num_envs=16))
    assert result.decisions == 1024 and result.illegal == 0
    assert any(k.startswith("action_net") for k in changed(result))
    assert any(k.startswith("value_net") for k in changed(result))


@pytest.mark.parametrize("name", [pytest.param(name, marks=mark) for name, mark in EXAMPLE_NEEDS.items()])
def test_every_example_takes_its_budget_on_the_command_line(name):
    args = example(name).parse_args(["--seed", "3"])
    assert args.seed == 3 and args == type(args)(seed=3)


@EXAMPLE_NEEDS["tianshou_ppo"]
def test_tianshou_updates_a_shared_policy_once_on_every_seats_turns():
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.utils.torch_utils import policy_within_training_step

    run = example("tianshou_ppo")
    torch.manual_seed(0)
    algorithm, _ = run.build_algorithm(run.Args())
    shared = algorithm.get_algorithm("player_0")
    update = shared._update_with_batch
    sizes = []

    def recording(batch, batch_size, repeat):
        sizes.append(len(batch))
        return update(batch, batch_size, repeat)

    shared._update_with_batch = recording
    collector = Collector(algorithm, DummyVectorEnv([lambda: run.make_env(run.Args())]), VectorReplayBuffer(10_000, 1))
    collector.reset()
    with policy_within_training_step(algorithm.policy):
        steps = collector.collect(n_episode=2).n_collected_steps
        algorithm.update(buffer=collector.buffer, batch_size=64, repeat=1)
    assert sizes == [steps]  # one update, on all seats' turns, not one per seat


def test_the_tianshou_adapter_without_tianshou_names_the_adapters_extra(monkeypatch):
    uninstalled(monkeypatch, "tianshou")
    monkeypatch.delitem(sys.modules, "wizard_env.integrations.tianshou_marl", raising=False)
    with pytest.raises(ImportError, match=r"needs tianshou, from the adapters extra: pip install -c constraints.txt -e '\.\[adapters\]'"):
        importlib.import_module("wizard_env.integrations.tianshou_marl")
