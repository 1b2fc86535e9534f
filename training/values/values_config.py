"""The settings of ``wizard train-values`` (``ValuesConfig``), their checks, and a saved run's settings read back
(``wizard_env.training.values.train_values`` runs them).

A run saves its settings as config.json and inside every checkpoint. ``check_config`` names the first impossible
setting (as its option) before anything is written, ``read_run_config`` reads config.json back for ``--resume``,
``check_resume`` refuses a resume that changes the run (naming what it changes), ``saved_settings`` and
``saved_rules`` give a resume the run's settings for the options it does not give, ``RESUME_MAY_CHANGE``
lists what a resume may change and ``LATER_DEFAULTS`` gives the settings added since a run
was saved the value such a run had, so runs saved before them keep resuming and loading.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

from wizard_env.agents.checkpoint import check_hidden, portable_path
from wizard_env.agents.ppo_agent import FORMAT, LEARNED_PHASES, load_checkpoint
from wizard_env.engine.actions import NUM_ACTIONS
from wizard_env.engine.observation import OBS_SIZE, OBS_VERSION
from wizard_env.engine.rules import Rules
from wizard_env.envs.settings import SETTINGS
from wizard_env.util import options
from wizard_env.util.checks import short_repr
from wizard_env.util.options import MAX_COUNT

from . import rollout_values as rv
from ..common import check_ranges, json_rules, rules_json
from ..evaluation.evaluate import EVAL_BYTES_PER_GAME
from ..evaluation.gate import check_rule
from .opponent_pool import PREVIOUS, check_pool, names_checkpoint
from .ray_collect import require_ray
from .zero import is_zero


@dataclass
class ValuesConfig:
    """Everything that defines a run (saved as config.json and inside every checkpoint)."""

    learn: str = "both"  #: phases the network decides: both, bid (trump and bids) or play
    mix: list[int] = field(default_factory=lambda: [3, 4, 5, 6])  #: player counts of the games (one network)
    iterations: int = 1  #: policy-improvement steps (each: data, fit, evaluation)
    samples: int = 300_000  #: decisions with action values per iteration
    games: int = 192  #: games per data chunk (one player count each, in turn)
    share: float = 0.25  #: share of the decisions with a choice that get action values
    targets: str = "rollout"  #: the action values: rollout (each action's round score in the true deal, played out once by the current agent) or search (its mean over --search-samples deals redrawn from what the player sees)
    search_samples: int = 8  #: with --targets search: deals redrawn per decision, each action played out in every one
    search_top: int = 0  #: with --targets search: play out only the K legal actions the previous iteration's network rates highest, and RuleAgent's choice (with --no-advice the action played; 0: every legal action; iteration 0 of a run without --start searches every one)
    search_infer: bool = False  #: with --targets search: draw 8 deals for each one kept and keep --search-samples of them by the chance of the bids the player has seen under the rollout policy's judgement (the network's values, RuleAgent's where RuleAgent plays; random play: every deal alike), systematic draws, as the `search` agent does
    rule_tables: float = 0.0  #: share of the games played by the network in one seat against RuleAgents in the others (only its decisions kept, their rollouts with RuleAgents there too); the rest: the network at every seat
    pool_tables: float = 0.0  #: share of the games played by the network in one seat against one agent of --pool in the others, drawn per game (only its decisions kept, the rollouts with that agent there too); other games than --rule-tables' (the two sum to at most 1)
    pool: list[str] = field(default_factory=list)  #: the agents of --pool-tables, by comma: agent specs that play from observations (ppo-v3, ppo-v2, rule), checkpoint paths, or previous (the agents that collected the run's data so far: --start, or RuleAgent, and iter-0 .. iter-(k-1) when iteration k collects)
    workers: int = 2  #: processes collecting data
    margin: float = 3.0  #: points a deviation from RuleAgent's choice must promise (0: plain argmax)
    play_margin: float | None = None  #: the margin of card play alone (default: --margin)
    hidden: list[int] = field(default_factory=lambda: [256, 256])  #: hidden layers of the network
    features: bool = False  #: the network also reads RuleAgent's numbers for every action (its chances of a card holding the trick, of a bid being met)
    data: str = "last"  #: what an iteration fits: its own data (last) or the data of every iteration so far (all)
    data_from: list[str] = field(default_factory=list)  #: earlier train-values runs (their folders, by comma) whose data every fit of this run also reads, before the run's own: the chunks of every iteration each one's config.json names (fewer where --patience stopped it), all finished, of a run that reads RuleAgent's advice as this one does, or not
    epochs: int = 4  #: passes over the data of a fit
    learning_rate: float = 1e-3  #: Adam's step size, decayed linearly to 5% over the fit
    batch_size: int = 512  #: decisions per gradient step
    seed: int = 0  #: seeds the games, the agents and torch
    eval_deals: int = 200  #: duplicate deals per evaluation (each played in every seat rotation)
    torch_threads: int = 1  #: torch threads (one: on a busy 2-core machine two threads ran 7x slower)
    backend: str = "local"  #: where the data chunks are collected: local (worker processes) or ray (Ray tasks)
    address: str = ""  #: with --backend ray: the Ray cluster to join (HOST:PORT or auto; default: a local Ray instance)
    start: str = ""  #: a train-values checkpoint that collects iteration 0's data and whose weights its fit starts from (default: RuleAgent collects, the fit starts fresh)
    gate: int = 0  #: after each fit, duplicate deals of the new network against the one whose weights it started from, head to head and in self-play: it is kept (collects the next iteration, becomes latest.npz) only if it wins head to head and does not lose in self-play (--gate-rule says how sure), else the next iteration collects and fits from the earlier network again (0: no gate, every iteration kept); more deals keep fewer worse fits: one 1 point worse in self-play passes 1,000 deals about one time in four, 4,000 one in nine
    gate_rule: str = "means"  #: with --gate, when a new network is kept: means (it wins head to head and does not lose in self-play, on the means over the gate's deals) or climbs (as means, and the head-to-head interval lies above 0: a step wizard eval-iterations would call climbs on those deals; a level fit is rejected, and so is a gain smaller than the deals can show)
    patience: int = 0  #: with --gate, stop the run once this many iterations in a row were rejected (the gate cannot tell the fits from the network that keeps collecting), before --iterations; a resume with a larger value, or 0, goes on (0: play every iteration)
    soup: bool = False  #: with --gate, an iteration after rejected ones is judged, and kept, as the mean of the weights of its fit and theirs (every fit since the network that collects, all fitted from its weights): a rejected fit is not lost, and the mean of two such fits from wizard-v10 was better than each alone (docs/training.md)
    confirm: int = 0  #: with --gate, a network the gate keeps plays the gate's tables again on this many deals of their own and is kept only if --gate-rule keeps it there too: the gate's figures lean high over the networks it keeps (they are the deals that chose them), the confirming deals' do not (0: no confirmation)
    advice: bool = True  #: the network reads RuleAgent's choice and plays with --margin over it; False (--no-advice): from scratch, the observation alone, random weights, plain argmax, random play and rollouts in iteration 0, no RuleAgent but at its tables
    zero: bool = False  #: with --no-advice, from the rules alone (training/values/zero.py): no RuleAgent in training at all (no --rule-tables; --pool of previous and zero checkpoints; --start and --data-from only zero runs); iteration 0 collects with a network of random weights drawn from --seed (checkpoints/init.npz), which also starts the first fit; RuleAgent stays in the evaluations


#: The range of every numeric setting, (least, most) (MAX_COUNT where nothing else bounds it), checked before a run writes anything.
RANGES: dict[str, tuple[float | None, float | None]] = {
    "iterations": (1, MAX_COUNT), "samples": (1, MAX_COUNT), "games": (1, MAX_COUNT), "share": (0, 1),
    "workers": (1, 256), "margin": (0, MAX_COUNT), "epochs": (1, MAX_COUNT), "learning_rate": (0, 1),
    "batch_size": (1, MAX_COUNT), "eval_deals": (1, MAX_COUNT), "torch_threads": (1, 256),
    "search_samples": (1, MAX_COUNT), "search_top": (0, MAX_COUNT), "rule_tables": (0, 1), "pool_tables": (0, 1),
    "gate": (0, MAX_COUNT), "patience": (0, MAX_COUNT), "confirm": (0, MAX_COUNT),
}
ABOVE_ZERO = ("share", "learning_rate")
#: What ``--data`` may be. ``all`` fits the values of the mix of every policy so far (as fictitious play
#: does), which measured better than ``last`` in self-play: see the model card.
DATA = ("last", "all")
#: What ``--backend`` may be: the same chunks either way (``wizard_env.training.values.ray_collect``).
BACKENDS = ("local", "ray")
#: What ``--targets`` may be: values of one continuation in the true deal (rollout), or the mean over deals the
#: player may believe (search, ``agents.rollouts.search_values``: what ``pimc`` chooses by).
TARGETS = ("rollout", "search")
#: Settings a resumed run may change: they act only on the iterations still to come, and each checkpoint
#: records the settings it was made with.
RESUME_MAY_CHANGE = ("iterations", "workers", "eval_deals", "data", "epochs", "learning_rate", "backend", "address",
                     "gate_rule", "patience", "soup", "confirm")
#: Settings added after runs were saved without them, and the value such a run had.
LATER_DEFAULTS = {"data": "last", "features": False, "backend": "local", "address": "", "targets": "rollout",
                  "search_samples": 8, "start": "", "search_top": 0, "rule_tables": 0.0, "pool_tables": 0.0, "pool": [],
                  "advice": True, "data_from": [], "gate": 0, "search_infer": False, "gate_rule": "means",
                  "patience": 0, "soup": False, "confirm": 0, "zero": False}
#: The settings that are lists of strings (the other lists hold integers).
STRING_LISTS = ("pool", "data_from")


def check_config(cfg: ValuesConfig) -> None:
    """ValueError naming the first impossible setting (as its option) or one that would not fit in memory."""
    if cfg.learn not in LEARNED_PHASES:
        raise ValueError(f"--learn must be one of {', '.join(LEARNED_PHASES)}, not {cfg.learn!r}")
    if cfg.data not in DATA:
        raise ValueError(f"--data must be one of {', '.join(DATA)}, not {cfg.data!r}")
    if cfg.backend not in BACKENDS:
        raise ValueError(f"--backend must be one of {', '.join(BACKENDS)}, not {short_repr(cfg.backend)}")
    if cfg.address and cfg.backend != "ray":
        raise ValueError("--address applies to --backend ray only")
    if cfg.targets not in TARGETS:
        raise ValueError(f"--targets must be one of {', '.join(TARGETS)}, not {short_repr(cfg.targets)}")
    if cfg.targets != "search" and cfg.search_samples != ValuesConfig.search_samples:
        raise ValueError("--search-samples applies to --targets search only")
    if cfg.targets != "search" and cfg.search_top:
        raise ValueError("--search-top applies to --targets search only")
    if cfg.targets != "search" and cfg.search_infer:
        raise ValueError("--search-infer applies to --targets search only")
    check_ranges(cfg, RANGES, ABOVE_ZERO)
    for option, deals, none in (("--gate", cfg.gate, "no gate"), ("--confirm", cfg.confirm, "no confirmation")):
        if deals == 1:  # an interval over deals needs two of them
            raise ValueError(f"{option} must be 0 ({none}) or at least 2 deals, not 1")
        options.check_memory(option, deals, EVAL_BYTES_PER_GAME * max(cfg.mix))
    check_rule(cfg.gate_rule)
    if cfg.gate_rule != ValuesConfig.gate_rule and not cfg.gate:
        raise ValueError("--gate-rule applies with --gate only (the deals a gate plays)")
    if cfg.patience and not cfg.gate:
        raise ValueError("--patience applies with --gate only (it counts the iterations the gate rejected)")
    if cfg.soup and not cfg.gate:
        raise ValueError("--soup applies with --gate only (it averages the fits the gate rejected)")
    if cfg.confirm and not cfg.gate:
        raise ValueError("--confirm applies with --gate only (it plays again the tables of a network the gate kept)")
    if not cfg.advice:
        check_from_scratch(cfg)
    if cfg.zero:
        check_zero(cfg)
    if cfg.play_margin is not None:
        check_ranges(cfg, {"play_margin": RANGES["margin"]}, ())
    if not cfg.hidden or any(h < 1 for h in cfg.hidden):
        raise ValueError(f"--hidden must be positive layer sizes, not {cfg.hidden}")
    check_hidden(cfg.hidden, rv.input_width(cfg.features, cfg.advice), name="--hidden")  # the checkpoint's limits, before any work
    options.check_memory("--samples", cfg.samples, SAMPLE_BYTES)
    options.check_memory("--games", cfg.games * cfg.workers, options.GAME_BYTES * 8)  # with the rollouts' copies
    if cfg.targets == "search":  # the copies again in every redrawn deal
        drawn = rv.INFER_OVERSAMPLE if cfg.search_infer else 1  # the deals drawn, of which --search-samples are kept
        options.check_memory("--search-samples", cfg.search_samples, options.GAME_BYTES * 8 * drawn * cfg.games * cfg.workers)
    if cfg.backend == "ray":
        require_ray()  # MissingExtra naming the rllib extra, before anything is written
    if cfg.start:
        check_start(cfg)
    check_pool(cfg.pool, cfg.pool_tables, cfg.rule_tables, cfg.mix)


def check_from_scratch(cfg: ValuesConfig) -> None:
    """ValueError naming the first option that needs RuleAgent beside ``--no-advice`` (``advice`` False)."""
    needs_rule = [("--features", cfg.features, "feeds RuleAgent's numbers to the network, which reads the observation alone"),
                  ("--margin", cfg.margin != 0, "is a margin over RuleAgent's choice, and the network plays the plain "
                   "argmax of its values (--margin 0)"),
                  ("--play-margin", cfg.play_margin is not None, "is a margin over RuleAgent's choice, and the network "
                   "plays the plain argmax of its values"),
                  (f"--learn {cfg.learn}", cfg.learn != "both", "leaves the other phase to RuleAgent, and the network "
                   "makes every decision (--learn both)")]
    for option, given, why in needs_rule:
        if given:
            raise ValueError(f"{option} and --no-advice: {option.split()[0]} {why}")


def check_start(cfg: ValuesConfig) -> None:
    """ValueError naming ``--start``'s file unless it is a network of the run's shape (``--hidden``, ``--features``)
    that reads today's observation and, as the run's does, RuleAgent's advice or (``--no-advice``) not, deciding every
    phase: the run's first fit starts from its weights."""
    try:
        config, _ = load_checkpoint(cfg.start)
    except ValueError as e:  # a missing, damaged or foreign file, named
        raise ValueError(f"--start: {e}") from None
    hidden, features = config.get("hidden"), bool(config.get("features"))
    if cfg.advice and not config.get("advice") or config.get("obs_version") != OBS_VERSION:
        raise ValueError(f"--start {cfg.start}: not a network of wizard train-values (it must read RuleAgent's advice "
                         f"and observation version {OBS_VERSION})")
    if not cfg.advice and (config.get("advice") or config.get("learn", "both") != "both"):
        raise ValueError(f"--start {cfg.start}: it reads RuleAgent's advice or leaves a phase to RuleAgent; a --no-advice "
                         "run starts from a network that reads the observation alone and makes every decision")
    if hidden != list(cfg.hidden) or features != cfg.features:
        wanted = f"--hidden {','.join(map(str, hidden or []))}" + (" --features" if features else "")
        raise ValueError(f"--start {cfg.start}: its network is {'x'.join(map(str, hidden or []))}"
                         f"{' with' if features else ' without'} RuleAgent's numbers; pass {wanted} to fit from its weights")


