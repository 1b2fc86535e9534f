"""``wizard recipe`` on a tiny recipe: every step end to end, a resumed run's weights, what it refuses, and the
checks of a recipe file (each error names the file, the step and the key)."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import re
import shutil
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest

from wizard_env.agents.ppo_agent import PPOAgent, load_checkpoint
from wizard_env.agents.zoo import BY_FILE, NETWORKS
from wizard_env.cli.main import main
from wizard_env.engine.game import WizardGame
from wizard_env.engine.observation import OBS_SIZE, observe
from wizard_env.engine.rules import Rules
from wizard_env.training.recipes import recipe as recipes
from wizard_env.training.values import rollout_values as rv
from wizard_env.training.recipes.recipe_plan import DONE, check_out
from wizard_env.training.recipes.recipe_run import goes_on, run_recipe
from wizard_env.training.values.rollout_values import VALUE_SCALE
from wizard_env.training.values.values_config import LATER_DEFAULTS

ROOT = Path(__file__).resolve().parents[1]
#: On the tests that run a recipe's steps: training needs torch (the train extra; of nox's Pythons, 3.11 alone has it).
needs_torch = pytest.mark.skipif(find_spec("torch") is None, reason="needs torch (the train extra), not installed")

#: Every kind of step in seconds: 4 players of 2-round games, about 100 decisions an iteration, a 16-unit network,
#: two iterations (the second a resumed command), a 2-pair margin grid on 2 deals, a battery of 2 deals a row.
TINY = """
name = "tiny"
description = "every step on a budget of seconds"

[[step]]
name = "data"
kind = "train-values"
rounds = 2
mix = [4]
samples = 100
games = 4
workers = 1
hidden = [16]
epochs = 1
eval_deals = 2
[[step.stage]]
iterations = 1
[[step.stage]]
iterations = 2
data = "all"

[[step]]
name = "fit"
kind = "fit-values"
data = "data"
hidden = [16]
epochs = 1
batch_size = 32
held_out_every = 4

[[step]]
name = "margins"
kind = "margins"
checkpoint = "fit"
grid = [[0, 0], [1.5, 3]]
deals = 2
rounds = 2

[[step]]
name = "battery"
kind = "eval-suite"
checkpoint = "margins"
deals = 2
references = []
players = []

[[step]]
name = "publish"
kind = "publish"
checkpoint = "margins"
"""
STEPS = ["data", "fit", "margins", "battery", "publish"]


def write_recipe(folder: Path, text: str = TINY) -> Path:
    path = folder / "tiny.toml"
    path.write_text(text)
    return path


def quiet_run(path: Path, out: Path, resume: bool = False, until: str | None = None) -> list[str]:
    return run_recipe(recipes.load(path), out, resume, until, log=lambda line: None)


def weights_of(path: Path) -> dict[str, np.ndarray]:
    return load_checkpoint(path)[1]


@pytest.fixture(scope="module")
def unbroken(tmp_path_factory):
    """The tiny recipe run through the command line without a break: its folder and what it printed."""
    folder = tmp_path_factory.mktemp("recipe")
    out = folder / "run"
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        assert main(["recipe", str(write_recipe(folder)), "--out", str(out)]) == 0
    return out, stdout.getvalue()


@needs_torch
def test_a_tiny_recipe_runs_every_step_and_publishes_the_chosen_checkpoint(unbroken):
    out, printed = unbroken
    assert all((out / "steps" / name / DONE).is_file() for name in STEPS)
    for k, name in enumerate(STEPS, 1):  # a progress line as each step starts and ends
        assert f"step {k}/5 {name} (" in printed and re.search(rf"step {k}/5 {name} \(.*\): done in [0-9.]+ (s|min)", printed)
    assert "ran 5 step(s) of 5; the run in" in printed
    margins = json.loads((out / "steps" / "margins" / "margins.json").read_text())
    rules = [row["rule"]["mean"] for row in margins["rows"]]
    assert margins["chosen"] == rules.index(max(rules))  # chosen by the figure against RuleAgents
    chosen = margins["rows"][margins["chosen"]]
    config, weights = load_checkpoint(out / "agent.npz")
    assert config["advice_bonus"] == {"bid": pytest.approx(chosen["bid"] * VALUE_SCALE), "play": pytest.approx(chosen["play"] * VALUE_SCALE)}
    assert config["hidden"] == [16] and config["features"] is True and config["fit"]["seed"] == 11
    fitted = weights_of(out / "steps" / "fit" / "agent.npz")
    assert fitted.keys() == weights.keys() and all(np.array_equal(fitted[k], weights[k]) for k in weights)
    PPOAgent.load(out / "agent.npz")  # a checkpoint the registry's ppo:PATH plays
    suite = json.loads((out / "steps" / "battery" / "suite.json").read_text())
    assert suite["agent"] == f"ppo:{os.path.relpath(out / 'steps' / 'margins' / 'chosen.npz')}" and suite["deals"] == 2
    assert not suite["agent"].startswith("ppo:/")  # nothing of the machine in what a card is made from
    tables = (out / "tables.md").read_text()
    assert "| bid margin | play margin |" in tables and suite["rows"][0]["measurement"] in tables
    assert "## Step 2: fit (fit-values" in tables and "| iteration | decisions |" in tables


@needs_torch
def test_a_fresh_fit_need_not_have_the_shape_of_its_data_steps_start(unbroken, tmp_path):
    """A fit-values step fits a new network, so the start of the train-values step it reads (16 units without
    RuleAgent's numbers) does not bind its shape (RuleAgent's numbers), and its checkpoint records no start."""
    start = unbroken[0] / "steps" / "data" / "checkpoints" / "iter-1.npz"
    step = 'name = "data"\nkind = "train-values"\n'
    path = write_recipe(tmp_path, TINY.replace(step, f'{step}start = "{start}"\n'))
    quiet_run(path, tmp_path / "run", until="fit")
    data = load_checkpoint(tmp_path / "run" / "steps" / "data" / "checkpoints" / "iter-0.npz")[0]
    fitted = load_checkpoint(tmp_path / "run" / "steps" / "fit" / "agent.npz")[0]
    assert data["train"]["start"] == os.path.relpath(start, tmp_path / "run" / "steps" / "data")  # from its run folder
    assert data["features"] is False
    assert fitted["train"]["start"] == "" and fitted["features"] is True and fitted["hidden"] == [16]


@needs_torch
def test_a_fresh_fit_without_advice_reads_the_observation_alone_and_plays_the_argmax_of_its_values(tmp_path):
    """``advice = false``: the fit ignores RuleAgent's choice stored with the data (the network's first layer is as
    wide as the observation) and its checkpoint plays with no margin, as a --no-advice network; its held-out figures
    still compare its choices with RuleAgent's."""
    import torch

    fit = 'held_out_every = 4\n'
    path = write_recipe(tmp_path, TINY.replace(fit, f"{fit}advice = false\nfeatures = false\nmargin = 0\nplay_margin = 0\n"))
    quiet_run(path, tmp_path / "run", until="fit")
    config, weights = load_checkpoint(tmp_path / "run" / "steps" / "fit" / "agent.npz")
    assert config["advice"] is False and config["features"] is False and config["advice_bonus"] == 0
    assert config["train"]["play_margin"] is None and config["fit"]["advice"] is False
    net = rv.value_network(OBS_SIZE, [16])  # loads only if the first layer is as wide as the observation alone
    rv.set_network_weights(net, weights)
    fitted = json.loads((tmp_path / "run" / "steps" / "fit" / "fit.json").read_text())
    assert 0 <= fitted["differs"] <= 1 and fitted["decisions"] > 0
    agent = PPOAgent.load(tmp_path / "run" / "steps" / "fit" / "agent.npz")
    game, observations, masks, chosen = WizardGame(Rules.make(4), 3), [], [], []
    while not game.is_over:  # one game of the network's own choices
        observations.append(observe(game, game.current))
        masks.append(game.legal_mask())
        chosen.append(agent.act(observations[-1], masks[-1]))
        game.step(int(chosen[-1]))
    with torch.no_grad():
        values = net(torch.as_tensor(np.array(observations, dtype=np.float32))).numpy()
    assert chosen == list(np.where(np.array(masks) == 1, values, -np.inf).argmax(axis=1))


