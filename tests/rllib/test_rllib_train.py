"""``wizard train --backend rllib`` on a local Ray instance: a tiny run exports a policy that PPOAgent plays,
with the RLlib module's logits; it resumes; bad options and addresses are one error line."""

from __future__ import annotations

import contextlib
import io
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule

from wizard_env.agents.ppo_agent import PPOAgent, load_checkpoint
from wizard_env.agents.rule_agent import RuleAgent
from wizard_env.cli.main import main
from wizard_env.engine.rules import Rules
from wizard_env.training.evaluation.evaluate import evaluate
from wizard_env.training.rllib.rllib_train import POLICY_ID

from test_rllib_export import positions  # tests/rllib is on sys.path: pytest's rootdir-relative import

TINY = ["train", "--backend", "rllib", "--players", "4", "--rounds", "2", "--iteration-steps", "500",
        "--batch-size", "250", "--n-epochs", "2", "--num-env-runners", "1", "--envs-per-runner", "2",
        "--checkpoint-every", "500", "--seed", "0"]


def wizard(*argv: str) -> tuple[int, str]:
    """``wizard ARGV`` in this process: its exit status and what it printed on stdout."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(list(argv))
    return status, out.getvalue()


@pytest.fixture(scope="module")
def run(ray_local, tmp_path_factory) -> tuple[Path, str]:
    """A run of 1,000 decisions (two iterations, one env runner): its folder and its output."""
    out = tmp_path_factory.mktemp("rllib") / "run"
    status, printed = wizard(*TINY, "--timesteps", "1000", "--out", str(out))
    assert status == 0, printed
    return out, printed


def test_a_tiny_run_prints_each_iteration_and_writes_its_checkpoints(run):
    out, printed = run
    lines = [line for line in printed.splitlines() if line.startswith("iter")]
    assert len(lines) == 2 and "steps/s" in lines[0] and "mean return per seat" in lines[0]
    assert "illegal actions: 0" in printed
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["latest.npz", "step-000000500.npz", "step-000001000.npz"]
    assert not (out / "latest.npz").exists()  # one place for every trainer: checkpoints/latest.npz
    assert (out / "rllib" / "rllib_checkpoint.json").is_file() and (out / "config.json").is_file()


def test_learning_changed_the_weights(run):
    out, _ = run
    _, first = load_checkpoint(out / "checkpoints" / "step-000000500.npz")
    config, last = load_checkpoint(out / "checkpoints" / "latest.npz")
    assert config["num_timesteps"] == 1000 and config["train"]["backend"] == "rllib"
    assert not np.array_equal(first["action_net.weight"], last["action_net.weight"])


def test_the_export_plays_duplicate_deals_against_rule_agents(run):
    out, _ = run
    rules = Rules.make(4, 2)
    agent = PPOAgent.load(out / "checkpoints" / "latest.npz")
    rule = [RuleAgent(seed=s) for s in range(3)]
    result = evaluate(rules, ["ppo", "rule", "rule", "rule"], deals=2, seed=0, agents=[agent, *rule])
    assert result.deals == 2 and len(result.records.seeds) == 8 and np.isfinite(result.specs[0].mean_score)
    status, printed = wizard("eval", "--players", "4", "--rounds", "2", "--agents", f"ppo:{out},rule,rule,rule",
                             "--games", "2", "--out", str(out / "eval"))
    assert status == 0 and (out / "eval" / "eval.json").is_file()


def test_the_export_gives_the_trained_modules_logits_and_values(run):
    out, _ = run
    module = RLModule.from_checkpoint(out / "rllib" / "learner_group" / "learner" / "rl_module" / POLICY_ID)
    agent = PPOAgent.load(out / "checkpoints" / "latest.npz")
    observations, masks = positions(30)
    def batch():  # a new one per call: the module pops the observation's keys
        return {Columns.OBS: {"observations": torch.as_tensor(observations), "action_mask": torch.ones(masks.shape)}}

    with torch.no_grad():
        logits = module.forward_inference(batch())[Columns.ACTION_DIST_INPUTS]
        values = module.compute_values(batch())
    np.testing.assert_allclose(agent.logits(observations), logits.numpy(), rtol=1e-5, atol=1e-5)
    # the value net too: the learner's, which the env runners' copies of the module do not receive
    _, weights = load_checkpoint(out / "checkpoints" / "latest.npz")
    x = observations
    for i in (0, 2):
        x = np.maximum(x @ weights[f"mlp_extractor.value_net.{i}.weight"].T + weights[f"mlp_extractor.value_net.{i}.bias"], 0)
    np.testing.assert_allclose((x @ weights["value_net.weight"].T + weights["value_net.bias"])[:, 0], values.numpy(),
                               rtol=1e-5, atol=1e-5)


def test_resume_continues_the_run_even_after_a_kill_between_the_renames_of_a_save(run):
    out, _ = run
    (out / "rllib").rename(out / ".rllib.old")  # as a run killed after moving the old checkpoint aside
    (out / "checkpoints" / "latest.npz").rename(out / "latest.npz")  # and made when RLlib runs kept it in --out
    status, printed = wizard(*TINY, "--timesteps", "1500", "--out", str(out), "--resume")
    assert status == 0 and "resumed from" in printed and "at step 1,000" in printed
    for latest in (out / "checkpoints" / "latest.npz", out / "latest.npz"):  # the old place kept current
        assert load_checkpoint(latest)[0]["num_timesteps"] == 1500
    assert (out / "rllib").is_dir() and not (out / ".rllib.old").exists() and not (out / ".rllib.new").exists()
    status, _ = wizard(*TINY, "--timesteps", "1500", "--out", str(out))  # no --resume: the run is not overwritten
    assert status == 2


@pytest.mark.parametrize("extra, message", [
    (["--mix", "4"], "--mix applies to --backend sb3 only"),
    (["--address", "nowhere"], "expected HOST:PORT"),
    (["--address", "127.0.0.1:1"], "no Ray cluster answered"),
    (["--batch-size", "600"], "larger than --iteration-steps"),
    (["--num-env-runners", "-1"], "argument --num-env-runners: must be at least 0"),
])
def test_bad_options_are_one_error_line(tmp_path, capsys, extra, message):
    given = {option for option in extra if option.startswith("--")}  # an option given twice is refused as such
    tiny = [arg for i, arg in enumerate(TINY) if arg not in given and (i == 0 or TINY[i - 1] not in given)]
    assert main([*tiny, "--out", str(tmp_path / "run"), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "run").exists()


def test_the_same_seed_trains_the_same_weights_in_one_process(ray_local, tmp_path):
    """Games in the driver (0 env runners): a seed gives the same weights (across processes only with
    PYTHONHASHSEED set, see rllib_train's docstring)."""
    from wizard_env.training.rllib.rllib_export import module_weights
    from wizard_env.training.rllib.rllib_train import RLlibConfig, RLlibTrainer

    cfg = RLlibConfig(num_env_runners=0, envs_per_runner=2, iteration_steps=300, batch_size=100, n_epochs=2,
                      hidden=[16], timesteps=600, seed=7)
    weights = []
    for seed in (7, 7, 8):
        trainer = RLlibTrainer(RLlibConfig(**{**vars(cfg), "seed": seed}), Rules.make(4, 2), tmp_path, quiet=True)
        try:
            trainer.train()
            weights.append(module_weights(trainer.algo.get_module(POLICY_ID))[0])
        finally:
            trainer.stop()
    assert all(np.array_equal(weights[0][k], weights[1][k]) for k in weights[0])
    assert not np.array_equal(weights[0]["action_net.weight"], weights[2]["action_net.weight"])


def test_an_address_that_answers_but_is_no_ray_cluster_is_one_error_line_in_bounded_time(tmp_path):
    """Ray retries such an address for a while and its C++ core logs every retry to stderr; the run says one line."""
    listener = socket.create_server(("127.0.0.1", 0))  # accepts connections, speaks no gRPC
    port = listener.getsockname()[1]
    try:
        run = subprocess.run([sys.executable, "-m", "wizard_env", *TINY, "--out", str(tmp_path / "run"),
                              "--address", f"127.0.0.1:{port}"], capture_output=True, text=True, timeout=120)
    finally:
        listener.close()
    assert run.returncode == 2
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("wizard: error: --address 127.0.0.1:"), run.stderr[-3000:]
    assert "no Ray cluster answered within 10 s" in lines[0]
    assert not (tmp_path / "run").exists()
