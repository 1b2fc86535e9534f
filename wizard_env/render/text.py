"""A readable text view of a game: hands, trump, bids, tricks, the current trick and scores."""

from __future__ import annotations

import textwrap

from wizard_env.engine.cards import NO_CARD, card_name, hand_names, suit_name
from wizard_env.engine.game import Phase, WizardGame

#: Columns of a line; a longer one (a long hand) continues on the next line, indented.
WIDTH = 80


def render_text(game: WizardGame, viewer: int | None = None, names: list[str] | None = None) -> str:
    """The table as text; ``viewer`` shows only what that seat may see (None shows every hand)."""
    n = game.num_players
    names = names or [f"player_{seat}" for seat in range(n)]
    trump = "chosen by the dealer" if game.phase == Phase.TRUMP else (suit_name(game.trump) or "none")
    turned = "none" if game.trump_card == NO_CARD else card_name(game.trump_card)
    lines = [
        f"Round {game.round_index + 1}/{game.rules.num_rounds}  ({game.hand_size} card{'s' if game.hand_size > 1 else ''} each)  "
        f"phase: {game.phase.name.lower()}  turned: {turned}  trump: {trump}",
    ]
    width = max(len(name) for name in names)
    trick = dict(zip(game.trick_seats, game.trick_cards))
    for seat in range(n):
        hidden = viewer is not None and not game.hand_visible(viewer, seat)
        hand = "?" * 3 if hidden else " ".join(hand_names(game.hands[seat])) or "-"
        if viewer is None or game.bid_visible(viewer, seat):
            bid = "-" if game.bids[seat] < 0 else str(game.bids[seat])
        else:
            bid = "?"
        marks = ("D" if seat == game.dealer else " ") + (">" if seat == game.current and not game.is_over else " ")
        played = card_name(trick[seat]) if seat in trick else ""
        line = (f"{marks} {names[seat]:<{width}}  score {game.totals[seat]:>5}  bid {bid:>2}  "
                f"tricks {game.tricks_won[seat]:>2}  trick: {played:<3}")
        if len(line) + len(hand) + 8 <= WIDTH:
            lines.append(f"{line}  hand: {hand}")
        else:  # a long hand gets lines of its own
            lines += [line.rstrip(), textwrap.fill(f"hand: {hand}", WIDTH, initial_indent=" " * 4, subsequent_indent=" " * 10)]
    if game.is_over:
        lines.append("Game over. Final totals: " + ", ".join(f"{names[s]} {game.totals[s]}" for s in range(n)))
    return "\n".join(lines)


def render_for_mode(render_mode: str | None, game: WizardGame | None, viewer: int | None, names: list[str]) -> str | None:
    """What an env's ``render()`` gives: the table as text for ``"ansi"``, printed for ``"human"``
    (returning None), and a warning and None without a render mode."""
    if render_mode is None:
        import gymnasium

        gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
        return None
    text = "(no game yet: call reset())" if game is None else render_text(game, viewer, names)
    if render_mode == "human":
        print(text + "\n")
        return None
    return text
