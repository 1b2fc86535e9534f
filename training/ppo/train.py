"""MaskablePPO on batched games against a pool of RuleAgent, self-play snapshots and RandomAgent (``wizard train``,
``wizard_env.cli.train``).

The run: the policy reads RuleAgent's choice as an input (``wizard_env.training.ppo.advice``; ``--no-advice``) and
clones RuleAgent's decisions first (``wizard_env.training.ppo.warm_start``; ``--bc-epochs 0``: none, PPO starts from
random weights), then PPO improves on them in games of every player count of ``--mix`` (``MixedVecEnv``;
``--episode round``, the default: every round ends an episode). Every ``--eval-every`` steps (after the PPO update
of the rollout that reached them) the policy plays duplicate deals against three RuleAgents
(``wizard_env.training.evaluation.evaluate``); the results go to ``curve.csv`` and ``curve.png``. The output folder
also holds ``config.json``, TensorBoard logs (``tb/``) and checkpoints (``checkpoints/step-N.npz`` and
``latest.npz``, written atomically).

Time: ``--max-minutes`` caps each session, its warm start and evaluations included. The warm start takes at most
``WARM_START_SHARE`` of it (``wizard_env.training.ppo.warm_start``); PPO stops at the last whole rollout once only
the time of the last evaluation is left, kept for the final one; a session that stopped so says where its time went.

Scaling: rewards are round scores times ``--reward-scale`` 0.01, so a typical round gives -1..+2 and the value head
trains at unit scale; observations are used as encoded (``engine.observation`` scales counts to 0..1, scores by 1/100).

The module runs a little past 400 lines because its settings' ranges and checks sit beside the run they guard.
"""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from wizard_env.agents.base import Agent
from wizard_env.agents.checkpoint import check_hidden, portable_path
from wizard_env.agents.ppo_agent import FORMAT, LEARNED_PHASES, PPOAgent, load_checkpoint, save_checkpoint
from wizard_env.agents.random_agent import RandomAgent
from wizard_env.agents.rule_agent import RuleAgent
from wizard_env.util import options
from wizard_env.util.checks import check_seed
from wizard_env.util.files import remove_temps
from wizard_env.util.options import MAX_COUNT
from wizard_env.engine.game import NUM_ACTIONS
from wizard_env.engine.observation import OBS_SIZE, OBS_VERSION
from wizard_env.engine.rules import Rules

from .. import train_report
from ..progress import Progress
from ..common import check_ranges, rules_json, run_lock, say, stop_on_interrupt
from ..run_folder import TRAIN, baseline, new_folder
from .train_resume import check_resume
from .warm_start import WARM_START_SHARE, check_warm_start_memory, describe
from .train_config import TrainConfig


def checkpoint_config(cfg: TrainConfig, rules: Rules, num_timesteps: int, wall_s: float = 0.0,
                      folder: Path | None = None) -> dict:
    """The JSON config stored with the weights (``wall_s``: the run's seconds up to them, over all its sessions; with
    the run's ``folder``, ``init_from`` as ``portable_path`` records it)."""
    train = dataclasses.asdict(cfg)
    if folder is not None:
        train["init_from"] = portable_path(cfg.init_from, folder)
    return {"format": FORMAT, "obs_version": OBS_VERSION, "obs_size": OBS_SIZE, "num_actions": NUM_ACTIONS, "hidden": list(cfg.hidden),
            "activation": cfg.activation, "learn": cfg.learn, "advice": cfg.advice, "rules": rules_json(rules),
            "train": train, "num_timesteps": int(num_timesteps), "wall_s": round(float(wall_s), 1)}


def policy_weights(model) -> dict[str, np.ndarray]:
    """The policy's parameters as numpy arrays under their PyTorch names."""
    return {k: v.detach().cpu().numpy() for k, v in model.policy.state_dict().items()}


