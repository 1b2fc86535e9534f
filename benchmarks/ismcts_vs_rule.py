"""OpenSpiel's Python ISMCTS against three RuleAgents on ``python_wizard`` (needs the ``openspiel`` extra).

Usage::

    python benchmarks/ismcts_vs_rule.py --deals 64 --rounds 5 --simulations 100 --rotations 1 --seed 0

Plays 4-player games of the first ``--rounds`` rounds of the standard schedule. Every deal (the first
dealer and every card of every round) comes from its own random stream, used only at chance nodes, so
a deal is the same whatever is played and whoever sits where. Per deal, ISMCTS sits in ``--rotations``
seats (4: every seat; 1: seat ``deal % 4``, so the seats rotate over the deals), the other seats are
RuleAgents playing from the state's observation tensor (the env's observation) and its legal actions.

ISMCTS: ``open_spiel.python.algorithms.ismcts.ISMCTSBot`` with ``--simulations`` simulations, a
random-rollout evaluator (one rollout), ``uct_c=2``, and ``resample_from_infostate`` as its resampler;
it is asked only at decisions with more than one legal action (a forced move is applied directly).

Prints, per deal, the ISMCTS seat's score minus the RuleAgents' mean score at the same table (averaged
over the deal's rotations); at the end the mean of that difference with a 95% t interval over deals,
each side's mean score, and the wall and CPU seconds per searched decision (mean and 90th percentile).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts
from scipy import stats

import wizard_env.integrations.openspiel_game  # noqa: F401  registers python_wizard
from wizard_env import NUM_ACTIONS
from wizard_env.agents.rule_agent import RuleAgent
from wizard_env.util.stopwatch import Stopwatch

PLAYERS = 4


def play(game, deal: int, search_seat: int, simulations: int, seed: int, wall: list, cpu: list) -> np.ndarray:
    """Final totals of one game: ISMCTS in ``search_seat``, RuleAgents elsewhere, deal ``deal``."""
    chance = np.random.default_rng([seed, deal])  # used only at chance nodes: the same deal for every seating
    def word(stream: int) -> np.ndarray:  # one 32-bit seed word of this game's stream ``stream``
        return np.random.SeedSequence([seed, deal, search_seat, stream]).generate_state(1)

    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(word(1)))
    bot = ismcts.ISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=simulations, random_state=np.random.RandomState(word(2)))
    sampler = pyspiel.UniformProbabilitySampler(int(word(3)[0] % 2**31), 0.0, 1.0)
    bot.set_resampler(lambda s, player: s.resample_from_infostate(player, sampler))
    rules = {p: RuleAgent(seed=np.random.default_rng([seed, deal, search_seat, 10 + p])) for p in range(PLAYERS)}
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(chance.choice(outcomes, p=probs)))
            continue
        player = state.current_player()
        legal = state.legal_actions()
        if len(legal) == 1:
            state.apply_action(legal[0])
        elif player == search_seat:
            with Stopwatch() as watch:
                action = bot.step(state)
            wall.append(watch.seconds)
            cpu.append(watch.cpu_seconds)
            state.apply_action(action)
        else:
            obs = np.asarray(state.observation_tensor(player), dtype=np.float32)
            mask = np.zeros(NUM_ACTIONS, dtype=bool)
            mask[legal] = True
            state.apply_action(int(rules[player].act_batch(obs[None], mask[None])[0]))
    return np.asarray(state.returns())


def summary(diffs: list, search_scores: list, rule_scores: list, wall: list, cpu: list) -> str:
    d = np.asarray(diffs)
    n = len(d)
    half = stats.t.ppf(0.975, n - 1) * d.std(ddof=1) / np.sqrt(n) if n > 1 else float("nan")
    return (f"deals {n}: ismcts - rule {d.mean():+.2f} ± {half:.2f} (95% CI, paired per deal); "
            f"ismcts mean {np.mean(search_scores):.2f}, rule mean {np.mean(rule_scores):.2f}; "
            f"decisions {len(wall)}: wall s mean {np.mean(wall):.3f} p90 {np.percentile(wall, 90):.3f}, "
            f"cpu s mean {np.mean(cpu):.3f} p90 {np.percentile(cpu, 90):.3f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--simulations", type=int, default=100)
    parser.add_argument("--rotations", type=int, choices=(1, 4), default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--every", type=int, default=10, help="print the running summary every this many deals")
    args = parser.parse_args(argv)
    if args.deals < 2 or args.simulations < 1:
        parser.error("--deals must be at least 2 and --simulations at least 1")
    game = pyspiel.load_game("python_wizard", {"players": PLAYERS, "rounds": args.rounds})
    print(f"ismcts ({args.simulations} simulations, random rollouts, uct_c=2) vs 3 rule; {PLAYERS} players, "
          f"{args.rounds} rounds, {args.deals} deals, rotations {args.rotations}, seed {args.seed}", flush=True)
    diffs, search_scores, rule_scores, wall, cpu = [], [], [], [], []
    for deal in range(args.deals):
        seats = range(PLAYERS) if args.rotations == PLAYERS else [deal % PLAYERS]
        per_seat = []
        for seat in seats:
            totals = play(game, deal, seat, args.simulations, args.seed, wall, cpu)
            others = np.delete(totals, seat).mean()
            per_seat.append(totals[seat] - others)
            search_scores.append(totals[seat])
            rule_scores.append(others)
        diffs.append(float(np.mean(per_seat)))
        print(f"deal {deal}: seats {list(seats)} diff {diffs[-1]:+.1f}", flush=True)
        if len(diffs) > 1 and (len(diffs) % args.every == 0 or deal == args.deals - 1):
            print(summary(diffs, search_scores, rule_scores, wall, cpu), flush=True)


if __name__ == "__main__":
    sys.exit(main())