@needs_torch
def test_a_run_stopped_after_a_step_and_one_killed_inside_a_step_resume_to_the_same_weights(unbroken, tmp_path: Path):
    path, out = write_recipe(tmp_path), tmp_path / "run"
    assert quiet_run(path, out, until="data") == ["data"]
    assert not (out / "steps" / "fit").exists()
    # as if killed while iteration 1 collected its data: its checkpoint and last chunks gone, the step not done
    data = out / "steps" / "data"
    (data / DONE).unlink()
    (data / "checkpoints" / "iter-1.npz").unlink()
    for chunk in sorted((data / "data" / "iter-1").iterdir())[-3:]:
        chunk.unlink()
    assert quiet_run(path, out, resume=True, until="fit") == ["data", "fit"]
    assert quiet_run(path, out, resume=True) == ["margins", "battery", "publish"]
    for name in ("steps/fit/agent.npz", "agent.npz"):
        mine, theirs = weights_of(out / name), weights_of(unbroken[0] / name)
        assert all(np.array_equal(mine[k], theirs[k]) for k in theirs)
    figures = [[{k: v for k, v in row.items() if k != "wall_seconds"} for row in json.loads((run / "steps/margins/margins.json").read_text())["rows"]]
               for run in (out, unbroken[0])]
    assert figures[0] == figures[1]
    assert quiet_run(path, out, resume=True) == []  # finished: nothing runs again


@needs_torch
def test_a_resume_with_a_changed_recipe_a_used_folder_and_a_missing_run_are_refused(tmp_path: Path):
    path, out = write_recipe(tmp_path), tmp_path / "run"
    quiet_run(path, out, until="data")
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    path.write_text(TINY.replace("epochs = 1\nbatch_size = 32", "epochs = 2\nbatch_size = 32"))
    with pytest.raises(ValueError, match=r"not the recipe .* started with \(step 2 'fit': epochs was 1, is now 2\)"):
        quiet_run(path, out, resume=True)
    with pytest.raises(ValueError, match="already holds a recipe run: pass --resume"):
        quiet_run(path, out)
    with pytest.raises(ValueError, match="no recipe run in"):
        quiet_run(path, tmp_path / "empty", resume=True)
    with pytest.raises(ValueError, match="--until 'nope': the recipe has no such step"):
        quiet_run(path, out, resume=True, until="nope")
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before


@pytest.mark.parametrize("text, why", [("{not json", "Expecting property name"), ('{"format": 1}', "'recipe'"),
                                       ('{"recipe": [1]}', "its recipe is not a table"),
                                       ('{"recipe": {"step": [{"kind": "margins"}]}}', "no list of named steps")])
def test_a_damaged_recipe_json_is_named_by_resume_and_by_reuse_and_nothing_is_written(tmp_path: Path, text, why):
    path, run = write_recipe(tmp_path), tmp_path / "run"
    run.mkdir()
    (run / "recipe.json").write_text(text)
    if "named steps" not in why:  # a recipe without named steps is damaged for --reuse; --resume names the change
        with pytest.raises(ValueError, match=rf"--resume: {re.escape(str(run / 'recipe.json'))} is damaged \(.*{why}.*\): start the recipe again"):
            quiet_run(path, run, resume=True)
    with pytest.raises(ValueError, match=rf"--reuse: {re.escape(str(run / 'recipe.json'))} is damaged \(.*{why}"):
        run_recipe(recipes.load(path), tmp_path / "new", reuse=run)
    assert not (tmp_path / "new").exists() and [p.name for p in run.iterdir()] == ["recipe.json"]


@needs_torch
def test_a_resume_may_change_the_battery_workers_alone(tmp_path: Path):
    """The battery's worker count changes how fast it plays, not its figures: a resumed run takes it, and it reaches
    the suite's own settings; a change of anything else beside it is still refused."""
    path, out = write_recipe(tmp_path), tmp_path / "run"
    quiet_run(path, out, until="data")
    faster = TINY.replace("references = []\n", "references = []\nworkers = 2\n")
    path.write_text(faster)
    recipe = recipes.load(path)
    check_out(recipe, out, resume=True)  # no error
    assert recipe.step("battery").suite_config("ppo").workers == 2
    path.write_text(faster.replace("deals = 2\nreferences", "deals = 3\nreferences"))
    with pytest.raises(ValueError, match=r"\(step 4 'battery': deals was 2, is now 3\)"):
        check_out(recipes.load(path), out, resume=True)


@pytest.mark.parametrize("old, new, where", [
    ("samples = 100", "samples = 0", "step 1 'data', key 'samples'"),
    ("samples = 100", 'samples = "many"', "step 1 'data', key 'samples'"),
    ("samples = 100", "samples = 1" + "0" * 400, "step 1 'data', key 'samples'"),  # past a float: no OverflowError (fuzz)
    ("games = 4", "games = 4\ngamez = 4", "step 1 'data', key 'gamez'"),
    ("iterations = 1\n", "iterations = 1\nsamples = 5\n", "step 1 'data', key 'stage'"),
    ("rounds = 2\nmix", "rounds = 2\nplayers = 9\nmix", "step 1 'data', key 'players'"),
    ('data = "data"', 'data = "margins"', "step 2 'fit', key 'data'"),
    ("held_out_every = 4", "held_out_every = 4\niterations = [0, 5]", "step 2 'fit', key 'iterations'"),
    ("grid = [[0, 0], [1.5, 3]]", "grid = [[0, 0], [-1, 3]]", "step 3 'margins', key 'grid'"),
    ("deals = 2\nrounds = 2", "deals = 2\nrounds = 2\nseed = 2", "step 3 'margins', key 'seed'"),
    ("references = []", 'references = ["nobody"]', "step 4 'battery', key 'references'"),
    ("references = []", "references = []\nworkers = 0", "step 4 'battery', key 'workers'"),
    ('kind = "publish"', 'kind = "ship"', "step 5 'publish', key 'kind'"),
    ('name = "publish"', 'name = "fit"', "step 5, key 'name'"),
    ('kind = "eval-suite"\ncheckpoint = "margins"\n', 'kind = "eval-suite"\n', "step 4 'battery', key 'checkpoint'"),
    ('name = "tiny"', "name = [1]", "key 'name'"),
    ("eval_deals = 2\n", 'eval_deals = 2\ndata_from = ["data"]\n', "step 1 'data', key 'data_from'"),
    ("held_out_every = 4", "held_out_every = 4\nadvice = false", "step 2 'fit', key 'features'"),
    ("held_out_every = 4", "held_out_every = 4\nadvice = false\nfeatures = false\nmargin = 0", "step 2 'fit', key 'play_margin'"),
    ("eval_deals = 2\n", "eval_deals = 2\nadvice = false\nmargin = 0\n", "step 2 'fit', key 'advice'"),
])
def test_a_bad_recipe_is_named_by_file_step_and_key(tmp_path: Path, old, new, where):
    assert old in TINY
    path = write_recipe(tmp_path, TINY.replace(old, new, 1))
    with pytest.raises(ValueError) as error:
        recipes.load(path)
    assert str(error.value).startswith(f"recipe {path}: {where}: ")


