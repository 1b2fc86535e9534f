"""The module paths of the old flat layout, kept working for one release with a ``DeprecationWarning``.

``import wizard_env.rules`` and ``from wizard_env.environment import raw_env`` still work: the old name is an
alias that reads every attribute from the modules now holding what it held, and its first import warns once,
naming the new path. ``python -m wizard_env.layout`` and ``python -m wizard_env.bench`` run the new modules.
``wizard_env/__init__`` puts a finder last on ``sys.meta_path`` that hands an unknown ``wizard_env.NAME`` to
``MovedModuleFinder``, so this module is loaded only when an old path is imported.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import types
import warnings
from typing import Any, Sequence

#: Old module path: the modules that hold its names now, the one to import first.
MOVED: dict[str, tuple[str, ...]] = {
    "wizard_env.files": ("wizard_env.util.files",),
    "wizard_env.extras": ("wizard_env.util.extras",),
    "wizard_env.options": ("wizard_env.util.options", "wizard_env.util.checks"),
    "wizard_env.cards": ("wizard_env.engine.cards",),
    "wizard_env.rules": ("wizard_env.engine.rules",),
    "wizard_env.actions": ("wizard_env.engine.actions",),
    "wizard_env.kernels": ("wizard_env.engine.kernels", "wizard_env.engine.batch_kernels"),
    "wizard_env.batch": ("wizard_env.engine.batch", "wizard_env.util.checks"),
    "wizard_env.game": ("wizard_env.engine.game",),
    "wizard_env.observation": ("wizard_env.engine.observation",),
    "wizard_env.layout": ("wizard_env.engine.layout",),
    "wizard_env.determinize": ("wizard_env.engine.determinize",),
    "wizard_env.compile_cache": ("wizard_env.engine.compile_cache",),
    "wizard_env.replay": ("wizard_env.engine.replay", "wizard_env.render.replay_text"),
    "wizard_env.simulate": ("wizard_env.engine.simulate",),
    "wizard_env.render_image": ("wizard_env.render.image",),
    "wizard_env.environment": ("wizard_env.envs.aec",),
    "wizard_env.single_agent": ("wizard_env.envs.single_agent",),
    "wizard_env.vec_env": ("wizard_env.envs.vec_env", "wizard_env.envs.opponent_pool"),
    "wizard_env.mixed_vec_env": ("wizard_env.envs.mixed_vec_env",),
    "wizard_env.rllib": ("wizard_env.integrations.rllib",),
    "wizard_env.tianshou_marl": ("wizard_env.integrations.tianshou_marl",),
    "wizard_env.adapters": ("wizard_env.integrations.adapters",),
    "wizard_env.openspiel_game": ("wizard_env.integrations.openspiel_game",),
    "wizard_env.bench": ("wizard_env.tools.bench", "wizard_env.util.stopwatch", "wizard_env.cli.bench"),
}


#: Old paths run with ``python -m`` whose runnable module is not the first of their new modules.
RUN_AS_MAIN = {"wizard_env.bench": "wizard_env.cli.bench"}


def deprecation(old: str) -> str:
    """The warning an old module path gives."""
    return f"{old} is deprecated: import {MOVED[old][0]} instead (the old path goes away in the next release)"


class MovedModule(types.ModuleType):
    """An old module path: each attribute is read from the first of its new modules that has it."""

    def __init__(self, name: str, targets: Sequence[types.ModuleType]):
        super().__init__(name, f"Moved to {targets[0].__name__}: {deprecation(name)}.")
        self._targets = tuple(targets)

    def __getattr__(self, attr: str):
        for target in self._targets:
            if hasattr(target, attr):
                return getattr(target, attr)
        raise AttributeError(f"module {self.__name__!r} (now {self._targets[0].__name__}) has no attribute {attr!r}")

    def __dir__(self) -> list[str]:
        return sorted({name for target in self._targets for name in dir(target)} | set(super().__dir__()))


class _MovedLoader:
    """Makes an old path's ``MovedModule`` (a plain class: ``importlib.abc`` would cost ``import wizard_env`` time)."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        warnings.warn(deprecation(spec.name), DeprecationWarning, stacklevel=2)  # importlib's own frames are skipped
        return MovedModule(spec.name, [importlib.import_module(target) for target in MOVED[spec.name]])

    def exec_module(self, module: types.ModuleType) -> None:
        pass

    def get_code(self, fullname: str) -> types.CodeType:
        """``python -m OLD``: warn and run the new module as ``__main__``."""
        new = RUN_AS_MAIN.get(fullname, MOVED[fullname][0])
        message = f"python -m {fullname} is deprecated: run python -m {new} (it goes away in the next release)"
        source = (f"import runpy, warnings\nwarnings.warn({message!r}, DeprecationWarning)\n"
                  f"runpy.run_module({new!r}, run_name='__main__', alter_sys=True)\n")
        return compile(source, f"<{fullname}: moved to {new}>", "exec")

    def is_package(self, fullname: str) -> bool:
        return False


class MovedModuleFinder:
    """Finds the old module paths of ``MOVED`` (and nothing else)."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        loader: Any = _MovedLoader()  # a loader by its methods (importlib.abc would cost import time)
        return importlib.machinery.ModuleSpec(fullname, loader)
