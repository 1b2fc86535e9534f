"""Choosing a network's margins on a grid of held-out deals (a recipe's ``margins`` step; the model card's
"Margins" table).

A margin is the points a departure from RuleAgent's choice must promise (a checkpoint's ``advice_bonus``, in
value units of ``rollout_values.VALUE_SCALE``): one for trump and bids, one for card play. For each (bid, play)
pair of the grid the fitted weights are saved with that bonus and played on duplicate deals (every rotation):
one copy against RuleAgents (seed ``seed``), and all seats against all RuleAgents on the same deals (seed
``self_play_seed``, paired by deal). The best pair by ``choose`` is kept, the first of the grid on a tie. Those
seeds must be other than the evaluation's: picking the best of many rows on the same deals flatters it.

Each pair's figures are written to ``rows/`` as soon as they are measured, so a killed run measures only the
pairs it had not finished. ``margins.json`` holds the table, ``margins.md`` shows it, ``chosen.npz`` is the
fitted checkpoint with the chosen margins.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from wizard_env.agents.ppo_agent import PPOAgent, load_checkpoint, save_checkpoint
from wizard_env.agents.registry import make_agent
from wizard_env.engine.rules import MAX_PLAYERS, MIN_PLAYERS, Rules
from wizard_env.engine.simulate import derive_seeds
from wizard_env.util import options
from wizard_env.util.checks import SEED_LIMIT, short_repr
from wizard_env.util.files import write_atomic
from wizard_env.util.stopwatch import Stopwatch

from . import rollout_values as rv
from ..evaluation.eval_suite import Table
from ..evaluation.pairing import Figure, deal_means, pair
from ..common import check_ranges
from ..evaluation.evaluate import EVAL_BYTES_PER_GAME, MAX_DEALS, EvalResult, evaluate
from .values_config import MAX_MARGIN

#: What a grid may be chosen by: the mean against RuleAgents, in self-play, or their sum.
CHOOSE = ("rule", "self-play", "both")
RULE = "rule"
#: How the evaluations name the network's seats.
NET = "ppo"


@dataclass
class MarginGrid:
    """The grid and its deals (a recipe's ``margins`` step takes them as keys)."""

    grid: list[list[float]] = field(default_factory=lambda: [[1.5, 1.5]])  #: (bid, play) margin pairs in points
    deals: int = 1000  #: duplicate deals per table
    players: int = 4  #: the table's player count
    rounds: str | int | list[int] = "standard"  #: the rounds of a game (``--rounds``)
    seed: int = 21  #: the deals of one copy against RuleAgents
    self_play_seed: int = 22  #: the deals of all seats against all RuleAgents
    choose: str = "rule"  #: the figure the best pair is chosen by: rule, self-play or both (their sum)


#: The range of every numeric setting (of ``grid``: of each margin, in points), (least, most); ``deals`` at least 2:
#: an interval over deals needs two.
RANGES: dict[str, tuple[float | None, float | None]] = {
    "grid": (0, MAX_MARGIN), "deals": (2, MAX_DEALS), "players": (MIN_PLAYERS, MAX_PLAYERS), "seed": (0, SEED_LIMIT - 1),
    "self_play_seed": (0, SEED_LIMIT - 1),
}


def check_grid(grid: MarginGrid) -> None:
    """ValueError naming the first impossible setting (by its key)."""
    if not grid.grid:
        raise ValueError("grid: give at least one [bid, play] pair of margins")
    for pair_ in grid.grid:
        if len(pair_) != 2 or any(isinstance(m, bool) or not isinstance(m, (int, float)) for m in pair_):
            raise ValueError(f"grid: {short_repr(pair_)} is not a [bid, play] pair of margins in points")
    check_ranges(grid, RANGES, (), option=lambda name: name)
    if len({tuple(p) for p in grid.grid}) != len(grid.grid):
        raise ValueError("grid: a pair of margins is given twice")
    options.check_memory("deals", grid.deals, EVAL_BYTES_PER_GAME * grid.players)
    if grid.choose not in CHOOSE:
        raise ValueError(f"choose must be one of {', '.join(CHOOSE)}, not {short_repr(grid.choose)}")
    if grid.seed == grid.self_play_seed:
        raise ValueError("self_play_seed must differ from seed (other deals for the other table)")


def _name(bid: float, play: float) -> str:
    return f"bid-{bid:g}-play-{play:g}"


def with_margins(config: dict, bid: float, play: float) -> dict:
    """A checkpoint config that plays with the margins ``bid`` and ``play`` (points)."""
    config = {**config, "advice_bonus": {"bid": bid * rv.VALUE_SCALE, "play": play * rv.VALUE_SCALE}}
    if isinstance(config.get("train"), dict):
        config["train"] = {**config["train"], "margin": bid, "play_margin": play}
    return config


def _write_json(path: Path, data: Any) -> None:
    write_atomic(path, lambda file: file.write(json.dumps(data, indent=1, allow_nan=False) + "\n"))


def _play(config: dict, weights: dict, seats: int, grid: MarginGrid, rules: Rules, seed: int) -> EvalResult:
    """The network at the first ``seats`` seats and RuleAgents at the others, seeded as ``evaluate`` seeds specs."""
    n = rules.num_players
    specs = [NET] * seats + [RULE] * (n - seats)
    agent_seeds = derive_seeds(seed, grid.deals, n)[1]
    agents = [PPOAgent(config, weights, seed=s) if spec == NET else make_agent(RULE, s) for spec, s in zip(specs, agent_seeds)]
    return evaluate(rules, specs, grid.deals, seed, reference=specs[-1], agents=agents)


def _measure(config: dict, weights: dict, grid: MarginGrid, rules: Rules, baseline: list[float]) -> dict[str, Any]:
    """One pair's figures: against RuleAgents, and all seats against all RuleAgents paired by deal."""
    versus = _play(config, weights, 1, grid, rules, grid.seed)
    rule = Table(tuple(versus.agent_specs), grid.seed, grid.deals, (0,)).split(versus.deal_scores).diff
    copies = _play(config, weights, rules.num_players, grid, rules, grid.self_play_seed)
    self_play = pair(deal_means(copies), np.asarray(baseline)).diff
    return {"rule": rule.to_json(), "self_play": self_play.to_json()}


def score(row: dict[str, Any], choose: str) -> float:
    """The figure a row is chosen by."""
    rule, self_play = row["rule"]["mean"], row["self_play"]["mean"]
    return rule if choose == "rule" else self_play if choose == "self-play" else rule + self_play


def run_grid(checkpoint: Path, grid: MarginGrid, out: Path, log: Callable[[str], object] = print) -> dict[str, Any]:
    """Measure every pair not measured yet, choose, write ``margins.json``, ``margins.md`` and ``chosen.npz``; the table."""
    check_grid(grid)
    rules = Rules.make(grid.players, grid.rounds)
    (out / "rows").mkdir(parents=True, exist_ok=True)
    base_path = out / "rows" / "all-rule.json"
    if base_path.is_file():
        baseline = json.loads(base_path.read_text())["deal_means"]
    else:
        result = evaluate(rules, [RULE] * rules.num_players, grid.deals, grid.self_play_seed)
        baseline = deal_means(result).tolist()
        _write_json(base_path, {"seed": grid.self_play_seed, "deals": grid.deals, "deal_means": baseline})
    config, weights = load_checkpoint(checkpoint)
    rows = []
    for i, (bid, play) in enumerate(grid.grid, 1):
        row_path = out / "rows" / f"{_name(bid, play)}.json"
        if row_path.is_file():
            rows.append(json.loads(row_path.read_text()))
            continue
        with Stopwatch() as watch:
            row = {"bid": bid, "play": play, **_measure(with_margins(config, bid, play), weights, grid, rules, baseline)}
        row["wall_seconds"] = watch.seconds
        _write_json(row_path, row)
        rows.append(row)
        log(f"margins {i}/{len(grid.grid)}: bid {bid:g}, play {play:g}: {Figure(**row['rule']).mean:+.1f} against RuleAgents, "
            f"{Figure(**row['self_play']).mean:+.1f} in self-play ({watch.seconds:.0f} s)")
    best = max(range(len(rows)), key=lambda k: (score(rows[k], grid.choose), -k))
    data = {"checkpoint": str(checkpoint), "players": grid.players, "deals": grid.deals, "seed": grid.seed,
            "self_play_seed": grid.self_play_seed, "choose": grid.choose, "rows": rows, "chosen": best}
    save_checkpoint(out / "chosen.npz", with_margins(config, rows[best]["bid"], rows[best]["play"]), weights)
    markdown = format_markdown(data)
    write_atomic(out / "margins.md", lambda file: file.write(markdown))
    _write_json(out / "margins.json", data)
    return data


def _pm(figure: dict) -> str:
    return f"{figure['mean']:+.1f}" + ("" if figure["ci95"] is None else f" ± {figure['ci95']:.1f}")


def format_markdown(data: dict[str, Any]) -> str:
    """The grid as the model card's "Margins" table, the chosen row in bold."""
    n = data["players"]
    lines = [f"{data['deals']:,} duplicate deals per table, {n} players, every rotation; 95% intervals over deals; "
             f"chosen by {data['choose']}.", "",
             f"| bid margin | play margin | vs {n - 1} `rule` (seed {data['seed']}) | "
             f"self-play vs {n} `rule` (seed {data['self_play_seed']}) |", "| ---: | ---: | ---: | ---: |"]
    for k, row in enumerate(data["rows"]):
        cells = [f"{row['bid']:g}", f"{row['play']:g}", _pm(row["rule"]), _pm(row["self_play"])]
        if k == data["chosen"]:
            cells = [f"**{c}**" for c in cells]
            cells[1] += " (chosen)"
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def copy_checkpoint(source: Path, target: Path) -> Path:
    """Copy a checkpoint file atomically (``target`` is whole or as it was)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with source.open("rb") as src:
        write_atomic(target, lambda file: shutil.copyfileobj(src, file), binary=True)
    return target