def test_a_file_that_is_not_toml_is_one_error_line_and_nothing_is_written(tmp_path: Path, capsys):
    path = write_recipe(tmp_path, "name = \n")
    assert main(["recipe", str(path), "--out", str(tmp_path / "run")]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith(f"wizard: error: recipe {path}: not valid TOML")
    assert not (tmp_path / "run").exists()


def test_the_shipped_recipe_states_the_model_cards_steps():
    recipe = recipes.load(ROOT / "training" / "recipes" / "wizard-v1.toml")
    assert [s.kind for s in recipe.steps] == ["train-values", "fit-values", "margins", "eval-suite", "publish"]
    stages = recipe.step("data").values_stages()
    assert [(c.iterations, c.data, c.epochs, c.learning_rate) for c in stages] == [(2, "last", 4, 1e-3), (3, "all", 2, 5e-4),
                                                                                  (4, "all", 2, 5e-4)]
    assert {(c.seed, c.samples, c.features) for c in stages} == {(1, 600_000, False)}
    fit = recipe.step("fit")
    assert fit.keys["iterations"] == [0, 1, 2, 3] and fit.fit_config().hidden == [512, 256] and fit.keys["seed"] == 11
    shipped = load_checkpoint(ROOT / "zoo" / "wizard-v1.npz")[0]
    assert [1.5, 1.5] in recipe.step("margins").keys["grid"] and shipped["advice_bonus"] == pytest.approx({"bid": 0.15, "play": 0.15})
    assert shipped["hidden"] == fit.keys["hidden"] and shipped["train"]["epochs"] == fit.keys["epochs"]


@pytest.mark.parametrize("name, start, reference, distinct", [
    ("wizard-v2", "wizard-v1.npz", "ppo-v1", {"search_samples": 4, "search_top": 0, "rule_tables": 0.0}),
    ("wizard-v3", "wizard-v2.npz", "ppo-v2", {"search_samples": 8, "search_top": 3, "rule_tables": 0.5}),
    ("wizard-v4", "wizard-v3.npz", "ppo-v3", {"search_samples": 8, "search_top": 3, "rule_tables": 0.5}),
    ("wizard-v5", "wizard-v4.npz", "ppo-v4", {"search_samples": 8, "search_top": 3, "rule_tables": 0.4, "pool_tables": 0.3,
                                              "pool": ["previous", "ppo-v3"]}),
    ("wizard-v6", "wizard-v5.npz", "ppo-v5", {"samples": 200_000, "rule_tables": 0.4, "pool_tables": 0.3,
                                              "pool": ["previous", "ppo-v4"], "gate": 1000, "data_from": ["v5data"]}),
    ("wizard-v7", "wizard-v5.npz", "ppo-v6", {"samples": 200_000, "rule_tables": 0.4, "pool_tables": 0.3,
                                              "pool": ["previous", "ppo-v4"], "gate": 1000, "data_from": ["v5data"]}),
])
def test_a_recipe_states_the_settings_its_checkpoint_was_trained_with(name, start, reference, distinct):
    """wizard-vN.toml starts from the file of the network before (wizard-v7, the continuation of wizard-v6's run, from
    the one that run started from) and spells out every setting its checkpoint records
    (the start by its agent name: net-v2 for wizard-v2.npz).
    The checkpoint's own iteration is compared with the recipe's count, not the count its run was started with
    (wizard-v5 is iteration 2 of a longer run), nor the worker count, on which the data do not depend. The folders
    of the earlier steps whose data it read (``data_from``) are compared by the step's name, their last part."""
    recipe = recipes.load(ROOT / "training" / "recipes" / f"{name}.toml")
    assert [s.kind for s in recipe.steps if s.name != "v5data"] == ["train-values", "eval-suite", "publish"]
    (cfg,) = recipe.step("data").values_stages()
    assert_recorded(cfg, name, start, cfg.iterations - 1)
    assert {k: getattr(cfg, k) for k in distinct} == distinct and cfg.targets == "search"
    assert recipe.step("battery").keys["references"][0] == reference


def assert_recorded(cfg, name: str, start: str, iteration: int, folders: dict[str, str] | None = None) -> dict:
    """The settings ``name``.npz records are ``cfg``'s, but the paths' ends, the workers and the iteration counts;
    ``folders``: the step named by the folder the run read under another name. Returns what the file records."""
    shipped = load_checkpoint(NETWORKS[BY_FILE[f"{name}.npz"]])[0]
    trained = {**LATER_DEFAULTS, **shipped["train"]}  # settings added since, at the value the run had
    trained["data_from"] = [(folders or {}).get(Path(f).name, Path(f).name) for f in trained["data_from"]]
    assert Path(cfg.start) == NETWORKS[BY_FILE[start]].resolve()
    assert trained.pop("start") == BY_FILE[start]
    assert trained.pop("method") == "rollout-values" and shipped["iteration"] == iteration
    trained.pop("workers"), trained.pop("iterations")
    assert {k: v for k, v in dataclasses.asdict(cfg).items() if k not in ("start", "workers", "iterations")} == trained
    return shipped


def test_wizard_v8_is_wizard_v7s_run_to_six_iterations_then_inferred_targets_from_wizard_v7():
    """wizard-v8.toml extends wizard-v7.toml: its data step runs two iterations more (both rejected, so its latest is
    wizard-v7.npz), and the new step ``infer``, right after it, is what wizard-v8.npz records: the data step's folder
    was read as ``v7-more`` (wizard-v7's recipe run resumed to six iterations), and iteration 3 is the last its gate
    kept. The battery and the publish step take ``infer``'s network."""
    v8, v7 = (recipes.load(ROOT / "training" / "recipes" / f"{name}.toml") for name in ("wizard-v8", "wizard-v7"))
    assert [s.name for s in v8.steps] == ["v5data", "data", "infer", "battery", "publish"]
    assert v8.step("data").keys == {**v7.step("data").keys, "iterations": 6} and v8.step("v5data") == v7.step("v5data")
    (cfg,) = v8.step("infer").values_stages()
    assert cfg.search_infer and cfg.data_from == ["v5data", "data"] and cfg.gate == 1000
    assert_recorded(cfg, "wizard-v8", "wizard-v7.npz", 3, {"v7-more": "data"})
    assert v8.step("battery").keys["checkpoint"] == v8.step("publish").keys["checkpoint"] == "infer"
    assert v8.step("battery").keys["references"] == ["ppo-v7", "ppo-v6"]


def test_wizard_v9_is_wizard_v8s_recipe_then_a_step_from_wizard_v8_gated_on_4000_deals():
    """wizard-v9.toml extends wizard-v8.toml, every step of it unchanged, with the step ``climb`` right after ``infer``:
    wizard-v8's inferred targets and settings from the shipped wizard-v8.npz, reading the data of wizard-v8's three
    data-making steps, on a gate of 4,000 deals, a pool one network later and its own seed; climb's is the network
    wizard-v9.npz records (iteration 0, the one its gate kept of two), and the battery measures it against the two
    networks before it."""
    v9, v8 = (recipes.load(ROOT / "training" / "recipes" / f"{name}.toml") for name in ("wizard-v9", "wizard-v8"))
    assert [s.name for s in v9.steps] == ["v5data", "data", "infer", "climb", "battery", "publish"]
    assert all(v9.step(name) == v8.step(name) for name in ("v5data", "data", "infer"))
    (cfg,) = v9.step("climb").values_stages()
    (infer,) = v8.step("infer").values_stages()
    changed = {"start", "data_from", "gate", "pool", "seed", "iterations"}
    assert {k: v for k, v in dataclasses.asdict(cfg).items() if k not in changed} == \
        {k: v for k, v in dataclasses.asdict(infer).items() if k not in changed}
    assert (cfg.data_from, cfg.gate, cfg.pool, cfg.seed) == (["v5data", "data", "infer"], 4000, ["previous", "ppo-v7", "ppo-v6", "ppo-v5"], 9)
    assert_recorded(cfg, "wizard-v9", "wizard-v8.npz", 0)
    assert v9.step("battery").keys["checkpoint"] == v9.step("publish").keys["checkpoint"] == "climb"
    assert v9.step("battery").keys["references"] == ["ppo-v8", "ppo-v7"]


def test_wizard_v10_is_wizard_v9s_recipe_then_a_step_from_wizard_v9_that_keeps_only_a_climb():
    """wizard-v10.toml extends wizard-v9.toml, every step of it unchanged, with the step ``ascend`` right after
    ``climb``: climb's settings from the shipped wizard-v9.npz, reading the data of wizard-v9's four data-making steps,
    under ``--gate-rule climbs`` with ``--patience 2``, a pool one network later and its own seed; ascend's is the
    network wizard-v10.npz records (iteration 1, the one its gate kept of two), and the battery measures it against
    the two networks before it."""
    v10, v9 = (recipes.load(ROOT / "training" / "recipes" / f"{name}.toml") for name in ("wizard-v10", "wizard-v9"))
    assert [s.name for s in v10.steps] == ["v5data", "data", "infer", "climb", "ascend", "battery", "publish"]
    assert all(v10.step(name) == v9.step(name) for name in ("v5data", "data", "infer", "climb"))
    (cfg,) = v10.step("ascend").values_stages()
    (climb,) = v9.step("climb").values_stages()
    changed = {"start", "data_from", "gate_rule", "patience", "pool", "seed"}
    assert {k: v for k, v in dataclasses.asdict(cfg).items() if k not in changed} == \
        {k: v for k, v in dataclasses.asdict(climb).items() if k not in changed}
    assert (cfg.data_from, cfg.gate, cfg.gate_rule, cfg.patience, cfg.pool, cfg.seed) == \
        (["v5data", "data", "infer", "climb"], 4000, "climbs", 2, ["previous", "ppo-v8", "ppo-v7", "ppo-v6"], 10)
    assert_recorded(cfg, "wizard-v10", "wizard-v9.npz", 1)
    assert v10.step("battery").keys["checkpoint"] == v10.step("publish").keys["checkpoint"] == "ascend"
    assert v10.step("battery").keys["references"] == ["ppo-v9", "ppo-v8"]


def test_wizard_v11_is_wizard_v10s_recipe_then_a_step_from_wizard_v10_that_judges_rejected_fits_as_a_mean():
    """wizard-v11.toml extends wizard-v10.toml, every step of it unchanged, with the step ``rise`` right after
    ``ascend``: ascend's settings from the shipped wizard-v10.npz, reading the data of wizard-v10's five data-making
    steps, with ``--soup`` and ``--patience 4`` (so two rejected fits do not end it), a pool one network later and its
    own seed; rise's is the network wizard-v11.npz records (iteration 2, the mean of three fits), and the battery
    measures it against the two networks before it."""
    v11, v10 = (recipes.load(ROOT / "training" / "recipes" / f"{name}.toml") for name in ("wizard-v11", "wizard-v10"))
    assert [s.name for s in v11.steps] == ["v5data", "data", "infer", "climb", "ascend", "rise", "battery", "publish"]
    assert all(v11.step(name) == v10.step(name) for name in ("v5data", "data", "infer", "climb", "ascend"))
    (cfg,) = v11.step("rise").values_stages()
    (ascend,) = v10.step("ascend").values_stages()
    changed = {"start", "data_from", "patience", "soup", "pool", "seed", "iterations"}
    assert {k: v for k, v in dataclasses.asdict(cfg).items() if k not in changed} == \
        {k: v for k, v in dataclasses.asdict(ascend).items() if k not in changed}
    assert (cfg.data_from, cfg.patience, cfg.soup, cfg.pool, cfg.seed, cfg.iterations) == \
        (["v5data", "data", "infer", "climb", "ascend"], 4, True, ["previous", "ppo-v9", "ppo-v8", "ppo-v7"], 11, 3)
    assert assert_recorded(cfg, "wizard-v11", "wizard-v10.npz", 2)["soup_fits"] == 3
    assert v11.step("battery").keys["checkpoint"] == v11.step("publish").keys["checkpoint"] == "rise"
    assert v11.step("battery").keys["references"] == ["ppo-v10", "ppo-v9"]


def test_wizard_v12_is_wizard_v11s_recipe_then_climb_v11_searchs_steps_stopped_after_the_iteration_it_kept():
    """wizard-v12.toml extends wizard-v11.toml, every step of it unchanged, with climb-v11-search's data step and rise
    under names of their own (``v11data``, ``lift``), setting for setting but for ``iterations``: lift stops after
    iteration 0, the network wizard-v12.npz records (a single fit, kept at its gate and confirmed), and the battery
    measures it against the two networks before it."""
    v12, v11, search = (recipes.load(ROOT / "training" / "recipes" / f"{name}.toml") for name in ("wizard-v12", "wizard-v11", "climb-v11-search"))
    assert [s.name for s in v12.steps] == [s.name for s in v11.steps[:-2]] + ["v11data", "lift", "battery", "publish"]
    assert all(v12.step(s.name) == s for s in v11.steps[:-2])
    (data,), (their_data,) = v12.step("v11data").values_stages(), search.step("data").values_stages()
    assert data == their_data and data.targets == "search" and data.seed == 34
    (cfg,), (rise,) = v12.step("lift").values_stages(), search.step("rise").values_stages()
    assert dataclasses.replace(cfg, data_from=rise.data_from, iterations=rise.iterations) == rise
    assert (cfg.data_from, cfg.iterations, rise.iterations) == (["v11data"], 1, 6)
    assert_recorded(cfg, "wizard-v12", "wizard-v11.npz", 0, {"data": "v11data"})
    assert v12.step("battery").keys["checkpoint"] == v12.step("publish").keys["checkpoint"] == "lift"
    assert v12.step("battery").keys["references"] == ["ppo-v11", "ppo-v10"]


def test_wizard_v13_is_wizard_v12s_recipe_with_its_expert_iteration_run_on_to_the_iteration_it_kept_next():
    """wizard-v13.toml extends wizard-v12.toml with one change to its steps: lift, wizard-v12's command, is resumed up to
    four iterations, so it ends with iteration 3, the mean of three fits that climb-v11-search kept after rejecting
    iterations 1 and 2, the network wizard-v13.npz records; ``--reuse`` of a wizard-v12 run copies its lift and runs
    the second command only; the battery measures it against the two networks before it."""
    v13, v12, search = (recipes.load(ROOT / "training" / "recipes" / f"{name}.toml") for name in ("wizard-v13", "wizard-v12", "climb-v11-search"))
    assert [s.name for s in v13.steps] == [s.name for s in v12.steps]
    assert all(v13.step(s.name) == s for s in v12.steps if s.name not in ("lift", "battery"))
    (first, cfg), (before,), (rise,) = v13.step("lift").values_stages(), v12.step("lift").values_stages(), search.step("rise").values_stages()
    assert first == before and dataclasses.replace(cfg, iterations=1) == before and cfg.iterations == 4 < rise.iterations
    ours, theirs = ({t["name"]: t for t in r.raw["step"]}["lift"] for r in (v13, v12))
    assert goes_on(v13.step("lift"), ours, theirs) == 1
    assert dataclasses.replace(cfg, data_from=rise.data_from, iterations=rise.iterations) == rise
    assert assert_recorded(cfg, "wizard-v13", "wizard-v11.npz", 3, {"data": "v11data"})["soup_fits"] == 3
    assert v13.step("battery").keys == {**v12.step("battery").keys, "references": ["ppo-v12", "ppo-v11"]}


def test_the_features_ablation_fits_twice_on_one_data_set_with_one_difference_and_measures_both_on_one_set_of_deals():
    """ablation-features.toml: its two fresh fits read the same iterations of ppo-v11's data with every setting alike
    but RuleAgent's numbers, and its two batteries play the same deals, so their rows pair by deal;
    ablation-features-4x.toml is the same but for four times the data, with a seed of its own."""
    recipe = recipes.load(ROOT / "training" / "recipes" / "ablation-features.toml")
    assert [s.kind for s in recipe.steps] == ["train-values", "fit-values", "fit-values", "eval-suite", "eval-suite"]
    (cfg,) = recipe.step("data").values_stages()
    assert Path(cfg.start) == ROOT / "zoo" / "wizard-v11.npz" and cfg.features
    with_, without = (recipe.step(name) for name in ("with", "without"))
    assert with_.keys["features"] is True and without.keys["features"] is False
    assert {k: v for k, v in with_.keys.items() if k != "features"} == {k: v for k, v in without.keys.items() if k != "features"}
    batteries = [recipe.step(name).keys for name in ("battery-with", "battery-without")]
    assert [b["checkpoint"] for b in batteries] == ["with", "without"]
    settings = [{k: v for k, v in b.items() if k != "checkpoint"} for b in batteries]
    assert settings[0] == settings[1] and settings[0]["references"] == ["ppo-v11"]
    larger = recipes.load(ROOT / "training" / "recipes" / "ablation-features-4x.toml")  # four times the data, its own seed
    assert all(larger.step(s.name) == s for s in recipe.steps if s.name != "data")
    (more,) = larger.step("data").values_stages()
    assert dataclasses.replace(more, samples=cfg.samples, seed=cfg.seed) == cfg and (more.samples, more.seed) == (2_400_000, 32)


def test_the_advice_ablation_adds_to_the_features_ablation_one_network_without_margins_and_one_without_the_choice():
    """ablation-advice.toml: the features ablation's steps unchanged (so --reuse copies them), the `without` network
    with margins 0, and a fit that differs from `without` only in reading no advice (so no margins); their batteries
    play the features ablation's deals. The 4x recipe is the same on ablation-features-4x's data step."""
    base = recipes.load(ROOT / "training" / "recipes" / "ablation-features.toml")
    recipe = recipes.load(ROOT / "training" / "recipes" / "ablation-advice.toml")
    assert recipe.steps[:len(base.steps)] == base.steps
    margins = recipe.step("without-margins").keys
    assert margins["checkpoint"] == "without" and margins["grid"] == [[0, 0]]
    without, alone = recipe.step("without").keys, recipe.step("alone").keys
    changed = {k for k in without.keys() | alone.keys() if without.get(k) != alone.get(k)}
    assert changed == {"advice", "margin", "play_margin"} and alone["advice"] is False and alone["margin"] == alone["play_margin"] == 0
    batteries = {name: recipe.step(name).keys for name in ("battery-without", "battery-without-margins", "battery-alone")}
    assert [b["checkpoint"] for b in batteries.values()] == ["without", "without-margins", "alone"]
    assert len({json.dumps({k: v for k, v in b.items() if k != "checkpoint"}, sort_keys=True) for b in batteries.values()}) == 1
    larger = recipes.load(ROOT / "training" / "recipes" / "ablation-advice-4x.toml")
    features_4x = recipes.load(ROOT / "training" / "recipes" / "ablation-features-4x.toml")
    assert larger.steps[:len(base.steps)] == features_4x.steps
    assert larger.steps[len(base.steps):] == recipe.steps[len(base.steps):]


def test_climb_v11_rebuilds_ablation_features_4x_data_and_confirms_every_network_its_gate_keeps():
    """climb-v11.toml: its data step is ablation-features-4x's (so --reuse copies it), and its expert iteration from
    ppo-v11 reads those data, keeps only what climbs at its gate and again on deals of its own."""
    climb = recipes.load(ROOT / "training" / "recipes" / "climb-v11.toml")
    assert climb.step("data") == recipes.load(ROOT / "training" / "recipes" / "ablation-features-4x.toml").step("data")
    (cfg,) = climb.step("rise").values_stages()
    assert Path(cfg.start) == ROOT / "zoo" / "wizard-v11.npz" and climb.step("rise").keys["data_from"] == ["data"]
    assert (cfg.gate, cfg.gate_rule, cfg.confirm, cfg.soup, cfg.targets) == (4000, "climbs", 4000, True, "search")
    assert climb.step("battery").keys["checkpoint"] == "rise"


def test_climb_v11_tables_differs_from_climb_v11_only_in_the_tables_and_seed_of_its_data():
    """climb-v11-tables.toml: ppo-v11's games at the shipped line's tables (rule and pool), climb-v11's rise unchanged,
    so the two runs' fits differ only in the data they read first."""
    tables, climb = (recipes.load(ROOT / "training" / "recipes" / f"{name}.toml") for name in ("climb-v11-tables", "climb-v11"))
    assert [s.name for s in tables.steps] == [s.name for s in climb.steps] and tables.step("rise") == climb.step("rise")
    mine, theirs = tables.step("data").keys, climb.step("data").keys
    assert {k for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k)} == {"seed", "rule_tables", "pool_tables", "pool"}
    (cfg,) = tables.step("data").values_stages()
    assert (cfg.rule_tables, cfg.pool_tables) == (0.4, 0.3) and "previous" not in cfg.pool
    assert tables.step("battery") == climb.step("battery")


