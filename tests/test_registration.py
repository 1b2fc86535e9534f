"""The env under the names other libraries' users look for: ``wizard_env.wizard_v1`` (PettingZoo classic
style) and the gymnasium id of the single-agent env, registered by importing wizard_env."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
from pettingzoo.utils import wrappers

import wizard_env
from wizard_env import GYMNASIUM_ID
from wizard_env.envs import aec as environment
from wizard_env.envs.single_agent import WizardSingleAgentEnv


def test_wizard_v1_gives_env_and_raw_env_in_the_pettingzoo_classic_style():
    from wizard_env import wizard_v1

    assert wizard_v1.raw_env is environment.raw_env
    env = wizard_v1.env(num_players=5, rounds=2, illegal_action="terminate")
    assert isinstance(env, wrappers.OrderEnforcingWrapper) and isinstance(env.unwrapped, environment.raw_env)
    assert env.unwrapped.rules.num_players == 5 and env.unwrapped.illegal_action == "terminate"
    assert env.metadata["name"] == wizard_v1.__name__.rsplit(".", 1)[1] == "wizard_v1"
    env.reset(seed=0)
    assert env.agents == [f"player_{i}" for i in range(5)]


def test_gymnasium_make_builds_the_single_agent_env_with_the_given_arguments():
    env = gym.make(GYMNASIUM_ID, num_players=5, rounds=[1, 2], opponents="random", learner_seat=2,
                   illegal_action="terminate")
    inner = env.unwrapped
    assert isinstance(inner, WizardSingleAgentEnv)
    assert inner.rules.hand_sizes == (1, 2) and inner.fixed_seat == 2 and inner.illegal_action == "terminate"
    _, info = env.reset(seed=4)
    assert info["learner_seat"] == 2
    assert env.get_wrapper_attr("action_masks")().any()
    _, reward, terminated, _, info = env.step(int(np.flatnonzero(~inner.action_masks())[0]))
    assert terminated and info["illegal_action"] and reward < 0


def test_gymnasium_make_passes_bad_arguments_to_the_env_check():
    with pytest.raises(ValueError, match="unknown illegal_action 'sometimes'"):
        gym.make(GYMNASIUM_ID, illegal_action="sometimes")


@pytest.mark.parametrize("first", ["wizard_env", "gymnasium"])
def test_the_id_is_registered_whichever_is_imported_first_and_wizard_env_alone_imports_no_gymnasium(first):
    # wizard_env registers the id as gymnasium loads, so a program that never imports gymnasium does
    # not pay for it (the rules modules import no RL library).
    second = "gymnasium" if first == "wizard_env" else "wizard_env"
    code = (
        f"import sys, {first}\n"
        f"print('gymnasium' in sys.modules)\n"
        f"import {second}, gymnasium\n"
        f"print(gymnasium.make({GYMNASIUM_ID!r}, num_players=3).unwrapped.rules.num_players)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(first == "gymnasium"), "3"]


def test_the_id_is_listed_in_gymnasiums_registry():
    spec = gym.spec(GYMNASIUM_ID)
    assert spec.entry_point == "wizard_env.envs.single_agent:WizardSingleAgentEnv"
    assert spec.namespace == "wizard_env" and spec.version == 1
    assert GYMNASIUM_ID in wizard_env.__doc__
