"""Wizard as a PettingZoo AEC environment: bids, trump choice and card play as action masks.

Usage::

    import wizard_env
    env = wizard_env.env(num_players=4, render_mode="ansi")
    env.reset(seed=7)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        action = None if terminated or truncated else int(np.flatnonzero(obs["action_mask"])[0])
        env.step(action)

Agents are ``player_0 .. player_{n-1}`` in seat order; the player to the left of seat i is seat i+1.

Arguments
---------
``num_players`` 3..6 (default 4); ``rounds`` ``"standard"`` (1 .. 60/n cards, the default), ``"amigo"``
(tournament schedule), an int k (rounds 1..k) or an explicit list of hand sizes; ``bidding`` ``"open"`` (the
default), ``"hidden"`` (bids revealed together when bidding ends) or ``"secret"`` (others' bids revealed when the
round ends); ``bid_total_rule`` (plus/minus 1: the dealer may not make the bids add up to the tricks; open bidding
only; default False); ``foresight`` (in one-card rounds you see the others' cards, not your own; default False);
``setting`` a named benchmark setting such as ``"wizard-4p-5r"`` (``wizard_env.envs.settings``), whose rules replace
those five options: any of them given (not None) beside it is a ValueError, even at the setting's value; ``reward``
``"score"`` or ``"relative"``; ``illegal_action`` ``"raise"`` or ``"terminate"`` (see Illegal actions);
``render_mode`` None, ``"ansi"`` (the table as text), ``"human"`` (printed) or ``"rgb_array"`` (the table as
an image, a ``(584, 854, 3)`` uint8 array for ``RecordVideo`` and notebooks; needs Pillow, from the render
extra); ``render_view`` ``"all"`` (every hand) or ``"acting"`` (only what the acting player sees). An
impossible configuration raises ValueError.

The same env in the PettingZoo classic style: ``from wizard_env import wizard_v1; env = wizard_v1.env()``.

Actions
-------
One ``Discrete(79)`` space for every player count and variant:

====================  ==============================================================
action                meaning
====================  ==============================================================
0 .. 20               bid that many tricks (``BID_OFFSET = 0``)
21 .. 72              play a suited card: ``21 + suit * 13 + rank``, suits c d h s,
                      ranks 2 3 4 5 6 7 8 9 T J Q K A (``CARD_OFFSET = 21``)
73                    play a Wizard (the copies are interchangeable)
74                    play a Jester
75 .. 78              the dealer names trump after a turned Wizard: c, d, h, s
                      (``TRUMP_OFFSET = 75``)
====================  ==============================================================

``observation["action_mask"]`` (int8, length 79) marks the legal actions of the acting agent and is
all zeros for everyone else, and for everyone once the game is over.

Illegal actions
---------------
With ``illegal_action="raise"`` (the default) an illegal, malformed or out-of-range action raises
``IllegalActionError`` (a ValueError) naming the agent, the action and the legal actions, and leaves
the game unchanged. With ``illegal_action="terminate"`` (PettingZoo classic's convention, for env
checkers and tooling that steps ``action_space.sample()``) such an action ends the game at once: the
offender's reward for that step is ``illegal_action_penalty(rules)``, every other agent's is 0, every
agent is terminated, and the offender's ``info["illegal_action"]`` is True. The penalty is -20
points per round plus -20 per card dealt to a player over the game (-2700 for four players and the
standard 15 rounds). Why: in a round of h cards a player scores at least -10h and each other player at
most 20 + 10h, so no round pays less than -(20 + 20h) in either reward mode; the penalty is that bound
summed over every round, so an illegal action never pays more than playing the game out, in any state.

Observation
-----------
``observation["observation"]`` is a float32 vector of length 1544 for every player count and variant.
It is seat-relative (slot 0 = the observer, slot 1 = their left neighbour, ...), padded to six slots,
and holds only what the player may know. Each field holds ``raw value * scale``;
``wizard_env.decode(vector)`` returns the raw integers by field name:

    =========  ===========  =====  =====  ===================================================================================
    index      field        shape  scale  meaning
    =========  ===========  =====  =====  ===================================================================================
    0:4        num_players  4      1      one-hot number of players: 3, 4, 5, 6
    4:8        phase        4      1      one-hot phase: trump choice, bid, play, game over
    8:9        round        1      0.05   round number, from 1
    9:10       num_rounds   1      0.05   rounds in this game
    10:11      hand_size    1      0.05   cards dealt to each player this round
    11:17      dealer       6      1      one-hot slot of the dealer
    17:71      hand         54     1      own cards, count per card type (zeros in a foresight round)
    71:125     trump_card   54     1      one-hot turned-up card (zeros when none)
    125:130    trump        5      1      one-hot trump: c, d, h, s, no trump (zeros while the dealer chooses)
    130:136    bid_known    6      1      1 where the slot's bid is made and visible under the bidding variant
    136:142    bids         6      0.05   bid by slot (0 where not known)
    142:148    tricks_won   6      0.05   tricks taken this round by slot
    148:154    leader       6      1      one-hot slot that leads (led) the current trick
    154:478    trick        6x54   1      card played to the current trick, one-hot by slot
    478:802    played       6x54   1      cards played earlier this round and now, counts by slot
    802:1126   foresight    6x54   1      foresight rounds: other players' cards by slot
    1126:1132  scores       6      0.01   total score of the rounds completed, by slot
    1132:1156  voids        6x4    1      1 where the slot showed out of the suit this round (followed it with another suit)
    1156:1480  last_trick   6x54   1      last completed trick of this round: card by slot, one-hot
    1480:1486  last_winner  6      1      one-hot slot that won the last completed trick (zeros before the first)
    1486:1490  lead_suit    4      1      one-hot suit to follow in the current trick (zeros if none, as after a Wizard lead)
    1490:1544  unseen       54     1      unseen cards by type: in no hand the observer sees, not played, not turned up
    =========  ===========  =====  =====  ===================================================================================

Rewards
-------
At the end of every round each agent receives its round score in points (``reward="score"``:
bid met, 20 + 10 per trick; missed, -10 per trick off), or its score minus the mean of the other
players' scores (``reward="relative"``, zero-sum). Over a game the rewards add up to the final totals
(or to the relative totals). Every other step gives 0. The game ends after the last round: all agents
are terminated; none is ever truncated.

A round's rewards are paid on the step of whoever plays its last card, to every agent; ``last()``
returns each agent's reward since its last turn, so a learner that reads ``last()`` at each of its
turns (as ``agent_iter`` loops and one-step learners do) receives every round score of its seat,
at its first turn after the round (or at its final ``last()`` after the game).

Infos
-----
From ``reset()`` on, every agent's info holds the same keys with the same types:

====================  ===========  ==============================================================
key                   type         meaning
====================  ===========  ==============================================================
``seed``              int          the game seed (``reset(seed=...)`` replays the game)
``round_over``        bool         True only after the step that ended a round
``round_scores``      list of int  that round's scores by seat; zeros after every other step,
                                   the ``step(None)`` of agents done after the game included
``illegal_action``    bool         True only for the agent whose illegal action ended the game
                                   (``illegal_action="terminate"``)
====================  ===========  ==============================================================

So summing ``round_scores`` over the steps of a game gives the final totals by seat.

Variants and deals
------------------
A round's deal depends only on the game seed and the round number, so the same seed deals the same
cards whatever is played. ``reset(seed=s)`` plays game seed ``s`` (an int from 0 to 2**63 - 1, as
every seed of this package; anything else is a ValueError and changes nothing); a ``reset()`` without
a seed draws the next game seed from a generator seeded by the last seed given.

Version history
---------------
* v1: the observation (``OBS_VERSION = 1``) adds what a player tracks for card play: each slot's
  known voids this round, the last completed trick and its winner, the suit to follow, and the
  count of unseen cards. The v0 fields keep their places at the front, so
  ``wizard_env.engine.observation.version_columns(0)`` turns a v1 vector into the v0 one; checkpoints
  record the version they were trained on. Later in v1, with observations, actions and rewards of
  legal play unchanged: infos hold the same keys from ``reset()`` on (``round_scores`` only after
  the step that ended the round, ``round_over``, ``illegal_action``), ``illegal_action="terminate"``,
  ``render_mode="rgb_array"`` and the named settings (``setting``).
* v0: initial release.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from wizard_env.util.checks import SEED_LIMIT, check_seed
from wizard_env.util.extras import require_extra
from wizard_env.engine.game import NUM_ACTIONS, IllegalActionError, WizardGame
from wizard_env.engine.observation import observation_bounds, observe
from wizard_env.render.text import render_for_mode
from wizard_env.engine.rules import Rules

from .settings import rules_for

REWARD_MODES = ("score", "relative")
RENDER_VIEWS = ("all", "acting")
ILLEGAL_ACTION_MODES = ("raise", "terminate")


def check_illegal_action_mode(mode: str) -> str:
    """``mode`` if it is one of ILLEGAL_ACTION_MODES, else ValueError naming the choices."""
    if not isinstance(mode, str) or mode not in ILLEGAL_ACTION_MODES:
        raise ValueError(f"unknown illegal_action {mode!r}: expected one of {ILLEGAL_ACTION_MODES}")
    return mode


def illegal_action_penalty(rules: Rules) -> float:
    """The offender's reward when an illegal action ends the game: below what any rest of the game can pay."""
    # Per round of h cards a player scores at least -10h, and each other player at most 20 + 10h: over the game, the
    # lowest total a player can end with minus the highest.
    lowest, highest = rules.total_range
    return float(lowest - highest)