#: Memory of one decision held for the fit: twice the most its compact form takes, for the minibatches and the chunk read.
SAMPLE_BYTES = 2 * rv.DECISION_BYTES


def _fits(value: object, default: object) -> bool:
    """Whether a config.json value is of the kind of a setting with this default."""
    number = not isinstance(value, bool) and isinstance(value, (int, float))
    if default is None or isinstance(default, float) and not isinstance(default, bool):
        return number or default is None and value is None
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int):
        return type(value) is int
    if isinstance(default, list):  # of the type of its first element (integers for an empty one)
        return isinstance(value, list) and all(type(v) is (type(default[0]) if default else int) for v in value)
    return isinstance(value, type(default))


def check_resume(before: dict, cfg: ValuesConfig, rules: dict, out: Path, rounds: object = None) -> None:
    """ValueError unless ``cfg``, ``rules`` (``rules_json``) and ``rounds`` (the mix's ``--rounds``; a run saved
    before config.json held them is not checked for them) continue the run in ``out`` whose config.json is
    ``before``: the same settings but for ``RESUME_MAY_CHANGE``. The message names every changed setting with the
    run's value, and the options to leave out (``wizard train-values --resume`` keeps the run's settings)."""
    now, kept = dataclasses.asdict(cfg), saved_settings(before)
    changed = [k for k in now if k not in RESUME_MAY_CHANGE and kept.get(k) != now[k]]
    may = ", ".join(f"--{k.replace('_', '-')}" for k in RESUME_MAY_CHANGE)
    if changed:
        was = ", ".join(as_option(k, kept.get(k)) or f"no --{k.replace('_', '-')}" for k in changed)
        drop = ", ".join(f"--{k.replace('_', '-')}" for k in changed)
        raise ValueError(f"--resume: {out} was started with {was}; leave out {drop} to keep the run's settings (only "
                         f"{may} may change)")
    if before.get("rules") != rules or "rounds" in before and before["rounds"] != rounds:
        was = f"rules {before.get('rules')}" if before.get("rules") != rules else f"--rounds {before['rounds']!r}"
        raise ValueError(f"--resume: {out} was started with {was}; leave out the variant options and --setting to keep "
                         "the run's rules")


