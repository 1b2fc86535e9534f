"""Action values from rollouts: low-variance targets for learning card play and bids.

PPO's credit for a single card is a round score that hinges on dozens of other cards, and with a
critic that cannot explain a round the advantage of one card is mostly noise (see the model card).
Here every legal action of a decision is tried instead (``agents.rollouts.rollout_values``): on copies
of the game (``WizardBatch.copy_games``), each action is applied and the rest of the round is played out by a
rollout policy (RuleAgent by default) at every seat; the acting seat's score for the round is that
action's value *in that deal*. All actions of a decision share the deal, so their differences are
free of the deal's luck.

A network that fits these values from the observation alone (``fit``) averages over what the
player cannot see, so it estimates each action's expected round score given what the player knows,
when everyone continues with the rollout policy; its argmax is a one-step policy improvement on that
policy. Rollouts see all hands (they are targets, never inputs): the learner never does.
"""

from __future__ import annotations

import dataclasses
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from wizard_env.agents.base import Agent
from wizard_env.agents.checkpoint import read_member, weight_names
from wizard_env.agents.ppo_agent import LEARNED_PHASES, one_hot
from wizard_env.agents.rollouts import rollout_values
from wizard_env.agents.rule_agent import RuleAgent
from wizard_env.agents.rule_features import FEATURES, action_features
from wizard_env.engine.actions import NUM_ACTIONS, Phase
from wizard_env.engine.observation import OBS_SIZE, SLICES
from wizard_env.engine.batch import WizardBatch
from wizard_env.engine.rules import Rules
from wizard_env.util.files import write_atomic

if TYPE_CHECKING:
    import torch


@dataclass
class ValueSamples:
    """Decisions with rollout values: observations [N, OBS_SIZE] (float16), masks [N, NUM_ACTIONS] (bool),
    values [N, NUM_ACTIONS] (round score per legal action, NaN elsewhere), and the advice [N] (RuleAgent's action)."""

    observations: np.ndarray
    masks: np.ndarray
    values: np.ndarray
    advice: np.ndarray

    @classmethod
    def of(cls, observations: np.ndarray, masks: np.ndarray, values: np.ndarray, advice: np.ndarray) -> "ValueSamples":
        """Samples of decisions from their float32 observations, action masks (any dtype), values and advice."""
        return cls(observations.astype(np.float16), masks != 0, values, advice)

    @classmethod
    def concatenate(cls, parts: list["ValueSamples"]) -> "ValueSamples":
        return cls(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in dataclasses.fields(cls)))


def collect_values(rules: Rules, games: int, seed: int, phases: tuple[int, ...], share: float = 1.0,
                   behaviour: Agent | None = None, rollout: Agent | None = None) -> ValueSamples:
    """Rollout values of the decisions in ``phases`` that have a choice, in ``games`` games played by ``behaviour``
    (default RuleAgent) at every seat; each such decision is kept with probability ``share``."""
    rng = np.random.default_rng([seed, 2])
    rule = RuleAgent(seed=np.random.default_rng([seed, 1]))
    behaviour = rule if behaviour is None else behaviour
    rollout = rule if rollout is None else rollout
    learned = np.zeros(len(Phase), dtype=bool)
    learned[list(phases)] = True
    batch = WizardBatch(rules, games, seed=seed, autoreset=False)
    parts = []
    while (live := np.flatnonzero(batch.phase != Phase.OVER)).size:
        o, m = batch.observe(live), batch.legal_masks(live)
        hint = rule.act_batch(o, m)
        a = hint if behaviour is rule else behaviour.act_batch(o, m)
        keep = learned[batch.phase[live]] & (m.sum(axis=1) > 1) & (rng.random(len(live)) < share)
        if keep.any():
            values = rollout_values(batch, live[keep], rollout)
            parts.append(ValueSamples.of(o[keep], m[keep], values, hint[keep]))
        batch.step(a, live)
    if not parts:  # no decision kept (a few short games, a small share): an empty chunk
        return ValueSamples(np.zeros((0, OBS_SIZE), np.float16), np.zeros((0, NUM_ACTIONS), bool),
                            np.zeros((0, NUM_ACTIONS), np.float32), np.zeros(0, np.int64))
    return ValueSamples.concatenate(parts)


#: Rollout values are round scores; the network fits them in tens of points.
VALUE_SCALE = 0.1