def test_climb_v11_search_differs_from_climb_v11_tables_only_in_how_its_data_are_valued_their_size_and_seed():
    """climb-v11-search.toml: climb-v11-tables' data step valued by rise's search rather than by rollouts in the true
    deal, rise and battery unchanged, so the two runs' fits differ only in the data they read first."""
    search, tables = (recipes.load(ROOT / "training" / "recipes" / f"{name}.toml") for name in ("climb-v11-search", "climb-v11-tables"))
    assert [s.name for s in search.steps] == [s.name for s in tables.steps]
    assert search.step("rise") == tables.step("rise") and search.step("battery") == tables.step("battery")
    mine, theirs = search.step("data").keys, tables.step("data").keys
    assert {k for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k)} == {
        "seed", "samples", "targets", "search_top", "search_infer"}  # search_samples: 8, the default, in both
    (data,), (rise,) = search.step("data").values_stages(), search.step("rise").values_stages()
    assert (data.targets, data.search_samples, data.search_top, data.search_infer) == (
        rise.targets, rise.search_samples, rise.search_top, rise.search_infer) == ("search", 8, 3, True)
    assert (data.rule_tables, data.pool_tables, data.start) == (rise.rule_tables, rise.pool_tables, rise.start)


def test_climb_v13_search_is_climb_v11_search_one_network_later_with_seeds_of_its_own():
    """climb-v13-search.toml: climb-v11-search's steps with ppo-v13 collecting and starting the fits, the pools moved
    up to the three networks shipped before it, new seeds, and nothing else changed."""
    later, search = (recipes.load(ROOT / "training" / "recipes" / f"{name}.toml") for name in ("climb-v13-search", "climb-v11-search"))
    assert [s.name for s in later.steps] == [s.name for s in search.steps]
    seeds = set()
    for name in ("data", "rise"):
        (mine,), (theirs,) = later.step(name).values_stages(), search.step(name).values_stages()
        assert Path(mine.start) == ROOT / "agents" / "pretrained" / "wizard-v13.npz"
        assert [n for n in mine.pool if n != "previous"] == ["ppo-v12", "ppo-v11", "ppo-v10"]
        assert ("previous" in mine.pool) == ("previous" in theirs.pool)
        assert dataclasses.replace(mine, start=theirs.start, seed=theirs.seed, pool=theirs.pool) == theirs
        seeds |= {mine.seed}
    assert len(seeds) == 2 and not seeds & {12, 34}  # climb-v11-search's seeds
    assert later.step("battery").keys == {**search.step("battery").keys, "references": ["ppo-v13", "ppo-v12"]}


