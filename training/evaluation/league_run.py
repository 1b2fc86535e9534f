"""A league's run (``wizard league``): under the lock of its folder, it reuses the tables played there and in
``--from``, says what is left and how long it should take (from one timed deal per agent), plays every missing
table with progress lines, rewriting league.json after each, then writes league.md, league.png and league.json."""

from __future__ import annotations

import os
from concurrent.futures import as_completed
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Callable

import numpy as np

from wizard_env.util.files import check_writable
from wizard_env.util.stopwatch import Stopwatch
from wizard_env.util.workers import Workers

from ..common import run_lock
from .eval_suite import Table, stderr_line, timed_table
from .evaluate import evaluate
from .league import JSON_NAME, LeagueConfig, estimate, league_json, plan, prepare, read_tables, table_entry
from .league_report import write, write_json
from .pairing import pm

Played = dict[tuple[str, ...], dict[str, Any]]


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


#: An agent whose first timed deal takes less is timed again (a first call loads what it needs: torch, compiled code).
RETIME_BELOW = 5.0


def time_one_deal(config: LeagueConfig, specs: list[str], say: Callable[[str], object]) -> dict[str, float]:
    """Each agent's seconds for one deal in one seat (every rotation) beyond what four ``random`` take (the first
    deal of the league's seed, the other seats ``random``): what ``estimate`` needs. A quick agent is timed twice,
    the first call loading what it needs."""
    n = config.rules.num_players

    def one_deal(spec: str) -> float:
        with Stopwatch() as watch:
            evaluate(config.rules, [spec] + ["random"] * (n - 1), 1, config.seed)
        return watch.seconds

    base = min(one_deal("random") for _ in range(2))
    seconds = {}
    for spec in specs:
        took = one_deal(spec)
        if took < RETIME_BELOW:
            took = min(took, one_deal(spec))
        seconds[spec] = max(took - base, 0.0)
        say(f"  {spec}: {seconds[spec]:.1f} s a deal in one seat")
    return seconds


def _margin(table: Table, scores: np.ndarray) -> str:
    return f"{table.agents[0]} {pm(table.split(scores).diff)}"


def play_missing(config: LeagueConfig, folder: Path, played: Played, log: Callable[[str], object] | None,
                 quiet: bool, version: str, workers: int = 1) -> dict[str, Any]:
    """Play the league's tables missing from ``played`` (which it fills), saying first how many and how long they
    should take, on ``workers`` processes (above 1: progress lines from each, no bar); league.json in ``folder`` is
    rewritten after each table. The league's JSON, the same for any ``workers``."""
    say = (lambda line: None) if log is None or quiet else log
    tables = plan(config)
    missing = [t for t in tables if t.agents not in played]
    n, deals = config.rules.num_players, config.deals
    say(f"league: {len(config.agents)} agents, {len(tables) // 2} pairings, {len(tables)} tables of {deals:,} deals "
        f"x {n} rotations ({deals * n:,} games each); {len(tables) - len(missing)} tables already played, "
        f"{len(missing)} to play ({len(missing) * deals * n:,} games)")
    if not missing:
        return league_json(config, played, version)
    say("timing one deal of each agent ...")
    per_deal = time_one_deal(config, sorted({s for t in missing for s in t.agents}), say)
    guess = {t: estimate(config, [t], per_deal.__getitem__) / min(workers, len(missing)) for t in missing}
    on = f" on {workers} worker processes" if workers > 1 else ""
    say(f"estimated time: {_duration(sum(guess.values()))}{on} (from one deal at a time: many deals at once go faster)")
    done = 0
    with ExitStack() as stack:
        if workers > 1:
            pool = stack.enter_context(Workers(workers, say))
            futures = {pool.submit(timed_table, t, " ".join(t.agents), quiet, stderr_line, False, config.rules): t
                       for t in missing}
            results = ((futures[f], f.result()) for f in as_completed(futures))
        else:
            results = ((t, timed_table(t, " ".join(t.agents), quiet, log, True, config.rules)) for t in missing)
        try:
            for k in range(1, len(missing) + 1):
                if workers == 1:
                    say(f"[{k}/{len(missing)}] {' '.join(missing[k - 1].agents)} ...")
                table, (result, seconds) = next(results)
                played[table.agents] = table_entry(table, result.deal_scores, seconds, version)
                write_json(league_json(config, played, version), folder)
                done, guess[table] = k, 0.0
                left = "" if k == len(missing) else f"; estimated {_duration(sum(guess.values()))} left"
                say(f"[{k}/{len(missing)}] {_margin(table, result.deal_scores)} ({seconds:.1f} s{left})")
        except BaseException:  # Ctrl-C, SIGTERM, an agent that fails: the tables played so far stay
            say(f"stopped after {done} of {len(missing)} tables: those are kept in {folder / JSON_NAME}, and the "
                "same command plays the rest")
            raise
    return league_json(config, played, version)


def run_to(out: str | os.PathLike, config: LeagueConfig, log: Callable[[str], object] | None = None,
           quiet: bool = False, version: str = "unknown", sources: tuple[str | os.PathLike, ...] = (),
           workers: int = 1) -> tuple[dict[str, Any], list[Path]]:
    """Check everything (agents, the JSON of ``sources`` and of ``out``: their settings must be the league's) before
    any file is written, then under ``out``'s run lock play what is missing and write league.md, league.png and
    league.json; ValueError if another run holds the folder. The league's JSON and the paths written."""
    prepare(config)
    folder = Path(out)
    own = folder / JSON_NAME
    played: Played = {}
    for source in sources:
        played |= read_tables(source, config)
    if own.exists():
        read_tables(own, config)  # a league of other settings is refused now, with nothing written
    check_writable(folder, folder=True)
    folder.mkdir(parents=True, exist_ok=True)
    with run_lock(folder, "wizard league"):
        if own.exists():  # read under the lock: a run that just ended may have added tables
            played |= read_tables(own, config)
        data = play_missing(config, folder, played, log, quiet, version, workers)
        return data, write(data, folder)

