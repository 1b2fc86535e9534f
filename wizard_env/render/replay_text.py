"""A recorded game as text: the rules in one line, then every round's deal, bids, tricks and scores.

The presentation of the ``wizard-replay/1`` records of ``engine.replay`` (``wizard replay``, ``wizard eval``'s
summary line, the evaluation report).
"""

from __future__ import annotations

from typing import Sequence

from wizard_env.engine.cards import WIZARD_NAME
from wizard_env.engine.replay import check_record
from wizard_env.engine.rules import Rules, winners

#: Agent names longer than this are shown cut in the middle.
MAX_NAME_SHOWN = 60


def _clip(text: str, limit: int = MAX_NAME_SHOWN) -> str:
    half = (limit - 3) // 2
    return text if len(text) <= limit else f"{text[:half]}...{text[-half:]}"


def _seat_names(record: dict) -> list[str]:
    return [f"seat {seat} ({_clip(agent)})" for seat, agent in enumerate(record["seats"])]


def _hand_sizes_text(sizes: Sequence[int]) -> str:
    if len(sizes) == 1:
        return _cards(sizes[0])
    if list(sizes) == list(range(1, len(sizes) + 1)):
        return f"1..{len(sizes)} cards"
    return "cards " + ",".join(map(str, sizes))


def describe_rules(rules: Rules) -> str:
    """One line naming a configuration: players, rounds and variants."""
    rounds = "round" if rules.num_rounds == 1 else "rounds"
    return (
        f"{rules.num_players} players, {rules.num_rounds} {rounds} ({_hand_sizes_text(rules.hand_sizes)}), "
        f"{rules.bidding.value} bidding, bid total rule {'on' if rules.bid_total_rule else 'off'}, "
        f"foresight {'on' if rules.foresight else 'off'}"
    )


def _cards(count: int) -> str:
    return f"{count} card" + ("" if count == 1 else "s")


def _format_round(rnd: dict, names: list[str], num_rounds: int) -> list[str]:
    n = len(names)
    trump = rnd["trump"] or "none"
    if rnd["trump_card"] == WIZARD_NAME:
        trump += " (chosen by the dealer)"
    lines = [
        f"Round {rnd['round']}/{num_rounds}: {_cards(len(rnd['hands'][0]))} each, dealer {names[rnd['dealer']]}, "
        f"turned {rnd['trump_card'] or 'none'}, trump {trump}",
    ]
    width = max(map(len, names))
    bid_of = {b["seat"]: b["bid"] for b in rnd["bids"]}
    lines.append(f"  {'':<{width}}  {'bid':>3}  {'won':>3}  {'score':>5}  {'total':>5}  hand")
    for seat in range(n):
        lines.append(
            f"  {names[seat]:<{width}}  {bid_of.get(seat, '-'):>3}  {rnd['tricks_won'][seat]:>3}  "
            f"{rnd['scores'][seat]:>5}  {rnd['totals'][seat]:>5}  {' '.join(rnd['hands'][seat]) or '-'}"
        )
    lines.append("  bids in order: " + ", ".join(f"seat {b['seat']} {b['bid']}" for b in rnd["bids"]))
    for t, trick in enumerate(rnd["tricks"], 1):
        plays = " ".join(f"{p['seat']}:{p['card']}" for p in trick["plays"])
        lines.append(f"  trick {t}: seat {trick['leader']} leads  {plays}  -> seat {trick['winner']} wins")
    return lines


def format_game(record: dict) -> str:
    """A readable round-by-round view: dealer, hands, trump, bids, every trick, tricks won, scores, totals."""
    check_record(record)
    rules = Rules.from_dict(record["num_players"], record["rules"])
    names = _seat_names(record)
    lines = [f"Game seed {record['seed']}: {describe_rules(rules)}", "Seats: " + ", ".join(names), ""]
    for rnd in record["rounds"]:
        lines += _format_round(rnd, names, rules.num_rounds) + [""]
    totals = record["final_totals"]
    lines.append("Final totals: " + ", ".join(f"{names[s]} {totals[s]}" for s in range(len(totals))))
    best = winners(totals)
    label = "Winner" if len(best) == 1 else "Winners (shared)"
    lines.append(f"{label}: " + ", ".join(names[s] for s in best) + f" with {totals[best[0]]}")
    return "\n".join(lines)