def test_every_recipe_in_the_repository_loads_under_its_files_name():
    for path in sorted((ROOT / "training" / "recipes").glob("*.toml")):
        assert recipes.load(path).name == path.stem


def test_wizard_v6_reads_the_data_wizard_v5_was_fitted_on_by_wizard_v5s_own_data_step():
    """wizard-v6.toml's v5data step is wizard-v5.toml's data step, setting for setting: the data it rebuilds are
    those the start of its gated step (wizard-v5.npz) was fitted on."""
    v6, v5 = (recipes.load(ROOT / "training" / "recipes" / f"{name}.toml") for name in ("wizard-v6", "wizard-v5"))
    assert v6.step("v5data").values_stages() == v5.step("data").values_stages()
    assert v6.step("v5data").keys == v5.step("data").keys
    (gated,) = v6.step("data").values_stages()
    assert gated.data_from == ["v5data"] and Path(gated.start).name == "wizard-v5.npz"


def test_wizard_v7_is_wizard_v6s_recipe_with_four_iterations():
    """wizard-v7.toml (it extends wizard-v6.toml) runs its steps with the same settings and seeds but four gated
    iterations, so its first two iterations are wizard-v6's run; only its battery's references move on by one network."""
    v7, v6 = (recipes.load(ROOT / "training" / "recipes" / f"{name}.toml") for name in ("wizard-v7", "wizard-v6"))
    assert [s.name for s in v7.steps] == [s.name for s in v6.steps]
    assert v7.step("v5data").keys == v6.step("v5data").keys
    assert {**v7.step("data").keys, "iterations": 2} == v6.step("data").keys and v7.step("data").keys["iterations"] == 4
    assert v7.step("battery").keys["references"] == ["ppo-v6", "ppo-v5"] and v6.step("battery").keys["references"] == ["ppo-v5", "ppo-v4"]


