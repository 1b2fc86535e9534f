"""``wizard train``: MaskablePPO on batched games against a pool of RuleAgent, self-play snapshots and RandomAgent.

    wizard train --out runs/ppo --seed 0            # the default run: bids and play, 3-6 players, 18 minutes
    wizard train --out runs/ppo --resume             # continue from runs/ppo/checkpoints/latest.npz
    wizard train --learn bid --mix 4                 # learn only trump and bids, 4-player games only

The run: the policy reads RuleAgent's choice as an input (``wizard_env.training.advice``; ``--no-advice``) and
clones RuleAgent's decisions first (``wizard_env.training.warm_start``), then PPO improves on them in games of
every player count of ``--mix`` (``MixedVecEnv``; ``--episode round``, the default: every round ends
an episode).
Every ``--eval-every`` steps (after the PPO update of the rollout that reached them) the policy plays duplicate deals against three RuleAgents
(``wizard_env.training.evaluate``); the results go to ``curve.csv`` and ``curve.png``. The output folder also holds ``config.json``, TensorBoard logs (``tb/``) and
checkpoints (``checkpoints/step-N.npz`` and ``latest.npz``, written atomically).

Scaling: rewards are round scores times ``--reward-scale`` 0.01, so a typical round gives -1..+2
and the value head trains at unit scale; observations are used as encoded (``wizard_env.observation``
already scales counts to 0..1 and scores by 1/100).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import inspect
import math
import os
import re
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from wizard_env.agents.base import Agent
from wizard_env.agents.checkpoint import check_hidden
from wizard_env.agents.ppo_agent import FORMAT, LEARNED_PHASES, PPOAgent, load_checkpoint, save_checkpoint
from wizard_env.agents.random_agent import RandomAgent
from wizard_env.agents.rule_agent import RuleAgent
from wizard_env import options
from wizard_env.batch import check_seed, short_repr
from wizard_env.files import remove_temps
from wizard_env.game import NUM_ACTIONS
from wizard_env.observation import OBS_SIZE, OBS_VERSION
from wizard_env.rules import Rules

from . import train_report

HELP = "train a MaskablePPO agent against RuleAgent, self-play snapshots and RandomAgent"
DESCRIPTION = (
    "Clone RuleAgent's decisions, then improve on them with MaskablePPO in batched games against an "
    "opponent pool. Writes config.json, TensorBoard logs, checkpoints, and a learning curve of duplicate "
    "evaluations against RuleAgent (curve.csv, curve.png) into --out. With --backend rllib: self-play "
    "PPO with one shared policy for every seat on Ray RLlib (wizard_env.training.rllib_train)."
)


@dataclass
class TrainConfig:
    """Everything that defines a run (saved as config.json and inside every checkpoint)."""

    learn: str = "both"  #: phases the network decides: both, bid (trump and bids) or play
    mix: list[int] = field(default_factory=lambda: [3, 4, 5, 6])  #: player counts of the training games (one network)
    timesteps: int = 3_000_000  #: learner decisions of PPO training after the warm start, rounded up to whole rollouts
    max_minutes: float = 18.0  #: stop PPO after this much wall time, at the last whole rollout (a final checkpoint; --resume continues)
    seed: int = 0  #: seeds the games, the opponents, the warm start and torch
    num_envs: int = 512  #: games played in lockstep
    n_steps: int = 16  #: steps per game per rollout (a rollout is num_envs * n_steps decisions)
    batch_size: int = 2048  #: PPO minibatch
    n_epochs: int = 6  #: PPO epochs per rollout
    learning_rate: float = 1e-4  #: PPO's step size (3e-4 drifted from the cloned play, -15 at 150k steps; 1e-4 improved slowly)
    ent_coef: float = 0.0  #: entropy bonus (0: the smoothed clone keeps exploring; a bonus only added noise)
    clip_range: float = 0.2  #: PPO's clip of the policy ratio
    gamma: float = 1.0  #: discount within an episode (1: a round's scores are not discounted)
    gae_lambda: float = 1.0  #: GAE lambda (1: Monte Carlo returns; the critic explains little of a round's score)
    episode: str = "round"  #: the learner's episode: a round (less variance) or a game
    reward_scale: float = 0.01  #: round scores (about -100..+200) to about -1..+2
    hidden: list[int] = field(default_factory=lambda: [256, 256])  #: hidden layers of policy and value nets
    advice: bool = True  #: the policy also reads RuleAgent's choice (``wizard_env.training.advice``)
    activation: str = "relu"  #: activation of the hidden layers: relu or tanh
    pool: dict[str, float] = field(default_factory=lambda: {"rule": 0.5, "self": 0.45, "random": 0.05})  #: opponent mix as weights
    snapshots: int = 8  #: self-play snapshots kept in the pool (the newest)
    snapshot_every: int = 250_000  #: steps between snapshots
    bc_games: int = 0  #: RuleAgent games to clone per player count (0: 200, or 2,000 for --learn bid --no-advice)
    bc_epochs: int = 3  #: epochs of cloning RuleAgent's decisions
    bc_smoothing: float = 0.1  #: share of each cloned target spread over the legal actions (keeps PPO exploring)
    target_kl: float = 0.0  #: stop a rollout's PPO epochs early past this KL (0: never)
    eval_every: int = 500_000  #: steps between evaluations against RuleAgent
    eval_deals: int = 200  #: duplicate deals per evaluation (each played in every seat rotation)
    checkpoint_every: int = 250_000  #: steps between checkpoints
    torch_threads: int = 1  #: torch threads (one: on a busy 2-core machine two threads ran 7x slower)
    init_from: str = ""  #: start from this checkpoint's weights instead of the warm start (same network)


def field_docs(cls) -> dict[str, str]:
    """The ``#:`` comment of each field of a dataclass, by field name (``wizard train --help`` shows them)."""
    lines = inspect.getsource(cls).splitlines()
    return {m[1]: m[2] for m in (re.match(r"\s+(\w+):.*#:\s*(.+)$", line) for line in lines) if m}


