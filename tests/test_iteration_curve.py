"""``wizard eval-iterations`` and ``training.evaluation.iteration_curve``: each checkpoint of a train-values run against
``rule``, in self-play, head to head against the one before and against ``pimc``, every figure the one a separate
evaluation gives; its files, its verdicts and its one-line errors."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from pathlib import Path
import shutil

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("matplotlib")

from helpers import wizard_output  # noqa: E402
from wizard_env.engine.rules import Rules  # noqa: E402
from wizard_env.engine.simulate import mean_ci  # noqa: E402
from wizard_env.training.evaluation import iteration_curve  # noqa: E402
from wizard_env.training.evaluation.pairing import Figure, pm  # noqa: E402
from wizard_env.training.evaluation.evaluate import evaluate  # noqa: E402
from wizard_env.training.values.train_values import run_training  # noqa: E402
from wizard_env.training.values.values_config import ValuesConfig  # noqa: E402

#: Games of 3 rounds keep every table to a fraction of a second.
RULES = Rules.make(4, rounds=3)
TINY = ValuesConfig(mix=[4], samples=40, games=4, workers=1, epochs=1, eval_deals=2, hidden=[16], margin=2.0)
DEALS, SEED, PIMC, PIMC_DEALS = 3, 5, "pimc:samples=2", 2
OPTIONS = ["--rounds", "3", "--games", str(DEALS), "--seed", str(SEED), "--pimc", PIMC, "--pimc-games", str(PIMC_DEALS)]


def _quietly(*a: object) -> None:
    pass


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two tiny runs: ``first`` (one iteration), and ``second`` started from first's iter-0, two iterations."""
    root = tmp_path_factory.mktemp("runs")
    run_training(TINY, RULES, root / "first", quiet=True, log=_quietly)
    start = str(root / "first" / "checkpoints" / "iter-0.npz")
    run_training(dataclasses.replace(TINY, start=start, iterations=2, seed=1), RULES, root / "second", quiet=True, log=_quietly)
    return root / "first", root / "second"


@pytest.fixture(scope="module")
def curve(runs, tmp_path_factory):
    """The curve of the second run through the command line: its folder, stdout, stderr and JSON."""
    out = tmp_path_factory.mktemp("curve") / "climb"
    code, stdout, stderr = wizard_output(["eval-iterations", str(runs[1]), *OPTIONS, "--out", str(out)])
    assert code == 0, stderr
    return out, stdout, stderr, json.loads((out / iteration_curve.JSON_NAME).read_text())


def _close(figure: dict, mean: float, ci95: float | None) -> None:
    assert figure["mean"] == pytest.approx(mean, abs=1e-9) and figure["ci95"] == pytest.approx(ci95, abs=1e-9)


def test_the_start_checkpoint_is_the_first_row_when_config_json_names_one(runs, curve):
    first, second = runs
    rows = curve[3]["rows"]
    assert [row["label"] for row in rows] == ["start", "iter-0", "iter-1"]
    assert rows[0]["path"] == str(first / "checkpoints" / "iter-0.npz")
    assert rows[2]["spec"] == f"ppo:{second / 'checkpoints' / 'iter-1.npz'}"
    assert [c.label for c in iteration_curve.run_checkpoints(first)] == ["iter-0"]  # no start, no latest.npz


def test_against_rule_and_pimc_are_what_evaluate_gives(curve):
    for row in curve[3]["rows"]:
        for measure, other, seed, deals in (("rule", "rule", SEED, DEALS), ("pimc", PIMC, SEED + 3, PIMC_DEALS)):
            alone = evaluate(RULES, [row["spec"], other, other, other], deals, seed, reference=other).specs[0]
            _close(row["figures"][measure], alone.diff, alone.diff_ci95)


def test_head_to_head_is_what_evaluate_gives_against_three_of_the_previous(curve):
    rows = curve[3]["rows"]
    assert "previous" not in rows[0]["figures"] and rows[0]["verdict"] is None
    for before, row in zip(rows, rows[1:]):
        prev = before["spec"]
        alone = evaluate(RULES, [row["spec"], prev, prev, prev], DEALS, SEED + 2, reference=prev).specs[0]
        _close(row["figures"]["previous"], alone.diff, alone.diff_ci95)


