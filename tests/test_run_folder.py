"""One reading of a run folder for every ``--resume`` (``training/run_folder.py``): a resume of another command's run,
of a run with a file missing or damaged, or of a folder another live process writes, is refused in one line naming
the folder, what is wrong and how to recover, and writes nothing; small real runs of each command."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from wizard_env.agents.ppo_agent import load_checkpoint, save_checkpoint  # noqa: E402
from wizard_env.cli.main import main  # noqa: E402
from wizard_env.engine.rules import Rules  # noqa: E402
from wizard_env.training.baselines import dqn  # noqa: E402
from wizard_env.training.run_folder import TRAIN, VALUES, baseline, read_run  # noqa: E402
from wizard_env.training.values import rollout_values as rv  # noqa: E402
from wizard_env.training.values.train_values import ValuesConfig, run_training  # noqa: E402

TRAIN_TINY = ["--players", "4", "--rounds", "3", "--mix", "4", "--num-envs", "8", "--n-steps", "8", "--batch-size", "32",
              "--bc-games", "4", "--bc-epochs", "1", "--eval-deals", "2", "--eval-every", "64", "--checkpoint-every", "64",
              "--snapshot-every", "64", "--timesteps", "256", "--quiet"]
VALUES_TINY = ValuesConfig(mix=[3], samples=150, games=4, workers=1, epochs=1, eval_deals=2, hidden=[16], margin=2.0)
DQN_TINY = dqn.Args(setting="wizard-3p-5r", steps=300, num_envs=8, learning_starts=64, batch_size=32, buffer_size=512,
                    target_every=5, eval_deals=2, eval_every=10**6, checkpoint_every=128, minutes=5.0)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """A finished tiny run of wizard train (5 evaluations, checkpoints at 64 ... 256 steps), of wizard train-values
    and of wizard baseline dqn, for copies to damage."""
    root = tmp_path_factory.mktemp("runs")
    assert main(["train", *TRAIN_TINY, "--out", str(root / "train")]) == 0
    run_training(VALUES_TINY, Rules.make(3, rounds=3), root / "values", quiet=True, log=lambda line: None, rounds=3)
    dqn.train(DQN_TINY, root / "dqn", quiet=True)
    return {"train": root / "train", "values": root / "values", "dqn": root / "dqn"}


def copy(runs: dict[str, Path], kind: str, tmp_path: Path) -> Path:
    out = tmp_path / kind
    shutil.copytree(runs[kind], out)
    return out


def snapshot(folder: Path) -> dict:
    """Every path under ``folder`` with its kind, its bytes (a file's) and its modification time."""
    return {p.relative_to(folder): (p.is_dir(), p.read_bytes() if p.is_file() else None, p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*"))}


def refused(argv: list[str], out: Path, capsys) -> str:
    """The one line of a command that must exit 2 and leave ``out`` as it was."""
    before = snapshot(out)
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "internal error" not in err and str(out) in err, err
    assert snapshot(out) == before  # nothing written, nothing cut, nothing removed
    return err


def test_each_commands_run_is_told_with_whether_it_finished(runs):
    found = {kind: read_run(path) for kind, path in runs.items()}
    assert {kind: run.command for kind, run in found.items()} == {"train": TRAIN, "values": VALUES, "dqn": baseline("dqn")}
    assert all(run.finished and run.started and not run.problems and run.holder is None for run in found.values())
    assert not read_run(runs["train"].parent / "nothing").started


def test_a_train_resume_of_a_finished_run_whose_latest_checkpoint_is_a_folder_writes_nothing(runs, tmp_path, capsys):
    out = copy(runs, "train", tmp_path)
    latest = out / "checkpoints" / "latest.npz"
    latest.unlink()
    latest.mkdir()
    err = refused(["train", *TRAIN_TINY, "--out", str(out), "--resume"], out, capsys)
    assert str(latest) in err and "a folder" in err and "step-000000256.npz" in err
    assert len((out / "curve.csv").read_text().splitlines()) == 6  # the header and 5 evaluations, not cut
    latest.rmdir()  # the recovery the message gives
    shutil.copy(out / "checkpoints" / "step-000000256.npz", latest)
    assert main(["train", *TRAIN_TINY, "--out", str(out), "--resume"]) == 0
    assert load_checkpoint(latest)[0]["num_timesteps"] == 256 and len((out / "curve.csv").read_text().splitlines()) == 6


def test_a_train_resume_with_checkpoints_but_no_latest_one_does_not_start_again(runs, tmp_path, capsys):
    out = copy(runs, "train", tmp_path)
    (out / "checkpoints" / "latest.npz").unlink()
    err = refused(["train", *TRAIN_TINY, "--out", str(out), "--resume"], out, capsys)
    assert "missing" in err and "copy step-000000256.npz to latest.npz" in err
    (out / "config.json").unlink()  # nothing left that names the command: the files are read as the resume's
    err = refused(["train", *TRAIN_TINY, "--out", str(out), "--resume"], out, capsys)
    assert "copy step-000000256.npz to latest.npz" in err


def test_a_baseline_resume_without_its_state_does_not_mix_two_runs(runs, tmp_path, capsys):
    out = copy(runs, "dqn", tmp_path)
    (out / "state.pt").unlink()
    err = refused(["baseline", "dqn", "--setting", "wizard-3p-5r", "--out", str(out), "--resume", "--steps", "600",
                   "--quiet"], out, capsys)
    assert str(out / "state.pt") in err and "missing" in err and "another --out" in err
    assert "before the first checkpoint" not in err


def test_a_resume_of_another_commands_run_names_that_command(runs, tmp_path, capsys):
    train, values = copy(runs, "train", tmp_path), copy(runs, "values", tmp_path)
    err = refused(["train-values", "--out", str(train), "--resume", "--iterations", "2", "--quiet"], train, capsys)
    assert f"run of wizard train, not of wizard train-values: resume it with wizard train --out {train} --resume" in err
    err = refused(["train", *TRAIN_TINY, "--out", str(values), "--resume"], values, capsys)
    assert f"run of wizard train-values, not of wizard train: resume it with wizard train-values --out {values}" in err
    assert "activation" not in err and "advice" not in err
    err = refused(["baseline", "dqn", "--setting", "wizard-3p-5r", "--out", str(values), "--resume"], values, capsys)
    assert "run of wizard train-values, not of wizard baseline dqn" in err
    err = refused(["train", *TRAIN_TINY, "--out", str(values)], values, capsys)  # a new run there: named as well
    assert "already holds a run of wizard train-values" in err


def test_a_values_resume_with_an_iterations_network_of_another_shape_names_the_file_and_the_shapes(runs, tmp_path, capsys):
    out = copy(runs, "values", tmp_path)
    iteration = out / "checkpoints" / "iter-0.npz"
    config, _ = load_checkpoint(iteration)
    width = rv.input_width(True, True)  # another run's network, which reads RuleAgent's numbers too
    save_checkpoint(iteration, {**config, "features": True}, rv.network_weights(rv.value_network(width, [16])))
    err = refused(["train-values", "--out", str(out), "--resume", "--iterations", "2", "--quiet"], out, capsys)
    assert str(iteration) in err and f"({16}, {width})" in err and f"(16, {rv.input_width(False, True)})" in err
    assert not (out / "data" / "iter-1").exists()


def test_a_resume_of_a_folder_a_live_process_writes_is_refused(runs, tmp_path, capsys):
    out = copy(runs, "values", tmp_path)
    writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        (out / ".lock").write_text(str(writer.pid))  # as run_lock leaves it while that process writes the run
        err = refused(["train-values", "--out", str(out), "--resume", "--iterations", "2", "--quiet"], out, capsys)
        assert f"in use by another process (pid {writer.pid}) writing a run of wizard train-values" in err
        fresh = tmp_path / "fresh"  # a run that took the lock and has written nothing yet
        fresh.mkdir()
        (fresh / ".lock").write_text(str(writer.pid))
        err = refused(["train", *TRAIN_TINY, "--out", str(fresh), "--resume"], fresh, capsys)
        assert f"in use by another process (pid {writer.pid})" in err and "no run" not in err
    finally:
        writer.kill()
        writer.wait()


@pytest.mark.parametrize("config, files, command", [
    ({"algo": "maskable-ppo", "args": {}, "train": {"timesteps": 1}}, [], baseline("maskable-ppo")),
    ({"algo": "values", "args": {}, "train": {"iterations": 1}}, [], baseline("values")),
    ({"train": {"backend": "rllib", "timesteps": 1}}, [], "wizard train --backend rllib"),
    ({"train": {"timesteps": 1, "n_steps": 8}}, [], TRAIN),
    ({"train": {"iterations": 1, "samples": 8}}, [], VALUES),
    (None, ["data"], VALUES),  # config.json lost: the data tell
    (None, ["recipe.json"], "wizard recipe"),
])
def test_the_command_is_told_by_what_its_run_writes(tmp_path, config, files, command):
    if config is not None:
        (tmp_path / "config.json").write_text(json.dumps(config))
    for name in files:
        (tmp_path / name).mkdir()
    assert read_run(tmp_path).command == command


def test_a_damaged_curve_is_named_before_anything_is_written(runs, tmp_path, capsys):
    out = copy(runs, "dqn", tmp_path)
    (out / "curve.csv").write_bytes(np.random.default_rng(0).bytes(300))
    err = refused(["baseline", "dqn", "--setting", "wizard-3p-5r", "--out", str(out), "--resume", "--steps", "600",
                   "--quiet"], out, capsys)
    assert str(out / "curve.csv") in err and "move it away" in err


def test_a_maskable_ppo_run_names_its_command_and_a_resume_keeps_its_settings(tmp_path, capsys):
    out = tmp_path / "ppo"
    start = ["baseline", "maskable-ppo", "--setting", "wizard-3p-5r", "--out", str(out), "--num-envs", "16",
             "--eval-deals", "2", "--checkpoint-every", "128", "--quiet"]
    assert main([*start, "--steps", "128", "--set", "n_steps=8", "--set", "batch_size=64", "--set", "n_epochs=2"]) == 0
    assert read_run(out).command == baseline("maskable-ppo")
    err = refused(["train", *TRAIN_TINY, "--out", str(out), "--resume"], out, capsys)
    assert f"resume it with wizard baseline maskable-ppo --out {out} --resume" in err
    assert main([*start, "--steps", "256", "--resume"]) == 0
    args = json.loads((out / "config.json").read_text())["args"]
    assert (args["n_steps"], args["batch_size"], args["n_epochs"], args["steps"]) == (8, 64, 2, 256)
    assert load_checkpoint(out / "checkpoints" / "latest.npz")[0]["num_timesteps"] == 256
