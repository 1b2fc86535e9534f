"""How far search's choices fall short of the choices it would make knowing the deal: a cheap measure of inference.

Usage::

    python benchmarks/inference_regret.py --games 32 --seed 0
    python benchmarks/inference_regret.py --options "" infer=bids infer=bids:temp=5 infer=bids:over=8 --seed 1

Head to head (``inference_vs_uniform.py``) a few hundred duplicate deals with every seat searching take hours here;
this takes minutes. Games of 4 players are played by ``--behaviour`` at every seat (``rule`` by default; any
registry spec). At a share (``--share``) of the decisions with more than one legal action, the value of every legal
action in the true deal is measured (the action, then the round played out by RuleAgent at every seat, the
rollout policy of ``pimc:rollout=rule``: the acting seat's round score), and each ``pimc:samples=N:OPTIONS``
agent chooses at that position from its own determinizations (``act_games``: what the seat sees, never the deal).
Its regret is the best true value minus the true value of its choice: a search whose worlds were the true deal
would have none. Printed per agent: the mean regret by phase (trump choices, bids, card play, all) and its difference to the
first agent's (by default uniform ``pimc:samples=N``), paired by position, with 95% intervals over positions.

It measures the worlds, not the play: a choice that is right for the deal can still be the wrong bet for what the
seat knows (what no search by determinized worlds escapes), and the values are RuleAgent's play, not the seats'.
A lower regret than uniform search's is the sign that inference draws likelier worlds; the head-to-head table
says what that is worth in points.
"""

from __future__ import annotations

import argparse
from typing import Iterator

import numpy as np

from wizard_env.agents.pimc_agent import PIMCAgent
from wizard_env.agents.registry import make_agent
from wizard_env.agents.rule_agent import RuleAgent
from wizard_env.agents.rollouts import rollout_values
from wizard_env.engine.actions import Phase
from wizard_env.engine.batch import WizardBatch
from wizard_env.engine.rules import Rules, parse_rounds
from wizard_env.engine.simulate import derive_seeds
from wizard_env.training.pairing import Figure, pm
from wizard_env.util.stopwatch import Stopwatch

PLAYERS = 4
PHASES = {"trump": Phase.TRUMP, "bids": Phase.BID, "plays": Phase.PLAY}


def positions(rules: Rules, behaviour_spec: str, games: int, share: float,
              seed: int) -> Iterator[tuple[WizardBatch, np.ndarray]]:
    """The positions measured: games of ``behaviour_spec`` at every seat, and at each step the games (a share of
    those whose acting seat has more than one legal action) to measure before the step is played."""
    game_seeds, agent_seeds = derive_seeds(seed, games, PLAYERS)
    behaviour = make_agent(behaviour_spec, agent_seeds[0])
    pick = np.random.default_rng(agent_seeds[3])
    batch = WizardBatch(rules, seeds=game_seeds, autoreset=False)
    while (live := np.flatnonzero(batch.phase != Phase.OVER)).size:
        masks = batch.legal_masks(live)
        chosen = live[(masks.sum(axis=1) > 1) & (pick.random(live.size) < share)]
        if chosen.size:
            yield batch, chosen
        batch.step(behaviour.act_games(batch, live), live)


def searchers(specs: list[str], seed: int, games: int) -> list:
    """The searching agents of ``specs``, each with a generator of its own."""
    agent_seeds = derive_seeds(seed, games, PLAYERS)[1]
    return [make_agent(spec, np.random.default_rng([agent_seeds[1], i])) for i, spec in enumerate(specs)]


def regrets(rules: Rules, behaviour_spec: str, specs: list[str], games: int, share: float,
            seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Each agent's regret [agent, position] at the positions measured, and each position's phase [position]."""
    agents = searchers(specs, seed, games)
    truth_policy = RuleAgent(seed=derive_seeds(seed, games, PLAYERS)[1][2])
    found: list[np.ndarray] = []
    phases: list[np.ndarray] = []
    for batch, chosen in positions(rules, behaviour_spec, games, share, seed):
        truth = rollout_values(batch, chosen, truth_policy).astype(np.float64)
        best = np.nanmax(truth, axis=1)
        rows = np.arange(chosen.size)
        found.append(np.stack([best - truth[rows, agent.act_games(batch, chosen)] for agent in agents]))
        phases.append(batch.phase[chosen].copy())
    if not found:
        raise SystemExit("no position was measured: play more --games or a larger --share")
    return np.concatenate(found, axis=1), np.concatenate(phases)


def arguments(argv: list[str] | None, description: str, games: int, share: float,
              options: list[str]) -> tuple[argparse.Namespace, Rules, list[str]]:
    """The command line of a benchmark that compares pimc agents at positions of games (these defaults): the
    arguments, the rules and the agents' specs."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--games", type=int, default=games, help="games played in lockstep")
    parser.add_argument("--share", type=float, default=share, help="share of the decisions with a choice measured")
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--options", nargs="+", default=options,
                        help="each agent's options after samples=N ('' for uniform pimc); the first is the baseline")
    parser.add_argument("--behaviour", default="rule", help="the agent at every seat of the games played")
    parser.add_argument("--rounds", default="standard")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.games < 1 or args.samples < 1 or not 0 < args.share <= 1:
        parser.error("--games and --samples must be at least 1, --share in (0, 1]")
    specs = [f"pimc:samples={args.samples}" + (f":{o}" if o else "") for o in args.options]
    for spec in specs:
        if not isinstance(make_agent(spec), PIMCAgent):
            parser.error(f"{spec}: not a pimc agent")
    return args, Rules.make(PLAYERS, parse_rounds(args.rounds)), specs


def cell(name: str, values: np.ndarray, baseline: np.ndarray | None, digits: int, sign: bool = True) -> str:
    """``name mean ± interval``, and in brackets the paired difference to ``baseline``'s values where given."""
    paired = "" if baseline is None else f" ({pm(Figure.over_deals(values - baseline), digits)})"
    return f"{name} {pm(Figure.over_deals(values), digits, sign)}{paired}"


def main(argv: list[str] | None = None) -> None:
    args, rules, specs = arguments(argv, __doc__.splitlines()[0], 32, 0.25, ["", "infer=bids"])
    with Stopwatch() as watch:
        found, phases = regrets(rules, args.behaviour, specs, args.games, args.share, args.seed)
    counts = {name: int((phases == phase).sum()) for name, phase in PHASES.items()}
    print(f"{args.games} games of {args.behaviour} at every seat, {rules.num_rounds} rounds, seed {args.seed}: "
          f"{found.shape[1]} positions ({', '.join(f'{n} {k}' for k, n in counts.items())}), {watch.seconds:.0f} s")
    print("regret in round points (best true value minus the chosen action's), mean ± 95% interval over positions")
    for i, spec in enumerate(specs):
        cells = []
        for name, phase in (*PHASES.items(), ("all", None)):
            at = np.ones(len(phases), bool) if phase is None else phases == phase
            if not at.any():
                continue
            cells.append(cell(name, found[i, at], None if i == 0 else found[0, at], 2))
        print(f"{spec}: " + "; ".join(cells))
    print(f"(in brackets: the difference to {specs[0]}, paired by position; negative is closer to the deal)")


if __name__ == "__main__":
    main()
