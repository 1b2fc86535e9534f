"""Wizard from one learner's seat, as a Gymnasium environment for stable-baselines3 and sb3-contrib.

Usage::

    from sb3_contrib import MaskablePPO
    from .single_agent import WizardSingleAgentEnv

    env = WizardSingleAgentEnv(num_players=4, opponents="rule")
    model = MaskablePPO("MlpPolicy", env, n_steps=512)
    model.learn(10_000)

Each game the learner holds one seat; agents from ``agents`` play the others. ``reset`` plays the
opponents' moves until it is the learner's turn, and ``step(action)`` applies the learner's action,
then the opponents' moves until the learner acts again or the game ends.

Arguments
---------
``num_players``, ``rounds``, ``bidding``, ``bid_total_rule``, ``foresight``: the rules, exactly as
for ``wizard_env.env`` (see ``wizard_env.envs.aec``).
``setting``: instead, a named benchmark setting such as ``"wizard-3p-5r"`` (``wizard_env.envs.settings``), which
fixes the rules and the opponents; ``gymnasium.make("wizard_env/wizard-3p-5r-v1")`` gives it. Rule options,
``opponents`` or ``opponent_sampler`` beside it are a ValueError.
``opponents``: one agent spec (``"rule"``, ``"random"``, ``"name:arg"``) or ``Agent`` for every other
seat, or a list of them: one entry (for all) or one per other seat, the learner's left neighbour first.
Default ``"rule"``. Opponents play from observations, so a search agent (``pimc``) is refused.
``opponent_sampler``: instead of ``opponents``, a callable ``sampler(rng) -> list`` of specs or agents
(the same forms), called at every reset with the env's Generator, so a training loop can draw
opponents from a pool.
``learner_seat``: a fixed seat for the learner; by default each game draws it at random.
``reward_scale``: multiplies every reward (default 1.0).
``illegal_action``: ``"raise"`` (default) or ``"terminate"``, as for the AEC env; see below.
``render_mode``: None, ``"ansi"``, ``"human"`` or ``"rgb_array"`` (the whole table, every hand shown; ``"rgb_array"``
draws it as an image array for gymnasium's ``RecordVideo``, with Pillow from the render extra).
An impossible configuration raises ValueError naming the problem.

Observation and actions
-----------------------
``Box`` of ``OBS_SIZE`` float32 values: the learner's own view, in the layout of the AEC env
(``wizard_env.engine.observation``); ``Discrete(NUM_ACTIONS)`` actions with the AEC env's offsets.
``action_masks()`` returns the learner's legal actions as a bool array, as sb3-contrib's
``MaskablePPO`` expects (all False once the episode is over). With ``illegal_action="raise"`` (the
default) an illegal, malformed or out-of-range action raises the engine's ``IllegalActionError`` (a
ValueError) naming the legal actions, and leaves the game unchanged; this env never substitutes a
move, so train with masks. With ``illegal_action="terminate"`` such an action ends the episode at
once (terminated) with the AEC env's penalty, ``illegal_action_penalty(rules)`` times
``reward_scale``, which no rest of the game could pay less than; gymnasium's and stable-baselines3's
``check_env``, which step unmasked ``action_space.sample()``, pass on the env in this mode.

Rewards and episodes
--------------------
A step's reward is the sum of the learner's round scores for the rounds that ended during it (the
learner's action and the opponents' replies), times ``reward_scale``; other steps give 0. The
undiscounted return of a game is the learner's final total times ``reward_scale``. An episode is
one game: terminated after the last round (or at an illegal action in ``"terminate"`` mode, when the
return is the learner's total so far plus the penalty), never truncated. Every ``info``, from
``reset`` on, holds the same keys: ``learner_seat`` (int), ``game_seed`` (int), ``final_totals``
(list of int: every seat's total, by seat, on the episode's last step; zeros before) and
``illegal_action`` (bool: True only on the step that the learner's illegal action ended).

Seeds
-----
``reset(seed=s)`` (s an int from 0 to 2**63 - 1, as for the AEC env) seeds the env's Generator
(``self.np_random``); every game then draws from it its game seed, the learner's seat and the seeds
of the opponents built from specs, so the same seed gives the same games. A reset that fails (a bad
seed, a sampler or an opponent that raises) leaves the env and its Generator as they were. ``Agent`` objects passed in are used as they are, with their own generators;
for reproducible games pass specs, or a sampler that seeds its agents from the Generator it gets.
"""

from __future__ import annotations

from typing import Callable, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding

from wizard_env.agents import Agent, make_agent
from wizard_env.agents.registry import parse_spec, refuse_hidden, searches_games

from wizard_env.util.checks import SEED_LIMIT, check_seed
from .aec import check_illegal_action_mode, illegal_action_penalty
from wizard_env.util.extras import require_extra
from wizard_env.engine.game import NUM_ACTIONS, IllegalActionError, WizardGame
from wizard_env.engine.observation import observation_bounds, observe
from wizard_env.render.text import render_for_mode