def saved_settings(config: dict) -> dict:
    """The settings of a saved run (config.json as ``read_run_config`` reads it), a setting added since with the value
    such a run had (``LATER_DEFAULTS``)."""
    train = config["train"]
    return {f.name: train[f.name] if f.name in train else LATER_DEFAULTS[f.name]
            for f in dataclasses.fields(ValuesConfig) if f.name in train or f.name in LATER_DEFAULTS}


def saved_rules(config: dict, path: Path) -> tuple[Rules, str | int | list[int], str | None]:
    """The rules of a saved run (config.json as ``read_run_config`` reads it, from ``path``), the ``--rounds`` of its
    player mix and the name of its setting (None without one); ValueError naming ``path`` where they are not a game's.
    A run saved before config.json held its ``--rounds`` played the standard rounds where its rules have them, or
    else its rules' hand sizes at every player count."""
    try:
        rules = json_rules(config["rules"])
        rounds = config.get("rounds")
        if rounds is None:
            standard = rules.hand_sizes == Rules.make(rules.num_players, "standard").hand_sizes
            rounds = "standard" if standard else list(rules.hand_sizes)
        Rules.make(rules.num_players, rounds)  # a --rounds that makes a game
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"--resume: {path} is damaged (its 'rules' or 'rounds' make no game: {str(e)[:100]}): repair "
                         "it, or pass the run's variant options (--players, --rounds, ...) or --setting") from None
    setting = config.get("setting")
    return rules, rounds, setting if isinstance(setting, str) and setting in SETTINGS else None


