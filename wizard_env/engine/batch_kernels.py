"""The batched engine, compiled: the state of a ``WizardBatch``, its kernels and the observation encoder.

Each kernel loops over the games it is given, running the rules of play of ``kernels`` (one trick, hand
or seat at a time) on the batch's arrays. The kernels take the game state as one ``BatchState`` (the
batch's arrays, which ``WizardBatch`` documents, and the observation layout), so a layout change never
meets a stale compiled copy. Like ``kernels``, this module is cached on disk by numba and recompiled
when its file or a project module it imports changes (``compile_cache``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.experimental import structref

from .actions import BID_OFFSET, CARD_OFFSET, NUM_ACTIONS, TRUMP_OFFSET
from .cards import CARD_SUIT, DECK_COUNTS, NO_CARD, NO_SUIT, NUM_CARD_TYPES, NUM_SUITS, WIZARD
from .constants import MIN_PLAYERS
from .kernels import (BID, OVER, PLAY, TRUMP, bid_visible, deal_into, legal_bids_into, legal_cards_following,
                      round_score, suit_to_follow, trick_winner, trump_of_card)

_NO_TRUMP_INDEX = NUM_SUITS

# -- the state of a batch, passed to every kernel as one argument ---------------------------------


@structref.register
class StateType(types.StructRef):
    """numba's type of a ``BatchState``."""

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(t)) for name, t in fields)


class BatchState(structref.StructRefProxy):
    """A ``WizardBatch``'s arrays and rule settings, passed to the kernels as one argument (``make_state``).

    numba checks the type of every argument at every call, about 50 ns an array: a kernel that took
    the ~40 arrays one by one spent most of a one-game step on that. The fields are the batch's own
    arrays (not copies), so the kernels change the batch in place.
    """


structref.define_boxing(StateType, BatchState)


def _array(dtype, ndim: int) -> types.Array:
    return types.Array(dtype, ndim, "C")


_I8 = types.int8
#: Fields of a BatchState: the rule settings, the observation layout (``observation.ENCODER_LAYOUT``),
#: the state arrays and mask cache, and the per-step results (``WizardBatch`` documents them all).
STATE_TYPE = StateType([
    ("hand_sizes", _array(types.int64, 1)), ("bid_total_rule", types.boolean), ("bidding", types.int64),
    ("foresight", types.boolean), ("starts", _array(types.int64, 1)), ("round_scale", types.float64),
    ("score_scale", types.float64), ("game_seed", _array(types.int64, 1)), ("first_dealer", _array(_I8, 1)),
    ("round_index", _array(types.int16, 1)), ("orders", _array(_I8, 3)), ("phase", _array(_I8, 1)),
    ("current", _array(_I8, 1)), ("dealer", _array(_I8, 1)), ("leader", _array(_I8, 1)), ("trump", _array(_I8, 1)),
    ("trump_card", _array(_I8, 1)), ("hands", _array(_I8, 3)), ("played", _array(_I8, 3)), ("trick", _array(_I8, 2)),
    ("trick_len", _array(_I8, 1)), ("voids", _array(_I8, 3)), ("last_trick", _array(_I8, 2)),
    ("last_winner", _array(_I8, 1)), ("bids", _array(_I8, 2)), ("tricks_won", _array(_I8, 2)),
    ("totals", _array(types.int32, 2)), ("mask_stale", _array(types.boolean, 1)), ("masks", _array(_I8, 2)),
    ("round_over", _array(types.boolean, 1)), ("round_scores", _array(types.int64, 2)),
    ("round_bids", _array(_I8, 2)), ("round_tricks", _array(_I8, 2)), ("round_hand_size", _array(types.int64, 1)),
    ("round_dealer", _array(_I8, 1)), ("game_over", _array(types.boolean, 1)),
    ("final_totals", _array(types.int64, 2)), ("final_seed", _array(types.int64, 1)),
    ("trick_won_by", _array(_I8, 1)),
])
STATE_FIELDS = tuple(STATE_TYPE.field_dict)