class raw_env(AECEnv):
    """Wizard for 3-6 players as a PettingZoo AEC environment (see the module docstring)."""

    metadata: dict[str, Any] = {"name": "wizard_v1", "render_modes": ["human", "ansi", "rgb_array"], "is_parallelizable": False,
                                "render_fps": 2}

    def __init__(
        self,
        num_players: int | None = None,
        rounds: str | int | Sequence[int] | None = None,
        bidding: str | None = None,
        bid_total_rule: bool | None = None,
        foresight: bool | None = None,
        reward: str = "score",
        illegal_action: str = "raise",
        render_mode: str | None = None,
        render_view: str = "all",
        setting: str | None = None,
    ):
        super().__init__()
        self.rules = rules_for(setting, dict(num_players=num_players, rounds=rounds, bidding=bidding,
                                             bid_total_rule=bid_total_rule, foresight=foresight))
        if reward not in REWARD_MODES:
            raise ValueError(f"unknown reward {reward!r}: expected one of {REWARD_MODES}")
        check_illegal_action_mode(illegal_action)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"unknown render_mode {render_mode!r}: expected None or one of {self.metadata['render_modes']}")
        if render_view not in RENDER_VIEWS:
            raise ValueError(f"unknown render_view {render_view!r}: expected one of {RENDER_VIEWS}")
        if render_mode == "rgb_array":
            require_extra("render", {"PIL": "pillow"}, "render_mode='rgb_array'")
        self.reward_mode = reward
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        self.render_view = render_view
        self.possible_agents = [f"player_{seat}" for seat in range(self.rules.num_players)]
        low, high = observation_bounds(self.rules)
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(low, high, dtype=np.float32),
                    "action_mask": spaces.Box(0, 1, shape=(NUM_ACTIONS,), dtype=np.int8),
                }
            )
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(NUM_ACTIONS) for agent in self.possible_agents}
        self._seed_rng: np.random.Generator | None = None
        self.game: WizardGame | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of ``agent`` (the same for all)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """The action space of ``agent`` (the same for all)."""
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new game: game seed ``seed``, or the next one drawn from the last seed given."""
        if seed is not None:
            game_seed = check_seed(seed)
            self._seed_rng = np.random.default_rng(game_seed)
        else:
            if self._seed_rng is None:
                self._seed_rng = np.random.default_rng()
            game_seed = int(self._seed_rng.integers(SEED_LIMIT))
        self.game = WizardGame(self.rules, game_seed)
        self.agents = self.possible_agents[:]
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self._set_infos(None, None)
        self.agent_selection = self.possible_agents[self.game.current]
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """What ``agent`` knows now, and its legal actions if it is the one to act."""
        game = self._require_game("observe()")
        if agent not in self.possible_agents:
            raise ValueError(f"unknown agent {agent!r}: the agents are {', '.join(self.possible_agents)}")
        seat = self.possible_agents.index(agent)
        acting = agent == self.agent_selection and not self.terminations.get(agent, True)
        mask = game.legal_mask() if acting else np.zeros(NUM_ACTIONS, dtype=np.int8)
        return {"observation": observe(game, seat), "action_mask": mask}

    def last(self, observe: bool = True) -> tuple:
        """The selected agent's observation, reward, termination, truncation and info (RuntimeError once all are done)."""
        self._require_game("last()")
        if not self.agents:
            raise RuntimeError("the game is over and every agent is done: call reset() to start a new game")
        return super().last(observe)

    def step(self, action: int | None) -> None:
        """Apply the selected agent's action; an illegal one raises IllegalActionError (state unchanged)
        or, with ``illegal_action="terminate"``, ends the game with a penalty to the offender."""
        game = self._require_game("step()")
        if not self.agents:
            raise RuntimeError("the game is over and every agent is done: call reset() to start a new game")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            self._set_infos(None, None)  # the step that ended the round or the game is past
            return
        try:
            scores = game.step(action, actor=agent)  # type: ignore[arg-type]  # step() rejects None as illegal
        except IllegalActionError:
            if self.illegal_action == "raise":
                raise
            self._end_at_illegal_action(agent)
            return
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        if scores is not None:
            for seat, a in enumerate(self.possible_agents):
                self.rewards[a] = float(self._reward(scores, seat))
        self._set_infos(scores, None)
        if game.is_over:
            self.terminations = {a: True for a in self.agents}
        self.agent_selection = self.possible_agents[game.current]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _end_at_illegal_action(self, offender: str) -> None:
        """End the game now: the penalty to ``offender``, 0 to the others, every agent terminated."""
        self._cumulative_rewards[offender] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        self.rewards[offender] = illegal_action_penalty(self.rules)
        self._set_infos(None, offender)
        self.terminations = {a: True for a in self.agents}
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _set_infos(self, round_scores: np.ndarray | None, offender: str | None) -> None:
        """Every agent's info after a step: the same keys and types whatever happened (module docstring)."""
        scores = [0] * self.rules.num_players if round_scores is None else round_scores.tolist()
        self.infos = {
            a: {"seed": self._require_game("step()").seed, "round_over": round_scores is not None, "round_scores": list(scores),
                "illegal_action": a == offender}
            for a in self.agents
        }

    def _require_game(self, call: str) -> WizardGame:
        if self.game is None:
            raise RuntimeError(f"call reset() before {call}")
        return self.game

    def _reward(self, scores: np.ndarray, seat: int) -> float:
        if self.reward_mode == "score":
            return float(scores[seat])
        others = np.delete(scores, seat)
        return float(scores[seat] - others.mean())

    def render(self) -> str | np.ndarray | None:
        """The table as text (``"ansi"``), printed (``"human"``) or as an RGB image array (``"rgb_array"``);
        warns and returns None without a mode."""
        viewer = None if self.render_view == "all" or self.game is None else self.game.current
        if self.render_mode == "rgb_array":
            from wizard_env.render.image import render_rgb

            return render_rgb(self.game, viewer, self.possible_agents)
        return render_for_mode(self.render_mode, self.game, viewer, self.possible_agents)

    def close(self) -> None:
        """Nothing to release."""


class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order-enforcing wrapper, with ``last()`` and ``step()`` handed to the env itself once reset.

    The base class runs ``AECEnv.last`` on the wrapper, so its six attribute reads each pass through two
    levels of ``__getattr__``: a quarter of an AEC decision. Before reset, and for a step after the game
    ended, the base class's checks and messages apply unchanged.
    """

    def last(self, observe: bool = True) -> tuple:
        """The env's ``last()`` (before reset: the base class's error)."""
        if not self._has_reset:
            return super().last(observe)
        return self.env.last(observe)

    def step(self, action: Any) -> None:
        """The env's ``step()`` (before reset, or once every agent is done: the base class's error or warning)."""
        if not self._has_reset or not self.env.agents:
            super().step(action)
            return
        self._has_updated = True
        self.env.step(action)

    def __str__(self) -> str:
        return str(self.env)  # as the base class prints itself


def env(**kwargs) -> AECEnv:
    """The Wizard AEC environment wrapped in PettingZoo's order-enforcing wrapper (``OrderEnforcing``)."""
    return OrderEnforcing(raw_env(**kwargs))


