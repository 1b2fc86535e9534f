"""The from-scratch baselines (``wizard baseline``): each learns on a tiny budget (its weights change), its agent plays
only legal actions as ``baseline:PATH``, the same seed gives the same weights, ``--resume`` continues a run, and the
command refuses what it cannot do in one line."""

from __future__ import annotations

import json
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

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from wizard_env.agents.ppo_agent import PRETRAINED, PPOAgent, load_checkpoint  # noqa: E402
from wizard_env.agents.registry import make_agent  # noqa: E402
from wizard_env.cli.main import main  # noqa: E402
from wizard_env.envs.vec_env import WizardVecEnv  # noqa: E402
from wizard_env.engine.observation import OBS_SIZE  # noqa: E402
from wizard_env.training.baselines import dmc, dqn, maskable_ppo, nfsp, nfsp_self, values  # noqa: E402
from wizard_env.training.baselines.common import RunArgs  # noqa: E402

SETTING = "wizard-3p-5r"
#: A budget of a few seconds per algorithm, and the settings that let it learn within it.
TINY = {
    "dmc": (dmc, dict(steps=600, num_envs=8, queue=64, batch_size=32)),
    "dqn": (dqn, dict(steps=800, num_envs=8, learning_starts=64, batch_size=32, buffer_size=512, target_every=5)),
    "nfsp": (nfsp, dict(steps=800, num_envs=8, learning_starts=64, batch_size=32, buffer_size=512, target_every=5,
                        eta=0.5, sl_starts=32, reservoir_size=256)),
    "nfsp-self": (nfsp_self, dict(steps=800, num_envs=8, learning_starts=64, batch_size=32, buffer_size=512,
                                  target_every=5, eta=0.5, sl_starts=32, reservoir_size=256)),
    "maskable-ppo": (maskable_ppo, dict(steps=256, num_envs=16, n_steps=8, batch_size=64, n_epochs=2)),
    # values evaluates and saves after every iteration: the bookkeeping's cadences are left at their defaults
    "values": (values, dict(steps=300, num_envs=4, samples=150, workers=1, epochs=1, hidden=[16],
                            eval_every=RunArgs.eval_every, checkpoint_every=RunArgs.checkpoint_every)),
}
BOOKKEEPING = dict(setting=SETTING, eval_deals=2, eval_every=10**6, checkpoint_every=128, minutes=5.0)


def tiny_run(algo: str, out: Path, resume: bool = False, **changes) -> dict:
    module, settings = TINY[algo]
    return module.train(module.Args(**{**BOOKKEEPING, **settings, **changes}), out, resume, quiet=True)


def checkpoints(out: Path) -> list[Path]:
    """The run's checkpoints in order (train-values' iter-K of values, which a tiny run has fewer than 10 of)."""
    return sorted((out / "checkpoints").glob("step-*.npz")) or sorted((out / "checkpoints").glob("iter-*.npz"))


def same_weights(a: Path, b: Path) -> bool:
    (_, first), (_, second) = load_checkpoint(a), load_checkpoint(b)
    return first.keys() == second.keys() and all(np.array_equal(first[k], second[k]) for k in first)


@pytest.fixture(scope="module", params=list(TINY))
def trained(request, tmp_path_factory) -> tuple[str, Path, dict]:
    """One tiny run of each algorithm, shared by the tests that only read it."""
    out = tmp_path_factory.mktemp(request.param) / "run"
    return request.param, out, tiny_run(request.param, out)


def test_a_tiny_run_learns_and_writes_its_folder(trained):
    algo, out, done = trained
    steps = TINY[algo][1]["steps"]
    assert done["decisions"] >= steps and done["stopped_by"] == "steps"
    first, last = checkpoints(out)[0], out / "checkpoints" / "latest.npz"
    assert not same_weights(first, last)  # the weights changed
    config, weights = load_checkpoint(last)
    assert config["advice"] is False and config["learn"] == "both" and not config.get("features", False)
    assert weights["mlp_extractor.policy_net.0.weight"].shape[1] == OBS_SIZE  # the observation alone, no advice input
    assert config["rules"]["num_players"] == 3 and config["rules"]["rounds"] == [1, 2, 3, 4, 5]
    rows = (out / "curve.csv").read_text().splitlines()
    assert len(rows) >= 3 and (out / "curve.png").stat().st_size > 0  # a header, the start and the end
    assert rows[-1].split(",")[0] == str(done["decisions"])