def rules_json(rules: Rules) -> dict[str, Any]:
    """The rules as JSON, enough to rebuild them with ``Rules.make``."""
    return {"num_players": rules.num_players, "rounds": list(rules.hand_sizes), "bidding": rules.bidding.value,
            "bid_total_rule": rules.bid_total_rule, "foresight": rules.foresight}


def checkpoint_config(cfg: TrainConfig, rules: Rules, num_timesteps: int) -> dict:
    """The JSON config stored with the weights."""
    return {"format": FORMAT, "obs_version": OBS_VERSION, "obs_size": OBS_SIZE, "num_actions": NUM_ACTIONS, "hidden": list(cfg.hidden),
            "activation": cfg.activation, "learn": cfg.learn, "advice": cfg.advice, "rules": rules_json(rules),
            "train": dataclasses.asdict(cfg), "num_timesteps": int(num_timesteps)}


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
    from wizard_env.mixed_vec_env import MixedVecEnv
    from wizard_env.vec_env import WizardVecEnv

    from .advice import AdviceVecEnv

    options: dict[str, Any] = dict(learn=cfg.learn, episode=cfg.episode, reward_scale=cfg.reward_scale)
    env: WizardVecEnv | MixedVecEnv
    if len(mix) == 1:
        env = WizardVecEnv(cfg.num_envs, seed=cfg.seed, **rules_json(mix[0]), **options)
    else:
        variant = {k: v for k, v in rules_json(mix[0]).items() if k not in ("num_players", "rounds")}
        env = MixedVecEnv(cfg.num_envs, [r.num_players for r in mix], seed=cfg.seed, rounds=rounds, **variant, **options)
    return AdviceVecEnv(env, seed=np.random.default_rng([cfg.seed, 9])) if cfg.advice else env


