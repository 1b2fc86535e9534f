"""What inference adds to search on its own: ``pimc`` with inference against uniform ``pimc`` at the same samples.

Usage::

    python benchmarks/inference_vs_uniform.py --deals 40 --seed 0
    python benchmarks/inference_vs_uniform.py --deals 20 --options infer=bids:over=8:temp=5 --rounds 5
    python benchmarks/inference_vs_uniform.py --deals 200 --agent search --workers 2

Duplicate deals of 4 players (the deals of ``wizard eval --seed S``, each in every rotation of the seats) at
two tables: one ``pimc:samples=N:OPTIONS`` (or any pimc spec given as ``--agent``, such as ``search``) against
three ``pimc:samples=N``, and three against one. The margin of a deal is that agent's mean score per game minus the
uniform agent's at that table; the script prints it for each table and for both together (the mean of the two
tables' margins per deal), with a 95% interval over deals, after every chunk of deals and at the end, and the
seconds per searched decision of each agent (``act_games`` calls timed, games in lockstep as ``wizard eval`` plays
them).
It is slow: every seat searches (about 0.02 s a decision; a standard game has 540 decisions a seat table), so
``--workers N`` plays the chunks in N processes. Each chunk's agents are seeded from the seed and the chunk's first
deal, so a deal's margins are the same for any worker count and any ``--deals`` that includes its chunk.
"""

from __future__ import annotations

import argparse

import numpy as np

from wizard_env.agents.pimc_agent import PIMCAgent
from wizard_env.agents.registry import make_agent
from wizard_env.engine.rules import Rules, parse_rounds
from wizard_env.engine.simulate import derive_seeds
from wizard_env.training.evaluate import play_games, seatings
from wizard_env.training.pairing import Figure, pm
from wizard_env.util.stopwatch import Stopwatch
from wizard_env.util.workers import Workers

PLAYERS = 4


class Timed:
    """Seconds spent in an agent's ``act_games`` and the decisions it searched."""

    def __init__(self, agent: PIMCAgent):
        self.agent, self.seconds = agent, 0.0
        search = agent.act_games

        def timed(batch, games):
            with Stopwatch() as watch:
                actions = search(batch, games)
            self.seconds += watch.seconds
            return actions

        agent.act_games = timed


def deal_scores(rules: Rules, entries: list, seeds: list[int]) -> np.ndarray:
    """[deals, entries]: each entry's mean final score over the rotations of each deal."""
    orders = seatings(PLAYERS)
    tables = [[entries[e] for e in order] for _ in seeds for order in orders]
    records = play_games(rules, tables, [s for s in seeds for _ in orders])
    totals = records.totals.reshape(len(seeds), len(orders), PLAYERS)  # [deal, order, seat]
    seat_of = np.argsort(np.asarray(orders), axis=1)  # [order, entry] -> seat
    return np.stack([totals[:, o, seat_of[o]] for o in range(len(orders))], axis=1).mean(axis=1)


def line(name: str, values: np.ndarray) -> str:
    """A margin with its 95% interval."""
    return f"{name}: {pm(Figure.over_deals(values))} over {len(values)} deals"


def play_chunk(rules: Rules, specs: tuple[str, str], agent_seeds: list[int], seeds: list[int], first: int) -> tuple:
    """One chunk of deals at both tables, with agents seeded for this chunk: the margins of its deals at each table,
    and each agent's seconds and searched decisions."""
    infer, uniform = (Timed(make_agent(spec, np.random.default_rng([seed, first]))) for spec, seed in zip(specs, agent_seeds))
    s1 = deal_scores(rules, [infer.agent, uniform.agent, uniform.agent, uniform.agent], seeds)
    s3 = deal_scores(rules, [infer.agent, infer.agent, infer.agent, uniform.agent], seeds)
    one, three = s1[:, 0] - s1[:, 1:].mean(axis=1), s3[:, :3].mean(axis=1) - s3[:, 3]
    return one, three, [(t.seconds, t.agent.searched) for t in (infer, uniform)]


def main(argv: list[str] | None = None) -> None:
    """Play the two tables chunk by chunk (in ``--workers`` processes), printing the margins so far after each chunk."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=40)
    parser.add_argument("--chunk", type=int, default=4, help="deals played in lockstep between reports")
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--options", help="the inference agent's options after samples=N (default infer=bids; "
                        "not with --agent)")
    parser.add_argument("--agent", help="any agent spec in place of pimc:samples=N:OPTIONS (for example search)")
    parser.add_argument("--rounds", default="standard")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1, help="processes playing chunks at once")
    args = parser.parse_args(argv)
    if min(args.deals, args.chunk, args.samples, args.workers) < 1:
        parser.error("--deals, --chunk, --samples and --workers must be at least 1")
    rules = Rules.make(PLAYERS, parse_rounds(args.rounds))
    if args.agent and args.options:
        parser.error("--options sets the options of pimc:samples=N and --agent replaces that agent: give one of them")
    specs = args.agent or f"pimc:samples={args.samples}:{args.options or 'infer=bids'}", f"pimc:samples={args.samples}"
    for spec in specs:  # a bad spec fails here, before any worker starts
        if not isinstance(make_agent(spec), PIMCAgent):
            parser.error(f"{spec}: not a pimc agent (the script times its searches)")
    deal_seeds, agent_seeds = derive_seeds(args.seed, args.deals, PLAYERS)
    print(f"{specs[0]} vs {specs[1]}: {args.deals} deals x {PLAYERS} rotations at two tables, "
          f"{rules.num_rounds} rounds, seed {args.seed}, {args.workers} worker(s)", flush=True)
    one, three, spent = [], [], np.zeros((2, 2))
    with Stopwatch() as watch, Workers(args.workers) as workers:
        futures = [workers.submit(play_chunk, rules, specs, agent_seeds[:2], deal_seeds[start:start + args.chunk],
                                  start) for start in range(0, args.deals, args.chunk)]
        for future in futures:
            a, b, timing = future.result()
            one.append(a)
            three.append(b)
            spent += timing
            a, b = np.concatenate(one), np.concatenate(three)
            print(f"[{len(a)} deals, {watch.seconds:.0f} s] {line('one vs three', a)}; {line('three vs one', b)}; "
                  f"{line('both', (a + b) / 2)}", flush=True)
    per = spent[:, 0] / np.maximum(1, spent[:, 1])
    print(f"seconds per searched decision: {specs[0]} {per[0]:.4f} ({spent[0, 1]:.0f} decisions), "
          f"{specs[1]} {per[1]:.4f} ({spent[1, 1]:.0f}); ratio {per[0] / max(per[1], 1e-12):.2f}")


if __name__ == "__main__":
    main()
