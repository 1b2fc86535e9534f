"""The gate of ``wizard train-values --gate DEALS``: an iteration's network is kept only if it climbs.

After iteration K's fit, its network (the candidate) meets the network that collected K's data and whose weights the
fit started from (``ValuesTrainer.before``: the last network the gate kept, or ``--start``) on ``DEALS`` duplicate
deals of the run's game (``--players``), every seat rotation, on deals of their own for each iteration
(``gate_seed``). Two figures, each a mean over deals with its 95% interval, paired by deal as ``wizard
eval-iterations`` pairs them:

- ``previous``: the candidate against three copies of the earlier network, the candidate's score minus theirs;
- ``self_play_change``: four copies of the candidate minus four of the earlier network, mean score per player.

Which candidate is **kept** is ``--gate-rule``'s (``keeps``):

- ``means`` (the default): it beats the earlier network head to head (``previous`` above 0) and does not lose in
  self-play (``self_play_change`` at least 0): the means, so that a level step is a coin toss rather than a sure
  rejection (docs/training.md: the chance that a slightly worse fit passes, by DEALS);
- ``climbs``: the interval of ``previous`` lies above 0 (mean - half-width > 0), and ``self_play_change`` is at least
  0 as under ``means``: a step ``wizard eval-iterations`` would call *climbs* on the gate's deals
  (``pairing.verdict``) and that ``means`` keeps too. A level fit is rejected (but for one time in 40), and so is a
  real gain smaller than the gate's deals can show.

A kept candidate becomes ``latest.npz`` and collects the next iteration's data; a rejected one stays on disk as
``checkpoints/iter-K.npz`` but plays no further part: the next iteration collects with the earlier network again and
fits from its weights, on the data so far (with ``--data all``, the rejected iteration's data too, which the earlier
network collected). The verdict is ``checkpoints/iter-K.gate.json`` (``read_gate``), written atomically after the
games; an iteration counts as finished once it is there, so a run killed during the gate plays it again on
``--resume``, with the same figures.

``--soup`` puts the rejected fits to use: after a rejected iteration, the candidate is the mean of the weights of its
own fit and of every fit rejected since the network that collects (``ValuesTrainer.soup``). All of them were fitted
from that network's weights, so their mean is a network near them all (a "model soup"), and it carries the data of
each. The checkpoint records how many fits it averages (``soup_fits``); a kept one collects and starts the next fits
as any kept network does. From wizard-v10, where the gate rejected two fits, their mean was better than each of them
head to head and in self-play on that one's gate deals, and the mean of three was kept under ``climbs`` (docs/training.md,
"Fits from wizard-v10, and --soup").

``--confirm DEALS`` plays a kept candidate's two tables again, on ``DEALS`` deals of their own (``confirm_seed``), and
keeps it only if the same rule keeps it there too (``confirmed``; the verdict records both sets of figures). The gate's
figures are those of the deals that chose the candidate, so over the fits a gate keeps they lean high (the winner's
curse: a level fit that passes did so on deals that favoured it); the confirming deals chose nothing, and their
figures are an unbiased measure of the kept step. From wizard-v11, a fit the gate kept at +1.9 ± 1.2 head to head
(4,000 deals) measured +1.1 ± 1.7 and +1.0 ± 1.7 on two sets of 2,000 other deals (docs/training.md).

``--patience N`` stops a gated run once N iterations in a row were rejected (``iterations_played``): the next would
collect with the same network again, and the gate could not tell its fits from that network. The run then ends
before ``--iterations``; a resume with a larger N (or 0: none) goes on from there.

Iteration 0 of a run without ``--start`` is not gated (there is no earlier network: RuleAgent, or random play,
collected its data), so a run always has a network.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import numpy as np

from wizard_env.agents.ppo_agent import PPOAgent, load_checkpoint
from wizard_env.engine.rules import Rules
from wizard_env.util.checks import short_repr
from wizard_env.util.files import read_json, write_atomic

from .pairing import Figure, pair, pm, verdict
from .evaluate import evaluate

FORMAT = "wizard-gate/1"
#: What ``--gate-rule`` may be (the module's rules).
GATE_RULES = ("means", "climbs")
#: The stream of a run's seed that the gate's deals are drawn from (with the iteration).
GATE_STREAM = 9
#: The stream under ``GATE_STREAM`` that ``--confirm``'s deals are drawn from.
CONFIRM_STREAM = 1


def gate_path(checkpoint: Path) -> Path:
    """Where the gate's verdict on ``checkpoints/iter-K.npz`` is written."""
    return checkpoint.with_name(checkpoint.name.removesuffix(".npz") + ".gate.json")


def gate_seed(seed: int, iteration: int, *under: int) -> int:
    """The seed of iteration ``iteration``'s gate deals (head to head; the self-play tables use the next one), or of
    the stream ``under`` them."""
    return int(np.random.default_rng([seed, iteration, GATE_STREAM, *under]).integers(2**62))


def confirm_seed(seed: int, iteration: int) -> int:
    """The seed of iteration ``iteration``'s confirming deals (``--confirm``): none of them the gate's."""
    return gate_seed(seed, iteration, CONFIRM_STREAM)


