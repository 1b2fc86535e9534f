"""Behaviour cloning from RuleAgent: the starting point of ``wizard train`` before PPO.

PPO from random weights spends most of a short budget rediscovering how to follow suit and bid
near one's strength. Instead the policy first imitates RuleAgent's decisions in the phases it
learns (cross-entropy on RuleAgent's actions, over legal actions only) and its value head fits the
score those decisions led to, both from games where RuleAgent plays every seat. ``act_batch``
makes that data cheap: a few hundred games give a few hundred thousand decisions.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import torch

from wizard_env.agents.base import Agent
from wizard_env.agents.ppo_agent import LEARNED_PHASES, one_hot
from wizard_env.agents.rule_agent import RuleAgent
from wizard_env.engine.actions import Phase
from wizard_env.engine.batch import WizardBatch
from wizard_env.engine.rules import Rules


@dataclass
class Demonstrations:
    """A teacher's decisions: observations [N, OBS_SIZE], masks [N, NUM_ACTIONS], actions [N], returns [N],
    and RuleAgent's choices [N] for the same decisions (the advice; the actions when RuleAgent teaches)."""

    observations: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray  # the acting seat's score over the rest of its episode (round or game), unscaled
    advice: np.ndarray


def collect(rules: Rules, games: int, seed: int, learn: str, episode: str, teacher: Agent | None = None) -> Demonstrations:
    """The teacher's (default RuleAgent's) decisions in the learned phases of ``games`` games where it holds every seat."""
    learned = np.zeros(len(Phase), dtype=bool)
    learned[list(LEARNED_PHASES[learn])] = True
    batch = WizardBatch(rules, games, seed=seed, autoreset=False)
    rule = RuleAgent(seed=np.random.default_rng([seed, 1]))
    obs, masks, actions, advice = [], [], [], []
    returns: list[float] = []  # by sample: the acting seat's score, added as its rounds end
    seat_of: list[int] = []
    pending: list[list[int]] = [[] for _ in range(games)]  # samples of each game still collecting score
    while (live := np.flatnonzero(batch.phase != Phase.OVER)).size:
        o, m = batch.observe(live), batch.legal_masks(live)
        hint = rule.act_batch(o, m)
        a = hint if teacher is None else teacher.act_batch(o, m)
        keep = learned[batch.phase[live]]
        for g, seat in zip(live[keep], batch.current[live][keep]):
            pending[g].append(len(returns))
            returns.append(0.0)
            seat_of.append(int(seat))
        obs.append(o[keep])
        masks.append(m[keep])
        actions.append(a[keep])
        advice.append(hint[keep])
        batch.step(a, live)
        for g in np.flatnonzero(batch.round_over):
            for i in pending[g]:
                returns[i] += float(batch.round_scores[g, seat_of[i]])
            if episode == "round" or batch.game_over[g]:
                pending[g] = []
    return Demonstrations(np.concatenate(obs), np.concatenate(masks).astype(bool), np.concatenate(actions),
                          np.array(returns), np.concatenate(advice))


def collect_mix(mix: list[Rules], games: int, seed: int, learn: str, episode: str, advice: bool = False,
                teacher: Agent | None = None) -> Demonstrations:
    """``collect`` for each rule set of ``mix`` (``games`` games each), concatenated.

    With ``advice`` the observations carry RuleAgent's choice as a one-hot, as
    ``wizard_env.training.advice.AdviceVecEnv`` gives them to the policy.
    """
    parts = [collect(rules, games, seed + 1_000 * i, learn, episode, teacher) for i, rules in enumerate(mix)]
    demos = Demonstrations(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in dataclasses.fields(Demonstrations)))
    if advice:
        demos.observations = np.concatenate([demos.observations, one_hot(demos.advice)], axis=1)
    return demos


def clone(policy, demos: Demonstrations, epochs: int, reward_scale: float, seed: int,
          batch_size: int = 1024, lr: float = 1e-3, smoothing: float = 0.0) -> dict[str, float]:
    """Fit the MaskablePPO ``policy`` to the demonstrations; the final accuracy and losses.

    ``smoothing`` moves that share of each target onto the legal actions uniformly, so the clone keeps
    some probability on the alternatives and PPO goes on exploring them (a policy that copies advice
    exactly would otherwise never try anything else).
    """
    generator = torch.Generator().manual_seed(seed)
    obs = torch.as_tensor(demos.observations)
    masks = torch.as_tensor(demos.masks)
    actions = torch.as_tensor(demos.actions)
    targets = torch.as_tensor(demos.returns * reward_scale, dtype=torch.float32)
    optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
    policy.set_training_mode(True)
    for _ in range(epochs):
        order = torch.randperm(len(obs), generator=generator)
        for start in range(0, len(obs), batch_size):
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
    policy.set_training_mode(False)
    with torch.no_grad():
        idx = torch.arange(min(len(obs), 20_000))
        dist = policy.get_distribution(obs[idx], action_masks=masks[idx].numpy())
        agree = (dist.distribution.probs.argmax(dim=1) == actions[idx]).float().mean()
        values = policy.predict_values(obs[idx]).flatten()
        value_mse = torch.nn.functional.mse_loss(values, targets[idx])
    return {"samples": len(obs), "agreement": float(agree), "value_mse": float(value_mse)}
