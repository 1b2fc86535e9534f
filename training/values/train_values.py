"""Learning bids and card play from rollout values, one policy-improvement step per iteration (``wizard train-values``,
``wizard_env.cli.train_values``).

Each iteration has three parts, all in ``--out``:

1. **Data** (``data/iter-K/chunk-N.npz``, each chunk written atomically, so a killed run keeps every finished
   chunk; about 0.3 kB a decision, ``wizard_env.training.values.samples``): games played by the current agent at every seat (RuleAgent in iteration 0); at a ``--share`` of
   the decisions every legal action is tried on copies of the deal and the round is played out by the current
   agent (``wizard_env.training.values.rollout_values``): each action's round score in that deal. With ``--targets search``
   the values come from search instead: each action's mean round score over ``--search-samples`` deals redrawn from
   what the acting player sees (``engine.determinize``), each played out by the current agent: what ``pimc``
   chooses by, so each iteration distils search on top of the previous agent into the next (expert iteration). In a
   ``--rule-tables`` share of the games the agent holds one seat against RuleAgents, in a ``--pool-tables`` share
   against one agent of ``--pool`` (``wizard_env.training.values.opponent_pool``: earlier networks, the run's own with
   ``previous``), there and in the rollouts, and only its decisions are kept (``rollout_values.table_seats``). Settings
   and their checks: ``wizard_env.training.values.values_config``. ``--workers`` processes
   (``wizard_env.util.workers``: Ctrl-C stops them within seconds, one stopped mid-chunk writes nothing, and they die
   with the run). A chunk is read whole and checked, so a damaged one is named with its remedy: delete it.
2. **Fit** (``wizard_env.training.values.rollout_values.fit``): a network from the observation and RuleAgent's choice to
   the value of each action, fitted to those scores. The new agent plays the argmax, with ``--margin``
   points added to RuleAgent's choice (the checkpoint's ``advice_bonus``): it departs from RuleAgent only
   where it expects to gain more than that, so noise in the fit does not turn into play. The agent is
   ``checkpoints/iter-K.npz`` and ``latest.npz``, in the format of ``PPOAgent`` (``wizard eval --agents ppo:PATH``).
3. **Evaluation**: duplicate deals against RuleAgent at ``--players``, a row of ``curve.csv``. Its ``wall_s``, like
   the progress lines' minutes, is the run's wall time over all its sessions: each checkpoint saves it
   (``wall_seconds``), and a resumed run goes on from the last finished iteration's (the time a killed session
   spent on an unfinished iteration is not counted).

Iteration K+1 starts from iteration K's weights and collects its data with iteration K's agent, so each
iteration improves on the agent of the one before (against itself as well as against RuleAgent); with ``--gate``,
from the last iteration the gate kept (``wizard_env.training.evaluation.gate``: one that climbed head to head and in self-play). ``--start
CHECKPOINT`` gives iteration 0 that role: its data are collected by that agent (the shipped ``ppo``, say) and its fit
starts from its weights, so expert iteration can start from a trained network rather than from RuleAgent. With
``--data all`` it fits the data of every iteration so far: the values of a mix of the earlier agents, as in
fictitious play, which kept the improvement steps from undoing each other (model card). ``--data-from DIR,...`` adds
the data of earlier runs to every fit, before the run's own (``data_from_chunks``): every iteration each run's
config.json names (fewer where ``--patience`` stopped it), as it names them when the fit reads them, so a run named
there should be finished first.

**From scratch** (``--no-advice``, ``ValuesConfig.advice`` False; ``wizard baseline values`` runs it): nothing comes
from RuleAgent but the play of the seats it holds as an opponent (``--rule-tables``, and the evaluations). The
network reads the observation alone, its first fit starts from random weights, and it plays the plain argmax of its
values (no margin). Iteration 0's games and rollouts are uniformly random legal actions (``collect_values(...,
advice=False)``), each later iteration's the network of the one before; ``previous`` in ``--pool`` is random play for
iteration 0. Each decision is stored with the action played where RuleAgent's choice is stored otherwise, so the fit's
held-out figures compare the new network with the agent that played. The options that need RuleAgent are refused
(``values_config.check_from_scratch``): ``--features``, a margin, ``--learn bid`` or ``play``, and a ``--start`` network
that reads advice. ``--search-top`` keeps its meaning, the action played taking the place of RuleAgent's choice.

``run_training(..., minutes=M)`` (``--minutes``, ``wizard baseline values``) caps the run's wall time, over all its
sessions: once M minutes have passed, no
new chunk is collected and the run stops at the last finished iteration (the chunks of the unfinished one stay for
``--resume``); the first iteration is always finished, so a run has an agent. ``--patience`` stops a gated run
the same way once its gate has rejected that many iterations in a row (``gate.iterations_played``). ``--soup`` judges an
iteration after rejected ones as the mean of its fit's weights and theirs (``ValuesTrainer.soup``, ``gate``).

The module runs past 400 lines because ``ValuesTrainer`` is one run: its data, fits, gate and stops share the
run's folder, settings and clock; the rules they apply live beside it (``gate``, ``chunk_worker``, ``values_config``),
and the lines it reports as it goes in ``values_progress``.
"""

