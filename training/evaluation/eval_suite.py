"""The model card's evaluation battery as one call (``wizard eval-suite AGENT``); its figures pair evaluations of the
same deals (``training.evaluation.pairing``).

For an agent spec A and a seed S, every row is ``evaluate``'s duplicate deals (each played in every rotation
of the seats), and every figure a mean over deals with its 95% interval (``mean_ci``):

| row (``skip`` name) | tables played | seed | figures |
| --- | --- | --- | --- |
| ``rule`` | A against three ``rule``, 4 players | S | A's difference to the RuleAgents at its table; both bid accuracies |
| ``reference`` | for each reference R other than A: A against three R, and three A against one R | S | A's difference to R |
| ``play`` | ``A:play=rule`` against three ``rule`` (A a ``ppo`` spec without ``play=``) | S | A's own score minus the ablation's, paired by deal with the ``rule`` row |
| ``self-play`` | four A; four ``rule`` | S + 1 | the mean per player of the first table minus the second's, paired by deal |
| ``players`` | A against ``rule`` at 3, 5 and 6 players (those A plays) | S + 2 | A's difference to the RuleAgents |

With S = 1 these are the seeds of the model card's tables (1, 2 and 3). Two tables with one seed, player count
and deal count play the same deals, which is what makes the pairing of ``paired`` valid.
``run_to`` writes the Markdown table (``suite.md``) and every number with its settings (``suite.json``);
``training.evaluation.cards`` makes a model card from that JSON (``wizard card``).
"""

from __future__ import annotations

import json
import os
import sys
from concurrent.futures import Future
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from wizard_env.agents.registry import make_agent, parse_spec
from wizard_env.engine.rules import MAX_PLAYERS, MIN_PLAYERS, Rules
from wizard_env.util import options
from wizard_env.util.checks import SEED_LIMIT
from wizard_env.util.files import write_atomic
from wizard_env.util.stopwatch import Stopwatch
from wizard_env.util.workers import Workers

from ..common import check_ranges, locked_run
from .evaluate import EVAL_BYTES_PER_GAME, MAX_DEALS, EvalResult, bid_accuracy_by_deal, evaluate
from .pairing import Figure, Pairing, pair, paired, pm
from ..progress import Progress

FORMAT = "wizard-eval-suite/1"
JSON_NAME, MARKDOWN_NAME = "suite.json", "suite.md"
#: The rows of the battery, by the names ``skip`` takes.
ROW_KINDS = ("rule", "reference", "play", "self-play", "players")
#: The agents whose spec takes ``play=rule`` (RuleAgent's card play): the ``ppo`` family of the registry.
PLAY_OPTION_AGENTS = ("ppo", "ppo-bid")
DEFAULT_DEALS = 2000
DEFAULT_SEED = 1
DEFAULT_REFERENCES = ("ppo",)
DEFAULT_PLAYERS = (3, 5, 6)
#: The most ``--workers``: there are at most a dozen tables or so to play at once.
MAX_WORKERS = 64
#: The baseline of every row but the references'.
RULE = "rule"
#: The option of each setting, where ``wizard eval-suite`` names it otherwise than ``--NAME`` (a recipe's eval-suite
#: step takes the settings by their names).
OPTIONS = {"agent": "AGENT", "deals": "--games", "references": "--reference", "reference_deals": "--reference-games",
           "players": "--players-battery"}
#: The range of every numeric setting (of ``players``: of each count), (least, most): deals at least 2 (an interval
#: over deals needs two), a seed S that leaves room for S + 2; ``reference_deals``'s where it is given.
RANGES: dict[str, tuple[float | None, float | None]] = {
    "deals": (2, MAX_DEALS), "seed": (0, SEED_LIMIT - 3), "workers": (1, MAX_WORKERS), "players": (MIN_PLAYERS, MAX_PLAYERS),
}
RANGES_IF_GIVEN: dict[str, tuple[float | None, float | None]] = {"reference_deals": RANGES["deals"]}
#: The player count of the battery's tables but the ``players`` rows: the agent's and every reference's.
TABLE_PLAYERS = 4


def option(name: str) -> str:
    """The option of the setting ``name``."""
    return OPTIONS.get(name, f"--{name.replace('_', '-')}")


