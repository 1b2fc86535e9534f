"""`wizard bench` runs every measurement, prints the table and writes JSON (no timing is asserted)."""

from __future__ import annotations

import json
from importlib.util import find_spec

import numpy as np
import pytest

from wizard_env.cli.bench import parse_sizes
from wizard_env.tools.bench import Picker, rate, table
from wizard_env.cli.main import main


def test_bench_measures_every_engine_and_writes_json(tmp_path, capsys):
    out = tmp_path / "sub" / "bench.json"
    assert main(["bench", "--seconds", "0.05", "--sizes", "1,3", "--vec-envs", "3", "--players", "3", "--json", str(out)]) == 0
    printed, err = capsys.readouterr()
    results = json.loads(out.read_text())
    assert results["num_players"] == 3 and results["aec_env"] > 0
    assert [entry["batch_size"] for entry in results["batch"]] == [1, 3]
    assert all(entry["decisions_per_s"] > 0 and 0 < entry["state_bytes_per_game"] <= 2048 for entry in results["batch"])
    if find_spec("stable_baselines3") is not None:
        assert results["vec_env"]["num_envs"] == 3 and results["vec_env"]["batched"] > 0 and results["vec_env"]["dummy"] > 0
    else:  # without the train extra (Pythons other than torch's): the VecEnvs are left out, saying so
        assert "vec_env" not in results and "skipping the VecEnvs: stable-baselines3 is not installed" in err
    assert printed.startswith(table(results).splitlines()[0]) and "batched engine, B = 3" in printed
    assert [p.name for p in out.parent.iterdir()] == ["bench.json"]  # no temporary file left behind


def test_the_table_says_when_openspiel_is_missing():
    results = {"num_players": 4, "seconds": 1, "seed": 0, "machine": {"python": "3", "numpy": "2", "cpus": 2},
               "aec_env": 10.0, "openspiel_tensor": None, "openspiel_no_observation": None,
               "batch": [{"batch_size": 2, "decisions_per_s": 20.0, "state_bytes_per_game": 100.0}]}
    text = table(results)
    assert "pip install -c constraints.txt -e '.[bench]'" in text and "OpenSpiel oh_hell" not in text


@pytest.mark.parametrize(
    "args, message",
    [(["--seconds", "0"], "--seconds"), (["--sizes", "1,x"], "--sizes"), (["--sizes", "0"], "--sizes"),
     (["--vec-envs", "-1"], "--vec-envs"), (["--rounds", "3"], "standard rules"), (["--players", "7"], "players")],
)
def test_bad_bench_options_give_one_error_line(args, message, capsys):
    assert main(["bench", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wizard: error:") and message in err and err.count("\n") == 1


def test_sizes_parse():
    assert parse_sizes("1,64, 1024") == [1, 64, 1024]


def test_a_tiny_duration_still_measures_at_least_one_step():
    assert rate(lambda: 7, 1e-300, warmup=0) > 0  # it reported 0/s before


def test_the_picker_draws_each_index_equally_often_from_its_seed():
    picker, again = Picker(7, block=5), Picker(7, block=5)
    draws = np.array([picker(6) for _ in range(60_000)])  # many blocks
    assert draws.tolist()[:20] == [again(6) for _ in range(20)]
    counts = np.bincount(draws, minlength=6)
    assert draws.min() == 0 and draws.max() == 5
    assert np.all(np.abs(counts / len(draws) - 1 / 6) < 0.01), counts