def test_the_agent_loads_as_a_spec_and_plays_only_legal_actions(trained):
    _, out, _ = trained
    agent = make_agent(f"baseline:{out}", seed=0)
    assert isinstance(agent, PPOAgent) and agent.name == "baseline"
    env = WizardVecEnv(16, seed=3, setting=SETTING)
    obs = env.reset()
    for _ in range(60):  # several rounds of every game
        masks = env.action_masks()
        actions = agent.act_batch(obs, masks)
        assert masks[np.arange(16), actions].all()
        obs = env.step(actions)[0]


def test_wizard_eval_plays_the_baseline_against_the_settings_opponents(trained, tmp_path, capsys):
    _, out, _ = trained
    assert main(["eval", "--setting", SETTING, "--agents", f"baseline:{out}", "--games", "2", "--quiet",
                 "--out", str(tmp_path / "ev")]) == 0
    assert json.loads((tmp_path / "ev" / "eval.json").read_text())["agents"] == [f"baseline:{out}", "rule", "rule"]


@pytest.mark.parametrize("algo", ["dmc", "dqn", "nfsp", "nfsp-self", "values"])
def test_the_same_seed_gives_the_same_weights_and_another_seed_others(algo: str, tmp_path):
    for name, seed in (("a", 5), ("b", 5), ("c", 6)):
        tiny_run(algo, tmp_path / name, seed=seed)
    latest = [tmp_path / name / "checkpoints" / "latest.npz" for name in "abc"]
    assert same_weights(latest[0], latest[1])
    assert not same_weights(latest[0], latest[2])


def test_the_same_seed_gives_the_same_weights_with_maskable_ppo(tmp_path):
    for name in "ab":
        tiny_run("maskable-ppo", tmp_path / name, seed=5)
    assert same_weights(tmp_path / "a" / "checkpoints" / "latest.npz", tmp_path / "b" / "checkpoints" / "latest.npz")


@pytest.mark.parametrize("algo", list(TINY))
def test_resume_continues_the_run_to_a_larger_budget(algo: str, tmp_path):
    out = tmp_path / "run"
    first = tiny_run(algo, out)
    before = tmp_path / "before.npz"
    before.write_bytes((out / "checkpoints" / "latest.npz").read_bytes())
    again = tiny_run(algo, out, resume=True, steps=2 * first["decisions"])
    assert again["decisions"] >= 2 * first["decisions"]
    config = load_checkpoint(out / "checkpoints" / "latest.npz")[0]
    assert config.get("num_timesteps", config.get("num_samples")) == again["decisions"]  # values: train-values' key
    assert not same_weights(before, out / "checkpoints" / "latest.npz")


