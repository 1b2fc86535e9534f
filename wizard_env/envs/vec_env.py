"""Many games of Wizard, each from one learner's seat, as one stable-baselines3 ``VecEnv`` on ``WizardBatch``.

Usage::

    from sb3_contrib import MaskablePPO
    from .vec_env import WizardVecEnv

    env = WizardVecEnv(num_envs=256, seed=0, num_players=4, opponents="rule")
    model = MaskablePPO("MlpPolicy", env, n_steps=64)
    model.learn(100_000)
    env.set_opponent_pool([model_agent, "rule"], weights=[0.8, 0.2])  # self-play snapshots

Game i of the batch is "env" i. In each game the learner holds one seat; the other seats are
played by agents drawn from a pool. A step applies the learner's action in every game, then the
opponents' moves until every game is at the learner's turn again. Opponents decide in batches: at
each move, every pool agent makes one ``act_batch`` call for all the games where a seat it plays
is to move, and the engine steps those games together. This is the same game as
``wizard_env.envs.single_agent.WizardSingleAgentEnv`` (same observations, actions, rewards, episodes),
many times faster.

Arguments
---------
``num_envs``: number of games played side by side.
``seed``: seeds the VecEnv's Generator (None: fresh entropy); see Seeds.
``num_players``, ``rounds``, ``bidding``, ``bid_total_rule``, ``foresight``: the rules, exactly as
for ``wizard_env.env``.
``setting``: instead, a named benchmark setting such as ``"wizard-3p-5r"`` (``wizard_env.envs.settings``): its rules,
and its opponents as the pool (``Setting.opponent_spec``: its one agent spec, which every opponent seat draws). Rule
options, ``opponents`` or ``opponent_weights`` beside it are a ValueError, as for ``WizardSingleAgentEnv``.
``opponents``: the pool: one agent spec (``"rule"``, ``"random"``, ``"name:arg"``) or ``Agent``, or
a list of them. Unlike ``WizardSingleAgentEnv``, a list is a pool to draw from, not one per seat.
Opponents play from observations, so a search agent (``pimc``) is refused.
``opponent_weights``: how often each pool member is drawn (default: equally often).
``learner_seat``: a fixed seat for the learner; by default each game draws it at random.
``reward_scale``: multiplies every reward (default 1.0).
``learn``: the phases the learner decides, ``"both"`` (default), ``"bid"`` (trump and bids) or
``"play"`` (``wizard_env.agents.ppo_agent.LEARNED_PHASES``). Its own decisions in the other phases are made by
a delegate RuleAgent, and a step waits only for learner decisions in the learned phases.
``episode``: ``"game"`` (default) or ``"round"``; see Rounds as episodes.
A bad argument raises ValueError naming the problem.

Observations, actions, masks
----------------------------
``Box`` of ``OBS_SIZE`` float32 (the learner's own view, layout of ``wizard_env.engine.observation``) and
``Discrete(NUM_ACTIONS)``. ``action_masks()`` gives bool [num_envs, NUM_ACTIONS], the learner's
legal actions; sb3-contrib's ``get_action_masks`` and ``is_masking_supported`` reach it through
``env_method("action_masks")`` and ``has_attr``, also through VecEnv wrappers. An illegal learner
action raises ``IllegalActionError`` naming the game and its legal actions, and changes no game.

Rewards, episodes, infos
------------------------
A step's reward in game i is the learner's score of every round that ended during the step (its
own move and the opponents' replies), times ``reward_scale``. An episode is one game, so its
undiscounted return is the learner's final total times ``reward_scale``; never truncated. When a
game ends, ``dones[i]`` is True, the returned observation is the learner's first decision of the
next game in that slot, and ``infos[i]`` holds ``terminal_observation`` (the learner's view of the
finished game, as ``WizardSingleAgentEnv`` gives on its last step), ``final_totals`` (by seat),
``learner_seat``, ``game_seed`` and ``episode`` = {"r": return, "l": learner steps}, which SB3 logs
as ``rollout/ep_rew_mean`` without a ``VecMonitor`` (wrapping in one also works). Other infos are
empty; ``reset_infos`` and ``get_attr`` of ``"learner_seat"``, ``"game_seed"`` and
``"seat_agents"`` (the Agent in each seat, None for the learner) describe the current games.

Rounds as episodes
------------------
A round's score depends only on that round's decisions, so with ``episode="round"`` ``dones[i]`` is
also True at every round end: the game goes on, and the value to learn is the rest of one round's
score, with far less variance. At a round end that does not end the game, ``infos[i]`` holds only
``terminal_observation``: the learner's last decision of that round (the observation its final
action of the round was chosen on; the engine has already dealt the next round). At a game end the
infos are as above, except ``episode`` = {"r": the learner's final total, unscaled, "l": learner
steps in the whole game}, so SB3 logs game totals as ``rollout/ep_rew_mean``.

Opponent pool
-------------
At every game start, each opponent seat draws a pool member by ``opponent_weights``.
``set_opponent_pool(agents, weights)`` swaps the pool; games already running keep their players,
so the new pool takes effect at each game's next start. The pool and the opponents' moves are
``wizard_env.envs.opponent_pool.OpponentPool``, which this class inherits.

Seeds
-----
Every game start draws its game seed, the learner's seat and its opponents from the Generator
(the seat is drawn even when fixed, so fixing it leaves the other draws alone). Agents built from
specs get seeds drawn from it when the pool is set or the Generator is seeded, and then the
delegate (only when ``learn`` is not ``"both"``); ``Agent`` objects are used as they are.
``reset()`` starts new games in every slot; SB3's ``seed(s)`` (which
MaskablePPO's ``seed`` calls) reseeds the Generator with ``s`` at the next ``reset()``, so
``WizardVecEnv(seed=s).reset()`` and ``env.seed(s); env.reset()`` play the same games. A seed is an
int from 0 to 2**63 - 1; ``seed()`` refuses another at once, and a failed ``seed()`` or
``set_opponent_pool()`` leaves the VecEnv as it was.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvStepReturn

from wizard_env.agents import Agent, make_agent
from wizard_env.agents.ppo_agent import LEARNED_PHASES

from wizard_env.engine.actions import NUM_ACTIONS, IllegalActionError, Phase
from wizard_env.engine.batch import MAX_GAME_SEED, WizardBatch
from wizard_env.util.checks import SEED_LIMIT, check_seed
from wizard_env.util.checks import GAME_BYTES, check_memory
from wizard_env.engine.observation import OBS_SIZE, observation_bounds
from .opponent_pool import LEARNER, OpponentPool, check_pool
from .settings import env_setting
from .single_agent import Opponent, _check_scale, _check_seat, build_opponents

#: ``env_method`` names answered per game, and those that act on the whole VecEnv.
PER_GAME_METHODS = ("action_masks",)
WHOLE_METHODS = ("set_opponent_pool",)
#: ``get_attr`` names answered per game (``seat_agents``: the Agent in each seat, None for the learner).
PER_GAME_ATTRIBUTES = ("learner_seat", "game_seed", "seat_agents")
#: What one learner episode is: a whole game, or each round of it.
EPISODES = ("game", "round")


def env_indices(env: VecEnv, indices: VecEnvIndices) -> range | list[int]:
    """The game indices a VecEnv call names (all for None); ValueError for one out of range."""
    if indices is None:
        return range(env.num_envs)
    games = list(env._get_indices(indices))
    bad = [g for g in games if isinstance(g, bool) or not isinstance(g, (int, np.integer)) or not 0 <= g < env.num_envs]
    if bad:
        raise ValueError(f"env indices must be in 0..{env.num_envs - 1}, got {bad[0]!r}")
    return [int(g) for g in games]


def require_all(env: VecEnv, indices: VecEnvIndices, what: str) -> None:
    """ValueError unless ``indices`` names every game of ``env`` (``what`` applies to all at once)."""
    if sorted(env_indices(env, indices)) != list(range(env.num_envs)):
        raise ValueError(f"{what} applies to every game at once: pass indices=None")


class WizardVecEnv(OpponentPool, VecEnv):
    """``num_envs`` games, one learner seat each, opponents from a pool (see the module docstring)."""

    observation_space: spaces.Box
    rng: np.random.Generator  # set by seed(), which __init__ calls

    def __init__(
        self,
        num_envs: int,
        seed: int | None = None,
        num_players: int | None = None,
        rounds: str | int | Sequence[int] | None = None,
        bidding: str | None = None,
        bid_total_rule: bool | None = None,
        foresight: bool | None = None,
        opponents: Opponent | Sequence[Opponent] | None = None,
        opponent_weights: Sequence[float] | None = None,
        learner_seat: int | None = None,
        reward_scale: float = 1.0,
        learn: str = "both",
        episode: str = "game",
        setting: str | None = None,
    ):
        if isinstance(num_envs, (bool, np.bool_)) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, not {num_envs!r}")
        check_memory("num_envs", int(num_envs), GAME_BYTES)
        if seed is not None:
            check_seed(seed)
        rule_options = dict(num_players=num_players, rounds=rounds, bidding=bidding, bid_total_rule=bid_total_rule,
                            foresight=foresight)  # None: Rules.make's default
        self.rules, fixed = env_setting(setting, rule_options, {"opponents": opponents, "opponent_weights": opponent_weights})
        if fixed is not None:
            opponents = fixed.opponent_spec()
        self.fixed_seat = _check_seat(learner_seat, self.rules.num_players)
        self.reward_scale = _check_scale(reward_scale)
        if not isinstance(learn, str) or learn not in LEARNED_PHASES:
            raise ValueError(f"learn must be one of {', '.join(LEARNED_PHASES)}, not {learn!r}")
        if not isinstance(episode, str) or episode not in EPISODES:
            raise ValueError(f"episode must be one of {', '.join(EPISODES)}, not {episode!r}")
        self.learn, self.episode = learn, episode
        self.learned = np.zeros(len(Phase), dtype=bool)  # by phase: does the learner decide it
        self.learned[list(LEARNED_PHASES[learn])] = True
        self.delegate: Agent | None = None  # the learner's decisions in the other phases
        self.render_mode = None
        self._pool_entries, self._pool_p = check_pool("rule" if opponents is None else opponents, opponent_weights)
        self.batch: WizardBatch | None = None
        self._actions: np.ndarray | None = None
        b = int(num_envs)
        self._seat = np.zeros(b, dtype=np.int8)  # learner's seat per game
        self._table = np.full((b, self.rules.num_players), LEARNER, dtype=np.int64)  # [game, seat] -> agent
        self._agents: list[Agent] = []  # agents that play a seat now or are in the pool
        self._returns = np.zeros(b, dtype=np.float64)
        self._lengths = np.zeros(b, dtype=np.int64)
        self._buffer = np.empty((b, OBS_SIZE), dtype=np.float32)  # the opponents' observations
        self._last_obs: np.ndarray | None = None  # the learner's views the last step returned
        low, high = observation_bounds(self.rules)
        super().__init__(b, spaces.Box(low, high, dtype=np.float32), spaces.Discrete(NUM_ACTIONS))
        self._seed(seed)

    # -- the VecEnv interface --------------------------------------------------------------------

    def reset(self) -> np.ndarray:
        """Start a new game in every slot and play up to each learner's first decision."""
        if any(self._options):
            options = next(o for o in self._options if o)
            self._reset_options()
            raise ValueError(f"unknown reset options {sorted(options)}: this VecEnv takes none")
        self.batch, self._actions = None, None
        seeds = [s for s in self._seeds if s is not None]
        if seeds:
            self._seed(seeds[0])
        self._reset_seeds()
        self._reset_options()
        self._start_games(np.arange(self.num_envs))
        self._play_opponents_until_learner()
        batch = self._live_batch()
        self.reset_infos = [{"learner_seat": int(s), "game_seed": int(g)} for s, g in zip(self._seat, batch.game_seed)]
        self._last_obs = batch.observe(observers=self._seat)
        return self._last_obs

    def step_async(self, actions: np.ndarray) -> None:
        """Keep the learner's actions (one per game) for ``step_wait``."""
        self._require_batch()
        actions = np.asarray(actions)
        if actions.shape == (self.num_envs, 1):
            actions = actions[:, 0]
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        """Apply the learner's actions, then the others' until every game waits for a learned decision."""
        batch = self._require_batch()
        if self._actions is None:
            raise RuntimeError("step_wait() needs a step_async(actions) first")
        actions, self._actions = self._actions, None
        try:
            batch.step(actions)  # every game is at a learned decision of the learner
        except IllegalActionError as error:
            raise IllegalActionError(f"learner's action: {error}") from None
        self._lengths += 1
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        dones = np.zeros(self.num_envs, dtype=bool)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        self._collect(rewards, dones, infos)
        self._play_opponents_until_learner(rewards, dones, infos)
        self._last_obs = batch.observe(observers=self._seat)
        return self._last_obs, (rewards * self.reward_scale).astype(np.float32), dones, infos

    def close(self) -> None:
        """Drop the games (there is nothing else to release); ``reset()`` starts new ones."""
        self.batch = None
        self._actions = None

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions, bool [num_envs, NUM_ACTIONS]."""
        return self._require_batch().legal_masks() != 0

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """Per game: ``learner_seat``, ``game_seed``, ``seat_agents``; another public attribute of this VecEnv, repeated."""
        games = self._indices(indices)
        if attr_name in PER_GAME_ATTRIBUTES:
            batch = self._require_batch()
            if attr_name == "seat_agents":
                return [[None if a == LEARNER else self._agents[a] for a in self._table[g]] for g in games]
            values = self._seat if attr_name == "learner_seat" else batch.game_seed
            return [int(values[g]) for g in games]
        if attr_name.startswith("_") or not hasattr(self, attr_name):
            raise AttributeError(f"WizardVecEnv has no attribute {attr_name!r} (per game: {', '.join(PER_GAME_ATTRIBUTES)})")
        return [getattr(self, attr_name)] * len(games)

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Only ``reward_scale`` can be set, for every game at once; use ``set_opponent_pool`` for opponents."""
        if attr_name != "reward_scale":
            raise AttributeError(f"WizardVecEnv cannot set {attr_name!r}: only reward_scale (opponents: set_opponent_pool)")
        self._require_all(indices, attr_name)
        self.reward_scale = _check_scale(value)

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None, **method_kwargs) -> list[Any]:
        """``action_masks`` per game (one row each); ``set_opponent_pool`` once for every game."""
        games = self._indices(indices)
        if method_name in PER_GAME_METHODS:
            rows = getattr(self, method_name)(*method_args, **method_kwargs)
            return list(rows) if indices is None else [rows[g] for g in games]
        if method_name in WHOLE_METHODS:
            self._require_all(indices, method_name)
            result = getattr(self, method_name)(*method_args, **method_kwargs)
            return [result] * len(games)
        raise AttributeError(
            f"WizardVecEnv has no env method {method_name!r}: per game {PER_GAME_METHODS}, for all games {WHOLE_METHODS}"
        )

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        """False for every game: the games are slots of one engine, not wrapped gym.Envs."""
        return [False] * len(self._indices(indices))

    # -- seeds -----------------------------------------------------------------------------------

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Reseed the Generator with ``seed`` at the next ``reset()`` (ValueError now, nothing changed, if it is bad)."""
        if seed is not None:
            check_seed(seed)
        return super().seed(seed)

    # -- inside ----------------------------------------------------------------------------------

    def _seed(self, seed: int | None) -> None:
        """Seed the Generator and rebuild the spec-made agents from it."""
        self.rng = np.random.default_rng(seed)
        self._use_pool(build_opponents(self._pool_entries, self.rng))
        if self.learn != "both":
            self.delegate = make_agent("rule", seed=int(self.rng.integers(SEED_LIMIT)))

    def _start_games(self, games: np.ndarray) -> None:
        """New games in these slots: seeds, learner seats and opponents drawn from the Generator."""
        k, n = len(games), self.rules.num_players
        seeds = self.rng.integers(MAX_GAME_SEED, size=k, dtype=np.int64)
        seats = self.rng.integers(n, size=k)
        if self.fixed_seat is not None:
            seats[:] = self.fixed_seat
        draws = self.rng.choice(len(self._pool_ids), size=(k, n), p=self._pool_p)
        self._seat[games] = seats
        self._table[games] = self._pool_ids[draws]
        self._table[games, seats] = LEARNER
        self._returns[games] = 0
        self._lengths[games] = 0
        if self.batch is None:
            self.batch = WizardBatch(self.rules, seeds=seeds.tolist(), autoreset=False)
        else:  # restarted here rather than by autoreset, so the finished game could be observed first
            self.batch.new_games(games, seeds)

    def _play_opponents_until_learner(self, rewards: np.ndarray | None = None, dones: np.ndarray | None = None,
                                      infos: list[dict] | None = None) -> None:
        """Play opponents' and delegated moves, one batched move at a time, until every game waits for the learner."""
        batch = self._live_batch()
        while (waiting := np.flatnonzero((batch.current != self._seat) | ~self.learned[batch.phase])).size:
            self._play_opponents(waiting)
            if rewards is not None and dones is not None and infos is not None:
                self._collect(rewards, dones, infos)

    def _collect(self, rewards: np.ndarray, dones: np.ndarray, infos: list[dict]) -> None:
        """Add the learner's scores of the rounds that just ended; close finished episodes and start new games."""
        batch = self._live_batch()
        if not batch.round_over.any():
            return
        ended = np.flatnonzero(batch.round_over)
        scores = batch.round_scores[ended, self._seat[ended]]
        rewards[ended] += scores
        self._returns[ended] += scores * self.reward_scale
        if self.episode == "round":
            dones[ended] = True
            last = self._last_obs
            assert last is not None  # a round can end only after reset() returned the first views
            for g in ended:
                infos[g] = {"terminal_observation": last[g].copy()}
        if not batch.game_over.any():
            return
        over = np.flatnonzero(batch.game_over)
        terminal = batch.observe(over, observers=self._seat[over])
        rounds = self.episode == "round"
        for row, g in enumerate(over):
            dones[g] = True
            r = batch.final_totals[g, self._seat[g]] if rounds else self._returns[g]
            infos[g] = {
                "terminal_observation": terminal[row],
                "final_totals": batch.final_totals[g].tolist(),
                "learner_seat": int(self._seat[g]),
                "game_seed": int(batch.final_seed[g]),
                "episode": {"r": float(r), "l": int(self._lengths[g])},
            }
        self._start_games(over)

    def _require_batch(self) -> WizardBatch:
        if self.batch is None:
            raise RuntimeError("call reset() before step(), action_masks() or reading per-game attributes")
        return self.batch

    def _indices(self, indices: VecEnvIndices) -> range | list[int]:
        return env_indices(self, indices)

    def _require_all(self, indices: VecEnvIndices, what: str) -> None:
        require_all(self, indices, what)
