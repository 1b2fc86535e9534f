"""Multi-agent self-play PPO with action masking on Ray RLlib (``wizard train --backend rllib``, ``wizard_env.cli.train``).

Every seat of every game is played by one shared policy (RLlib's ``ActionMaskingTorchRLModule`` on
``wizard_env.integrations.rllib.WizardMultiAgentEnv``), so each game gives the learner every seat's decisions.
Each iteration samples ``--iteration-steps`` decisions from the env runners, runs PPO on them and
prints one line: steps so far, steps per second of that iteration (sampling and update), and the mean
return per seat (points, unscaled) of the last 100 games finished (RLlib's smoothing window). The run
stops after ``--timesteps`` decisions or ``--max-minutes``, at the end of an iteration.

``--out`` receives ``config.json``, ``checkpoints/latest.npz`` and ``checkpoints/step-N.npz`` (the policy in the
``wizard-ppo/1`` format that ``PPOAgent`` and ``wizard eval --agents ppo:DIR`` load, as for ``wizard train``; see
``rllib_export``) and ``rllib/`` (RLlib's own checkpoint of the algorithm, which ``--resume``
continues from). Every file is written atomically, ``rllib/`` as a folder renamed into place.

Same seed, same run, as far as RLlib allows: ``--seed`` seeds every env runner's games, the network's
initial weights and the minibatch order, but the weights also depend on Python's string hashing, which
changes from one process to the next (RLlib keeps agent ids in sets, whose order follows it). With
``PYTHONHASHSEED`` set (``PYTHONHASHSEED=0 wizard train --backend rllib ...``) two runs of one seed
gave identical weights here, with 0 and with 2 env runners (sampling is synchronous: each runner plays
fixed fragments); without it the games are the same but the weights differ. An env runner that fails
and is restarted, or a cluster whose runners time out, breaks this too.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from wizard_env.agents.ppo_agent import RUN_CHECKPOINTS, PPOAgent, load_checkpoint, save_checkpoint
from wizard_env.util import options
from wizard_env.util.checks import check_seed
from wizard_env.util.stopwatch import Stopwatch
from wizard_env.util.files import remove_temps
from wizard_env.util.options import MAX_COUNT
from wizard_env.engine.rules import Rules

from .. import train_report
from ..run_folder import RLLIB, resume_folder
from ..common import check_ranges, rules_json, run_lock, say
from .rllib_cluster import check_address, start_ray
from .rllib_export import module_weights
from ..ppo.train import TrainConfig, checkpoint_config
from .rllib_config import RLlibConfig

#: The module id of the one policy every seat plays.
POLICY_ID = "shared"


RANGES: dict[str, tuple[float | None, float | None]] = {
    "timesteps": (1, MAX_COUNT), "max_minutes": (0, MAX_COUNT), "num_env_runners": (0, 1024),
    "envs_per_runner": (1, 1024), "iteration_steps": (1, MAX_COUNT), "batch_size": (1, MAX_COUNT),
    "n_epochs": (1, MAX_COUNT), "learning_rate": (0, 1), "ent_coef": (0, MAX_COUNT), "clip_range": (0, MAX_COUNT),
    "gamma": (0, 1), "gae_lambda": (0, 1), "reward_scale": (0, MAX_COUNT), "checkpoint_every": (1, MAX_COUNT),
    "torch_threads": (1, 256),
}
ABOVE_ZERO = ("learning_rate", "reward_scale", "clip_range")
#: What the learner holds per decision of an iteration: the observation and mask in the sampled batch,
#: again as tensors, and the columns PPO adds (a bound, not measured).
LEARNER_BYTES_PER_STEP = 32 * 1024


def check_config(cfg: RLlibConfig) -> None:
    """ValueError naming (as its option) the first impossible setting."""
    from wizard_env.agents.checkpoint import check_hidden

    check_seed(cfg.seed, "--seed")
    check_hidden(cfg.hidden)
    if cfg.activation not in ("relu", "tanh"):
        raise ValueError(f"activation must be relu or tanh, not {cfg.activation!r}")
    check_ranges(cfg, RANGES, ABOVE_ZERO)
    options.check_memory("--iteration-steps", cfg.iteration_steps, LEARNER_BYTES_PER_STEP)
    if cfg.batch_size > cfg.iteration_steps:
        raise ValueError(f"--batch-size {cfg.batch_size} is larger than --iteration-steps {cfg.iteration_steps}")


def build_algorithm(cfg: RLlibConfig, rules: Rules) -> Any:
    """RLlib's PPO on the Wizard env: one shared masked policy for every seat."""
    import logging

    import torch
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    from wizard_env.integrations.rllib import WizardMultiAgentEnv

    # RLlib's notices (the new API stack is the default, its example module's base class is deprecated)
    # would precede every run's output; its errors still show
    logging.getLogger("ray.rllib").setLevel(logging.ERROR)
    torch.set_num_threads(cfg.torch_threads)
    model = DefaultModelConfig(fcnet_hiddens=list(cfg.hidden), fcnet_activation=cfg.activation, head_fcnet_hiddens=[],
                               vf_share_layers=False)
    env_config = {**rules_json(rules), "reward_scale": cfg.reward_scale}
    config = (
        PPOConfig()
        .environment(WizardMultiAgentEnv, env_config=env_config)
        .framework("torch")
        .env_runners(num_env_runners=cfg.num_env_runners, num_envs_per_env_runner=cfg.envs_per_runner,
                     num_cpus_per_env_runner=1, rollout_fragment_length="auto")
        .learners(num_learners=0)
        .multi_agent(policies={POLICY_ID}, policy_mapping_fn=lambda agent_id, episode, **kwargs: POLICY_ID)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            POLICY_ID: RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=model)}))
        .training(train_batch_size_per_learner=cfg.iteration_steps, minibatch_size=cfg.batch_size,
                  num_epochs=cfg.n_epochs, lr=cfg.learning_rate, gamma=cfg.gamma, lambda_=cfg.gae_lambda,
                  clip_param=cfg.clip_range, entropy_coeff=cfg.ent_coef, vf_clip_param=float("inf"))
        .callbacks(on_episode_end=count_illegal_actions)
        .debugging(seed=cfg.seed, log_level="ERROR")
        .reporting(min_time_s_per_iteration=0, min_sample_timesteps_per_iteration=0)
    )
    return config.build_algo()