def test_the_cli_runs_a_baseline_and_resumes_it_with_its_settings(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["baseline", "dmc", "--setting", SETTING, "--out", str(out), "--steps", "300", "--num-envs", "8",
            "--eval-deals", "2", "--set", "queue=64", "--set", "batch_size=32", "--quiet"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert f"--agents baseline:{out}" in printed and "learner decisions" in printed
    config = json.loads((out / "config.json").read_text())
    assert config["algo"] == "dmc" and config["budget"] == {"minutes": 10.0, "decisions": 300}
    assert config["args"]["queue"] == 64 and config["done"]["decisions"] >= 300
    assert main(["baseline", "dmc", "--setting", SETTING, "--out", str(out), "--steps", "600", "--resume", "--quiet"]) == 0
    resumed = json.loads((out / "config.json").read_text())
    assert resumed["args"]["queue"] == 64 and resumed["args"]["num_envs"] == 8  # kept from the run
    assert resumed["done"]["decisions"] >= 600


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--set", "bogus=1"], "--set 'bogus=1': expected NAME=VALUE"),
        (["--set", "queue=x"], "--set queue:"),
        (["--set", "seed=3"], "--set seed: give it as --seed"),
        (["--steps", "0"], "argument --steps: must be at least 1"),
        (["--set", "queue=0"], "--set queue must be at least 1"),
        (["--players", "4"], "unrecognized arguments: --players"),
        (["--resume"], "--resume: no run in"),
        # checked before the first write: the memory an option implies, a queue the budget never fills, a key twice
        (["--eval-deals", "1000000000000"], "--eval-deals 1,000,000,000,000 would need about"),
        (["--set", "queue=1000000000000000"], "--set queue must be at least 1 and at most 1000000000000, not"),
        (["--set", "queue=5000", "--steps", "1000"], "--set queue=5000: the first learning step waits for 5,000 decisions"),
        (["--set", "queue=5", "--set", "queue=6"], "--set queue: given twice"),
    ],
)
def test_the_cli_refuses_bad_options_in_one_line(extra, message, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["baseline", "dmc", "--setting", SETTING, "--out", str(out), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wizard: error: ") and message in err and err.count("\n") == 1
    assert not out.exists()


def test_a_buffer_that_could_never_start_learning_is_refused_before_the_folder(tmp_path):
    with pytest.raises(ValueError, match="holds at most 504 transitions"):
        tiny_run("dqn", tmp_path / "run", buffer_size=512, learning_starts=1000)
    with pytest.raises(ValueError, match="holds as few as 488 transitions"):  # each of the 8 games' 3 seats waits
        tiny_run("nfsp-self", tmp_path / "run", buffer_size=512, learning_starts=500)
    with pytest.raises(ValueError, match="--set buffer_size .* would need about"):
        tiny_run("nfsp", tmp_path / "run", buffer_size=10**12)
    with pytest.raises(ValueError, match="--set learning_starts=900: the first learning step waits for 900 decisions"):
        tiny_run("dqn", tmp_path / "run", buffer_size=4096, learning_starts=900)  # more than the 800 steps
    assert not (tmp_path / "run").exists()
    assert not (tmp_path / "run").exists()


def play_every_seat(buffer_size: int, decisions: int = 160) -> tuple[nfsp_self.EverySeat, dict, dict, list]:
    """Random legal play of 4 games with the learner in every seat; the table, and as the test tracks them: each
    decision's next one of its seat in the round, each round's last decision's reward, and who made every decision."""
    table = nfsp_self.EverySeat(nfsp.Args(setting=SETTING, num_envs=4, buffer_size=buffer_size), seed=3)
    rng, obs = np.random.default_rng(0), table.reset()
    last: dict[tuple[int, int], int] = {}  # (game, seat) -> its latest decision in the round
    following, rewards, made = {}, {}, []
    for step in range(decisions // 4):
        masks, seats = table.action_masks(), table.acting.copy()
        actions = np.argmax(rng.random(masks.shape) * masks, axis=1)
        obs, ended = table.step(obs, masks, actions)
        for g, seat in enumerate(seats):
            number = 4 * step + g
            if (g, seat) in last:
                following[last[(g, seat)]] = number
            last[(g, seat)] = number
            made.append((g, int(seat), int(actions[g])))
        for g in np.flatnonzero(ended):
            for seat in range(3):
                rewards[last.pop((g, seat))] = table.batch.round_scores[g, seat] * 0.01
    return table, following, rewards, made


def test_self_play_stores_every_seats_decisions_each_linked_to_its_seats_next_one():
    table, following, rewards, made = play_every_seat(buffer_size=4000)
    replay = table.replay
    assert replay.written == len(made) == 160 and {seat for _, seat, _ in made} == {0, 1, 2}
    assert {made[n][1] for n in rewards} == {0, 1, 2} and len(rewards) % 3 == 0  # every seat ends every round
    assert np.flatnonzero(replay.complete).tolist() == sorted([*following, *rewards])  # the others still wait
    assert replay.actions[:160].tolist() == [a for _, _, a in made]
    for number, after in following.items():
        assert not replay.dones[number] and replay.rewards[number] == 0 and replay.following[number] == after
        assert made[after][:2] == made[number][:2]  # the same game's same seat
    for number, reward in rewards.items():
        assert replay.dones[number] and replay.rewards[number] == pytest.approx(reward)
    assert any(r != 0 for r in rewards.values())
    obs, actions, _, dones, next_obs, _ = replay.sample(64, np.random.default_rng(1))
    rows = [int(np.flatnonzero((replay.obs == o.astype(np.float16)).all(axis=1) & (replay.actions == a))[0])
            for o, a in zip(obs, actions)]
    for row, done, seen in zip(rows, dones, next_obs):
        assert done or (seen.astype(np.float16) == replay.obs[following[row]]).all()


def test_self_play_keeps_only_the_links_whose_decisions_are_still_stored():
    full, following, rewards, made = play_every_seat(buffer_size=4000)
    table = play_every_seat(buffer_size=40)[0]  # 40 rows: the last 40 of the 160 decisions
    replay = table.replay
    assert replay.rows == 40 and replay.written == 160
    stored = range(120, 160)
    assert replay.actions[[n % 40 for n in stored]].tolist() == [made[n][2] for n in stored]
    kept = [n for n in stored if n in rewards or (n in following and following[n] in stored)]
    assert sorted(np.flatnonzero(replay.complete).tolist()) == sorted(n % 40 for n in kept)
    for n in kept:
        assert replay.dones[n % 40] == (n in rewards)
        assert n in rewards or replay.following[n % 40] == following[n] % 40


def test_a_folder_with_a_run_or_in_use_is_refused(tmp_path, capsys):
    out = tmp_path / "run"
    tiny_run("dmc", out)
    with pytest.raises(ValueError, match="already holds a run: pass --resume"):
        tiny_run("dmc", out)
    (out / ".lock").write_text(str(os.getpid()))  # a live process holds it
    with pytest.raises(ValueError, match="in use by another process .* writing a run of wizard baseline dmc"):
        tiny_run("dmc", out, resume=True)
    (out / ".lock").unlink()
    with pytest.raises(ValueError, match="run of wizard baseline dmc, not of wizard baseline dqn: resume it with "
                                         "wizard baseline dmc"):
        tiny_run("dqn", out, resume=True)


def test_the_spec_needs_a_path_and_refuses_a_network_with_advice():
    with pytest.raises(ValueError, match="needs a checkpoint: baseline:PATH"):
        make_agent("baseline", 0)
    with pytest.raises(ValueError, match="reads the observation alone"):
        make_agent(f"baseline:{PRETRAINED}", 0)  # the shipped network reads RuleAgent's advice


@pytest.mark.parametrize("algo, options, ready, pause, said, key, more", [
    ("dmc", ["--num-envs", "8", "--set", "queue=64"], lambda line: True, 1.0, "stopped by Ctrl-C", "num_timesteps", 64),
    # values: Ctrl-C at once after the first iteration's evaluation, as the next iteration forks its workers
    ("values", ["--num-envs", "4", "--set", "samples=100", "--set", "workers=1", "--set", "hidden=16"],
     lambda line: "vs rule" in line, 0.0, "wizard: interrupted", "num_samples", 100),
])
def test_ctrl_c_stops_after_saving_and_resume_continues(algo, options, ready, pause, said, key, more, tmp_path):
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "wizard_env", "baseline", algo, "--setting", SETTING, "--out", str(out),
                             "--steps", "1000000", "--eval-deals", "2", *options],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(text) for text in proc.stdout], daemon=True).start()
    seen: list[str] = []
    try:
        while not seen or not ready(seen[-1]):  # dmc: the first evaluation's line; values: its first iteration's
            seen.append(lines.get(timeout=120))
        time.sleep(pause)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
    time.sleep(0.5)
    while not lines.empty():
        seen.append(lines.get())
    output = "".join(seen)
    assert said in output and "Traceback" not in output, output
    done = json.loads((out / "config.json").read_text())["done"]
    assert done["stopped_by"] == "interrupt" and not (out / ".lock").exists()
    saved = load_checkpoint(out / "checkpoints" / "latest.npz")[0][key]
    assert saved == done["decisions"] > 0
    assert main(["baseline", algo, "--setting", SETTING, "--out", str(out), "--resume", "--steps", str(saved + more),
                 "--quiet"]) == 0
    assert json.loads((out / "config.json").read_text())["done"]["decisions"] >= saved + more


