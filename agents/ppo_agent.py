"""NetAgent (also named ``PPOAgent``): a trained network (``wizard train``, ``wizard train-values``), read from a
checkpoint file that holds only numbers.

A checkpoint is one ``.npz`` file (``numpy.load`` with ``allow_pickle=False``, so loading never runs
code from the file): the float32 weights of the MaskablePPO policy under their PyTorch names, and a
``config`` entry holding UTF-8 JSON (format, network layout, the phases it learned, the rules and
the training configuration). ``save_checkpoint`` writes a temporary file and renames it.

The agent plays the argmax of the policy's masked logits, so it is deterministic. A policy trained
with ``--learn bid`` decides trump and bids and leaves card play to RuleAgent; ``--learn play``
plays cards and leaves trump and bids to RuleAgent. ``play="rule"`` hands card play to RuleAgent
whatever the policy learned, so the worth of learned play can be measured on its own.

A policy trained with ``advice`` (the default of ``wizard train`` since observation v1) reads, after
the observation, RuleAgent's choice for the same decision as a one-hot over the actions
(``advice_features``): it starts as a copy of RuleAgent and learns where to do better. Its
RuleAgent is its own, seeded with the agent's seed. A config's ``advice_bonus`` (default 0) is added
to the logit of RuleAgent's choice: a policy of action values (``wizard train-values``) then departs
from RuleAgent only where it expects to gain more than that. It is one number for every phase, or one
per group of phases as ``--learn`` names them, ``{"bid": x, "play": y}`` (``bid``: trump and bids). A network of
``wizard train-values`` outputs action values in points times ``VALUE_UNIT``, so its bonus is a margin in points
times ``VALUE_UNIT``: the points a departure from RuleAgent's choice must promise. ``load(..., margins=...)`` (the
spec options ``margin=X`` and ``play-margin=Y``) plays such a network with other margins than its checkpoint's.

The config records ``obs_version``, the observation layout the policy was trained on (a checkpoint
without it predates the field and is version 0). An older version is read through
``observation.version_columns``, which picks that layout's fields out of today's vector; a version
this code does not know is a ValueError naming both versions.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from wizard_env.engine.actions import Phase
from wizard_env.util.checks import short_repr
from wizard_env.util.files import DAMAGED_ARCHIVE, damaged, regular_file, write_atomic
from wizard_env.engine.game import NUM_ACTIONS
from wizard_env.engine.observation import OBS_SIZE, OBS_VERSION, SLICES, VERSION_FIELDS, version_columns
from wizard_env.engine.rules import MAX_PLAYERS, MIN_PLAYERS

from .base import Agent, check_batch
from .checkpoint import check_checkpoint, portable_sources, read_archive, trained_players
from .ppo_network import best_legal, first_layer, forward, padded_layers
from .rule_agent import RuleAgent
from .rule_features import FEATURES, action_features
from .zoo import NETWORKS, PRETRAINED_DIR

FORMAT = "wizard-ppo/1"
#: A ``wizard train-values`` network's logits are action values in points times this; its advice bonus is a margin in
#: points times this.
VALUE_UNIT = 0.1
#: The phases each ``learn`` mode decides with the network; RuleAgent decides the others.
LEARNED_PHASES: dict[str, tuple[int, ...]] = {
    "both": (int(Phase.TRUMP), int(Phase.BID), int(Phase.PLAY)),
    "bid": (int(Phase.TRUMP), int(Phase.BID)),
    "play": (int(Phase.PLAY),),
}
_NO_CHOICE = np.zeros(0, dtype=np.int64)  # ``first_layer``'s choice of a policy without advice
ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {"tanh": np.tanh, "relu": lambda x: np.maximum(x, 0)}
#: The shipped agent for 3-6 players, ``net`` (wizard-v13: bids and card play learned; built by
#: training/recipes/wizard-v13.toml), played by the spec ``net`` without a path.
PRETRAINED = PRETRAINED_V13 = PRETRAINED_DIR / "wizard-v13.npz"
#: The network ``search`` plays, ``net-v7``.
PRETRAINED_V7 = PRETRAINED_DIR / "wizard-v7.npz"
#: The earlier 4-player agent (bids learned, RuleAgent's play; observation v0): ``net-bid``.
PRETRAINED_BID = PRETRAINED_DIR / "wizard-4p.npz"
#: Every network by the names that play it (``--agents net-v3``, ``pimc:rollout=net-v3``): its file, found when
#: asked (``zoo.network_file``: a lineage network comes from a clone's ``zoo/`` or from ``$WIZARD_ZOO``).
SHIPPED = NETWORKS


def __getattr__(name: str) -> Path:
    """``PRETRAINED_V3`` and the like, the lineage's files by their names before the zoo: found when asked."""
    if name.startswith("PRETRAINED_V") and f"net-v{name[12:]}" in NETWORKS:
        return NETWORKS[f"net-v{name[12:]}"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Who plays the cards: the network (where it learned play) or RuleAgent.
PLAY_MODES = ("net", "rule")
#: Where a run folder keeps its latest checkpoint: every trainer writes ``checkpoints/latest.npz``; RLlib runs
#: made before that wrote ``latest.npz`` in the folder itself.
RUN_CHECKPOINTS = ("checkpoints/latest.npz", "latest.npz")
_POLICY = "mlp_extractor.policy_net"


def save_checkpoint(path: str | os.PathLike, config: Mapping, weights: Mapping[str, np.ndarray],
                    run: str | os.PathLike | None = None) -> Path:
    """Write ``config`` (JSON-able) and ``weights`` (name -> array) to ``path`` atomically; return the path. With
    ``run`` (the run folder), the sources the config's ``train`` records are written relative to it, or by agent
    name for a network of the zoo (``checkpoint.portable_sources``), so the file names nothing of this machine."""
    path = Path(path)
    if run is not None:
        config = portable_sources(config, run)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, Any] = {name: np.asarray(value, dtype=np.float32) for name, value in weights.items()}
    arrays["config"] = np.frombuffer(json.dumps(dict(config), sort_keys=True).encode(), dtype=np.uint8)
    return write_atomic(path, lambda file: np.savez_compressed(file, **arrays), binary=True)


