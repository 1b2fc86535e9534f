"""Search targets with the network as prior (``train-values --search-top K``): only the network's K best-rated
actions and RuleAgent's choice are played out, on the worlds the full search draws; the fit and the chunks take the
actions left out as values unknown."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

import torch  # noqa: E402

from wizard_env.agents.ppo_agent import LEARNED_PHASES, PRETRAINED, PPOAgent  # noqa: E402
from wizard_env.cli.main import main  # noqa: E402
from wizard_env.engine.rules import Rules  # noqa: E402
from wizard_env.training.values import rollout_values as rv  # noqa: E402

PHASES = LEARNED_PHASES["both"]


def collect(rules: Rules, top: int) -> rv.ValueSamples:
    agent = PPOAgent.load(PRETRAINED, seed=np.random.default_rng([7, 3]))
    return rv.collect_values(rules, 4, 7, PHASES, 0.5, behaviour=agent, rollout=agent, search_samples=2, search_top=top)


def test_the_prior_searches_its_top_actions_and_ruleagents_choice_with_the_values_of_the_full_search():
    rules = Rules.make(3, [2, 3])  # no one-card round: the rollouts' RuleAgent draws nothing, whatever is played out
    full, pruned = collect(rules, 0), collect(rules, 2)
    for name in ("obs_bits", "obs_small", "obs_wide", "legal", "advice"):  # the same games, the same decisions kept
        np.testing.assert_array_equal(getattr(pruned, name), getattr(full, name), err_msg=name)
    legal, values = full.masks, pruned.values
    searched = np.isfinite(values)
    at = np.arange(len(pruned))
    assert searched[at, pruned.advice].all() and not (searched & ~legal).any()
    count, options = searched.sum(axis=1), legal.sum(axis=1)
    assert ((count >= np.minimum(options, 2)) & (count <= np.minimum(options, 3))).all()  # two, and RuleAgent's choice
    assert (count < options).any()  # some decisions were pruned
    np.testing.assert_array_equal(values[searched], full.values[searched])  # on the same worlds, the same rollouts


def test_a_top_past_every_option_gives_the_data_of_no_prior():
    rules = Rules.make(3, 3)  # one-card round included: the prior's RuleAgent draws from a stream of its own
    full, wide = collect(rules, 0), collect(rules, 79)
    for name in ("obs_bits", "obs_small", "obs_wide", "legal", "legal_values", "advice"):
        np.testing.assert_array_equal(getattr(wide, name), getattr(full, name), err_msg=name)


def test_a_chunk_keeps_the_actions_left_out_and_the_fit_and_its_check_skip_them(tmp_path: Path):
    samples = collect(Rules.make(3, [2, 3]), 1)
    assert np.isnan(samples.legal_values).any()
    rv.write_chunk(tmp_path / "chunk.npz", samples)
    back = rv.read_chunk(tmp_path / "chunk.npz")
    np.testing.assert_array_equal(back.legal_values, samples.legal_values)  # NaN where NaN
    torch.manual_seed(0)
    net = rv.value_network(rv.input_width(True), [8])
    before = rv.network_weights(net)
    rows = np.arange(len(samples))
    loss = rv.fit(net, samples, rows, epochs=1, lr=1e-2, batch_size=16, seed=0, features=True)
    assert np.isfinite(loss) and all(np.isfinite(w).all() for w in rv.network_weights(net).values())
    assert any(not np.array_equal(w, before[k]) for k, w in rv.network_weights(net).items())
    chosen = rv.chosen_actions(net, samples, rows, np.zeros(4), True)
    assert np.isfinite(samples.value_of(chosen)).all()  # the check compares actions that have a value
    assert all(np.isfinite(v) for v in rv.gains(net, samples, rows, np.zeros(4), True).values())


def test_a_run_prunes_from_its_second_iteration_and_resumes_only_with_its_top(tmp_path: Path, capsys):
    out = tmp_path / "run"
    args = ["--players", "3", "--rounds", "3", "--mix", "3", "--samples", "40", "--games", "4", "--workers", "1",
            "--epochs", "1", "--eval-deals", "2", "--hidden", "16", "--margin", "2", "--quiet", "--targets", "search",
            "--search-samples", "2", "--search-top", "1"]
    assert main(["train-values", "--out", str(out), *args, "--iterations", "2"]) == 0
    first, second = ([rv.read_chunk(p) for p in sorted((out / "data" / f"iter-{i}").iterdir())] for i in (0, 1))
    assert all(np.isfinite(c.legal_values).all() for c in first)  # iteration 0: RuleAgent collects, no network to prune
    assert any(np.isnan(c.legal_values).any() for c in second)
    assert json.loads((out / "config.json").read_text())["train"]["search_top"] == 1
    capsys.readouterr()
    assert main(["train-values", "--out", str(out), *args[:-1], "2", "--iterations", "3", "--resume"]) == 2
    assert "was started with --search-top" in capsys.readouterr().err