def centred(x: "torch.Tensor", legal: "torch.Tensor") -> "torch.Tensor":
    """x minus its mean over the legal actions of its row (zero elsewhere)."""
    import torch

    x = torch.where(legal, x, 0.0)
    return torch.where(legal, x - x.sum(dim=1, keepdim=True) / legal.sum(dim=1, keepdim=True), 0.0)


def value_network(width: int, hidden: list[int]):
    """The MLP that maps an input row to one value per action, laid out as a policy network of ``PPOAgent``."""
    import torch

    layers, last = [], width
    for size in hidden:
        layers += [torch.nn.Linear(last, size), torch.nn.ReLU()]
        last = size
    return torch.nn.Sequential(*layers, torch.nn.Linear(last, NUM_ACTIONS))


def _layers(net) -> list:
    """(weight name, bias name, linear layer) of each layer, named as a ``PPOAgent`` checkpoint names its policy."""
    linear = [m for m in net if hasattr(m, "weight")]
    actor, _ = weight_names([m.out_features for m in linear[:-1]])
    return list(zip(actor[::2], actor[1::2], linear))


def network_weights(net) -> dict[str, np.ndarray]:
    """The network's weights under the names a ``PPOAgent`` checkpoint gives its policy layers."""
    weights = {}
    for weight, bias, layer in _layers(net):
        weights[weight] = layer.weight.detach().numpy().copy()
        weights[bias] = layer.bias.detach().numpy().copy()
    return weights


def set_network_weights(net, weights: dict[str, np.ndarray]) -> None:
    """Load ``network_weights`` output (e.g. a checkpoint's) back into a network of the same shape."""
    import torch

    with torch.no_grad():
        for weight, bias, layer in _layers(net):
            layer.weight.copy_(torch.as_tensor(weights[weight]))
            layer.bias.copy_(torch.as_tensor(weights[bias]))


def input_width(features: bool) -> int:
    """Inputs of the network: the observation, RuleAgent's choice, and with ``features`` RuleAgent's numbers by action."""
    return OBS_SIZE + NUM_ACTIONS * (1 + FEATURES * features)


def inputs(samples: ValueSamples, rows: np.ndarray, features: bool = False) -> np.ndarray:
    """float32 network inputs of ``rows``: the observation, RuleAgent's choice as a one-hot, and with ``features``
    RuleAgent's numbers by action (as ``PPOAgent`` builds them for a checkpoint with advice and features)."""
    observations = samples.observations[rows].astype(np.float32)
    parts = [observations, one_hot(samples.advice[rows])]
    if features:
        parts.append(action_features(observations, samples.masks[rows]))
    return np.concatenate(parts, axis=1)


def chosen_actions(net, samples: ValueSamples, rows: np.ndarray, bonus: np.ndarray, features: bool = False,
                   batch: int = 4096) -> np.ndarray:
    """The network's best legal action for each of ``rows``, RuleAgent's choice getting the ``bonus`` of its phase
    (one per ``Phase``, as ``PPOAgent`` plays)."""
    import torch

    out = []
    with torch.no_grad():
        for start in range(0, len(rows), batch):
            part = rows[start:start + batch]
            x = inputs(samples, part, features)
            phase = samples.observations[part][:, SLICES["phase"]].argmax(axis=1)
            values = net(torch.as_tensor(x)).numpy() + bonus[phase][:, None] * x[:, OBS_SIZE:OBS_SIZE + NUM_ACTIONS]
            out.append(np.where(samples.masks[part], values, -np.inf).argmax(axis=1))
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def gains(net, samples: ValueSamples, rows: np.ndarray, bonus: np.ndarray, features: bool = False) -> dict[str, float]:
    """On ``rows`` (decisions the fit did not see): how often the network departs from RuleAgent's choice, and
    by phase the mean rollout value of its choice minus RuleAgent's (points per decision)."""
    chosen = chosen_actions(net, samples, rows, bonus, features)
    at = np.arange(len(rows))
    gain = samples.values[rows][at, chosen] - samples.values[rows][at, samples.advice[rows]]
    phase = samples.observations[rows][:, SLICES["phase"]].argmax(axis=1)
    stats = {"differs": float((chosen != samples.advice[rows]).mean()) if len(rows) else 0.0}
    for p in LEARNED_PHASES["both"]:
        if (phase == p).any():
            stats[Phase(p).name.lower()] = float(gain[phase == p].mean())
    return stats


