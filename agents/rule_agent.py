"""RuleAgent: a hand-written heuristic that bids its expected tricks and plays to hit the bid exactly.

It uses only what its observation vector holds (``wizard_env.observation.decode``).

Bidding: every card in hand gets a chance of taking a trick, estimated from the cards it cannot see
(how many higher cards of its suit are likely in other hands, how likely an opponent can trump it);
the odds of those chances are scaled so that all hands together expect as many tricks as are dealt,
then towards what the bids already made leave over, and the bid is the legal value with the best
expected score. One-card rounds are estimated from sampled deals, foresight rounds exactly.
Play: while short of its bid it wins tricks with the cheapest card likely to hold; once the bid is
met it ducks, shedding the most dangerous card that still loses.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb, exp

import numpy as np

from wizard_env.cards import CARD_RANK, CARD_SUIT, DECK_COUNTS, JESTER, NO_SUIT, NUM_RANKS, NUM_SUITS, WIZARD
from wizard_env.game import BID_OFFSET, CARD_OFFSET, TRUMP_OFFSET, Phase
from wizard_env.observation import NO_TRUMP_INDEX, decode
from wizard_env.rules import MIN_PLAYERS, round_score, suit_to_follow, trick_winner

from .base import Agent

#: Chance that a Wizard in hand takes a trick (it loses only to an earlier Wizard in the same trick).
WIZARD_CHANCE = 0.95
#: Chance of taking a trick for a trump, an off-trump card and a card of a no-trump round with no
#: higher card of its suit in other hands; each higher card expected there cuts it by the decay, and
#: each higher card I have not seen cuts a card that is not trump by SIDE_RANK_DECAY as well.
#: Calibrated on 3-player self-play; the scaling in ``normalised_chances`` fixes the overall level.
TRUMP_TOP, TRUMP_DECAY = 1.0, 0.15
SIDE_TOP, SIDE_DECAY, SIDE_RANK_DECAY = 0.6, 0.3, 0.1
NO_TRUMP_TOP = 0.65
#: Weight of the tricks the others' known bids leave over, against my own estimate, and the most
#: tricks those bids may move the estimate by (so that wild bids do not mislead).
BIDS_SEEN_WEIGHT, BIDS_SEEN_REACH = 0.7, 1.0
#: Largest chance of a trick any single card is given.
MAX_CHANCE = 0.98
#: Urgency (tricks needed per card left) from which a Jester is thrown away rather than a low card.
JESTER_THROW_URGENCY = 0.4
#: Largest chance of winning the trick a ducking card may carry before a Jester is spent instead.
DUCK_RISK = 0.2
#: Deals of the others' cards sampled to estimate a one-card round.
ONE_CARD_SAMPLES = 200
#: Weight of a high card when the dealer names trump (per rank above ten).
TRUMP_HIGH_CARD_WEIGHT = 0.5
#: How much an opponent who has already met their bid still overtakes a trick when able.
SATED_BEAT_FACTOR = 0.2
#: Smallest chance of holding the trick worth spending a card on when the bid needs tricks.
HOLD_THRESHOLD = 0.5


@dataclass
class View:
    """The facts of one decision, decoded from the observation (slot 0 is me, slot 1 my left neighbour)."""

    num_players: int
    phase: int
    hand_size: int
    hand: list[int]  # my card counts by card type
    trump: int  # suit index, or NO_SUIT
    bids: list[int]  # by slot, -1 where not known
    tricks_won: list[int]  # by slot
    trick: list[int]  # cards of the current trick in play order
    held: list[int]  # cards still in hand, by slot
    unseen: list[int]  # counts of the cards I cannot place: other hands and the undealt stack
    dealer: int
    visible: dict[int, int]  # slot -> card, the others' cards in a foresight round

    @property
    def pool(self) -> int:
        """Number of cards I cannot place."""
        return sum(self.unseen)


def read_view(observation: np.ndarray) -> View:
    """Decode an observation vector into the facts the heuristic reasons with."""
    f = decode(observation)
    n = MIN_PLAYERS + int(np.argmax(f["num_players"]))
    trump_index = int(np.argmax(f["trump"])) if f["trump"].any() else NO_TRUMP_INDEX
    leader = int(np.argmax(f["leader"][:n]))
    trick = []
    for k in range(n):
        row = f["trick"][(leader + k) % n]
        if not row.any():
            break
        trick.append(int(np.argmax(row)))
    played = f["played"][:n]
    hand_size = int(f["hand_size"][0])
    foresight = f["foresight"][:n]
    unseen = DECK_COUNTS - f["hand"] - played.sum(axis=0) - f["trump_card"] - foresight.sum(axis=0)
    return View(
        num_players=n,
        phase=int(np.argmax(f["phase"])),
        hand_size=hand_size,
        hand=f["hand"].tolist(),
        trump=NO_SUIT if trump_index == NO_TRUMP_INDEX else trump_index,
        bids=np.where(f["bid_known"][:n] == 1, f["bids"][:n], -1).tolist(),
        tricks_won=f["tricks_won"][:n].tolist(),
        trick=trick,
        held=(hand_size - played.sum(axis=1)).tolist(),
        unseen=np.maximum(unseen, 0).tolist(),
        dealer=int(np.argmax(f["dealer"][:n])),
        visible={slot: int(np.argmax(foresight[slot])) for slot in range(1, n) if foresight[slot].any()},
    )


def none_chance(pool: int, special: int, draws: int) -> float:
    """Chance that ``draws`` cards taken from ``pool`` include none of ``special`` given cards."""
    if special <= 0 or draws <= 0:
        return 1.0
    if draws > pool - special:
        return 0.0
    return comb(pool - special, draws) / comb(pool, draws)


def at_most_chance(pool: int, special: int, draws: int, most: int) -> float:
    """Chance that ``draws`` cards taken from ``pool`` include at most ``most`` of ``special`` given cards."""
    total = comb(pool, draws)
    hits = sum(comb(special, k) * comb(pool - special, draws - k) for k in range(min(most, special, draws) + 1))
    return hits / total if total else 1.0


def suit_cards(hand: list[int], suit: int) -> list[int]:
    """Cards of ``suit`` held in ``hand``, highest first."""
    start = suit * NUM_RANKS
    return [start + r for r in range(NUM_RANKS - 1, -1, -1) if hand[start + r]]


def higher_unseen(v: View, card: int) -> int:
    """Unseen cards of the same suit that outrank ``card``."""
    return sum(v.unseen[card + 1 : (card // NUM_RANKS + 1) * NUM_RANKS])


def suit_unseen(v: View, suit: int) -> int:
    """Unseen cards of ``suit`` (none for NO_SUIT)."""
    return 0 if suit == NO_SUIT else sum(v.unseen[suit * NUM_RANKS : (suit + 1) * NUM_RANKS])


# -- trump choice and bidding --------------------------------------------------------------------


def choose_trump(v: View) -> int:
    """Suit (0..3) where the hand is strongest: length plus weight for cards above ten."""
    if not any(v.hand):
        return max(range(NUM_SUITS), key=lambda s: foresight_chance(v, s))

    def strength(suit: int) -> float:
        cards = suit_cards(v.hand, suit)
        return len(cards) + TRUMP_HIGH_CARD_WEIGHT * sum(max(0, int(CARD_RANK[c]) - 8) for c in cards)

    return max(range(NUM_SUITS), key=strength)


def foresight_chance(v: View, trump: int) -> float:
    """Chance that my unseen card wins a one-card round, given the others' visible cards."""
    n = v.num_players
    order = [(v.dealer + 1 + k) % n for k in range(n)]
    wins = 0
    for card, count in enumerate(v.unseen):
        if count:
            trick = [v.visible.get(slot, card) for slot in order]
            wins += count * (order[trick_winner(trick, trump)] == 0)
    return wins / max(1, v.pool)


