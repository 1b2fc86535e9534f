"""``wizard train`` under a hostile user: Ctrl-C in any phase, resuming any stopped run, progress a user can see,
options that would not fit in memory, and clocks that carry across resumes."""

from __future__ import annotations

import csv
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from helpers import with_options
from wizard_env.agents.ppo_agent import load_checkpoint
from wizard_env.cli.main import main
from wizard_env.engine.rules import Rules
from wizard_env.training import progress
from wizard_env.training.ppo import warm_start

pytest.importorskip("torch", reason="needs torch (the train extra), not installed")

TINY = ["--players", "4", "--rounds", "3", "--mix", "4", "--num-envs", "8", "--n-steps", "8", "--batch-size", "32",
        "--bc-games", "4", "--bc-epochs", "1", "--eval-deals", "2", "--eval-every", "64", "--checkpoint-every", "64",
        "--snapshot-every", "64"]


def tiny(*changes: str) -> list[str]:
    """TINY with the options of ``changes`` (option, value pairs) given instead of its own: an option goes once."""
    return with_options(TINY, *changes)


def curve(out: Path) -> list[dict]:
    with open(out / "curve.csv", newline="") as f:
        return list(csv.DictReader(f))


def interrupt_at(out: Path, line: str, args: list[str]) -> tuple[int, float, str]:
    """Start ``wizard train`` with SIGINT ignored (as a shell starts ``wizard train ... &`` in a script), send it
    SIGINT once it prints ``line``; its exit status, the seconds from SIGINT to exit, and its output."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "wizard_env", "train", *args, "--out", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(text) for text in proc.stdout], daemon=True).start()
    seen, deadline = [], time.monotonic() + 120
    try:
        while not seen or line not in seen[-1]:
            try:
                seen.append(lines.get(timeout=max(deadline - time.monotonic(), 0.01)))
            except queue.Empty:
                pytest.fail(f"no {line!r} within 120 s: {''.join(seen)}")
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running 60 s after SIGINT: {''.join(seen)}")
        seconds = time.monotonic() - sent
        time.sleep(0.5)  # the reader takes the last lines
        while not lines.empty():
            seen.append(lines.get())
        return proc.returncode, seconds, "".join(seen)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_ctrl_c_in_the_warm_start_stops_at_once_and_resume_starts_the_run_again(tmp_path: Path, capsys):
    out = tmp_path / "run"
    long = tiny("--bc-games", "40", "--timesteps", "1000000", "--checkpoint-every", "1000000")
    status, seconds, output = interrupt_at(out, "warm start: playing", long)
    assert status == 130 and seconds < 30, output
    assert "interrupted" in output and "Traceback" not in output
    assert not (out / "checkpoints" / "latest.npz").exists()  # stopped before its first checkpoint
    assert main(["train", *TINY, "--timesteps", "64", "--out", str(out)]) == 2  # a run is there: --resume it
    assert "pass --resume" in capsys.readouterr().err
    assert main(["train", *TINY, "--timesteps", "64", "--out", str(out), "--resume", "--quiet"]) == 0
    assert "from the beginning" in capsys.readouterr().out
    assert load_checkpoint(out / "checkpoints" / "latest.npz")[0]["num_timesteps"] >= 64


def test_ctrl_c_in_ppo_stops_at_once_and_the_resumed_run_keeps_its_clock(tmp_path: Path, capsys):
    out = tmp_path / "run"
    status, seconds, output = interrupt_at(out, "step       128", [*TINY, "--timesteps", "1000000"])
    assert status == 130 and seconds < 30, output
    config, _ = load_checkpoint(out / "checkpoints" / "latest.npz")
    saved_steps, saved_wall = config["num_timesteps"], config["wall_s"]
    assert saved_steps >= 64 and saved_wall > 0
    assert main(["train", *TINY, "--timesteps", str(saved_steps + 128), "--out", str(out), "--resume", "--quiet"]) == 0
    rows = curve(out)
    walls = [float(r["wall_s"]) for r in rows]
    assert walls == sorted(walls)  # the clock goes on across the resume instead of starting again at 0
    assert all(w >= saved_wall for r, w in zip(rows, walls) if int(r["timesteps"]) > saved_steps)
    final, _ = load_checkpoint(out / "checkpoints" / "latest.npz")
    assert final["wall_s"] >= saved_wall and final["num_timesteps"] == saved_steps + 128


def test_the_summary_of_a_resume_past_its_target_says_why(tmp_path: Path, capsys):
    out = tmp_path / "run"
    assert main(["train", *TINY, "--timesteps", "128", "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["train", *TINY, "--timesteps", "64", "--out", str(out), "--resume", "--quiet"]) == 0
    first = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("trained"))
    assert "trained 128 of 64 steps" in first and "had trained 128 steps already" in first


def test_every_long_phase_says_what_it_does_and_how_far_it_is(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setattr(progress, "LINE_EVERY", 0.0)  # a line at every update, as a log gets one now and then
    assert main(["train", *TINY, "--timesteps", "128", "--out", str(tmp_path / "run")]) == 0
    printed = capsys.readouterr()
    text = printed.out
    for line in ("warm start: playing 4 games of RuleAgent", "warm start: games: ", "warm start: cloning: ",
                 "evaluating against 3 RuleAgents", "evaluation: ", "training: PPO from step 0 to 128", "train: "):
        assert line in text, line
    assert text.index("warm start: playing") < text.index("evaluating against") < text.index("training: PPO")
    assert "\r" not in text + printed.err  # no bar frames in a log
    assert main(["train", *TINY, "--timesteps", "128", "--out", str(tmp_path / "quiet"), "--quiet"]) == 0
    quiet = capsys.readouterr().out
    assert "warm start: playing" not in quiet and "evaluation: " not in quiet and "train: " not in quiet


def test_a_warm_start_that_would_not_fit_in_memory_is_refused_before_any_work(tmp_path: Path, capsys):
    out = tmp_path / "run"
    games = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (40 * 1024)  # 260 kB each, not 32 kB as estimated before
    assert main(["train", *tiny("--bc-games", str(games)), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"--bc-games {games:,}" in err and "GiB" in err and "Traceback" not in err
    assert not out.exists()


def test_the_warm_start_memory_estimate_covers_what_it_holds():
    mix = [Rules.make(n, [1, 2, 3]) for n in (3, 5)]
    for learn in ("both", "bid", "play"):
        demos = warm_start.collect_mix(mix, 6, 0, learn, "round", advice=True)
        held = sum(getattr(demos, name).nbytes for name in ("observations", "masks", "actions", "returns", "advice"))
        estimate = 6 * warm_start.bytes_per_game(mix, learn, advice=True)
        assert held <= estimate < 1.5 * held, learn


def test_a_huge_rollout_names_both_options_that_make_it(tmp_path: Path, capsys):
    assert main(["train", *tiny("--n-steps", "1000000000"), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "--n-steps" in err and "GiB" in err


def test_demonstrations_are_the_same_as_a_concatenation_of_their_parts():
    mix = [Rules.make(n, [1, 2]) for n in (3, 4)]
    whole = warm_start.collect_mix(mix, 3, 7, "both", "game", advice=True)
    parts = [warm_start.collect(rules, 3, 7 + 1_000 * i, "both", "game", advice=True) for i, rules in enumerate(mix)]
    for name in ("observations", "masks", "actions", "returns", "advice"):
        assert np.array_equal(getattr(whole, name), np.concatenate([getattr(p, name) for p in parts]))
    hot = whole.observations[:, -len(whole.masks[0]):]
    assert np.array_equal(hot.argmax(axis=1), whole.advice) and np.all(hot.sum(axis=1) == 1)


def test_the_memory_check_compares_with_what_the_system_can_give_now_not_its_physical_memory(monkeypatch):
    from wizard_env.util import checks

    have = checks.available_memory()
    assert have is not None and 0 < have[0] <= have[1]
    monkeypatch.setattr(checks, "available_memory", lambda: (2**30, 64 * 2**30))  # a loaded machine: 1 of 64 GiB free
    checks.check_memory("--bc-games", 100, 2**20)  # 100 MiB fits
    with pytest.raises(ValueError, match=r"^--bc-games 2,000 would need about 2.0 GiB of memory; this machine has "
                                         r"1.0 GiB available now \(of 64.0 GiB\), enough for at most about 1,024$"):
        checks.check_memory("--bc-games", 2000, 2**20)