def build_model(cfg: TrainConfig, env, out: Path):
    """A fresh MaskablePPO for this config on ``env``."""
    import torch
    from sb3_contrib import MaskablePPO
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(cfg.torch_threads)
    threadpool_limits(cfg.torch_threads, user_api="blas")  # the snapshots' numpy forward passes too
    activation = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[cfg.activation]
    return MaskablePPO(
        "MlpPolicy", env, learning_rate=cfg.learning_rate, n_steps=cfg.n_steps, batch_size=cfg.batch_size,
        n_epochs=cfg.n_epochs, gamma=cfg.gamma, gae_lambda=cfg.gae_lambda, clip_range=cfg.clip_range,
        ent_coef=cfg.ent_coef, target_kl=cfg.target_kl or None, seed=cfg.seed, verbose=0, tensorboard_log=str(out / "tb"), device="cpu",
        policy_kwargs={"net_arch": {"pi": list(cfg.hidden), "vf": list(cfg.hidden)}, "activation_fn": activation},
    )


def make_env(cfg: TrainConfig, mix: list[Rules], rounds: str | int | list[int]):
    """The training VecEnv: one ``WizardVecEnv``, or a ``MixedVecEnv`` of one per player count in ``mix``
    (``rounds``: the round schedule that made each count's rules)."""
    from wizard_env.envs.mixed_vec_env import MixedVecEnv
    from wizard_env.envs.vec_env import WizardVecEnv

    from .advice import AdviceVecEnv

    options: dict[str, Any] = dict(learn=cfg.learn, episode=cfg.episode, reward_scale=cfg.reward_scale)
    env: WizardVecEnv | MixedVecEnv
    if len(mix) == 1:
        env = WizardVecEnv(cfg.num_envs, seed=cfg.seed, **rules_json(mix[0]), **options)
    else:
        variant = {k: v for k, v in rules_json(mix[0]).items() if k not in ("num_players", "rounds")}
        env = MixedVecEnv(cfg.num_envs, [r.num_players for r in mix], seed=cfg.seed, rounds=rounds, **variant, **options)
    return AdviceVecEnv(env, seed=np.random.default_rng([cfg.seed, 9])) if cfg.advice else env


#: The range of every numeric setting, (least, most) (MAX_COUNT where nothing else bounds it): checked by ``check_config``
#: before a run writes anything. A rate, a scale or a clip range of 0 would train nothing: ABOVE_ZERO.
RANGES: dict[str, tuple[float | None, float | None]] = {
    "timesteps": (1, MAX_COUNT), "num_envs": (1, MAX_COUNT), "n_steps": (1, MAX_COUNT), "batch_size": (1, MAX_COUNT),
    "n_epochs": (1, MAX_COUNT), "eval_every": (1, MAX_COUNT), "eval_deals": (1, MAX_COUNT),
    "checkpoint_every": (1, MAX_COUNT), "snapshot_every": (1, MAX_COUNT), "snapshots": (0, MAX_COUNT),
    "bc_games": (0, MAX_COUNT), "bc_epochs": (0, MAX_COUNT), "torch_threads": (1, 256), "max_minutes": (0, MAX_COUNT),
    "learning_rate": (0, 1), "ent_coef": (0, MAX_COUNT), "reward_scale": (0, MAX_COUNT), "bc_smoothing": (0, 1),
    "target_kl": (0, MAX_COUNT), "gamma": (0, 1), "gae_lambda": (0, 1), "clip_range": (0, MAX_COUNT),
}
ABOVE_ZERO = ("learning_rate", "reward_scale", "clip_range")
#: Memory a training game takes besides the engine: its rollout rows (observation, advice, mask; about 7 kB each).
ROLLOUT_BYTES_PER_STEP = 8 * 1024


