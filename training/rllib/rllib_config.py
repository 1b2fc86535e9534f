"""The settings of ``wizard train --backend rllib`` (``RLlibConfig``), below the trainer (``rllib_train``) and
the Ray helpers (``rllib_cluster``), which both import it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RLlibConfig:
    """Everything that defines an RLlib run (saved as config.json and inside every exported checkpoint).

    The settings that ``wizard train`` shares with the sb3 backend have its defaults, so the command line and
    this class agree.
    """

    timesteps: int = 3_000_000  #: decisions (of all seats) to sample, rounded up to whole iterations
    max_minutes: float = 18.0  #: stop after this much wall time, at the end of an iteration
    seed: int = 0  #: seeds RLlib (env runners' games, torch)
    num_env_runners: int = 1  #: Ray actors that play games (0: the driver plays them)
    envs_per_runner: int = 4  #: games each env runner steps together
    iteration_steps: int = 8000  #: decisions sampled per PPO iteration (train_batch_size_per_learner)
    batch_size: int = 2048  #: PPO minibatch
    n_epochs: int = 6  #: PPO epochs per iteration
    learning_rate: float = 1e-4  #: PPO's step size
    ent_coef: float = 0.0  #: entropy bonus
    clip_range: float = 0.2  #: PPO's clip of the policy ratio
    gamma: float = 1.0  #: discount (1: a game's scores are not discounted)
    gae_lambda: float = 1.0  #: GAE lambda (1: Monte Carlo returns)
    reward_scale: float = 0.01  #: round scores (about -100..+200) to about -1..+2
    hidden: list[int] = field(default_factory=lambda: [256, 256])  #: hidden layers of the policy and value encoders
    activation: str = "relu"  #: activation of the hidden layers: relu or tanh
    checkpoint_every: int = 250_000  #: decisions between checkpoints
    torch_threads: int = 1  #: torch threads of the driver (the learner)