def _table(rules: Rules, mine: int, candidate: str, earlier: str, deals: int, seed: int) -> np.ndarray:
    """Per-deal mean score of the candidate's ``mine`` seats and of the others' (``[deals, 2]``; with every seat
    the candidate's or none, the one column repeated)."""
    n = rules.num_players
    sources = [candidate] * mine + [earlier] * (n - mine)
    agents = [PPOAgent(*load_checkpoint(s), seed=np.random.default_rng([seed, GATE_STREAM, seat]), source=s)
              for seat, s in enumerate(sources)]
    names = ["candidate"] * mine + ["earlier"] * (n - mine)
    scores = evaluate(rules, names, deals, seed, reference=names[-1], agents=agents).deal_scores
    first, rest = scores[:, :mine] if mine else scores, scores[:, mine:] if mine < n else scores
    return np.stack([first.mean(axis=1), rest.mean(axis=1)], axis=1)


def check_rule(rule: object) -> None:
    """ValueError unless ``rule`` is one of ``GATE_RULES``."""
    if rule not in GATE_RULES:
        raise ValueError(f"--gate-rule must be one of {', '.join(GATE_RULES)}, not {short_repr(rule)}")


def keeps(previous: Figure, change: Figure, rule: str) -> bool:
    """Whether a gate under ``rule`` (``GATE_RULES``) keeps a candidate with these figures (the module's rules)."""
    check_rule(rule)
    wins = previous.mean > 0 if rule == "means" else verdict(previous, change) == "climbs"
    return bool(wins and change.mean >= 0)


def play_gate(candidate: str, earlier: str, rules: Rules, deals: int, seed: int, rule: str = "means") -> dict:
    """The gate's verdict on the checkpoint ``candidate`` against the checkpoint ``earlier``: its figures and whether
    the candidate is kept under ``rule`` (``keeps``)."""
    check_rule(rule)  # before the games
    n = rules.num_players
    head = _table(rules, 1, candidate, earlier, deals, seed)
    new, old = (_table(rules, mine, candidate, earlier, deals, seed + 1)[:, 0] for mine in (n, 0))
    previous, change = pair(head[:, 0], head[:, 1]).diff, pair(new, old).diff
    return {"format": FORMAT, "candidate": candidate, "earlier": earlier, "deals": deals, "seed": seed,
            "players": n, "previous": previous.to_json(), "self_play_change": change.to_json(), "rule": rule,
            "kept": keeps(previous, change, rule)}


def confirmed(verdict: dict, confirmation: dict) -> dict:
    """``verdict`` (a kept one) with ``confirmation`` (``play_gate`` on the confirming deals) as its ``confirm``:
    the candidate is kept only if both keep it."""
    figures = {k: confirmation[k] for k in ("deals", "seed", "previous", "self_play_change", "kept")}
    return {**verdict, "confirm": figures, "kept": bool(verdict["kept"] and confirmation["kept"])}


def write_gate(path: Path, verdict: dict) -> None:
    """Write the verdict atomically (the iteration's commit point under a gate)."""
    write_atomic(path, lambda file: file.write(json.dumps(verdict, indent=1, allow_nan=False) + "\n"))


def read_gate(path: Path) -> dict | None:
    """The verdict at ``path`` (None where there is none yet); ValueError naming a damaged file and its remedy."""
    if not path.exists() and not path.is_symlink():
        return None
    data, problem = read_json(path)
    if problem is None and (not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("kept"), bool)):
        problem = f"is not a gate verdict of wizard train-values (format {FORMAT} with 'kept')"
    if problem is not None:
        raise ValueError(f"{path} {problem}: delete it and --resume plays the gate again")
    return data


def describe(iteration: int, verdict: dict) -> str:
    """The progress line of a verdict."""
    what = "kept" if verdict["kept"] else f"rejected: the next iteration collects with {verdict['earlier']} again"
    rule = verdict.get("rule", "means")  # verdicts written before --gate-rule: the means
    line = f"iteration {iteration}: gate ({rule}) over {verdict['deals']:,} deals against {verdict['earlier']}: {_figures(verdict)}"
    if "confirm" in verdict:
        confirm = verdict["confirm"]
        line += (f"; confirmed over {confirm['deals']:,} other deals: {_figures(confirm)}"
                 f"{'' if confirm['kept'] else ' (not kept there)'}")
    return f"{line}: {what}"


def _figures(figures: dict) -> str:
    """Head to head and self-play change of a verdict (or its ``confirm``)."""
    previous, change = (Figure(figures[k]["mean"], figures[k]["ci95"]) for k in ("previous", "self_play_change"))
    return f"head to head {pm(previous)}, self-play change {pm(change)}"


def iterations_played(iterations: int, patience: int, verdict_of: Callable[[int], dict | None]) -> int:
    """How many iterations a run of ``iterations`` plays under ``--patience`` (0: every one): it stops after the
    iteration that makes ``patience`` rejected in a row. ``verdict_of(K)``: iteration K's verdict, ``{"kept": True}``
    for one not gated, None for one not judged yet (nothing after it is known: every iteration is still to play)."""
    rejected = 0
    for k in range(iterations):
        verdict = verdict_of(k)
        if verdict is None:
            break
        rejected = 0 if verdict["kept"] else rejected + 1
        if patience and rejected >= patience:
            return k + 1
    return iterations
