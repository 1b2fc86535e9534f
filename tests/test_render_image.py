"""render_mode="rgb_array": the table as an image array of one fixed size, which follows the game."""

from __future__ import annotations

import numpy as np
import pytest

import wizard_env
from helpers import uninstalled
from wizard_env.util.extras import MissingExtra

pytest.importorskip("PIL", reason="Pillow is not installed (the render extra)")
from wizard_env.render.image import HEIGHT, WIDTH  # noqa: E402


def first_legal(env) -> int:
    observation, *_ = env.last()
    return int(np.flatnonzero(observation["action_mask"])[0])


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_a_frame_is_an_rgb_image_of_one_size_for_every_player_count(players):
    env = wizard_env.env(num_players=players, render_mode="rgb_array")
    env.reset(seed=players)
    frame = env.render()
    assert isinstance(frame, np.ndarray) and frame.shape == (HEIGHT, WIDTH, 3) and frame.dtype == np.uint8
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 10  # a drawing, not a blank
    assert "rgb_array" in env.metadata["render_modes"] and env.metadata["render_fps"] > 0


def test_the_frame_changes_when_a_card_is_played_and_not_otherwise():
    env = wizard_env.env(num_players=4, rounds=[3], render_mode="rgb_array")
    env.reset(seed=11)
    while env.unwrapped.game.phase != wizard_env.Phase.PLAY:
        env.step(first_legal(env))
    before = env.render()
    assert np.array_equal(before, env.render())  # the same state draws the same picture
    env.step(first_legal(env))
    after = env.render()
    assert after.shape == before.shape and not np.array_equal(before, after)
    changed = np.argwhere((before != after).any(axis=2))
    assert len(changed) > 100  # the card left the hand and lies in the trick


def test_the_acting_view_hides_the_hands_the_acting_player_may_not_see():
    frames = {}
    for view in ("all", "acting"):
        env = wizard_env.env(num_players=3, rounds=[5], render_mode="rgb_array", render_view=view)
        env.reset(seed=2)
        frames[view] = env.render()
    assert not np.array_equal(frames["all"], frames["acting"])


def test_render_before_reset_is_a_frame_of_the_same_size():
    env = wizard_env.env(render_mode="rgb_array")
    assert env.unwrapped.render().shape == (HEIGHT, WIDTH, 3)


def test_without_pillow_the_render_mode_names_the_render_extra(monkeypatch):
    uninstalled(monkeypatch, "PIL")
    with pytest.raises(MissingExtra, match=r"needs pillow, from the render extra: pip install -c constraints.txt -e '\.\[render\]'"):
        wizard_env.env(render_mode="rgb_array")


def test_the_single_agent_env_draws_frames_for_gymnasium_wrappers():
    import gymnasium

    env = gymnasium.make(wizard_env.GYMNASIUM_ID, num_players=3, rounds=2, render_mode="rgb_array")
    env.reset(seed=4)
    first = env.render()
    assert first.shape == (HEIGHT, WIDTH, 3) and first.dtype == np.uint8
    env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
    assert not np.array_equal(first, env.render())
    assert env.metadata["render_fps"] > 0 and "rgb_array" in env.metadata["render_modes"]