#: The range of every numeric setting, (least, most) with None for no bound: checked by ``check_config``
#: before a run writes anything. A rate, a scale or a clip range of 0 would train nothing: ABOVE_ZERO.
RANGES: dict[str, tuple[float | None, float | None]] = {
    "timesteps": (1, None), "num_envs": (1, None), "n_steps": (1, None), "batch_size": (1, None), "n_epochs": (1, None),
    "eval_every": (1, None), "eval_deals": (1, None), "checkpoint_every": (1, None), "snapshot_every": (1, None),
    "snapshots": (0, None), "bc_games": (0, None), "bc_epochs": (0, None), "torch_threads": (1, 256),
    "max_minutes": (0, None), "learning_rate": (0, 1), "ent_coef": (0, None), "reward_scale": (0, None),
    "bc_smoothing": (0, 1), "target_kl": (0, None), "gamma": (0, 1), "gae_lambda": (0, 1), "clip_range": (0, None),
}
ABOVE_ZERO = ("learning_rate", "reward_scale", "clip_range")
#: Memory a training game takes besides the engine: its rollout rows (observation, advice, mask; about 7 kB each).
ROLLOUT_BYTES_PER_STEP = 8 * 1024


def check_ranges(cfg, ranges: dict[str, tuple[float | None, float | None]], above_zero: tuple[str, ...]) -> None:
    """ValueError naming (as its option) the first setting of ``cfg`` outside its range in ``ranges``."""
    for name, (low, high) in ranges.items():
        value = getattr(cfg, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"--{name.replace('_', '-')} must be a finite number, not {value!r}")
        options.check_range(f"--{name.replace('_', '-')}", value, low, high, above=name in above_zero)


def check_config(cfg: TrainConfig) -> None:
    """ValueError naming the first impossible setting (as its option) or one that would not fit in memory."""
    from .evaluate import EVAL_BYTES_PER_GAME

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
    options.check_memory("--num-envs", cfg.num_envs, options.GAME_BYTES + cfg.n_steps * ROLLOUT_BYTES_PER_STEP)
    options.check_memory("--eval-deals", cfg.eval_deals, EVAL_BYTES_PER_GAME * max(cfg.mix))
    options.check_memory("--bc-games", cfg.bc_games, options.GAME_BYTES * len(cfg.mix))


def say(line: str) -> None:
    """Print a progress line above the progress bar, at once (stdout may be a file)."""
    from tqdm import tqdm

    tqdm.write(line, file=sys.stdout)
    sys.stdout.flush()


