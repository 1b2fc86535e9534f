"""A user's own agent by name: ``py:`` specs that load a class or factory, and installed packages' named agents.

| spec | agent |
|---|---|
| ``py:MODULE:NAME`` | ``NAME`` of an importable module (``py:mypkg.agents:MyAgent``) |
| ``py:PATH.py:NAME`` | ``NAME`` of a Python file (``py:agents/mine.py:MyAgent``; a path relative to the current folder; its folder joins the end of ``sys.path``, so it imports its neighbours) |
| ``NAME`` | an agent an installed package registers in the entry-point group ``wizard_env.agents`` |

Options follow, joined by ``:``, as ``key=value``: ``py:mypkg.agents:MyAgent:depth=3:greedy=True``,
``myagent:depth=3``. Each is a keyword argument of ``NAME``, its value a Python literal (``3``, ``0.5``, ``True``,
``'x'``) or else the text itself. ``NAME`` is called with the options and ``seed=`` (an int, a
``numpy.random.Generator`` or None) where its signature takes ``seed``; it returns an ``Agent`` or any object with
``act_batch(observations, action_masks)``. A class that overrides ``Agent.act_games`` searches the games itself.

Loading a spec runs the user's code: the module, the file and ``NAME`` itself. Every user agent plays through
``UserAgent``, which names it in each error: an exception raised inside it (``AgentError``) and an illegal action
(``IllegalActionError`` with the legal ones).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import importlib.util
import inspect
import sys
from importlib import metadata
from pathlib import Path
from typing import Any, Callable

import numpy as np

from wizard_env.engine.actions import IllegalActionError, action_name, chosen_legal, legal_listing
from wizard_env.engine.game import NUM_ACTIONS

from .base import Agent, as_actions, check_batch

#: The entry-point group through which an installed package registers agents by name.
ENTRY_POINT_GROUP = "wizard_env.agents"
#: The spec prefix of an agent loaded from a module or a file.
PY = "py"
PY_FORM = "py:MODULE:NAME or py:PATH.py:NAME, then options key=value joined by ':'"


class AgentError(ValueError):
    """A user's agent that failed: it raised inside, or could not be built. The message names the agent."""


