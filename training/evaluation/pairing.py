"""Two evaluations of the same deals compared deal by deal: the figures of ``wizard eval-suite``, the gate, the margin
grid, ``eval-iterations`` and the benchmarks.

A figure is a mean over deals with the half-width of its 95% interval (``mean_ci``); two evaluations that played the
same deals (one seed, deal count and player count) are paired by deal, which removes the luck of the deals from their
difference. ``pm`` writes a figure as every table shows it, and ``verdict`` says whether a step between two networks
climbs (``eval-iterations``' rule, which ``wizard train-values --gate-rule climbs`` keeps by).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .evaluate import EvalResult, mean_ci


@dataclass(frozen=True)
class Figure:
    """A mean over deals and the half-width of its 95% interval (None with one deal)."""

    mean: float
    ci95: float | None

    @classmethod
    def over_deals(cls, values: np.ndarray) -> "Figure":
        """The mean of per-deal values with its interval (``mean_ci``)."""
        return cls(*mean_ci(values))

    def to_json(self) -> dict[str, float | None]:
        """``{"mean": ..., "ci95": ...}``."""
        return {"mean": self.mean, "ci95": self.ci95}


@dataclass(frozen=True)
class Pairing:
    """Two per-deal series on the same deals, and their difference paired by deal."""

    first: Figure
    second: Figure
    diff: Figure
    deals: int


def pair(first: np.ndarray, second: np.ndarray) -> Pairing:
    """The means of two per-deal series of the same deals and the mean of ``first - second`` with its interval."""
    first, second = np.asarray(first, np.float64), np.asarray(second, np.float64)
    if first.shape != second.shape or first.ndim != 1:
        raise ValueError(f"paired series must be per deal and of one length, not shapes {first.shape} and {second.shape}")
    return Pairing(Figure.over_deals(first), Figure.over_deals(second), Figure.over_deals(first - second), len(first))


def _fields(result: EvalResult | dict) -> tuple[list[str], np.ndarray, list[int], int]:
    """(agents by entry, deal scores [deals, entries], deal seeds, players) of a result or its eval.json."""
    if isinstance(result, EvalResult):
        return list(result.agent_specs), result.deal_scores, list(result.deal_seeds), result.rules.num_players
    return [s.strip() for s in result["agents"]], np.asarray(result["deal_scores"], np.float64), list(result["deal_seeds"]), int(result["players"])


def deal_means(result: EvalResult | dict, spec: str | None = None) -> np.ndarray:
    """Per deal, the mean score of the entries of ``spec`` (None: every entry); ValueError naming an absent spec."""
    agents, scores, _, _ = _fields(result)
    if spec is None:
        return scores.mean(axis=1)
    entries = [e for e, s in enumerate(agents) if s == spec.strip()]
    if not entries:
        raise ValueError(f"no agent {spec!r} in that evaluation (agents: {', '.join(agents)})")
    return scores[:, entries].mean(axis=1)


def paired(first: EvalResult | dict, second: EvalResult | dict, first_agent: str | None = None,
           second_agent: str | None = None) -> Pairing:
    """``first_agent``'s mean per deal in ``first`` against ``second_agent``'s in ``second`` (None: every seat),
    paired by deal; ValueError unless both evaluations played the same deals (one seed, deal count, player count)."""
    (_, _, seeds_a, players_a), (_, _, seeds_b, players_b) = _fields(first), _fields(second)
    if seeds_a != seeds_b or players_a != players_b:
        raise ValueError("the two evaluations did not play the same deals (use one --seed, --games and --players)")
    return pair(deal_means(first, first_agent), deal_means(second, second_agent))


def pm(figure: Figure, digits: int = 1, sign: bool = True) -> str:
    """A figure as the tables show it: ``+12.3 ± 4.5`` (no interval with one deal)."""
    value = f"{figure.mean:+.{digits}f}" if sign else f"{figure.mean:.{digits}f}"
    return value if figure.ci95 is None else f"{value} ± {figure.ci95:.{digits}f}"


def verdict(previous: Figure | None, change: Figure | None) -> str | None:
    """Whether a network climbs from the one before: **climbs** when the interval of ``previous`` (head to head
    against it) lies above 0 (mean - half-width > 0) and ``change`` (the self-play change) is not significantly below
    0 (mean + half-width >= 0); **falls back** when the interval of either lies below 0 (mean + half-width < 0);
    **level** otherwise. None for the first row of a curve (no network before it)."""
    if previous is None or change is None:
        return None
    low, high = (previous.mean - (previous.ci95 or 0.0), previous.mean + (previous.ci95 or 0.0))
    change_high = change.mean + (change.ci95 or 0.0)
    if low > 0 and change_high >= 0:
        return "climbs"
    return "falls back" if high < 0 or change_high < 0 else "level"
