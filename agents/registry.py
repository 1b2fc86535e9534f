"""Agents by name, as the command line and replay files write them (``--agents net,rule,rule,rule``).

| spec | agent |
|---|---|
| ``rule`` | RuleAgent, the hand-written heuristic |
| ``random`` | a uniformly random legal action |
| ``net`` | the best network, 3-6 players (today ``net-v13``; docs/cards/net.md) |
| ``net-v1`` ... ``net-v13`` | each network of the lineage by a name that stays; ``net-v13``, ``net-v7`` and ``net-bid`` ship with the package, the others load from a clone's ``zoo/`` or from ``$WIZARD_ZOO`` (``zoo.network_file``) |
| ``net-bid`` | the earlier 4-player network: bids learned, RuleAgent's card play (docs/cards/net-bid.md) |
| ``net:PATH`` | a checkpoint of ``wizard train`` or ``train-values``, or a run folder (its ``checkpoints/latest.npz``) |
| ``baseline:PATH`` | a from-scratch baseline of ``wizard baseline`` (or its run folder): the network alone makes every decision, greedily over the legal actions; a network with RuleAgent's advice is refused |
| ``pimc`` | search on determinized rollouts, with options (below) |
| ``search`` | ``pimc`` with ``SEARCH_OPTIONS``: ``net-v7`` as rollout policy, prior and bid model, worlds weighed by the bids (docs/cards/search.md); its own options override them, ``search:samples=16`` |
| ``oracle`` | search on the true deal, every hidden card seen, for measurement only: ``wizard eval`` and ``eval-suite`` play it, everything else refuses it (``agents.oracle_agent``); ``oracle:rollout=rule`` |
| ``py:MODULE:NAME``, ``py:PATH.py:NAME`` | a user's agent: the class or factory ``NAME`` of a module or a file, with options ``key=value`` (``agents.user_agent``; it runs the user's code) |
| an installed name | an agent an installed package registers in the entry-point group ``wizard_env.agents`` (``agents.user_agent``) |

Every ``net`` name has an old ``ppo`` alias, the same agent: ``ppo``, ``ppo-v1`` ... ``ppo-v13``, ``ppo-bid``,
``ppo:PATH`` (``ALIASES``).

Options of a network (``net``, ``net-vN``, ``net-bid``, ``net:PATH``), joined by ``:`` (``,`` separates the agents of
``--agents``):

| option | effect |
|---|---|
| ``play=rule`` | RuleAgent plays the cards: ``net:play=rule``, ``net:PATH:play=rule`` |
| ``margin=X`` | a network of ``wizard train-values``: the points a departure from RuleAgent's choice must promise, every phase (``net:margin=0``: no margin) |
| ``play-margin=Y`` | the same for card play alone |

Options of ``pimc`` and ``search``: ``samples=N``, ``bid_samples=N`` (worlds per bid), ``rollout=rule|net`` (or
another network, ``rollout=net-v3``), ``infer=bids`` with ``model=rule|net``, ``over=K``, ``temp=T``,
``resample=multinomial|systematic``, ``top=K`` (search only the network's K best-rated actions):
``pimc:samples=32:rollout=net``, ``pimc:samples=16:infer=bids``. They play where the games are at hand, as in
``wizard eval``.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from wizard_env.util.checks import parse_float, shown_text

from . import user_agent
from .base import Agent
from .oracle_agent import HIDDEN_REFUSAL, OracleAgent
from .oracle_agent import parse_options as _oracle_options
from .pimc_agent import PIMCAgent
from .pimc_agent import parse_options as _pimc_options
from .ppo_agent import PLAY_MODES, NetAgent
from .random_agent import RandomAgent
from .rule_agent import RuleAgent
from .user_agent import PY, PY_FORM, UserAgent
from .zoo import BY_NAME, NETWORKS, in_short, network_file

Seed = int | np.random.Generator | None

#: Builds an agent from the spec's argument (the text after ``:``, or None) and a seed.
Factory = Callable[[str | None, Seed], Agent]


def _without_argument(cls: type[RandomAgent] | type[RuleAgent]) -> Factory:
    def build(arg: str | None, seed: Seed) -> Agent:
        if arg is not None:
            raise ValueError(f"agent {cls.name!r} takes no argument, got {cls.name}:{arg}")
        return cls(seed=seed)

    return build


def _net_options(name: str, arg: str | None) -> tuple[str | None, str, dict[str, float]]:
    """(checkpoint or None, play, margins) from ``PATH``, ``play=rule``, ``margin=X``, ``play-margin=Y`` joined by ``:``
    (no path: the network ``name`` plays, with its checkpoint's margins)."""
    path, play = None, "net"
    margins: dict[str, float] = {}
    for part in arg.split(":") if arg else []:
        key, sep, value = part.partition("=")
        if not sep:
            if path is not None:
                raise ValueError(f"agent spec '{name}:{arg}' names two checkpoints")
            path = part
        elif key == "play" and value in PLAY_MODES:
            play = value
        elif key in ("margin", "play-margin"):
            try:
                points = parse_float(value)
            except ValueError:
                points = np.nan
            if not 0 <= points < np.inf:
                raise ValueError(f"agent spec '{name}:{arg}': {key} must be a number of points >= 0, not {shown_text(value)}")
            margins.update({"bid": points, "play": margins.get("play", points)} if key == "margin" else {"play": points})
        else:
            raise ValueError(f"agent spec '{name}:{arg}': unknown option {part!r} (options: play={'|'.join(PLAY_MODES)}, "
                             f"margin=X, play-margin=Y)")
    return path, play, margins


def _net(name: str) -> Factory:
    """The factory of the network ``name``: its file (found when the agent is built), or the ``PATH`` of ``name:PATH``."""
    def build(arg: str | None, seed: Seed) -> Agent:
        path, play, margins = _net_options(name, arg)
        return NetAgent.load(NETWORKS[name] if path is None else path, seed=seed, play=play, margins=margins)

    return build


def _baseline(arg: str | None, seed: Seed) -> Agent:
    """A from-scratch baseline (``wizard baseline``): a checkpoint whose network reads the observation alone and makes
    every decision, played greedily over the legal actions."""
    if arg is None:
        raise ValueError("agent 'baseline' needs a checkpoint: baseline:PATH, a wizard baseline run folder or a .npz in it")
    agent = NetAgent.load(arg, seed=seed)
    if agent.advice or agent.features or agent.learn != "both":
        raise ValueError(f"checkpoint {agent.source}: a baseline's network reads the observation alone and makes every "
                         "decision; this one reads RuleAgent's advice or numbers or leaves a phase to RuleAgent: play it as net:PATH")
    agent.name = "baseline"
    return agent


def _pimc(arg: str | None, seed: Seed) -> Agent:
    return PIMCAgent(**_pimc_options(arg), seed=seed)


#: ``search``: the strongest agent measured (docs/search.md; its card, docs/cards/search.md), ``pimc`` with these
#: options; a ``search`` spec's own options override them (``search:samples=16``). It plays ``net-v7``, the network
#: it was measured with.
SEARCH_OPTIONS = "samples=32:rollout=net-v7:top=3:infer=bids:model=net-v7:over=8:resample=systematic"


def _search(arg: str | None, seed: Seed) -> Agent:
    return PIMCAgent(**_pimc_options(arg, "search", _pimc_options(SEARCH_OPTIONS)), seed=seed)


def _oracle(arg: str | None, seed: Seed) -> Agent:
    return OracleAgent(**_oracle_options(arg), seed=seed)


def _user_target(name: str, arg: str | None, spec: str) -> tuple[Callable[..., object], dict[str, object]]:
    """The class or factory of a user's agent (``py:SOURCE:NAME`` or an installed name) and its options."""
    parts = arg.split(":") if arg else []
    if name == PY:
        if len(parts) < 2 or "=" in parts[0] or "=" in parts[1]:
            raise ValueError(f"agent spec {spec!r}: give {PY_FORM}")
        return user_agent.load_target(spec, parts[0], parts[1]), user_agent.parse_options(spec, parts[2:])
    return user_agent.entry_target(name), user_agent.parse_options(spec, parts)


def _user(name: str) -> Factory:
    """The factory of ``py`` or of an installed agent ``name``: the user's class or factory, checked and named."""
    def build(arg: str | None, seed: Seed) -> Agent:
        spec = name if arg is None else f"{name}:{arg}"
        return user_agent.build(spec, *_user_target(name, arg, spec), seed)

    return build


_FACTORIES: dict[str, Factory] = {
    "random": _without_argument(RandomAgent),
    "rule": _without_argument(RuleAgent),
    **{name: _net(name) for name in BY_NAME},
    "baseline": _baseline,
    "pimc": _pimc,
    "search": _search,
    "oracle": _oracle,
    PY: _user(PY),
}

#: Agent names ``make_agent`` knows, the old ``ppo`` aliases among them.
AGENT_NAMES: tuple[str, ...] = tuple(_FACTORIES)
#: The old name of each network name that has one (``ppo-v3``: ``net-v3``); each plays the same agent.
ALIASES: dict[str, str] = {name: "net" + name[3:] for name in AGENT_NAMES if name.startswith("ppo")}
#: A user's agents in short, for help texts.
USER_SPECS = "py:MODULE:NAME, py:PATH.py:NAME, installed agents"
#: The agent names in short, for messages and help: the lineage as a range, without the old aliases.
NAMES_IN_SHORT = (in_short(["random", "rule", *BY_NAME, "net:PATH", "baseline:PATH", "pimc", "search", "oracle"])
                  + f", {USER_SPECS} (old names: ppo, ppo-vN, ppo-bid, ppo:PATH)")
#: Agents that search the game itself (``act_games``), so they cannot play from an observation and a mask alone.
SEARCH_AGENTS: tuple[str, ...] = ("pimc", "search", "oracle")
#: Agents that see every hidden card (``Agent.sees_hidden``): built only for the evaluator, refused everywhere else.
HIDDEN_AGENTS: tuple[str, ...] = ("oracle",)
#: The agents that play from observations: every player of the envs' opponent seats and of ``wizard simulate``.
OBSERVATION_AGENTS: tuple[str, ...] = tuple(name for name in AGENT_NAMES if name not in SEARCH_AGENTS)


def is_agent_name(name: str) -> bool:
    """Whether ``name`` names an agent: a built-in name, ``py`` or an agent an installed package registers."""
    return name in _FACTORIES or name in user_agent.installed_agents()


def parse_spec(spec: str) -> tuple[str, str | None]:
    """Split ``"name"`` or ``"name:arg"`` into (name, arg or None); ValueError for an unknown name, an option given
    twice or of the wrong type or range (naming the agent and the option), a network of the lineage that is not at
    hand (``zoo.network_file``'s line), or a user's agent whose module, file or class is not found or does not take
    its options (imported now), so a command fails before it plays."""
    if not isinstance(spec, str):
        raise ValueError(f"an agent spec is a string such as 'rule', not {spec!r}")
    name, sep, arg = spec.strip().partition(":")
    installed = user_agent.installed_agents()
    if name in installed and name in _FACTORIES:
        raise ValueError(f"agent {name!r}: the installed package {user_agent.where(installed[name][0])} registers a "
                         f"built-in name ({user_agent.ENTRY_POINT_GROUP}); rename its entry point or uninstall it")
    if name not in _FACTORIES and name not in installed:
        mine = f"; installed: {', '.join(sorted(installed))}" if installed else ""
        raise ValueError(f"unknown agent {name!r}: known agents are {NAMES_IN_SHORT}{mine}")
    if sep and not arg:
        raise ValueError(f"agent spec {spec!r} has ':' but nothing after it")
    keys = [part.partition("=")[0] for part in arg.split(":") if "=" in part] if sep else []
    twice = next((key for i, key in enumerate(keys) if key in keys[:i]), None)
    if twice is not None:
        raise ValueError(f"agent spec {spec!r} gives the option {twice!r} twice: give it once")
    if name == "oracle":  # each option's type and range, as the agent will read them (search: over its own)
        _oracle_options(arg if sep else None)
    elif name in SEARCH_AGENTS:
        _pimc_options(arg if sep else None, name, _pimc_options(SEARCH_OPTIONS) if name == "search" else None)
    elif name in BY_NAME:
        _net_options(name, arg if sep else None)
    path_given = bool(sep) and any("=" not in part for part in arg.split(":"))
    if name in BY_NAME and not path_given:
        network_file(name)  # found and checked now
    if name == PY or name in installed:  # imported now, and its options checked against its signature
        user_agent.check_call(spec.strip(), *_user_target(name, arg if sep else None, spec.strip()))
    return name, arg if sep else None


def searches_games(agent: str | Agent) -> bool:
    """Whether ``agent`` (a spec or an Agent) searches the game itself, so it plays only where the games are at hand."""
    if isinstance(agent, UserAgent):
        return agent.searches
    if not isinstance(agent, str):
        return isinstance(agent, PIMCAgent)
    name, arg = parse_spec(agent)
    if name != PY and name in _FACTORIES:
        return name in SEARCH_AGENTS
    target = _user_target(name, arg, agent.strip())[0]  # a class that overrides act_games searches the games
    return isinstance(target, type) and issubclass(target, Agent) and target.act_games is not Agent.act_games


def sees_hidden(agent: str | Agent) -> bool:
    """Whether ``agent`` (a spec or an Agent) sees every hidden card (``oracle``): for measurement only."""
    if isinstance(agent, str):
        return agent.strip().partition(":")[0] in HIDDEN_AGENTS  # any text: a checkpoint path is no agent name
    return getattr(agent, "sees_hidden", False) is True


def refuse_hidden(agent: str | Agent, where: str) -> None:
    """ValueError starting with ``where`` if ``agent`` (a spec or an Agent) sees hidden cards: everywhere but in
    evaluation, an agent plays from what its seat sees."""
    if sees_hidden(agent):
        raise ValueError(f"{where}: {HIDDEN_REFUSAL}")


def make_agent(spec: str, seed: Seed = None, sees_hidden: bool = False) -> Agent:
    """Build the agent named by ``spec`` (``"rule"``, ``"random"``, ``"name:arg"``, ``"py:mypkg.mod:MyAgent"``, an
    installed agent's name), seeded with ``seed``. An agent
    that sees hidden cards (``oracle``) is built only with ``sees_hidden=True``, which the evaluator alone passes;
    ValueError otherwise."""
    name, arg = parse_spec(spec)
    if name in HIDDEN_AGENTS and not sees_hidden:
        raise ValueError(f"agent {HIDDEN_REFUSAL}")
    return (_FACTORIES[name] if name in _FACTORIES else _user(name))(arg, seed)