@needs_torch
def test_a_train_values_step_reads_the_data_of_the_earlier_steps_its_data_from_names(tmp_path: Path):
    first = TINY.split("[[step.stage]]")[0]  # the data step, one iteration
    more = first.split("[[step]]")[1].replace('name = "data"', 'name = "more"').replace("eval_deals = 2", 'eval_deals = 2\ndata_from = ["data"]\nseed = 1')
    out = tmp_path / "run"
    quiet_run(write_recipe(tmp_path, first + "[[step]]" + more), out)
    config = json.loads((out / "steps" / "more" / "config.json").read_text())
    assert config["train"]["data_from"] == [str((out / "steps" / "data").resolve())]
    fitted = load_checkpoint(out / "steps" / "more" / "checkpoints" / "iter-0.npz")[0]
    own = load_checkpoint(out / "steps" / "data" / "checkpoints" / "iter-0.npz")[0]
    assert fitted["train"]["data_from"] == ["../data"] and own["train"]["data_from"] == []  # from its own folder


@needs_torch
def test_a_gated_step_is_finished_only_with_its_last_verdict_and_publishes_the_network_the_gate_kept(tmp_path: Path):
    from wizard_env.training.evaluation.gate import gate_path, read_gate

    first = TINY.split("[[step.stage]]")[0].replace("eval_deals = 2", "eval_deals = 2\ngate = 4\niterations = 2\nconfirm = 6")
    text = first + '[[step]]\nname = "publish"\nkind = "publish"\ncheckpoint = "data"\n'
    out = tmp_path / "run"
    quiet_run(write_recipe(tmp_path, text), out)
    checkpoints = out / "steps" / "data" / "checkpoints"
    verdict = read_gate(gate_path(checkpoints / "iter-1.npz"))
    kept = checkpoints / ("iter-1.npz" if verdict["kept"] else "iter-0.npz")
    assert all(np.array_equal(a, b) for a, b in zip(weights_of(out / "agent.npz").values(), weights_of(kept).values()))

    shutil.rmtree(out / "steps" / "publish")  # as if killed in the gate of the last iteration: the step is not finished
    (out / "steps" / "data" / DONE).unlink()
    gate_path(checkpoints / "iter-1.npz").unlink()
    lines: list[str] = []
    run_recipe(recipes.load(tmp_path / "tiny.toml"), out, True, None, log=lines.append)
    assert read_gate(gate_path(checkpoints / "iter-1.npz")) == verdict  # played again, on the same deals
    assert not any("finished earlier, kept" in line for line in lines)
    assert any("--gate 4 --confirm 6 " in line for line in lines)  # the recipe key is the option
    assert verdict.get("confirm", {"deals": 6})["deals"] == 6  # confirmed where the gate kept it



@needs_torch
def test_a_step_stopped_by_patience_is_finished_and_a_fit_reads_the_iterations_it_played(tmp_path: Path, monkeypatch):
    from wizard_env.training.evaluation import gate
    from wizard_env.training.values import train_values

    def rejected(candidate, earlier, game, deals, seed, rule):  # the real games; every candidate rejected
        return {**gate.play_gate(candidate, earlier, game, deals, seed, rule), "kept": False}

    monkeypatch.setattr(train_values, "play_gate", rejected)
    first = TINY.split("[[step.stage]]")[0].replace("eval_deals = 2", "eval_deals = 2\ngate = 4\niterations = 3\npatience = 1")
    fit = "[[step]]" + TINY.split("[[step]]")[2]  # the fit-values step on the data step, every iteration it played
    out = tmp_path / "run"
    quiet_run(write_recipe(tmp_path, first + fit), out)
    checkpoints = out / "steps" / "data" / "checkpoints"
    assert sorted(p.name for p in checkpoints.glob("iter-*.npz")) == ["iter-0.npz", "iter-1.npz"]
    assert json.loads((out / "steps" / "data" / DONE).read_text())["outputs"]["iterations"] == 2
    assert json.loads((out / "steps" / "fit" / "fit.json").read_text())["iterations"] == [0, 1]
    lines: list[str] = []
    run_recipe(recipes.load(tmp_path / "tiny.toml"), out, True, None, log=lines.append)
    assert sum("finished earlier, kept" in line for line in lines) == 2
    (out / "steps" / "data" / DONE).unlink()  # as if killed before the step was marked: its command is finished
    lines.clear()
    run_recipe(recipes.load(tmp_path / "tiny.toml"), out, True, None, log=lines.append)
    assert any("data: command 1/1 finished earlier, kept" in line for line in lines)
    assert not (checkpoints / "iter-2.npz").exists()


@needs_torch
def test_reuse_copies_the_finished_steps_that_run_alike_and_runs_the_rest(unbroken, tmp_path: Path):
    source, lines = unbroken[0], []
    changed = write_recipe(tmp_path, TINY.replace("grid = [[0, 0], [1.5, 3]]", "grid = [[0, 0], [2, 2]]"))
    out = tmp_path / "run"
    assert run_recipe(recipes.load(changed), out, log=lines.append, reuse=source) == ["margins", "battery", "publish"]
    assert [line.split(": copied from")[0] for line in lines if ": copied from" in line] == \
        ["recipe tiny: step 1/5 data", "recipe tiny: step 2/5 fit"]
    assert any(f"--reuse {source}: no step copied from 'margins' on: its settings differ ('margins': grid was" in line for line in lines)
    for name in ("steps/data/checkpoints/latest.npz", "steps/fit/agent.npz"):
        mine, theirs = weights_of(out / name), weights_of(source / name)
        assert all(np.array_equal(mine[k], theirs[k]) for k in theirs)
    assert sorted(p.name for p in (out / "steps").iterdir()) == sorted(STEPS)  # no hidden copy left
    # the same recipe: every step but publish is copied, and it publishes the same checkpoint
    same, lines = tmp_path / "same", []
    (tmp_path / "again").mkdir()
    assert run_recipe(recipes.load(write_recipe(tmp_path / "again")), same, log=lines.append, reuse=source) == ["publish"]
    assert any("no step copied from 'publish' on: a publish step writes this run's agent.npz" in line for line in lines)
    mine, theirs = weights_of(same / "agent.npz"), weights_of(source / "agent.npz")
    assert all(np.array_equal(mine[k], theirs[k]) for k in theirs)
    # what is not a recipe run, or the run itself, is refused before anything is written
    with pytest.raises(ValueError, match="--reuse .*nothing: no recipe run there"):
        run_recipe(recipes.load(changed), tmp_path / "new", reuse=tmp_path / "nothing")
    assert not (tmp_path / "new").exists()
    with pytest.raises(ValueError, match="that is --out itself"):
        run_recipe(recipes.load(changed), out, resume=True, reuse=out)