def check_config(cfg: TrainConfig) -> None:
    """ValueError naming the first impossible setting (as its option) or one that would not fit in memory."""
    from ..evaluation.evaluate import EVAL_BYTES_PER_GAME

    if not isinstance(cfg.learn, str) or cfg.learn not in LEARNED_PHASES:
        raise ValueError(f"--learn must be one of {', '.join(LEARNED_PHASES)}, not {cfg.learn!r}")
    check_hidden(cfg.hidden)
    check_seed(cfg.seed, "--seed")
    if cfg.activation not in ("relu", "tanh") or not isinstance(cfg.advice, bool):
        raise ValueError(f"activation must be relu or tanh and advice true or false, not {cfg.activation!r} and {cfg.advice!r}")
    check_ranges(cfg, RANGES, ABOVE_ZERO)
    unknown = set(cfg.pool) - {"rule", "self", "random"}
    weights = list(cfg.pool.values())
    if unknown or not all(math.isfinite(w) and w >= 0 for w in weights) or sum(weights) <= 0:
        raise ValueError(f"--pool weights are rule=W,self=W,random=W, finite, non-negative with a positive sum, not {cfg.pool}")
    options.check_memory("--num-envs", cfg.num_envs, options.GAME_BYTES)
    # a rollout holds --num-envs x --n-steps rows: name both options, whichever of them is huge
    options.check_memory("--num-envs x --n-steps", cfg.num_envs * cfg.n_steps, ROLLOUT_BYTES_PER_STEP)
    options.check_memory("--eval-deals", cfg.eval_deals, EVAL_BYTES_PER_GAME * max(cfg.mix))


def mix_rules(cfg: TrainConfig, rules: Rules, rounds: str | int | list[int]) -> list[Rules]:
    """The rules of each player count of ``cfg.mix``: ``rules``' variant, ``rounds``' schedule."""
    return [Rules.make(n, rounds, rules.bidding.value, rules.bid_total_rule, rules.foresight) for n in cfg.mix]