class Trainer:
    """One run: the env, the model, the opponent pool and the periodic bookkeeping."""

    def __init__(self, cfg: TrainConfig, rules: Rules, out: Path, quiet: bool = False, log=None,
                 rounds: str | int | list[int] = "standard"):
        check_config(cfg)
        self.cfg, self.rules, self.out, self.quiet, self.log = cfg, rules, Path(out), quiet, log or say
        self.mix = [Rules.make(n, rounds, rules.bidding.value, rules.bid_total_rule, rules.foresight) for n in cfg.mix]
        self.env = make_env(cfg, self.mix, rounds)
        self.rule = RuleAgent(seed=np.random.default_rng([cfg.seed, 5]))
        self.random = RandomAgent(seed=np.random.default_rng([cfg.seed, 6]))
        self.snapshots: list[PPOAgent] = []
        self.model = build_model(cfg, self.env, self.out)
        self.started = time.monotonic()
        self.curve = train_report.Curve(self.out / "curve.csv")
        self.capped = False  #: whether --max-minutes stopped PPO before --timesteps

    def elapsed(self) -> float:
        """Seconds since the trainer was built."""
        return time.monotonic() - self.started

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
        config = checkpoint_config(self.cfg, self.rules, self.model.num_timesteps)
        weights = policy_weights(self.model)
        folder = self.out / "checkpoints"
        save_checkpoint(folder / f"step-{self.model.num_timesteps:09d}.npz", config, weights)
        return save_checkpoint(folder / "latest.npz", config, weights)

    def evaluate(self):
        """Duplicate deals of the current policy against three RuleAgents, added to the curve."""
        from .evaluate import evaluate

        n = self.rules.num_players
        specs = ["ppo"] + ["rule"] * (n - 1)
        agents = [self.agent()] + [RuleAgent(seed=np.random.default_rng([self.cfg.seed, 8, s])) for s in range(n - 1)]
        result = evaluate(self.rules, specs, self.cfg.eval_deals, seed=10_000 + self.cfg.seed, agents=agents)
        self.curve.add(self.model.num_timesteps, time.monotonic() - self.started, result)
        return result

    def warm_start(self, teacher: PPOAgent | None = None) -> dict:
        """Clone RuleAgent's decisions (or the ``teacher``'s, in every phase) into the policy and value net."""
        from . import warm_start

        cfg = self.cfg
        # with advice every phase is cloned (cheaply: the policy copies its input), so that a run
        # started from this one with --init-from and another --learn begins at RuleAgent's level there too
        phases = "both" if cfg.advice or teacher else cfg.learn
        games = cfg.bc_games or {"bid": 2000, "both": 200, "play": 200}[phases]
        demos = warm_start.collect_mix(self.mix, games, cfg.seed, phases, cfg.episode, cfg.advice, teacher)
        return warm_start.clone(self.model.policy, demos, cfg.bc_epochs, cfg.reward_scale, cfg.seed, smoothing=cfg.bc_smoothing)

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
        missing = set(state) - set(weights)
        if missing:
            raise ValueError(f"checkpoint {path}: no weights for {sorted(missing)[0]} (a checkpoint of another network?)")
        self.model.policy.load_state_dict({k: torch.as_tensor(weights[k]) for k in state})
        if same_run:
            self.model.num_timesteps = int(config.get("num_timesteps", 0))
        return config, weights

    def train(self) -> None:
        """PPO until ``timesteps`` (counted over the whole run, resumed or not) or ``max_minutes``.

        Snapshots, checkpoints and evaluations come between rollouts, after the update, so the policy of a
        point labelled N steps is the one trained on N steps. The time cap drops the unfinished rollout.
        """
        from stable_baselines3.common.callbacks import BaseCallback
        from tqdm import tqdm

        cfg, trainer = self.cfg, self
        remaining = cfg.timesteps - self.model.num_timesteps
        if remaining <= 0:
            return
        # no bar in a log file: its \r frames would fill it
        bar = tqdm(total=cfg.timesteps, initial=self.model.num_timesteps, desc="train", unit="step",
                   file=sys.stderr, disable=self.quiet or not sys.stderr.isatty(), mininterval=2)
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
                bar.update(self.model.num_timesteps - bar.n)
                trainer.capped = time.monotonic() - trainer.started >= cfg.max_minutes * 60
                return not trainer.capped

        self.model.learn(remaining, callback=Bookkeeping(), reset_num_timesteps=False, tb_log_name="ppo")
        if self.capped:
            self.model.num_timesteps = trained[0]  # the unfinished rollout was not trained on
        bar.close()

    def report(self) -> None:
        """Evaluate and log one line (also to TensorBoard)."""
        row = train_report.row_of(self.evaluate())
        if hasattr(self.model, "_logger"):  # set up by learn(); the first evaluation comes before it
            self.model.logger.record("eval/diff_vs_rule", row["diff"])
            self.model.logger.record("eval/bid_accuracy", row["bid_accuracy"])
        if not self.quiet:
            self.log(train_report.format_row(self.model.num_timesteps, time.monotonic() - self.started, row))


