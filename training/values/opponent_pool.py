"""The pool of ``wizard train-values --pool-tables F --pool SPEC,...``: earlier networks (or any agents that play from
observations) that the learner's network meets at the pool's tables, one drawn per game (``rollout_values.table_seats``).

A pool entry is an agent spec of the registry that plays from observations (``ppo-v3``, ``ppo-v2``, ``rule``,
``ppo:PATH:margin=0``), a checkpoint path or run folder (read as ``ppo:PATH``), or ``previous``: the agents that
collected the run's data so far, ``--start`` (RuleAgent without it) and the checkpoints of the iterations before the
one collecting, ``iter-0`` .. ``iter-(k-1)``. ``check_pool`` names the first impossible setting before a run writes
anything, ``pool_specs`` gives an iteration's pool as agent specs, and ``build_pool`` the agents a data chunk seats.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from wizard_env.agents.base import Agent
from wizard_env.agents.ppo_agent import PPOAgent, load_checkpoint
from wizard_env.agents.registry import OBSERVATION_AGENTS, SEARCH_AGENTS, is_agent_name, make_agent, refuse_hidden

from . import rollout_values as rv

#: The pool entry that stands for the agents of the run's earlier iterations (``pool_specs``).
PREVIOUS = "previous"


def names_checkpoint(entry: str) -> bool:
    """Whether a pool entry names a checkpoint file or run folder (not ``previous``, nor an agent of the registry)."""
    return bool(entry.strip()) and entry != PREVIOUS and not is_agent_name(entry.partition(":")[0])


def check_pool(pool: Sequence[str], pool_tables: float, rule_tables: float, mix: Sequence[int]) -> None:
    """ValueError naming (as ``--pool`` or ``--pool-tables``) the first impossible pool setting: shares summing past 1,
    a share without a pool or a pool without a share, an entry named twice, and an entry that is no agent of the
    registry, a search agent, an unreadable checkpoint or a network not trained for every player count of ``mix``."""
    if rule_tables + pool_tables > 1:
        raise ValueError(f"--pool-tables {pool_tables} with --rule-tables {rule_tables}: the two are shares of the "
                         f"same games (the rest self-play), so they sum to at most 1")
    if pool_tables and not pool:
        raise ValueError(f"--pool-tables needs --pool: the agents the network plays against ({PREVIOUS}, agent specs "
                         f"such as ppo-v3, or checkpoint paths, separated by commas)")
    if pool and not pool_tables:
        raise ValueError("--pool applies to --pool-tables only (the share of the games played against the pool)")
    for i, entry in enumerate(pool):
        if entry in pool[:i]:
            raise ValueError(f"--pool names {entry!r} twice: name each opponent once")
        _check_entry(entry, mix)


def _check_entry(entry: str, mix: Sequence[int]) -> None:
    """ValueError naming ``entry`` unless it is ``previous`` or builds an agent that plays every count of ``mix``."""
    if entry == PREVIOUS:
        return
    if not isinstance(entry, str) or not entry.strip() or entry != entry.strip():
        raise ValueError(f"--pool: {entry!r} is not an entry: give {PREVIOUS}, agent specs or checkpoint paths, "
                         f"separated by commas")
    refuse_hidden(entry, f"--pool {entry}")
    if entry.partition(":")[0] in SEARCH_AGENTS:
        raise ValueError(f"--pool {entry}: a search agent plays where the games are at hand, not from an observation "
                         f"as the tables and the rollouts ask; the pool takes {', '.join(OBSERVATION_AGENTS)}, "
                         f"checkpoint paths and {PREVIOUS}")
    try:
        agent = make_agent(spec_of(entry), seed=0)
    except ValueError as e:
        what = f"not an agent of the registry ({', '.join(OBSERVATION_AGENTS)}) nor a checkpoint: " if names_checkpoint(entry) else ""
        raise ValueError(f"--pool {entry}: {what}{e}") from None
    players = getattr(agent, "players", None)  # None: every count
    missing = sorted(set(mix) - set(players)) if players is not None else []
    if players is not None and missing:
        raise ValueError(f"--pool {entry}: its network was trained for {'/'.join(map(str, players))} players, not the "
                         f"{missing[0]} of --mix")


def spec_of(entry: str) -> str:
    """The agent spec of a pool entry other than ``previous``: a checkpoint path as ``ppo:PATH``."""
    return f"ppo:{entry}" if names_checkpoint(entry) else entry


def pool_specs(pool: Sequence[str], earlier: Sequence[str]) -> tuple[str, ...]:
    """An iteration's pool as agent specs, in the order of ``pool``: ``previous`` as ``earlier`` (the specs of the
    agents that collected the run's data so far), every other entry as ``spec_of`` gives it."""
    return tuple(spec for entry in pool for spec in (earlier if entry == PREVIOUS else [spec_of(entry)]))


def read_checkpoints(specs: Sequence[str]) -> dict[str, tuple[dict, dict[str, np.ndarray]]]:
    """The (config, weights) of every checkpoint the specs name as plain ``ppo:PATH``, by PATH: what Ray tasks are
    handed, since a cluster's machines need not see the driver's files."""
    paths = [spec.removeprefix("ppo:") for spec in specs if spec.startswith("ppo:") and ":" not in spec.removeprefix("ppo:")]
    return {path: load_checkpoint(path) for path in paths}


def build_pool(specs: Sequence[str], seed: int, read: dict[str, tuple[dict, dict[str, np.ndarray]]] | None = None) -> list[Agent]:
    """The agents of ``specs`` for the data chunk of ``seed``, the j-th seeded by the seed's stream
    ``(POOL_AGENT_STREAM, j)``; ``read``: checkpoints already read (``read_checkpoints``), used for the specs naming them."""
    agents: list[Agent] = []
    for j, spec in enumerate(specs):
        rng = np.random.default_rng([seed, rv.POOL_AGENT_STREAM, j])
        path = spec.removeprefix("ppo:")
        if read and spec.startswith("ppo:") and path in read:
            agents.append(PPOAgent(*read[path], seed=rng, source=path))
        else:
            agents.append(make_agent(spec, seed=rng))
    return agents
