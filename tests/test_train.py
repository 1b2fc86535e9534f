"""``wizard train``: a smoke run writes a loadable checkpoint and resumes; warm-start demonstrations."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pytest

from helpers import with_options
from wizard_env.agents.ppo_agent import PPOAgent, load_checkpoint, save_checkpoint
from wizard_env.training.ppo.warm_start import collect
from wizard_env.agents.rule_agent import RuleAgent
from wizard_env.engine.actions import NUM_ACTIONS, Phase
from wizard_env.cli.main import main
from wizard_env.engine.observation import OBS_VERSION, SLICES
from wizard_env.engine.rules import Rules

pytest.importorskip("torch", reason="needs torch (the train extra), not installed")

TINY = ["--players", "4", "--rounds", "3", "--num-envs", "8", "--n-steps", "8", "--batch-size", "32",
        "--bc-games", "4", "--bc-epochs", "1", "--eval-deals", "2", "--eval-every", "64",
        "--checkpoint-every", "64", "--snapshot-every", "64", "--quiet"]


def curve_steps(out: Path) -> list[int]:
    with open(out / "curve.csv", newline="") as f:
        return [int(row["timesteps"]) for row in csv.DictReader(f)]


def test_a_smoke_run_writes_a_loadable_checkpoint_and_resumes(tmp_path: Path, capsys):
    out = tmp_path / "run"
    assert main(["train", *TINY, "--learn", "both", "--timesteps", "128", "--out", str(out)]) == 0
    config, _ = load_checkpoint(out / "checkpoints" / "latest.npz")
    first = config["num_timesteps"]
    assert first >= 128 and config["learn"] == "both" and config["rules"]["rounds"] == [1, 2, 3]
    assert (out / "curve.png").stat().st_size > 0 and (out / "config.json").is_file()
    assert any((out / "tb").rglob("events.out.tfevents*"))
    assert curve_steps(out)[0] == 0 and curve_steps(out)[-1] == first
    assert "trained" in capsys.readouterr().out

    assert main(["train", *TINY, "--learn", "both", "--timesteps", "256", "--out", str(out), "--resume"]) == 0
    config, _ = load_checkpoint(out / "checkpoints" / "latest.npz")
    assert config["num_timesteps"] >= 256 > first
    assert curve_steps(out)[-1] == config["num_timesteps"] and len(curve_steps(out)) > 2
    agent = PPOAgent.load(out / "checkpoints" / "latest.npz")
    assert agent.learn == "both" and agent.advice and config["obs_version"] == OBS_VERSION
    assert config["train"]["mix"] == [3, 4, 5, 6]  # the default: one network for every player count


def test_resuming_a_checkpoint_of_another_observation_version_names_both(tmp_path: Path, capsys):
    out = tmp_path / "run"
    assert main(["train", *TINY, "--mix", "4", "--timesteps", "64", "--out", str(out)]) == 0
    latest = out / "checkpoints" / "latest.npz"
    config, weights = load_checkpoint(latest)
    save_checkpoint(latest, {k: v for k, v in config.items() if k != "obs_version"}, weights)  # as before v1
    before = latest.read_bytes()
    assert main(["train", *TINY, "--mix", "4", "--timesteps", "128", "--out", str(out), "--resume"]) == 2
    err = capsys.readouterr().err
    assert "observation version 0" in err and f"version {OBS_VERSION}" in err and "Traceback" not in err
    assert latest.read_bytes() == before


def test_train_refuses_to_overwrite_a_run_or_resume_nothing(tmp_path: Path, capsys):
    out = tmp_path / "none"
    assert main(["train", *TINY, "--timesteps", "64", "--out", str(out), "--resume"]) == 2
    assert f"--resume: no run in {out}" in capsys.readouterr().err
    assert main(["train", *TINY, "--timesteps", "64", "--out", str(out), "--pool", "rule=1,self"]) == 2
    assert "--pool" in capsys.readouterr().err
    for mix in ("2,4", "4,4", "four"):
        assert main(["train", *TINY, "--timesteps", "64", "--out", str(out), "--mix", mix]) == 2
        assert "--mix" in capsys.readouterr().err
    assert not out.exists()
    other = tmp_path / "rllib-run"  # a run of the other backend: config.json and latest.npz at the top, no checkpoints/latest.npz
    other.mkdir()
    (other / "config.json").write_text('{"train": {"backend": "rllib"}}')
    assert main(["train", *TINY, "--timesteps", "64", "--out", str(other)]) == 2
    assert "already holds a run" in capsys.readouterr().err
    assert sorted(p.name for p in other.iterdir()) == ["config.json"]


def test_warm_start_demonstrations_are_rule_agent_decisions_with_round_scores():
    rules = Rules.make(4, [1, 2])
    demos = collect(rules, 6, seed=0, learn="bid", episode="round")
    phase = demos.observations[:, SLICES["phase"]].argmax(axis=1)
    assert set(phase.tolist()) <= {int(Phase.TRUMP), int(Phase.BID)}
    assert len(demos.actions) >= 6 * 2 * 4  # every seat bids in each of the two rounds
    assert demos.masks[np.arange(len(demos.actions)), demos.actions].all()
    # a bid's return is that round's score: +20 + 10 per trick when met, else -10 per trick off
    bids = demos.actions[phase == int(Phase.BID)]
    returns = demos.returns[phase == int(Phase.BID)]
    met = returns > 0
    assert np.array_equal(returns[met], 20 + 10 * bids[met])
    assert np.all(returns[~met] % 10 == 0) and np.all(returns[~met] < 0)


def test_a_refused_resume_changes_nothing_and_a_live_run_locks_its_folder(tmp_path: Path, capsys):
    import os
    import subprocess

    out = tmp_path / "run"
    assert main(["train", *TINY, "--mix", "4", "--timesteps", "64", "--out", str(out)]) == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    other_rules = [a if a != "3" else "2" for a in TINY]  # --rounds 2 instead of 3
    assert main(["train", *other_rules, "--mix", "4", "--timesteps", "128", "--out", str(out), "--resume"]) == 2
    assert "--resume" in capsys.readouterr().err
    assert main(["train", *TINY, "--mix", "3,4", "--timesteps", "128", "--out", str(out), "--resume"]) == 2
    assert "--mix" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before

    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        (out / ".lock").write_text(str(sleeper.pid))  # a live process holds the folder
        assert main(["train", *TINY, "--mix", "4", "--timesteps", "128", "--out", str(out), "--resume"]) == 2
        assert f"pid {sleeper.pid}" in capsys.readouterr().err
    finally:
        sleeper.kill()
        sleeper.wait()
    assert main(["train", *TINY, "--mix", "4", "--timesteps", "128", "--out", str(out), "--resume"]) == 0  # stale lock
    assert not (out / ".lock").exists() and os.path.isfile(out / "checkpoints" / "latest.npz")


def test_init_from_starts_a_new_run_from_another_runs_weights(tmp_path: Path, capsys):
    first = tmp_path / "first"
    assert main(["train", *TINY, "--mix", "4", "--timesteps", "128", "--out", str(first)]) == 0
    start, start_weights = load_checkpoint(first / "checkpoints" / "latest.npz")
    assert start["num_timesteps"] == 128
    second = tmp_path / "second"
    assert main(["train", *with_options(TINY, "--checkpoint-every", "100000", "--snapshot-every", "100000", "--eval-every",
                                        "100000"), "--mix", "4", "--timesteps", "64", "--out", str(second),
                 "--init-from", str(first / "checkpoints" / "latest.npz"), "--learning-rate", "1e-12"]) == 0
    config, weights = load_checkpoint(second / "checkpoints" / "latest.npz")
    assert config["num_timesteps"] == 64  # its own count, from zero
    # a vanishing learning rate keeps the weights where the other run left them (no warm start in between)
    assert all(np.allclose(weights[k], start_weights[k], atol=1e-6) for k in start_weights)
    assert main(["train", *TINY, "--mix", "4", "--timesteps", "64", "--out", str(tmp_path / "x"),
                 "--init-from", str(tmp_path / "nowhere.npz")]) == 2
    assert "nowhere.npz" in capsys.readouterr().err


def test_init_from_a_bid_run_clones_that_agent_before_learning_both(tmp_path: Path, capsys):
    bids = tmp_path / "bids"
    assert main(["train", *TINY, "--mix", "4", "--learn", "bid", "--timesteps", "64", "--out", str(bids)]) == 0
    both = tmp_path / "both"
    capsys.readouterr()
    assert main(["train", *TINY, "--mix", "4", "--learn", "both", "--timesteps", "64", "--out", str(both),
                 "--init-from", str(bids / "checkpoints" / "latest.npz")]) == 0
    assert load_checkpoint(both / "checkpoints" / "latest.npz")[0]["learn"] == "both"


def test_demonstrations_of_a_teacher_keep_rule_agents_advice_apart():
    from wizard_env.training.ppo.warm_start import collect_mix

    class Highest(RuleAgent):
        """Always the highest legal action: a teacher unlike RuleAgent."""

        def act_batch(self, observations, action_masks):
            return np.asarray(action_masks).shape[1] - 1 - np.asarray(action_masks)[:, ::-1].argmax(axis=1)

    rules = [Rules.make(4, [2, 3])]
    taught = collect_mix(rules, 4, 0, "both", "round", advice=True, teacher=Highest())
    plain = collect_mix(rules, 4, 0, "both", "round", advice=True)
    assert taught.masks[np.arange(len(taught.actions)), taught.actions].all()
    hint = taught.observations[:, -NUM_ACTIONS:].argmax(axis=1)
    assert np.array_equal(hint, taught.advice) and not np.array_equal(taught.actions, taught.advice)
    assert np.array_equal(plain.actions, plain.advice)  # RuleAgent teaching: the advice is the action


def test_help_gives_each_options_meaning_from_the_config_and_its_default(capsys):
    from wizard_env.cli.common import field_docs
    from wizard_env.training.ppo.train import TrainConfig

    assert main(["train", "--help"]) == 0
    out = capsys.readouterr().out
    text = " ".join(out.split())  # argparse wraps the lines
    docs = field_docs(TrainConfig)
    assert {"timesteps", "max_minutes", "bc_games", "clip_range", "bc_epochs", "pool"} <= docs.keys()
    flags = set(re.findall(r"^  --([\w-]+)", out, re.M))
    options = [name for name in docs if name.replace("_", "-") in flags and name != "init_from"]  # its own text
    assert len(options) >= 25
    for name in options:
        assert " ".join(docs[name].split()) in text, name
    assert "(0: 200, or 2,000 for --learn bid --no-advice) (default 0)" in text
    assert "rounded up to whole rollouts (default 3,000,000)" in text


def summary_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("trained "))


def test_the_summary_says_timesteps_round_up_to_whole_rollouts(tmp_path: Path, capsys):
    assert main(["train", *TINY, "--mix", "4", "--timesteps", "1", "--out", str(tmp_path / "run")]) == 0
    first = summary_line(capsys.readouterr().out)
    assert first.startswith("trained 64 of 1 steps") and "whole rollouts of 64 steps" in first


def test_the_time_cap_keeps_whole_rollouts_and_says_so(tmp_path: Path, capsys):
    out = tmp_path / "run"
    assert main(["train", *TINY, "--mix", "4", "--timesteps", "128", "--max-minutes", "0", "--out", str(out)]) == 0
    first = summary_line(capsys.readouterr().out)
    assert first.startswith("trained 0 of 128 steps") and "stopped by --max-minutes 0" in first
    assert load_checkpoint(out / "checkpoints" / "latest.npz")[0]["num_timesteps"] == 0  # no unfinished rollout counted
    assert curve_steps(out) == [0]  # the final evaluation replaces the one at step 0


def test_progress_goes_to_a_log_without_carriage_returns(tmp_path: Path, capsys):
    loud = [a for a in TINY if a != "--quiet"]
    assert main(["train", *loud, "--mix", "4", "--timesteps", "128", "--out", str(tmp_path / "run")]) == 0
    captured = capsys.readouterr()
    assert "\r" not in captured.err + captured.out
    assert "warm start" in captured.out and "step" in captured.out  # the progress lines are there


def test_a_curve_points_policy_is_the_one_trained_on_the_steps_in_its_label(tmp_path: Path, monkeypatch):
    from sb3_contrib import MaskablePPO

    from wizard_env.training.ppo.train import Trainer

    updates, points = [0], []
    update = MaskablePPO.train

    def counted_update(model):
        updates[0] += 1
        update(model)

    evaluate = Trainer.evaluate

    def labelled_evaluate(trainer):
        points.append((trainer.model.num_timesteps, updates[0]))
        return evaluate(trainer)

    monkeypatch.setattr(MaskablePPO, "train", counted_update)
    monkeypatch.setattr(Trainer, "evaluate", labelled_evaluate)
    assert main(["train", *TINY, "--mix", "4", "--timesteps", "192", "--out", str(tmp_path / "run")]) == 0
    rollout = 8 * 8  # --num-envs x --n-steps
    assert [steps for steps, _ in points] == [0, 64, 128, 192]
    assert all(done == steps // rollout for steps, done in points)  # label N: N / rollout updates made


def test_resume_removes_the_temporary_files_a_killed_run_left(tmp_path: Path, capsys):
    out = tmp_path / "run"
    assert main(["train", *TINY, "--mix", "4", "--timesteps", "64", "--out", str(out)]) == 0
    stale = [out / ".curve.csv.4242.0123abcd.tmp", out / "checkpoints" / ".latest.npz.4242.deadbeef.tmp",
             out / "checkpoints" / "latest.npz.k2_x9q7z.tmp"]  # the last as the mkstemp writer named them
    kept = [out / "notes.tmp", out / ".lock.4242.tmp"]  # not a writer's temporary file
    for path in stale + kept:
        path.write_bytes(b"half")
    assert main(["train", *TINY, "--mix", "4", "--timesteps", "128", "--out", str(out), "--resume"]) == 0
    assert [p for p in stale if p.exists()] == [] and all(p.exists() for p in kept)
    assert f"removed {stale[0]}" in capsys.readouterr().out


def test_the_time_cap_covers_the_warm_start_and_says_where_the_time_went(tmp_path: Path, capsys):
    loud = [a for a in TINY if a != "--quiet"]
    assert main(["train", *loud, "--mix", "4", "--timesteps", "128", "--max-minutes", "0", "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    warm = next(line for line in out.splitlines() if line.startswith("warm start: clone"))
    assert "cloned nothing" in warm and "the time budget cut short its games: a warm start takes at most 50%" in warm
    assert "no PPO step was trained" in out and "--max-minutes 0 (0 s) went to: warm start" in out
    assert len([line for line in out.splitlines() if line.startswith("step ")]) == 1  # step 0 evaluated once, said once


def test_a_stopped_warm_start_keeps_only_decisions_of_rounds_that_ended():
    from wizard_env.training.ppo.warm_start import collect_mix

    rules = [Rules.make(4, [1, 2, 3])]
    whole = collect_mix(rules, 4, 0, "both", "round", advice=True)
    calls = [0]

    def stop() -> bool:  # ends the games after a few steps, in the middle of a round
        calls[0] += 1
        return calls[0] > 12

    part = collect_mix(rules, 4, 0, "both", "round", advice=True, stop=stop)
    assert 0 < len(part.actions) < len(whole.actions)
    rows = {(o.tobytes(), int(a), float(r)) for o, a, r in zip(whole.observations, whole.actions, whole.returns)}
    assert all((o.tobytes(), int(a), float(r)) in rows for o, a, r in zip(part.observations, part.actions, part.returns))


def test_a_phase_with_a_time_budget_shows_the_share_of_whichever_budget_binds(monkeypatch):
    from wizard_env.training import progress as progress_module

    lines: list[str] = []
    clock = [0.0]
    monkeypatch.setattr(progress_module, "LINE_EVERY", 0.0)
    bar = progress_module.Progress("dmc", 1000, "batch", False, lines.append, budget=60.0, elapsed=lambda: clock[0])
    clock[0] = 30.0
    bar.to(100)  # 10% of the steps, half the time
    assert lines[-1].startswith("dmc: 50% (100 of 1,000 batches,")
    clock[0] = 61.0
    bar.to(280)
    bar.finish("--minutes 1")
    assert lines[-1].startswith("dmc: 100% (280 of 1,000 batches,") and lines[-1].endswith("ended by --minutes 1")


def test_a_checkpoint_records_the_checkpoint_it_started_from_relative_to_its_run_folder(tmp_path: Path, capsys):
    import json

    first = (tmp_path / "first").resolve()
    assert main(["train", *TINY, "--mix", "4", "--timesteps", "64", "--out", str(first)]) == 0
    out = tmp_path / "second"
    assert main(["train", *TINY, "--mix", "4", "--timesteps", "64", "--out", str(out),
                 "--init-from", str(first / "checkpoints" / "latest.npz")]) == 0
    config, _ = load_checkpoint(out / "checkpoints" / "latest.npz")
    assert config["train"]["init_from"] == "../first/checkpoints/latest.npz"
    assert str(tmp_path.resolve()) not in json.dumps(config)