def test_self_play_and_its_change_are_paired_per_deal(curve):
    rows = curve[3]["rows"]
    per_deal = {row["label"]: evaluate(RULES, [row["spec"]] * 4, DEALS, SEED + 1).deal_scores.mean(axis=1) for row in rows}
    rule = evaluate(RULES, ["rule"] * 4, DEALS, SEED + 1).deal_scores.mean(axis=1)
    changes = []
    for before, row in zip([None, *rows], rows):
        _close(row["figures"]["self_play"], *mean_ci(per_deal[row["label"]] - rule))
        if before is not None:
            changes.append(per_deal[row["label"]] - per_deal[before["label"]])
            _close(row["figures"]["self_play_change"], *mean_ci(changes[-1]))
    assert any(not np.allclose(change, 0) for change in changes)  # different networks: not a pairing that is zero anyway


def test_the_files_are_written_and_the_table_shows_the_jsons_numbers(runs, curve):
    out, stdout, stderr, data = curve
    assert sorted(p.name for p in out.iterdir()) == ["climb.json", "climb.md", "climb.png"]  # the lock is gone
    markdown = (out / iteration_curve.MARKDOWN_NAME).read_text()
    assert markdown == iteration_curve.format_markdown(data) and markdown in stdout
    png = (out / iteration_curve.PNG_NAME).read_bytes()
    assert png.startswith(b"\x89PNG") and data["png"]["sha256"] == hashlib.sha256(png).hexdigest()
    table = [line for line in markdown.splitlines() if line.startswith("| ") and "---" not in line]
    for row, line in zip(data["rows"], table[1:], strict=True):
        cells = [c.strip() for c in line.strip("|").split("|")]
        shown = [pm(Figure(f["mean"], f["ci95"])) if (f := row["figures"].get(m)) else "-" for m in iteration_curve.MEASURES
                 if m != "expert"]  # not played: no column
        assert cells == [row["label"], *shown, row["verdict"] or "-"]
    assert (data["deals"], data["seed"], data["pimc"], data["pimc_deals"], data["run"]) == (DEALS, SEED, PIMC, PIMC_DEALS, str(runs[1]))
    assert data["seeds"] == {"rule": SEED, "self_play": SEED + 1, "previous": SEED + 2, "pimc": SEED + 3,
                            "expert": SEED + 4}
    assert data["version"] and data["rules"] == RULES.to_dict() and data["players"] == 4
    # every table once: four rule, then per row rule, self-play, previous (not the first) and pimc
    assert len(data["tables"]) == 1 + 3 * 3 + 2 and all(len(t["deal_scores"]) == t["deals"] for t in data["tables"])
    assert all(t["wall_seconds"] > 0 for t in data["tables"])
    # one line as each table starts and one as it ends
    lines = stderr.splitlines()
    assert len(lines) == 2 * len(data["tables"]) and lines[1].startswith(f"[1/{len(data['tables'])}] four rule: mean score")


@pytest.mark.parametrize(("previous", "change", "expected"), [
    (Figure(5.0, 2.0), Figure(-1.0, 1.5), "climbs"),  # above 0 head to head; self-play not significantly below
    (Figure(5.0, 2.0), Figure(-3.0, 1.5), "falls back"),  # self-play significantly below 0
    (Figure(1.0, 2.0), Figure(4.0, 1.0), "level"),  # head to head not significant
    (Figure(-5.0, 2.0), Figure(4.0, 1.0), "falls back"),  # head to head significantly below 0
    (None, None, None),  # the first row
])
def test_the_verdict_follows_the_documented_rule(previous, change, expected):
    assert iteration_curve.verdict(previous, change) == expected


def test_listed_checkpoints_keep_their_order_and_quiet_prints_no_progress(runs, tmp_path):
    second = runs[1] / "checkpoints"
    listed = f"{second / 'iter-1.npz'},{second / 'iter-0.npz'}"
    code, stdout, stderr = wizard_output(["eval-iterations", "--checkpoints", listed, "--rounds", "3", "--games", "2", "--quiet",
                                  "--out", str(tmp_path / "out")])
    assert code == 0 and stderr == ""
    data = json.loads((tmp_path / "out" / iteration_curve.JSON_NAME).read_text())
    assert [row["label"] for row in data["rows"]] == ["iter-1.npz", "iter-0.npz"] and data["run"] is None
    assert "pimc" not in data["rows"][1]["figures"] and "vs three `pimc" not in stdout