from __future__ import annotations

import dataclasses
import time
from concurrent.futures import FIRST_COMPLETED, Future, wait
from pathlib import Path

import numpy as np

from wizard_env.agents.ppo_agent import PPOAgent, load_checkpoint, phase_bonus, save_checkpoint
from wizard_env.agents.rule_agent import RuleAgent
from wizard_env.util.files import remove_temps
from wizard_env.util.workers import Workers
from wizard_env.engine.rules import Rules

from . import rollout_values as rv
from .. import train_report
from .chunk_worker import CHUNK_RECOVERY, _chunk_samples, _collect_chunk, chunk_task
from ..common import rules_json, run_lock
from ..evaluation.gate import (confirm_seed, confirmed, describe, gate_path, gate_seed, iterations_played, play_gate,
                               read_gate, write_gate)
from .opponent_pool import pool_specs, read_checkpoints
from .ray_collect import RayWorkers, most_decisions
from ..rllib.rllib_cluster import check_address
from ..run_folder import VALUES, baseline, new_folder, resume_folder
from .values_progress import ChunkTally, fit_line, resumed_line
from .values_config import (EVAL_SEED_OFFSET, SAMPLE_BYTES, ValuesConfig, advice_bonus, check_config, check_resume,
                            checkpoint_config, earlier_runs, resumed_config)
from .zero import initial_path, write_initial


