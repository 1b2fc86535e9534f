"""benchmarks/baseline_rows.py: one command trains a baseline, evaluates it twice and prints its docs row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from benchmarks.baseline_rows import main  # noqa: E402

TINY = ["--setting", "wizard-3p-5r", "--algos", "dmc", "--seeds", "3", "--games", "2", "--eval-seed", "4"]


def test_a_row_is_trained_evaluated_and_printed_once_and_read_back_after(tmp_path: Path, capfd):
    runs = tmp_path / "runs"
    assert main([*TINY, "--runs", str(runs), "--", "--num-envs", "4", "--eval-deals", "2", "--steps", "200"]) == 0
    out = runs / "dmc-3p5r-3"
    rows = capfd.readouterr().out.splitlines()
    assert rows[0].startswith("| agent | command |") and len(rows) == 3
    rule, random = (json.loads((out / sub / "eval.json").read_text()) for sub in ("eval", "eval-random"))
    assert (rule["deals"], rule["seed"], random["reference"]) == (2, 4, "random")
    assert random["agents"] == [f"baseline:{out}", "random", "random"]
    r, q = rule["specs"][0], random["specs"][0]
    done = json.loads((out / "config.json").read_text())["done"]
    command = f"wizard baseline dmc --setting wizard-3p-5r --seed 3 --minutes 15 --steps 20000000 --out {out} " \
              "--num-envs 4 --eval-deals 2 --steps 200"
    assert rows[2] == (f"| dmc, seed 3 | `{command}` | {done['decisions']:,} | {r['mean_score']:.1f} ± {r['ci95']:.1f} | "
                       f"{r['diff']:+.1f} ± {r['diff_ci95']:.1f} | {100 * r['bid_accuracy']:.1f}% | "
                       f"{q['diff']:+.1f} ± {q['diff_ci95']:.1f} |")

    stamps = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    assert main([*TINY, "--runs", str(runs)]) == 0  # neither trained nor evaluated again
    again = capfd.readouterr()
    assert again.out.splitlines()[2].split("|")[3:] == rows[2].split("|")[3:] and "evaluated as it is" in again.err
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == stamps

    config = json.loads((out / "config.json").read_text())  # as Ctrl-C leaves it: the run goes on, then is read back
    (out / "config.json").write_text(json.dumps({**config, "done": {**config["done"], "stopped_by": "interrupt"}}))
    assert main([*TINY, "--runs", str(runs), "--", "--num-envs", "4", "--eval-deals", "2", "--steps", "200"]) == 0
    assert "--resume --quiet" in capfd.readouterr().err
    assert json.loads((out / "config.json").read_text())["done"]["stopped_by"] == "steps"


def test_a_failing_command_stops_the_script_with_its_status_and_no_rows(tmp_path: Path, capfd):
    with pytest.raises(SystemExit) as stopped:
        main([*TINY, "--runs", str(tmp_path), "--", "--num-envs", "0"])
    assert stopped.value.code == 2 and capfd.readouterr().out == ""
    assert not (tmp_path / "dmc-3p5r-3" / "eval").exists()
