"""Speed of the engines, measured against peers in the same run (``wizard bench``, ``wizard_env.cli.bench``,
runs this).

Every figure is a rate over a fixed wall-clock window, after a short warm-up, with random legal
actions drawn from seeded generators. Machines are noisy, so read the ratios, which compare
figures taken in the same run. Each loop picks its actions as cheaply as its API allows, so that
the pick weighs about as little on every side: the one-at-a-time loops (the AEC env, OpenSpiel)
index their legal actions with uniforms drawn from a numpy Generator in blocks (``Picker``; a
call of the Generator for each pick took about 1.8 µs, half of OpenSpiel's decision with no
observation), the batched engine picks for all its games in one compiled call.

1. the AEC env (``wizard_env.env``): an ``agent_iter()`` loop that reads ``last()`` (observation
   and mask built every step) and plays a random legal action; decisions per second.
2. OpenSpiel's ``oh_hell`` (C++ through pyspiel, when installed: ``pip install -c constraints.txt -e '.[bench]'``) with the
   same loop shape, its information-state tensor taken as a numpy float32 array each step; also
   with no observation at all. Chance nodes (the deal) are not counted as decisions.
3. the batched engine, ``WizardBatch``: one step of all B games per iteration, with the observations
   and masks of the seats that act next (``step_observe``, one compiled call), random legal actions
   from one uniform draw per game (``kernels.random_legal``); decisions per second and bytes of
   state per game.
4. learner steps per second of the batched VecEnv with RuleAgent opponents, against SB3's
   ``DummyVecEnv`` of single-agent wrappers over the one-game engine with the same opponents.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from typing import Callable

import numpy as np

from wizard_env.util.files import write_atomic
from wizard_env.util.stopwatch import rate


class Picker:
    """Uniformly random indices from a seeded numpy Generator, its uniforms drawn a block at a time."""

    def __init__(self, seed: int, block: int = 4096):
        self.rng, self.block = np.random.default_rng(seed), block
        self.uniforms: list[float] = []

    def __call__(self, count: int) -> int:
        """An index in 0 .. count - 1, each as likely."""
        if not self.uniforms:
            self.uniforms = self.rng.random(self.block).tolist()[::-1]
        return int(self.uniforms.pop() * count)


def aec_env_loop(num_players: int, seed: int) -> Callable[[], int]:
    """One game of the AEC env per call, random legal actions; returns its decisions."""
    from wizard_env.envs.aec import env as make_env

    env = make_env(num_players=num_players)
    pick = Picker(seed)
    seeds = iter(range(seed, 2**62))

    def game() -> int:
        env.reset(seed=next(seeds))
        decisions = 0
        for _ in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(observation["action_mask"])
            env.step(int(legal[pick(len(legal))]))
            decisions += 1
        return decisions

    return game


def openspiel_loop(num_players: int, seed: int, tensor: bool,
                   pick: Callable[[int], int] | None = None) -> Callable[[], int] | None:
    """One game of OpenSpiel oh_hell per call (None if pyspiel is missing); returns its decisions.

    ``pick(count)`` chooses each action's index, chance outcomes included (default: ``Picker(seed)``).
    """
    try:
        import pyspiel
    except ImportError:
        return None
    game_type = pyspiel.load_game("oh_hell", {"players": num_players})
    pick = pick or Picker(seed)

    def game() -> int:
        state = game_type.new_initial_state()
        decisions = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[pick(len(outcomes))][0])
                continue
            if tensor:
                np.asarray(state.information_state_tensor(), dtype=np.float32)
            legal = state.legal_actions()
            state.apply_action(legal[pick(len(legal))])
            decisions += 1
        return decisions

    return game


def batch_loop(num_players: int, batch_size: int, seed: int) -> tuple[Callable[[], int], float]:
    """One step of a WizardBatch per call, with the observations and masks of the seats that act next
    (``step_observe``); random legal actions from one uniform draw per game. Returns (step, bytes per game)."""
    from wizard_env.engine import kernels
    from wizard_env.engine.batch import WizardBatch
    from wizard_env.engine.rules import Rules

    batch = WizardBatch(Rules.make(num_players), batch_size, seed=seed)
    rng = np.random.default_rng(seed)
    out = batch.observe()
    masks = batch.legal_masks()
    actions = np.empty(batch_size, dtype=np.int64)

    def step() -> int:
        batch.step_observe(kernels.random_legal(masks, rng.random(batch_size), actions), out, masks)
        return batch_size

    return step, batch.state_nbytes()


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row of bool masks [k, NUM_ACTIONS]."""
    picks = rng.integers(0, masks.sum(axis=1))
    return (np.cumsum(masks, axis=1) <= picks[:, None]).sum(axis=1)


def batched(num_envs: int, args: argparse.Namespace):
    """The batched VecEnv under test (``args``: players, opponents, seed)."""
    from wizard_env.envs.vec_env import WizardVecEnv

    return WizardVecEnv(num_envs, seed=args.seed, num_players=args.players, opponents=args.opponents)