class ValuesTrainer:
    """One run: its folder, its iterations and the bookkeeping."""

    def __init__(self, cfg: ValuesConfig, rules: Rules, out: Path, quiet: bool = False, log=print,
                 rounds: str | int | list[int] = "standard", minutes: float | None = None):
        check_config(cfg)
        self.cfg, self.rules, self.out, self.quiet, self.log = cfg, rules, Path(out), quiet, log
        self.minutes = minutes  #: the run's wall-time budget (None: none), checked before each new chunk
        self.samples = 0  #: decisions collected by the finished iterations
        self.stopped_by = ""  #: "minutes" once the budget stopped the run, "patience" once --patience did
        self.ended: float | None = None  #: when ``run`` returned or raised
        self.mix = [Rules.make(n, rounds, rules.bidding.value, rules.bid_total_rule, rules.foresight) for n in cfg.mix]
        self.started = time.monotonic()
        self.curve = train_report.Curve(self.out / "curve.csv")
        self.earlier_runs: list[Path] = []  #: the chunks of the ``--data-from`` runs, which every fit reads first
        #: the network before iteration 0: ``--start``, or a ``--zero`` run's random one (``zero.initial_path``)
        self.start = cfg.start or (str(initial_path(self.out)) if cfg.zero else "")
        self.resumed = False  #: whether ``run`` continues a run (``--resume``): it says from where

    def checkpoint(self, iteration: int) -> Path:
        """Where iteration ``iteration``'s agent is saved."""
        return self.out / "checkpoints" / f"iter-{iteration}.npz"

    def before(self, iteration: int) -> str:
        """The checkpoint of the agent that collects ``iteration``'s data and whose weights its fit starts from: the
        previous iteration's (under ``--gate``, the last one the gate kept), or ``--start`` ("": RuleAgent, or with
        ``--no-advice`` random play, collects, and the fit starts fresh)."""
        kept = [k for k in range(iteration) if (self.verdict(k) or {}).get("kept")]
        return str(self.checkpoint(kept[-1])) if kept else self.start

    def verdict(self, iteration: int) -> dict | None:
        """The gate's verdict on ``iteration`` (None: not judged yet); ``{"kept": True}`` for one not gated."""
        return read_gate(gate_path(self.checkpoint(iteration))) if self.gated(iteration) else {"kept": True}

    def gated(self, iteration: int) -> bool:
        """Whether ``iteration``'s network must pass ``--gate`` (not iteration 0 without ``--start``: no network before it)."""
        return bool(self.cfg.gate and (iteration or self.start))

    def finished(self, iteration: int) -> bool:
        """Whether ``iteration`` has its checkpoint and, if gated, the gate's verdict on it."""
        path = self.checkpoint(iteration)
        return path.is_file() and (not self.gated(iteration) or read_gate(gate_path(path)) is not None)

    def played(self) -> int:
        """The iterations the run plays: ``--iterations``, or fewer once ``--patience`` stops it (``gate.iterations_played``)."""
        return iterations_played(self.cfg.iterations, self.cfg.patience, self.verdict)

    def judge(self, iteration: int) -> None:
        """If ``iteration`` is gated: play the gate, make ``latest.npz`` the network it keeps (the new one, or the one
        before), then write its verdict (``training.evaluation.gate``)."""
        if not self.gated(iteration):
            return
        path, earlier = self.checkpoint(iteration), self.before(iteration)
        verdict = play_gate(str(path), earlier, self.rules, self.cfg.gate, gate_seed(self.cfg.seed, iteration), self.cfg.gate_rule)
        if verdict["kept"] and self.cfg.confirm:  # the winner's curse: the same tables on deals that chose nothing
            if not self.quiet:
                self.log(f"iteration {iteration}: the gate keeps it; --confirm plays {self.cfg.confirm:,} deals of its own")
            verdict = confirmed(verdict, play_gate(str(path), earlier, self.rules, self.cfg.confirm,
                                                   confirm_seed(self.cfg.seed, iteration), self.cfg.gate_rule))
        save_checkpoint(self.out / "checkpoints" / "latest.npz", *load_checkpoint(str(path) if verdict["kept"] else earlier))
        write_gate(gate_path(path), verdict)
        if not self.quiet:
            self.log(describe(iteration, verdict))

    def pool(self, iteration: int) -> tuple[str, ...]:
        """The agent specs of the pool that ``iteration``'s data meet at the pool's tables (``previous``: the agents
        that collected the data of the iterations up to this one, ``--start`` or RuleAgent (random play with
        ``--no-advice``) and ``iter-0`` on, under ``--gate`` those it kept)."""
        earlier = dict.fromkeys(f"ppo:{path}" if path else "rule" if self.cfg.advice else "random"
                                for path in map(self.before, range(iteration + 1)))
        return pool_specs(self.cfg.pool, list(earlier))

    def collect(self, iteration: int) -> tuple[list[Path], int]:
        """The chunk files of an iteration (those already there, then new ones until ``samples`` decisions) and
        the decisions they hold."""
        cfg = self.cfg
        folder = self.out / "data" / f"iter-{iteration}"
        folder.mkdir(parents=True, exist_ok=True)
        checkpoint = self.before(iteration)
        opponents = self.pool(iteration) if cfg.pool_tables else ()

        def path(i: int) -> Path:
            return folder / f"chunk-{i:05d}.npz"

        tally = ChunkTally(cfg.samples)
        sizes, enough = tally.sizes, tally.enough  # decisions of each finished chunk, by index
        if tally.read_finished(path):  # chunks finished by an earlier, interrupted run, not enough
            self.log(f"iteration {iteration}: {len(sizes)} chunks ({sum(sizes.values()):,} decisions) already collected")
        if enough() is None:
            start, before, index = time.monotonic(), sum(sizes.values()), len(sizes)
            # leaving the block stops the workers still collecting (chunks no longer needed, or Ctrl-C): a stopped
            # worker writes nothing, and workers die with this process; Ray tasks return their decisions to be written here
            with self._workers() as pool:
                ray = isinstance(pool, RayWorkers)
                agent = pool.put(load_checkpoint(checkpoint)) if isinstance(pool, RayWorkers) and checkpoint else None
                read = pool.put(read_checkpoints(opponents)) if isinstance(pool, RayWorkers) and opponents else None
                running: dict[Future, int] = {}
                while enough() is None:
                    if iteration and self.out_of_time():  # the chunks still running are stopped as the block is left
                        raise OutOfTime
                    while len(running) < cfg.workers and sum(sizes.values()) < cfg.samples or not running:
                        task = chunk_task(cfg, path(index), self.mix[index % len(self.mix)], iteration, index, checkpoint, opponents)
                        future = pool.submit(_chunk_samples, task, agent, read) if ray else pool.submit(_collect_chunk, task)
                        running[future] = index
                        index += 1
                    finished, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in sorted(finished, key=running.__getitem__):
                        i = running.pop(future)
                        if ray:
                            samples = future.result()
                            rv.write_chunk(path(i), samples)
                            sizes[i] = len(samples.advice)
                        else:
                            sizes[i] = future.result()[1]
                        if not self.quiet:  # a line per chunk, also when several finished at once
                            self.log(tally.chunk_line(iteration, i, before, start, self.started))
                if not self.quiet:
                    self.log(tally.uses_line(iteration, cfg.games))
        return tally.used(path)

    def done(self) -> dict:
        """What the run did: the decisions of its finished iterations, its wall time (up to the end of ``run``), what
        stopped it."""
        end = time.monotonic() if self.ended is None else self.ended
        return {"decisions": self.samples, "wall_s": round(end - self.started, 1), "stopped_by": self.stopped_by or "steps"}

    def out_of_time(self) -> bool:
        """Whether the run has used its ``minutes``."""
        return self.minutes is not None and time.monotonic() - self.started >= self.minutes * 60

    def _workers(self) -> Workers | RayWorkers:
        """The pool of ``--backend``: worker processes, or tasks on Ray (a local instance, or the cluster at ``--address``)."""
        if self.cfg.backend != "ray":
            return Workers(self.cfg.workers, self.log)
        # room in a local object store for a chunk of each worker on its way here (SAMPLE_BYTES: twice a decision)
        chunk = self.cfg.games * most_decisions(self.mix) * self.cfg.share * SAMPLE_BYTES / 2
        return RayWorkers(self.cfg.workers, self.cfg.address, self.log, int(self.cfg.workers * chunk))

    def fit(self, iteration: int, chunks: list[Path], samples_so_far: int) -> tuple[PPOAgent, dict]:
        """Fit the network to ``chunks`` (from the previous iteration's weights); the agent and stats.
        ``samples_so_far``: the decisions the run has collected up to this iteration (for the config)."""
        import torch

        cfg = self.cfg
        torch.manual_seed(cfg.seed + iteration)
        net = rv.value_network(rv.input_width(cfg.features, cfg.advice), cfg.hidden)
        if self.before(iteration):
            rv.set_network_weights(net, load_checkpoint(self.before(iteration))[1])
        try:
            samples, chunk = rv.load_samples(chunks)
        except ValueError as e:
            raise ValueError(f"{e}; {CHUNK_RECOVERY}") from None
        if isinstance(samples, rv.ChunkSamples) and not self.quiet:
            self.log(f"iteration {iteration}: {len(samples):,} decisions, past the memory budget: read from disk, {rv.WINDOW:,} at a time")
        held_out = chunk % 12 == 11  # every 12th chunk (of the list): decisions of games the fit never sees
        if not held_out.any() or held_out.all():
            held_out = np.zeros(len(chunk), dtype=bool)
        train, check = np.flatnonzero(~held_out), np.flatnonzero(held_out)[:30_000]
        loss = rv.fit(net, samples, train, cfg.epochs, cfg.learning_rate, cfg.batch_size, cfg.seed + iteration, cfg.features,
                      advice=cfg.advice)
        fits = self.soup(iteration, net)
        bonus = phase_bonus(advice_bonus(cfg), cfg.advice, str(self.out))
        stats = {"decisions": int(len(train)), "held_out": int(held_out.sum()), "loss": loss,
                 **(rv.gains(net, samples, check, bonus, cfg.features, advice=cfg.advice) if check.size else {})}
        config = checkpoint_config(self.cfg, self.rules, iteration, samples_so_far, self.out)
        config["wall_seconds"] = round(time.monotonic() - self.started, 1)  # the run's, over all its sessions
        if cfg.soup:
            config["soup_fits"] = fits
        weights = rv.network_weights(net)
        save_checkpoint(self.checkpoint(iteration), config, weights)
        if not self.gated(iteration):  # else the gate's verdict decides
            save_checkpoint(self.out / "checkpoints" / "latest.npz", config, weights)
        return PPOAgent(config, weights, seed=np.random.default_rng([cfg.seed, 7])), stats

    def soup(self, iteration: int, net) -> int:
        """Under ``--soup``, after a rejected iteration: give ``net`` (``iteration``'s fit) the mean of its weights and
        those of the fits the gate rejected since the network that collects, all fitted from its weights (the rejected
        checkpoint holds their mean already, over its ``soup_fits``); how many fits ``net`` then averages (1: its own)."""
        if not (self.cfg.soup and iteration and (self.verdict(iteration - 1) or {}).get("kept") is False):
            return 1
        config, earlier = load_checkpoint(self.checkpoint(iteration - 1))
        count = int(config.get("soup_fits", 1))  # 1: a fit of its own (a run given --soup on --resume)
        rv.set_network_weights(net, rv.mean_weights([(earlier, count), (rv.network_weights(net), 1)]))
        if not self.quiet:
            self.log(f"iteration {iteration}: judged as the mean of the weights of {count + 1} fits from "
                     f"{self.before(iteration)} (--soup): its own and the {count} rejected before it")
        return count + 1

    def evaluate(self, agent: PPOAgent, samples: int) -> dict:
        """Duplicate deals of ``agent`` against RuleAgents at ``--players``, added to the curve; the curve row."""
        from ..evaluation.evaluate import evaluate

        n, cfg = self.rules.num_players, self.cfg
        agents = [agent] + [RuleAgent(seed=np.random.default_rng([cfg.seed, 8, s])) for s in range(n - 1)]
        result = evaluate(self.rules, ["ppo"] + ["rule"] * (n - 1), cfg.eval_deals, seed=EVAL_SEED_OFFSET + cfg.seed, agents=agents)
        self.curve.add(samples, time.monotonic() - self.started, result)
        return train_report.row_of(result)

    def run(self) -> PPOAgent:
        """Every iteration not finished yet; the last iteration's agent."""
        try:
            if self.cfg.zero:
                write_initial(Path(self.start), checkpoint_config(self.cfg, self.rules, -1, 0), self.cfg.seed)
            return self._iterations()
        finally:
            self.ended = time.monotonic()

    def _iterations(self) -> PPOAgent:
        agent: PPOAgent | None = None
        played = "RuleAgent" if self.cfg.advice else "the agent that played"  # whose choice the held-out figures compare with
        for iteration in range(self.cfg.iterations):
            path = self.checkpoint(iteration)
            if path.is_file():  # fitted by an earlier, interrupted run: its clock goes on from there
                config, weights = load_checkpoint(path)
                agent, self.samples = PPOAgent(config, weights, source=str(path)), config["num_samples"]
                self.started = time.monotonic() - float(config.get("wall_seconds", 0))
                if not self.finished(iteration):  # killed in the gate: it is played again
                    self.judge(iteration)
                if self.resumed and iteration == self.cfg.iterations - 1:
                    self.log(resumed_line(self.out, path, iteration + 1, self.cfg.iterations, self.samples, time.monotonic() - self.started))
                continue
            if self.resumed:  # said once, at the first iteration this session plays
                self.log(resumed_line(self.out, self.checkpoint(iteration - 1), iteration, self.cfg.iterations, self.samples,
                                      time.monotonic() - self.started))
                self.resumed = False
            if iteration >= self.played():
                self.stopped_by = "patience"
                self.log(f"iteration {iteration}: not played: the gate rejected the last {self.cfg.patience} in a row "
                         "(--patience; --resume with a larger one goes on)")
                break
            try:
                own, decisions = self.collect(iteration)
            except OutOfTime:
                self.stopped_by = "minutes"
                self.log(f"iteration {iteration}: the run's {self.minutes:g} minutes have passed; it stops at iteration "
                         f"{iteration - 1} (--resume with more minutes continues)")
                break
            self.samples += decisions
            earlier = self.earlier_runs + ([c for k in range(iteration) for c in self.collect(k)[0]] if self.cfg.data == "all" else [])
            fitting = time.monotonic()
            agent, stats = self.fit(iteration, earlier + own, self.samples)
            fitting = time.monotonic() - fitting
            if not self.quiet:
                self.log(f"iteration {iteration}: {fit_line(stats, decisions, played, fitting)}")
            self.judge(iteration)
            row = self.evaluate(agent, self.samples)
            if not self.quiet:
                self.log(train_report.format_row(self.samples, time.monotonic() - self.started, row).replace("step", "decisions", 1))
        assert agent is not None  # check_config: at least one iteration
        if self.cfg.gate:  # the network the gate kept last
            agent = PPOAgent.load(self.out / "checkpoints" / "latest.npz", seed=np.random.default_rng([self.cfg.seed, 7]))
        return agent


