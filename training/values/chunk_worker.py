"""The work of one data chunk of ``wizard train-values`` (``train_values``): a worker process or Ray task plays its
games and values its decisions (``rollout_values.collect_values``), the task that says which (``chunk_task``); and
the chunk files' checked reading."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from wizard_env.agents.ppo_agent import LEARNED_PHASES, PPOAgent, load_checkpoint
from wizard_env.engine.rules import Rules

from . import rollout_values as rv
from ..common import json_rules, rules_json
from .opponent_pool import build_pool

if TYPE_CHECKING:
    from .values_config import ValuesConfig


def chunk_task(cfg: ValuesConfig, path: Path, rules: Rules, iteration: int, index: int, checkpoint: str,
               opponents: tuple[str, ...]) -> tuple:
    """The task of chunk ``index`` of ``iteration`` (what ``_chunk_samples`` unpacks), to be written to ``path``: its
    seed a function of the run's seed, the iteration and the index; ``checkpoint``: the agent that collects ("": none);
    ``opponents``: the pool's agent specs."""
    seed = int(np.random.default_rng([cfg.seed, iteration, index]).integers(2**62))
    search = cfg.search_samples if cfg.targets == "search" else 0  # 0: rollout values in the true deal
    return (str(path), rules_json(rules), cfg.games, seed, LEARNED_PHASES[cfg.learn], cfg.share, checkpoint,
            cfg.torch_threads, search, cfg.search_top if search else 0, cfg.rule_tables, opponents, cfg.pool_tables,
            cfg.advice, bool(search and cfg.search_infer))


def _collect_chunk(task: tuple) -> tuple[str, int]:
    """Worker: one data chunk, written atomically to ``path``; (path, samples)."""
    samples = _chunk_samples(task)
    rv.write_chunk(task[0], samples)
    return task[0], len(samples.advice)


def _chunk_samples(task: tuple, agent: tuple[dict, dict] | None = None, read: dict | None = None) -> rv.ValueSamples:
    """Worker: the decisions of one data chunk, not written (a Ray task returns them to the driver). ``agent``: the
    (config, weights) of the task's checkpoint, and ``read`` those of the pool's (``opponent_pool.read_checkpoints``),
    already read (a cluster's machines need not see the driver's files)."""
    path, rules, games, seed, phases, share, checkpoint, torch_threads, search_samples, search_top = task[:10]
    rule_tables, pool, pool_tables, advice, search_infer = task[10:]
    from threadpoolctl import threadpool_limits

    threadpool_limits(torch_threads, user_api="blas")
    behaviour = None
    if checkpoint:
        config, weights = agent if agent is not None else load_checkpoint(checkpoint)
        behaviour = PPOAgent(config, weights, seed=np.random.default_rng([seed, 3]), source=checkpoint)
    return rv.collect_values(json_rules(rules), games, seed, phases, share, behaviour=behaviour, rollout=behaviour,
                             search_samples=search_samples, search_top=search_top, rule_tables=rule_tables,
                             pool=build_pool(pool, seed, read), pool_tables=pool_tables, advice=advice,
                             search_infer=search_infer)


#: How to recover from a damaged data chunk: chunk N of an iteration is a function of the run's seed and the agent
#: of the iteration before, so the run collects the same chunk again.
CHUNK_RECOVERY = "delete it and run again with --resume: it will be collected again"


def chunk_samples(path: Path) -> int:
    """Decisions in a finished chunk file, read whole and checked; ValueError naming it and how to recover."""
    try:
        return len(rv.read_chunk(path).advice)
    except ValueError as e:
        raise ValueError(f"{e}; {CHUNK_RECOVERY}") from None
