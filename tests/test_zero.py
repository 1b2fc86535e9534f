"""Zero (``wizard train-values --zero``, ``training/recipes/zero-*.toml``): a tiny run of the shipped recipe with every
RuleAgent method and heuristic function made to raise outside the evaluations, its random first network, and the
settings a zero run refuses."""

from __future__ import annotations

import dataclasses
import importlib
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from numba.core.dispatcher import Dispatcher

pytest.importorskip("torch")

from wizard_env.agents.ppo_agent import load_checkpoint  # noqa: E402
from wizard_env.agents.rule_agent import RuleAgent  # noqa: E402
from wizard_env.cli.main import main  # noqa: E402
from wizard_env.training.evaluation import evaluate as evaluate_module  # noqa: E402
from wizard_env.training.recipes import recipe as recipes  # noqa: E402
from wizard_env.training.values import zero  # noqa: E402
from wizard_env.training.recipes.recipe_run import run_recipe  # noqa: E402
from wizard_env.training.values.values_config import (ValuesConfig, check_config, checkpoint_config, earlier_runs)  # noqa: E402

RECIPES = Path(__file__).resolve().parent.parent / "training" / "recipes"
#: The modules of RuleAgent: the agent, its bids, its card play, its numbers by action and its reading of a view.
RULE_MODULES = ("rule_agent", "rule_bid", "rule_play", "rule_features", "rule_view")
#: The shipped 4-player 5-round recipe at a size that runs in seconds: two iterations, the second gated.
TINY = """extends = "{base}"
name = "zero-tiny"

[[step]]
name = "zero"
iterations = 2
samples = 60
games = 4
search_samples = 2
gate = 4
eval_deals = 2
hidden = [16]
epochs = 1
batch_size = 32
workers = 1
"""
#: A zero run's settings, small.
ZERO = ValuesConfig(mix=[4], samples=60, games=4, workers=1, epochs=1, eval_deals=2, hidden=[16], margin=0.0,
                    advice=False, zero=True, targets="search", search_samples=2, search_infer=True, pool_tables=0.3,
                    pool=["previous"], gate=4)


class RuleAgentRan(AssertionError):
    """RuleAgent's code was called outside an evaluation."""


@pytest.fixture
def rule_outside_evaluations_raises(monkeypatch) -> list[str]:
    """Make every RuleAgent method but ``__init__`` (which only seeds a Generator) and every function of its modules,
    wherever a loaded module of the package holds it, raise ``RuleAgentRan`` unless called inside
    ``training.evaluation.evaluate.evaluate`` (each iteration's row against RuleAgents: a yardstick); the names called inside it.
    Worker processes are forked from this one, so they raise too. Compiled functions (numba dispatchers) stay: another
    compiled function that calls one resolves it as a global when it compiles, which a Python wrapper would break;
    Python reaches them only through the functions and methods guarded here."""
    inside = [0]
    called: list[str] = []

    def guarded(original, name: str):
        def call(*args, **kwargs):
            if not inside[0]:
                raise RuleAgentRan(f"RuleAgent's {name} ran outside an evaluation")
            called.append(name)
            return original(*args, **kwargs)
        return call

    originals = {}
    for short in RULE_MODULES:
        module = importlib.import_module(f"wizard_env.agents.{short}")
        for name, value in vars(module).items():
            if (callable(value) and not isinstance(value, (type, Dispatcher))
                    and getattr(value, "__module__", None) == module.__name__):
                originals[id(value)] = (value, f"{short}.{name}")
    for module in [m for name, m in sys.modules.items() if name.startswith("wizard_env") and m is not None]:
        for name, value in list(vars(module).items()):
            if id(value) in originals and originals[id(value)][0] is value:
                monkeypatch.setattr(module, name, guarded(value, originals[id(value)][1]))
    # the class as every loaded module holds it (an import earlier in the session may have left more than one)
    classes = {id(c): c for m in list(sys.modules.values()) if m is not None
               for c in [getattr(m, "RuleAgent", None)] if isinstance(c, type) and c.__name__ == "RuleAgent"}
    for cls in {id(RuleAgent): RuleAgent, **classes}.values():
        for name, value in list(vars(cls).items()):
            if callable(value) and name != "__init__":
                monkeypatch.setattr(cls, name, guarded(value, f"RuleAgent.{name}"))
    real = evaluate_module.evaluate

    def evaluation(*args, **kwargs):
        inside[0] += 1
        try:
            return real(*args, **kwargs)
        finally:
            inside[0] -= 1

    monkeypatch.setattr(evaluate_module, "evaluate", evaluation)
    return called


