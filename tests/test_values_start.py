"""``wizard train-values --start CHECKPOINT``: expert iteration from a trained network. Iteration 0's data are
collected by that agent and its fit starts from its weights; a network of another shape is refused by name."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from wizard_env.agents.ppo_agent import load_checkpoint  # noqa: E402
from wizard_env.cli.main import main  # noqa: E402
from wizard_env.engine.rules import Rules  # noqa: E402
from wizard_env.training.values import rollout_values as rv  # noqa: E402
from wizard_env.training.values.train_values import run_training  # noqa: E402
from wizard_env.training.values.values_config import ValuesConfig, check_config  # noqa: E402

RULES = Rules.make(3, rounds=3)
BASE = ValuesConfig(mix=[3], samples=60, games=4, workers=1, epochs=1, eval_deals=2, hidden=[16], margin=2.0)


@pytest.fixture(scope="module")
def start(tmp_path_factory) -> str:
    """A tiny run's checkpoint, the network later runs start from."""
    out = tmp_path_factory.mktemp("start") / "run"
    run_training(BASE, RULES, out, quiet=True, log=lambda *a: None)
    return str(out / "checkpoints" / "iter-0.npz")


def test_the_first_fit_starts_from_the_start_weights_and_its_agent_collects(start, tmp_path):
    """With a learning rate near zero the fitted weights stay those of --start (a fresh fit's are far from them), and
    the data differ from the data RuleAgent collects on the same seeds."""
    still = dataclasses.replace(BASE, start=start, learning_rate=1e-12, seed=5)
    run_training(still, RULES, tmp_path / "from", quiet=True, log=lambda *a: None)
    run_training(dataclasses.replace(still, start=""), RULES, tmp_path / "fresh", quiet=True, log=lambda *a: None)
    begun = load_checkpoint(start)[1]
    fitted = load_checkpoint(tmp_path / "from" / "checkpoints" / "iter-0.npz")[1]
    fresh = load_checkpoint(tmp_path / "fresh" / "checkpoints" / "iter-0.npz")[1]
    assert begun.keys() == fitted.keys()
    assert all(np.allclose(begun[k], fitted[k], atol=1e-6) for k in begun)
    assert not all(np.allclose(begun[k], fresh[k], atol=1e-3) for k in begun)
    chunk = "data/iter-0/chunk-00000.npz"
    by_agent, by_rule = rv.read_chunk(tmp_path / "from" / chunk), rv.read_chunk(tmp_path / "fresh" / chunk)
    assert len(by_agent.advice) != len(by_rule.advice) or not np.array_equal(by_agent.legal_values, by_rule.legal_values)


def test_a_start_network_of_another_shape_or_a_missing_file_is_named(start, tmp_path):
    with pytest.raises(ValueError, match=r"--start .*iter-0.npz: its network is 16 without RuleAgent's numbers; pass --hidden 16"):
        check_config(dataclasses.replace(BASE, start=start, hidden=[32]))
    with pytest.raises(ValueError, match=r"pass --hidden 16 to"):
        check_config(dataclasses.replace(BASE, start=start, features=True))
    with pytest.raises(ValueError, match="nowhere.npz"):
        check_config(dataclasses.replace(BASE, start=str(tmp_path / "nowhere.npz")))


def test_the_command_line_refuses_a_mismatched_start_in_one_line(start, tmp_path, capsys):
    code = main(["train-values", "--players", "3", "--rounds", "3", "--mix", "3", "--out", str(tmp_path / "run"),
                 "--start", start, "--hidden", "8", "--quiet"])
    err = capsys.readouterr().err
    assert code != 0 and err.count("\n") == 1 and "--start" in err and "--hidden 16" in err
    assert not (tmp_path / "run").exists()


def test_a_resume_may_not_change_the_start(start, tmp_path):
    cfg = dataclasses.replace(BASE, start=start, iterations=1)
    run_training(cfg, RULES, tmp_path / "run", quiet=True, log=lambda *a: None)
    with pytest.raises(ValueError, match="--start"):
        run_training(dataclasses.replace(cfg, start="", iterations=2), RULES, tmp_path / "run", resume=True, quiet=True)


def test_a_recipe_reads_a_relative_start_from_its_own_folder(start, tmp_path, monkeypatch):
    """A recipe names the checkpoint it starts from relative to the recipe file, wherever the command runs."""
    from wizard_env.training.recipes import recipe as recipes

    (tmp_path / "recipes").mkdir()
    (tmp_path / "nets").mkdir()
    Path(tmp_path / "nets" / "net.npz").write_bytes(Path(start).read_bytes())
    (tmp_path / "recipes" / "r.toml").write_text('name = "r"\n[[step]]\nname = "data"\nkind = "train-values"\n'
                                                'players = 3\nrounds = 3\nmix = [3]\nhidden = [16]\nstart = "../nets/net.npz"\n')
    monkeypatch.chdir(tmp_path / "nets")  # elsewhere: the path is the recipe's, not the working folder's
    step = recipes.load(tmp_path / "recipes" / "r.toml").steps[0]
    assert Path(step.values_stages()[0].start) == (tmp_path / "nets" / "net.npz").resolve()
    (tmp_path / "recipes" / "bad.toml").write_text('name = "r"\n[[step]]\nname = "data"\nkind = "train-values"\n'
                                                  'hidden = [16]\nstart = "net.npz"\n')
    with pytest.raises(ValueError, match=r"recipe .*bad.toml: step 1 'data', key 'start'.*recipes/net.npz"):
        recipes.load(tmp_path / "recipes" / "bad.toml")


def test_a_resumed_run_counts_its_wall_time_from_the_last_finished_iteration(start, tmp_path):
    """The curve's wall_s goes on from the wall time saved with the last finished iteration, not from zero."""
    from wizard_env.agents.ppo_agent import save_checkpoint
    from wizard_env.training import train_report

    out = tmp_path / "run"
    cfg = dataclasses.replace(BASE, start=start)
    run_training(cfg, RULES, out, quiet=True, log=lambda *a: None)
    config, weights = load_checkpoint(out / "checkpoints" / "iter-0.npz")
    assert 0 < config["wall_seconds"] <= float(train_report.read_curve(out / "curve.csv")[0]["wall_s"])
    save_checkpoint(out / "checkpoints" / "iter-0.npz", {**config, "wall_seconds": 10_000.0}, weights)  # a long first session
    run_training(dataclasses.replace(cfg, iterations=2), RULES, out, resume=True, quiet=True, log=lambda *a: None)
    assert float(train_report.read_curve(out / "curve.csv")[1]["wall_s"]) > 10_000
    assert load_checkpoint(out / "checkpoints" / "iter-1.npz")[0]["wall_seconds"] > 10_000