@njit(cache=True)
def make_state(hand_sizes, bid_total_rule, bidding, foresight, starts, round_scale, score_scale, game_seed,
               first_dealer, round_index, orders, phase, current, dealer, leader, trump, trump_card, hands, played,
               trick, trick_len, voids, last_trick, last_winner, bids, tricks_won, totals, mask_stale, masks,
               round_over, round_scores, round_bids, round_tricks, round_hand_size, round_dealer, game_over,
               final_totals, final_seed, trick_won_by):
    """A BatchState of these values, in the order of ``STATE_FIELDS``."""
    s = structref.new(STATE_TYPE)
    s.hand_sizes, s.bid_total_rule, s.bidding, s.foresight = hand_sizes, bid_total_rule, bidding, foresight
    s.starts, s.round_scale, s.score_scale = starts, round_scale, score_scale
    s.game_seed, s.first_dealer, s.round_index, s.orders, s.phase = game_seed, first_dealer, round_index, orders, phase
    s.current, s.dealer, s.leader, s.trump, s.trump_card = current, dealer, leader, trump, trump_card
    s.hands, s.played, s.trick, s.trick_len, s.voids = hands, played, trick, trick_len, voids
    s.last_trick, s.last_winner, s.bids, s.tricks_won, s.totals = last_trick, last_winner, bids, tricks_won, totals
    s.mask_stale, s.masks, s.round_over, s.round_scores, s.round_bids = mask_stale, masks, round_over, round_scores, round_bids
    s.round_tricks, s.round_hand_size, s.round_dealer, s.game_over = round_tricks, round_hand_size, round_dealer, game_over
    s.final_totals, s.final_seed, s.trick_won_by = final_totals, final_seed, trick_won_by
    return s


# -- the kernels: each loops over the games it is given ------------------------------------------


@njit(cache=True)
def start_rounds(games, s):
    """Deal the round ``round_index`` of each game and set it up for bidding (or for the dealer's trump choice)."""
    hand_sizes, first_dealer, round_index, orders, hands = s.hand_sizes, s.first_dealer, s.round_index, s.orders, s.hands
    trump_card, trump, dealer, leader, bids, tricks_won = s.trump_card, s.trump, s.dealer, s.leader, s.bids, s.tricks_won
    played, trick, trick_len, voids, last_trick = s.played, s.trick, s.trick_len, s.voids, s.last_trick
    last_winner, phase, current, mask_stale = s.last_winner, s.phase, s.current, s.mask_stale
    n = hands.shape[1]
    for g in games:
        r = round_index[g]
        turned = deal_into(orders[g, r], hand_sizes[r], hands[g])
        trump_card[g] = turned
        trump[g] = trump_of_card(turned)
        dealer[g] = (first_dealer[g] + r) % n
        leader[g] = (dealer[g] + 1) % n
        bids[g] = -1
        tricks_won[g] = 0
        played[g] = 0
        trick[g] = NO_CARD
        trick_len[g] = 0
        voids[g] = 0
        last_trick[g] = NO_CARD
        last_winner[g] = -1
        phase[g] = TRUMP if turned == WIZARD else BID
        current[g] = dealer[g] if turned == WIZARD else leader[g]
        mask_stale[g] = True


@njit(cache=True)
def refresh_masks(games, s):
    """Recompute the cached masks ``s.masks`` [B, NUM_ACTIONS] (int8) of the acting seat of each game marked stale."""
    hand_sizes, bid_total_rule, phase, current, dealer = s.hand_sizes, s.bid_total_rule, s.phase, s.current, s.dealer
    round_index, bids, hands, trick, mask_stale, masks = s.round_index, s.bids, s.hands, s.trick, s.mask_stale, s.masks
    for g in games:
        if not mask_stale[g]:
            continue
        row = masks[g]
        p = phase[g]
        # the suit to follow before the row is cleared: the other order made this kernel twice as slow
        suit = suit_to_follow(trick[g]) if p == PLAY else NO_SUIT
        row[:] = 0
        if p == TRUMP:
            row[TRUMP_OFFSET:NUM_ACTIONS] = 1
        elif p == BID:
            made = 0
            for bid in bids[g]:
                made += max(bid, 0)
            legal_bids_into(hand_sizes[round_index[g]], made, current[g] == dealer[g], bid_total_rule,
                            row[BID_OFFSET:CARD_OFFSET])
        elif p == PLAY:
            legal_cards_following(hands[g, current[g]], suit, row[CARD_OFFSET:TRUMP_OFFSET])
        mask_stale[g] = False


@njit(cache=True)
def first_illegal(games, actions, masks) -> int:
    """Index i of the first action that is out of range or not set in the mask row of game ``games[i]``; -1 if none."""
    for i in range(len(actions)):
        a = actions[i]
        if a < 0 or a >= NUM_ACTIONS or masks[games[i], a] == 0:
            return i
    return -1


