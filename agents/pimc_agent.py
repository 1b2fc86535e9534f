"""PIMCAgent: Perfect Information Monte Carlo search on determinized copies of the game.

At each decision with more than one legal action, the agent draws ``samples`` determinizations of
what the acting seat sees (``wizard_env.engine.determinize``: hidden hands, the stack and hidden bids
redrawn, never the real ones), copies each once per legal action, applies the action, and plays the
round out on the batched engine with every seat played by the rollout policy (RuleAgent, a
shipped network by its name: ``ppo``, ``ppo-v3``, ..., or a checkpoint file: ``rollout=runs/x/checkpoints/iter-3.npz``), all copies of all games in lockstep, one ``act_batch`` call per move. It then
takes the action with the best mean round score of the acting seat over the samples (ties: the
lowest action id). Bids and the trump choice are searched like cards.

A search agent needs the game, not only the observation: it implements ``act_games(batch, games)``,
which ``training.evaluation.evaluate.play_games`` calls instead of ``act_batch`` for agents that have it. The
agent reads the batch only through ``determinize`` and the acting seats' legal masks, so what it
does is a function of the acting seat's observation and its own random draws. ``act_batch`` alone
(observations and masks) is not enough to search and raises a ValueError.

With ``infer="bids"`` (``pimc:infer=bids``) the samples are not uniform: ``oversample`` times as many
worlds are drawn and ``samples`` of them kept, drawn by how likely the bids the acting seat sees are
in each (``agents.inference``: a bid model at ``temperature``, RuleAgent's judgement of each bid or, with
``model="ppo"`` (``pimc:infer=bids:model=ppo``), a shipped network's or a checkpoint file's (``model=PATH.npz``)). Without it the agent is the uniform one,
draw for draw. ``resample="systematic"`` (``pimc:infer=bids:resample=systematic``) draws the kept worlds at
evenly spaced points rather than independently.

With ``top=K`` (``pimc:top=4``) the network is the search's prior too: only the K legal actions that the rollouts'
network (``ppo`` with RuleAgent rollouts) rates highest are played out (``rollouts.search_prior``; a decision with at most K legal actions searches
them all), so a decision among 16 bids costs what one among K does. The prior is a ``PPOAgent`` of its own, so the
rollouts draw what they would without it.

With ``bid_samples=N`` (``pimc:bid_samples=64``) the bids are searched on N worlds and every other decision on
``samples``: a bid commits a whole round and chooses among up to 16 options, a card among fewer and with more seen.

Spec: ``pimc``, ``pimc:samples=32``, ``pimc:samples=16:bid_samples=64``, ``pimc:samples=8:rollout=ppo``, ``pimc:samples=16:infer=bids:over=4:temp=10``,
``pimc:samples=16:infer=bids:model=ppo:over=16:resample=systematic``,
``pimc:samples=16:rollout=ppo:top=4``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from wizard_env.engine.actions import Phase
from wizard_env.engine.batch import WizardBatch
from wizard_env.util.checks import parse_float, parse_int, shown_text

from .base import Agent
from .inference import DEFAULT_OVERSAMPLE, DEFAULT_TEMPERATURE, INFERENCES, MODELS, RESAMPLINGS, BidInference
from .ppo_agent import PRETRAINED, SHIPPED, PPOAgent
from .rollouts import search_prior, search_values
from .rule_agent import RuleAgent
from .zoo import in_short

DEFAULT_SAMPLES = 16
#: Rollout policies by option value: RuleAgent, or a shipped network by its name (the prior too, with ``top``).
ROLLOUTS = ("rule", *SHIPPED)
#: How a rollout or bid model names a checkpoint file rather than a shipped network.
CHECKPOINT_SUFFIX = ".npz"
#: Games played out at once at most (copies of a decision: samples x legal actions); bounds the memory of one call.
MAX_ROLLOUTS = 8192


def network_file(name: str) -> str | None:
    """The checkpoint file a ``rollout=`` or ``model=`` value names: a shipped network's, or the path itself where
    it ends in ``.npz``; None for any other name."""
    return str(SHIPPED[name]) if name in SHIPPED else name if name.endswith(CHECKPOINT_SUFFIX) else None


def parse_options(arg: str | None, name: str = "pimc", defaults: dict | None = None) -> dict:
    """Keyword arguments of ``PIMCAgent`` from a spec's options,
    ``samples=N:bid_samples=N:rollout=rule|ppo|ppo-v3|...|PATH.npz:infer=bids:model=rule|ppo|...|PATH.npz:over=K:temp=T:resample=multinomial|systematic:top=K``,
    over ``defaults`` (keyword arguments too);
    ValueError naming a bad one (in the spec ``name:arg``)."""
    options: dict = dict(defaults or {})
    for part in arg.split(":") if arg else []:
        key, sep, value = part.partition("=")
        if key in ("samples", "bid_samples", "over", "top") and sep:
            try:  # ASCII digits only ('²'.isdigit() is True, and int() refuses it with no option named)
                count = parse_int(value)
            except ValueError:
                count = 0
            if not 1 <= count <= MAX_ROLLOUTS:
                raise ValueError(f"agent spec '{name}:{arg}': {key} must be a positive integer (at most {MAX_ROLLOUTS}), "
                                 f"not {shown_text(value)}")
            options[{"over": "oversample"}.get(key, key)] = count
        elif key == "rollout" and sep:
            options["rollout"] = value
        elif key in ("infer", "model", "resample") and sep:
            options[key] = value
        elif key == "temp" and sep:
            try:
                temperature = parse_float(value)
            except ValueError:
                temperature = np.nan
            if not 0 < temperature < np.inf:
                raise ValueError(f"agent spec '{name}:{arg}': temp must be a positive number, not {shown_text(value)}")
            options["temperature"] = temperature
        else:
            raise ValueError(f"agent spec '{name}:{arg}': unknown option {part!r} (options: samples=N, bid_samples=N, "
                             f"rollout={in_short(ROLLOUTS, '|')}|PATH.npz, infer={'|'.join(INFERENCES)}, "
                             f"model={in_short(MODELS, '|')}|PATH.npz, "
                             f"over=K, temp=T, resample={'|'.join(RESAMPLINGS)}, top=K)")
    if {"oversample", "temperature", "model", "resample"} & options.keys() and "infer" not in options:
        raise ValueError(f"agent spec '{name}:{arg}': model=, over=, temp= and resample= tune inference: "
                         f"add infer={'|'.join(INFERENCES)}")
    return options


class PIMCAgent(Agent):
    """Chooses the action with the best mean round score over determinized rollouts."""

    name = "pimc"

    def __init__(self, samples: int = DEFAULT_SAMPLES, rollout: str = "rule",
                 seed: int | np.random.Generator | None = None, infer: str | None = None,
                 oversample: int = DEFAULT_OVERSAMPLE, temperature: float = DEFAULT_TEMPERATURE, top: int | None = None,
                 bid_samples: int | None = None, model: str = "rule", resample: str = "multinomial"):
        bid_samples = samples if bid_samples is None else bid_samples
        for name, value in (("samples", samples), ("bid_samples", bid_samples), ("top", 1 if top is None else top)):
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"pimc: {name} must be a positive integer, not {value!r}")
            if name != "top" and value > MAX_ROLLOUTS:
                raise ValueError(f"pimc: {name} must be at most {MAX_ROLLOUTS}, not {value}")
        if rollout != "rule" and network_file(rollout) is None:
            raise ValueError(f"pimc: unknown rollout policy {rollout!r} (expected {in_short(ROLLOUTS, ', ')} or a "
                             f"checkpoint file, PATH{CHECKPOINT_SUFFIX})")
        if infer is not None and infer not in INFERENCES:
            raise ValueError(f"pimc: unknown inference {infer!r} (expected {' or '.join(INFERENCES)})")
        if model not in MODELS and not model.endswith(CHECKPOINT_SUFFIX):
            raise ValueError(f"pimc: unknown bid model {model!r} (expected {in_short(MODELS, ', ')} or a checkpoint "
                             f"file, PATH{CHECKPOINT_SUFFIX})")
        try:  # checks both, with or without ``infer``
            inference = BidInference(oversample, temperature, None, resample)
        except ValueError as error:
            raise ValueError(f"pimc: {error}") from None
        if infer is not None and max(samples, bid_samples) * oversample > MAX_ROLLOUTS:
            raise ValueError(f"pimc: samples x oversample must be at most {MAX_ROLLOUTS}, "
                             f"not {max(samples, bid_samples) * oversample}")
        if infer is not None and model != "rule":  # the network draws nothing: any seed
            inference = dataclasses.replace(inference, model=PPOAgent.load(network_file(model) or model, seed=0))
        #: The inference of the determinizations, or None for uniform ones.
        self.inference = inference if infer is not None else None
        self.samples = int(samples)
        #: Determinizations kept per bid (``samples`` unless given): a bid weighs a whole round, with up to 16 options.
        self.bid_samples = int(bid_samples)
        self.rollout = rollout
        self.rng = np.random.default_rng(seed)
        policy_seed = np.random.default_rng(self.rng.integers(2**63))
        network = network_file(rollout) or PRETRAINED  # the rollouts' network, or ``ppo`` as the prior of rule rollouts
        self.policy = RuleAgent(seed=policy_seed) if rollout == "rule" else PPOAgent.load(network, seed=policy_seed)
        #: How many legal actions the prior lets the search play out (None: all of them), and the prior.
        self.top = None if top is None else int(top)
        self.prior = None if top is None else PPOAgent.load(network, seed=policy_seed.spawn(1)[0])  # draws nothing
        #: Decisions made with a search (more than one legal action), for measuring time per decision.
        self.searched = 0

    def _worlds(self, samples: int) -> int:
        """Determinizations drawn per decision that keeps ``samples``."""
        return samples * (self.inference.oversample if self.inference is not None else 1)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """Not enough to search: PIMC needs the games (``act_games``)."""
        raise ValueError("pimc searches the game itself: it plays through act_games(batch, games), as wizard eval "
                         "calls it, not from observations alone")

    def act_games(self, batch: WizardBatch, games: np.ndarray) -> np.ndarray:
        """A legal action [k] for the acting seat of each of ``games`` of ``batch``, chosen by search."""
        return self._act(batch, games)

    def _act(self, batch: WizardBatch, games: np.ndarray) -> np.ndarray:
        """``act_games``: the searched decisions in chunks of at most ``MAX_ROLLOUTS`` copies, each by ``_search``."""
        games = np.asarray(games)
        masks = batch.legal_masks(games)  # validates the games
        if not masks.any(axis=1).all():
            raise ValueError("pimc: a game has no legal action (it is over)")
        actions = masks.argmax(axis=1).astype(np.int64)  # the only legal action, where there is one
        legal = masks.sum(axis=1)
        searched = np.flatnonzero(legal > 1)
        groups = [(searched, self.samples)]  # one group where bids take as many worlds: the draws of before
        if self.bid_samples != self.samples:
            bidding = batch.phase[games[searched]] == Phase.BID
            groups = [(searched[~bidding], self.samples), (searched[bidding], self.bid_samples)]
        for rows, samples in groups:
            start = 0
            while start < rows.size:  # chunks of at most MAX_ROLLOUTS copies (at least one game)
                cost = np.cumsum(np.maximum(legal[rows[start:]] * samples, self._worlds(samples)))
                stop = start + max(1, int(np.searchsorted(cost, MAX_ROLLOUTS, side="right")))
                chunk = rows[start:stop]
                actions[chunk] = self._search(batch, games[chunk], masks[chunk], samples)
                start = stop
        self.searched += searched.size
        return actions

    def _search(self, batch: WizardBatch, games: np.ndarray, masks: np.ndarray, samples: int) -> np.ndarray:
        """The best action of each game: mean round score of its acting seat over ``samples`` worlds, per legal
        action (per action the prior keeps, with ``top``)."""
        searched = None
        if self.prior is not None and self.top is not None:
            searched = masks = search_prior(self.prior, batch.observe(games), masks, self.top)
        mean = search_values(batch, games, self.policy, self.rng, samples, self.inference, searched)
        return np.where(masks != 0, mean, -np.inf).argmax(axis=1)  # ties: the lowest action id
