"""How well a search's worlds place the cards the acting seat cannot see: a direct, cheap measure of inference.

Usage::

    python benchmarks/inference_placement.py --behaviour pimc:samples=16 --games 24 --seed 0
    python benchmarks/inference_placement.py --options "" infer=bids infer=bids:model=ppo:over=16 --samples 16

Games of 4 players are played by ``--behaviour`` at every seat (``rule`` by default; any registry spec; the
head-to-head table ``inference_vs_uniform.py`` plays against uniform ``pimc:samples=16``, whose bids are not
RuleAgent's). At a share (``--share``) of the decisions with more than one legal action, each
``pimc:samples=N:OPTIONS`` agent draws the worlds it would search there (``rollouts.draw_worlds``: with its own
generator, from what the seat sees), and each other seat's hand in them, weighted as the search weighs them, is
compared with the true hand: the squared error of the expected count of every card type, summed over the hand
(``all``), and of the Wizards alone. Uniform worlds are right on average and miss by how much a hand can vary; a
bid model that fits how the seats bid brings the worlds' hands nearer the true ones. Printed per agent: the mean
error per hand and its difference to the first agent's (uniform ``pimc`` by default), paired by hand, with 95%
intervals over hands (hands of one position are not independent: read the intervals as a guide).

Fewer distinct worlds (inference keeps some twice) add noise to the expected counts: ``--samples`` is the
search's own, so the error is that of the worlds the search plays out.
"""

from __future__ import annotations

import numpy as np

from wizard_env.agents.rollouts import draw_worlds
from wizard_env.engine.cards import WIZARD
from wizard_env.engine.rules import Rules
from wizard_env.util.stopwatch import Stopwatch

try:
    from benchmarks.inference_regret import PLAYERS, arguments, cell, positions, searchers
except ImportError:  # run as a script from benchmarks/
    from inference_regret import PLAYERS, arguments, cell, positions, searchers


def placement_errors(rules: Rules, behaviour_spec: str, specs: list[str], games: int, share: float,
                     seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Squared errors [agent, hand] of the expected card counts of each hidden hand: over all card types, and the
    Wizards'."""
    agents = searchers(specs, seed, games)
    errors: list[np.ndarray] = []
    wizards: list[np.ndarray] = []
    for batch, chosen in positions(rules, behaviour_spec, games, share, seed):
        seats = batch.current[chosen].astype(np.int64)
        others = np.arange(PLAYERS)[None, :] != seats[:, None]  # [position, seat]: the hands it cannot see
        true = batch.hands[chosen].astype(np.float64)
        found, wizard = [], []
        for agent in agents:
            worlds, rows, weights = draw_worlds(batch, chosen, agent.rng, agent.samples, agent.inference)
            expected = np.zeros_like(true)
            np.add.at(expected, rows // (worlds.batch_size // chosen.size), worlds.hands[rows] * weights[:, None, None])
            squared = (expected - true) ** 2
            found.append(squared.sum(axis=2)[others])
            wizard.append(squared[:, :, WIZARD][others])
        errors.append(np.stack(found))
        wizards.append(np.stack(wizard))
    if not errors:
        raise SystemExit("no position was measured: play more --games or a larger --share")
    return np.concatenate(errors, axis=1), np.concatenate(wizards, axis=1)


def main(argv: list[str] | None = None) -> None:
    args, rules, specs = arguments(argv, __doc__.splitlines()[0], 24, 0.1, ["", "infer=bids", "infer=bids:model=ppo"])
    with Stopwatch() as watch:
        errors, wizards = placement_errors(rules, args.behaviour, specs, args.games, args.share, args.seed)
    print(f"{args.games} games of {args.behaviour} at every seat, {rules.num_rounds} rounds, seed {args.seed}: "
          f"{errors.shape[1]} hidden hands, {watch.seconds:.0f} s")
    print("squared error of the expected card counts per hidden hand, mean ± 95% interval over hands")
    for i, spec in enumerate(specs):
        cells = [cell(name, found[i], None if i == 0 else found[0], 4, sign=False)
                 for name, found in (("all cards", errors), ("Wizards", wizards))]
        print(f"{spec}: " + "; ".join(cells))
    print(f"(in brackets: the difference to {specs[0]}, paired by hand; negative is nearer the true hands)")


if __name__ == "__main__":
    main()