@njit(cache=True)
def apply_actions(games, actions, s):
    """Apply legal actions, one per game: trump choice, bid or card, then the trick's and the round's end.

    Sets the step's results (see ``WizardBatch``) and returns how many games finished. A finished game
    is left in phase OVER; the caller restarts it if the batch autoresets.
    """
    hand_sizes, game_seed, round_index, phase, current = s.hand_sizes, s.game_seed, s.round_index, s.phase, s.current
    dealer, leader, trump, hands, played, trick = s.dealer, s.leader, s.trump, s.hands, s.played, s.trick
    trick_len, voids, last_trick, last_winner, bids = s.trick_len, s.voids, s.last_trick, s.last_winner, s.bids
    tricks_won, totals, mask_stale, round_over = s.tricks_won, s.totals, s.mask_stale, s.round_over
    round_scores, round_bids, round_tricks, round_hand_size = s.round_scores, s.round_bids, s.round_tricks, s.round_hand_size
    round_dealer, game_over, final_totals, final_seed = s.round_dealer, s.game_over, s.final_totals, s.final_seed
    trick_won_by = s.trick_won_by
    n = hands.shape[1]
    finished = 0
    num_rounds = len(hand_sizes)
    round_over[:] = False
    game_over[:] = False
    trick_won_by[:] = -1
    for i in range(len(games)):
        g, action = games[i], actions[i]
        mask_stale[g] = True
        seat = current[g]
        if phase[g] == TRUMP:
            trump[g] = action - TRUMP_OFFSET
            phase[g] = BID
            current[g] = (dealer[g] + 1) % n
        elif phase[g] == BID:
            bids[g, seat] = action - BID_OFFSET
            current[g] = (seat + 1) % n  # after the dealer's bid: the dealer's left leads
            if seat == dealer[g]:
                phase[g] = PLAY
        elif phase[g] == PLAY:
            card = action - CARD_OFFSET
            # a suited card off the suit to follow shows the seat is out of that suit (Wizards and Jesters show nothing)
            follow = suit_to_follow(trick[g])
            if follow != NO_SUIT and CARD_SUIT[card] != NO_SUIT and CARD_SUIT[card] != follow:
                voids[g, seat, follow] = 1
            hands[g, seat, card] -= 1
            played[g, seat, card] += 1
            trick[g, trick_len[g]] = card
            trick_len[g] += 1
            current[g] = (seat + 1) % n
            if trick_len[g] < n:
                continue
            # the trick is complete
            winner = (leader[g] + trick_winner(trick[g], trump[g])) % n
            tricks_won[g, winner] += 1
            for j in range(n):
                last_trick[g, (leader[g] + j) % n] = trick[g, j]
            last_winner[g] = trick_won_by[g] = winner
            trick[g] = NO_CARD
            trick_len[g] = 0
            leader[g] = current[g] = winner
            r = round_index[g]
            if tricks_won[g].sum() < hand_sizes[r]:
                continue
            # the round is over
            for player in range(n):
                score = round_score(bids[g, player], tricks_won[g, player])
                totals[g, player] += score
                round_scores[g, player] = score
            round_bids[g] = bids[g]
            round_tricks[g] = tricks_won[g]
            round_hand_size[g] = hand_sizes[r]
            round_dealer[g] = dealer[g]
            round_over[g] = True
            if r + 1 < num_rounds:
                round_index[g] = r + 1
                start_rounds(games[i : i + 1], s)
            else:
                game_over[g] = True
                final_totals[g] = totals[g]
                final_seed[g] = game_seed[g]
                phase[g] = OVER
                finished += 1
    return finished


@njit(cache=True)
def step_games(games, actions, s):
    """Check the actions against the legal masks (refreshed where stale), then apply them if all are legal.

    Returns (index of the first illegal action or -1, games finished); nothing changes but the mask cache
    when an action is illegal.
    """
    refresh_masks(games, s)
    bad = first_illegal(games, actions, s.masks)
    if bad >= 0:
        return bad, 0
    return -1, apply_actions(games, actions, s)


# -- the observation ---------------------------------------------------------------------------

#: The fields the encoder writes, in the order of its ``starts`` argument (their offsets in the vector).
ENCODED_FIELDS = ("num_players", "phase", "round", "num_rounds", "hand_size", "dealer", "hand", "trump_card", "trump",
                  "bid_known", "bids", "tricks_won", "leader", "trick", "played", "foresight", "scores", "voids",
                  "last_trick", "last_winner", "lead_suit", "unseen")
(_NUM_PLAYERS, _PHASE, _ROUND, _NUM_ROUNDS, _HAND_SIZE, _DEALER, _HAND, _TRUMP_CARD, _TRUMP, _BID_KNOWN, _BIDS,
 _TRICKS_WON, _LEADER, _TRICK, _PLAYED, _FORESIGHT, _SCORES, _VOIDS, _LAST_TRICK, _LAST_WINNER, _LEAD_SUIT,
 _UNSEEN) = range(len(ENCODED_FIELDS))