from .settings import env_setting

#: An opponent as ``opponents`` takes it: an agent spec such as ``"rule"``, or an Agent.
Opponent = str | Agent
#: Called at each reset with the env's Generator; returns the opponents for that game.
OpponentSampler = Callable[[np.random.Generator], Sequence[Opponent] | Opponent]


def check_opponents(opponents: Opponent | Sequence[Opponent], num_players: int, source: str) -> list[Opponent]:
    """One opponent per other seat (left neighbour first) from one for all or a list; ValueError if bad."""
    others = num_players - 1
    entries = [opponents] if isinstance(opponents, (str, Agent)) else opponents
    if not isinstance(entries, Sequence):
        raise ValueError(f"{source} must be an agent spec, an Agent or a list of them, not {opponents!r}")
    if len(entries) not in (1, others):
        raise ValueError(
            f"{source}: {num_players} players need 1 opponent (for all seats) or {others} "
            f"(one per other seat), got {len(entries)}"
        )
    for i, entry in enumerate(entries):
        check_opponent(entry, f"{source}[{i}]")
    return list(entries) * others if len(entries) == 1 else list(entries)


def check_opponent(entry: object, where: str) -> None:
    """ValueError naming ``where`` unless ``entry`` is an agent spec or an Agent that plays from observations."""
    if isinstance(entry, str):
        parse_spec(entry)  # raises ValueError for an unknown agent name
    elif not isinstance(entry, Agent):
        raise ValueError(f"{where} must be an agent spec such as 'rule' or an Agent, not {entry!r}")
    refuse_hidden(entry, where)  # a learner must never play beside the true deal
    if searches_games(entry):
        shown = repr(entry) if isinstance(entry, str) else f"agent {entry.name!r}"
        raise ValueError(f"{where}: {shown} searches the game itself, and the opponents of an env play from "
                         "observations alone: it plays in wizard eval, wizard play and the web table")


def build_opponents(entries: Sequence[Opponent], rng: np.random.Generator) -> list[Agent]:
    """Agents for the entries: specs built with seeds drawn from ``rng``, Agents as given."""
    return [make_agent(e, seed=int(rng.integers(SEED_LIMIT))) if isinstance(e, str) else e for e in entries]


def _check_seat(seat: int | None, num_players: int) -> int | None:
    if seat is None:
        return None
    if isinstance(seat, (bool, np.bool_)) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < num_players:
        raise ValueError(f"learner_seat must be None or a seat 0..{num_players - 1}, not {seat!r}")
    return int(seat)


def _check_scale(scale: float) -> float:
    if isinstance(scale, (bool, np.bool_)) or not isinstance(scale, (int, float, np.number)):
        raise ValueError(f"reward_scale must be a positive number, not {scale!r}")
    if not (np.isfinite(scale) and scale > 0):
        raise ValueError(f"reward_scale must be a positive finite number, not {scale!r}")
    return float(scale)