def run_training(cfg: TrainConfig, rules: Rules, out: str | Path, resume: bool = False, quiet: bool = False,
                 log=None, rounds: str | int | list[int] = "standard") -> Trainer:
    """Warm start (or resume), train, save, evaluate and plot; returns the trainer."""
    out, log = Path(out), log or say
    check_config(cfg)  # every setting, before anything is written
    latest = out / "checkpoints" / "latest.npz"
    if resume and not latest.is_file():
        raise ValueError(f"--resume: no checkpoint at {latest}")
    if not resume and (latest.is_file() or (out / "config.json").exists()):  # config.json: a run of either backend
        raise ValueError(f"{out} already holds a run: pass --resume to continue it, or another --out")
    if resume:
        check_resume(out, cfg, rules)
    elif cfg.init_from:
        load_checkpoint(cfg.init_from)  # a bad checkpoint is refused before the run folder exists
    out.mkdir(parents=True, exist_ok=True)
    with run_lock(out):
        if resume:  # the folder is ours now: drop what a run killed mid-write left
            for stale in remove_temps(out) + remove_temps(out / "checkpoints"):
                log(f"removed {stale}, left by a run killed while writing")
        return _run(cfg, rules, out, resume, quiet, log, rounds, latest)


def check_resume(out: Path, cfg: TrainConfig, rules: Rules) -> None:
    """ValueError if ``out``'s run was started with other rules or another network than this command asks for."""
    saved = saved_config(out)
    if saved is None:
        return
    if saved.get("rules") != rules_json(rules):
        raise ValueError(f"--resume: {out} was trained with rules {saved.get('rules')}, this command asks for "
                         f"{rules_json(rules)}: pass the run's variant options")
    for key in ("learn", "mix", "episode", "advice"):
        if saved["train"].get(key) != getattr(cfg, key):
            raise ValueError(f"--resume: {out} was trained with --{key} {saved['train'].get(key)!r}, "
                             f"this command asks for {getattr(cfg, key)!r}")