@njit(cache=True)
def encode(out, games, observers, s):
    """Write into row i of ``out`` what seat ``observers[i]`` knows of game ``games[i]``, slot 0 being that seat.

    ``s.starts``: the offset of each of ``ENCODED_FIELDS`` in the vector; ``s.round_scale`` and ``s.score_scale``
    scale the round and score fields; ``s.foresight``: the variant in which one-card rounds show the others' cards.
    """
    starts, round_scale, score_scale, hand_sizes, bidding = s.starts, s.round_scale, s.score_scale, s.hand_sizes, s.bidding
    foresight, phase, round_index, dealer, leader, trump = s.foresight, s.phase, s.round_index, s.dealer, s.leader, s.trump
    trump_card, hands, played, trick, trick_len, voids = s.trump_card, s.hands, s.played, s.trick, s.trick_len, s.voids
    last_trick, last_winner, bids, tricks_won, totals = s.last_trick, s.last_winner, s.bids, s.tricks_won, s.totals
    n = hands.shape[1]
    unseen = np.empty(NUM_CARD_TYPES, dtype=np.int8)  # the observer's count of unseen cards, per card type
    for i in range(len(games)):
        g, me = games[i], observers[i]
        row = out[i]
        row[:] = 0
        size = hand_sizes[round_index[g]]
        row[starts[_NUM_PLAYERS] + n - MIN_PLAYERS] = 1
        row[starts[_PHASE] + phase[g]] = 1
        row[starts[_ROUND]] = (round_index[g] + 1) * round_scale
        row[starts[_NUM_ROUNDS]] = len(hand_sizes) * round_scale
        row[starts[_HAND_SIZE]] = size * round_scale
        row[starts[_DEALER] + (dealer[g] - me) % n] = 1
        row[starts[_LEADER] + (leader[g] - me) % n] = 1
        turned = trump_card[g]
        unseen[:] = DECK_COUNTS
        if turned != NO_CARD:
            row[starts[_TRUMP_CARD] + turned] = 1
            unseen[turned] -= 1
        if phase[g] != TRUMP:
            row[starts[_TRUMP] + (_NO_TRUMP_INDEX if trump[g] == NO_SUIT else trump[g])] = 1
        for pos in range(trick_len[g]):
            row[starts[_TRICK] + ((leader[g] + pos - me) % n) * NUM_CARD_TYPES + trick[g, pos]] = 1
        follow = suit_to_follow(trick[g])
        if follow != NO_SUIT:
            row[starts[_LEAD_SUIT] + follow] = 1
        if last_winner[g] >= 0:
            row[starts[_LAST_WINNER] + (last_winner[g] - me) % n] = 1
        foresight_round = foresight and size == 1
        for slot in range(n):
            seat = (me + slot) % n
            known = bid_visible(bidding, phase[g], me, seat, bids[g, seat])
            row[starts[_BID_KNOWN] + slot] = known
            row[starts[_BIDS] + slot] = bids[g, seat] * round_scale if known else 0
            row[starts[_TRICKS_WON] + slot] = tricks_won[g, seat] * round_scale
            row[starts[_SCORES] + slot] = totals[g, seat] * score_scale
            for suit in range(NUM_SUITS):
                row[starts[_VOIDS] + slot * NUM_SUITS + suit] = voids[g, seat, suit]
            if last_winner[g] >= 0:
                row[starts[_LAST_TRICK] + slot * NUM_CARD_TYPES + last_trick[g, seat]] = 1
            _write_counts(row, starts[_PLAYED] + slot * NUM_CARD_TYPES, played[g, seat], unseen)
            # a hand the observer sees: their own, or in a foresight round everyone else's
            if foresight_round and slot > 0:
                _write_counts(row, starts[_FORESIGHT] + slot * NUM_CARD_TYPES, hands[g, seat], unseen)
            elif not foresight_round and slot == 0:
                _write_counts(row, starts[_HAND], hands[g, seat], unseen)
        at = np.uint64(starts[_UNSEEN])
        for card in range(NUM_CARD_TYPES):
            c = np.uint64(card)  # (as in _write_counts)
            row[at + c] = unseen[c]


@njit(cache=True)
def _write_counts(row, at, counts, unseen) -> None:
    """Write the card counts ``counts`` into ``row`` from index ``at``, and take them off ``unseen``."""
    at = np.uint64(at)
    for card in range(NUM_CARD_TYPES):
        c = np.uint64(card)  # unsigned indices: no wraparound of negative ones, so the loop is vectorized (2x faster)
        row[at + c] = counts[c]
        unseen[c] -= counts[c]


@njit(cache=True)
def step_observe(games, actions, out, out_masks, s):
    """``step_games``, then the legal masks (into ``out_masks``, row i for game ``games[i]``) and the observations
    (into ``out``) of the seats that act next: one call for what an RL loop asks after every step.

    Returns what ``step_games`` returns; when an action is illegal, nothing is written and nothing changes but
    the mask cache.
    """
    bad, finished = step_games(games, actions, s)
    if bad >= 0:
        return bad, finished
    refresh_masks(games, s)
    masks = s.masks  # (read once: each read of a field takes and releases a reference)
    for i in range(len(games)):
        out_masks[i] = masks[games[i]]
    encode(out, games, s.current[games], s)
    return -1, finished
