"""An example Wizard agent, registered as ``myagent`` in the entry-point group ``wizard_env.agents``."""

from .agent import HighCards

__all__ = ["HighCards"]