# -- the battery -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SuiteConfig:
    """What the battery plays; the names of the checks are ``wizard eval-suite``'s options."""

    agent: str  #: the agent spec evaluated
    deals: int = DEFAULT_DEALS  #: duplicate deals per table
    seed: int = DEFAULT_SEED  #: seed S: 4-player rows S, self-play S + 1, other player counts S + 2
    references: tuple[str, ...] = DEFAULT_REFERENCES  #: agents met one against three and three against one
    reference_deals: int | None = None  #: deals of the reference tables (None: ``deals``)
    players: tuple[int, ...] = DEFAULT_PLAYERS  #: the other player counts, against ``rule``
    skip: tuple[str, ...] = ()  #: rows left out (``ROW_KINDS``)
    workers: int = 1  #: processes playing tables at once (the figures do not depend on it)

    def check(self) -> None:
        """ValueError naming the option of the first setting that is wrong; builds nothing."""
        try:
            parse_spec(self.agent)
        except ValueError as err:
            raise ValueError(f"AGENT: {err}") from None
        wrong = next((n for n in self.players if type(n) is int and not MIN_PLAYERS <= n <= MAX_PLAYERS), None)
        if wrong is not None:
            raise ValueError(f"--players-battery {wrong}: Wizard is played by {MIN_PLAYERS} to {MAX_PLAYERS} players")
        check_ranges(self, RANGES, (), option)
        if self.reference_deals is not None:
            check_ranges(self, RANGES_IF_GIVEN, (), option)
        for spec in self.references:
            try:
                parse_spec(spec)
            except ValueError as err:
                raise ValueError(f"--reference: {err}") from None
        unknown = [k for k in self.skip if k not in ROW_KINDS]
        if unknown:
            raise ValueError(f"--skip {unknown[0]!r}: the rows are {', '.join(ROW_KINDS)}")
        most = max((TABLE_PLAYERS, *self.players))
        options.check_memory("--games", max(self.deals, self.reference_deals or 0) * self.workers,
                             EVAL_BYTES_PER_GAME * most)


@dataclass(frozen=True)
class Table:
    """One evaluation of the battery: ``agents`` by entry on ``deals`` deals of ``seed``; ``mine`` are the agent's entries."""

    agents: tuple[str, ...]
    seed: int
    deals: int
    mine: tuple[int, ...]

    def split(self, values: np.ndarray) -> Pairing:
        """Per-deal values ``[deals, entries]``: the mean of the agent's entries paired with the others'."""
        others = [e for e in range(len(self.agents)) if e not in self.mine]
        return pair(values[:, list(self.mine)].mean(axis=1), values[:, others].mean(axis=1))


@dataclass
class Row:
    """One line of the table: what it measures, the tables it needs, and (once run) its figures."""

    key: str
    kind: str
    measurement: str
    tables: tuple[Table, ...]
    skipped: str | None = None
    figures: dict[str, Figure] | None = None
    wall_seconds: float = 0.0


def versus(agent: str, other: str, mine: int, n: int, seed: int, deals: int) -> Table:
    """``mine`` seats of ``agent`` then ``n - mine`` of ``other``."""
    return Table((agent,) * mine + (other,) * (n - mine), seed, deals, tuple(range(mine)))