def count_illegal_actions(*, episode, metrics_logger, **kwargs) -> None:
    """An episode-end callback: the illegal actions of the episode into the metric ``illegal_actions`` (summed)."""
    infos = episode.get_infos(-1)
    count = sum(bool(info.get("illegal_action")) for info in infos.values() if isinstance(info, dict))
    metrics_logger.log_value("illegal_actions", count, reduce="sum")


def export_config(cfg: RLlibConfig, rules: Rules, steps: int) -> dict:
    """The JSON config of an exported checkpoint: PPOAgent's fields and this run's settings."""
    config = checkpoint_config(TrainConfig(learn="both", mix=[rules.num_players], hidden=list(cfg.hidden),
                                           activation=cfg.activation, advice=False), rules, steps)
    config["train"] = {"backend": "rllib", "mix": [rules.num_players], **dataclasses.asdict(cfg)}
    return config


def learner_weights(algo: Any) -> tuple[dict[str, np.ndarray], list[int], str]:
    """``module_weights`` of the shared policy as the learner holds it. (``algo.get_module`` gives an env
    runner's copy, whose value net is never updated: the learner sends the runners the policy only.)"""
    results = algo.learner_group.foreach_learner(lambda learner: module_weights(learner.module[POLICY_ID]))
    return next(iter(results)).get()


def export_policy(algo: Any, cfg: RLlibConfig, rules: Rules, steps: int, path: str | os.PathLike) -> Path:
    """Write the shared policy as a ``wizard-ppo/1`` checkpoint at ``path`` (atomically); return the path."""
    weights, hidden, activation = learner_weights(algo)
    if hidden != list(cfg.hidden) or (hidden and activation != cfg.activation):
        raise ValueError(f"the module has hidden layers {hidden} ({activation}), the run asked for {cfg.hidden} ({cfg.activation})")
    config = export_config(cfg, rules, steps)
    PPOAgent(config, weights, source=str(path))  # refuses what it could not play, before anything is written
    return save_checkpoint(path, config, weights)


