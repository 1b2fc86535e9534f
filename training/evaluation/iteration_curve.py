"""Whether the iterations of an expert-iteration run climb (``wizard eval-iterations RUN``): every checkpoint of a
``wizard train-values`` run measured on the same duplicate deals, as a table, a JSON file and a curve.

The rows are a run's checkpoints in order: the network the run started from when ``config.json`` names one
(``train.start``, from ``wizard train-values --start``: the ``start`` row, so iteration 0 is compared with it), then
``checkpoints/iter-K.npz`` by K (``latest.npz``, a copy of the last, is left out, and so is an iteration that
``wizard train-values --gate`` rejected: the rows are the networks the run kept, each against the one before it);
or the files of ``--checkpoints`` in the order given. For each checkpoint C (the agent ``ppo:PATH``) and a seed S, every table is ``evaluate``'s
duplicate deals, each played in every rotation of the seats, and every figure a mean over deals with its 95%
interval, paired by deal as ``eval_suite`` pairs (at N players, "three" below is N - 1 and "four" N):

| measure (JSON key) | tables played | seed | figure |
| --- | --- | --- | --- |
| ``rule`` | C against three ``rule`` | S | C's difference to the RuleAgents at its table |
| ``self_play`` | four C; four ``rule`` (one table for all rows) | S + 1 | the first table's mean per player minus the second's, paired by deal (``wizard eval-suite``'s self-play row) |
| ``self_play_change`` | the same tables, of this row and the row above | S + 1 | ``self_play`` minus the row above's, paired by deal (the four-``rule`` table cancels: four C's mean per player minus four of the previous checkpoint's) |
| ``previous`` | C against three copies of the row above's checkpoint | S + 2 | C's difference to them |
| ``pimc`` | C against three ``--pimc`` (default ``pimc:samples=16``) on ``--pimc-games`` deals (default 0: not played, search is slow) | S + 3 | C's difference to them |
| ``expert`` | C's expert against three C on ``--expert-games`` deals (default 0: not played) | S + 4 | the expert's difference to them: its margin over the network it trains |

C's **expert** (``expert_spec``) is the search that made C's targets, as the agent ``pimc``: C's own settings (its
``train.search_samples`` worlds a decision, with ``train.search_infer`` drawn ``INFER_OVERSAMPLE`` times over and kept
by the bids seen under C's values, systematic draws), every legal action played out by C at every seat. It differs
from the targets' search in who holds the other seats of the rollouts only: copies of C here, the pool's network at a
``--pool-tables`` table in training. Only a checkpoint trained on search targets (``--targets search``) has one.

The first row has no ``self_play_change``, ``previous`` or verdict. The **verdict** of every other row:
**climbs** when the interval of ``previous`` lies above 0 (mean - half-width > 0) and ``self_play_change`` is not
significantly below 0 (mean + half-width >= 0); **falls back** when the interval of either lies below 0 (mean +
half-width < 0); **level** otherwise.

``run_to`` writes climb.md (the table), climb.png (one panel per measure: every row's figure with its interval) and
then climb.json (every figure, the settings, the package version and each table's per-deal scores), the commit point.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from wizard_env.agents.inference import INFER_OVERSAMPLE
from wizard_env.agents.ppo_agent import SHIPPED
from wizard_env.agents.registry import make_agent, parse_spec
from wizard_env.engine.rules import Rules
from wizard_env.render.replay_text import describe_rules
from wizard_env.util import options
from wizard_env.util.checks import check_seed, short_repr
from wizard_env.util.extras import require_extra
from wizard_env.util.files import read_json, write_atomic
from wizard_env.util.stopwatch import Stopwatch

from ..common import locked_run
from .eval_report import new_figure
from .eval_suite import DEFAULT_DEALS, DEFAULT_SEED, RULE, Table, play_table, table_json, versus
from .pairing import Figure, paired, pm, verdict
from .evaluate import EVAL_BYTES_PER_GAME
from .gate import gate_path, read_gate

FORMAT = "wizard-eval-iterations/1"
JSON_NAME, MARKDOWN_NAME, PNG_NAME = "climb.json", "climb.md", "climb.png"
DEFAULT_PIMC = "pimc:samples=16"
#: A run's checkpoint of iteration K (not ``iter-01.npz``, which would be a second K = 1).
ITERATION_FILE = re.compile(r"iter-(0|[1-9][0-9]*)\.npz")
#: The measures of a row in the order of the table's columns, and the seed of each, added to S.
MEASURES = ("rule", "self_play", "self_play_change", "previous", "pimc", "expert")
SEED_OFFSETS = {"rule": 0, "self_play": 1, "previous": 2, "pimc": 3, "expert": 4}
_COUNTS = ("no", "one", "two", "three", "four", "five", "six")


@dataclass(frozen=True)
class Checkpoint:
    """One row: its label (``start``, ``iter-K`` or the file's name) and its file."""

    label: str
    path: str

    @property
    def spec(self) -> str:
        """The agent spec that plays it."""
        return f"ppo:{self.path}"


def expert_spec(path: str) -> str:
    """The agent spec of checkpoint ``path``'s expert: ``pimc`` with the search settings it was trained with (its
    config's ``train``) and itself as rollout policy and bid model; ValueError where it was not trained on search."""
    from wizard_env.agents.ppo_agent import load_checkpoint

    train = load_checkpoint(path)[0].get("train")  # ValueError naming a missing or damaged file
    if not isinstance(train, dict) or train.get("targets") != "search":
        raise ValueError(f"--expert-games: checkpoint {path} was not trained on search targets (wizard train-values "
                         "--targets search), so it has no expert to measure")
    infer = f":infer=bids:model={path}:over={INFER_OVERSAMPLE}:resample=systematic" if train.get("search_infer") else ""
    return f"pimc:samples={train['search_samples']}:rollout={path}{infer}"


def _run_start(config: Path) -> str:
    """config.json's ``train.start`` ('' when there is none or no config.json); ValueError naming a damaged file."""
    if not config.exists():
        return ""
    data, problem = read_json(config)
    if problem is not None:
        raise ValueError(f"{config} {problem}")
    train = data.get("train") if isinstance(data, dict) else None
    start = train.get("start", "") if isinstance(train, dict) else None
    if not isinstance(start, str):
        what = "its 'train.start' is " + short_repr(start) if isinstance(train, dict) else "it has no 'train' object"
        raise ValueError(f"{config} is damaged ({what}): not the config.json of wizard train-values")
    if start and not os.path.exists(start):
        raise ValueError(f"{config} names the start checkpoint {start} (train.start), which is not there from "
                         f"{os.getcwd()}: run from the folder the run was started in, or list the files with --checkpoints")
    return start


def run_checkpoints(run: str | os.PathLike) -> list[Checkpoint]:
    """A ``wizard train-values`` run's checkpoints: its start (if config.json names one), then iter-K by K."""
    folder = Path(run)
    if not folder.is_dir():
        what = "not a folder" if folder.exists() else "no such folder"
        raise ValueError(f"RUN {run}: {what} (give a wizard train-values run folder, or --checkpoints)")
    found = sorted((int(m[1]), path) for path in (folder / "checkpoints").glob("iter-*.npz")
                   if (m := ITERATION_FILE.fullmatch(path.name)))
    if not found:
        raise ValueError(f"RUN {run}: no checkpoints/iter-K.npz in it (not a wizard train-values run, or one "
                         "that has not finished an iteration)")
    start = _run_start(folder / "config.json")
    kept = [(k, path) for k, path in found if (read_gate(gate_path(path)) or {}).get("kept", True)]  # not those a --gate rejected
    return [Checkpoint("start", start)] * bool(start) + [Checkpoint(f"iter-{k}", str(path)) for k, path in kept]


def listed_checkpoints(paths: Sequence[str]) -> list[Checkpoint]:
    """``--checkpoints``' files, or shipped networks by name (``ppo-v8``: its file), in order; a file is labelled by
    its name (by the path where two names agree), a shipped network by the name given."""
    given = [p.strip() for p in paths]
    if not all(given):
        raise ValueError("--checkpoints: an empty name in the list (give checkpoint paths or shipped names such as "
                         "ppo-v8, separated by ',')")
    files = [str(SHIPPED[p]) if p in SHIPPED else p for p in given]
    absolute = [os.path.abspath(f) for f in files]
    twice = next((i for i, a in enumerate(absolute) if a in absolute[:i]), None)
    if twice is not None:
        first = given[absolute.index(absolute[twice])]
        same = "" if first == given[twice] else f" ({first} is the same file, {files[twice]})"
        raise ValueError(f"--checkpoints names {given[twice]} twice{same}: a checkpoint against itself is level by "
                         "construction")
    names = [g if g in SHIPPED else Path(g).name for g in given]
    labels = names if len(set(names)) == len(names) else given
    return [Checkpoint(label, file) for label, file in zip(labels, files)]


@dataclass(frozen=True)
class CurveConfig:
    """What the curve plays; the names of the checks are ``wizard eval-iterations``' options."""

    checkpoints: tuple[Checkpoint, ...]  #: the rows, in order
    deals: int = DEFAULT_DEALS  #: duplicate deals per table
    seed: int = DEFAULT_SEED  #: seed S (the measures use S to S + 3: ``SEED_OFFSETS``)
    pimc_deals: int = 0  #: deals of the tables against ``pimc`` (0: not played)
    pimc: str = DEFAULT_PIMC  #: the search agent of the ``pimc`` measure
    rules: Rules = field(default_factory=Rules.make)  #: the game (default 4 players, standard rounds)
    run: str | None = None  #: the run folder the checkpoints come from (None: ``--checkpoints``)
    expert_deals: int = 0  #: deals of each checkpoint's expert against three of it (0: not played)

    def check(self) -> None:
        """ValueError naming the option of the first setting that is wrong; builds nothing."""
        if not self.checkpoints:
            raise ValueError("no checkpoints to measure")
        options.check_range("--games", self.deals, 2)  # an interval over deals needs two of them
        for option, deals in (("--pimc-games", self.pimc_deals), ("--expert-games", self.expert_deals)):
            if deals != 0 and (isinstance(deals, bool) or not isinstance(deals, int) or deals < 2):
                raise ValueError(f"{option} must be 0 (not played) or at least 2, not {short_repr(deals)}")
        options.check_range("--seed", self.seed, 0, 2**63 - 1 - max(SEED_OFFSETS.values()))
        check_seed(self.seed, "--seed")
        try:
            parse_spec(self.pimc)
        except ValueError as err:
            raise ValueError(f"--pimc: {err}") from None
        colon = next((c.path for c in self.checkpoints if ":" in c.path), None)
        if colon is not None:
            raise ValueError(f"checkpoint {colon}: a path with ':' cannot be played as ppo:PATH (':' separates a spec's "
                             "options): rename or link the file")
        options.check_memory("--games", max(self.deals, self.pimc_deals, self.expert_deals),
                             EVAL_BYTES_PER_GAME * self.rules.num_players)


@dataclass(frozen=True)
class Step:
    """One table to play: its row (None: the four-``rule`` table every row shares), measure and name."""

    row: int | None
    measure: str
    name: str
    table: Table


def plan(config: CurveConfig) -> list[Step]:
    """The tables in the order they are played: the shared four-``rule`` table, then row by row."""
    n, deals, rows = config.rules.num_players, config.deals, config.checkpoints
    seed = {measure: config.seed + offset for measure, offset in SEED_OFFSETS.items()}
    steps = [Step(None, "self_play", f"{_COUNTS[n]} rule", versus(RULE, RULE, n, n, seed["self_play"], deals))]
    for i, c in enumerate(rows):
        steps += [Step(i, "rule", f"{c.label} vs {_COUNTS[n - 1]} rule", versus(c.spec, RULE, 1, n, seed["rule"], deals)),
                  Step(i, "self_play", f"{_COUNTS[n]} {c.label}", versus(c.spec, c.spec, n, n, seed["self_play"], deals))]
        if i:
            steps.append(Step(i, "previous", f"{c.label} vs {_COUNTS[n - 1]} {rows[i - 1].label}",
                              versus(c.spec, rows[i - 1].spec, 1, n, seed["previous"], deals)))
        if config.pimc_deals:
            steps.append(Step(i, "pimc", f"{c.label} vs {_COUNTS[n - 1]} {config.pimc}",
                              versus(c.spec, config.pimc.strip(), 1, n, seed["pimc"], config.pimc_deals)))
        if config.expert_deals:
            steps.append(Step(i, "expert", f"{c.label}'s expert vs {_COUNTS[n - 1]} {c.label}",
                              versus(expert_spec(c.path), c.spec, 1, n, seed["expert"], config.expert_deals)))
    return steps


def prepare(config: CurveConfig) -> list[Step]:
    """Check the settings and build every agent once (a damaged checkpoint or one trained for other player counts
    fails here, before any game, naming its file); the plan."""
    config.check()
    require_extra("eval", ("matplotlib",), "wizard eval-iterations")  # the plot, before the games
    n = config.rules.num_players
    for c in config.checkpoints:
        players = getattr(make_agent(c.spec, 0), "players", None)  # ValueError naming a missing or damaged file
        if players is not None and n not in players:
            raise ValueError(f"checkpoint {c.path} was trained for {'/'.join(map(str, players))} players, not the {n} "
                             "of this evaluation (--players)")
    try:
        make_agent(config.pimc, 0)
    except ValueError as err:
        raise ValueError(f"--pimc: {err}") from None
    steps = plan(config)
    for step in steps:
        if step.measure == "expert":
            make_agent(step.table.agents[0], 0)  # its networks load (checked above as checkpoints)
    return steps


def row_figures(steps: Sequence[Step], played: dict[Table, dict]) -> list[dict[str, Figure]]:
    """Every row's figures by measure, from the per-deal scores of the tables played."""
    table = {(s.row, s.measure): s.table for s in steps}
    rows: list[dict[str, Figure]] = []
    for i in sorted({s.row for s in steps if s.row is not None}):
        found = {m: table[i, m].split(np.asarray(played[table[i, m]]["deal_scores"])).diff
                 for m in ("rule", "previous", "pimc", "expert") if (i, m) in table}
        found["self_play"] = paired(played[table[i, "self_play"]], played[table[None, "self_play"]]).diff
        if i:
            found["self_play_change"] = paired(played[table[i, "self_play"]], played[table[i - 1, "self_play"]]).diff
        rows.append({m: found[m] for m in MEASURES if m in found})
    return rows


def _finished(step: Step, data: dict) -> str:
    scores = np.asarray(data["deal_scores"])
    if len(step.table.mine) == len(step.table.agents):
        return f"mean score {scores.mean():.1f} per player"
    return f"difference {pm(step.table.split(scores).diff)}"


def run_curve(config: CurveConfig, log: Callable[[str], object] | None = None, quiet: bool = False,
              version: str = "unknown", steps: list[Step] | None = None) -> dict[str, Any]:
    """Play every table (the ``steps`` of ``prepare``, made here if None) and return the curve's JSON; ``log`` gets
    a line as each table starts and ends, and progress lines, unless ``quiet``."""
    steps = prepare(config) if steps is None else steps
    say = (lambda line: None) if log is None or quiet else log
    played: dict[Table, dict] = {}
    for k, step in enumerate(steps, 1):
        say(f"[{k}/{len(steps)}] {step.name} ...")
        with Stopwatch() as watch:
            result = play_table(step.table, step.name, quiet, log, config.rules)
        played[step.table] = table_json(step.table, result) | {"wall_seconds": watch.seconds}
        say(f"[{k}/{len(steps)}] {step.name}: {_finished(step, played[step.table])} ({watch.seconds:.1f} s)")
    rows = row_figures(steps, played)
    return {
        "format": FORMAT, "version": version, "run": config.run, "rules": config.rules.to_dict(),
        "players": config.rules.num_players, "rules_text": describe_rules(config.rules), "deals": config.deals,
        "pimc": config.pimc.strip(), "pimc_deals": config.pimc_deals, "expert_deals": config.expert_deals,
        "seed": config.seed,
        "seeds": {m: config.seed + offset for m, offset in SEED_OFFSETS.items()},
        "rows": [{"label": c.label, "path": c.path, "spec": c.spec, "figures": {m: figure.to_json() for m, figure in f.items()},
                  "verdict": verdict(f.get("previous"), f.get("self_play_change"))} for c, f in zip(config.checkpoints, rows)],
        "tables": [{"row": None if s.row is None else config.checkpoints[s.row].label, "measure": s.measure,
                    "name": s.name} | played[s.table] for s in steps],
    }


def _cell(row: dict, measure: str) -> str:
    figure = row["figures"].get(measure)
    return "-" if figure is None else pm(Figure(figure["mean"], figure["ci95"]))


def format_markdown(data: dict[str, Any]) -> str:
    """The curve's table from its JSON."""
    n, s, three = data["players"], data["seed"], _COUNTS[data["players"] - 1]
    source = f"`{data['run']}`" if data["run"] else "the checkpoints"
    pimc = f", {s + 3} (vs `{data['pimc']}`, {data['pimc_deals']:,} deals)" if data["pimc_deals"] else ""
    expert = data.get("expert_deals", 0)
    pimc += f", {s + 4} (its expert vs {three} of it, {expert:,} deals)" if expert else ""
    lines = [f"Iterations of {source} (`wizard eval-iterations`, wizard-env {data['version']}): {data['rules_text']}; "
             f"{data['deals']:,} duplicate deals per table, each played in every rotation of the seats; 95% intervals "
             f"over deals; seeds {s} (vs {three} `rule`), {s + 1} (self-play), {s + 2} (head to head){pimc}.", "",
             f"| checkpoint | vs {three} `rule` | {_COUNTS[n]} vs {_COUNTS[n]} `rule`, per player | self-play change "
             f"| vs {three} of the row above |" + (f" vs {three} `{data['pimc']}` |" if data["pimc_deals"] else "")
             + (f" its expert vs {three} of it |" if expert else "") + " verdict |",
             "| --- " * (6 + bool(data["pimc_deals"]) + bool(expert)) + "|"]
    shown = [m for m in MEASURES if (m != "pimc" or data["pimc_deals"]) and (m != "expert" or expert)]
    for row in data["rows"]:
        lines.append(f"| {row['label']} | " + " | ".join(_cell(row, m) for m in shown) + f" | {row['verdict'] or '-'} |")
    lines += ["", "Verdict: climbs when the head-to-head interval lies above 0 and the self-play change is not "
              "significantly below 0 (its interval reaches 0 or above); falls back when either interval lies below 0; "
              "level otherwise."]
    return "\n".join(lines) + "\n"


def plot(data: dict[str, Any]) -> Any:
    """One panel per measure (against ``rule``, self-play, head to head, against ``pimc``, its expert's margin): each
    row's figure and interval."""
    three, four = _COUNTS[data["players"] - 1], _COUNTS[data["players"]]
    panels = {"rule": f"vs {three} rule", "self_play": f"{four} vs {four} rule, per player",
              "previous": f"vs {three} of the previous row", "pimc": f"vs {three} {data['pimc']} ({data['pimc_deals']:,} deals)",
              "expert": f"its expert vs {three} of it ({data.get('expert_deals', 0):,} deals)"}
    for measure, deals in (("pimc", data["pimc_deals"]), ("expert", data.get("expert_deals", 0))):
        if not deals:
            del panels[measure]
    fig = new_figure((4.2 * len(panels), 4))
    labels = [row["label"] for row in data["rows"]]
    for ax, (measure, title) in zip(fig.subplots(1, len(panels), squeeze=False)[0], panels.items()):
        at = [(x, row["figures"][measure]) for x, row in enumerate(data["rows"]) if measure in row["figures"]]
        ax.errorbar([x for x, _ in at], [f["mean"] for _, f in at], yerr=[f["ci95"] or 0 for _, f in at], marker="o",
                    capsize=4)
        ax.axhline(0, color="black", linewidth=0.8)
        crowded = max(map(len, labels)) * len(labels) > 42  # about what fits a panel's width unturned
        ax.set_xticks(range(len(labels)), labels, **({"rotation": 30, "ha": "right"} if crowded else {}))
        ax.set(title=title, ylabel="score difference per game (95% CI)", xlim=(-0.5, len(labels) - 0.5))
    fig.suptitle(f"{data['rules_text']}\n{data['deals']:,} duplicate deals per table, seed {data['seed']}", fontsize=9)
    return fig


def write(data: dict[str, Any], out: str | os.PathLike) -> list[Path]:
    """Write climb.md, climb.png, then climb.json (the commit point, naming the png's sha256) into ``out``."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    md_path, png_path, json_path = folder / MARKDOWN_NAME, folder / PNG_NAME, folder / JSON_NAME
    markdown, png = format_markdown(data), io.BytesIO()
    plot(data).savefig(png, format="png", dpi=100)
    write_atomic(md_path, lambda file: file.write(markdown))
    write_atomic(png_path, lambda file: file.write(png.getvalue()), binary=True)
    data = data | {"png": {"file": PNG_NAME, "sha256": hashlib.sha256(png.getvalue()).hexdigest()}}
    write_atomic(json_path, lambda file: file.write(json.dumps(data, indent=1, allow_nan=False) + "\n"))
    return [md_path, json_path, png_path]


def run_to(out: str | os.PathLike, config: CurveConfig, log: Callable[[str], object] | None = None, quiet: bool = False,
           version: str = "unknown") -> tuple[dict[str, Any], list[Path]]:
    """Check everything, hold ``out``'s run lock, play the tables and write the files; ValueError if another run holds it."""
    steps = prepare(config)
    return locked_run(out, "wizard eval-iterations", lambda: run_curve(config, log, quiet, version, steps), write)