@needs_torch
def test_reuse_copies_a_train_values_step_only_if_it_started_from_the_same_bytes(unbroken, tmp_path: Path):
    checkpoints = unbroken[0] / "steps" / "data" / "checkpoints"
    step = TINY.split("[[step.stage]]")[0].replace('name = "data"', 'name = "data"\nstart = "start.npz"\niterations = 1')
    shutil.copyfile(checkpoints / "iter-0.npz", tmp_path / "start.npz")
    path, first, lines = write_recipe(tmp_path, step), tmp_path / "first", []
    quiet_run(path, first)
    assert run_recipe(recipes.load(path), tmp_path / "alike", log=lines.append, reuse=first) == []
    shutil.copyfile(checkpoints / "iter-1.npz", tmp_path / "start.npz")  # another network under the same name
    lines.clear()
    assert run_recipe(recipes.load(path), tmp_path / "other", log=lines.append, reuse=first) == ["data"]
    assert any(f"the checkpoint it started from there is not {(tmp_path / 'start.npz').resolve()}, byte for byte" in line
               for line in lines)

#: Two train-values steps of one iteration each, the second (TINY's data step's keys, another seed) reading the
#: first's data.
CHAIN = TINY.split("[[step.stage]]")[0] + 'iterations = 1\n\n[[step]]\nname = "next"\nkind = "train-values"\n' \
    + 'data_from = ["data"]\nseed = 5\n' + TINY.split('kind = "train-values"\n')[1].split("[[step.stage]]")[0]


@needs_torch
def test_reuse_goes_on_with_a_train_values_step_given_more_stages_as_a_run_from_scratch_would(tmp_path: Path):
    (tmp_path / "short").mkdir(), (tmp_path / "long").mkdir()
    short = write_recipe(tmp_path / "short", CHAIN)
    longer = write_recipe(tmp_path / "long", CHAIN + "[[step.stage]]\niterations = 1\n[[step.stage]]\niterations = 2\n")
    first, out, scratch, lines = tmp_path / "first", tmp_path / "run", tmp_path / "scratch", []
    quiet_run(short, first)
    assert run_recipe(recipes.load(longer), out, log=lines.append, reuse=first) == ["next"]
    assert [line.split(": copied from")[0] for line in lines if ": copied from" in line] == \
        ["recipe tiny: step 1/2 data", "recipe tiny: step 2/2 next"]
    assert any("(finished there with its first 1 command(s); the others run here)" in line for line in lines)
    assert any("next: command 1/2 finished earlier, kept" in line for line in lines)
    ran = out / "steps" / "next" / "checkpoints"
    there = first / "steps" / "next" / "checkpoints"
    assert (ran / "iter-0.npz").read_bytes() == (there / "iter-0.npz").read_bytes() and not (there / "iter-1.npz").exists()
    config = json.loads((out / "steps" / "next" / "config.json").read_text())["train"]
    assert config["data_from"] == [str((out / "steps" / "data").resolve())] and config["iterations"] == 2
    # what the recipe makes from scratch, array for array
    quiet_run(longer, scratch)
    mine, theirs = weights_of(ran / "iter-1.npz"), weights_of(scratch / "steps" / "next" / "checkpoints" / "iter-1.npz")
    assert all(np.array_equal(mine[k], theirs[k]) for k in theirs)
    # a step with other settings is not continued, nor one whose commands there are not the first here
    other = write_recipe(tmp_path / "long", CHAIN.replace("seed = 5", "seed = 6") + "[[step.stage]]\niterations = 1\n[[step.stage]]\niterations = 2\n")
    lines.clear()
    assert run_recipe(recipes.load(other), tmp_path / "other", log=lines.append, reuse=first, until="data") == []
    assert any("no step copied from 'next' on: its settings differ" in line for line in lines)
    fewer = write_recipe(tmp_path / "long", CHAIN.replace("seed = 5", "seed = 5\niterations = 2"))
    lines.clear()
    assert run_recipe(recipes.load(fewer), tmp_path / "fewer", log=lines.append, reuse=first, until="data") == []
    assert any("no step copied from 'next' on: its settings differ ('next': key 'iterations' is new)" in line for line in lines)


def test_docs_recipe_that_runs_on_from_wizard_v11s_rise_goes_on_from_a_run_of_it(tmp_path: Path):
    from wizard_env.training.recipes.recipe_run import goes_on

    text = (ROOT / "docs" / "training.md").read_text().split("A recipe that runs on from another's last gated step")[1]
    example = text.split("```toml\n")[1].split("```")[0]
    shutil.copytree(ROOT / "training" / "recipes", tmp_path / "training" / "recipes")  # beside the recipes it extends
    (tmp_path / "agents").symlink_to(ROOT / "agents")
    (tmp_path / "zoo").symlink_to(ROOT / "zoo")
    path = tmp_path / "training" / "recipes" / "longer.toml"
    path.write_text(example)
    mine, v11 = recipes.load(path), recipes.load(path.with_name("wizard-v11.toml"))
    rise = mine.step("rise")
    tables = [{t["name"]: t for t in json.loads(json.dumps(r.raw))["step"]}["rise"] for r in (mine, v11)]
    assert goes_on(rise, *tables) == 1 and goes_on(rise, tables[0], tables[0]) == 0
    assert [(c.iterations, c.confirm) for c in rise.values_stages()] == [(3, 0), (6, 4000)]


#: TINY with other margins and a second battery, as a recipe that extends it.
EXTENDED = """
extends = "tiny.toml"
name = "tiny-wider"

[[step]]
name = "margins"
grid = [[0, 0], [1, 1], [1.5, 3]]

[[step]]
name = "battery-3p"
kind = "eval-suite"
checkpoint = "margins"
deals = 2
references = []
players = [3]
"""


def test_a_recipe_that_extends_another_is_that_recipe_written_out_with_its_changes(tmp_path: Path):
    """The recipe a run records (and a resume compares) is the one written out: TINY with the margins' grid
    replaced and a step added, its description TINY's."""
    write_recipe(tmp_path)
    (tmp_path / "wider.toml").write_text(EXTENDED)
    written = tmp_path / "written" / "tiny.toml"
    written.parent.mkdir()
    written.write_text(TINY.replace('name = "tiny"', 'name = "tiny-wider"').replace("grid = [[0, 0], [1.5, 3]]", "grid = [[0, 0], [1, 1], [1.5, 3]]")
                       + EXTENDED[EXTENDED.index('[[step]]\nname = "battery-3p"'):])
    wider, out = recipes.load(tmp_path / "wider.toml"), recipes.load(written)
    assert wider.raw == out.raw and wider.steps == out.steps and wider.description == recipes.load(tmp_path / "tiny.toml").description
    assert [s.name for s in wider.steps] == [*STEPS, "battery-3p"] and wider.step("margins").keys["grid"][1] == [1, 1]
    assert recipes.first_change(out.raw, json.loads(json.dumps(wider.raw))) is None


def test_a_new_step_after_a_base_step_comes_right_after_it_and_the_new_steps_placed_there_before_it(tmp_path: Path):
    write_recipe(tmp_path)
    placed = EXTENDED.replace('name = "battery-3p"', 'name = "battery-3p"\nafter = "fit"')
    more = placed.replace('checkpoint = "margins"', 'checkpoint = "fit"')
    for name in ("again", "twice"):  # placed after the fit too, in this file's order, then one at the end
        more += f'[[step]]\nname = "{name}"\nkind = "eval-suite"\ncheckpoint = "fit"\ndeals = 2\nreferences = []\nplayers = [3]\n'
        more += 'after = "fit"\n' if name == "again" else ""
    (tmp_path / "wider.toml").write_text(more)
    wider = recipes.load(tmp_path / "wider.toml")
    assert [s.name for s in wider.steps] == ["data", "fit", "battery-3p", "again", "margins", "battery", "publish", "twice"]
    assert all("after" not in table for table in wider.raw["step"])  # the recipe written out has them in place
    (tmp_path / "wider.toml").write_text(placed)  # it now comes before the step it names
    with pytest.raises(ValueError, match="step 3 'battery-3p', key 'checkpoint': 'margins' is not an earlier step"):
        recipes.load(tmp_path / "wider.toml")


