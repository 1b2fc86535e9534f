"""wizard train-values --no-advice: from scratch, with nothing from RuleAgent but its play at the seats it holds, on a
wall-time budget (``run_training(..., minutes=M)``), and refusing the options that need RuleAgent."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("torch")

from wizard_env.agents.ppo_agent import LEARNED_PHASES, PRETRAINED, load_checkpoint  # noqa: E402
from wizard_env.agents.registry import make_agent  # noqa: E402
from wizard_env.agents.rule_agent import RuleAgent  # noqa: E402
from wizard_env.cli.main import main  # noqa: E402
from wizard_env.engine.actions import NUM_ACTIONS, Phase  # noqa: E402
from wizard_env.engine.batch import WizardBatch  # noqa: E402
from wizard_env.engine.observation import OBS_SIZE  # noqa: E402
from wizard_env.engine.rules import Rules  # noqa: E402
from wizard_env.training.values import rollout_values as rv  # noqa: E402
from wizard_env.training.recipes.recipe_plan import values_command  # noqa: E402
from wizard_env.training.values.train_values import ValuesConfig, ValuesTrainer, run_training  # noqa: E402
from wizard_env.training.values.values_config import check_config  # noqa: E402

RULES = Rules.make(3, rounds=3)
PHASES = LEARNED_PHASES["both"]
SCRATCH = ValuesConfig(mix=[3], samples=150, games=4, workers=1, epochs=1, eval_deals=2, hidden=[16], margin=0.0,
                       advice=False)


def run(out: Path, cfg: ValuesConfig = SCRATCH, resume: bool = False, minutes: float | None = None) -> ValuesTrainer:
    return run_training(cfg, RULES, out, resume=resume, quiet=True, log=lambda line: None, rounds=3, minutes=minutes)


class Highest:
    """Plays the highest legal action id."""

    name = "highest"

    def act_batch(self, observations, action_masks):
        return NUM_ACTIONS - 1 - (np.asarray(action_masks) != 0)[:, ::-1].argmax(axis=1)


@pytest.fixture
def rule_calls(monkeypatch) -> list[int]:
    """The rows every RuleAgent is asked to decide, call by call."""
    calls: list[int] = []
    original = RuleAgent.act_batch

    def counted(self, observations, action_masks):
        calls.append(len(action_masks))
        return original(self, observations, action_masks)

    monkeypatch.setattr(RuleAgent, "act_batch", counted)
    return calls


def test_without_advice_random_play_collects_and_rule_agent_is_never_asked(rule_calls):
    samples = rv.collect_values(RULES, 6, 3, PHASES, 0.5, advice=False)
    assert rule_calls == [] and len(samples) > 20
    again, other = rv.collect_values(RULES, 6, 3, PHASES, 0.5, advice=False), rv.collect_values(RULES, 6, 4, PHASES, 0.5, advice=False)
    assert np.array_equal(samples.advice, again.advice) and np.array_equal(samples.legal_values, again.legal_values)
    assert len(other) != len(samples) or not np.array_equal(other.advice, samples.advice)
    # the stored choice is the random play's, not RuleAgent's
    masks = samples.masks
    assert masks[np.arange(len(samples)), samples.advice].all()
    rule = RuleAgent(seed=0).act_batch(samples.observations, masks)
    assert (rule != samples.advice).any()


def test_at_tables_of_rule_agents_they_play_their_seats_and_each_decision_keeps_the_learners_action(rule_calls):
    samples = rv.collect_values(RULES, 6, 1, PHASES, 1.0, behaviour=Highest(), rollout=Highest(), rule_tables=1.0,
                                advice=False)
    assert rule_calls  # the opponents' seats, at the table and in the rollouts
    played = Highest().act_batch(None, samples.masks)
    assert np.array_equal(samples.advice, played)


def test_a_scratch_run_fits_a_network_of_the_observation_alone_that_baseline_plays(tmp_path: Path):
    out = tmp_path / "run"
    run(out, dataclasses.replace(SCRATCH, iterations=2, rule_tables=1.0))
    config, weights = load_checkpoint(out / "checkpoints" / "latest.npz")
    assert config["advice"] is False and config["advice_bonus"] == 0 and config["features"] is False
    assert weights["mlp_extractor.policy_net.0.weight"].shape == (16, OBS_SIZE)  # no advice input
    first = load_checkpoint(out / "checkpoints" / "iter-0.npz")[1]
    assert any(not np.array_equal(first[k], weights[k]) for k in weights)
    agent = make_agent(f"baseline:{out}", seed=0)
    batch = WizardBatch(RULES, 4, seed=1, autoreset=False)
    while (live := np.flatnonzero(batch.phase != Phase.OVER)).size:  # a whole game: every action legal (step checks)
        batch.step(agent.act_batch(batch.observe(live), batch.legal_masks(live)), live)
    # a scratch run may start from a scratch network, a run with advice may not
    check_config(dataclasses.replace(SCRATCH, start=str(out / "checkpoints" / "latest.npz")))
    with pytest.raises(ValueError, match="not a network of wizard train-values"):
        check_config(dataclasses.replace(SCRATCH, advice=True, start=str(out / "checkpoints" / "latest.npz")))


def test_the_minutes_stop_the_run_at_its_last_finished_iteration_and_resume_continues(tmp_path: Path):
    out = tmp_path / "run"
    trainer = run(out, dataclasses.replace(SCRATCH, iterations=3), minutes=0.0)
    assert trainer.stopped_by == "minutes"  # the first iteration is always finished
    assert (out / "checkpoints" / "iter-0.npz").is_file() and not (out / "checkpoints" / "iter-1.npz").exists()
    assert trainer.done()["decisions"] == load_checkpoint(out / "checkpoints" / "latest.npz")[0]["num_samples"]
    trainer = run(out, dataclasses.replace(SCRATCH, iterations=3), resume=True)
    assert trainer.done()["stopped_by"] == "steps" and (out / "checkpoints" / "iter-2.npz").is_file()


@pytest.mark.parametrize("change, message", [
    ({"features": True}, "--features and --no-advice"),
    ({"margin": 3.0}, "--margin and --no-advice"),
    ({"play_margin": 1.0}, "--play-margin and --no-advice"),
    ({"learn": "play"}, "--learn play and --no-advice"),
    ({"start": str(PRETRAINED), "hidden": [512, 256]}, "reads RuleAgent's advice"),
])
def test_what_needs_rule_agent_is_refused_before_anything_is_written(tmp_path: Path, change, message):
    with pytest.raises(ValueError, match=message):
        run(tmp_path / "run", dataclasses.replace(SCRATCH, **change))
    assert not (tmp_path / "run").exists()


def test_previous_in_the_pool_is_random_play_before_the_first_network(tmp_path: Path):
    trainer = ValuesTrainer(dataclasses.replace(SCRATCH, pool=["previous"], pool_tables=0.5), RULES, tmp_path)
    assert trainer.pool(1) == ("random", f"ppo:{trainer.checkpoint(0)}")


def test_the_cli_learns_from_scratch_with_no_margin_and_a_recipe_says_no_advice(tmp_path: Path, capsys):
    out = tmp_path / "run"
    assert main(["train-values", "--no-advice", "--out", str(out), "--players", "3", "--mix", "3", "--rounds", "2",
                 "--samples", "40", "--games", "4", "--workers", "1", "--epochs", "1", "--eval-deals", "1",
                 "--hidden", "8", "--quiet"]) == 0
    train = json.loads((out / "config.json").read_text())["train"]
    assert train["advice"] is False and train["margin"] == 0
    command = values_command(SCRATCH, SimpleNamespace(keys={"players": 4, "rounds": "standard"}))
    assert "--no-advice" in command.split() and "--margin 0.0" in command