def parse_options(spec: str, parts: list[str]) -> dict[str, Any]:
    """The ``key=value`` options of ``spec`` as keyword arguments (a value is a Python literal, else its text)."""
    options: dict[str, Any] = {}
    for part in parts:
        key, sep, text = part.partition("=")
        if not sep or not key.isidentifier():
            raise ValueError(f"agent spec {spec!r}: {part!r} is not an option key=value (a spec is {PY_FORM})")
        if key == "seed":
            raise ValueError(f"agent spec {spec!r}: the seed comes from the command (--seed), not from the spec")
        try:
            options[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            options[key] = text
    return options


def _import_file(spec: str, path_text: str) -> Any:
    """The module of the Python file ``path_text``, imported once per process (its name derived from its path)."""
    path = Path(path_text).expanduser()
    if not path.is_file():
        raise ValueError(f"agent spec {spec!r}: no such Python file {path_text!r} (a relative path starts at the current folder)")
    resolved = path.resolve()
    name = f"wizard_user_agent_{resolved.stem}_{hashlib.sha1(str(resolved).encode()).hexdigest()[:10]}"
    if name in sys.modules:
        return sys.modules[name]
    loader_spec = importlib.util.spec_from_file_location(name, resolved)
    if loader_spec is None or loader_spec.loader is None:
        raise ValueError(f"agent spec {spec!r}: {path_text!r} cannot be imported as Python (name it .py)")
    module = importlib.util.module_from_spec(loader_spec)
    if str(resolved.parent) not in sys.path:  # so it imports the modules beside it, as `python FILE` would (last:
        sys.path.append(str(resolved.parent))  # a name found elsewhere keeps its meaning)
    sys.modules[name] = module  # as import does, so that classes of the file pickle and dataclasses resolve
    try:
        loader_spec.loader.exec_module(module)
    except Exception as err:
        del sys.modules[name]
        raise AgentError(f"agent spec {spec!r}: running {path_text} raised {type(err).__name__}: {err}") from err
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _import_module(spec: str, module_name: str) -> Any:
    """The module ``module_name``; ValueError when it is missing, AgentError when importing it raised."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        missing = err.name or module_name
        if module_name == missing or module_name.startswith(missing + "."):
            raise ValueError(f"agent spec {spec!r}: no module named {missing!r} (install it or put it on PYTHONPATH; "
                             f"a file is given as py:PATH.py:NAME)") from None
        raise AgentError(f"agent spec {spec!r}: importing {module_name!r} needs the module {missing!r}, which is not installed") from err
    except Exception as err:
        raise AgentError(f"agent spec {spec!r}: importing {module_name!r} raised {type(err).__name__}: {err}") from err


def load_target(spec: str, source: str, attribute: str) -> Callable[..., Any]:
    """``attribute`` of the module or ``.py`` file ``source``: the class or factory a spec names (ValueError if absent)."""
    is_file = source.endswith(".py") or "/" in source or "\\" in source
    module = _import_file(spec, source) if is_file else _import_module(spec, source)
    target = module
    for name in attribute.split("."):
        if not hasattr(target, name):
            raise ValueError(f"agent spec {spec!r}: {source} has no attribute {attribute!r}")
        target = getattr(target, name)
    if not callable(target):
        raise ValueError(f"agent spec {spec!r}: {source}:{attribute} is not a class or function that makes an agent "
                         f"(it is of type {type(target).__name__})")
    return target


def check_call(spec: str, target: Callable[..., Any], options: dict[str, Any]) -> bool:
    """Whether ``target`` takes ``seed=``; ValueError naming an option it does not take."""
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):  # a builtin without a signature: let the call decide
        return True
    parameters = signature.parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    keywords = [n for n, p in parameters.items() if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]
    unknown = [key for key in options if key not in keywords]
    called = getattr(target, "__name__", "it")
    if unknown and not takes_any:
        taken = ", ".join(k for k in keywords if k != "seed") or "none"
        raise ValueError(f"agent spec {spec!r}: unknown option {unknown[0]!r} ({called} takes: {taken})")
    takes_seed = takes_any or "seed" in keywords
    try:
        signature.bind(**options, **({"seed": None} if takes_seed else {}))
    except TypeError as err:  # a required argument the spec does not give
        raise ValueError(f"agent spec {spec!r}: {called}: {err} (give it as an option key=value)") from None
    return takes_seed


@functools.lru_cache(maxsize=1)
def installed_agents() -> dict[str, tuple[metadata.EntryPoint, ...]]:
    """The entry points installed packages declare in ``wizard_env.agents``, by agent name (read once per process;
    more than one under a name where two packages register it)."""
    found: dict[str, tuple[metadata.EntryPoint, ...]] = {}
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if entry.value not in (e.value for e in found.get(entry.name, ())):
            found[entry.name] = (*found.get(entry.name, ()), entry)
    return found


def where(entry: metadata.EntryPoint) -> str:
    """An entry point as a message shows it: its target and the distribution that declares it."""
    dist = getattr(entry, "dist", None)
    return f"{entry.value} (package {dist.name})" if dist is not None else entry.value


def entry_target(name: str) -> Callable[..., Any]:
    """The class or factory the installed agent ``name`` names; ValueError for a name two packages register or an
    entry point that cannot be loaded."""
    entries = installed_agents()[name]
    if len(entries) > 1:
        raise ValueError(f"agent {name!r}: two installed packages register it ({ENTRY_POINT_GROUP}): "
                         f"{' and '.join(where(e) for e in entries)}; uninstall one")
    source, _, attribute = entries[0].value.partition(":")
    if not attribute:
        raise ValueError(f"installed agent {name!r}: its entry point {where(entries[0])} names a module, not module:NAME")
    return load_target(name, source.strip(), attribute.strip())


class UserAgent(Agent):
    """A user's agent as the commands play it: the object built, checked at every move, named in every error."""

    def __init__(self, inner: Any, name: str):
        self.inner = inner
        self.name = name
        overridden = type(inner).act_games is not Agent.act_games if isinstance(inner, Agent) else False
        self.searches = overridden  # it reads the games themselves (as pimc), so it plays where they are at hand

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """The inner agent's legal actions; AgentError or IllegalActionError naming it."""
        observations, masks = check_batch(observations, action_masks)
        return self._checked(lambda: self.inner.act_batch(observations, masks), masks)

    def act_games(self, batch, games: np.ndarray) -> np.ndarray:
        """The inner agent's ``act_games`` where it searches the games, else ``act_batch`` on their observations."""
        if not self.searches:
            return super().act_games(batch, games)
        return self._checked(lambda: self.inner.act_games(batch, games), batch.legal_masks(games))

    def _checked(self, call: Callable[[], Any], masks: np.ndarray) -> np.ndarray:
        who = f"agent {self.name!r}"
        try:
            actions = call()
        except Exception as err:
            raise AgentError(f"{who} raised {type(err).__name__}: {err}") from err
        ids = as_actions(actions, len(masks), who)
        legal = chosen_legal(masks, ids)
        if not legal.all():
            row = int(np.argmin(legal))
            what = action_name(int(ids[row])) if 0 <= ids[row] < NUM_ACTIONS else "out of range"
            raise IllegalActionError(f"{who} chose action {ids[row]} ({what}), which is not legal; legal: {legal_listing(masks[row])}")
        return ids

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__") or attribute == "inner":  # copy and pickle look these up before __init__ ran
            raise AttributeError(attribute)
        return getattr(self.inner, attribute)  # what commands read of an agent, such as ``players``


def build(name: str, target: Callable[..., Any], options: dict[str, Any], seed: Any) -> UserAgent:
    """``target(**options, seed=seed)`` (``seed`` only where it takes one) as a checked ``UserAgent`` named ``name``."""
    takes_seed = check_call(name, target, options)
    try:
        made = target(**options, seed=seed) if takes_seed else target(**options)
    except Exception as err:
        raise AgentError(f"agent {name!r} could not be built: {type(err).__name__}: {err}") from err
    if not callable(getattr(made, "act_batch", None)):
        raise ValueError(f"agent {name!r}: {getattr(target, '__name__', 'its factory')} made an object of type {type(made).__name__}, "
                         "not an Agent: an agent has act_batch(observations, action_masks) (wizard_env.agents.Agent)")
    return UserAgent(made, name)
