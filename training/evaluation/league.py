"""Every agent against every other (``wizard league AGENT...``): the paired margin of each two agents on duplicate
deals, and an openskill rating of each.

For each two agents A and B (a *pairing*), ``evaluate`` plays two tables on the same ``deals`` deals of ``seed``,
each deal in every rotation of the seats: one A against n - 1 B, and n - 1 A against one B (n players, 4 by
default). Every table of every pairing plays the same deals. The margin of A over B is, per deal, A's mean score
minus B's at each table, averaged over the two tables; its figure is the mean over deals with its 95% interval
(``pairing.Figure``), and B's margin over A is its negative. The ratings are openskill's (Plackett-Luce) over every
deal of every table, a deal ranking the two agents by their mean scores at it (``evaluate.ratings``).

A pairing's tables are those of its two specs in sorted order (``pair_tables``), so they do not depend on the order
the agents are named in or on the other agents: the league's JSON keeps every table played, and a run reuses those of
its folder (and of ``--from``), playing only the tables missing. Adding an agent to a finished league plays its own
pairings alone; a run stopped part way keeps every table it finished (league.json is rewritten after each).
``league_report`` writes the Markdown and the figure.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from wizard_env.agents.registry import make_agent, parse_spec
from wizard_env.engine.rules import Rules
from wizard_env.engine.simulate import derive_seeds
from wizard_env.render.replay_text import describe_rules
from wizard_env.util import options
from wizard_env.util.checks import check_seed
from wizard_env.util.files import read_json

from .eval_suite import Table, versus
from .evaluate import EVAL_BYTES_PER_GAME, RATING_ORDERS, ratings
from .pairing import Figure

FORMAT = "wizard-league/1"
JSON_NAME, MARKDOWN_NAME, PNG_NAME = "league.json", "league.md", "league.png"
DEFAULT_DEALS = 100
DEFAULT_SEED = 1


@dataclass(frozen=True)
class LeagueConfig:
    """What a league plays: its agents, the rules, the deals of every table and their seed."""

    agents: tuple[str, ...]  #: agent specs, each met by every other
    rules: Rules  #: the game of every table
    deals: int = DEFAULT_DEALS  #: duplicate deals per table (each played in every rotation)
    seed: int = DEFAULT_SEED  #: seed of the deals and the agents: the same at every table
    note: str = ""  #: a paragraph of Markdown under the title of league.md

    def check(self) -> None:
        """ValueError naming the agent or the option at fault; builds nothing."""
        for spec in self.agents:
            try:
                parse_spec(spec)
            except ValueError as err:
                raise ValueError(f"AGENT {spec!r}: {err}") from None
        twice = next((s for i, s in enumerate(self.agents) if s in self.agents[:i]), None)
        if twice is not None:
            raise ValueError(f"AGENT {twice!r} is named twice: name each agent once")
        if len(self.agents) < 2:
            raise ValueError(f"a league needs at least 2 agents, not {len(self.agents)}")
        options.check_range("--deals", self.deals, 2)  # an interval over deals needs two of them
        check_seed(self.seed, "--seed")
        options.check_memory("--deals", self.deals, EVAL_BYTES_PER_GAME * self.rules.num_players ** 2)

    def settings(self) -> dict[str, Any]:
        """What every table shares, as league.json holds it: a folder's tables are reused only under these."""
        return {"players": self.rules.num_players, "rules": self.rules.to_dict(), "seed": self.seed, "deals": self.deals}


def config_of(data: Any, path: str | os.PathLike, more: tuple[str, ...] = (), note: str = "") -> LeagueConfig:
    """The league of a league's JSON (``wizard league --from``), with the agents ``more`` after its own; ValueError
    naming the file when it is no league's JSON."""
    try:
        if data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format')!r}, not {FORMAT!r}")
        rules = Rules.from_dict(data["players"], data["rules"])
        agents = tuple(dict.fromkeys([*data["agents"], *more]))
        config = LeagueConfig(agents, rules, data["deals"], data["seed"], note)
    except (AttributeError, KeyError, TypeError, ValueError) as err:
        raise ValueError(f"{path}: not the JSON of a `wizard league` ({type(err).__name__}: {err})") from None
    config.check()
    return config