def saved_config(out: Path) -> dict | None:
    """The config.json of the run in ``out`` (None if it has none); ValueError naming the file if it is damaged."""
    path = out / "config.json"
    if not path.is_file():
        return None
    try:
        saved = json.loads(path.read_text())
    except (ValueError, RecursionError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ValueError(f"{path}: not a run config ({type(e).__name__})") from None
    if not isinstance(saved, dict) or not isinstance(saved.get("train"), dict):
        raise ValueError(f"{path}: not a run config (no 'train' object)")
    train = saved["train"]
    try:
        check_hidden(train.get("hidden"))
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    if train.get("activation") not in ("relu", "tanh") or not isinstance(train.get("advice", False), bool):
        raise ValueError(f"{path}: activation must be relu or tanh and advice true or false, "
                         f"not {short_repr(train.get('activation'))} and {short_repr(train.get('advice', False))}")
    return saved


@contextmanager
def run_lock(out: Path):
    """Hold ``out/.lock`` (holding our pid) while a run writes into ``out``; ValueError if a live run holds it."""
    lock, mine = out / ".lock", out / f".lock.{os.getpid()}.tmp"
    mine.write_text(str(os.getpid()))
    try:
        for _ in range(2):
            try:
                os.link(mine, lock)  # atomic: the lock appears with our pid in it, or not at all
                break
            except FileExistsError:
                text = lock.read_text().strip() if lock.is_file() else ""
                if text.isdigit() and pid_alive(int(text)):
                    raise ValueError(f"{out} is in use by another wizard train (pid {text}): wait for it, or use another --out") from None
                lock.unlink(missing_ok=True)  # left by a run that was killed
        else:
            raise ValueError(f"{out}: could not take the run lock {lock}")
    finally:
        mine.unlink(missing_ok=True)
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _run(cfg: TrainConfig, rules: Rules, out: Path, resume: bool, quiet: bool, log, rounds, latest: Path) -> Trainer:
    trainer = Trainer(cfg, rules, out, quiet, log, rounds)
    start = None  # (config, weights) of the checkpoint a new run starts from
    if resume:
        trainer.resume(latest)
    elif cfg.init_from:
        start = trainer.resume(Path(cfg.init_from), same_run=False)
    train_report.write_json(out / "config.json", {"train": dataclasses.asdict(cfg), "rules": rules_json(rules)})
    if resume:
        log(f"resumed from {latest} at step {trainer.model.num_timesteps}")
    elif start is not None:
        log(f"started from the weights of {cfg.init_from}")
        if cfg.learn == "both" and start[0].get("learn") != "both":
            # the phase the other run left to RuleAgent drifted with the shared layers: clone the other
            # run's agent (its network where it learned, RuleAgent elsewhere) in every phase
            teacher = PPOAgent(*start, seed=np.random.default_rng([cfg.seed, 10]), source=cfg.init_from)
            stats = trainer.warm_start(teacher)
            log(f"cloned {cfg.init_from} as an agent (its phases, RuleAgent's in the others): agreement {stats['agreement']:.3f}")
        trainer.report()
    else:
        stats = trainer.warm_start()
        log(f"warm start: cloned {stats['samples']} RuleAgent decisions, agreement {stats['agreement']:.3f}, "
            f"value mse {stats['value_mse']:.3f} ({time.monotonic() - trainer.started:.0f} s)")
        trainer.report()
    trainer.snapshot()
    trainer.train()
    trainer.save()
    trainer.report()
    train_report.plot(trainer.curve.path, out / "curve.png")
    return trainer


def add_number_options(parser: argparse.ArgumentParser, defaults, docs: dict[str, str], ints: tuple[str, ...],
                       floats: tuple[str, ...]) -> None:
    """An option ``--a-b`` for each numeric field ``a_b`` of a config dataclass, with its doc line and default."""
    for name in ints:
        parser.add_argument(f"--{name.replace('_', '-')}", type=options.seed_type if name == "seed" else options.int_type,
                            default=getattr(defaults, name), help=f"{docs[name]} (default {getattr(defaults, name):,})")
    for name in floats:
        parser.add_argument(f"--{name.replace('_', '-')}", type=options.float_type, default=getattr(defaults, name),
                            help=f"{docs[name]} (default {getattr(defaults, name):g})")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``wizard train`` (the variant options are already there)."""
    d, docs = TrainConfig(), {k: v.replace("%", "%%") for k, v in field_docs(TrainConfig).items()}
    parser.add_argument("--out", type=options.path_type, default="runs/train", help="output folder (default runs/train)")
    parser.add_argument("--resume", action="store_true", help="continue from --out/checkpoints/latest.npz")
    parser.add_argument("--init-from", default="", metavar="CHECKPOINT",
                        help="a new run that starts from this checkpoint's weights (same --hidden and advice) instead of "
                        "the warm start, e.g. --learn both after a --learn bid run")
    parser.add_argument("--learn", choices=tuple(LEARNED_PHASES), default=d.learn,
                        help=f"{docs['learn']}; RuleAgent makes the others (default {d.learn})")
    add_number_options(parser, d, docs, ("timesteps", "seed", "num_envs", "n_steps", "batch_size", "n_epochs", "eval_every",
                                         "eval_deals", "checkpoint_every", "snapshot_every", "snapshots", "bc_games",
                                         "bc_epochs", "torch_threads"),
                       ("max_minutes", "learning_rate", "ent_coef", "reward_scale", "bc_smoothing", "target_kl",
                        "gae_lambda", "clip_range"))
    parser.add_argument("--episode", choices=("round", "game"), default=d.episode,
                        help=f"{docs['episode']} (default {d.episode})")
    parser.add_argument("--no-advice", dest="advice", action="store_false",
                        help="the policy reads only the observation, not RuleAgent's choice as well")
    parser.add_argument("--mix", default=",".join(map(str, d.mix)),
                        help=f"{docs['mix']} (default %(default)s); --players sets the count of the learning-curve evaluations")
    parser.add_argument("--pool", default=",".join(f"{k}={v}" for k, v in d.pool.items()),
                        help=f"{docs['pool']} (default %(default)s)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or progress lines")
    rllib = parser.add_argument_group("backend", "--backend rllib: multi-agent self-play PPO on Ray RLlib (the rllib extra; "
                                      "it reads --timesteps, --max-minutes, --seed, --learning-rate, --ent-coef, --clip-range, "
                                      "--gae-lambda, --reward-scale, --batch-size, --n-epochs, --checkpoint-every, "
                                      "--torch-threads and the options below)")
    rllib.add_argument("--backend", choices=("sb3", "rllib"), default="sb3",
                       help="sb3: MaskablePPO against the opponent pool (default); rllib: self-play on Ray RLlib")
    rllib.add_argument("--address", default="", metavar="HOST:PORT",
                       help="rllib: join the Ray cluster at this address (or auto); default: start a local Ray instance")
    rllib.add_argument("--num-env-runners", type=options.int_type, default=1, metavar="N",
                       help="rllib: Ray actors playing games, one CPU each (0: the driver plays them; default 1)")
    rllib.add_argument("--envs-per-runner", type=options.int_type, default=4, metavar="N",
                       help="rllib: games each env runner steps together (default 4)")
    rllib.add_argument("--iteration-steps", type=options.int_type, default=8000, metavar="N",
                       help="rllib: decisions sampled per PPO iteration (default 8,000)")


def parse_pool(text: str) -> dict[str, float]:
    """``rule=0.7,self=0.2,random=0.1`` as a dict; ValueError if malformed."""
    pool = {}
    for part in text.split(","):
        name, sep, weight = part.partition("=")
        try:
            value = options.float_type(weight)
        except argparse.ArgumentTypeError:
            raise ValueError(f"--pool {text!r}: expected name=weight pairs of finite numbers such as rule=0.7,self=0.2,random=0.1") from None
        if not sep:
            raise ValueError(f"--pool {text!r}: expected name=weight pairs such as rule=0.7,self=0.2,random=0.1")
        if name.strip() in pool:
            raise ValueError(f"--pool {text!r}: {name.strip()!r} is given twice")
        pool[name.strip()] = value
    return pool


def parse_mix(text: str) -> list[int]:
    """``3,4,5,6`` as a sorted list of distinct player counts; ValueError if malformed."""
    from wizard_env.mixed_vec_env import check_players

    try:
        counts = [int(part) for part in text.split(",")]
    except ValueError:
        raise ValueError(f"--mix {text!r}: expected player counts such as 3,4,5,6") from None
    try:
        return list(check_players(counts))
    except ValueError as e:
        raise ValueError(f"--mix {text!r}: {e}") from None


def run(args: argparse.Namespace) -> int:
    """``wizard train``."""
    from wizard_env.cli import make_rules, parse_rounds

    if args.backend == "rllib":
        from . import rllib_train

        parser = argparse.ArgumentParser()
        add_arguments(parser)
        return rllib_train.run(args, vars(parser.parse_args([])))
    for name, default in (("address", ""), ("num_env_runners", 1), ("envs_per_runner", 4), ("iteration_steps", 8000)):
        if getattr(args, name, default) != default:
            raise ValueError(f"--{name.replace('_', '-')} applies to --backend rllib only")

    # the train extra includes the eval extra: the evaluations during training are rated and plotted
    for package in ("torch", "stable_baselines3", "sb3_contrib", "tensorboard", "openskill", "matplotlib"):
        try:
            __import__(package)
        except ImportError:
            raise ValueError(
                f"wizard train needs {package}, from the train extras: pip install -c constraints.txt -e '.[train]'"
            ) from None

    rules = make_rules(args)
    fields = {f.name for f in dataclasses.fields(TrainConfig)}
    values = {k: v for k, v in vars(args).items() if k in fields and k not in ("pool", "hidden", "activation", "mix")}
    cfg = TrainConfig(**values, pool=parse_pool(args.pool), mix=parse_mix(args.mix))
    out = Path(args.out)
    saved = saved_config(out) if args.resume else None
    if saved is not None:  # a resumed run keeps its network (check_config checks what config.json says)
        train = saved["train"]
        cfg.hidden, cfg.activation, cfg.advice = train.get("hidden"), train.get("activation"), train.get("advice", False)
    trainer = run_training(cfg, rules, out, args.resume, args.quiet, rounds=parse_rounds(args.rounds))
    print(train_report.summary(trainer))
    return 0
