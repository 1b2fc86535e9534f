"""Agents by name, as the command line and replay files write them: ``"rule"``, ``"random"``, ``"ppo:PATH"``, ``"ppo"``."""

from __future__ import annotations

from typing import Callable

import numpy as np

from .base import Agent
from .ppo_agent import PRETRAINED, PPOAgent
from .random_agent import RandomAgent
from .rule_agent import RuleAgent

Seed = int | np.random.Generator | None

#: Builds an agent from the spec's argument (the text after ``:``, or None) and a seed.
Factory = Callable[[str | None, Seed], Agent]


def _without_argument(cls: type[Agent]) -> Factory:
    def build(arg: str | None, seed: Seed) -> Agent:
        if arg is not None:
            raise ValueError(f"agent {cls.name!r} takes no argument, got {cls.name}:{arg}")
        return cls(seed=seed)

    return build


def _ppo(arg: str | None, seed: Seed) -> Agent:
    """``ppo:PATH`` loads the checkpoint at PATH; ``ppo`` alone the shipped 4-player one."""
    return PPOAgent.load(PRETRAINED if arg is None else arg, seed=seed)


_FACTORIES: dict[str, Factory] = {
    "random": _without_argument(RandomAgent),
    "rule": _without_argument(RuleAgent),
    "ppo": _ppo,
}

#: Agent names ``make_agent`` knows.
AGENT_NAMES: tuple[str, ...] = tuple(_FACTORIES)


def parse_spec(spec: str) -> tuple[str, str | None]:
    """Split ``"name"`` or ``"name:arg"`` into (name, arg or None); ValueError for an unknown name."""
    if not isinstance(spec, str):
        raise ValueError(f"an agent spec is a string such as 'rule', not {spec!r}")
    name, sep, arg = spec.strip().partition(":")
    if name not in _FACTORIES:
        raise ValueError(f"unknown agent {name!r}: known agents are {', '.join(AGENT_NAMES)}")
    if sep and not arg:
        raise ValueError(f"agent spec {spec!r} has ':' but nothing after it")
    return name, arg if sep else None


def make_agent(spec: str, seed: Seed = None) -> Agent:
    """Build the agent named by ``spec`` (``"rule"``, ``"random"``, ``"name:arg"``), seeded with ``seed``."""
    name, arg = parse_spec(spec)
    return _FACTORIES[name](arg, seed)
