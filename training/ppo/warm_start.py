"""Behaviour cloning from RuleAgent: the starting point of ``wizard train`` before PPO.

PPO from random weights spends most of a short budget rediscovering how to follow suit and bid
near one's strength. Instead the policy first imitates RuleAgent's decisions in the phases it
learns (cross-entropy on RuleAgent's actions, over legal actions only) and its value head fits the
score those decisions led to, both from games where RuleAgent plays every seat. ``act_batch``
makes that data cheap: a few hundred games give a few hundred thousand decisions.

A run's time budget (``--max-minutes``) covers its warm start: ``Trainer.warm_start`` gives it ``WARM_START_SHARE`` of
the budget, its games the first half of that (``GAMES_SHARE``), so that what they collected is cloned in the rest.
The games stop between two steps (the decisions of rounds not finished are dropped: their returns are not known),
the cloning between two minibatches; its stats say what was cut short.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from wizard_env.agents.base import Agent
from wizard_env.agents.ppo_agent import LEARNED_PHASES
from wizard_env.agents.rule_agent import RuleAgent
from wizard_env.engine.actions import Phase
from wizard_env.engine.batch import WizardBatch
from wizard_env.engine.game import NUM_ACTIONS
from wizard_env.engine.observation import OBS_SIZE
from wizard_env.engine.rules import Rules
from wizard_env.util import options

from ..progress import Progress


@dataclass
class Demonstrations:
    """A teacher's decisions: observations [N, OBS_SIZE], masks [N, NUM_ACTIONS], actions [N], returns [N],
    and RuleAgent's choices [N] for the same decisions (the advice; the actions when RuleAgent teaches)."""

    observations: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray  # the acting seat's score over the rest of its episode (round or game), unscaled
    advice: np.ndarray


#: The share of a run's time budget its warm start may take: PPO has the rest.
WARM_START_SHARE = 0.5
#: The share of the warm start's time its games may take: the cloning has the rest.
GAMES_SHARE = 0.5
#: Decisions per step of the cloning.
BATCH = 1024
#: Memory the trainer takes besides its games and demonstrations (torch, numba, the model: about 0.6 GB measured).
PROCESS_BYTES = 2**30
#: Memory a cloned decision takes besides its observation: its mask, action, advice and return, and the
#: bookkeeping of its score while its episode lasts (Python lists).
DECISION_BYTES = NUM_ACTIONS + 3 * 8 + 100


def plan(cfg, teacher: bool = False) -> tuple[str, int]:
    """The phases a trainer's warm start clones and its games per player count (``cfg``: a ``TrainConfig``;
    ``teacher``: another run's agent teaches)."""
    # with advice every phase is cloned (cheaply: the policy copies its input), so that a run
    # started from this one with --init-from and another --learn begins at RuleAgent's level there too
    phases = "both" if cfg.advice or teacher else cfg.learn
    return phases, cfg.bc_games or {"bid": 2000, "both": 200, "play": 200}[phases]


def check_warm_start_memory(cfg, mix: list[Rules]) -> None:
    """ValueError naming --bc-games when the warm start's demonstrations (an observation per decision) would not fit in memory."""
    phases, games = plan(cfg, teacher=bool(cfg.init_from))
    options.check_memory("--bc-games", games, bytes_per_game(mix, phases, cfg.advice) + PROCESS_BYTES / games)


