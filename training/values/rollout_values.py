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

**Search targets** (``collect_values(..., search_samples=N)``, ``wizard train-values --targets search``): instead
of the one true deal, each action is played out in N deals redrawn from what the acting seat sees
(``agents.rollouts.search_values``, ``engine.determinize``), and its value is the mean of its N round scores: the
values ``pimc`` chooses by, with the rollout policy at every seat. The network then fits what search on top of the
rollout policy would do (expert iteration) rather than one continuation of a deal the player cannot see. A mean
of N whole scores need not be whole: the compact samples keep such values as float32 (``samples``). With
``search_infer`` (``--search-infer``) the N deals are kept from ``INFER_OVERSAMPLE`` times as many by the chance of
the bids the player has seen (``agents.inference``, systematic draws), the bid model being the rollout policy's
(the network's values, or RuleAgent's judgement where RuleAgent plays out): the worlds ``search`` decides in.

**Without advice** (``collect_values(..., advice=False)``, ``wizard train-values --no-advice``): nothing comes from
RuleAgent but the play of the seats it holds as an opponent (``rule_tables``). The default behaviour and rollout
policy are uniformly random legal actions, and each decision is stored with the action played in place of RuleAgent's
choice; the network (``input_width(..., advice=False)``) reads the observation alone.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Sequence

import numpy as np

from wizard_env.agents.base import Agent
from wizard_env.agents.checkpoint import weight_names
from wizard_env.agents.inference import INFER_OVERSAMPLE, BidInference
from wizard_env.agents.ppo_agent import LEARNED_PHASES, VALUE_UNIT, PPOAgent, one_hot
from wizard_env.agents.random_agent import RandomAgent
from wizard_env.agents.rollouts import rollout_values, search_prior, search_values
from wizard_env.agents.rule_agent import RuleAgent
from wizard_env.agents.rule_features import FEATURES, action_features
from wizard_env.engine.actions import NUM_ACTIONS, Phase
from wizard_env.engine.observation import OBS_SIZE, SLICES
from wizard_env.engine.batch import WizardBatch
from wizard_env.engine.rules import Rules

# the stored form of decisions and their chunk files (``samples``), data past the memory budget (``sample_stream``)
from .sample_stream import WINDOW, ChunkSamples, epoch_order, load_samples, memory_budget, minibatches  # noqa: F401
from .samples import CHUNK_DTYPES, DECISION_BYTES, ValueSamples, read_chunk, write_chunk  # noqa: F401

if TYPE_CHECKING:
    import torch