def earlier_runs(cfg: ValuesConfig, out: Path) -> list[tuple[Path, ValuesConfig, Rules, str | int | list[int]]]:
    """The runs of ``--data-from``: each folder with its settings, rules and ``--rounds``; ValueError naming the first
    folder that is ``out``, is named twice, holds no readable config.json, or whose decisions are stored with
    RuleAgent's choice where this run's are stored with the action played (``--no-advice``), or the other way round."""
    runs = []
    for i, folder in enumerate(map(Path, cfg.data_from)):
        where = f"--data-from {folder}"
        if folder.resolve() == out.resolve():
            raise ValueError(f"{where}: that is this run's own folder (--data all fits its own earlier iterations)")
        if any(folder.resolve() == Path(other).resolve() for other in cfg.data_from[:i]):
            raise ValueError(f"{where}: named twice; name each run once")
        path = folder / "config.json"
        if not path.is_file():
            raise ValueError(f"{where}: no wizard train-values run there (no config.json)")
        try:
            config = read_run_config(path)
            rules, rounds, _ = saved_rules(config, path)
        except ValueError as e:
            raise ValueError(f"{where}: {str(e).removeprefix('--resume: ')}") from None
        run = ValuesConfig(**saved_settings(config))
        if cfg.zero:
            check_earlier(folder, config)
        if run.advice != cfg.advice:
            stored = {True: "RuleAgent's choice", False: "the action played (--no-advice)"}
            raise ValueError(f"{where}: its decisions are stored with {stored[run.advice]}, this run's with {stored[cfg.advice]}")
        runs.append((folder, run, rules, rounds))
    return runs