def _swap_names(folder: Path) -> tuple[Path, Path]:
    """The new and the old checkpoint folders beside ``folder`` while ``save_algorithm`` swaps them."""
    return folder.with_name(f".{folder.name}.new"), folder.with_name(f".{folder.name}.old")


def restore_interrupted_swap(folder: Path) -> None:
    """Put the previous checkpoint back at ``folder`` if a run was killed between the two renames of a save."""
    old = _swap_names(folder)[1]
    if not folder.exists() and old.is_dir():
        old.rename(folder)


def save_algorithm(algo: Any, folder: Path) -> Path:
    """RLlib's checkpoint of ``algo`` at ``folder``, replaced whole: written beside it, then renamed into place."""
    new, old = _swap_names(folder)
    for stale in (new, old):
        shutil.rmtree(stale, ignore_errors=True)
    algo.save_to_path(str(new.resolve()))
    if folder.exists():
        folder.rename(old)
    new.rename(folder)
    shutil.rmtree(old, ignore_errors=True)
    return folder


def iteration_numbers(result: dict, num_players: int, reward_scale: float) -> dict[str, float]:
    """Steps sampled, mean return per seat (points) and illegal actions of one ``algo.train()`` result."""
    runners = result.get("env_runners", {})
    episode_return = runners.get("episode_return_mean", float("nan"))
    return {"steps": int(runners.get("num_env_steps_sampled", 0)),
            "return_per_seat": float(episode_return) / num_players / reward_scale,
            "episodes": int(runners.get("num_episodes", 0)),
            "illegal_actions": int(runners.get("illegal_actions", 0))}


class RLlibTrainer:
    """One RLlib run: the algorithm, its step count and the checkpoints in ``out``."""

    def __init__(self, cfg: RLlibConfig, rules: Rules, out: Path, quiet: bool = False, log=None):
        check_config(cfg)
        self.cfg, self.rules, self.out, self.quiet, self.log = cfg, rules, Path(out), quiet, log or say
        self.algo = build_algorithm(cfg, rules)
        self.steps = 0  #: decisions sampled and trained on
        self.illegal_actions = 0  #: illegal actions taken in training (masking makes them impossible)
        self.iterations: list[dict[str, float]] = []  #: each iteration's numbers, with its wall seconds

    def resume(self) -> None:
        """Continue from ``out/rllib`` and the step count of the run's latest checkpoint."""
        config, _ = load_checkpoint(self.out)  # checkpoints/latest.npz, or latest.npz in a run made before it
        self.algo.restore_from_path(str((self.out / "rllib").resolve()))
        self.steps = int(config.get("num_timesteps", 0))

    def save(self) -> Path:
        """RLlib's checkpoint, then checkpoints/step-N.npz and checkpoints/latest.npz (and the latest.npz of a run made
        before that layout, kept current for what reads it there)."""
        save_algorithm(self.algo, self.out / "rllib")
        export_policy(self.algo, self.cfg, self.rules, self.steps, self.out / "checkpoints" / f"step-{self.steps:09d}.npz")
        if (self.out / "latest.npz").is_file():
            export_policy(self.algo, self.cfg, self.rules, self.steps, self.out / "latest.npz")
        return export_policy(self.algo, self.cfg, self.rules, self.steps, self.out / "checkpoints" / "latest.npz")

    def train(self) -> None:
        """PPO iterations until ``timesteps`` (over the whole run, resumed or not) or ``max_minutes``."""
        cfg, started = self.cfg, time.monotonic()
        mark = self.steps // cfg.checkpoint_every
        while self.steps < cfg.timesteps and time.monotonic() - started < cfg.max_minutes * 60:
            with Stopwatch() as watch:
                result = self.algo.train()
            numbers = iteration_numbers(result, self.rules.num_players, cfg.reward_scale)
            numbers["wall_s"] = watch.seconds
            self.steps += int(numbers["steps"])
            self.illegal_actions += int(numbers["illegal_actions"])
            self.iterations.append(numbers)
            if not self.quiet:
                self.log(format_iteration(len(self.iterations), self.steps, numbers))
            if self.steps // cfg.checkpoint_every > mark and self.steps < cfg.timesteps:
                mark = self.steps // cfg.checkpoint_every
                self.save()

    def stop(self) -> None:
        """Stop the env runners."""
        self.algo.stop()