def plan(config: SuiteConfig, agent_players: Sequence[int] | None = None) -> list[Row]:
    """The rows of the battery in order; ``agent_players``: the player counts the agent plays (None: all)."""
    a, s, deals = config.agent.strip(), config.seed, config.deals
    rows: list[Row] = []
    rule_table = versus(a, RULE, 1, 4, s, deals)
    if "rule" not in config.skip:
        rows.append(Row("rule", "rule", f"4p `{a}` vs three `rule` (`--agents {','.join(rule_table.agents)} --seed {s}`)",
                        (rule_table,)))
    if "reference" not in config.skip:
        ref_deals = config.reference_deals or deals
        for r in dict.fromkeys(spec.strip() for spec in config.references):
            if r == a:
                continue  # the agent against itself: zero by construction
            one, three = versus(a, r, 1, 4, s, ref_deals), versus(a, r, 3, 4, s, ref_deals)
            rows.append(Row(f"reference:{r}:one", "reference", f"4p `{a}` vs three `{r}` "
                            f"(`--agents {','.join(one.agents)} --reference {r} --seed {s}`)", (one,)))
            rows.append(Row(f"reference:{r}:three", "reference", f"4p three `{a}` vs one `{r}` "
                            f"(`--agents {','.join(three.agents)} --reference {r} --seed {s}`)", (three,)))
    name, arg = parse_spec(a)
    if "play" not in config.skip and name in PLAY_OPTION_AGENTS:
        ablation = f"{a}:play=rule"
        row = Row("play", "play", f"learned play alone: `{a}` vs `{ablation}`, each against three `rule` "
                  f"(seed {s}, paired by deal)", (rule_table, versus(ablation, RULE, 1, 4, s, deals)))
        if arg is not None and any(part.startswith("play=") for part in arg.split(":")):
            row.skipped = f"`{a}` already names its card play"
        rows.append(row)
    if "self-play" not in config.skip:
        rows.append(Row("self-play", "self-play", f"4p self-play: four `{a}` vs four `rule` (seed {s + 1}, paired by deal)",
                        (versus(a, a, 4, 4, s + 1, deals), versus(RULE, RULE, 4, 4, s + 1, deals))))
    if "players" not in config.skip:
        for n in config.players:
            table = versus(a, RULE, 1, n, s + 2, deals)
            row = Row(f"players:{n}", "players", f"{n}p `--agents {','.join(table.agents)} --seed {s + 2}`", (table,))
            if agent_players is not None and n not in agent_players:
                row.skipped = f"`{a}` plays {'/'.join(map(str, agent_players))} players"
            rows.append(row)
    if "rule" not in config.skip:
        rows.append(Row("bid-accuracy", "bid-accuracy", f"4p bid accuracy of `{a}` (seed {s})", (rule_table,)))
    return rows


def figures(row: Row, results: dict[Table, EvalResult]) -> dict[str, Figure]:
    """The figures of a row from the evaluations of its tables."""
    first = row.tables[0]
    result = results[first]
    if row.kind == "self-play":
        both = paired(results[row.tables[0]], results[row.tables[1]])
        return {"diff": both.diff, "agent_score": both.first, "rule_score": both.second}
    if row.kind == "play":
        ablation = results[row.tables[1]]
        own = paired(result, ablation, first.agents[0], row.tables[1].agents[0])
        to_rule = [Figure.over_deals(r.deal_scores[:, 0] - r.deal_scores[:, 1:].mean(axis=1)) for r in (result, ablation)]
        return {"diff": own.diff, "agent_score": own.first, "ablation_score": own.second,
                "agent_diff_to_rule": to_rule[0], "ablation_diff_to_rule": to_rule[1]}
    accuracy = first.split(bid_accuracy_by_deal(result))
    if row.kind == "bid-accuracy":
        return {"bid_accuracy": accuracy.first, "rule_bid_accuracy": accuracy.second}
    versus = first.split(result.deal_scores)
    found = {"diff": versus.diff, "agent_score": versus.first, "other_score": versus.second}
    if row.kind == "rule":
        found |= {"bid_accuracy": accuracy.first, "rule_bid_accuracy": accuracy.second}
    return found


def _pct(figure: Figure) -> str:
    return f"{figure.mean:.1%}" if figure.ci95 is None else f"{figure.mean:.1%} ± {figure.ci95 * 100:.1f}"


def result_text(row: Row) -> str:
    """The row's result cell, in the model card's words."""
    if row.skipped is not None:
        return f"not run: {row.skipped}"
    f = row.figures or {}
    if row.kind == "bid-accuracy":
        return f"**{_pct(f['bid_accuracy'])}** (`rule` {_pct(f['rule_bid_accuracy'])})"
    if row.kind == "play":
        return (f"own score **{pm(f['diff'])}** ({f['agent_score'].mean:.1f} vs {f['ablation_score'].mean:.1f}); "
                f"difference to the RuleAgents at the table {pm(f['agent_diff_to_rule'])} vs {pm(f['ablation_diff_to_rule'])}")
    if row.kind == "self-play":
        return f"**{pm(f['diff'])}** per player ({f['agent_score'].mean:.1f} vs {f['rule_score'].mean:.1f})"
    text = f"**{pm(f['diff'])}** ({f['agent_score'].mean:.1f} vs {f['other_score'].mean:.1f})"
    if row.kind == "rule":
        text += f"; bid accuracy {f['bid_accuracy'].mean:.1%} vs {f['rule_bid_accuracy'].mean:.1%}"
    return text