class Trainer:
    """One run: the env, the model, the opponent pool and the periodic bookkeeping."""

    def __init__(self, cfg: TrainConfig, rules: Rules, out: Path, quiet: bool = False, log=None,
                 rounds: str | int | list[int] = "standard"):
        self.started = time.monotonic()  #: this session's start: --max-minutes counts from here (the model's build too)
        check_config(cfg)
        self.cfg, self.rules, self.out, self.quiet, self.log = cfg, rules, Path(out), quiet, log or say
        self.mix = mix_rules(cfg, rules, rounds)
        check_warm_start_memory(cfg, self.mix)
        self.env = make_env(cfg, self.mix, rounds)
        self.rule = RuleAgent(seed=np.random.default_rng([cfg.seed, 5]))
        self.random = RandomAgent(seed=np.random.default_rng([cfg.seed, 6]))
        self.snapshots: list[PPOAgent] = []
        self.model = build_model(cfg, self.env, self.out)
        self.earlier = 0.0  #: seconds of the sessions before this one, up to the checkpoint it resumed from
        self.resumed_at = 0  #: the steps of that checkpoint
        self.curve = train_report.Curve(self.out / "curve.csv")
        self.evaluations = 0  #: this session's evaluations
        self.capped = False  #: whether --max-minutes stopped PPO before --timesteps
        self.evaluated_at: int | None = None  #: the steps of this session's last evaluation (None: none yet)
        self.spent = {"warm start": 0.0, "evaluations": 0.0, "PPO": 0.0}  #: this session's seconds in each part
        self.interrupted = False  #: whether Ctrl-C stopped PPO (saved, then raised again)

    def budget(self) -> float:
        """This session's seconds (``--max-minutes``)."""
        return self.cfg.max_minutes * 60

    def out_of_time(self) -> bool:
        """Whether PPO must stop: the session's time is spent, but for the time the last evaluation took, kept for the
        final one."""
        last = self.spent["evaluations"] / max(self.evaluations, 1)
        return time.monotonic() - self.started + last >= self.budget()

    def elapsed(self) -> float:
        """The run's seconds: this session's, and after a resume those of the sessions up to its checkpoint."""
        return self.earlier + time.monotonic() - self.started

    def agent(self) -> PPOAgent:
        """The current policy as a (frozen) PPOAgent."""
        config = checkpoint_config(self.cfg, self.rules, self.model.num_timesteps)
        return PPOAgent(config, policy_weights(self.model), seed=np.random.default_rng([self.cfg.seed, 7]))

    def snapshot(self) -> None:
        """Freeze the current policy into the pool (the newest ``snapshots`` are kept) and reweight it."""
        if self.cfg.snapshots > 0:
            self.snapshots = (self.snapshots + [self.agent()])[-self.cfg.snapshots:]
        pool: dict[str, list[Agent]] = {"rule": [self.rule], "random": [self.random], "self": list(self.snapshots)}
        agents, weights = [], []
        for kind, members in pool.items():
            for member in members:
                agents.append(member)
                weights.append(self.cfg.pool.get(kind, 0.0) / len(members))
        if sum(weights) <= 0:  # only self-play weight and no snapshot kept: play RuleAgent
            agents, weights = [self.rule], [1.0]
        self.env.set_opponent_pool(agents, weights)

    def save(self) -> Path:
        """Write checkpoints/step-N.npz and latest.npz."""
        config = checkpoint_config(self.cfg, self.rules, self.model.num_timesteps, self.elapsed(), self.out)
        weights = policy_weights(self.model)
        folder = self.out / "checkpoints"
        save_checkpoint(folder / f"step-{self.model.num_timesteps:09d}.npz", config, weights)
        return save_checkpoint(folder / "latest.npz", config, weights)

    def evaluate(self):
        """Duplicate deals of the current policy against three RuleAgents, added to the curve."""
        from ..evaluation.evaluate import evaluate, seatings

        n = self.rules.num_players
        specs = ["ppo"] + ["rule"] * (n - 1)
        agents = [self.agent()] + [RuleAgent(seed=np.random.default_rng([self.cfg.seed, 8, s])) for s in range(n - 1)]
        rounds = self.cfg.eval_deals * len(seatings(n)) * self.rules.num_rounds
        began = time.monotonic()
        with Progress("evaluation", rounds, "round", self.quiet, self.log) as progress:
            if self.curve.last is None:
                progress.say(f"evaluating against {n - 1} RuleAgents: {self.cfg.eval_deals:,} duplicate deals in "
                             f"{len(seatings(n))} seatings (--eval-deals), again every {self.cfg.eval_every:,} steps")
            result = evaluate(self.rules, specs, self.cfg.eval_deals, seed=10_000 + self.cfg.seed, agents=agents,
                              progress=progress.update)
        self.curve.add(self.model.num_timesteps, self.elapsed(), result)
        self.evaluated_at, self.evaluations = self.model.num_timesteps, self.evaluations + 1
        self.spent["evaluations"] += time.monotonic() - began
        return result

    def warm_start(self, teacher: PPOAgent | None = None) -> dict:
        """Clone RuleAgent's decisions (or the ``teacher``'s, in every phase) into the policy and value net, within
        ``WARM_START_SHARE`` of the session's time (``warm_start.warm_start``'s stats)."""
        from .warm_start import warm_start

        began = time.monotonic()
        seconds = max(self.started + WARM_START_SHARE * self.budget() - began, 0.0)
        stats = warm_start(self.model.policy, self.mix, self.cfg, teacher, self.quiet, self.log, seconds)
        self.spent["warm start"] = time.monotonic() - began
        return stats

    def resume(self, path: Path, same_run: bool = True) -> tuple[dict, dict[str, np.ndarray]]:
        """Load the weights and step count of a checkpoint of this run (``same_run=False``: only the
        weights, of a run with the same network, as ``--init-from`` does); the checkpoint's config and weights."""
        import torch

        config, weights = load_checkpoint(path)
        if config.get("obs_version", 0) != OBS_VERSION:
            raise ValueError(f"checkpoint {path} was trained on observation version {config.get('obs_version', 0)}, "
                             f"this code trains on version {OBS_VERSION}: start a new run")
        for key in ("learn", "hidden", "activation", "advice")[not same_run:]:
            if config.get(key) != getattr(self.cfg, key):
                raise ValueError(f"checkpoint {path}: {key} is {config.get(key)!r}, this run has {getattr(self.cfg, key)!r}")
        state = self.model.policy.state_dict()
        wrong = sorted(k for k in state if k not in weights or weights[k].shape != tuple(state[k].shape))
        if wrong:  # a checkpoint of another network
            found = f"no weights for {wrong[0]}" if wrong[0] not in weights else f"{wrong[0]} has shape {weights[wrong[0]].shape}"
            raise ValueError(f"checkpoint {path}: {found}, this run's network {tuple(state[wrong[0]].shape)}")
        self.model.policy.load_state_dict({k: torch.as_tensor(weights[k]) for k in state})
        if same_run:
            self.model.num_timesteps = self.resumed_at = int(config.get("num_timesteps", 0))
            wall_s = config.get("wall_s", 0.0)  # absent from checkpoints written before it was kept
            self.earlier = float(wall_s) if isinstance(wall_s, (int, float)) and 0 <= wall_s < math.inf else 0.0
        return config, weights

    def train(self) -> None:
        """PPO until ``timesteps`` (counted over the whole run, resumed or not) or ``max_minutes``.

        Snapshots, checkpoints and evaluations come between rollouts, after the update, so the policy of a
        point labelled N steps is the one trained on N steps. The time cap drops the unfinished rollout.
        """
        from stable_baselines3.common.callbacks import BaseCallback

        cfg, trainer = self.cfg, self
        remaining = cfg.timesteps - self.model.num_timesteps
        if remaining <= 0:
            return
        if self.out_of_time():  # the warm start and the first evaluation took the session's time
            self.capped = True
            return
        bar = Progress("train", cfg.timesteps, "step", self.quiet, self.log, initial=self.model.num_timesteps, leave=True,
                       budget=self.budget(), elapsed=lambda: time.monotonic() - trainer.started)
        bar.say(f"training: PPO from step {self.model.num_timesteps:,} to {cfg.timesteps:,} in rollouts of "
                f"{cfg.num_envs * cfg.n_steps:,} steps, an evaluation every {cfg.eval_every:,} (--eval-every)")
        evaluations = self.spent["evaluations"]  # those made between rollouts count as evaluations, not PPO
        marks = {k: self.model.num_timesteps // every for k, every in
                 (("eval", cfg.eval_every), ("save", cfg.checkpoint_every), ("snap", cfg.snapshot_every))}
        trained = [self.model.num_timesteps]  # steps of the rollouts collected and trained on

        class Bookkeeping(BaseCallback):
            def _on_rollout_start(self) -> None:  # the previous rollout's update is done
                steps = trained[0] = self.model.num_timesteps
                for key, every, action in (("snap", cfg.snapshot_every, trainer.snapshot),
                                           ("save", cfg.checkpoint_every, trainer.save),
                                           ("eval", cfg.eval_every, trainer.report)):
                    if steps // every > marks[key]:
                        marks[key] = steps // every
                        action()

            def _on_step(self) -> bool:
                bar.to(self.model.num_timesteps)
                trainer.capped = trainer.out_of_time()
                trainer.interrupted = stop()
                return not (trainer.capped or trainer.interrupted)

        began = time.monotonic()
        with stop_on_interrupt() as stop:  # the first Ctrl-C stops at the next step, to save the last whole rollout
            self.model.learn(remaining, callback=Bookkeeping(), reset_num_timesteps=False, tb_log_name="ppo")
        if self.capped or self.interrupted:
            self.model.num_timesteps = trained[0]  # the unfinished rollout was not trained on
        else:
            bar.finish(f"--timesteps {cfg.timesteps:,}")
        if self.capped:
            bar.to(self.model.num_timesteps)  # the steps trained on: the unfinished rollout's are not
            bar.finish(f"--max-minutes {cfg.max_minutes:g}")
        bar.close()
        self.spent["PPO"] = time.monotonic() - began - (self.spent["evaluations"] - evaluations)

    def budget_line(self) -> str:
        """Where the session's time went, when --max-minutes stopped it."""
        spent = ", ".join(f"{part} {seconds:.0f} s" for part, seconds in self.spent.items())
        line = f"--max-minutes {self.cfg.max_minutes:g} ({self.budget():.0f} s) went to: {spent}"
        if self.model.num_timesteps == self.resumed_at:
            line += (f"; no PPO step was trained: the warm start (at most {WARM_START_SHARE:.0%} of the time) and the "
                     "evaluation left none; give more --max-minutes, or fewer --bc-games or --eval-deals")
        return line

    def report(self) -> None:
        """Evaluate and log one line (also to TensorBoard)."""
        row = train_report.row_of(self.evaluate())
        if hasattr(self.model, "_logger"):  # set up by learn(); the first evaluation comes before it
            self.model.logger.record("eval/diff_vs_rule", row["diff"])
            self.model.logger.record("eval/bid_accuracy", row["bid_accuracy"])
        if not self.quiet:
            self.log(train_report.format_row(self.model.num_timesteps, self.elapsed(), row))