def checkpoint_file(path: str | os.PathLike) -> Path:
    """``path``, or for a run folder its latest checkpoint (the first of ``RUN_CHECKPOINTS`` there); ValueError
    naming what was looked for in a folder that holds none."""
    path = Path(path)
    if not os.path.isdir(path):  # False for a name too long or a folder that may not be searched: load_checkpoint names it
        return path
    for name in RUN_CHECKPOINTS:
        if (path / name).is_file():
            return path / name
    raise ValueError(f"checkpoint {path}: is a folder, not a checkpoint file (.npz), and not a run folder: it holds no "
                     f"{' or '.join(RUN_CHECKPOINTS)} (where wizard train and train-values keep a run's latest checkpoint)")


def load_checkpoint(path: str | os.PathLike) -> tuple[dict, dict[str, np.ndarray]]:
    """The (config, weights) of a checkpoint file or of a run folder's latest one; ValueError naming the file for a
    missing, damaged or foreign one."""
    path = checkpoint_file(path)
    regular_file(path, "checkpoint")  # a FIFO or a device is named as such, and never read
    if not zipfile.is_zipfile(path):
        raise ValueError(f"checkpoint {path}: not a wizard checkpoint (a .npz archive of numbers)")
    try:
        config, arrays = read_archive(path)
        if not isinstance(config, dict) or config.get("format") != FORMAT:
            found = config.get("format") if isinstance(config, dict) else type(config).__name__
            raise ValueError(f"format {short_repr(found)}, expected {FORMAT!r}")
        check_checkpoint(config, arrays)
    except ValueError as e:
        raise ValueError(f"checkpoint {path}: {e}") from None
    except (*DAMAGED_ARCHIVE, KeyError) as e:
        raise damaged(f"checkpoint {path}", e) from None
    return config, arrays


def observation_columns(config: Mapping, source: str) -> np.ndarray | None:
    """Columns of today's observation the policy reads (None: all of them); ValueError for an unknown version."""
    version = config.get("obs_version", 0)
    known = not isinstance(version, bool) and isinstance(version, int) and version in VERSION_FIELDS
    if known and version == OBS_VERSION:
        return None
    if not known:
        raise ValueError(f"checkpoint {source} was trained on observation version {version!r}; this code reads "
                         f"version {OBS_VERSION} and can adapt versions {sorted(VERSION_FIELDS)}")
    return version_columns(version)