def warm_start(policy, mix: list[Rules], cfg, teacher: Agent | None = None, quiet: bool = False, log=print,
               seconds: float | None = None) -> dict:
    """Clone RuleAgent's decisions (or the ``teacher``'s, in every phase) in games of each rule set of ``mix`` into the
    MaskablePPO ``policy`` as ``cfg`` (a ``TrainConfig``) says, saying so and showing progress unless ``quiet``, in at
    most ``seconds`` (None: no limit), its games in ``GAMES_SHARE`` of them. Its stats: decisions cloned
    (``samples``), ``agreement`` and ``value_mse`` (None where nothing was cloned), minibatches done (``batches``) of
    those ``planned``, and the parts the time cut short (``stopped``: "games", "cloning")."""
    began, stopped = time.monotonic(), []

    def until(part: str, share: float) -> Callable[[], bool]:
        def stop() -> bool:  # asked before each piece of work: True cuts it short
            if seconds is None or time.monotonic() - began < share * seconds:
                return False
            stopped.append(part)
            return True
        return stop

    phases, games = plan(cfg, teacher is not None)
    counts = ", ".join(str(r.num_players) for r in mix)
    with Progress("warm start: games", games * sum(r.num_rounds for r in mix), "round", quiet, log) as progress:
        progress.say(f"warm start: playing {games:,} games of {'its agent' if teacher else 'RuleAgent'} for each player "
                     f"count ({counts}) and cloning its decisions in {cfg.bc_epochs} epoch{'s' if cfg.bc_epochs != 1 else ''} "
                     "(--bc-games, --bc-epochs)")
        demos = collect_mix(mix, games, cfg.seed, phases, cfg.episode, cfg.advice, teacher, progress.update,
                            until("games", GAMES_SHARE))
    batches = cfg.bc_epochs * -(-len(demos.actions) // BATCH)
    stats: dict = {"samples": len(demos.actions), "agreement": None, "value_mse": None, "batches": 0}
    if batches:
        with Progress("warm start: cloning", batches, "batch", quiet, log) as progress:
            stats = clone(policy, demos, cfg.bc_epochs, cfg.reward_scale, cfg.seed, smoothing=cfg.bc_smoothing,
                          progress=progress.update, stop=until("cloning", 1.0))
    if not stats["batches"]:  # the figures of a policy that learned nothing here
        stats.update(agreement=None, value_mse=None)
    return {**stats, "planned": batches, "stopped": sorted(set(stopped), key=stopped.index)}


def describe(stats: dict, seconds: float, max_minutes: float, whom: str = "RuleAgent") -> str:
    """The line of a warm start that took ``seconds`` (``stats``: ``warm_start``'s; ``max_minutes``: the session's
    budget; ``whom``: the teacher): what it cloned, and where the time budget stopped it."""
    if stats["agreement"] is None:
        line = f"warm start: cloned nothing of {whom} ({stats['samples']:,} decisions collected, {seconds:.0f} s)"
    else:
        line = (f"warm start: cloned {stats['samples']:,} decisions of {whom} in {stats['batches']:,} of "
                f"{stats['planned']:,} minibatches, agreement {stats['agreement']:.3f}, value mse {stats['value_mse']:.3f} "
                f"({seconds:.0f} s)")
    if stats["stopped"]:
        line += (f"; the time budget cut short its {' and its '.join(stats['stopped'])}: a warm start takes at most "
                 f"{WARM_START_SHARE:.0%} of --max-minutes {max_minutes:g} ({WARM_START_SHARE * max_minutes * 60:.0f} s, "
                 f"its games {GAMES_SHARE:.0%} of that), the rest is PPO's")
    return line


def decisions_per_game(rules: Rules, learn: str) -> int:
    """The most decisions of the phases ``learn`` names in one game of ``rules`` (a trump choice only
    follows a turned-up Wizard, so games usually have a few fewer)."""
    phases, n, rounds = LEARNED_PHASES[learn], rules.num_players, len(rules.hand_sizes)
    return ((Phase.TRUMP in phases) * rounds + (Phase.BID in phases) * n * rounds
            + (Phase.PLAY in phases) * n * sum(rules.hand_sizes))


def bytes_per_game(mix: list[Rules], learn: str, advice: bool) -> int:
    """The memory the demonstrations of one game of each rule set of ``mix`` take (what ``collect_mix`` holds)."""
    width = OBS_SIZE + NUM_ACTIONS * advice
    return sum(decisions_per_game(rules, learn) for rules in mix) * (4 * width + DECISION_BYTES)


def collect(rules: Rules, games: int, seed: int, learn: str, episode: str, teacher: Agent | None = None,
            advice: bool = False, progress: Callable[[int], object] | None = None) -> Demonstrations:
    """The teacher's (default RuleAgent's) decisions in the learned phases of ``games`` games where it holds every seat.

    With ``advice`` the observations carry RuleAgent's choice as a one-hot, as ``wizard_env.training.ppo.advice.AdviceVecEnv``
    gives them to the policy. ``progress(count)`` is called as ``count`` rounds end.
    """
    demos = _empty(games * decisions_per_game(rules, learn), advice)
    return _trimmed(demos, _collect_into(demos, 0, rules, games, seed, learn, episode, teacher, progress))


def collect_mix(mix: list[Rules], games: int, seed: int, learn: str, episode: str, advice: bool = False,
                teacher: Agent | None = None, progress: Callable[[int], object] | None = None,
                stop: Callable[[], bool] | None = None) -> Demonstrations:
    """``collect`` for each rule set of ``mix`` (``games`` games each), one after the other in one set of arrays
    (sized by ``bytes_per_game``: the memory is taken as it is written, and never twice). ``stop()`` True ends it
    between two steps of the games, keeping the decisions of the episodes that ended (their returns are whole)."""
    demos = _empty(games * sum(decisions_per_game(rules, learn) for rules in mix), advice)
    filled = 0
    for i, rules in enumerate(mix):
        if stop is not None and stop():
            break
        filled = _collect_into(demos, filled, rules, games, seed + 1_000 * i, learn, episode, teacher, progress, stop)
    return _trimmed(demos, filled)


def _empty(capacity: int, advice: bool) -> Demonstrations:
    # np.zeros takes pages from the system as they are first written: the unused end costs nothing
    return Demonstrations(np.zeros((capacity, OBS_SIZE + NUM_ACTIONS * advice), dtype=np.float32),
                          np.zeros((capacity, NUM_ACTIONS), dtype=bool), np.zeros(capacity, dtype=np.int64),
                          np.zeros(capacity), np.zeros(capacity, dtype=np.int64))


def _trimmed(demos: Demonstrations, size: int) -> Demonstrations:
    return Demonstrations(*(getattr(demos, f.name)[:size] for f in dataclasses.fields(Demonstrations)))


def _collect_into(demos: Demonstrations, filled: int, rules: Rules, games: int, seed: int, learn: str, episode: str,
                  teacher: Agent | None, progress: Callable[[int], object] | None,
                  stop: Callable[[], bool] | None = None) -> int:
    """``collect``'s games, written into ``demos`` from row ``filled`` on; the rows filled after them (``stop()``
    True: those of the episodes that ended by then, moved up to follow one another)."""
    learned = np.zeros(len(Phase), dtype=bool)
    learned[list(LEARNED_PHASES[learn])] = True
    base = filled
    batch = WizardBatch(rules, games, seed=seed, autoreset=False)
    rule = RuleAgent(seed=np.random.default_rng([seed, 1]))
    seat_of: list[int] = []  # by sample of this call: the acting seat, whose round scores are added to its return
    pending: list[list[int]] = [[] for _ in range(games)]  # samples of each game still collecting score
    while (live := np.flatnonzero(batch.phase != Phase.OVER)).size:
        if stop is not None and stop():
            return _drop_unfinished(demos, base, filled, [row for rows in pending for row in rows])
        o, m = batch.observe(live), batch.legal_masks(live)
        hint = rule.act_batch(o, m)
        a = hint if teacher is None else teacher.act_batch(o, m)
        keep = learned[batch.phase[live]]
        rows = np.arange(filled, filled + int(keep.sum()))
        for g, seat, row in zip(live[keep], batch.current[live][keep], rows):
            pending[g].append(int(row))
            seat_of.append(int(seat))
        demos.observations[rows, :OBS_SIZE] = o[keep]
        if demos.observations.shape[1] > OBS_SIZE:
            demos.observations[rows, OBS_SIZE + hint[keep]] = 1
        demos.masks[rows], demos.actions[rows], demos.advice[rows] = m[keep], a[keep], hint[keep]
        filled += len(rows)
        batch.step(a, live)
        ended = np.flatnonzero(batch.round_over)
        for g in ended:
            for i in pending[g]:
                demos.returns[i] += float(batch.round_scores[g, seat_of[i - base]])
            if episode == "round" or batch.game_over[g]:
                pending[g] = []
        if progress is not None and ended.size:
            progress(int(ended.size))
    return filled


def _drop_unfinished(demos: Demonstrations, base: int, filled: int, unfinished: list[int]) -> int:
    """Drop the rows ``unfinished`` of ``demos``' rows ``base`` to ``filled``, moving the others up; the rows filled after."""
    keep = np.ones(filled - base, dtype=bool)
    keep[np.asarray(unfinished, dtype=np.int64) - base] = False
    rows = base + np.flatnonzero(keep)
    for f in dataclasses.fields(Demonstrations):
        array = getattr(demos, f.name)
        array[base:base + len(rows)] = array[rows]
    return base + len(rows)


def clone(policy, demos: Demonstrations, epochs: int, reward_scale: float, seed: int,
          batch_size: int = BATCH, lr: float = 1e-3, smoothing: float = 0.0,
          progress: Callable[[int], object] | None = None, stop: Callable[[], bool] | None = None) -> dict:
    """Fit the MaskablePPO ``policy`` to the demonstrations; the final accuracy and losses, and the minibatches done
    (``stop()`` True ends the fit before the next one).

    ``smoothing`` moves that share of each target onto the legal actions uniformly, so the clone keeps
    some probability on the alternatives and PPO goes on exploring them (a policy that copies advice
    exactly would otherwise never try anything else). ``progress(1)`` is called after each minibatch.
    """
    import torch  # the train extra's: `wizard train`'s module (and so `wizard --help`) loads without it

    generator = torch.Generator().manual_seed(seed)
    obs = torch.as_tensor(demos.observations)
    masks = torch.as_tensor(demos.masks)
    actions = torch.as_tensor(demos.actions)
    targets = torch.as_tensor(demos.returns * reward_scale, dtype=torch.float32)
    optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
    policy.set_training_mode(True)
    batches = 0
    for _ in range(epochs):
        order = torch.randperm(len(obs), generator=generator)
        for start in range(0, len(obs), batch_size):
            if stop is not None and stop():
                break
            batches += 1
            idx = order[start:start + batch_size]
            values, log_prob, _ = policy.evaluate_actions(obs[idx], actions[idx], action_masks=masks[idx])
            policy_loss = -log_prob.mean()
            if smoothing:
                logits = policy.get_distribution(obs[idx], action_masks=masks[idx].numpy()).distribution.logits
                legal = masks[idx]
                uniform = -(torch.where(legal, logits, 0).sum(dim=1) / legal.sum(dim=1)).mean()
                policy_loss = (1 - smoothing) * policy_loss + smoothing * uniform
            value_loss = torch.nn.functional.mse_loss(values.flatten(), targets[idx])
            optimizer.zero_grad()
            (policy_loss + 0.5 * value_loss).backward()
            optimizer.step()
            if progress is not None:
                progress(1)
    policy.set_training_mode(False)
    with torch.no_grad():
        idx = torch.arange(min(len(obs), 20_000))
        dist = policy.get_distribution(obs[idx], action_masks=masks[idx].numpy())
        agree = (dist.distribution.probs.argmax(dim=1) == actions[idx]).float().mean()
        values = policy.predict_values(obs[idx]).flatten()
        value_mse = torch.nn.functional.mse_loss(values, targets[idx])
    return {"samples": len(obs), "agreement": float(agree), "value_mse": float(value_mse), "batches": batches}