def table_json(table: Table, result: EvalResult | None) -> dict[str, Any]:
    """A table's settings and, once played, its deal and agent seeds and per-deal scores (``paired`` reads it as a result)."""
    data: dict[str, Any] = {"players": len(table.agents), "agents": list(table.agents), "agent_entries": list(table.mine),
                            "seed": table.seed, "deals": table.deals}
    if result is not None:
        data |= {"orders": "rotations", "deal_seeds": list(result.deal_seeds), "agent_seeds": list(result.agent_seeds),
                 "deal_scores": result.deal_scores.tolist()}
    return data


def to_json(config: SuiteConfig, rows: list[Row], results: dict[Table, EvalResult], version: str) -> dict[str, Any]:
    """Every figure of the battery, its settings and the per-deal scores of every table, as plain JSON values."""
    tables = list(dict.fromkeys(t for row in rows if row.skipped is None for t in row.tables))
    return {
        "format": FORMAT,
        "version": version,
        "agent": config.agent.strip(),
        "references": [r.strip() for r in config.references],
        "deals": config.deals,
        "reference_deals": config.reference_deals or config.deals,
        "seed": config.seed,
        "seeds": {"4p": config.seed, "self-play": config.seed + 1, "players": config.seed + 2},
        "players": list(config.players),
        "skip": list(config.skip),
        "rounds": "standard",
        "rows": [{"key": row.key, "kind": row.kind, "measurement": row.measurement, "result": result_text(row),
                  "skipped": row.skipped, "wall_seconds": row.wall_seconds,
                  "tables": [tables.index(t) for t in row.tables] if row.skipped is None else [],
                  "figures": None if row.figures is None else {k: v.to_json() for k, v in row.figures.items()}}
                 for row in rows],
        "tables": [table_json(t, results.get(t)) for t in tables],
    }


def format_markdown(data: dict[str, Any]) -> str:
    """The battery's table (the model card's format) from its JSON."""
    deals = f"{data['deals']:,} duplicate deals per row"
    if data["reference_deals"] != data["deals"]:
        deals += f" ({data['reference_deals']:,} against the references)"
    lines = [f"Evaluation battery of `{data['agent']}` (`wizard eval-suite`, wizard-env {data['version']}): {deals}, "
             f"each played in every rotation of the seats; standard rounds; 95% intervals over deals; "
             f"seeds {data['seed']} (4 players), {data['seed'] + 1} (self-play), {data['seed'] + 2} (other player counts).",
             "", "| measurement | result |", "| --- | --- |"]
    lines += [f"| {row['measurement']} | {row['result']} |" for row in data["rows"]]
    return "\n".join(lines) + "\n"


def prepare(config: SuiteConfig) -> list[Row]:
    """Check the settings, build the agent and the references once (a bad checkpoint fails here, before any
    game), and plan the rows; ValueError naming the option at fault."""
    config.check()
    try:
        players = getattr(make_agent(config.agent, 0, sees_hidden=True), "players", None)
    except ValueError as err:
        raise ValueError(f"AGENT: {err}") from None
    check_references(config.references)
    return plan(config, None if players is None else tuple(players))


def check_references(references: Sequence[str]) -> None:
    """ValueError naming ``--reference`` and the first reference that builds no agent (a missing or damaged
    checkpoint, ...) or one that does not play the battery's 4-player tables."""
    for spec in references:
        try:
            players = getattr(make_agent(spec, 0, sees_hidden=True), "players", None)
        except ValueError as err:
            raise ValueError(f"--reference: {err}") from None
        if players is not None and TABLE_PLAYERS not in players:
            raise ValueError(f"--reference {spec}: its network was trained for {'/'.join(map(str, players))} players, "
                             f"and the reference tables have {TABLE_PLAYERS}")