class WizardSingleAgentEnv(gym.Env):
    """One learner against agents from ``agents``, one game per episode (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 2}

    def __init__(
        self,
        num_players: int | None = None,
        rounds: str | int | Sequence[int] | None = None,
        bidding: str | None = None,
        bid_total_rule: bool | None = None,
        foresight: bool | None = None,
        opponents: Opponent | Sequence[Opponent] | None = None,
        opponent_sampler: OpponentSampler | None = None,
        learner_seat: int | None = None,
        reward_scale: float = 1.0,
        illegal_action: str = "raise",
        render_mode: str | None = None,
        setting: str | None = None,
    ):
        super().__init__()
        rule_options = dict(num_players=num_players, rounds=rounds, bidding=bidding, bid_total_rule=bid_total_rule,
                            foresight=foresight)
        # the setting's rules and opponents, once every option it fixes is refused at once
        self.rules, fixed = env_setting(setting, rule_options, {"opponents": opponents, "opponent_sampler": opponent_sampler})
        if fixed is not None:
            opponents = list(fixed.opponents)
        n = self.rules.num_players
        if opponent_sampler is not None:
            if opponents is not None:
                raise ValueError("give opponents or opponent_sampler, not both")
            if not callable(opponent_sampler):
                raise ValueError(f"opponent_sampler must be callable as sampler(rng), not {opponent_sampler!r}")
            self._opponent_entries = None
        else:
            self._opponent_entries = check_opponents("rule" if opponents is None else opponents, n, "opponents")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"unknown render_mode {render_mode!r}: expected None or one of {self.metadata['render_modes']}")
        if render_mode == "rgb_array":
            require_extra("render", {"PIL": "pillow"}, "render_mode='rgb_array'")
        self.opponent_sampler = opponent_sampler
        self.fixed_seat = _check_seat(learner_seat, n)
        self.reward_scale = _check_scale(reward_scale)
        self.illegal_action = check_illegal_action_mode(illegal_action)
        self.render_mode = render_mode
        low, high = observation_bounds(self.rules)
        self.observation_space = spaces.Box(low, high, dtype=np.float32)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.game: WizardGame | None = None
        self.learner_seat: int | None = None
        self.opponents: dict[int, Agent] = {}
        self.ended_by_illegal_action = False

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Start the next game and play the opponents up to the learner's first decision."""
        if options:
            raise ValueError(f"unknown reset options {sorted(options)}: this env takes none")
        if seed is None:
            rng, rng_seed = self.np_random, self._np_random_seed
        else:
            rng, rng_seed = seeding.np_random(check_seed(seed))
        state = rng.bit_generator.state
        try:
            game, learner, opponents = self._new_game(rng)
        except BaseException:
            rng.bit_generator.state = state  # a failed reset leaves the env and its Generator as they were
            raise
        self._np_random, self._np_random_seed = rng, rng_seed
        self.game, self.learner_seat, self.opponents = game, learner, opponents
        self.ended_by_illegal_action = False
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._info()

    def _new_game(self, rng: np.random.Generator) -> tuple[WizardGame, int, dict[int, Agent]]:
        """A game, the learner's seat and the opponents by seat, drawn from ``rng``, played to the learner's first turn."""
        n = self.rules.num_players
        game_seed = int(rng.integers(SEED_LIMIT))
        seat = int(rng.integers(n))  # drawn even when fixed, so a fixed seat leaves the other draws alone
        learner = seat if self.fixed_seat is None else self.fixed_seat
        if self.opponent_sampler is None:
            entries = self._opponent_entries
            assert entries is not None  # set by __init__ whenever there is no sampler
        else:
            entries = check_opponents(self.opponent_sampler(rng), n, "opponent_sampler result")
        agents = build_opponents(entries, rng)
        opponents = {(learner + 1 + i) % n: agent for i, agent in enumerate(agents)}
        game = WizardGame(self.rules, game_seed)
        _play_opponents(game, opponents, learner)  # no round can end before the learner's first bid
        return game, learner, opponents

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Apply the learner's action, then the opponents'; an illegal one raises IllegalActionError (game
        unchanged) or, with ``illegal_action="terminate"``, ends the episode with the penalty."""
        game = self._require_game()
        seat = self._require_seat()
        actor = f"learner (seat {seat})"
        if self.ended_by_illegal_action or game.is_over:
            raise IllegalActionError(f"{actor}: action {action!r}: the game is over, no action is legal: call reset()")
        try:
            scores = game.step(action, actor=actor)
        except IllegalActionError:
            if self.illegal_action == "raise":
                raise
            self.ended_by_illegal_action = True
            penalty = illegal_action_penalty(self.rules) * self.reward_scale
            return self._observation(), penalty, True, False, self._info()
        points = 0 if scores is None else int(scores[seat])
        points += _play_opponents(game, self.opponents, seat)
        if self.render_mode == "human":
            self.render()
        return self._observation(), points * self.reward_scale, bool(game.is_over), False, self._info()

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as a bool array of NUM_ACTIONS (all False once the episode is over)."""
        game = self._require_game()
        if self.ended_by_illegal_action:
            return np.zeros(NUM_ACTIONS, dtype=bool)
        return game.legal_mask().astype(bool)

    def render(self) -> str | np.ndarray | None:
        """The table as text (``"ansi"``), printed (``"human"``) or an RGB image array (``"rgb_array"``);
        warns and returns None without a mode."""
        names = [f"player_{s}" + (" (learner)" if s == self.learner_seat else "") for s in range(self.rules.num_players)]
        if self.render_mode == "rgb_array":
            from wizard_env.render.image import render_rgb

            return render_rgb(self.game, None, names)
        return render_for_mode(self.render_mode, self.game, None, names)

    def _require_game(self) -> WizardGame:
        if self.game is None:
            raise RuntimeError("call reset() before step() or action_masks()")
        return self.game

    def _require_seat(self) -> int:
        if self.learner_seat is None:
            raise RuntimeError("call reset() before step() or action_masks()")
        return self.learner_seat

    def _observation(self) -> np.ndarray:
        return observe(self._require_game(), self._require_seat())

    def _info(self) -> dict:
        game = self._require_game()
        over = game.is_over or self.ended_by_illegal_action
        totals = game.totals.tolist() if over else [0] * self.rules.num_players
        return {"learner_seat": self.learner_seat, "game_seed": game.seed, "final_totals": totals,
                "illegal_action": self.ended_by_illegal_action}


def _play_opponents(game: WizardGame, opponents: dict[int, Agent], learner: int) -> int:
    """Play the opponents until the learner is to act or the game ends; the learner's points meanwhile."""
    points = 0
    while not game.is_over and game.current != learner:
        seat = game.current
        agent = opponents[seat]
        action = agent.act(observe(game, seat), game.legal_mask())
        scores = game.step(action, actor=f"opponent {agent.name} (seat {seat})")
        if scores is not None:
            points += int(scores[learner])
    return points