def as_option(key: str, value: object) -> str:
    """The ``wizard train-values`` option that sets the config's ``key`` to ``value`` ("" where a run without the
    option has it: a flag off, no --start, no --play-margin)."""
    option = f"--{key.replace('_', '-')}"
    if key == "advice":
        return "" if value else "--no-advice"
    if isinstance(value, bool):
        return option if value else ""
    if value is None or value == "" or value == []:
        return ""
    return f"{option} {','.join(map(str, value)) if isinstance(value, list) else value}"


def read_run_config(path: Path) -> dict:
    """A run's config.json, checked against what ``run_training`` writes; ValueError naming it, what is wrong and
    how to recover."""
    recovery = "repair it, or delete it and pass --resume with the run's options (they are then taken as the run's)"
    try:
        config = json.loads(path.read_bytes())
    except OSError as e:
        raise ValueError(f"--resume: cannot read {path} ({e.strerror or e})") from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise ValueError(f"--resume: {path} is not valid JSON ({str(e)[:100]}): {recovery}") from None
    problem = None
    if not isinstance(config, dict) or not isinstance(config.get("train"), dict) or not isinstance(config.get("rules"), dict):
        what = type(config).__name__ if not isinstance(config, dict) else next(k for k in ("train", "rules") if not isinstance(config.get(k), dict))
        problem = (f"it holds a JSON {what}, not an object" if not isinstance(config, dict) else
                   f"it has no '{what}' object" if what not in config else f"its '{what}' is not an object")
    else:
        defaults = dataclasses.asdict(ValuesConfig())
        defaults.update({k: [""] for k in STRING_LISTS})  # what ``_fits`` checks their elements against
        wrong = next((k for k, v in config["train"].items() if k in defaults and not _fits(v, defaults[k])), None)
        if wrong is not None:
            problem = f"'train.{wrong}' is {short_repr(config['train'][wrong])}, not a value of --{wrong.replace('_', '-')}"
    if problem:
        raise ValueError(f"--resume: {path} is damaged ({problem}): {recovery}")
    return config