def test_the_guard_stops_rule_agent_and_its_heuristics(rule_outside_evaluations_raises):
    from wizard_env.agents.rule_features import action_features  # as a module that uses it reads it now
    from wizard_env.engine.batch import WizardBatch
    from wizard_env.engine.rules import Rules

    batch = WizardBatch(Rules.make(4, 5), 2, seed=0, autoreset=False)
    o, m = batch.observe(batch.all_games), batch.legal_masks()
    with pytest.raises(RuleAgentRan, match="RuleAgent.act_batch"):
        RuleAgent(seed=0).act_batch(o, m)
    with pytest.raises(RuleAgentRan, match="rule_features.action_features"):
        action_features(o, m)


def test_the_guard_stops_rule_agent_in_a_worker_collecting_data(tmp_path, rule_outside_evaluations_raises):
    """A from-scratch run that is no zero run, its RuleAgents holding the other seats of half its tables: the worker
    that collects meets the guard, and the run stops there."""
    tiny = TINY.format(base=RECIPES / "zero-4p5r.toml") + "zero = false\npool_tables = 0\npool = []\nrule_tables = 0.5\n"
    path = tmp_path / "rule-tables.toml"
    path.write_text(tiny)
    with pytest.raises(RuleAgentRan, match="RuleAgent.act_batch ran outside an evaluation"):
        run_recipe(recipes.load(path), tmp_path / "run", log=lambda line: None)


def test_a_zero_recipe_trains_with_no_rule_agent_code_but_in_its_evaluations(tmp_path, rule_outside_evaluations_raises):
    path = tmp_path / "tiny.toml"
    path.write_text(TINY.format(base=RECIPES / "zero-4p5r.toml"))
    out = tmp_path / "run"
    assert run_recipe(recipes.load(path), out, log=lambda line: None) == ["zero"]
    folder = out / "steps" / "zero"
    # the guard was live: the evaluation rows (and only they) asked RuleAgent
    assert "RuleAgent.act_batch" in rule_outside_evaluations_raises
    assert len((folder / "curve.csv").read_text().splitlines()) == 3  # a header and a row per iteration
    # iteration 0 was collected by the random network, which its gate then met; iteration 1 was judged too
    init = zero.initial_path(folder)
    config, weights = load_checkpoint(init)
    assert config["iteration"] == -1 and config["advice"] is False and config["train"]["zero"] is True
    verdict = json.loads((folder / "checkpoints" / "iter-0.gate.json").read_text())
    assert verdict["earlier"] == str(init)
    assert (folder / "checkpoints" / "iter-1.gate.json").is_file()
    assert all(np.array_equal(weights[k], v) for k, v in zero.initial_weights([16], 1).items())
    for k in (0, 1):  # the networks read the observation alone and play the plain argmax
        saved, _ = load_checkpoint(folder / "checkpoints" / f"iter-{k}.npz")
        assert (saved["advice"], saved["features"], saved["advice_bonus"]) == (False, False, 0.0)


def test_the_random_first_network_is_the_seeds_and_of_torchs_scale():
    one, again, other = zero.initial_weights([32, 16], 5), zero.initial_weights([32, 16], 5), zero.initial_weights([32, 16], 6)
    assert one.keys() == again.keys() and all(np.array_equal(one[k], again[k]) for k in one)
    assert not any(np.array_equal(one[k], other[k]) for k in one)
    shapes = [v.shape for k, v in one.items() if v.ndim == 2]
    assert [s[0] for s in shapes] == [32, 16, shapes[-1][0]]
    for k, v in one.items():
        fan_in = v.shape[1] if v.ndim == 2 else one[k.replace("bias", "weight")].shape[1]
        assert np.abs(v).max() <= 1 / np.sqrt(fan_in) and np.abs(v).max() > 0.9 / np.sqrt(fan_in)