def run_chunks(folder: Path, run: ValuesConfig, rules: Rules, iterations: list[int] | None,
               rounds: str | int | list[int] = "standard") -> tuple[list[Path], int]:
    """The chunk files ``iterations`` (None: every one the run plays, ``ValuesTrainer.played``) of the train-values
    run in ``folder`` used, in iteration order, and the decisions they hold; ValueError naming an iteration whose data
    is not all there."""
    trainer = ValuesTrainer(run, rules, folder, quiet=True, log=lambda line: None, rounds=rounds)
    iterations = list(range(trainer.played())) if iterations is None else iterations
    chunks: list[Path] = []
    decisions = 0
    for k in iterations:
        if not trainer.finished(k):
            raise ValueError(f"{folder}: iteration {k} of the train-values run is not finished (no {trainer.checkpoint(k)}, "
                             "or no verdict of its --gate)")
        paths, held = trainer.collect(k)  # a finished iteration's chunks are all on disk: this only reads them
        chunks, decisions = chunks + paths, decisions + held
    return chunks, decisions


def data_from_chunks(cfg: ValuesConfig, out: Path) -> tuple[list[Path], int]:
    """The chunks of ``--data-from``'s runs, in the order given (of each, every iteration it plays: ``run_chunks``), and
    the decisions they hold; ValueError naming the first folder that is not such a run (``values_config.earlier_runs``)
    or not finished."""
    chunks: list[Path] = []
    decisions = 0
    for folder, run, rules, rounds in earlier_runs(cfg, out):
        try:
            paths, held = run_chunks(folder, run, rules, None, rounds)
        except ValueError as e:
            raise ValueError(f"--data-from {e}; finish that run first (wizard train-values --out {folder} --resume)") from None
        chunks, decisions = chunks + paths, decisions + held
    return chunks, decisions


