"""The table as an image (``render_mode="rgb_array"``): a ``(HEIGHT, WIDTH, 3)`` uint8 array drawn with Pillow.

The picture holds what ``render.render_text`` writes: the round line (round, hand size, phase, turned
card, trump), the current trick with its leader, and one row per seat (dealer and turn marks, bid,
tricks won, total and the hand, face down where the viewer may not see it). Every frame has the same
size, so ``RecordVideo`` and notebooks can stack them. Pillow comes with the ``render`` extra.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from wizard_env.engine.cards import NO_CARD, SUITS, WIZARD_NAME, card_name, hand_names
from wizard_env.engine.game import Phase, WizardGame
from wizard_env.engine.rules import MAX_HAND_SIZE, MAX_PLAYERS

CARD_W, CARD_H, CARD_GAP = 30, 42, 3
MARGIN = 12
HEADER_H = 34
TRICK_H = CARD_H + 40
ROW_H = CARD_H + 34
WIDTH = 2 * MARGIN + 170 + MAX_HAND_SIZE * (CARD_W + CARD_GAP)
HEIGHT = HEADER_H + TRICK_H + MAX_PLAYERS * ROW_H + MARGIN

FELT = (20, 101, 63)
PANEL = (30, 118, 78)
ACTING = (255, 213, 74)
WHITE = (255, 255, 255)
INK = (29, 29, 31)
CARD_BACK = (75, 58, 140)
SUIT_COLOURS = {"c": (27, 127, 59), "d": (31, 95, 191), "h": (198, 40, 40), "s": (34, 34, 34)}
SPECIAL_COLOURS = {WIZARD_NAME: ((35, 32, 106), ACTING), "Jes": ((236, 239, 241), (85, 85, 85))}


def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=size)
    except (TypeError, ImportError, OSError):  # a Pillow without FreeType: its bitmap font, one size
        return ImageFont.load_default()


def _card(draw: ImageDraw.ImageDraw, x: int, y: int, name: str | None, font, outline=None) -> None:
    """One card at (x, y): its face (rank and suit letter, coloured by suit), or its back for None."""
    box = (x, y, x + CARD_W, y + CARD_H)
    if name is None:
        draw.rounded_rectangle(box, 4, fill=CARD_BACK, outline=WHITE)
        return
    if name in SPECIAL_COLOURS:
        fill, ink = SPECIAL_COLOURS[name]
        label = "W" if name == WIZARD_NAME else "J"
    else:
        fill, ink = WHITE, SUIT_COLOURS[name[1]]
        label = ("10" if name[0] == "T" else name[0]) + name[1]
    draw.rounded_rectangle(box, 4, fill=fill, outline=outline or (120, 120, 120), width=3 if outline else 1)
    draw.text((x + CARD_W / 2, y + CARD_H / 2), label, fill=ink, font=font, anchor="mm")


def render_rgb(game: WizardGame | None, viewer: int | None = None, names: Sequence[str] | None = None) -> np.ndarray:
    """The table as an RGB image array (HEIGHT, WIDTH, 3) uint8; ``viewer`` shows only what that seat may see."""
    image = Image.new("RGB", (WIDTH, HEIGHT), FELT)
    draw = ImageDraw.Draw(image)
    font, small = _font(15), _font(12)
    if game is None:
        draw.text((MARGIN, MARGIN), "no game yet: call reset()", fill=WHITE, font=font)
        return np.asarray(image, dtype=np.uint8)
    n = game.num_players
    names = list(names or [f"player_{seat}" for seat in range(n)])
    trump = "chosen by the dealer" if game.phase == Phase.TRUMP else (SUITS[game.trump] if game.trump >= 0 else "none")
    turned = "none" if game.trump_card == NO_CARD else card_name(game.trump_card)
    header = (f"Round {game.round_index + 1}/{game.rules.num_rounds}   {game.hand_size} cards each   "
              f"phase: {game.phase.name.lower()}   turned: {turned}   trump: {trump}")
    draw.text((MARGIN, MARGIN), header, fill=WHITE, font=font)
    top = HEADER_H
    draw.rounded_rectangle((MARGIN, top, WIDTH - MARGIN, top + TRICK_H - 8), 8, fill=PANEL)
    if game.trick_cards:
        draw.text((MARGIN + 8, top + 6), f"trick: {names[game.leader]} leads", fill=WHITE, font=small)
        for i, (seat, card) in enumerate(zip(game.trick_seats, game.trick_cards)):
            x = MARGIN + 8 + i * (CARD_W + 60)
            _card(draw, x, top + 24, card_name(card), small, ACTING if seat == game.leader else None)
            draw.text((x + CARD_W + 4, top + 24 + CARD_H / 2), str(seat), fill=WHITE, font=small, anchor="lm")
    else:
        draw.text((MARGIN + 8, top + 6), "trick: no card played yet" if not game.is_over else "game over", fill=WHITE, font=small)
    for seat in range(n):
        y = HEADER_H + TRICK_H + seat * ROW_H
        acting = seat == game.current and not game.is_over
        draw.rounded_rectangle((MARGIN, y, WIDTH - MARGIN, y + ROW_H - 6), 8, fill=PANEL, outline=ACTING if acting else None,
                               width=3)
        bid = "-" if game.bids[seat] < 0 else str(game.bids[seat])
        if viewer is not None and not game.bid_visible(viewer, seat):
            bid = "?"
        mark = " (D)" if seat == game.dealer else ""
        draw.text((MARGIN + 8, y + 6), f"{names[seat]}{mark}", fill=ACTING if acting else WHITE, font=small)
        draw.text((MARGIN + 8, y + 26), f"bid {bid}  won {game.tricks_won[seat]}", fill=WHITE, font=small)
        draw.text((MARGIN + 8, y + 44), f"total {game.totals[seat]}", fill=WHITE, font=small)
        held = hand_names(game.hands[seat])
        hidden = viewer is not None and not game.hand_visible(viewer, seat)
        cards: list[str | None] = [None] * len(held) if hidden else list(held)
        for i, name in enumerate(cards):
            _card(draw, MARGIN + 170 + i * (CARD_W + CARD_GAP), y + 14, name, small)
    return np.asarray(image, dtype=np.uint8)