def format_iteration(number: int, steps: int, numbers: dict[str, float]) -> str:
    """One progress line."""
    per_s = numbers["steps"] / numbers["wall_s"] if numbers["wall_s"] > 0 else float("nan")
    returns = (f"mean return per seat {numbers['return_per_seat']:7.1f} ({numbers['episodes']} games)"
               if numbers["episodes"] else "no game finished")
    return f"iter {number:>4} | step {steps:>10,} | {per_s:7.0f} steps/s | {returns}"


def run_rllib(cfg: RLlibConfig, rules: Rules, out: str | Path, resume: bool = False, quiet: bool = False,
              address: str = "", log=None) -> RLlibTrainer:
    """Start or join Ray, train (or resume), save and export; returns the (stopped) trainer."""
    out, log = Path(out), log or say
    check_config(cfg)
    latest = any((out / name).is_file() for name in RUN_CHECKPOINTS)
    if resume and not (latest and ((out / "rllib").is_dir() or _swap_names(out / "rllib")[1].is_dir())):
        raise ValueError(f"--resume: no RLlib run in {out} (needs checkpoints/latest.npz and rllib/)")
    if not resume and latest:
        raise ValueError(f"{out} already holds a run: pass --resume to continue it, or another --out")
    if resume:
        check_resume(out, cfg, rules)
    if address:
        check_address(address)  # before the run folder exists
    out.mkdir(parents=True, exist_ok=True)
    with run_lock(out):
        for stale in remove_temps(out) + remove_temps(out / "checkpoints"):
            log(f"removed {stale}, left by a run killed while writing")
        restore_interrupted_swap(out / "rllib")
        start_ray(address, cfg)
        trainer = RLlibTrainer(cfg, rules, out, quiet, log)
        try:
            if resume:
                trainer.resume()
                log(f"resumed from {out / 'rllib'} at step {trainer.steps:,}")
            train_report.write_json(out / "config.json", {"train": {"backend": "rllib", **dataclasses.asdict(cfg)},
                                                          "rules": rules_json(rules)})
            trainer.train()
            trainer.save()
        finally:
            trainer.stop()
    return trainer


def check_resume(out: Path, cfg: RLlibConfig, rules: Rules) -> None:
    """ValueError if ``out``'s run has other rules or another network than this command asks for."""
    saved = train_report_config(out)
    if saved.get("rules") != rules_json(rules):
        raise ValueError(f"--resume: {out} was trained with rules {saved.get('rules')}, this command asks for "
                         f"{rules_json(rules)}: pass the run's variant options")
    train = saved.get("train", {})
    for key in ("hidden", "activation"):
        if train.get(key) != getattr(cfg, key):
            raise ValueError(f"--resume: {out} was trained with {key} {train.get(key)!r}, this command asks for {getattr(cfg, key)!r}")


def train_report_config(out: Path) -> dict:
    """The config.json of the RLlib run in ``out`` that a ``--resume`` continues; ValueError naming the folder where
    ``run_folder.resume_folder`` refuses it, or the file if it is missing or not one."""
    import json

    resume_folder(out, (RLLIB,))
    path = out / "config.json"
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError) as e:
        raise ValueError(f"{path}: not an RLlib run config ({type(e).__name__})") from None
    if not isinstance(saved, dict) or not isinstance(saved.get("train"), dict) or saved["train"].get("backend") != "rllib":
        raise ValueError(f"{path}: not the config of a --backend rllib run")
    return saved
