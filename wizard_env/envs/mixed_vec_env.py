"""Games of several player counts side by side as one stable-baselines3 ``VecEnv``, for one network.

The observation has one length for every player count (it holds the count), so one policy can
learn 3-, 4-, 5- and 6-player Wizard from one rollout. ``MixedVecEnv`` joins ``WizardVecEnv``s,
one per player count, end to end: games ``0 .. k0-1`` are the first count's, the next ``k1`` the
second's, and so on; every array it returns is theirs, concatenated in that order.

    env = MixedVecEnv(num_envs=512, players=(3, 4, 5, 6), seed=0, learn="both", episode="round")

``num_envs`` is split as evenly as possible (the first counts get one more game where it does not
divide). Every other keyword argument goes to each ``WizardVecEnv``; each is seeded from its own
stream of ``seed``. ``set_opponent_pool`` sets the same pool in every part.
"""

from __future__ import annotations

import inspect
from typing import Any, Mapping, Sequence

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvStepReturn

from wizard_env.util.checks import check_seed
from wizard_env.engine.rules import MAX_PLAYERS, MIN_PLAYERS
from .vec_env import PER_GAME_ATTRIBUTES, PER_GAME_METHODS, WHOLE_METHODS, WizardVecEnv, env_indices, require_all


#: The keyword arguments every part takes: WizardVecEnv's, less those MixedVecEnv sets per part.
PART_OPTIONS = tuple(name for name in inspect.signature(WizardVecEnv).parameters if name not in ("num_envs", "seed", "num_players"))


def check_players(players: Sequence[int]) -> tuple[int, ...]:
    """Distinct player counts in 3..6 as a sorted tuple; ValueError otherwise."""
    need = f"players must be a list of distinct player counts in {MIN_PLAYERS}..{MAX_PLAYERS}, such as (3, 4), not {players!r}"
    if isinstance(players, (str, bytes, Mapping)):
        raise ValueError(need)
    try:
        counts = list(players)
    except TypeError:
        raise ValueError(need) from None
    if not counts or not all(
        not isinstance(p, (bool, np.bool_)) and isinstance(p, (int, np.integer)) and MIN_PLAYERS <= p <= MAX_PLAYERS
        for p in counts
    ) or len(set(counts)) != len(counts):
        raise ValueError(need)
    return tuple(sorted(int(p) for p in counts))


