"""What every from-scratch baseline of ``wizard baseline`` shares: its arguments, the Q network, the run's folder.

A run learns in one setting (``wizard_env.envs.settings``) against the setting's opponents, with nothing from
RuleAgent: no advice input, no cloning, no RuleAgent numbers, no margins. Its folder (``--out``) holds:

- ``config.json``: the algorithm, its arguments (the budget among them: ``minutes`` of wall time and ``steps``
  learner decisions, whichever ends first), the rules, and once it stops what it did (``done``);
- ``checkpoints/latest.npz`` and ``step-N.npz``: the network in the ``wizard-ppo/1`` format (``PPOAgent``'s, the
  layers named as MaskablePPO's policy), which ``baseline:PATH`` plays greedily over the legal actions;
- ``state.pt``: what ``--resume`` needs besides (networks, optimizers, counters, the Generator's and torch's
  states); a resumed run starts new games (the games in play and a replay buffer are not kept);
- ``curve.csv``, ``curve.png``: duplicate-deal evaluations against the setting's opponents (``training.evaluation.evaluate``)
  every ``eval_every`` decisions, at the start and at the end.

Every file is written atomically; the folder is locked while a run uses it (``run_lock``). The first Ctrl-C stops
the run at the end of its step, after saving (``--resume`` continues), and exits with status 130.

The module runs past 400 lines because the arguments with their checks, the network and the run are what every
algorithm shares, each short, and read best beside each other.
"""

from __future__ import annotations

import dataclasses
import json
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from wizard_env.agents.ppo_agent import FORMAT, PPOAgent, save_checkpoint
from wizard_env.agents.registry import make_agent
from wizard_env.engine.game import NUM_ACTIONS
from wizard_env.engine.observation import OBS_SIZE, OBS_VERSION
from wizard_env.envs.settings import get_setting
from wizard_env.util.checks import GAME_BYTES, SEED_LIMIT, check_memory, check_seed
from wizard_env.util.files import remove_temps, write_atomic
from wizard_env.util.options import MAX_COUNT

from .. import train_report
from ..common import check_ranges, rules_json, run_lock, stop_on_interrupt
from ..progress import Progress
from ..run_folder import baseline, new_folder, resume_folder


@dataclass
class RunArgs:
    """What every baseline takes; each algorithm's ``Args`` adds its own fields."""

    setting: str = "wizard-3p-5r"  #: the named benchmark setting: its rules and its opponents
    seed: int = 0  #: seeds the Generator everything draws from (games, exploration, torch): same seed, same run
    minutes: float = 10.0  #: wall-time budget of the whole run (resumes included), evaluations included
    steps: int = 1_000_000  #: learner-decision budget (in self-play every seat's); the run stops at whichever ends first
    num_envs: int = 64  #: games played in lockstep (WizardVecEnv)
    hidden: list[int] = field(default_factory=lambda: [256, 256])  #: hidden layers of the network (ReLU)
    learning_rate: float = 1e-4  #: Adam's step size
    batch_size: int = 256  #: decisions per gradient step
    reward_scale: float = 0.01  #: round scores (about -100..+200) times this, to about -1..+2
    eval_every: int = 500_000  #: learner decisions between evaluations
    eval_deals: int = 200  #: duplicate deals per evaluation (each played in every seat rotation)
    checkpoint_every: int = 500_000  #: learner decisions between checkpoints
    torch_threads: int = 1  #: torch threads (one: on a busy 2-core machine two threads ran slower)