def card_chance(v: View, card: int, depth: int, mine: bool = True) -> float:
    """Chance that ``card``, the ``depth``-th highest of its suit in its hand, takes a trick this round.

    ``mine``: the card is in my hand; else it is an unseen card, in another hand that faces mine.
    """
    if card == WIZARD:
        return WIZARD_CHANCE
    if card == JESTER:
        return 0.0
    size, pool, opponents = v.hand_size, max(1, v.pool), v.num_players - 1
    suit = int(CARD_SUIT[card])
    higher = higher_unseen(v, card)
    if mine:
        held_above = higher * size * opponents / pool  # expected higher cards in other hands
    else:
        my_higher = sum(v.hand[card + 1 : (suit + 1) * NUM_RANKS])
        held_above = my_higher + higher * size * (opponents - 1) / pool
        higher += my_higher
    if suit == v.trump:
        return TRUMP_TOP * exp(-TRUMP_DECAY * held_above)
    side = exp(-SIDE_DECAY * held_above - SIDE_RANK_DECAY * higher)
    if v.trump == NO_SUIT:
        return NO_TRUMP_TOP * side
    return SIDE_TOP * not_ruffed_chance(v, suit, depth, pool) * side


def not_ruffed_chance(v: View, suit: int, depth: int, pool: int) -> float:
    """Chance that no opponent trumps my ``depth``-th card of an off-trump ``suit`` (counted from the top)."""
    in_suit, size = suit_unseen(v, suit), v.hand_size
    short = at_most_chance(pool, in_suit, size, depth)
    has_trump = 1 - none_chance(pool - in_suit, suit_unseen(v, v.trump), size)
    return (1 - short * has_trump) ** (v.num_players - 1)


