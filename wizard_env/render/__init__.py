"""A game shown to people: as text (``text``), as an image (``image``), a recorded game as text (``replay_text``)."""