def test_values_runs_from_the_cli_records_its_budget_and_resumes_with_its_settings(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["baseline", "values", "--setting", SETTING, "--out", str(out), "--steps", "100", "--num-envs", "4",
            "--eval-deals", "2", "--set", "samples=100", "--set", "workers=1", "--set", "hidden=16", "--quiet"]
    assert main(args) == 0
    assert f"--agents baseline:{out}" in capsys.readouterr().out
    config = json.loads((out / "config.json").read_text())
    assert config["algo"] == "values" and config["budget"] == {"minutes": 10.0, "decisions": 100}
    assert config["train"]["advice"] is False and config["train"]["rule_tables"] == 1.0 and config["train"]["margin"] == 0
    assert config["done"]["decisions"] >= 100 and config["done"]["stopped_by"] == "steps"
    assert main(["baseline", "values", "--setting", SETTING, "--out", str(out), "--steps", "200", "--resume", "--quiet"]) == 0
    resumed = json.loads((out / "config.json").read_text())
    assert resumed["args"]["samples"] == 100 and resumed["args"]["hidden"] == [16]  # kept from the run
    assert resumed["done"]["decisions"] >= 200 and (out / "checkpoints" / "iter-1.npz").is_file()
    with pytest.raises(ValueError, match="was run with samples 100, this command asks for 50"):
        tiny_run("values", out, resume=True, samples=50, num_envs=4, hidden=[16])
    capsys.readouterr()
    assert main(["train-values", "--out", str(out), "--resume", "--iterations", "3", "--quiet"]) == 2
    assert f"run of wizard baseline values, not of wizard train-values: resume it with wizard baseline values --out {out}" \
        in capsys.readouterr().err
    assert json.loads((out / "config.json").read_text()) == resumed and not (out / "data" / "iter-2").exists()


def test_values_stops_at_its_minutes_after_the_first_iteration(tmp_path):
    done = tiny_run("values", tmp_path / "run", minutes=0.0, steps=600)
    assert done["stopped_by"] == "minutes" and 150 <= done["decisions"] < 300
    assert json.loads((tmp_path / "run" / "config.json").read_text())["done"] == done


def test_the_curves_of_several_runs_make_one_figure_and_a_folder_without_a_curve_is_named(tmp_path, capsys):
    from wizard_env.training.baselines.curves import main as curves_main

    header = "decisions,wall_s,baseline_mean,rule_mean,diff,diff_ci95,bid_accuracy,rule_bid_accuracy\n"
    for name, rows in (("a", ["0,1.0,10,60,-50,3,0.3,0.6", "1000,60.0,40,60,-20,3,0.5,0.6"]), ("b", ["0,1.0,5,60,-55,4,0.3,0.6"])):
        (tmp_path / name).mkdir()
        (tmp_path / name / "curve.csv").write_text(header + "\n".join(rows) + "\n")
    out = tmp_path / "both.png"
    assert curves_main([str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(out)]) == 0
    assert out.read_bytes().startswith(b"\x89PNG")
    capsys.readouterr()
    assert curves_main([str(tmp_path / "a"), str(tmp_path / "none"), "--out", str(tmp_path / "x.png")]) == 2
    assert f"{tmp_path / 'none'}: no learning curve" in capsys.readouterr().err
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "curve.csv").write_text("step,score\n1,2\n")
    assert curves_main([str(tmp_path / "c"), "--out", str(tmp_path / "x.png")]) == 2
    assert "not a learning curve" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


def test_progress_ends_at_100_percent_when_the_time_budget_ends_the_run(tmp_path):
    module, settings = TINY["dmc"]
    lines: list[str] = []
    done = module.train(module.Args(**{**BOOKKEEPING, **settings, "minutes": 0.0}), tmp_path / "run", log=lines.append)
    assert done["stopped_by"] == "minutes" and done["decisions"] < settings["steps"]
    assert any(line.startswith("dmc: 100% (") and line.endswith("ended by --minutes 0") for line in lines)


def test_values_steps_past_the_iterations_a_run_may_play_name_steps_and_samples(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["baseline", "values", "--setting", SETTING, "--out", str(out), "--steps", "100000000",
                 "--set", "samples=100"]) == 2
    err = capsys.readouterr().err
    assert err == ("wizard: error: --steps 100,000,000 is 1,000,000 iterations of --set samples=100, more than 10,000: "
                   "lower --steps or raise samples\n")
    assert not out.exists()