def odds_scaled(chances: np.ndarray, factor: float) -> np.ndarray:
    """Chances with their odds multiplied by ``factor``: sure cards stay nearly sure, the rest move most."""
    return factor * chances / (1 - chances + factor * chances)


def odds_factor(chances: np.ndarray, weights: np.ndarray, total: float) -> float:
    """The odds factor that makes the weighted chances add up to ``total`` (found by bisection)."""
    low, high = -8.0, 8.0
    for _ in range(30):
        mid = (low + high) / 2
        if weights @ odds_scaled(chances, exp(mid)) < total:
            low = mid
        else:
            high = mid
    return exp((low + high) / 2)


def normalised_chances(v: View) -> list[float]:
    """Chances of my cards taking a trick, the suited ones scaled so that all hands together expect
    the tricks dealt, then towards the tricks the others' known bids leave over."""
    size, opponents = v.hand_size, v.num_players - 1
    in_other_hands = size * opponents / max(1, v.pool)
    wizards = WIZARD_CHANCE * v.hand[WIZARD]
    their_wizards = WIZARD_CHANCE * v.unseen[WIZARD] * in_other_hands
    mine = np.array([card_chance(v, c, d) for s in range(NUM_SUITS) for d, c in enumerate(suit_cards(v.hand, s))])
    out = [c for c in range(WIZARD) if v.unseen[c]]
    theirs = np.array([card_chance(v, c, 0, mine=False) for c in out])
    mine, theirs = np.minimum(mine, MAX_CHANCE), np.minimum(theirs, MAX_CHANCE)
    chances = np.concatenate([mine, theirs])
    weights = np.concatenate([np.ones(len(mine)), in_other_hands * np.array([v.unseen[c] for c in out])])
    mine = odds_scaled(mine, odds_factor(chances, weights, max(0.0, size - wizards - their_wizards)))
    known = [b for b in v.bids[1:] if b >= 0]
    if known and len(mine):
        expected = wizards + mine.sum()
        unknown = (size - expected) * (opponents - len(known)) / opponents
        shift = np.clip(size - sum(known) - unknown - expected, -BIDS_SEEN_REACH, BIDS_SEEN_REACH)
        target = np.clip(expected + BIDS_SEEN_WEIGHT * shift, 0, size)
        mine = odds_scaled(mine, odds_factor(mine, np.ones(len(mine)), max(0.0, target - wizards)))
    return [WIZARD_CHANCE] * v.hand[WIZARD] + [min(MAX_CHANCE, p) for p in mine]


def trick_distribution(chances: list[float]) -> np.ndarray:
    """Distribution of the number of tricks taken when each card wins independently."""
    dist = np.zeros(len(chances) + 1)
    dist[0] = 1.0
    for p in chances:
        dist[1:] = dist[1:] * (1 - p) + dist[:-1] * p
        dist[0] *= 1 - p
    return dist


def one_card_chance(v: View, rng: np.random.Generator) -> float:
    """Chance that my single card wins a one-card round, over sampled cards of the others."""
    n = v.num_players
    order = [(v.dealer + 1 + k) % n for k in range(n)]
    mine = v.hand.index(1)
    pool = np.repeat(np.arange(len(v.unseen)), v.unseen)
    wins = 0
    for _ in range(ONE_CARD_SAMPLES):
        cards = [mine] + rng.choice(pool, n - 1, replace=False).tolist()
        wins += order[trick_winner([cards[slot] for slot in order], v.trump)] == 0
    return wins / ONE_CARD_SAMPLES


def choose_bid(v: View, legal_bids: list[int], rng: np.random.Generator) -> int:
    """The legal bid with the best expected score under the estimated trick distribution."""
    if not any(v.hand):
        chances = [foresight_chance(v, v.trump)]
    elif v.hand_size == 1:
        chances = [one_card_chance(v, rng)]
    else:
        chances = normalised_chances(v)
    dist = trick_distribution(chances)

    def expected_score(bid: int) -> float:
        return sum(p * round_score(bid, tricks) for tricks, p in enumerate(dist))

    return max(legal_bids, key=expected_score)


# -- card play ----------------------------------------------------------------------------------


def beat_chance(v: View, slot: int, card: int, led: int) -> float:
    """Chance that the player in ``slot``, still to play, can overtake ``card`` in a trick led in ``led``."""
    pool, held = v.pool, v.held[slot]
    direct = v.unseen[WIZARD]
    if int(CARD_SUIT[card]) == led:
        direct += higher_unseen(v, card)
        ruffers = suit_unseen(v, v.trump) if v.trump != led else 0
    else:  # I trumped a suit I could not follow
        ruffers = higher_unseen(v, card)
    in_led = suit_unseen(v, led)
    void = none_chance(pool, in_led, held)
    can_ruff = void * (1 - none_chance(pool - in_led, ruffers, held))
    return 1 - none_chance(pool, direct, held) * (1 - can_ruff)