class OutOfTime(Exception):
    """The run's ``minutes`` are up: no new chunk is collected."""


def run_training(cfg: ValuesConfig, rules: Rules, out: str | Path, resume: bool = False, quiet: bool = False,
                 log=print, rounds: str | int | list[int] = "standard", minutes: float | None = None,
                 header: dict | None = None) -> ValuesTrainer:
    """Check, give torch ``torch_threads``, lock the folder, run every iteration (until ``minutes`` of the run's wall
    time have passed, when given) and plot; the trainer. ``header``: more keys of config.json (``wizard baseline values``' arguments)."""
    import torch

    out = Path(out)
    saved = out / "config.json"
    command = baseline(header["algo"]) if header and "algo" in header else VALUES
    before = resumed_config(out, command) if resume else None
    if not resume:
        new_folder(out, command)
    if before is not None:  # a changed setting named as such, before the checks of the settings it leaves odd
        check_resume(before, cfg, rules_json(rules), out, rounds)
    check_config(cfg)
    if resume:  # every checkpoint the run reads holds its network
        resume_folder(out, (command,), rv.network_shapes(rv.input_width(cfg.features, cfg.advice), cfg.hidden))
    earlier_runs, earlier_decisions = data_from_chunks(cfg, out)  # their folders named, before anything is written
    if cfg.address:
        check_address(cfg.address)  # one line for a wrong address, before anything is written
    torch.set_num_threads(cfg.torch_threads)
    out.mkdir(parents=True, exist_ok=True)
    with run_lock(out, "wizard train-values"):
        if resume:
            for folder in [out, out / "checkpoints", *sorted((out / "data").glob("iter-*"))]:
                for stale in remove_temps(folder):
                    log(f"removed {stale}, left by a run killed while writing")
        config = {**(header or {}), "train": dataclasses.asdict(cfg), "rules": rules_json(rules), "rounds": rounds}
        train_report.write_json(saved, config)
        trainer = ValuesTrainer(cfg, rules, out, quiet, log, rounds, minutes)
        trainer.earlier_runs, trainer.resumed = earlier_runs, resume and not quiet
        if earlier_runs and not quiet:
            log(f"--data-from: {earlier_decisions:,} decisions in {len(earlier_runs)} chunks of {len(cfg.data_from)} run(s) join every fit")

        def record_done() -> None:  # with a header, config.json says what the run did, as a baseline's does
            if header is not None:
                train_report.write_json(saved, {**config, "done": trainer.done()})

        try:
            trainer.run()
        except KeyboardInterrupt:  # what is finished is saved already: --resume continues from it
            trainer.stopped_by = "interrupt"
            record_done()
            raise
        record_done()
        train_report.plot(trainer.curve.path, out / "curve.png", "decisions with action values")
    return trainer
