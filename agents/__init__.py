"""Agents that play Wizard from observations: random, rule-based, and (later) trained."""

from .base import Agent
from .random_agent import RandomAgent
from .rule_agent import RuleAgent
from .registry import AGENT_NAMES, make_agent

__all__ = ["AGENT_NAMES", "Agent", "RandomAgent", "RuleAgent", "make_agent"]
