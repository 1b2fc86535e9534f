"""The named benchmark settings (``wizard_env.envs.settings``): their rules and opponents, the envs, the gymnasium ids
and ``wizard eval --setting`` built from them, and the refusals of a setting with options that it fixes."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import wizard_env
from wizard_env import GYMNASIUM_ID
from wizard_env.agents.registry import parse_spec
from wizard_env.agents.rule_agent import RuleAgent
from wizard_env.cli.main import main
from wizard_env.engine.rules import Bidding, Rules
from wizard_env.envs import settings as settings_module
from wizard_env.envs.settings import SETTINGS, Setting, get_setting, settings_table
from wizard_env.envs.single_agent import WizardSingleAgentEnv, check_opponents

ENVIRONMENT_PAGE = Path(__file__).resolve().parent.parent / "docs" / "environment.md"

#: What the issue asks of each setting, written out here rather than read from the module:
#: players, hand sizes, bidding, bid total rule, foresight, opponents.
EXPECTED = {
    "wizard-3p-5r": (3, (1, 2, 3, 4, 5), Bidding.OPEN, False, False, ("rule", "rule")),
    "wizard-4p-5r": (4, (1, 2, 3, 4, 5), Bidding.OPEN, False, False, ("rule", "rule", "rule")),
    "wizard-4p": (4, tuple(range(1, 16)), Bidding.OPEN, False, False, ("rule", "rule", "rule")),
}


def rules_fields(rules: Rules) -> tuple:
    return rules.num_players, rules.hand_sizes, rules.bidding, rules.bid_total_rule, rules.foresight


# -- the settings --------------------------------------------------------------------------------


def test_the_settings_are_the_ones_asked_for_small_to_large():
    assert list(SETTINGS) == list(EXPECTED)
    sizes = [s.rules().num_players * sum(s.rules().hand_sizes) for s in SETTINGS.values()]
    assert sizes == sorted(sizes)  # cards dealt in a game: small to large


@pytest.mark.parametrize("name", list(EXPECTED))
def test_a_setting_gives_its_rules_and_opponents(name: str):
    setting = get_setting(name)
    assert rules_fields(setting.rules()) == EXPECTED[name][:5]
    assert setting.opponents == EXPECTED[name][5]
    assert setting.gymnasium_id == f"wizard_env/{name}-v1"


@pytest.mark.parametrize("name", list(SETTINGS))
def test_a_settings_opponents_are_agents_an_env_can_seat(name: str):
    setting = get_setting(name)
    for spec in setting.opponents:
        parse_spec(spec)
    assert check_opponents(list(setting.opponents), setting.num_players, "opponents") == list(setting.opponents)


def test_a_setting_is_frozen_and_checked_when_made():
    with pytest.raises(dataclasses.FrozenInstanceError):
        get_setting("wizard-4p").num_players = 5  # type: ignore[misc]
    with pytest.raises(ValueError, match="3 players need 2 opponents, got 1"):
        Setting("short", 3, 5, "open", False, False, ("rule",))
    with pytest.raises(ValueError, match="bid_total_rule needs open bidding"):
        Setting("impossible", 3, 5, "hidden", True, False, ("rule", "rule"))


@pytest.mark.parametrize("name", ["wizard-9p", "Wizard-4p", "wizard-4p-v1", "", 4])
def test_an_unknown_setting_is_an_error_naming_the_known_ones(name):
    with pytest.raises(ValueError, match="unknown setting") as caught:
        get_setting(name)
    assert all(known in str(caught.value) for known in SETTINGS)
    with pytest.raises(ValueError, match="unknown setting"):
        wizard_env.env(setting=name)
    with pytest.raises(ValueError, match="unknown setting"):
        WizardSingleAgentEnv(setting=name)


def test_the_table_in_the_module_docstring_and_the_environment_page_is_the_settings():
    table = settings_table()
    assert all(f"| `{name}` |" in table for name in SETTINGS)
    assert table in (settings_module.__doc__ or "")
    assert table in ENVIRONMENT_PAGE.read_text(encoding="utf-8")


# -- the envs ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(EXPECTED))
def test_the_aec_env_of_a_setting_plays_by_its_rules(name: str):
    env = wizard_env.env(setting=name)
    assert rules_fields(env.unwrapped.rules) == EXPECTED[name][:5]
    env.reset(seed=3)
    assert len(env.agents) == EXPECTED[name][0]
    assert env.unwrapped.game.rules.hand_sizes == EXPECTED[name][1]


@pytest.mark.parametrize("name", list(EXPECTED))
def test_gymnasium_makes_each_setting_and_a_random_legal_game_runs_with_masks(name: str):
    env = gym.make(get_setting(name).gymnasium_id)
    inner = env.unwrapped
    assert isinstance(inner, WizardSingleAgentEnv)
    assert rules_fields(inner.rules) == EXPECTED[name][:5]
    _, info = env.reset(seed=11)
    seats = sorted(inner.opponents)
    assert seats == sorted(set(range(EXPECTED[name][0])) - {info["learner_seat"]})
    assert all(isinstance(inner.opponents[s], RuleAgent) for s in seats)
    rng = np.random.default_rng(0)
    total, steps, terminated = 0.0, 0, False
    while not terminated:
        mask = env.get_wrapper_attr("action_masks")()
        assert mask.any()
        _, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert not truncated
        total += reward
        steps += 1
    assert steps >= sum(EXPECTED[name][1])  # at least a bid and the cards of every round
    assert len(info["final_totals"]) == EXPECTED[name][0]
    assert total == info["final_totals"][info["learner_seat"]]  # the rewards add up to the learner's total
    assert not env.get_wrapper_attr("action_masks")().any()


def test_the_other_options_stay_free_beside_a_setting():
    env = gym.make("wizard_env/wizard-4p-5r-v1", learner_seat=2, reward_scale=0.5, illegal_action="terminate")
    inner = env.unwrapped
    assert (inner.fixed_seat, inner.reward_scale, inner.illegal_action) == (2, 0.5, "terminate")
    assert inner.rules == get_setting("wizard-4p-5r").rules()
    aec = wizard_env.env(setting="wizard-3p-5r", reward="relative", render_mode="ansi")
    assert aec.unwrapped.reward_mode == "relative" and aec.unwrapped.rules.num_players == 3


def test_the_id_without_a_version_makes_the_same_env_with_gymnasiums_warning():
    with pytest.warns(UserWarning, match="latest versioned environment `wizard_env/wizard-3p-5r-v1`"):
        env = gym.make("wizard_env/wizard-3p-5r")
    assert env.spec is not None and env.spec.id == "wizard_env/wizard-3p-5r-v1"
    assert env.unwrapped.rules == get_setting("wizard-3p-5r").rules()


@pytest.mark.parametrize("name", list(SETTINGS))
def test_each_id_is_in_gymnasiums_registry_beside_the_plain_one(name: str):
    spec, plain = gym.spec(get_setting(name).gymnasium_id), gym.spec(GYMNASIUM_ID)
    assert spec.entry_point == plain.entry_point and spec.kwargs == {"setting": name}
    assert (spec.namespace, spec.name, spec.version) == (plain.namespace, name, plain.version)


def test_the_ids_are_registered_without_wizard_env_importing_gymnasium_or_pettingzoo():
    code = (
        "import sys, wizard_env, wizard_env.envs.settings\n"
        "print('gymnasium' in sys.modules, 'pettingzoo' in sys.modules)\n"
        "import gymnasium\n"
        "print(gymnasium.make('wizard_env/wizard-3p-5r-v1').unwrapped.rules.num_players)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False", "3"]


# -- a setting with the options it fixes -----------------------------------------------------------


@pytest.mark.parametrize("option, value", [("num_players", 3), ("num_players", 4), ("rounds", 5), ("rounds", "standard"),
                                           ("bidding", "open"), ("bid_total_rule", False), ("foresight", True)])
def test_a_setting_with_a_rule_option_is_refused_even_an_equal_one(option: str, value):
    for make in (wizard_env.env, wizard_env.raw_env, WizardSingleAgentEnv):
        with pytest.raises(ValueError, match=f"setting 'wizard-3p-5r' fixes the game: {option} cannot be given"):
            make(setting="wizard-3p-5r", **{option: value})


@pytest.mark.parametrize("extra", [{"opponents": "random"}, {"opponents": ["rule", "rule"]},
                                   {"opponent_sampler": lambda rng: "random"}])
def test_the_single_agent_env_refuses_opponents_beside_a_setting(extra: dict):
    name = next(iter(extra))
    with pytest.raises(ValueError, match=f"fixes the game: {name} cannot be given"):
        WizardSingleAgentEnv(setting="wizard-3p-5r", **extra)


def test_every_conflicting_option_is_named_at_once():
    with pytest.raises(ValueError, match="fixes the game: num_players, rounds, opponents cannot be given"):
        WizardSingleAgentEnv(setting="wizard-4p", num_players=4, rounds=3, opponents="random")


def test_a_refused_gymnasium_make_leaves_the_registered_id_as_it_was():
    setting = get_setting("wizard-4p-5r")
    before = gym.spec(setting.gymnasium_id).kwargs.copy()
    with pytest.raises(ValueError, match="rounds cannot be given"):
        gym.make(setting.gymnasium_id, rounds=3)
    with pytest.raises(ValueError, match="opponents cannot be given"):
        gym.make(setting.gymnasium_id, opponents="random")
    assert gym.spec(setting.gymnasium_id).kwargs == before == {"setting": setting.name}
    assert gym.make(setting.gymnasium_id).unwrapped.rules == setting.rules()  # and it still makes the setting


def test_without_a_setting_the_rule_options_default_as_before():
    assert wizard_env.env().unwrapped.rules == Rules.make()
    assert WizardSingleAgentEnv().rules == Rules.make() and WizardSingleAgentEnv()._opponent_entries == ["rule"] * 3
    assert wizard_env.env(num_players=5, rounds=2).unwrapped.rules == Rules.make(5, 2)


# -- wizard eval --setting -----------------------------------------------------------------------


@pytest.mark.parametrize("name, agent", [("wizard-3p-5r", "random"), ("wizard-4p-5r", "rule")])
def test_eval_with_a_setting_seats_the_agent_against_its_opponents(name: str, agent: str, tmp_path, capsys):
    out = tmp_path / "ev"
    assert main(["eval", "--setting", name, "--agents", agent, "--games", "2", "--seed", "1", "--out", str(out),
                 "--quiet"]) == 0
    printed = capsys.readouterr().out
    data = json.loads((out / "eval.json").read_text())
    players, hand_sizes, bidding, bid_total_rule, foresight, opponents = EXPECTED[name]
    assert data["players"] == players
    assert data["rules"] == {"hand_sizes": list(hand_sizes), "bidding": bidding.value, "bid_total_rule": bid_total_rule,
                             "foresight": foresight}
    assert data["agents"] == [agent, *opponents]
    assert data["games"] == 2 * players and len(data["seatings"]) == players  # every deal from every seat
    assert data["reference"] == "rule"
    assert printed.splitlines()[0].startswith(f"{players} players, {len(hand_sizes)} rounds")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--agents", "random,rule,rule"], "--agents names 3 agents beside --setting wizard-3p-5r, whose opponents "
                                          "(rule, rule) take the other seats: give the one agent to evaluate"),
        (["--agents", "random", "--players", "3"], "setting 'wizard-3p-5r' fixes the game: --players cannot be given"),
        (["--agents", "random", "--rounds", "standard"], "fixes the game: --rounds cannot be given"),
        (["--agents", "random", "--bid-total-rule", "--foresight"], "fixes the game: --bid-total-rule, --foresight"),
        (["--agents", "random", "--bidding", "open"], "fixes the game: --bidding cannot be given"),
        (["--agents", "bogus"], "--agents: unknown agent 'bogus'"),
    ],
)
def test_eval_with_a_setting_refuses_what_it_fixes_in_one_line(args, message, tmp_path, capsys):
    out = tmp_path / "ev"
    assert main(["eval", "--setting", "wizard-3p-5r", "--games", "1", "--out", str(out), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wizard: error: ") and message in err and err.count("\n") == 1
    assert not out.exists()


def test_eval_with_an_unknown_setting_names_the_known_ones(tmp_path):
    run = subprocess.run([sys.executable, "-m", "wizard_env", "eval", "--setting", "wizard-9p", "--agents", "rule",
                          "--out", str(tmp_path / "ev")], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith("wizard: error: argument --setting: invalid choice: 'wizard-9p'")
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    assert all(name in run.stderr for name in SETTINGS)
    assert not (tmp_path / "ev").exists()


# -- the VecEnv and the other commands with a setting --------------------------------------------

#: The VecEnv is stable-baselines3's, and wizard train and train-values name a missing torch before their other
#: checks: of nox's Pythons, only 3.11 has them (the train extra).
needs_sb3 = pytest.mark.skipif(find_spec("stable_baselines3") is None,
                               reason="needs stable_baselines3 (the train extra), not installed")
needs_torch = pytest.mark.skipif(find_spec("torch") is None, reason="needs torch (the train extra), not installed")


@needs_sb3
def test_the_vec_env_of_a_setting_has_its_rules_and_its_opponents_as_the_pool():
    from wizard_env.envs.vec_env import WizardVecEnv

    env = WizardVecEnv(4, seed=0, setting="wizard-3p-5r")
    env.reset()
    assert env.rules == get_setting("wizard-3p-5r").rules()
    assert [type(a) for a in env.opponent_pool] == [RuleAgent]
    assert all(sum(a is None for a in seats) == 1 and len(seats) == 3 for seats in env.get_attr("seat_agents"))
    assert WizardVecEnv(2, seed=0).rules == Rules.make()  # without a setting the defaults are as before


@needs_sb3
@pytest.mark.parametrize("extra", [{"num_players": 3}, {"rounds": 5}, {"opponents": "rule"}, {"opponent_weights": [1.0]}])
def test_the_vec_env_refuses_what_a_setting_fixes(extra: dict):
    from wizard_env.envs.vec_env import WizardVecEnv

    with pytest.raises(ValueError, match=f"fixes the game: {next(iter(extra))} cannot be given"):
        WizardVecEnv(2, setting="wizard-3p-5r", **extra)


def test_a_pool_takes_a_setting_only_when_its_opponents_are_one_agent():
    assert get_setting("wizard-4p").opponent_spec() == "rule"
    with pytest.raises(ValueError, match="seats different opponents"):
        Setting("mixed", 3, 5, "open", False, False, ("rule", "random")).opponent_spec()


def test_simulate_with_a_setting_seats_the_agent_first_against_its_opponents(capsys):
    assert main(["simulate", "--setting", "wizard-3p-5r", "--agents", "random", "--games", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("3 players, 5 rounds (1..5 cards)")
    assert [line.split()[1] for line in lines[2:]] == ["random", "rule", "rule"]


@pytest.mark.parametrize(
    "command, args, message",
    [
        (["simulate"], ["--agents", "rule,rule"], "--agents names 2 agents beside --setting wizard-3p-5r"),
        (["simulate"], ["--players", "3"], "fixes the game: --players cannot be given"),
        pytest.param(["train"], ["--mix", "3"], "fixes the game: --mix cannot be given", marks=needs_torch),
        pytest.param(["train"], ["--pool", "rule=1"], "fixes the game: --pool cannot be given", marks=needs_torch),
        pytest.param(["train"], ["--rounds", "5"], "fixes the game: --rounds cannot be given", marks=needs_torch),
        (["train"], ["--backend", "rllib"], "--setting applies to --backend sb3 only"),
        pytest.param(["train-values"], ["--mix", "3"], "fixes the game: --mix cannot be given", marks=needs_torch),
    ],
)
def test_the_commands_with_a_setting_refuse_what_it_fixes_in_one_line(command, args, message, tmp_path, capsys):
    out = ["--out", str(tmp_path / "run")] if command != ["simulate"] else []
    assert main([*command, "--setting", "wizard-3p-5r", *out, *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wizard: error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "run").exists()


def test_train_with_a_setting_trains_on_its_game_against_its_opponents_alone(tmp_path):
    pytest.importorskip("sb3_contrib")
    out = tmp_path / "run"
    assert main(["train", "--setting", "wizard-3p-5r", "--out", str(out), "--no-advice", "--bc-epochs", "0",
                 "--timesteps", "64", "--num-envs", "8", "--n-steps", "8", "--eval-deals", "2", "--eval-every", "64",
                 "--quiet"]) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["train"]["pool"] == {"rule": 1.0} and config["train"]["mix"] == [3]
    assert config["rules"]["num_players"] == 3 and config["rules"]["rounds"] == [1, 2, 3, 4, 5]


def test_train_values_with_a_setting_fits_its_game_and_names_the_setting_to_evaluate_in(tmp_path, capsys):
    pytest.importorskip("torch")
    out = tmp_path / "run"
    assert main(["train-values", "--setting", "wizard-3p-5r", "--out", str(out), "--samples", "300", "--games", "8",
                 "--eval-deals", "2", "--workers", "1", "--epochs", "1", "--quiet"]) == 0
    assert "wizard eval --setting wizard-3p-5r --agents ppo:" in capsys.readouterr().out
    config = json.loads((out / "config.json").read_text())
    assert config["train"]["mix"] == [3] and config["rules"]["rounds"] == [1, 2, 3, 4, 5]