def test_listed_checkpoints_take_shipped_networks_by_name_and_refuse_one_file_twice(runs):
    from wizard_env.agents.ppo_agent import SHIPPED
    file = str(runs[1] / "checkpoints" / "iter-0.npz")
    listed = iteration_curve.listed_checkpoints(["ppo-v7", " ppo-v8", file])
    assert [(c.label, c.path) for c in listed] == [("ppo-v7", str(SHIPPED["ppo-v7"])), ("ppo-v8", str(SHIPPED["ppo-v8"])),
                                                   ("iter-0.npz", file)]
    assert all(Path(c.path).is_file() for c in listed)
    newest = next(name for name, path in SHIPPED.items() if name != "ppo" and path == SHIPPED["ppo"])  # ppo by its version
    with pytest.raises(ValueError, match=re.escape(f"--checkpoints names {newest} twice (ppo is the same file, {SHIPPED[newest]})")):
        iteration_curve.listed_checkpoints(["ppo", "ppo-v8", newest])
    with pytest.raises(ValueError, match=re.escape("--checkpoints names ppo-v8 twice (")):
        iteration_curve.listed_checkpoints([str(SHIPPED["ppo-v8"]), "ppo-v8"])
    with pytest.raises(ValueError, match="names ppo-v8 twice: a checkpoint against itself"):
        iteration_curve.listed_checkpoints(["ppo-v8", "ppo-v8"])


def _damaged_run(runs, tmp_path) -> str:
    run = tmp_path / "damaged"
    shutil.copytree(runs[1], run)
    (run / "checkpoints" / "iter-1.npz").write_bytes(b"not a checkpoint")
    return str(run)


def _bad_config(runs, tmp_path) -> str:
    run = tmp_path / "bad-config"
    shutil.copytree(runs[1], run)
    (run / "config.json").write_text('{"train": {"start": 7}}')
    return str(run)


def _empty(runs, tmp_path) -> str:
    (tmp_path / "empty" / "checkpoints").mkdir(parents=True)
    shutil.copy(runs[1] / "checkpoints" / "latest.npz", tmp_path / "empty" / "checkpoints")
    return str(tmp_path / "empty")


@pytest.mark.parametrize(("make_args", "message"), [
    (lambda runs, tmp: [str(tmp / "nowhere")], r"RUN .*nowhere: no such folder"),
    (lambda runs, tmp: [str(runs[1] / "config.json")], r"RUN .*config.json: not a folder"),
    (lambda runs, tmp: [_empty(runs, tmp)], r"RUN .*empty: no checkpoints/iter-K.npz in it"),
    (lambda runs, tmp: [_damaged_run(runs, tmp)], r"checkpoint .*damaged/checkpoints/iter-1.npz: not a wizard checkpoint"),
    (lambda runs, tmp: [_bad_config(runs, tmp)], r"bad-config/config.json is damaged \(its 'train.start' is 7\)"),
    (lambda runs, tmp: [str(runs[1]), "--games", "0"], r"argument --games: must be at least 2 and at most 1000000000000, not 0"),
    (lambda runs, tmp: [str(runs[1]), "--games", "1"], r"argument --games: must be at least 2 and at most 1000000000000, not 1"),
    (lambda runs, tmp: [str(runs[1]), "--pimc-games", "1"], r"--pimc-games must be 0 \(not played\) or at least 2, not 1"),
    (lambda runs, tmp: [str(runs[1]), "--pimc-games", "2", "--pimc", "nobody"], r"--pimc: unknown agent 'nobody'"),
    (lambda runs, tmp: [str(runs[1]), "--pimc", PIMC], r"--pimc applies with --pimc-games M only"),
    (lambda runs, tmp: [str(runs[1]), "--players", "3"], r"iter-0.npz was trained for 4 players, not the 3 .*--players"),
    (lambda runs, tmp: [], r"give a wizard train-values run folder \(RUN\) or --checkpoints"),
    (lambda runs, tmp: [str(runs[1]), "--checkpoints", "a.npz"], r"--checkpoints: not allowed with argument RUN"),
    (lambda runs, tmp: ["--checkpoints", "a.npz,b.npz,a.npz"], r"--checkpoints names a.npz twice"),
    (lambda runs, tmp: ["--checkpoints", f"{runs[1]}/checkpoints/iter-0.npz,{tmp}/gone.npz"], r"gone.npz: no such file"),
])
def test_a_bad_run_or_option_is_one_line_naming_it_before_any_work(runs, tmp_path, make_args, message):
    out = tmp_path / "out"
    code, stdout, stderr = wizard_output(["eval-iterations", *make_args(runs, tmp_path), "--rounds", "3", "--out", str(out)])
    assert code == 2 and stdout == "" and stderr.count("\n") == 1 and stderr.startswith("wizard: error: ")
    assert re.search(message, stderr), stderr
    assert not out.exists()


def test_a_folder_another_run_writes_is_refused(runs, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / ".lock").write_text("1")  # pid 1 is alive
    code, _, stderr = wizard_output(["eval-iterations", str(runs[1]), "--rounds", "3", "--games", "2", "--out", str(out)])
    assert code == 2 and "in use by another wizard eval-iterations" in stderr and sorted(out.iterdir()) == [out / ".lock"]
