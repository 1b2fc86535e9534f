"""``wizard eval-suite`` and ``training.evaluation.eval_suite``: the battery's rows, its pairing by deal, its files, its errors."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re

import numpy as np
import pytest

from wizard_env.cli.main import main
from wizard_env.engine.rules import Rules
from wizard_env.training.evaluation import cards, eval_suite
from wizard_env.training.evaluation.eval_suite import SuiteConfig, plan
from wizard_env.training.evaluation.pairing import paired
from wizard_env.training.evaluation.evaluate import evaluate

#: A battery of seconds: three deals a table, one reference, one other player count.
TINY = ["--games", "3", "--reference", "random", "--players-battery", "3"]
ROWS = ["rule", "reference:random:one", "reference:random:three", "self-play", "players:3", "bid-accuracy"]


@pytest.fixture(scope="module")
def battery(tmp_path_factory):
    """The tiny battery of ``rule`` through the command line: its folder, stdout, stderr and JSON."""
    out = tmp_path_factory.mktemp("suite") / "rule"
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        assert main(["eval-suite", "rule", *TINY, "--out", str(out)]) == 0
    return out, stdout.getvalue(), stderr.getvalue(), json.loads((out / eval_suite.JSON_NAME).read_text())


def test_the_battery_writes_both_files_with_every_row(battery):
    out, stdout, stderr, data = battery
    assert [row["key"] for row in data["rows"]] == ROWS
    assert all(row["skipped"] is None and row["figures"] for row in data["rows"])
    assert (data["agent"], data["deals"], data["seed"], data["references"]) == ("rule", 3, 1, ["random"])
    assert data["seeds"] == {"4p": 1, "self-play": 2, "players": 3} and data["version"]
    markdown = (out / eval_suite.MARKDOWN_NAME).read_text()
    assert markdown == eval_suite.format_markdown(data) and markdown in stdout
    assert sorted(p.name for p in out.iterdir()) == ["suite.json", "suite.md"]  # the run lock is gone
    # one line as each row starts and one as it ends, with its wall time; no bar off a terminal
    lines = stderr.splitlines()
    for i, key in enumerate(ROWS, 1):
        assert sum(line.startswith(f"[{i}/{len(ROWS)}] {key}: ") for line in lines) == 2
    assert len(lines) == 2 * len(ROWS) and all(re.search(r"\(\d+\.\d s\)$", line) for line in lines[1::2])
    # every table's settings and per-deal scores are kept
    assert {tuple(t["agents"]) for t in data["tables"]} >= {("rule",) * 4, ("rule", "random", "random", "random")}
    assert all(len(t["deal_scores"]) == 3 == len(t["deal_seeds"]) for t in data["tables"])


def test_workers_play_the_tables_at_once_with_the_same_figures(battery, tmp_path):
    out = tmp_path / "suite"
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        assert main(["eval-suite", "rule", *TINY, "--workers", "2", "--out", str(out)]) == 0
    data = json.loads((out / eval_suite.JSON_NAME).read_text())
    serial = battery[3]
    assert data["tables"] == serial["tables"]
    untimed = [[{k: v for k, v in row.items() if k != "wall_seconds"} for row in d["rows"]] for d in (data, serial)]
    assert untimed[0] == untimed[1]
    assert all(row["wall_seconds"] > 0 for row in data["rows"] if row["key"] != "bid-accuracy")  # its table is rule's
    assert (out / eval_suite.MARKDOWN_NAME).read_text() == (battery[0] / eval_suite.MARKDOWN_NAME).read_text()
    lines = stderr.getvalue().splitlines()
    assert lines[0] == f"{len(data['tables'])} tables on 2 worker processes"
    assert [line.split(": ")[0] for line in lines if line.startswith("[")] == [
        f"[{i}/{len(ROWS)}] {key}" for i, key in enumerate(ROWS, 1) for _ in range(2)]


def test_four_rule_against_four_rule_is_exactly_zero(battery):
    self_play = next(row for row in battery[3]["rows"] if row["key"] == "self-play")["figures"]
    assert self_play["diff"] == {"mean": 0.0, "ci95": 0.0}
    rules = Rules.make(4)
    first, second = (evaluate(rules, ["rule"] * 4, 3, 2) for _ in range(2))
    assert paired(first, second).diff.mean == 0.0


def test_the_paired_difference_is_the_hand_computed_one_from_per_deal_scores():
    rules = Rules.make(4)
    first = evaluate(rules, ["random", "rule", "rule", "rule"], 5, 7)
    second = evaluate(rules, ["rule", "rule", "rule", "rule"], 5, 7)
    result = paired(first, second, "random", "rule")
    by_deal = first.deal_scores[:, 0] - second.deal_scores.mean(axis=1)
    half_width = 1.959963984540054 * math.sqrt(sum((d - by_deal.mean()) ** 2 for d in by_deal) / 4) / math.sqrt(5)
    assert result.deals == 5 and result.diff.mean == pytest.approx(by_deal.mean())
    assert result.diff.ci95 == pytest.approx(half_width)
    assert result.first.mean == pytest.approx(first.deal_scores[:, 0].mean())
    # the same pairing from the eval.json form, and a refusal of other deals
    as_json = {"agents": first.agent_specs, "deal_scores": first.deal_scores.tolist(), "deal_seeds": first.deal_seeds, "players": 4}
    assert paired(as_json, second, "random", "rule") == result
    with pytest.raises(ValueError, match="same deals"):
        paired(first, evaluate(rules, ["rule"] * 4, 5, 8))
    with pytest.raises(ValueError, match="no agent 'ppo'"):
        paired(first, second, "ppo")


def test_the_learned_play_row_is_paired_with_the_agents_own_row():
    data = eval_suite.run_suite(SuiteConfig("ppo", deals=2, skip=("reference", "self-play", "players")))
    rows = {row["key"]: row for row in data["rows"]}
    assert list(rows) == ["rule", "play", "bid-accuracy"]
    own, ablation = (np.asarray(data["tables"][i]["deal_scores"]) for i in rows["play"]["tables"])
    assert rows["play"]["tables"][0] == rows["rule"]["tables"][0]  # the rule row's table, played once
    assert data["tables"][rows["play"]["tables"][1]]["agents"] == ["ppo:play=rule", "rule", "rule", "rule"]
    figures = rows["play"]["figures"]
    assert figures["diff"]["mean"] == pytest.approx((own[:, 0] - ablation[:, 0]).mean())
    assert figures["agent_diff_to_rule"]["mean"] == pytest.approx(rows["rule"]["figures"]["diff"]["mean"])


def test_the_plan_skips_what_an_agent_cannot_play():
    keys = [row.key for row in plan(SuiteConfig("ppo", references=("ppo", "ppo-bid")))]
    assert keys == ["rule", "reference:ppo-bid:one", "reference:ppo-bid:three", "play", "self-play",
                    "players:3", "players:5", "players:6", "bid-accuracy"]
    assert [row.key for row in plan(SuiteConfig("rule")) if row.kind == "play"] == []  # no play= option
    named = {row.key: row.skipped for row in plan(SuiteConfig("ppo:play=rule"))}
    assert "already names its card play" in named["play"]
    four_only = {row.key: row.skipped for row in plan(SuiteConfig("ppo-bid"), agent_players=(4,))}
    assert four_only["players:3"] == "`ppo-bid` plays 4 players" and four_only["rule"] is None


def test_the_markdown_numbers_are_the_jsons(battery):
    out, _, _, data = battery
    lines = (out / eval_suite.MARKDOWN_NAME).read_text().splitlines()
    for row in data["rows"]:
        line = f"| {row['measurement']} | {row['result']} |"
        assert line in lines
        values = [v for f in row["figures"].values() for v in (f["mean"], f["ci95"])]
        allowed = {f"{abs(v):.1f}" for v in values} | {f"{abs(v) * 100:.1f}" for v in values}
        shown = re.findall(r"\d+\.\d", row["result"])
        assert shown and set(shown) <= allowed
        headline = row["figures"].get("diff") or row["figures"]["bid_accuracy"]
        assert f"{abs(headline['mean']):.1f}" in shown or f"{headline['mean'] * 100:.1f}" in shown


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["rule", "--games", "1"], "argument --games: must be at least 2"),
        (["rule", "--reference-games", "0"], "argument --reference-games: must be at least 2"),
        (["rule", "--skip", "rules"], "--skip 'rules': the rows are rule, reference"),
        (["rule", "--players-battery", "3,7"], "--players-battery 7"),
        (["rule", "--players-battery", "three"], "--players-battery 'three'"),
        (["rule", "--reference", "rule,nobody"], "--reference: unknown agent 'nobody'"),
        (["nobody"], "AGENT: unknown agent 'nobody'"),
        (["ppo:missing.npz"], "AGENT: checkpoint missing.npz: no such file"),
        (["rule", "--seed", "x"], "argument --seed"),
        (["rule", "--workers", "0"], "argument --workers: must be at least 1"),
    ],
)
def test_a_bad_option_is_refused_before_any_work(args, message, tmp_path, capsys):
    assert main(["eval-suite", *args, "--out", str(tmp_path / "suite")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wizard: error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "suite").exists()


def test_a_folder_another_run_writes_is_refused(tmp_path, capsys):
    out = tmp_path / "suite"
    out.mkdir()
    (out / ".lock").write_text(str(os.getppid()))  # a live process holds it
    assert main(["eval-suite", "rule", *TINY, "--out", str(out)]) == 2
    assert "is in use by another wizard eval-suite" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == [".lock"]


@pytest.mark.parametrize(("workers", "where"), [("1", "evaluate"), ("2", "figures")])
def test_an_interrupted_battery_writes_nothing_and_frees_its_folder(workers, where, tmp_path, monkeypatch, capsys):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    # in the process that runs the command: in a table with one process, as the first table comes back with workers
    monkeypatch.setattr(eval_suite, where, interrupted)
    assert main(["eval-suite", "rule", *TINY, "--workers", workers, "--out", str(tmp_path / "suite")]) == 130
    assert list((tmp_path / "suite").iterdir()) == []


def test_card_makes_the_model_card_from_the_batterys_json(battery, tmp_path, capsys):
    _, _, _, data = battery
    text = tmp_path / "rule.toml"
    text.write_text('title = "the heuristic"\nwhat = "What it is."\nmade = "By hand."\nbounds = "- None known."\n')
    assert main(["eval-suite", "rule", *TINY, "--out", str(tmp_path / "suite"), "--card", str(text), "--quiet"]) == 0
    assert f"{tmp_path / 'rule.json'}, {tmp_path / 'rule.md'}" in capsys.readouterr().out
    written = json.loads((tmp_path / "rule.json").read_text())
    assert written == json.loads((tmp_path / "suite" / eval_suite.JSON_NAME).read_text())
    assert written["rows"] == [{**row, "wall_seconds": r["wall_seconds"]} for row, r in zip(data["rows"], written["rows"])]
    card = (tmp_path / "rule.md").read_text()
    assert card == cards.make_card(text) and card.startswith("# `rule`: the heuristic\n")
    assert "`wizard eval-suite rule --reference random --games 3 --players-battery 3 --seed 1`" in card


def test_card_with_a_bad_text_is_refused_before_any_game(tmp_path, capsys):
    (tmp_path / "rule.toml").write_text('title = "no more"\n')
    assert main(["eval-suite", "rule", *TINY, "--out", str(tmp_path / "suite"), "--card", str(tmp_path / "rule.toml")]) == 2
    assert "'what' must be Markdown text" in capsys.readouterr().err
    assert not (tmp_path / "suite").exists() and not (tmp_path / "rule.md").exists()