def checkpoint_config(cfg: ValuesConfig, rules: Rules, iteration: int, samples: int, folder: Path | None = None) -> dict:
    """The JSON config stored with the weights (the network reads RuleAgent's advice unless ``--no-advice``; ReLU
    layers); with the run's ``folder``, the files and folders the run read (``start``, ``data_from``, the checkpoints
    of ``pool``) as ``portable_path`` records them."""
    train = {"method": "rollout-values", **dataclasses.asdict(cfg)}
    if folder is not None:
        train.update(start=portable_path(cfg.start, folder), data_from=[portable_path(d, folder) for d in cfg.data_from],
                     pool=[portable_path(p, folder) if names_checkpoint(p) else p for p in cfg.pool])
    return {"format": FORMAT, "obs_version": OBS_VERSION, "obs_size": OBS_SIZE, "num_actions": NUM_ACTIONS,
            "hidden": list(cfg.hidden), "activation": "relu", "learn": cfg.learn, "advice": cfg.advice, "features": cfg.features,
            "advice_bonus": advice_bonus(cfg), "rules": rules_json(rules), "train": train,
            "iteration": iteration, "num_samples": samples}  # decisions collected by the run up to this iteration


def advice_bonus(cfg: ValuesConfig) -> float | dict[str, float]:
    """The checkpoint's ``advice_bonus``: the margin in value units, or one for bids and one for card play."""
    if cfg.play_margin is None:
        return cfg.margin * rv.VALUE_SCALE
    return {"bid": cfg.margin * rv.VALUE_SCALE, "play": cfg.play_margin * rv.VALUE_SCALE}


