"""The settings of ``wizard train`` (``TrainConfig``), below the trainer (``train``) and its resume check
(``train_resume``), which both import it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TrainConfig:
    """Everything that defines a run (saved as config.json and inside every checkpoint)."""

    learn: str = "both"  #: phases the network decides: both, bid (trump and bids) or play
    mix: list[int] = field(default_factory=lambda: [3, 4, 5, 6])  #: player counts of the training games (one network)
    timesteps: int = 3_000_000  #: learner decisions of PPO training after the warm start, rounded up to whole rollouts
    max_minutes: float = 18.0  #: wall time of a session, its warm start included (at most half of it): PPO stops at the last whole rollout, leaving time for the final evaluation (a final checkpoint; --resume continues)
    seed: int = 0  #: seeds the games, the opponents, the warm start and torch
    num_envs: int = 512  #: games played in lockstep
    n_steps: int = 16  #: steps per game per rollout (a rollout is num_envs * n_steps decisions)
    batch_size: int = 2048  #: PPO minibatch
    n_epochs: int = 6  #: PPO epochs per rollout
    learning_rate: float = 1e-4  #: PPO's step size (3e-4 drifted from the cloned play, -15 at 150k steps; 1e-4 improved slowly)
    ent_coef: float = 0.0  #: entropy bonus (0: the smoothed clone keeps exploring; a bonus only added noise)
    clip_range: float = 0.2  #: PPO's clip of the policy ratio
    gamma: float = 1.0  #: discount within an episode (1: a round's scores are not discounted)
    gae_lambda: float = 1.0  #: GAE lambda (1: Monte Carlo returns; the critic explains little of a round's score)
    episode: str = "round"  #: the learner's episode: a round (less variance) or a game
    reward_scale: float = 0.01  #: round scores (about -100..+200) to about -1..+2
    hidden: list[int] = field(default_factory=lambda: [256, 256])  #: hidden layers of policy and value nets
    advice: bool = True  #: the policy also reads RuleAgent's choice (``wizard_env.training.ppo.advice``)
    activation: str = "relu"  #: activation of the hidden layers: relu or tanh
    pool: dict[str, float] = field(default_factory=lambda: {"rule": 0.5, "self": 0.45, "random": 0.05})  #: opponent mix as weights
    snapshots: int = 8  #: self-play snapshots kept in the pool (the newest)
    snapshot_every: int = 250_000  #: steps between snapshots
    bc_games: int = 0  #: RuleAgent games to clone per player count (0: 200, or 2,000 for --learn bid --no-advice)
    bc_epochs: int = 3  #: epochs of cloning RuleAgent's decisions (0: no warm start, PPO from random weights)
    bc_smoothing: float = 0.1  #: share of each cloned target spread over the legal actions (keeps PPO exploring)
    target_kl: float = 0.0  #: stop a rollout's PPO epochs early past this KL (0: never)
    eval_every: int = 500_000  #: steps between evaluations against RuleAgent
    eval_deals: int = 200  #: duplicate deals per evaluation (each played in every seat rotation)
    checkpoint_every: int = 250_000  #: steps between checkpoints
    torch_threads: int = 1  #: torch threads (one: on a busy 2-core machine two threads ran 7x slower)
    init_from: str = ""  #: start from this checkpoint's weights instead of the warm start (same network)