def collect_values(rules: Rules, games: int, seed: int, phases: tuple[int, ...], share: float = 1.0,
                   behaviour: Agent | None = None, rollout: Agent | None = None, search_samples: int = 0,
                   search_top: int = 0, rule_tables: float = 0.0, pool: Sequence[Agent] = (),
                   pool_tables: float = 0.0, advice: bool = True, search_infer: bool = False) -> ValueSamples:
    """Action values of the decisions in ``phases`` that have a choice, in ``games`` games played by ``behaviour``
    (default RuleAgent) at every seat; each such decision is kept with probability ``share``. The values are each
    action's round score in the true deal, the round played out by ``rollout`` (default RuleAgent), or with
    ``search_samples`` N > 0 its mean over N redrawn deals (``search_values``), drawn from a Generator of its own
    seeded by ``seed`` (the draws that keep decisions stay as they are). ``search_top`` K > 0 (with ``search_samples``
    and a ``PPOAgent`` as ``rollout``): only the K legal actions that ``rollout`` rates highest, and RuleAgent's choice,
    are played out (``search_prior``); the others' values are NaN. ``search_infer`` (with ``search_samples``): the N
    deals are drawn by the likelihood of the bids seen (``search_inference``).

    ``advice`` False: RuleAgent plays only the seats of its tables, ``behaviour`` and ``rollout`` default to uniformly
    random legal actions (drawn from the seed's ``RANDOM_STREAM``), and each decision is stored with the action played
    (``ValueSamples.advice``) where RuleAgent's choice is stored otherwise (and kept in a pruned search instead of it).

    Opponent tables (``table_seats``): in a ``rule_tables`` share of the games one seat (game g's seat g mod the
    players) is ``behaviour``'s and RuleAgents hold the others; in a ``pool_tables`` share of the other games one agent
    drawn from ``pool`` (agents that play from observations) holds them. Only ``behaviour``'s decisions are kept there,
    and the opponents play their seats in the rollouts too, so the values are those of playing against them.
    ValueError for a negative ``search_samples`` or ``search_top``, a share outside 0..1, shares summing past 1, or
    ``pool_tables`` without a ``pool``."""
    for name, value in (("search_samples", search_samples), ("search_top", search_top)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, not {value!r}")
    for name, part in (("rule_tables", rule_tables), ("pool_tables", pool_tables)):
        if isinstance(part, (bool, np.bool_)) or not isinstance(part, (int, float)) or not 0 <= part <= 1:
            raise ValueError(f"{name} must be a share from 0 to 1, not {part!r}")
    if rule_tables + pool_tables > 1:
        raise ValueError(f"rule_tables {rule_tables} and pool_tables {pool_tables} are shares of the same games: "
                         f"they sum to at most 1")
    if pool_tables and not pool:
        raise ValueError("pool_tables needs a pool: the agents who hold the other seats")
    rng = np.random.default_rng([seed, 2])
    search_rng = np.random.default_rng([seed, SEARCH_STREAM])
    rule = RuleAgent(seed=np.random.default_rng([seed, 1]))
    default = rule if advice else RandomAgent(seed=np.random.default_rng([seed, RANDOM_STREAM]))
    behaviour = default if behaviour is None else behaviour
    rollout = default if rollout is None else rollout
    learned = np.zeros(len(Phase), dtype=bool)
    learned[list(phases)] = True
    prior = None  # the network that prunes the search: ``rollout`` with a RuleAgent of its own, so the rollouts draw as without it
    if search_samples and search_top and isinstance(rollout, PPOAgent):
        prior = own_rule_copy(rollout, seed, PRIOR_STREAM)
    inference = search_inference(rollout, seed) if search_samples and search_infer else None
    owners = table_seats(games, rules.num_players, seed, rule_tables, pool_tables, len(pool))  # who holds each seat
    # the opponents by owner: RuleAgent in the rollouts of rule tables (at the table its seats play the hint; without
    # rule tables no seat is RULE's and ``rule`` only holds the place), then the pool
    opponents = [RuleAgent(seed=np.random.default_rng([seed, TABLE_RULE_STREAM])) if rule_tables else rule, *pool]
    batch = WizardBatch(rules, games, seed=seed, autoreset=False)
    parts = []
    while (live := np.flatnonzero(batch.phase != Phase.OVER)).size:
        o, m = batch.observe(live), batch.legal_masks(live)
        owner = owners[live, batch.current[live]]
        mine = owner == LEARNER
        if advice:  # RuleAgent's choice for every row: its seats play it, the learner's decisions store it
            hint = rule.act_batch(o, m)
            a = hint.copy()
        else:  # RuleAgent decides only at its own seats
            a = np.zeros(len(live), dtype=np.int64)
            ruled = owner == RULE
            if ruled.any():
                a[ruled] = rule.act_batch(o[ruled], m[ruled])
        if behaviour is not rule and mine.any():
            a[mine] = behaviour.act_batch(o[mine], m[mine])
        for j, opponent in enumerate(pool, POOL):  # one call for each opponent's rows, every game's together
            theirs = owner == j
            if theirs.any():
                a[theirs] = opponent.act_batch(o[theirs], m[theirs])
        keep = learned[batch.phase[live]] & (m.sum(axis=1) > 1) & (rng.random(len(live)) < share) & mine
        stored = hint if advice else a  # the choice kept with each decision: RuleAgent's, or the action played
        if keep.any():
            seated = dict(others=opponents, theirs=owners[live[keep]]) if rule_tables or pool_tables else {}
            if search_samples:
                searched = None if prior is None else search_prior(prior, o[keep], m[keep], int(search_top), keep=stored[keep])
                values = search_values(batch, live[keep], rollout, search_rng, int(search_samples), inference, searched,
                                       **seated)
            else:
                values = rollout_values(batch, live[keep], rollout, **seated)
            parts.append(ValueSamples.of(o[keep], m[keep], values, stored[keep]))
        batch.step(a, live)
    if not parts:  # no decision kept (a few short games, a small share): an empty chunk
        return ValueSamples.empty()
    return ValueSamples.concatenate(parts)


#: The stream of ``collect_values``' seed that search targets draw their deals from (1: RuleAgent, 2: which decisions
#: are kept, 3: the trainer's agent), the one of the prior's RuleAgent (``search_top``), the one that picks the tables
#: of RuleAgents and the one of their RuleAgents in the rollouts (``rule_tables``), the one that picks the pool's
#: tables (``pool_tables``), the one that draws each such table's opponent, the one the trainer seeds the pool's
#: agents from (``training.values.opponent_pool``), and the one of random play without advice.
SEARCH_STREAM, PRIOR_STREAM, TABLE_STREAM, TABLE_RULE_STREAM = 5, 6, 7, 8
POOL_TABLE_STREAM, POOL_DRAW_STREAM, POOL_AGENT_STREAM, RANDOM_STREAM = 9, 10, 11, 12
#: The stream of the bid model's RuleAgent (``search_infer``, a network's advice).
MODEL_STREAM = 13
#: Who holds a seat in ``table_seats``' array: the learner (``behaviour``), RuleAgent, or from ``POOL`` on the pool's
#: agents in order (``POOL + j``: ``pool[j]``).
LEARNER, RULE, POOL = -1, 0, 1


def search_inference(rollout: Agent, seed: int) -> BidInference | None:
    """The inference of ``collect_values(..., search_infer=True)``: ``INFER_OVERSAMPLE`` deals drawn for each one
    kept, systematic draws, by the bids' chances under the rollout policy's judgement: ``rollout``'s values where it
    is a network (a copy with a RuleAgent of its own, from the seed's ``MODEL_STREAM``, so that the rollouts draw as
    without it), else RuleAgent's. None where ``rollout`` plays random legal actions: their bids tell nothing of a
    hand, so every deal is as likely."""
    if isinstance(rollout, RandomAgent):
        return None
    model = own_rule_copy(rollout, seed, MODEL_STREAM) if isinstance(rollout, PPOAgent) else None
    return BidInference(INFER_OVERSAMPLE, model=model, resample="systematic")


def own_rule_copy(network: PPOAgent, seed: int, stream: int) -> PPOAgent:
    """A copy of ``network`` whose RuleAgent (its advice) draws from the seed's ``stream``, so that reading its logits
    elsewhere (the search's prior, the bid model) leaves the draws of ``network`` itself as they were."""
    copied = copy.copy(network)
    copied.rule = RuleAgent(seed=np.random.default_rng([seed, stream]))
    return copied


def table_seats(games: int, players: int, seed: int, rule_tables: float = 0.0, pool_tables: float = 0.0,
                pool_size: int = 0) -> np.ndarray:
    """int16 [games, players]: who holds each seat of each game of ``collect_values`` (``LEARNER``, ``RULE`` or
    ``POOL + j``). A ``rule_tables`` share of the games (drawn from the seed's ``TABLE_STREAM``) and a ``pool_tables``
    share (drawn among the others from ``POOL_TABLE_STREAM``, each one's opponent j from ``POOL_DRAW_STREAM``) are
    opponent tables: the opponent holds every seat but seat g mod ``players`` of game g. Without a share no stream
    is drawn from."""
    opponent = np.full(games, LEARNER, dtype=np.int16)
    if rule_tables:
        opponent[np.random.default_rng([seed, TABLE_STREAM]).random(games) < rule_tables] = RULE
    if pool_tables and pool_size:
        # among the games that are not rule tables a share pool_tables / (1 - rule_tables): pool_tables of them all
        drawn = np.random.default_rng([seed, POOL_TABLE_STREAM]).random(games) * (1 - rule_tables) < pool_tables
        pick = np.random.default_rng([seed, POOL_DRAW_STREAM]).integers(pool_size, size=games)
        chosen = drawn & (opponent == LEARNER)
        opponent[chosen] = POOL + pick[chosen]
    owners = np.repeat(opponent[:, None], players, axis=1)
    owners[np.arange(games), np.arange(games) % players] = LEARNER
    return owners


#: Rollout values are round scores; the network fits them in tens of points (``PPOAgent`` plays them so).
VALUE_SCALE = VALUE_UNIT


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


def network_shapes(width: int, hidden: list[int]) -> dict[str, tuple[int, ...]]:
    """The shape of every weight of ``value_network(width, hidden)``, under the names of ``network_weights``."""
    return {name: array.shape for name, array in network_weights(value_network(width, hidden)).items()}


def mean_weights(parts: list[tuple[dict[str, np.ndarray], int]]) -> dict[str, np.ndarray]:
    """The mean of networks' weights of one shape, each ``(weights, count)`` counted ``count`` times (a mean of that
    many fits already): ``--soup``'s candidate."""
    total = sum(count for _, count in parts)
    return {k: np.sum([w[k].astype(np.float64) * count for w, count in parts], axis=0) / total for k in parts[0][0]}


def set_network_weights(net, weights: dict[str, np.ndarray]) -> None:
    """Load ``network_weights`` output (e.g. a checkpoint's) back into a network of the same shape."""
    import torch

    with torch.no_grad():
        for weight, bias, layer in _layers(net):
            layer.weight.copy_(torch.as_tensor(weights[weight]))
            layer.bias.copy_(torch.as_tensor(weights[bias]))


def input_width(features: bool, advice: bool = True) -> int:
    """Inputs of the network: the observation, with ``advice`` RuleAgent's choice, with ``features`` RuleAgent's numbers
    by action."""
    return OBS_SIZE + NUM_ACTIONS * (advice + FEATURES * features)


def inputs(samples: ValueSamples | ChunkSamples, rows: np.ndarray, features: bool = False, advice: bool = True) -> np.ndarray:
    """float32 network inputs of ``rows``: the observation, with ``advice`` RuleAgent's choice as a one-hot, and with
    ``features`` RuleAgent's numbers by action (as ``PPOAgent`` builds them for a checkpoint with advice and features)."""
    return _inputs(samples.take(rows), features, advice)


def _inputs(part: ValueSamples, features: bool, advice: bool = True) -> np.ndarray:
    """``inputs`` of every decision of ``part``."""
    observations = part.observations
    parts = [observations, one_hot(part.advice)] if advice else [observations]
    if features:
        parts.append(action_features(observations, part.masks))
    return np.concatenate(parts, axis=1) if len(parts) > 1 else observations


def _choices(net, part: ValueSamples, bonus: np.ndarray, features: bool, advice: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The network's best legal action with a value for each decision of ``part`` (with ``advice``, RuleAgent's choice
    getting the ``bonus`` of its phase; every legal action has one but those a search with a prior did not play out),
    and the phase of each."""
    import torch

    x = _inputs(part, features, advice)
    phase = x[:, SLICES["phase"]].argmax(axis=1)
    with torch.no_grad():
        values = net(torch.as_tensor(x)).numpy()
    if advice:
        values += bonus[phase][:, None] * x[:, OBS_SIZE:OBS_SIZE + NUM_ACTIONS]
    return np.where(np.isfinite(part.values), values, -np.inf).argmax(axis=1), phase


def chosen_actions(net, samples: ValueSamples | ChunkSamples, rows: np.ndarray, bonus: np.ndarray, features: bool = False,
                   batch: int = 4096, advice: bool = True) -> np.ndarray:
    """The network's best legal action for each of ``rows``, RuleAgent's choice getting the ``bonus`` of its phase
    (one per ``Phase``, as ``PPOAgent`` plays)."""
    out = [_choices(net, samples.take(rows[start:start + batch]), bonus, features, advice)[0]
           for start in range(0, len(rows), batch)]
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def gains(net, samples: ValueSamples | ChunkSamples, rows: np.ndarray, bonus: np.ndarray, features: bool = False,
          batch: int = 4096, advice: bool = True) -> dict[str, float]:
    """On ``rows`` (decisions the fit did not see): how often the network departs from each decision's stored choice
    (RuleAgent's, or a ``--no-advice`` run's action played; ``advice`` False: the network does not read it), and by
    phase the mean rollout value of its choice minus that one's (points per decision)."""
    differs, total, count = 0, np.zeros(len(Phase)), np.zeros(len(Phase), dtype=np.int64)
    for start in range(0, len(rows), batch):
        part = samples.take(rows[start:start + batch])
        chosen, phase = _choices(net, part, bonus, features, advice)
        differs += int((chosen != part.advice).sum())
        np.add.at(total, phase, part.value_of(chosen) - part.value_of(part.advice))
        np.add.at(count, phase, 1)
    stats = {"differs": differs / len(rows) if len(rows) else 0.0}
    for p in LEARNED_PHASES["both"]:
        if count[p]:
            stats[Phase(p).name.lower()] = float(total[p] / count[p])
    return stats


def fit(net, samples: ValueSamples | ChunkSamples, train: np.ndarray, epochs: int, lr: float, batch_size: int, seed: int,
        features: bool = False, window: int = WINDOW, advice: bool = True) -> float:
    """Fit ``net`` to the rollout values (times VALUE_SCALE) of decisions ``train``: the final epoch's mean loss.
    ``features``: the network reads RuleAgent's numbers by action too, ``advice`` False: not its choice (``inputs``).

    The loss compares values centred over each decision's legal actions, so what the deal was worth to
    everyone (the bulk of a score's spread) does not enter it, only how the actions differ. Each minibatch is
    expanded to float32 as it is used; rows come in ``samples.epoch_order`` (a permutation of all of them up to
    ``window`` training rows), and ``ChunkSamples`` (data past the memory budget) are read a window at a time,
    in the same order, so they give the weights the data held in memory give.
    """
    import torch

    rng = np.random.default_rng([seed, 4])
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    steps = max(1, epochs * (len(train) // batch_size))
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda i: max(0.05, 1 - i / steps))
    loss_sum = 0.0
    for _ in range(epochs):
        loss_sum, count = 0.0, 0
        for part in minibatches(samples, epoch_order(rng, train, len(samples), window), batch_size):
            values = part.values
            target = np.nan_to_num(values * VALUE_SCALE)
            legal = torch.as_tensor(np.isfinite(values))  # the legal actions that have a value (all but those not searched)
            error = centred(net(torch.as_tensor(_inputs(part, features, advice))), legal) - centred(torch.as_tensor(target), legal)
            loss = (error ** 2).sum(dim=1).div(legal.sum(dim=1)).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            loss_sum, count = loss_sum + float(loss.detach()), count + 1
    return loss_sum / max(count, 1)
