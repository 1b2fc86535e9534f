"""wizard_env.integrations.rllib: the AEC env as an RLlib MultiAgentEnv (RLlib's own checker, rewards, masks, illegal actions)."""

from __future__ import annotations

import numpy as np
import pytest
from ray.rllib.utils.pre_checks.env import check_multiagent_environments

from wizard_env.envs.aec import illegal_action_penalty
from wizard_env.integrations.rllib import MASK_KEY, OBS_KEY, WizardMultiAgentEnv


def play_masked_game(env: WizardMultiAgentEnv, seed: int) -> tuple[dict[str, float], dict, dict]:
    """A game of random legal actions: each agent's summed rewards, the final observations and terminateds."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    while True:
        assert len(obs) == 1  # one agent acts at a time
        (agent, seen), = obs.items()
        assert seen[MASK_KEY].dtype == np.int8 and seen[OBS_KEY].dtype == np.float32
        obs, rewards, terminateds, truncateds, infos = env.step({agent: int(rng.choice(np.flatnonzero(seen[MASK_KEY])))})
        assert set(rewards) == set(obs) and not truncateds["__all__"]
        for a, r in rewards.items():
            returns[a] += r
        if terminateds["__all__"]:
            return returns, obs, terminateds


def test_rllibs_env_checker_passes_and_its_random_action_ends_the_game_instead_of_raising():
    env = WizardMultiAgentEnv({"num_players": 4, "rounds": 2})
    check_multiagent_environments(env)  # steps action_space.sample(): illegal in most states


def test_each_seat_receives_its_round_scores_and_every_agent_ends_with_a_final_observation():
    env = WizardMultiAgentEnv({"num_players": 3, "rounds": 3, "reward_scale": 0.5})
    returns, obs, terminateds = play_masked_game(env, seed=11)
    totals = env.env.game.totals
    assert returns == {f"player_{s}": 0.5 * float(totals[s]) for s in range(3)}
    assert set(obs) == set(env.possible_agents) and all(terminateds[a] for a in env.possible_agents)
    assert not any(o[MASK_KEY].any() for o in obs.values())  # nobody acts once the game is over


def test_the_same_seed_plays_the_same_game():
    env = WizardMultiAgentEnv({"num_players": 4, "rounds": 2})
    assert play_masked_game(env, 5)[0] == play_masked_game(env, 5)[0]


def test_an_illegal_action_ends_the_game_with_the_penalty_to_the_offender():
    env = WizardMultiAgentEnv({"num_players": 4, "rounds": 2})
    obs, _ = env.reset(seed=1)
    (agent, seen), = obs.items()
    illegal = int(np.flatnonzero(seen[MASK_KEY] == 0)[0])
    obs, rewards, terminateds, _, infos = env.step({agent: illegal})
    assert terminateds["__all__"] and rewards[agent] == illegal_action_penalty(env.rules)
    assert infos[agent]["illegal_action"] and not any(infos[a]["illegal_action"] for a in infos if a != agent)
    with pytest.raises(RuntimeError, match="reset"):
        env.step({agent: 0})


def test_the_observation_space_holds_the_keys_of_rllibs_action_masking_module():
    env = WizardMultiAgentEnv({"num_players": 5})
    space = env.get_observation_space("player_0")
    assert set(space.spaces) == {OBS_KEY, MASK_KEY} == {"observations", "action_mask"}
    obs, _ = env.reset(seed=0)
    assert all(space.contains(o) for o in obs.values())