def hold_chance(v: View, card: int, trick: list[int], eager: bool = False) -> float:
    """Chance that ``card`` played onto ``trick`` wins it; ``eager``: every later player overtakes when able."""
    cards = trick + [card]
    me = len(trick)
    if trick_winner(cards, v.trump) != me:
        return 0.0
    later = range(1, v.num_players - me)
    if not later or card == WIZARD:
        return 1.0
    if card == JESTER:
        return 0.0
    led = suit_to_follow(cards)
    chance = 1.0
    for slot in later:
        beat = beat_chance(v, slot, card, led)
        if not eager and 0 <= v.bids[slot] <= v.tricks_won[slot]:
            beat *= SATED_BEAT_FACTOR
        chance *= 1 - beat
    return chance


def strength(v: View, card: int) -> float:
    """How dangerous a card is to hold: its chance to win when led, with rank breaking ties."""
    if card == JESTER:
        return -1.0
    rank = NUM_RANKS if card == WIZARD else int(CARD_RANK[card])
    return hold_chance(v, card, [], eager=True) + rank / 1000


def choose_card(v: View, legal: list[int]) -> int:
    """The card to play: win cheaply while short of the bid, duck once it is met."""
    holds = {c: hold_chance(v, c, v.trick) for c in legal}
    power = {c: strength(v, c) for c in legal}
    need = v.bids[0] - v.tricks_won[0]
    if need <= 0:
        return duck(legal, holds, power)
    wizards = v.hand[WIZARD]
    if need > wizards or WIZARD not in legal:
        return win(v, legal, holds, power, need - wizards)
    # The Wizards alone can make the bid: take tricks with them and lose with the rest.
    if not v.trick:
        return WIZARD
    if WIZARD in v.trick:
        return duck(legal, holds, power)
    losers = [c for c in legal if holds[c] == 0]
    return max(losers, key=power.get) if losers else WIZARD


def duck(legal: list[int], holds: dict[int, float], power: dict[int, float]) -> int:
    """Lose the trick, shedding the most dangerous card that surely loses; keep Jesters for later."""
    losers = [c for c in legal if holds[c] == 0 and c != JESTER]
    if losers:
        return max(losers, key=power.get)
    safest = min((c for c in legal if c != JESTER), key=lambda c: (holds[c], -power[c]), default=JESTER)
    if JESTER in legal and holds[safest] > DUCK_RISK:
        return JESTER
    if all(holds[c] == 1 for c in legal):
        return max(legal, key=power.get)
    return safest


def win(v: View, legal: list[int], holds: dict[int, float], power: dict[int, float], need: int) -> int:
    """Take the trick with the cheapest card likely to hold, or throw the least useful card."""
    others = [c for c in legal if c != WIZARD]
    urgency = need / max(1, sum(v.hand) - v.hand[WIZARD])
    threshold = HOLD_THRESHOLD * (1 - urgency)
    winners = [c for c in others if holds[c] > 0 and holds[c] >= threshold]
    if winners:
        return min(winners, key=power.get) if v.trick else max(winners, key=holds.get)
    if WIZARD in legal and (not others or urgency >= 1):
        return WIZARD
    if JESTER in legal and urgency >= JESTER_THROW_URGENCY:
        return JESTER
    throw = [c for c in others if c != JESTER] or others
    throw = [c for c in throw if CARD_SUIT[c] != v.trump] or throw  # keep trumps for ruffing
    return min(throw, key=power.get)


class RuleAgent(Agent):
    """Heuristic player: bids its expected tricks and plays to take exactly that many."""

    name = "rule"

    def __init__(self, seed: int | np.random.Generator | None = None):
        self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """A legal action chosen by the heuristic for the phase the observation shows."""
        legal = [int(a) for a in np.flatnonzero(action_mask)]
        if not legal:
            raise ValueError("RuleAgent: the action mask has no legal action")
        if len(legal) == 1:
            return legal[0]
        v = read_view(observation)
        if v.phase == Phase.TRUMP:
            action = TRUMP_OFFSET + choose_trump(v)
        elif v.phase == Phase.BID:
            action = BID_OFFSET + choose_bid(v, [a - BID_OFFSET for a in legal if a < CARD_OFFSET], self.rng)
        else:
            action = CARD_OFFSET + choose_card(v, [a - CARD_OFFSET for a in legal if CARD_OFFSET <= a < TRUMP_OFFSET])
        return action if action in legal else legal[0]
