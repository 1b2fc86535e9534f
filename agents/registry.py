"""Agents by name, as the command line and replay files write them.

``rule``, ``random``; ``ppo`` (the shipped agent, 3-6 players: bids and card play learned by wizard train-values and
expert iteration; see its MODEL_CARD.md); ``ppo-v13`` (wizard-v13 by a name that stays when ``ppo`` moves on);
``ppo-v12`` (the agent shipped before it, the iteration its run kept before it); ``ppo-v11`` (the one before, which
``ppo-v12``'s run started from); ``ppo-v10`` (the one before, which ``ppo-v11``'s run started from); ``ppo-v9`` (the
one before, which ``ppo-v10``'s run started from); ``ppo-v8`` (the one before, which ``ppo-v9``'s run started from);
``ppo-v7`` (the one before, which ``ppo-v8``'s run started from); ``ppo-v6`` (the one before, the iteration its gated
run kept before ``ppo-v7``); ``ppo-v5`` (the network that run started from); ``ppo-v4`` (the one shipped before that,
which ``ppo-v5`` was trained from); ``ppo-v3`` (which ``ppo-v4`` was trained from); ``ppo-v2`` (which ``ppo-v3`` was
trained from); ``ppo-v1`` (which ``ppo-v2`` was trained from);
``ppo-bid`` (the earlier shipped 4-player agent: bids learned, RuleAgent's card play);
``ppo:PATH`` (a checkpoint of ``wizard train`` or ``train-values``, or a run folder: its ``checkpoints/latest.npz``);
``baseline:PATH`` (a from-scratch baseline of ``wizard baseline``, or a run folder: its network, which reads the
observation alone, makes every decision, greedily over the legal actions; a network with RuleAgent's advice is refused);
``pimc`` (search on determinized rollouts, options ``samples=N``, ``bid_samples=N`` (worlds per bid),
``rollout=rule|ppo`` (or another shipped network: ``rollout=ppo-v3``), ``infer=bids`` with ``model=rule|ppo``,
``over=K``, ``temp=T`` and ``resample=multinomial|systematic``, and ``top=K`` (search only the network's K best-rated
actions): ``pimc:samples=32:rollout=ppo``, ``pimc:samples=16:infer=bids``, ``pimc:samples=16:rollout=ppo:top=4``; it
plays where the games are at hand, as in ``wizard eval``); ``search`` (``pimc`` with the options ``SEARCH_OPTIONS``:
``ppo-v7`` as rollout policy, prior and bid model, worlds weighed by the bids; its own options override them,
``search:samples=16``).
A ``ppo`` spec takes the option ``play=rule`` to hand card play to RuleAgent: ``ppo:play=rule``, ``ppo:PATH:play=rule`` (``:`` separates the parts,
since ``,`` separates the agents of ``--agents``); and for a network of ``wizard train-values`` ``margin=X`` (points a
departure from RuleAgent's choice must promise, every phase) and ``play-margin=Y`` (card play alone) to play it with
other margins than its checkpoint's: ``ppo:margin=0`` is the shipped network with no margin.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np

from .base import Agent
from .pimc_agent import PIMCAgent
from .pimc_agent import parse_options as _pimc_options
from .ppo_agent import PLAY_MODES, SHIPPED, PPOAgent
from .random_agent import RandomAgent
from .rule_agent import RuleAgent

Seed = int | np.random.Generator | None

#: Builds an agent from the spec's argument (the text after ``:``, or None) and a seed.
Factory = Callable[[str | None, Seed], Agent]


def _without_argument(cls: type[RandomAgent] | type[RuleAgent]) -> Factory:
    def build(arg: str | None, seed: Seed) -> Agent:
        if arg is not None:
            raise ValueError(f"agent {cls.name!r} takes no argument, got {cls.name}:{arg}")
        return cls(seed=seed)

    return build


def _ppo_options(arg: str | None, default: Path) -> tuple[Path | str, str, dict[str, float]]:
    """(checkpoint, play, margins) from ``PATH``, ``play=rule``, ``margin=X``, ``play-margin=Y`` joined by ``:`` (no
    argument: ``default``, played by the net with its checkpoint's margins)."""
    path, play = None, "net"
    margins: dict[str, float] = {}
    for part in arg.split(":") if arg else []:
        key, sep, value = part.partition("=")
        if not sep:
            if path is not None:
                raise ValueError(f"agent spec 'ppo:{arg}' names two checkpoints")
            path = part
        elif key == "play" and value in PLAY_MODES:
            play = value
        elif key in ("margin", "play-margin"):
            try:
                points = float(value)
            except ValueError:
                points = np.nan
            if not 0 <= points < np.inf:
                raise ValueError(f"agent spec 'ppo:{arg}': {key} must be a number of points >= 0, not {value!r}")
            margins.update({"bid": points, "play": margins.get("play", points)} if key == "margin" else {"play": points})
        else:
            raise ValueError(f"agent spec 'ppo:{arg}': unknown option {part!r} (options: play={'|'.join(PLAY_MODES)}, "
                             f"margin=X, play-margin=Y)")
    return (default if path is None else path), play, margins


def _ppo_from(default: Path) -> Factory:
    def build(arg: str | None, seed: Seed) -> Agent:
        path, play, margins = _ppo_options(arg, default)
        return PPOAgent.load(path, seed=seed, play=play, margins=margins)

    return build


def _baseline(arg: str | None, seed: Seed) -> Agent:
    """A from-scratch baseline (``wizard baseline``): a checkpoint whose network reads the observation alone and makes
    every decision, played greedily over the legal actions."""
    if arg is None:
        raise ValueError("agent 'baseline' needs a checkpoint: baseline:PATH, a wizard baseline run folder or a .npz in it")
    agent = PPOAgent.load(arg, seed=seed)
    if agent.advice or agent.features or agent.learn != "both":
        raise ValueError(f"checkpoint {agent.source}: a baseline's network reads the observation alone and makes every "
                         "decision; this one reads RuleAgent's advice or numbers or leaves a phase to RuleAgent: play it as ppo:PATH")
    agent.name = "baseline"
    return agent


def _pimc(arg: str | None, seed: Seed) -> Agent:
    return PIMCAgent(**_pimc_options(arg), seed=seed)


#: ``search``: the strongest agent measured (docs/search.md, "Search with the network"; its model card,
#: agents/pretrained/MODEL_CARD-search.md), ``pimc`` with these options; a ``search`` spec's own options override them
#: (``search:samples=16``). It was ``pimc:samples=16:rollout=ppo:top=3:infer=bids`` and then
#: ``pimc:samples=32:rollout=ppo:top=3:infer=bids`` (RuleAgent's bid model) until 2026-12-05, with ``ppo`` then
#: wizard-v7; it names wizard-v7 (``ppo-v7``) since ``ppo`` became wizard-v8, so that it plays what was measured.
SEARCH_OPTIONS = "samples=32:rollout=ppo-v7:top=3:infer=bids:model=ppo-v7:over=8:resample=systematic"


def _search(arg: str | None, seed: Seed) -> Agent:
    return PIMCAgent(**_pimc_options(arg, "search", _pimc_options(SEARCH_OPTIONS)), seed=seed)


_FACTORIES: dict[str, Factory] = {
    "random": _without_argument(RandomAgent),
    "rule": _without_argument(RuleAgent),
    **{name: _ppo_from(path) for name, path in SHIPPED.items()},
    "baseline": _baseline,
    "pimc": _pimc,
    "search": _search,
}

#: Agent names ``make_agent`` knows.
AGENT_NAMES: tuple[str, ...] = tuple(_FACTORIES)
#: Agents that search the game itself (``act_games``), so they cannot play from an observation and a mask alone.
SEARCH_AGENTS: tuple[str, ...] = ("pimc", "search")
#: The agents that play from observations: every player of the envs' opponent seats and of ``wizard simulate``.
OBSERVATION_AGENTS: tuple[str, ...] = tuple(name for name in AGENT_NAMES if name not in SEARCH_AGENTS)


def parse_spec(spec: str) -> tuple[str, str | None]:
    """Split ``"name"`` or ``"name:arg"`` into (name, arg or None); ValueError for an unknown name or an option given twice."""
    if not isinstance(spec, str):
        raise ValueError(f"an agent spec is a string such as 'rule', not {spec!r}")
    name, sep, arg = spec.strip().partition(":")
    if name not in _FACTORIES:
        raise ValueError(f"unknown agent {name!r}: known agents are {', '.join(AGENT_NAMES)}")
    if sep and not arg:
        raise ValueError(f"agent spec {spec!r} has ':' but nothing after it")
    keys = [part.partition("=")[0] for part in arg.split(":") if "=" in part] if sep else []
    twice = next((key for i, key in enumerate(keys) if key in keys[:i]), None)
    if twice is not None:
        raise ValueError(f"agent spec {spec!r} gives the option {twice!r} twice: give it once")
    return name, arg if sep else None


def searches_games(agent: str | Agent) -> bool:
    """Whether ``agent`` (a spec or an Agent) searches the game itself, so it plays only where the games are at hand."""
    return parse_spec(agent)[0] in SEARCH_AGENTS if isinstance(agent, str) else isinstance(agent, PIMCAgent)


def make_agent(spec: str, seed: Seed = None) -> Agent:
    """Build the agent named by ``spec`` (``"rule"``, ``"random"``, ``"name:arg"``), seeded with ``seed``."""
    name, arg = parse_spec(spec)
    return _FACTORIES[name](arg, seed)
