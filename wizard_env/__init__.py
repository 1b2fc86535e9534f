"""wizard_env: the card game Wizard as a reinforcement-learning environment.

``wizard_env.env(...)`` makes the PettingZoo AEC environment (documented in ``wizard_env.envs.aec``);
``WizardBatch`` steps many games at once as numpy arrays and ``WizardGame`` is one of them (the rules
engine, with ``Rules``); ``decode`` reads an observation vector. For stable-baselines3,
``WizardVecEnv`` (many games, one learner seat each) and ``WizardSingleAgentEnv`` (one game) give a
learner's view with ``action_masks()`` for sb3-contrib's MaskablePPO.

Also in the libraries' own styles: ``from wizard_env import wizard_v1; env = wizard_v1.env()`` (PettingZoo
classic), and ``gymnasium.make("wizard_env/Wizard-v1", **kwargs)`` for ``WizardSingleAgentEnv(**kwargs)``,
registered by importing this package, as are the named benchmark settings (``wizard_env.envs.settings``):
``gymnasium.make("wizard_env/wizard-3p-5r-v1")``, ``wizard_env.env(setting="wizard-3p-5r")``.
"""

import importlib.util as _importlib_util
import sys as _sys

from wizard_env.engine import compile_cache as _compile_cache  # noqa: F401  (first: before any compiled function is declared)
from wizard_env.engine.batch import WizardBatch
from wizard_env.engine.cards import card_name, parse_card
from wizard_env.engine.game import (
    BID_OFFSET,
    CARD_OFFSET,
    NUM_ACTIONS,
    TRUMP_OFFSET,
    IllegalActionError,
    Phase,
    WizardGame,
    action_name,
)
from wizard_env.engine.observation import OBS_SIZE, decode, observe
from wizard_env.engine.rules import Rules

__all__ = [
    "BID_OFFSET",
    "CARD_OFFSET",
    "GYMNASIUM_ID",
    "NUM_ACTIONS",
    "OBS_SIZE",
    "TRUMP_OFFSET",
    "IllegalActionError",
    "Phase",
    "Rules",
    "WizardBatch",
    "WizardGame",
    "WizardSingleAgentEnv",
    "WizardVecEnv",
    "action_name",
    "card_name",
    "decode",
    "env",
    "observe",
    "parse_card",
    "raw_env",
]

#: The gymnasium id of ``WizardSingleAgentEnv``; its version follows the env's (``wizard_v1``).
GYMNASIUM_ID = "wizard_env/Wizard-v1"


def _register_gymnasium_ids() -> None:
    from gymnasium.envs.registration import register

    from wizard_env.envs.settings import SETTINGS  # the rules only: no RL library

    # A string entry point: gymnasium imports the env module only when the id is made.
    entry_point = "wizard_env.envs.single_agent:WizardSingleAgentEnv"
    register(id=GYMNASIUM_ID, entry_point=entry_point)
    for setting in SETTINGS.values():
        register(id=setting.gymnasium_id, entry_point=entry_point, kwargs={"setting": setting.name})


class _RegisterWhenGymnasiumLoads:
    """An import finder that registers the gymnasium ids as soon as gymnasium is imported, so that importing
    wizard_env does not import gymnasium (about 30 ms) in a program that never uses it."""

    def find_spec(self, name, path=None, target=None):
        if name != "gymnasium":
            return None
        _sys.meta_path.remove(self)
        spec = _importlib_util.find_spec(name)  # found by the other finders, now that this one is gone
        if spec is not None and spec.loader is not None:
            load = spec.loader.exec_module

            def load_and_register(module) -> None:
                load(module)
                _register_gymnasium_ids()

            spec.loader.exec_module = load_and_register
        return spec


if "gymnasium" in _sys.modules:
    _register_gymnasium_ids()
else:
    _sys.meta_path.insert(0, _RegisterWhenGymnasiumLoads())

_LAZY = {"env": "envs.aec", "raw_env": "envs.aec", "WizardSingleAgentEnv": "envs.single_agent", "WizardVecEnv": "envs.vec_env"}


def __getattr__(name: str):
    # The environments import PettingZoo, Gymnasium or stable-baselines3: load them only when asked,
    # so the rules stay RL-free.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'wizard_env' has no attribute {name!r}")