def test_a_base_in_another_folder_keeps_naming_the_checkpoints_it_named(tmp_path: Path):
    shipped = ROOT / "zoo"
    base, folder = tmp_path / "base", tmp_path / "mine" / "deeper"
    base.mkdir(), folder.mkdir(parents=True)
    start = Path(os.path.relpath(shipped / "wizard-v1.npz", base)).as_posix()
    pool = Path(os.path.relpath(shipped / "wizard-v2.npz", base)).as_posix()
    data_only = TINY[:TINY.index('[[step]]\nname = "fit"')]
    write_recipe(base, data_only.replace("rounds = 2\nmix", f'start = "{start}"\npool = ["previous", "{pool}"]\npool_tables = 0.25\nrounds = 2\nmix')
                 .replace("hidden = [16]", "hidden = [512, 256]\nfeatures = true", 1))
    (folder / "mine.toml").write_text(f'extends = "{Path(os.path.relpath(base / "tiny.toml", folder)).as_posix()}"\nname = "mine"\n')
    keys = recipes.load(folder / "mine.toml").step("data").keys
    assert Path(keys["start"]) == (shipped / "wizard-v1.npz").resolve()
    assert keys["pool"] == ["previous", str((shipped / "wizard-v2.npz").resolve())]


@pytest.mark.parametrize("text, file, where", [
    (EXTENDED.replace('name = "margins"', 'name = "margins"\nkind = "fit-values"'), "wider", "step 'margins', key 'kind'"),
    (EXTENDED.replace('"tiny.toml"', '"wider.toml"'), "wider", "key 'extends'"),
    (EXTENDED.replace('"tiny.toml"', "3"), "wider", "key 'extends'"),
    (EXTENDED.replace('"tiny.toml"', '"nowhere.toml"'), "nowhere", "no such file"),
    (EXTENDED.replace("grid = [[0, 0], [1, 1], [1.5, 3]]", "grid = [[0, 0], [-1, 1]]"), "wider", "step 3 'margins', key 'grid'"),
    (EXTENDED.replace('name = "tiny-wider"\n', ""), "wider", "key 'name'"),
    (EXTENDED + '[[step]]\nname = "margins"\ndeals = 3\n', "wider", "step 'margins', key 'name'"),
    (EXTENDED.replace('players = [3]', 'players = [3]\nafter = "nowhere"'), "wider", "step 'battery-3p', key 'after'"),
    (EXTENDED.replace('grid = [[0, 0]', 'after = "data"\ngrid = [[0, 0]'), "wider", "step 'margins', key 'after'"),
])
def test_a_bad_extending_recipe_is_named_by_its_file_and_key(tmp_path: Path, text, file, where):
    write_recipe(tmp_path)
    (tmp_path / "wider.toml").write_text(text)
    with pytest.raises(ValueError) as error:
        recipes.load(tmp_path / "wider.toml")
    assert str(error.value).startswith(f"recipe {tmp_path / file}.toml: {where}")


def test_a_fault_of_the_base_is_named_in_the_base(tmp_path: Path):
    write_recipe(tmp_path, TINY.replace("samples = 100", "samples = 0"))
    (tmp_path / "wider.toml").write_text(EXTENDED)
    with pytest.raises(ValueError, match=re.escape(f"recipe {tmp_path / 'tiny.toml'}: step 1 'data', key 'samples'")):
        recipes.load(tmp_path / "wider.toml")


@needs_torch
def test_list_prints_every_step_and_where_a_run_stands_without_running_anything(tmp_path: Path, capsys):
    path, out = write_recipe(tmp_path), tmp_path / "run"
    assert main(["recipe", str(path), "--list"]) == 0
    printed = capsys.readouterr().out
    assert [line.split(" ")[1] for line in printed.splitlines() if re.match(r"\d\. ", line)] == STEPS
    assert "   command 2: wizard train-values --out OUT/steps/data --mix 4 --iterations 2" in printed
    assert printed.rstrip().endswith("writes OUT/steps/publish, OUT/agent.npz, OUT/tables.md")
    assert "[" not in printed  # no run named: no state
    quiet_run(path, out, until="data")
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    assert main(["recipe", str(path), "--out", str(out), "--list"]) == 0
    printed = capsys.readouterr().out
    assert "1. data (train-values) [finished]: " in printed and "2. fit (fit-values) [not started]: " in printed
    assert f"   command 1: wizard train-values --out {out / 'steps' / 'data'} " in printed
    assert main(["recipe", str(path), "--list", "--resume"]) == 2
    assert "--list runs nothing: leave out --resume" in capsys.readouterr().err
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before


@needs_torch
def test_from_runs_a_step_and_those_after_it_again_and_refuses_what_is_missing(tmp_path: Path, capsys):
    path, out = write_recipe(tmp_path), tmp_path / "run"
    quiet_run(path, out, until="fit")
    data, fit = (out / "steps" / "data" / DONE).read_bytes(), weights_of(out / "steps" / "fit" / "agent.npz")
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    for options, message in ((["--from", "nope"], "--from 'nope': the recipe has no such step (steps: data, fit, margins, battery, publish)"),
                             (["--from", "battery"], "--from 'battery': the steps before it must be finished in"),
                             (["--from", "fit", "--until", "data"], "--until 'data' comes before --from 'fit'")):
        assert main(["recipe", str(path), "--out", str(out), *options]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err
    assert "margins is not (no " in main_err(path, out, "battery", capsys)
    assert "no recipe run in" in main_err(path, tmp_path / "new", "fit", capsys)
    changed = tmp_path / "changed.toml"
    changed.write_text(TINY.replace("samples = 100", "samples = 90"))
    assert "differs from the recipe" in main_err(changed, out, "fit", capsys)  # a change before the step
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before  # each refusal wrote nothing

    path.write_text(TINY.replace("epochs = 1\nbatch_size = 32", "epochs = 2\nbatch_size = 32"))  # the fit changes
    lines: list[str] = []
    assert run_recipe(recipes.load(path), out, until="fit", log=lines.append, from_step="fit") == ["fit"]
    assert any("step 2/5 fit: its outputs removed, to run again from its start (--from)" in line for line in lines)
    assert (out / "steps" / "data" / DONE).read_bytes() == data  # kept
    refit = weights_of(out / "steps" / "fit" / "agent.npz")
    assert any(not np.array_equal(refit[k], fit[k]) for k in fit)  # two epochs, not one
    assert json.loads((out / "recipe.json").read_text())["recipe"]["step"][1]["epochs"] == 2
    assert quiet_run(path, out, resume=True, until="fit") == []  # the run now is the changed recipe's


def main_err(path: Path, out: Path, step: str, capsys) -> str:
    assert main(["recipe", str(path), "--out", str(out), "--from", step]) == 2
    return capsys.readouterr().err


@needs_torch
def test_a_fit_that_holds_nothing_out_gives_no_held_out_figure(tmp_path: Path):
    path = write_recipe(tmp_path, TINY.replace("held_out_every = 4", "held_out_every = 1000"))
    lines: list[str] = []
    run_recipe(recipes.load(path), tmp_path / "run", until="fit", log=lines.append)
    fitted = next(line for line in lines if line.startswith("  fit: fitted"))
    assert "nothing held out (fewer chunks than the fit's held_out_every)" in fitted and "departs" not in fitted
    assert "differs" not in json.loads((tmp_path / "run" / "steps" / "fit" / "fit.json").read_text())