#: A range of numeric settings: (least, most), None for no least (MAX_COUNT where nothing else bounds the most).
Ranges = dict[str, tuple[float | None, float | None]]
#: The range of every numeric field of ``RunArgs`` (and of the algorithms' own, which add theirs).
RANGES: Ranges = {
    "minutes": (0, MAX_COUNT), "steps": (1, MAX_COUNT), "num_envs": (1, 65_536), "learning_rate": (0, 1),
    "batch_size": (1, MAX_COUNT), "reward_scale": (0, MAX_COUNT), "eval_every": (1, MAX_COUNT),
    "eval_deals": (1, MAX_COUNT), "checkpoint_every": (1, MAX_COUNT), "torch_threads": (1, 256),
}
#: The rates and scales whose least (0) is excluded: at 0 the run would learn nothing.
ABOVE_ZERO = ("learning_rate", "reward_scale")
#: The fields ``wizard baseline`` has an option for (``--seed``, ...); the others are given as ``--set NAME=VALUE``.
OPTIONS = ("setting", "seed", "minutes", "steps", "num_envs", "eval_every", "eval_deals", "checkpoint_every")
#: Fields a resumed run may change: the budget and the bookkeeping.
RESUME_MAY_CHANGE = ("minutes", "steps", "eval_every", "eval_deals", "checkpoint_every", "torch_threads")


def check_args(args: RunArgs, ranges: Ranges) -> None:
    """ValueError naming (as its option) the first argument out of range, an unknown setting, bad hidden layers, or
    games or evaluation deals that would not fit in memory: all before the run writes anything."""
    from wizard_env.agents.checkpoint import check_hidden

    from ..evaluation.evaluate import EVAL_BYTES_PER_GAME

    setting = get_setting(args.setting)
    check_seed(args.seed, "--seed")
    check_hidden(args.hidden, OBS_SIZE, name="hidden")
    # the budget and the bookkeeping have options of their own, the other settings are given with --set
    check_ranges(args, {**RANGES, **ranges}, ABOVE_ZERO, option_name)
    check_memory("--num-envs", args.num_envs, GAME_BYTES)
    check_memory("--eval-deals", args.eval_deals, EVAL_BYTES_PER_GAME * setting.num_players)


def option_name(name: str) -> str:
    """How the command line gives the argument ``name``: ``--eval-deals`` (it has an option) or ``--set queue``."""
    return f"--{name.replace('_', '-')}" if name in OPTIONS else f"--set {name}"


def check_learns(args: RunArgs, name: str, decisions: int) -> None:
    """ValueError naming ``--set name`` when learning would wait for more ``decisions`` than ``--steps`` allows: the
    run would end with the network it started with."""
    if decisions > args.steps:
        raise ValueError(f"{option_name(name)}={getattr(args, name)}: the first learning step waits for {decisions:,} "
                         f"decisions, more than --steps {args.steps:,}: the run would end untrained (give a smaller "
                         f"{name} or more --steps)")


# -- the network ---------------------------------------------------------------------------------


