"""wizard_env: the card game Wizard as a reinforcement-learning environment.

``wizard_env.env(...)`` makes the PettingZoo AEC environment (documented in ``wizard_env.environment``);
``WizardBatch`` steps many games at once as numpy arrays and ``WizardGame`` is one of them (the rules
engine, with ``Rules``); ``decode`` reads an observation vector. For stable-baselines3,
``WizardVecEnv`` (many games, one learner seat each) and ``WizardSingleAgentEnv`` (one game) give a
learner's view with ``action_masks()`` for sb3-contrib's MaskablePPO.
"""

from .batch import WizardBatch
from .cards import card_name, parse_card
from .game import (
    BID_OFFSET,
    CARD_OFFSET,
    NUM_ACTIONS,
    TRUMP_OFFSET,
    IllegalActionError,
    Phase,
    WizardGame,
    action_name,
)
from .observation import OBS_SIZE, decode, observe
from .rules import Rules

__all__ = [
    "BID_OFFSET",
    "CARD_OFFSET",
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


_LAZY = {"env": "environment", "raw_env": "environment", "WizardSingleAgentEnv": "single_agent", "WizardVecEnv": "vec_env"}


def __getattr__(name: str):
    # The environments import PettingZoo, Gymnasium or stable-baselines3: load them only when asked,
    # so the rules stay RL-free.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'wizard_env' has no attribute {name!r}")
