"""The expert measure of ``wizard eval-iterations`` (``--expert-games``): each checkpoint's expert, the search that
made its targets played as ``pimc`` with a checkpoint file as rollout policy and bid model, against three of it."""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest

pytest.importorskip("torch")

from wizard_env.agents.pimc_agent import PIMCAgent  # noqa: E402
from wizard_env.agents.ppo_agent import PPOAgent  # noqa: E402
from wizard_env.agents.registry import make_agent  # noqa: E402
from wizard_env.agents.rollouts import search_values  # noqa: E402
from helpers import wizard_output  # noqa: E402
from wizard_env.engine.batch import WizardBatch  # noqa: E402
from wizard_env.engine.rules import Rules  # noqa: E402
from wizard_env.training.evaluation import iteration_curve  # noqa: E402
from wizard_env.training.evaluation.evaluate import evaluate  # noqa: E402
from wizard_env.training.values import rollout_values as rv  # noqa: E402
from wizard_env.training.values.train_values import run_training  # noqa: E402
from wizard_env.training.values.values_config import ValuesConfig  # noqa: E402

RULES = Rules.make(4, rounds=3)
#: A zero run's settings, small: search targets on 2 worlds, drawn by the bids seen.
ZERO = ValuesConfig(mix=[4], samples=40, games=4, workers=1, epochs=1, eval_deals=2, hidden=[16], margin=0.0,
                    advice=False, zero=True, targets="search", search_samples=2, search_infer=True)
ROLLOUT = ValuesConfig(mix=[4], samples=40, games=4, workers=1, epochs=1, eval_deals=2, hidden=[16], margin=2.0)
DEALS, EXPERT_DEALS, SEED = 2, 2, 3


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A tiny zero run of one iteration, and a tiny run on rollout targets (no search: no expert)."""
    root = tmp_path_factory.mktemp("expert")
    run_training(ZERO, RULES, root / "zero", quiet=True, log=lambda line: None)
    run_training(ROLLOUT, RULES, root / "rollout", quiet=True, log=lambda line: None)
    return root


def test_the_expert_is_pimc_with_the_runs_search_settings_and_the_checkpoint_as_its_network(run):
    path = str(run / "zero" / "checkpoints" / "iter-0.npz")
    spec = iteration_curve.expert_spec(path)
    assert spec == f"pimc:samples=2:rollout={path}:infer=bids:model={path}:over={rv.INFER_OVERSAMPLE}:resample=systematic"
    expert, network = make_agent(spec, 0), PPOAgent.load(path)
    assert isinstance(expert, PIMCAgent) and expert.samples == expert.bid_samples == 2 and expert.prior is None
    batch = WizardBatch(RULES, 8, seed=4, autoreset=False)
    games = batch.all_games
    observations, masks = batch.observe(games), batch.legal_masks(games)
    # the rollout policy plays the checkpoint's actions, the bid model reads its values
    assert np.array_equal(expert.policy.act_batch(observations, masks), network.act_batch(observations, masks))
    assert np.array_equal(expert.inference.model.logits(observations, masks), network.logits(observations, masks))
    # and the search is the targets' search: the same worlds and values from the same generator
    targets = rv.search_inference(network, 0)
    assert dataclasses.replace(expert.inference, model=None) == dataclasses.replace(targets, model=None)
    mine = search_values(batch, games, expert.policy, np.random.default_rng(9), expert.samples, expert.inference)
    theirs = search_values(batch, games, network, np.random.default_rng(9), ZERO.search_samples, targets)
    assert np.array_equal(mine, theirs, equal_nan=True)


def test_the_expert_measure_is_what_evaluate_gives_and_shows_in_every_file(run, tmp_path):
    out = tmp_path / "climb"
    code, stdout, stderr = wizard_output(["eval-iterations", str(run / "zero"), "--rounds", "3", "--games", str(DEALS),
                                  "--seed", str(SEED), "--expert-games", str(EXPERT_DEALS), "--out", str(out), "--quiet"])
    assert code == 0, stderr
    data = json.loads((out / iteration_curve.JSON_NAME).read_text())
    assert data["expert_deals"] == EXPERT_DEALS and data["seeds"]["expert"] == SEED + 4
    (row,) = data["rows"]
    spec = iteration_curve.expert_spec(row["path"])
    alone = evaluate(RULES, [spec, row["spec"], row["spec"], row["spec"]], EXPERT_DEALS, SEED + 4,
                     reference=row["spec"]).specs[0]
    figure = row["figures"]["expert"]
    assert figure["mean"] == pytest.approx(alone.diff, abs=1e-9) and figure["ci95"] == pytest.approx(alone.diff_ci95, abs=1e-9)
    markdown = (out / iteration_curve.MARKDOWN_NAME).read_text()
    assert markdown == stdout.split("\nwrote ")[0]
    assert "its expert vs three of it |" in markdown and f"{SEED + 4} (its expert vs three of it, 2 deals)" in markdown
    assert re.search(rf"\| iter-0 \|.*\| {re.escape(iteration_curve.pm(iteration_curve.Figure(alone.diff, alone.diff_ci95)))} \| - \|", markdown)


@pytest.mark.parametrize(("args", "message"), [
    (lambda run: [str(run / "zero"), "--expert-games", "1"], r"--expert-games must be 0 \(not played\) or at least 2, not 1"),
    (lambda run: [str(run / "rollout"), "--expert-games", "2"],
     r"--expert-games: checkpoint .*rollout/checkpoints/iter-0.npz was not trained on search targets"),
])
def test_a_bad_expert_option_is_one_line_naming_it(run, tmp_path, args, message):
    out = tmp_path / "out"
    code, stdout, stderr = wizard_output(["eval-iterations", *args(run), "--rounds", "3", "--out", str(out)])
    assert code == 2 and stdout == "" and stderr.count("\n") == 1 and re.search(message, stderr), stderr
    assert not out.exists()


@pytest.mark.parametrize(("spec", "message"), [
    ("pimc:rollout=nobody", r"unknown rollout policy 'nobody' \(expected rule, .* or a checkpoint file, PATH.npz\)"),
    ("pimc:infer=bids:model=nobody", r"unknown bid model 'nobody' \(expected rule, .* or a checkpoint file, PATH.npz\)"),
    ("pimc:rollout=gone.npz", r"gone.npz: no such file"),
])
def test_a_bad_rollout_or_bid_model_is_one_line_naming_it(spec, message):
    code, stdout, stderr = wizard_output(["eval", "--agents", f"{spec},rule,rule,rule", "--rounds", "3", "--games", "2"])
    assert code == 2 and stdout == "" and stderr.count("\n") == 1 and re.search(message, stderr), stderr
