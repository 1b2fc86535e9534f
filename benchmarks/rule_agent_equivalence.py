"""Check that RuleAgent decides every position as an earlier version of it did (default: commit HEAD).

Usage::

    python benchmarks/rule_agent_equivalence.py --reference HEAD --games 2

Every configuration (3 to 6 players; open, hidden and secret bidding; the bid total rule;
foresight; amigo rounds) plays ``--games`` whole games per player count in which the old
RuleAgent's actions are played, and ``--random-games`` in which a random legal action is played
(positions RuleAgents rarely reach). Each seat holds an old and a new RuleAgent with the same seed;
both decide every position one at a time (``act``). Then all positions of a configuration are
decided again as one batch by a fresh old and new agent. Prints positions and mismatches per
configuration; exits 1 on any. A last row checks the rarest decision, the dealer naming trump
with no card in view (a Wizard turned up in a foresight one-card round), on ``--deals`` deals.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from wizard_env.util.stopwatch import Stopwatch
from wizard_env.agents import RuleAgent
from wizard_env.agents.rule_agent import ESTIMATED, NO_NUMBERS, SAMPLED, decide
from wizard_env.agents.rule_view import LAYOUT, TABLES, read_view
from wizard_env.engine.game import Phase
from wizard_env.engine.game import WizardGame
from wizard_env.engine.observation import observe
from wizard_env.engine.rules import Rules

try:
    from benchmarks.rule_reference import reference_rule_agent
except ImportError:  # run as a script from benchmarks/
    from rule_reference import reference_rule_agent

VARIANTS = {
    "open": {},
    "hidden": {"bidding": "hidden"},
    "secret": {"bidding": "secret"},
    "bid_total_rule": {"bid_total_rule": True},
    "foresight": {"foresight": True},
    "foresight,hidden": {"foresight": True, "bidding": "hidden"},
    "amigo": {"rounds": "amigo"},
}


def compare(old_class: type, rules: Rules, seed: int, random: bool) -> tuple[list, list, int]:
    """Play one game with the old agents deciding (or random legal moves), the new ones beside them;
    observations, masks, mismatches."""
    game, rng = WizardGame(rules, seed), np.random.default_rng(seed)
    seats = [(old_class([seed, s]), RuleAgent([seed, s])) for s in range(rules.num_players)]
    observations, masks, mismatches = [], [], 0
    while not game.is_over:
        observation, mask = observe(game, game.current), game.legal_mask()
        old, new = seats[game.current]
        action = old.act(observation, mask)
        mismatches += action != new.act(observation, mask)
        observations.append(observation)
        masks.append(mask)
        game.step(int(rng.choice(np.flatnonzero(mask))) if random else action)
    return observations, masks, mismatches


def blind_trumps(old_class: type, deals: int) -> tuple[int, int]:
    """Positions and mismatches of the dealer naming trump in a foresight one-card round, over ``deals`` deals."""
    positions = mismatches = 0
    for players in range(3, 7):
        for seed in range(deals):
            game = WizardGame(Rules.make(players, rounds=[1], foresight=True), seed)
            if game.phase == Phase.TRUMP:
                observation, mask = observe(game, game.current), game.legal_mask()
                positions += 1
                mismatches += old_class(seed).act(observation, mask) != RuleAgent(seed).act(observation, mask)
    return positions, mismatches


def kinds(observations: np.ndarray, masks: np.ndarray) -> dict[str, int]:
    """How many positions with a choice ask for each kind of decision."""
    choice, actions = masks.sum(axis=1) > 1, decide(observations.astype(np.float32), masks != 0, LAYOUT, TABLES[0], NO_NUMBERS)[0]
    phase = np.array([read_view(observations, row, LAYOUT).phase for row in range(len(observations))])
    bids = choice & (phase == Phase.BID)
    return {"trump": int((choice & (phase == Phase.TRUMP)).sum()), "hand bids": int((actions == ESTIMATED).sum()),
            "1-card bids": int((actions == SAMPLED).sum()), "foresight bids": int((bids & (actions >= 0)).sum()),
            "plays": int((choice & (phase == Phase.PLAY)).sum())}


def main() -> None:
    """Play the games and print the table of positions and mismatches."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", default="HEAD", help="git revision of the RuleAgent to compare with")
    parser.add_argument("--games", type=int, default=2, help="games per player count and variant")
    parser.add_argument("--random-games", type=int, default=2, help="games of random moves per player count and variant")
    parser.add_argument("--deals", type=int, default=4000, help="foresight one-card deals searched for blind trump choices")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first game")
    args = parser.parse_args()
    old_class = reference_rule_agent(args.reference)
    watch, total, choices, wrong = Stopwatch(), 0, 0, 0
    print(f"reference: {old_class.__module__}")
    names = ("trump", "hand bids", "1-card bids", "foresight bids", "plays")
    print(f"{'variant':<18}{'players':>8}{'positions':>11}" + "".join(f"{k:>15}" for k in names)
          + f"{'act mismatches':>16}{'batch mismatches':>18}")
    for label, variant in VARIANTS.items():
        for players in range(3, 7):
            rules = Rules.make(players, **variant)
            observations, masks, alone = [], [], 0
            for game in range(args.games + args.random_games):
                o, m, mismatches = compare(old_class, rules, args.seed + 1000 * players + game, game >= args.games)
                observations += o
                masks += m
                alone += mismatches
            if not masks:
                continue
            observations, masks = np.array(observations), np.array(masks)
            old, new = old_class(players).act_batch(observations, masks), RuleAgent(players).act_batch(observations, masks)
            batch = int((old != new).sum())
            n_choices = int((masks.sum(axis=1) > 1).sum())
            print(f"{label:<18}{players:>8}{len(masks):>11}" + "".join(f"{n:>15}" for n in kinds(observations, masks).values())
                  + f"{alone:>16}{batch:>18}")
            total, choices, wrong = total + len(masks), choices + n_choices, wrong + alone + batch
    positions, mismatches = blind_trumps(old_class, args.deals)
    print(f"{'blind trump':<18}{'3-6':>8}{positions:>11}{positions:>15}" + " " * 60 + f"{mismatches:>16}")
    total, choices, wrong = total + positions, choices + positions, wrong + mismatches
    seconds = watch.seconds
    print(f"{'all':<18}{'':>8}{total:>11}   ({choices} with a choice)   mismatches: {wrong}   ({seconds:.0f} s)")
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
