"""``wizard compare-evals``: the paired difference by deal between two ``wizard eval`` results on the same deals."""

from __future__ import annotations

import json

import numpy as np

from wizard_env.cli.main import main
from wizard_env.training.evaluation.evaluate import mean_ci

TINY = ["--players", "4", "--rounds", "3", "--games", "2"]


def paired(args: list[str]) -> int:
    return main(["compare-evals", *args])


def test_it_pairs_deals_and_refuses_other_deals(tmp_path, capsys):
    runs = {}
    for name, agents, seed in (("a", "rule,random,rule,random", 3), ("b", "rule,rule,rule,rule", 3), ("c", "rule,rule,rule,rule", 4)):
        assert main(["eval", *TINY, "--agents", agents, "--seed", str(seed), "--out", str(tmp_path / name)]) == 0
        runs[name] = json.loads((tmp_path / name / "eval.json").read_text())
    capsys.readouterr()
    a, b = (np.asarray(runs[k]["deal_scores"]) for k in "ab")
    # one agent of one file against another of the same file is eval's own paired difference
    assert paired([str(tmp_path / "a" / "eval.json")] * 2 + ["--first", "random", "--second", "rule"]) == 0
    random_row = next(s for s in runs["a"]["specs"] if s["name"] == "random")
    assert f"{random_row['diff']:+.1f} ± {random_row['diff_ci95']:.1f}" in capsys.readouterr().out
    # whole tables: the per-deal means, paired
    diff, ci = mean_ci(a.mean(axis=1) - b.mean(axis=1))
    assert paired([str(tmp_path / "a" / "eval.json"), str(tmp_path / "b" / "eval.json")]) == 0
    assert f"{diff:+.1f} ± {ci:.1f}" in capsys.readouterr().out
    assert paired([str(tmp_path / "a" / "eval.json"), str(tmp_path / "c" / "eval.json")]) == 2
    assert "same deals" in capsys.readouterr().err
    assert paired([str(tmp_path / "a" / "eval.json")] * 2 + ["--first", "ppo"]) == 2
    assert "no agent 'ppo'" in capsys.readouterr().err


def test_a_file_that_is_not_an_evaluation_is_named(tmp_path, capsys):
    (tmp_path / "suite.json").write_text(json.dumps({"format": "wizard-eval-suite/1"}))
    (tmp_path / "broken.json").write_text("{")
    assert paired([str(tmp_path / "suite.json")] * 2) == 2
    assert capsys.readouterr().err == f"wizard: error: {tmp_path / 'suite.json'} is not the eval.json of wizard eval (agents, players, deal_seeds, deal_scores)\n"
    assert paired([str(tmp_path / "broken.json"), str(tmp_path / "suite.json")]) == 2
    assert capsys.readouterr().err.startswith(f"wizard: error: {tmp_path / 'broken.json'} is not valid JSON")