def check_same_command(before: dict, header: dict | None, out: Path) -> None:
    """ValueError if the run in ``out`` was started by another command than the one resuming it: ``wizard baseline
    values`` writes its algorithm (and arguments) into config.json, ``wizard train-values`` does not."""
    algo, now = before.get("algo"), (header or {}).get("algo")
    if algo != now:
        started = f"wizard baseline {algo}" if algo else "wizard train-values"
        raise ValueError(f"--resume: {out} is a run of {started}; resume it with {started} --out {out} --resume")


def check_zero(cfg: ValuesConfig) -> None:
    """ValueError naming the first setting that would bring RuleAgent into a ``--zero`` run's training (what
    ``check_from_scratch`` refuses beside ``--no-advice`` is refused there)."""
    if cfg.advice:
        raise ValueError("--zero needs --no-advice: the network reads the observation alone, not RuleAgent's choice")
    if cfg.rule_tables:
        raise ValueError(f"--rule-tables {cfg.rule_tables:g} and --zero: a zero run plays no RuleAgent (--rule-tables 0); "
                         "it meets its own earlier networks at --pool-tables")
    for entry in cfg.pool:
        if entry != PREVIOUS and not _zero_checkpoint(entry):
            raise ValueError(f"--pool {entry!r} and --zero: a zero run's pool is {PREVIOUS} (its own earlier networks) "
                             "and checkpoints of zero runs")
    if cfg.start and not _zero_checkpoint(cfg.start):
        raise ValueError(f"--start {cfg.start} and --zero: not a checkpoint of a zero run (a zero run starts from random "
                         "weights, or from a zero run's network)")


def _zero_checkpoint(entry: str) -> bool:
    """Whether ``entry`` (a path, or ``ppo:PATH``) names a readable checkpoint of a zero run."""
    try:
        config, _ = load_checkpoint(entry.removeprefix("ppo:"))
    except (ValueError, OSError):
        return False
    return is_zero(config)


def check_earlier(folder: Path, config: dict) -> None:
    """ValueError naming the ``--data-from`` run in ``folder`` (its config.json ``config``) unless it is a zero run."""
    if not is_zero(config):
        raise ValueError(f"--data-from {folder}: not a zero run; a --zero run reads only the data of zero runs")