def test_the_shipped_zero_recipes_are_zero_runs_of_their_games():
    games = {"zero-4p5r.toml": (4, 5), "zero-3p5r.toml": (3, 5), "zero-4p.toml": (4, "standard")}
    for name, (players, rounds) in games.items():
        step = recipes.load(RECIPES / name).step("zero")
        cfg = step.values_stages()[-1]
        assert (step.keys["players"], step.keys["rounds"], cfg.mix) == (players, rounds, [players])
        assert cfg.zero and not cfg.advice and cfg.rule_tables == 0 and cfg.pool == ["previous"] and not cfg.start


@pytest.mark.parametrize("change, message", [
    (dict(advice=True, margin=3.0), "--zero needs --no-advice"),
    (dict(rule_tables=0.2), "--rule-tables 0.2 and --zero: a zero run plays no RuleAgent"),
    (dict(pool=["previous", "rule"]), "--pool 'rule' and --zero"),
    (dict(pool=["ppo-v3"]), "--pool 'ppo-v3' and --zero"),
    (dict(start="agents/pretrained/wizard-v13.npz", hidden=[512, 256], features=True), "--features and --no-advice"),
    (dict(features=True), "--features and --no-advice"),
    (dict(margin=1.5), "--margin and --no-advice"),
])
def test_settings_that_bring_rule_agent_into_a_zero_run_are_refused(change, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        check_config(dataclasses.replace(ZERO, **change))


def test_a_zero_run_starts_and_reads_data_only_from_zero_runs(tmp_path):
    plain = tmp_path / "plain.npz"
    zero.write_initial(plain, checkpoint_config(dataclasses.replace(ZERO, zero=False), zero_rules(), -1, 0), ZERO.seed)
    with pytest.raises(ValueError, match=re.escape(f"--start {plain} and --zero: not a checkpoint of a zero run")):
        check_config(dataclasses.replace(ZERO, start=str(plain)))
    with pytest.raises(ValueError, match=re.escape(f"--pool {str(plain)!r} and --zero")):
        check_config(dataclasses.replace(ZERO, pool=[str(plain)]))
    own = tmp_path / "own.npz"
    zero.write_initial(own, checkpoint_config(ZERO, zero_rules(), -1, 0), ZERO.seed)
    check_config(dataclasses.replace(ZERO, start=str(own), pool=["previous", f"ppo:{own}"]))  # no error
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"train": dataclasses.asdict(dataclasses.replace(ZERO, zero=False)),
                                                 "rules": json.loads(json.dumps(load_checkpoint(own)[0]["rules"])), "rounds": 5}))
    with pytest.raises(ValueError, match=re.escape(f"--data-from {run}: not a zero run")):
        earlier_runs(dataclasses.replace(ZERO, data_from=[str(run)]), tmp_path / "out")


def zero_rules():
    from wizard_env.engine.rules import Rules

    return Rules.make(4, 5)


@pytest.mark.parametrize("text, message", [
    ("zero = 1\n", "step 1 'zero', key 'zero': expected true or false, not 1"),
    ("rule_tables = 0.4\n", "step 1 'zero', key 'rule_tables': rule_tables 0.4 and zero: a zero run plays no RuleAgent"),
    ('pool = ["previous", "ppo-v13"]\n', "step 1 'zero', key 'pool': pool 'ppo-v13' and zero"),
    ("advice = true\n", "step 1 'zero', key 'zero': zero needs no_advice"),
])
def test_a_zero_recipes_keys_are_checked_before_anything_runs(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(TINY.format(base=RECIPES / "zero-4p5r.toml") + text)
    with pytest.raises(ValueError, match=re.escape(f"recipe {path}: {message}")):
        recipes.load(path)


def test_the_command_line_refuses_zero_without_no_advice_in_one_line_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train-values", "--zero", "--out", str(out), "--players", "4", "--rounds", "5"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--zero needs --no-advice" in err and not out.exists()