def run_training(cfg: TrainConfig, rules: Rules, out: str | Path, resume: bool = False, quiet: bool = False,
                 log=None, rounds: str | int | list[int] = "standard", header: dict | None = None) -> Trainer:
    """Warm start (or resume), train, save, evaluate and plot; returns the trainer. ``header``: more keys of
    config.json (``wizard baseline maskable-ppo``'s algorithm and arguments)."""
    out, log = Path(out), log or say
    check_config(cfg)  # every setting, before anything is written
    check_warm_start_memory(cfg, mix_rules(cfg, rules, rounds))
    command = baseline(header["algo"]) if header else TRAIN
    if resume:  # a baseline's run made before its config.json named it is a wizard train run
        check_resume(out, cfg, rules, (command, TRAIN) if header else (TRAIN,))
    else:
        new_folder(out, command)
        if cfg.init_from:
            load_checkpoint(cfg.init_from)  # a bad checkpoint is refused before the run folder exists
    out.mkdir(parents=True, exist_ok=True)
    with run_lock(out):
        return _run(cfg, rules, out, resume, quiet, log, rounds, header or {})


def _run(cfg: TrainConfig, rules: Rules, out: Path, resume: bool, quiet: bool, log, rounds, header: dict) -> Trainer:
    latest = out / "checkpoints" / "latest.npz"
    trainer = Trainer(cfg, rules, out, quiet, log, rounds)
    start = None  # (config, weights) of the checkpoint a new run starts from
    if resume and not latest.is_file():  # run_folder: no checkpoint at all
        log(f"{out} has no checkpoint yet (stopped before the first one): starting the run again from the beginning")
        resume = False
    if resume:
        trainer.resume(latest)
    elif cfg.init_from:
        start = trainer.resume(Path(cfg.init_from), same_run=False)
    for stale in remove_temps(out) + remove_temps(out / "checkpoints"):  # the folder is ours, and what it holds sound
        log(f"removed {stale}, left by a run killed while writing")
    train_report.write_json(out / "config.json", {**header, "train": dataclasses.asdict(cfg), "rules": rules_json(rules)})
    if resume:
        log(f"resumed from {latest} at step {trainer.model.num_timesteps}")
    elif start is not None:
        log(f"started from the weights of {cfg.init_from}")
        if cfg.learn == "both" and start[0].get("learn") != "both":
            # the phase the other run left to RuleAgent drifted with the shared layers: clone the other
            # run's agent (its network where it learned, RuleAgent elsewhere) in every phase
            teacher = PPOAgent(*start, seed=np.random.default_rng([cfg.seed, 10]), source=cfg.init_from)
            stats = trainer.warm_start(teacher)
            log(describe(stats, trainer.spent["warm start"], cfg.max_minutes,
                         f"{cfg.init_from} as an agent (its phases, RuleAgent's in the others)"))
        trainer.report()
    elif cfg.bc_epochs == 0:
        log("no warm start (--bc-epochs 0): PPO starts from random weights")
        trainer.report()
    else:
        log(describe(trainer.warm_start(), trainer.spent["warm start"], cfg.max_minutes))
        trainer.report()
    trainer.snapshot()
    trainer.train()
    trainer.save()
    if trainer.interrupted:
        log(f"stopped by Ctrl-C at step {trainer.model.num_timesteps:,}, saved: --resume continues")
        raise KeyboardInterrupt
    if trainer.evaluated_at != trainer.model.num_timesteps:  # else the last evaluation is of this policy already
        trainer.report()
    if trainer.capped:
        log(trainer.budget_line())
    train_report.plot(trainer.curve.path, out / "curve.png")
    return trainer