class MixedVecEnv(VecEnv):
    """``WizardVecEnv``s of several player counts as one VecEnv (see the module docstring)."""

    observation_space: spaces.Box

    def __init__(self, num_envs: int, players: Sequence[int] = (3, 4, 5, 6), seed: int | None = None, **kwargs: Any):
        counts = check_players(players)
        for key in kwargs:
            if key not in PART_OPTIONS:
                hint = " (the player counts are players=...)" if key == "num_players" else ""
                raise ValueError(f"MixedVecEnv takes no argument {key!r}{hint}: it takes num_envs, players, seed, "
                                 f"{', '.join(PART_OPTIONS)}")
        if isinstance(num_envs, (bool, np.bool_)) or not isinstance(num_envs, (int, np.integer)) or num_envs < len(counts):
            raise ValueError(f"num_envs must be an integer of at least one game per player count ({len(counts)}), not {num_envs!r}")
        if seed is not None:
            check_seed(seed)
        sizes = [num_envs // len(counts) + (i < num_envs % len(counts)) for i in range(len(counts))]
        seeds = self._part_seeds(seed, len(counts))
        self.parts = [WizardVecEnv(k, seed=s, num_players=n, **kwargs) for k, n, s in zip(sizes, counts, seeds)]
        self.players = counts
        self.bounds = np.cumsum([0] + sizes)  # part i holds games bounds[i] .. bounds[i+1]-1
        first = self.parts[0]
        self.render_mode = None
        # one Box that holds every part's observations: the player counts play different numbers of rounds
        space = spaces.Box(np.min([p.observation_space.low for p in self.parts], axis=0),
                           np.max([p.observation_space.high for p in self.parts], axis=0), dtype=np.float32)
        super().__init__(int(num_envs), space, first.action_space)

    @staticmethod
    def _part_seeds(seed: int | None, count: int) -> list[int | None]:
        if seed is None:
            return [None] * count
        return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(count)]

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Reseed every part from ``seed`` at the next ``reset()`` (ValueError now, nothing changed, if it is bad)."""
        if seed is not None:
            check_seed(seed)
        return super().seed(seed)

    def _split(self, values: np.ndarray) -> list[np.ndarray]:
        return [values[a:b] for a, b in zip(self.bounds[:-1], self.bounds[1:])]

    def reset(self) -> np.ndarray:
        """Reset every part; the learners' first observations, concatenated."""
        seeds = [s for s in self._seeds if s is not None]
        if seeds:
            for part, s in zip(self.parts, self._part_seeds(seeds[0], len(self.parts))):
                part.seed(s)
        self._reset_seeds()
        obs = np.concatenate([part.reset() for part in self.parts])
        self.reset_infos = [info for part in self.parts for info in part.reset_infos]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Hand each part its games' actions."""
        actions = np.asarray(actions)
        if actions.shape == (self.num_envs, 1):
            actions = actions[:, 0]
        if actions.shape != (self.num_envs,):
            raise ValueError(f"expected {self.num_envs} actions, got an array of shape {actions.shape}")
        for part, chunk in zip(self.parts, self._split(actions)):
            part.step_async(chunk)

    def step_wait(self) -> VecEnvStepReturn:
        """Step every part; observations, rewards, dones and infos in game order."""
        results = [part.step_wait() for part in self.parts]
        obs, rewards, dones = (np.concatenate([r[i] for r in results]) for i in range(3))
        return obs, rewards, dones, [info for r in results for info in r[3]]

    def close(self) -> None:
        """Close every part."""
        for part in self.parts:
            part.close()

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions, bool [num_envs, NUM_ACTIONS]."""
        return np.concatenate([part.action_masks() for part in self.parts])

    def set_opponent_pool(self, agents, weights=None) -> None:
        """The same opponent pool for every player count (from each game's next start)."""
        for part in self.parts:
            part.set_opponent_pool(agents, weights)

    def _per_game(self, read) -> list[Any]:
        return [value for part in self.parts for value in read(part)]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """Per game: ``learner_seat``, ``game_seed``, ``seat_agents``, ``num_players``; else this VecEnv's attribute."""
        games = list(env_indices(self, indices))
        if attr_name in PER_GAME_ATTRIBUTES:
            values = self._per_game(lambda part: part.get_attr(attr_name))
        elif attr_name == "num_players":
            values = self._per_game(lambda part: [part.rules.num_players] * part.num_envs)
        elif attr_name.startswith("_") or not hasattr(self, attr_name):
            raise AttributeError(f"MixedVecEnv has no attribute {attr_name!r} (per game: {', '.join(PER_GAME_ATTRIBUTES)}, num_players)")
        else:
            values = [getattr(self, attr_name)] * self.num_envs
        return [values[g] for g in games]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """As ``WizardVecEnv.set_attr``, for every part."""
        require_all(self, indices, attr_name)
        for part in self.parts:
            part.set_attr(attr_name, value)

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None, **method_kwargs) -> list[Any]:
        """``action_masks`` per game; ``set_opponent_pool`` once for every game."""
        games = list(env_indices(self, indices))
        if method_name in PER_GAME_METHODS:
            rows = getattr(self, method_name)(*method_args, **method_kwargs)
            return [rows[g] for g in games]
        if method_name in WHOLE_METHODS:
            require_all(self, indices, method_name)
            result = getattr(self, method_name)(*method_args, **method_kwargs)
            return [result] * len(games)
        raise AttributeError(f"MixedVecEnv has no env method {method_name!r}: per game {PER_GAME_METHODS}, for all games {WHOLE_METHODS}")

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        """False for every game."""
        return [False] * len(env_indices(self, indices))