def actor_layers(config: Mapping, weights: Mapping[str, np.ndarray], source: str, width: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (weight, bias) pairs from observation (``width`` floats) to logits; ValueError if missing or misshapen."""
    names = [f"{_POLICY}.{2 * i}" for i in range(len(config.get("hidden", [])))] + ["action_net"]
    layers = []
    for name in names:
        w, b = weights.get(f"{name}.weight"), weights.get(f"{name}.bias")
        if w is None or b is None:
            raise ValueError(f"checkpoint {source}: weights of layer {name} are missing")
        if w.ndim != 2 or w.shape[1] != width or b.shape != (w.shape[0],):
            version = f" (observation version {config.get('obs_version', 0)})" if name == names[0] else ""
            raise ValueError(f"checkpoint {source}: layer {name} has shape {w.shape}, expected (*, {width}){version}")
        layers.append((w.astype(np.float32), b.astype(np.float32)))
        width = w.shape[0]
    if width != NUM_ACTIONS:
        raise ValueError(f"checkpoint {source}: the policy has {width} outputs, expected {NUM_ACTIONS}")
    return layers


def one_hot(actions: np.ndarray) -> np.ndarray:
    """Action ids [k] as a float32 one-hot [k, NUM_ACTIONS] (how a policy with advice reads the adviser's choice)."""
    hot = np.zeros((len(actions), NUM_ACTIONS), dtype=np.float32)
    hot[np.arange(len(actions)), actions] = 1
    return hot


def advice_features(adviser: Agent, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The adviser's choice for each row as a float32 one-hot [k, NUM_ACTIONS] (the input a policy with advice adds)."""
    return one_hot(adviser.act_batch(observations, masks) if len(observations) else np.zeros(0, dtype=np.int64))


def phase_bonus(bonus: object, advice: bool, source: str) -> np.ndarray:
    """The advice bonus of each phase from a config's ``advice_bonus``: a number, or ``{"bid": x, "play": y}``."""
    parts: dict[str, Any] = bonus if isinstance(bonus, dict) else {"bid": bonus, "play": bonus}
    for value in parts.values():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf") or (value and not advice):
            raise ValueError(f"checkpoint {source}: advice_bonus must be a finite number >= 0 on a policy with advice, "
                             f"or such numbers under 'bid' and 'play', not {short_repr(bonus)}")
    if set(parts) != {"bid", "play"}:
        raise ValueError(f"checkpoint {source}: advice_bonus by phase needs exactly the keys 'bid' and 'play', not {short_repr(bonus)}")
    out = np.zeros(len(Phase))
    out[list(LEARNED_PHASES["bid"])] = parts["bid"]
    out[list(LEARNED_PHASES["play"])] = parts["play"]
    return out


def with_margins(config: Mapping, margins: Mapping[str, float], source: str) -> dict:
    """``config`` playing with the margins (points) of ``margins``, ``{"bid": x, "play": y}`` or one of them (the
    other phase keeps the checkpoint's); ValueError naming ``source`` unless it is a network of action values
    (``wizard train-values``) with advice, or for a margin that is not a finite number >= 0."""
    train = config.get("train")
    if not config.get("advice") or not isinstance(train, dict) or train.get("method") != "rollout-values":
        raise ValueError(f"checkpoint {source}: margins apply to networks of wizard train-values (action values with "
                         f"RuleAgent's advice), not to this one")
    for phase, value in margins.items():
        if phase not in ("bid", "play") or isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
            raise ValueError(f"a margin is a finite number of points >= 0 for 'bid' or 'play', not {phase!r}: {short_repr(value)}")
    bonus = phase_bonus(config.get("advice_bonus", 0.0), True, source)
    parts = {"bid": float(bonus[int(Phase.BID)]), "play": float(bonus[int(Phase.PLAY)])}
    return {**config, "advice_bonus": parts | {phase: value * VALUE_UNIT for phase, value in margins.items()}}


class NetAgent(Agent):
    """Plays the argmax of a trained network's masked logits; RuleAgent plays the phases it did not learn."""

    name = "net"

    def __init__(self, config: Mapping, weights: Mapping[str, np.ndarray], seed: int | np.random.Generator | None = None,
                 source: str = "<memory>", play: str = "net"):
        learn = config.get("learn", "both")
        if not isinstance(learn, str) or learn not in LEARNED_PHASES:
            raise ValueError(f"checkpoint {source}: learn must be one of {sorted(LEARNED_PHASES)}, not {short_repr(learn)}")
        if play not in PLAY_MODES:
            raise ValueError(f"play must be one of {', '.join(PLAY_MODES)}, not {play!r}")
        activation = config.get("activation", "tanh")
        if not isinstance(activation, str) or activation not in ACTIVATIONS:
            raise ValueError(f"checkpoint {source}: unknown activation {short_repr(activation)}")
        try:
            check_checkpoint(config, weights)
            self.players = trained_players(config)
            #: By player count: whether the policy was trained for it (read only when ``players`` names them).
            self.trained_for = np.isin(np.arange(MAX_PLAYERS + 1), self.players if self.players is not None else [])
        except ValueError as e:
            raise ValueError(f"checkpoint {source}: {e}") from None
        self.config, self.source = dict(config), source
        self.learn, self.play = learn, play
        self.columns = observation_columns(config, source)
        self.advice = bool(config.get("advice", False))
        #: Whether the network reads RuleAgent's numbers for every action too (``rule_features``), after the advice.
        self.features = bool(config.get("features", False))
        #: The advice bonus of each phase (``Phase`` order).
        self.phase_bonus = phase_bonus(config.get("advice_bonus", 0.0), self.advice, source)
        width = (OBS_SIZE if self.columns is None else len(self.columns)) + NUM_ACTIONS * (self.advice + FEATURES * self.features)
        self.layers = actor_layers(config, weights, source, width)
        self.first_layer = (np.ascontiguousarray(self.layers[0][0].T), self.layers[0][1])  # for ``first_layer``
        self.activation = ACTIVATIONS[activation]
        #: The layers after the first as ``ppo_network.forward`` reads them, for a ReLU network with hidden layers
        #: (None: numpy's matrix products after ``first_layer``).
        self.hidden = padded_layers(self.layers[1:]) if activation == "relu" and len(self.layers) > 1 else None
        self.learned = np.zeros(len(Phase), dtype=bool)
        self.learned[list(LEARNED_PHASES[learn])] = True
        if play == "rule":
            self.learned[int(Phase.PLAY)] = False
        self.rule = RuleAgent(seed=seed)  # plays the phases the network does not, and gives the advice

    @classmethod
    def load(cls, path: str | os.PathLike = PRETRAINED, seed: int | np.random.Generator | None = None,
             play: str = "net", margins: Mapping[str, float] | None = None) -> "NetAgent":
        """The agent stored in checkpoint ``path`` (default: the shipped one), or in a run folder's latest checkpoint;
        ``margins``: play with these margins in points (``with_margins``) instead of the checkpoint's."""
        path = checkpoint_file(path)
        config, weights = load_checkpoint(path)
        if margins:
            config = with_margins(config, margins, str(path))
        return cls(config, weights, seed, source=str(path), play=play)

    def logits(self, observations: np.ndarray, masks: np.ndarray | None = None) -> np.ndarray:
        """The policy's unmasked logits [k, NUM_ACTIONS] for observations [k, OBS_SIZE] (``masks``: needed with advice)."""
        x = np.asarray(observations, dtype=np.float32)
        return self._logits(x, masks, np.arange(len(x)), x[:, SLICES["phase"]].argmax(axis=1))

    def _logits(self, x: np.ndarray, masks: np.ndarray | None, rows: np.ndarray, phase: np.ndarray) -> np.ndarray:
        """The logits of rows ``rows`` of float32 observations ``x`` (``phase``: each row's, of ``x``); RuleAgent's
        pass covers every row of ``x``."""
        choice, numbers = _NO_CHOICE, np.zeros((len(x), 0), dtype=np.float32)  # the inputs after the observation
        if self.advice or self.features:
            if masks is None:
                raise ValueError("this policy takes RuleAgent's advice, which needs the action masks")
            if self.advice:  # RuleAgent's choice and its numbers by action, from one pass over the rows
                choice, numbers = self.rule.act_with_numbers(x, masks, self.features)
            else:
                numbers = action_features(x, masks)
        bonus = self.phase_bonus[phase[rows]]
        x = np.ascontiguousarray(x if self.columns is None else x[:, self.columns])
        if self.hidden is not None:
            return forward(x, rows, choice, numbers, bonus, *self.first_layer, *self.hidden)
        choice = choice[rows] if len(choice) else choice
        logits = first_layer(x[rows], choice, numbers[rows], *self.first_layer)
        for w, b in self.layers[1:]:
            logits = self.activation(logits) @ w.T + b
        if bonus.any():
            logits[np.arange(len(logits)), choice] += bonus
        return logits

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """The best legal action by the policy in learned phases, RuleAgent's elsewhere (the only one where there is one)."""
        observations, masks = check_batch(observations, action_masks)
        if self.players is not None:
            counts = observations[:, SLICES["num_players"]].argmax(axis=1) + MIN_PLAYERS
            if not self.trained_for[counts].all():
                raise ValueError(f"checkpoint {self.source} was trained for {'/'.join(map(str, self.players))} players, "
                                 f"not the {int(counts[~np.isin(counts, self.players)][0])} of this game")
        phase, legal = observations[:, SLICES["phase"]].argmax(axis=1), masks != 0
        choice = legal.sum(axis=1) > 1
        mine = self.learned[phase] & choice  # a forced move needs no network (nor RuleAgent, which draws nothing for it)
        rule = ~self.learned[phase] & choice
        actions = legal.argmax(axis=1)
        if mine.any():
            x = np.asarray(observations, dtype=np.float32)
            if rule.any():  # RuleAgent's draws for the network's rows, then for its own, as each alone would draw
                rows = np.arange(np.count_nonzero(mine))
                logits, legal_rows = self._logits(x[mine], masks[mine], rows, phase[mine]), legal[mine]
            else:  # the other rows are forced: RuleAgent's pass skips them, the network reads only the rows it decides
                rows = np.flatnonzero(mine)
                logits, legal_rows = self._logits(x, masks, rows, phase), legal
            actions[mine] = best_legal(logits, legal_rows, rows)
        if rule.any():
            actions[rule] = self.rule.act_batch(observations[rule], masks[rule])
        return actions


#: The name ``NetAgent`` had when its networks were trained by PPO (``wizard train``); the same class.
PPOAgent = NetAgent