def pairings(agents: tuple[str, ...]) -> list[tuple[str, str]]:
    """Every two agents, in the order named."""
    return list(itertools.combinations(agents, 2))


def pair_tables(a: str, b: str, config: LeagueConfig) -> tuple[Table, Table]:
    """The tables of the pairing of ``a`` and ``b``: the first of the two specs in sorted order once against n - 1 of
    the other, then n - 1 times against one (its entries are each table's ``mine``)."""
    first, second = sorted((a, b))
    n, seed, deals = config.rules.num_players, config.seed, config.deals
    return versus(first, second, 1, n, seed, deals), versus(first, second, n - 1, n, seed, deals)


def plan(config: LeagueConfig) -> list[Table]:
    """Every table of the league, pairing by pairing."""
    return [table for a, b in pairings(config.agents) for table in pair_tables(a, b, config)]


def prepare(config: LeagueConfig) -> None:
    """Check the settings and build every agent once, so that a bad spec or checkpoint, or a network trained for
    other player counts, fails before any game or file; ValueError naming the agent."""
    config.check()
    n = config.rules.num_players
    for spec in config.agents:
        try:
            players = getattr(make_agent(spec, 0), "players", None)
        except ValueError as err:
            raise ValueError(f"AGENT {spec!r}: {err}") from None
        if players is not None and n not in players:
            raise ValueError(f"AGENT {spec!r} plays {'/'.join(map(str, players))} players, not the {n} of this league "
                             "(--players)")


# -- the tables played, as league.json keeps them -----------------------------------------------------------


def read_tables(path: str | os.PathLike, config: LeagueConfig) -> dict[tuple[str, ...], dict[str, Any]]:
    """The tables a league's JSON holds, by their agents; ValueError naming the file when it is no league's JSON or
    its league played other settings (naming the first that differs), so that no table of other settings is used."""
    data, problem = read_json(path)
    if problem is not None:
        raise ValueError(f"{path} {problem}")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path}: not the JSON of `wizard league` (format {FORMAT!r})")
    mine = config.settings()
    for key, option in (("players", "--players"), ("rules", "the variant options"), ("seed", "--seed"), ("deals", "--deals")):
        if data.get(key) != mine[key]:
            raise ValueError(f"{path} is a league of other settings ({option}: {data.get(key)!r}, not {mine[key]!r}): "
                             "give its settings, or another --out")
    shape = (config.deals, config.rules.num_players)
    tables = {}
    for entry in data.get("tables", []):
        scores = np.asarray(entry.get("deal_scores") if isinstance(entry, dict) else None, dtype=object)
        agents = entry.get("agents") if isinstance(entry, dict) else None
        wall = entry.get("wall_seconds") if isinstance(entry, dict) else None
        if (not isinstance(agents, list) or len(agents) != shape[1] or scores.shape != shape
                or not isinstance(wall, (int, float)) or not all(isinstance(v, (int, float)) and np.isfinite(v) for v in scores.flat)):
            raise ValueError(f"{path}: a table that is not {shape[0]} deals of {shape[1]} scores with its agents and wall "
                             f"seconds: {str(entry)[:120]}")
        tables[tuple(agents)] = entry
    return tables


def table_entry(table: Table, deal_scores: np.ndarray, wall_seconds: float, version: str) -> dict[str, Any]:
    """One table played, as league.json keeps it."""
    return {"agents": list(table.agents), "wall_seconds": round(wall_seconds, 2), "version": version,
            "deal_scores": deal_scores.tolist()}


