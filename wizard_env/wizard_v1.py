"""Wizard in the PettingZoo classic style: ``from wizard_env import wizard_v1; env = wizard_v1.env()``.

``env`` is wrapped in PettingZoo's order-enforcing wrapper, ``raw_env`` is not; both take the
arguments documented in ``wizard_env.envs.aec``. The version matches ``metadata["name"]``.
"""

from wizard_env.envs.aec import env, raw_env

__all__ = ["env", "raw_env"]