def run_suite(config: SuiteConfig, log: Callable[[str], object] | None = None, quiet: bool = False,
              version: str = "unknown", rows: list[Row] | None = None) -> dict[str, Any]:
    """Play the battery (the ``rows`` of ``prepare``, made here if None) and return its JSON (``to_json``);
    ``log`` gets a line as each row starts and ends, and progress lines unless ``quiet``. With ``config.workers``
    above 1 every table is handed to a pool of that many processes at once (progress lines from each, no bar), and
    the rows are reported in order as their tables come back: the same figures, in less wall time."""
    rows = prepare(config) if rows is None else rows
    say = (lambda line: None) if log is None or quiet else log
    results: dict[Table, EvalResult] = {}  # each table once: the play row reuses the rule row's table
    with ExitStack() as stack:
        pending: dict[Table, Future] = {}
        if config.workers > 1:
            pool = stack.enter_context(Workers(config.workers, say))
            tables = tables_of(rows)
            say(f"{len(tables)} tables on {config.workers} worker processes")
            for table, key in tables.items():
                pending[table] = pool.submit(timed_table, table, key, quiet, stderr_line, False)
        for i, row in enumerate(rows, 1):
            if row.skipped is not None:
                say(f"[{i}/{len(rows)}] {row.key}: not run ({row.skipped})")
                continue
            say(f"[{i}/{len(rows)}] {row.key}: {row.measurement} ...")
            row.wall_seconds = 0.0
            for table in (t for t in row.tables if t not in results):
                played = pending[table].result() if table in pending else timed_table(table, row.key, quiet, log)
                results[table], seconds = played
                row.wall_seconds += seconds
            row.figures = figures(row, results)
            say(f"[{i}/{len(rows)}] {row.key}: {result_text(row).replace('**', '')} ({row.wall_seconds:.1f} s)")
    return to_json(config, rows, results, version)


def tables_of(rows: list[Row]) -> dict[Table, str]:
    """The tables the rows play, each once, in order, with the key of the first row that plays it."""
    found: dict[Table, str] = {}
    for row in rows:
        if row.skipped is None:
            for table in row.tables:
                found.setdefault(table, row.key)
    return found


def stderr_line(line: str) -> None:
    """A worker's progress line (a module function, so that it pickles)."""
    print(line, file=sys.stderr, flush=True)


def timed_table(table: Table, key: str, quiet: bool, log: Callable[[str], object] | None,
                bar: bool = True, rules: Rules | None = None) -> tuple[EvalResult, float]:
    """``play_table`` and its wall seconds (in a worker process: ``log`` ``stderr_line`` and no ``bar``)."""
    with Stopwatch() as watch:
        result = play_table(table, key, quiet, log, rules, bar=bar)
    return result, watch.seconds


def play_table(table: Table, key: str, quiet: bool, log: Callable[[str], object] | None, rules: Rules | None = None,
               bar: bool = True) -> EvalResult:
    """Evaluate one table (``rules`` None: standard rounds), with a progress bar (``bar``, on a terminal) or lines
    named ``key``."""
    rules = Rules.make(len(table.agents)) if rules is None else rules
    rounds = table.deals * len(table.agents) * rules.num_rounds
    with Progress(key, rounds, "round", quiet or log is None, log or print, bar=bar) as progress:
        return evaluate(rules, table.agents, table.deals, table.seed, reference=table.agents[-1], progress=progress.update)


def json_text(data: dict[str, Any]) -> str:
    """The battery's JSON as its files hold it: one key a line, and each table, with its per-deal scores, on one line."""
    head = json.dumps({k: v for k, v in data.items() if k != "tables"}, indent=1, allow_nan=False)
    tables = ",\n".join(f"  {json.dumps(table, allow_nan=False)}" for table in data.get("tables", []))
    return f"{head[:-2]},\n \"tables\": [\n{tables}\n ]\n}}\n"


def write(data: dict[str, Any], out: str | os.PathLike) -> list[Path]:
    """Write suite.md, then suite.json (the commit point) into the folder ``out``; return their paths."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    md_path, json_path = folder / MARKDOWN_NAME, folder / JSON_NAME
    markdown = format_markdown(data)
    write_atomic(md_path, lambda file: file.write(markdown))
    write_atomic(json_path, lambda file: file.write(json_text(data)))
    return [md_path, json_path]


def run_to(out: str | os.PathLike, config: SuiteConfig, log: Callable[[str], object] | None = None, quiet: bool = False,
           version: str = "unknown") -> tuple[dict[str, Any], list[Path]]:
    """Check everything, hold ``out``'s run lock, play the battery and write its files; ValueError if another run holds it."""
    rows = prepare(config)
    return locked_run(out, "wizard eval-suite", lambda: run_suite(config, log, quiet, version, rows), write)