def _sides(table: Table, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per deal: the mean score of the table's ``mine`` entries (the first spec's), and of the others (the second's)."""
    others = [e for e in range(len(table.agents)) if e not in table.mine]
    return scores[:, list(table.mine)].mean(axis=1), scores[:, others].mean(axis=1)


def _first_minus_second(table: Table, scores: np.ndarray) -> np.ndarray:
    first, second = _sides(table, scores)
    return first - second


def pair_json(a: str, b: str, config: LeagueConfig, played: dict[tuple[str, ...], dict]) -> dict[str, Any]:
    """The margin of ``a`` over ``b`` (both tables, and each), from the tables played."""
    one, rest = pair_tables(a, b, config)
    sign = 1.0 if sorted((a, b))[0] == a else -1.0
    by_table = [sign * _first_minus_second(t, np.asarray(played[t.agents]["deal_scores"], np.float64)) for t in (one, rest)]
    if sign < 0:  # a is the second spec: its one-against-the-rest table is the other
        by_table.reverse()
    return {"agents": [a, b], "margin": Figure.over_deals((by_table[0] + by_table[1]) / 2).to_json(),
            "one_vs_rest": Figure.over_deals(by_table[0]).to_json(), "rest_vs_one": Figure.over_deals(by_table[1]).to_json(),
            "wall_seconds": round(sum(played[t.agents]["wall_seconds"] for t in (one, rest)), 2)}


def league_ratings(config: LeagueConfig, played: dict[tuple[str, ...], dict]) -> list[dict[str, Any]]:
    """Each agent's openskill rating over every deal of every table (a deal ranks its two agents by their mean scores)."""
    index = {spec: k for k, spec in enumerate(config.agents)}
    rows = []
    for table in plan(config):
        first, second = sorted(set(table.agents))  # the spec of ``mine`` first (pair_tables)
        block = np.full((table.deals, len(index)), np.nan)
        scores = np.asarray(played[table.agents]["deal_scores"], np.float64)
        block[:, index[first]], block[:, index[second]] = _sides(table, scores)
        rows.append(block)
    rated = ratings(np.concatenate(rows), config.seed)
    return [{"agent": spec, "mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal, "mu_spread": r.mu_spread}
            for spec, r in zip(config.agents, rated)]


def league_json(config: LeagueConfig, played: dict[tuple[str, ...], dict], version: str) -> dict[str, Any]:
    """The league as league.json holds it: its settings, every pairing whose tables are played (all, once
    ``finished``), the ratings once finished, and every table played (those of other agents too, kept for later)."""
    tables = plan(config)
    finished = all(t.agents in played for t in tables)
    pairs = [pair_json(a, b, config, played) for a, b in pairings(config.agents)
             if all(t.agents in played for t in pair_tables(a, b, config))]
    deal_seeds, agent_seeds = derive_seeds(config.seed, config.deals, config.rules.num_players)
    return config.settings() | {
        "format": FORMAT, "version": version, "agents": list(config.agents), "rules_text": describe_rules(config.rules),
        "note": config.note, "finished": finished, "rating_orders": RATING_ORDERS,
        "games": len(tables) * config.deals * config.rules.num_players,
        "wall_seconds": round(sum(played[t.agents]["wall_seconds"] for t in tables if t.agents in played), 2),
        "deal_seeds": deal_seeds, "agent_seeds": agent_seeds,
        "ratings": league_ratings(config, played) if finished else None, "pairs": pairs,
        "tables": sorted(played.values(), key=lambda entry: entry["agents"]),
    }


def estimate(config: LeagueConfig, tables: list[Table], seconds_per_deal: Callable[[str], float]) -> float:
    """Seconds the ``tables`` should take, from each agent's seconds for one deal in one seat (``seconds_per_deal``):
    a table plays every deal with each of its entries once in each seat."""
    return sum(config.deals * sum(seconds_per_deal(spec) for spec in table.agents) for table in tables)