def q_network(hidden: list[int]):
    """An MLP from the observation to one output per action (ReLU), its layers named as MaskablePPO's policy so that
    its weights are a ``wizard-ppo/1`` checkpoint that ``PPOAgent`` plays (argmax of the outputs over legal actions)."""
    import torch

    class Extractor(torch.nn.Module):
        def __init__(self, policy_net: torch.nn.Sequential) -> None:
            super().__init__()
            self.policy_net = policy_net

    class QNetwork(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            layers: list[torch.nn.Module] = []
            for a, b in zip([OBS_SIZE, *hidden], hidden):
                layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
            self.mlp_extractor = Extractor(torch.nn.Sequential(*layers))
            self.action_net = torch.nn.Linear(([OBS_SIZE, *hidden])[-1], NUM_ACTIONS)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.action_net(self.mlp_extractor.policy_net(x))

    return QNetwork()


def masked(outputs, masks):
    """The outputs [k, NUM_ACTIONS] with illegal actions at -inf (``masks``: bool, numpy or torch)."""
    import torch

    return outputs.masked_fill(~torch.as_tensor(masks, dtype=torch.bool), -torch.inf)


def greedy(net, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The legal action of highest output per row, int64 [k]."""
    import torch

    with torch.no_grad():
        return masked(net(torch.as_tensor(observations)), masks).argmax(dim=1).numpy()


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row, int64 [k]."""
    return np.argmax(rng.random(masks.shape) * masks, axis=1)


def epsilon_greedy(net, observations: np.ndarray, masks: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """Greedy actions, each replaced by a random legal one with probability ``epsilon`` (draws: ``rng``)."""
    explore = rng.random(len(masks)) < epsilon
    actions = random_legal(masks, rng)  # drawn every step, so the later draws do not depend on the network
    if not explore.all():
        actions[~explore] = greedy(net, observations[~explore], masks[~explore])
    return actions


def linear(start: float, end: float, span: int, t: int) -> float:
    """``start`` moved linearly to ``end`` over ``span`` steps, ``end`` after."""
    return end + (start - end) * max(0.0, 1 - t / max(span, 1))


# -- the run -------------------------------------------------------------------------------------


class Run:
    """A baseline run in its folder: the budget, the Generator, saving and resuming, the curve (module docstring).

    Used as a context manager: ``with Run(...) as run:`` takes the folder, then ``run.track(...)`` names the torch
    objects to save (and, resuming, loads them), ``run.going()`` says whether to go on and ``run.advance(...)``
    counts decisions, evaluating and saving when due; ``run.finish(net)`` saves and evaluates the last network.
    """

    def __init__(self, algo: str, args: RunArgs, out: str | Path, resume: bool = False, quiet: bool = False,
                 log: Callable[[str], object] = print):
        self.algo, self.args, self.out, self.resume, self.quiet, self.log = algo, args, Path(out), resume, quiet, log
        self.setting = get_setting(args.setting)
        self.rules = self.setting.rules()
        self.decisions, self.earlier = 0, 0.0
        self.extra: dict[str, Any] = {}  #: the algorithm's own counters, saved and restored
        self.tracked: dict[str, Any] = {}
        self.stopped_by = ""
        self._stack = ExitStack()
        self._saved: dict[str, Any] | None = None

    # -- the folder --------------------------------------------------------------------------------

    def __enter__(self) -> "Run":
        out, state = self.out, self.out / "state.pt"
        if self.resume:
            check_same_run(out, self.algo, self.args)
        else:
            new_folder(out, baseline(self.algo))
        out.mkdir(parents=True, exist_ok=True)
        self._stack.enter_context(run_lock(out, "wizard baseline"))
        try:
            if self.resume:
                if state.is_file():  # run_folder: there once the run saved, else none was saved
                    self._saved = _load_state(state)
                for stale in remove_temps(out) + remove_temps(out / "checkpoints"):
                    self.log(f"removed {stale}, left by a run killed while writing")
            self._start()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _start(self) -> None:
        import torch

        torch.set_num_threads(self.args.torch_threads)
        self.rng = np.random.default_rng(self.args.seed)
        torch.manual_seed(int(self.rng.integers(SEED_LIMIT)))
        if self._saved is not None:
            self.rng.bit_generator.state = self._saved["rng"]
            torch.set_rng_state(self._saved["torch_rng"])
            self.decisions, self.earlier = int(self._saved["decisions"]), float(self._saved["wall_s"])
            self.extra = dict(self._saved["extra"])
            self.log(f"resumed from {self.out / 'state.pt'} at {self.decisions:,} decisions")
        elif self.resume:
            self.log(f"{self.out} has no state yet (stopped before the first checkpoint): starting the run again")
        self._write_config()
        self.curve = train_report.Curve(self.out / "curve.csv", learner="baseline", steps="decisions")
        self.started = time.monotonic()
        self.stop_asked = self._stack.enter_context(stop_on_interrupt())
        self.progress = self._stack.enter_context(
            Progress(f"{self.algo}", self.args.steps, "decision", self.quiet, self.log, initial=self.decisions, leave=True,
                     budget=self.args.minutes * 60, elapsed=self.elapsed))  # as far as the budget that binds
        self.marks = {key: self.decisions // every for key, every in
                      (("eval", self.args.eval_every), ("save", self.args.checkpoint_every))}

    def _write_config(self, done: dict | None = None) -> None:
        train_report.write_json(self.out / "config.json", {**run_header(self.algo, self.args), "rules": rules_json(self.rules),
                                                           **({"done": done} if done else {})})

    def track(self, **objects: Any) -> None:
        """Save these torch modules and optimizers with the run (by name); resuming, load their saved state."""
        self.tracked.update(objects)
        if self._saved is not None:
            for name, obj in objects.items():
                obj.load_state_dict(self._saved["objects"][name])

    def begin(self, net) -> None:
        """For a run that starts (not one resumed): ``net`` untrained as the first checkpoint and the curve's first point."""
        if self.decisions == 0:
            self.save(net)
            self.evaluate(net)

    def seed(self) -> int:
        """A seed drawn from the run's Generator (for a VecEnv or an agent)."""
        return int(self.rng.integers(SEED_LIMIT))

    # -- the loop ----------------------------------------------------------------------------------

    def elapsed(self) -> float:
        """The run's seconds, over all its sessions."""
        return self.earlier + time.monotonic() - self.started

    def going(self) -> bool:
        """Whether to take another step: budget left and no Ctrl-C."""
        if self.stop_asked():
            self.stopped_by = "interrupt"
        elif self.decisions >= self.args.steps:
            self.stopped_by = "steps"
        elif self.elapsed() >= self.args.minutes * 60:
            self.stopped_by = "minutes"
        return not self.stopped_by

    def advance(self, decisions: int, net) -> None:
        """``decisions`` more learner decisions; an evaluation and a checkpoint of ``net`` when due."""
        self.decisions += int(decisions)
        self.progress.to(self.decisions)
        for key, every, action in (("save", self.args.checkpoint_every, self.save),
                                   ("eval", self.args.eval_every, self.evaluate)):
            if self.decisions // every > self.marks[key]:
                self.marks[key] = self.decisions // every
                action(net)

    def finish(self, net) -> dict:
        """Save ``net`` and the state; evaluate it and plot the curve (not after Ctrl-C, which is raised again as
        KeyboardInterrupt once saved); what the run did."""
        budgets = {"minutes": f"--minutes {self.args.minutes:g}", "steps": f"--steps {self.args.steps:,}"}
        if (self.stopped_by or "steps") in budgets:
            self.progress.finish(budgets[self.stopped_by or "steps"])
        self.progress.close()
        self.save(net)
        done = {"decisions": self.decisions, "wall_s": round(self.elapsed(), 1), "stopped_by": self.stopped_by or "steps"}
        self._write_config(done)
        if self.stopped_by == "interrupt":
            self.log(f"stopped by Ctrl-C at {self.decisions:,} decisions, saved: --resume continues")
            raise KeyboardInterrupt
        if self.curve.last is None or self.marks.get("evaluated") != self.decisions:
            self.evaluate(net)
        train_report.plot(self.curve.path, self.out / "curve.png", "learner decisions", learner="baseline")
        return done

    # -- saving and evaluating ---------------------------------------------------------------------

    def agent(self, net) -> PPOAgent:
        """``net`` as the agent ``baseline:PATH`` would load from its checkpoint."""
        return PPOAgent(self.checkpoint_config(), weights(net), seed=np.random.default_rng([self.args.seed, 7]),
                        source=f"{self.algo} network")

    def checkpoint_config(self) -> dict:
        """The JSON config saved with the weights: a ReLU network on the observation alone, every phase learned."""
        return {"format": FORMAT, "obs_version": OBS_VERSION, "obs_size": OBS_SIZE, "num_actions": NUM_ACTIONS,
                "hidden": list(self.args.hidden), "activation": "relu", "learn": "both", "advice": False,
                "rules": rules_json(self.rules), "num_timesteps": self.decisions, "wall_s": round(self.elapsed(), 1),
                "train": {"method": f"baseline-{self.algo}", "setting": self.setting.name, **dataclasses.asdict(self.args)}}

    def save(self, net) -> None:
        """Write the checkpoints of ``net`` and the state (each file atomically)."""
        import torch

        config, folder = self.checkpoint_config(), self.out / "checkpoints"
        save_checkpoint(folder / f"step-{self.decisions:09d}.npz", config, weights(net))
        save_checkpoint(folder / "latest.npz", config, weights(net))
        state = {"decisions": self.decisions, "wall_s": self.elapsed(), "rng": self.rng.bit_generator.state,
                 "torch_rng": torch.get_rng_state(), "extra": self.extra,
                 "objects": {name: obj.state_dict() for name, obj in self.tracked.items()}}
        write_atomic(self.out / "state.pt", lambda file: torch.save(state, file), binary=True)

    def evaluate(self, net) -> None:
        """Duplicate deals of ``net``'s greedy agent against the setting's opponents, added to the curve."""
        from ..evaluation.evaluate import evaluate, seatings

        n, args = self.rules.num_players, self.args
        opponents = [make_agent(spec, seed=np.random.default_rng([args.seed, 8, i]))
                     for i, spec in enumerate(self.setting.opponents)]
        with Progress("evaluation", args.eval_deals * len(seatings(n)) * self.rules.num_rounds, "round", True, self.log) as bar:
            result = evaluate(self.rules, ["baseline", *self.setting.opponents], args.eval_deals, seed=10_000 + args.seed,
                              agents=[self.agent(net), *opponents], progress=bar.update)
        self.curve.add(self.decisions, self.elapsed(), result)
        self.marks["evaluated"] = self.decisions
        if not self.quiet:
            row = train_report.row_of(result, "baseline")
            self.log(train_report.format_row(self.decisions, self.elapsed(), row, "baseline"))


def run_header(algo: str, args: RunArgs) -> dict:
    """What config.json says of a baseline run besides its rules and ``done``: the algorithm, the setting, the
    arguments and the budget."""
    return {"algo": algo, "setting": args.setting, "args": dataclasses.asdict(args),
            "budget": {"minutes": args.minutes, "decisions": args.steps}}


def check_same_run(out: Path, algo: str, args: RunArgs) -> None:
    """ValueError unless ``out`` holds a run of ``algo`` that can go on (``run_folder.resume_folder``) with ``args``
    (but for ``RESUME_MAY_CHANGE``)."""
    resume_folder(out, (baseline(algo),))
    saved = _saved_config(out / "config.json")
    before, now = saved["args"], dataclasses.asdict(args)
    for key, value in now.items():
        if key not in RESUME_MAY_CHANGE and before.get(key) != value:
            raise ValueError(f"--resume: {out} was run with {key} {before.get(key)!r}, this command asks for {value!r}")


def weights(net) -> dict[str, np.ndarray]:
    """The network's parameters as numpy arrays under their torch names."""
    return {k: v.detach().cpu().numpy() for k, v in net.state_dict().items()}


def _load_state(path: Path) -> dict:
    """The saved state of a run; ValueError naming the file if it cannot be read."""
    import torch

    try:
        return torch.load(path, weights_only=True)
    except Exception as e:  # a damaged or foreign file: one line naming it
        raise ValueError(f"--resume: {path} is damaged or not a baseline's state ({type(e).__name__}): start a new run") from None


def _saved_config(path: Path) -> dict:
    """A baseline run's config.json; ValueError naming the file if it is damaged or another command's."""
    saved = _read_json(path)
    if not isinstance(saved, dict) or not isinstance(saved.get("args"), dict):
        raise ValueError(f"{path}: not a baseline's config (no 'args' object): a run of another command?")
    return saved


def saved_args(out: str | Path) -> dict | None:
    """The arguments of the baseline run in ``out``; None where there is no config.json or another command's (such as
    ``wizard train``'s, which ``maskable-ppo`` writes); ValueError naming a damaged file."""
    path = Path(out) / "config.json"
    if not path.is_file():
        return None
    saved = _read_json(path)
    args = saved.get("args") if isinstance(saved, dict) else None
    return args if isinstance(args, dict) else None


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text())
    except (ValueError, RecursionError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ValueError(f"{path}: not a baseline's config ({type(e).__name__})") from None
