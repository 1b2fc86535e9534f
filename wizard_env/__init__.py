"""wizard_env: the card game Wizard as a reinforcement-learning environment.

``wizard_env.env(...)`` makes the PettingZoo AEC environment (documented in ``wizard_env.environment``);
``WizardGame`` and ``Rules`` are the rules engine underneath; ``decode`` reads an observation vector.
"""

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
    "WizardGame",
    "action_name",
    "card_name",
    "decode",
    "env",
    "observe",
    "parse_card",
    "raw_env",
]


def __getattr__(name: str):
    # The environment imports PettingZoo; load it only when asked so the rules stay RL-free.
    if name in ("env", "raw_env"):
        from . import environment

        return getattr(environment, name)
    raise AttributeError(f"module 'wizard_env' has no attribute {name!r}")
