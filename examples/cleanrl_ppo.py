"""A CleanRL-style single-file masked PPO in plain torch, on ``WizardVecEnv`` (one learner seat against RuleAgents).

    python examples/cleanrl_ppo.py                          # 20,480 learner decisions, about 10 s
    python examples/cleanrl_ppo.py --total-timesteps 500000 --rounds 15

Follows CleanRL's ``ppo.py`` (rollout, GAE, clipped surrogate, value loss, minibatch epochs) with one
change: the logits of illegal actions are set to the lowest float before sampling and in the loss, from
``envs.action_masks()``. ``WizardVecEnv`` is a stable-baselines3 ``VecEnv``: ``reset()`` returns the
observations, ``step(actions)`` returns ``obs, rewards, dones, infos``, and a finished game is replaced
by the next one in its slot (``infos[i]["episode"]["r"]`` holds its return). No wrapper is needed.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

from wizard_env import NUM_ACTIONS, OBS_SIZE
from wizard_env.envs.vec_env import WizardVecEnv


@dataclass
class Args:
    """One run."""

    seed: int = 0  #: seeds the games, the opponents and torch
    total_timesteps: int = 20_480  #: learner decisions in all, rounded up to whole rollouts
    num_envs: int = 64  #: games played side by side
    num_steps: int = 32  #: steps per game per rollout
    num_players: int = 4
    rounds: int = 2  #: rounds 1..rounds (short games)
    opponents: str = "rule"  #: the other seats' agent
    learning_rate: float = 3e-4
    gamma: float = 1.0  #: no discount within a game
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 4
    clip_coef: float = 0.2
    ent_coef: float = 0.0
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    reward_scale: float = 0.01  #: round scores (tens of points) to about unit size
    hidden: int = 128  #: width of the two hidden layers


@dataclass
class Result:
    """What a run did: the weights before and after, and the decisions it played."""

    initial: dict[str, torch.Tensor]
    final: dict[str, torch.Tensor]
    decisions: int  #: learner actions taken
    illegal: int  #: of those, actions outside the learner's mask (the env would have raised)
    mean_return: float  #: mean final total of the learner's finished games in the last rollout, in points (nan if none)


class Agent(nn.Module):
    """CleanRL's actor-critic, on Wizard's observation and masked actions."""

    def __init__(self, hidden: int):
        super().__init__()
        self.critic = nn.Sequential(nn.Linear(OBS_SIZE, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                    nn.Linear(hidden, 1))
        self.actor = nn.Sequential(nn.Linear(OBS_SIZE, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                   nn.Linear(hidden, NUM_ACTIONS))

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x)

    def get_action_and_value(self, x: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None):
        logits = self.actor(x).masked_fill(~mask, torch.finfo(torch.float32).min)
        probs = Categorical(logits=logits)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


def main(args: Args) -> Result:
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    batch_size = args.num_envs * args.num_steps
    minibatch_size = batch_size // args.num_minibatches
    num_iterations = -(-args.total_timesteps // batch_size)

    envs = WizardVecEnv(num_envs=args.num_envs, seed=args.seed, num_players=args.num_players, rounds=args.rounds,
                        opponents=args.opponents, reward_scale=args.reward_scale)
    agent = Agent(args.hidden)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    initial = {k: v.clone() for k, v in agent.state_dict().items()}

    obs = torch.zeros((args.num_steps, args.num_envs, OBS_SIZE))
    masks = torch.zeros((args.num_steps, args.num_envs, NUM_ACTIONS), dtype=torch.bool)
    actions = torch.zeros((args.num_steps, args.num_envs), dtype=torch.long)
    logprobs = torch.zeros((args.num_steps, args.num_envs))
    rewards = torch.zeros((args.num_steps, args.num_envs))
    dones = torch.zeros((args.num_steps, args.num_envs))
    values = torch.zeros((args.num_steps, args.num_envs))

    next_obs = torch.as_tensor(envs.reset())
    next_done = torch.zeros(args.num_envs)
    decisions = illegal = 0
    mean_return = float("nan")
    start = time.time()
    for iteration in range(1, num_iterations + 1):
        returns_seen: list[float] = []
        for step in range(args.num_steps):
            obs[step], dones[step] = next_obs, next_done
            masks[step] = torch.as_tensor(envs.action_masks())
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs, masks[step])
            values[step], actions[step], logprobs[step] = value.flatten(), action, logprob
            illegal += int((~masks[step].gather(1, action[:, None])).sum())
            decisions += args.num_envs
            step_obs, reward, done, infos = envs.step(action.numpy())
            rewards[step] = torch.as_tensor(reward, dtype=torch.float32)
            next_obs, next_done = torch.as_tensor(step_obs), torch.as_tensor(done, dtype=torch.float32)
            returns_seen += [info["episode"]["r"] / args.reward_scale for info in infos if "episode" in info]

        # Generalized advantage estimation, bootstrapped from the value of the next observation.
        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            lastgaelam = torch.zeros(args.num_envs)
            for t in reversed(range(args.num_steps)):
                nextnonterminal = 1.0 - (next_done if t == args.num_steps - 1 else dones[t + 1])
                nextvalues = next_value if t == args.num_steps - 1 else values[t + 1]
                delta = rewards[t] + args.gamma * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
            returns = advantages + values

        b_obs, b_masks = obs.reshape(-1, OBS_SIZE), masks.reshape(-1, NUM_ACTIONS)
        b_actions, b_logprobs = actions.reshape(-1), logprobs.reshape(-1)
        b_advantages, b_returns, b_values = advantages.reshape(-1), returns.reshape(-1), values.reshape(-1)
        b_inds = np.arange(batch_size)
        shuffle = np.random.default_rng([args.seed, iteration])
        for _ in range(args.update_epochs):
            shuffle.shuffle(b_inds)
            for lo in range(0, batch_size, minibatch_size):
                mb = b_inds[lo:lo + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb], b_masks[mb], b_actions[mb])
                ratio = (newlogprob - b_logprobs[mb]).exp()
                mb_adv = b_advantages[mb]
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg_loss = torch.max(-mb_adv * ratio, -mb_adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_loss = 0.5 * (newvalue.flatten() - b_returns[mb]).pow(2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        mean_return = float(np.mean(returns_seen)) if returns_seen else float("nan")
        print(f"iteration {iteration}/{num_iterations}: {decisions} decisions, {len(returns_seen)} games ended, "
              f"learner's mean total {mean_return:+.1f}, loss {loss.item():.3f}, {time.time() - start:.0f}s", flush=True)
    envs.close()
    final = {k: v.clone() for k, v in agent.state_dict().items()}
    print(f"done: {decisions} decisions, {illegal} illegal, learner's mean total {mean_return:+.1f} in the last rollout")
    return Result(initial, final, decisions, illegal, mean_return)


def parse_args(argv: list[str] | None = None) -> Args:
    defaults = Args()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--total-timesteps", type=int, default=defaults.total_timesteps, help="learner decisions (the budget)")
    parser.add_argument("--num-envs", type=int, default=defaults.num_envs, help="games side by side")
    parser.add_argument("--num-steps", type=int, default=defaults.num_steps, help="steps per game per rollout")
    parser.add_argument("--rounds", type=int, default=defaults.rounds, help="rounds 1..N per game")
    return Args(**vars(parser.parse_args(argv)))


if __name__ == "__main__":
    main(parse_args())