def dummy(num_envs: int, args: argparse.Namespace):
    """The reference: SB3's DummyVecEnv of single-game envs with the same opponents."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    from wizard_env.envs.single_agent import WizardSingleAgentEnv

    env = DummyVecEnv([lambda: WizardSingleAgentEnv(num_players=args.players, opponents=args.opponents)] * num_envs)
    env.seed(args.seed)
    return env


def steps_per_second(env, seconds: float, seed: int) -> float:
    """Learner decisions per second over whole VecEnv steps taken for at least ``seconds``."""
    from sb3_contrib.common.maskable.utils import get_action_masks

    rng = np.random.default_rng(seed)
    env.reset()
    env.step(random_legal(get_action_masks(env), rng))  # warm up

    def step() -> int:
        env.step(random_legal(get_action_masks(env), rng))
        return env.num_envs

    return rate(step, seconds, warmup=0)


def vec_env_rates(num_players: int, num_envs: int, seed: int, seconds: float, opponents: str = "rule") -> dict[str, float]:
    """Learner steps per second: batched WizardVecEnv vs a DummyVecEnv of single-agent wrappers."""
    setup = argparse.Namespace(players=num_players, opponents=opponents, seed=seed)
    dummy_envs = min(num_envs, 16)  # a DummyVecEnv steps its games one by one: its rate does not grow with size
    return {
        "batched": steps_per_second(batched(num_envs, setup), seconds, seed),
        "dummy": steps_per_second(dummy(dummy_envs, setup), seconds, seed),
        "dummy_envs": dummy_envs,
    }


def machine() -> dict:
    """What the figures were measured on."""
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
    }


def run_all(num_players: int, sizes: list[int], seconds: float, seed: int, num_envs: int, log=print) -> dict:
    """Every measurement of the module docstring; returns the results as a dict."""
    results: dict = {"num_players": num_players, "seconds": seconds, "seed": seed, "machine": machine()}
    log("measuring the AEC env ...")
    results["aec_env"] = rate(aec_env_loop(num_players, seed), seconds)
    for key, tensor in (("openspiel_tensor", True), ("openspiel_no_observation", False)):
        loop = openspiel_loop(num_players, seed, tensor)
        if loop is not None:
            log(f"measuring OpenSpiel oh_hell ({'tensor as numpy' if tensor else 'no observation'}) ...")
        results[key] = None if loop is None else rate(loop, seconds)
    results["batch"] = []
    for size in sizes:
        log(f"measuring the batched engine at B = {size} ...")
        step, nbytes = batch_loop(num_players, size, seed)
        results["batch"].append({"batch_size": size, "decisions_per_s": rate(step, seconds), "state_bytes_per_game": nbytes})
    try:
        import stable_baselines3  # noqa: F401
    except ImportError:
        log("skipping the VecEnvs: stable-baselines3 is not installed (pip install -c constraints.txt -e '.[train]')")
        num_envs = 0
    if num_envs:
        log(f"measuring the VecEnvs ({num_envs} games, RuleAgent opponents) ...")
        results["vec_env"] = {"num_envs": num_envs, **vec_env_rates(num_players, num_envs, seed, seconds)}
    return results


def table(results: dict) -> str:
    """The results as a Markdown table with the ratios the targets are stated in."""
    spiel, bare = results["openspiel_tensor"], results["openspiel_no_observation"]

    def vs(value: float, peer: float | None) -> str:
        return f"{value / peer:.2f}x" if peer else "n/a (pip install -c constraints.txt -e '.[bench]')"

    rows = [("AEC env (agent_iter, last(), random legal)", results["aec_env"], "decisions/s", vs(results["aec_env"], spiel))]
    if spiel:
        rows.append(("OpenSpiel oh_hell, tensor as numpy", spiel, "decisions/s", "1.00x"))
        rows.append(("OpenSpiel oh_hell, no observation", bare, "decisions/s", vs(bare, spiel)))
    for entry in results["batch"]:
        rows.append(
            (f"batched engine, B = {entry['batch_size']} ({entry['state_bytes_per_game']:.0f} B state/game)",
             entry["decisions_per_s"], "decisions/s", vs(entry["decisions_per_s"], spiel) + (f", {entry['decisions_per_s'] / bare:.2f}x no-obs" if bare else ""))
        )
    if "vec_env" in results:
        v = results["vec_env"]
        rows.append((f"DummyVecEnv of single-agent envs ({v['dummy_envs']} games, rule opponents)", v["dummy"], "learner steps/s", "1.00x"))
        rows.append((f"batched WizardVecEnv ({v['num_envs']} games, rule opponents)", v["batched"], "learner steps/s", f"{v['batched'] / v['dummy']:.1f}x DummyVecEnv"))
    lines = [
        f"{results['num_players']} players, standard rules, {results['seconds']:g} s per figure, seed {results['seed']}; "
        f"Python {results['machine']['python']}, numpy {results['machine']['numpy']}, {results['machine']['cpus']} CPUs",
        "",
        "| measurement | rate | unit | ratio (to OpenSpiel with tensor) |",
        "| --- | ---: | --- | --- |",
    ]
    lines += [f"| {name} | {value:,.0f} | {unit} | {ratio} |" for name, value, unit, ratio in rows]
    return "\n".join(lines)


def write_json(results: dict, path: str) -> None:
    """Write ``results`` to ``path`` atomically (temporary file, then rename)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    write_atomic(path, lambda file: json.dump(results, file, indent=2))
