"""Agents that play Wizard from observations: random, rule-based, and (later) trained."""

from .base import Agent
from .random_agent import RandomAgent
from .rule_agent import RuleAgent

__all__ = ["Agent", "RandomAgent", "RuleAgent"]