def fit(net, samples: ValueSamples, train: np.ndarray, epochs: int, lr: float, batch_size: int, seed: int,
        features: bool = False) -> float:
    """Fit ``net`` to the rollout values (times VALUE_SCALE) of decisions ``train``: the final epoch's mean loss.
    ``features``: the network reads RuleAgent's numbers by action too (``inputs``).

    The loss compares values centred over each decision's legal actions, so what the deal was worth to
    everyone (the bulk of a score's spread) does not enter it, only how the actions differ.
    """
    import torch

    rng = np.random.default_rng([seed, 4])
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    steps = max(1, epochs * (len(train) // batch_size))
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda i: max(0.05, 1 - i / steps))
    loss_sum = 0.0
    for _ in range(epochs):
        order, loss_sum, count = rng.permutation(train), 0.0, 0
        for start in range(0, max(1, len(order) - batch_size + 1), batch_size):
            rows = order[start:start + batch_size]
            target = np.nan_to_num(samples.values[rows] * VALUE_SCALE)
            legal = torch.as_tensor(samples.masks[rows])
            error = centred(net(torch.as_tensor(inputs(samples, rows, features))), legal) - centred(torch.as_tensor(target), legal)
            loss = (error ** 2).sum(dim=1).div(legal.sum(dim=1)).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            loss_sum, count = loss_sum + float(loss.detach()), count + 1
    return loss_sum / max(count, 1)


#: The arrays of a chunk file (``np.savez`` of a ``ValueSamples``) and the dtypes each may hold.
CHUNK_DTYPES: dict[str, tuple[type, ...]] = {"observations": (np.float16, np.float32), "masks": (np.bool_,),
                                             "values": (np.float32, np.float64), "advice": (np.int64, np.int32)}


def write_chunk(path, samples: ValueSamples) -> None:
    """Write ``samples`` to the chunk file ``path`` atomically (a temporary file renamed: never half-written)."""
    write_atomic(Path(path), lambda f: np.savez(f, **dataclasses.asdict(samples)), binary=True)


def read_chunk(path) -> ValueSamples:
    """The decisions of one chunk file, checked (never unpickled); ValueError naming the file and what is wrong with it."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = {info.filename.removesuffix(".npy"): info for info in archive.infolist()}
            missing = [name for name in CHUNK_DTYPES if name not in members]
            if missing:
                raise ValueError(f"it has no {missing[0]!r} array")
            samples = ValueSamples(**{name: read_member(archive, members[name], dtypes) for name, dtypes in CHUNK_DTYPES.items()})
        problem = _chunk_problem(samples)
        if problem:
            raise ValueError(problem)
    except ValueError as e:
        raise ValueError(f"data chunk {path}: {e}") from None
    except (OSError, EOFError, zipfile.BadZipFile, zlib.error, RuntimeError, NotImplementedError) as e:
        raise ValueError(f"data chunk {path}: unreadable, damaged or truncated ({type(e).__name__}: {e})") from None
    return samples


def _chunk_problem(samples: ValueSamples) -> str | None:
    """What makes these arrays not a chunk's decisions (shapes, the advice, values on legal actions), or None."""
    n = len(samples.advice)
    shapes = {"observations": (n, OBS_SIZE), "masks": (n, NUM_ACTIONS), "values": (n, NUM_ACTIONS), "advice": (n,)}
    for name, shape in shapes.items():
        if getattr(samples, name).shape != shape:
            return f"its {name!r} array has shape {getattr(samples, name).shape}, expected {shape}"
    if not ((samples.advice >= 0) & (samples.advice < NUM_ACTIONS)).all() or not samples.masks[np.arange(n), samples.advice].all():
        return "its 'advice' holds actions that are not legal in their decision"
    if not np.isfinite(samples.observations).all() or not np.isfinite(samples.values[samples.masks]).all():
        return "it holds observations or values of legal actions that are not finite"
    return None


def load_samples(paths: list) -> tuple[ValueSamples, np.ndarray]:
    """The decisions of chunk files, concatenated, and the chunk index of each decision."""
    parts, chunk = [], []
    for i, path in enumerate(paths):
        parts.append(read_chunk(path))
        chunk.append(np.full(len(parts[-1].advice), i))
    return ValueSamples.concatenate(parts), np.concatenate(chunk)
