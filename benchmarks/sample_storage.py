"""Bytes per stored decision and the memory of a fit: the compact samples against the code of an earlier commit.

Usage::

    python benchmarks/sample_storage.py                                    # both codes, 300,000 decisions
    python benchmarks/sample_storage.py --decisions 2600000 --only new      # the final fit's size, today's code

Chunks: ``collect_values`` on ``--games`` games of each player count (3 to 6, RuleAgent, a quarter of the
decisions), the same decisions written as one chunk by each code; bytes per decision = file size / decisions.

Memory: for each code, a child process loads ``--decisions`` decisions with that code's ``load_samples`` (the
collected chunk listed again and again, so the disk holds it once) and fits ``--steps`` minibatches of 512 with
RuleAgent's numbers (``features=True``) on the shipped network's shape (1781 -> 512 -> 256 -> 79); printed is its
peak resident memory (Linux's VmHWM), after a first fit on the one chunk (imports, compiled code, torch's
buffers) and at the end. The fit's quality is not measured: the
decisions repeat. The reference code is ``training/rollout_values.py`` of ``--reference`` (default: the last commit of the first format), loaded
beside today's package as ``rule_reference.py`` loads an old RuleAgent.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

try:
    from benchmarks.reference_tree import git, short_sha
except ImportError:  # run as a script from benchmarks/
    from reference_tree import git, short_sha

#: The last commit of the first chunk format (float16 observations), with the writer (``write_chunk``) this script calls.
FIRST_FORMAT = "b9b70d8"


def reference_module(commit: str):
    """``training/rollout_values.py`` of ``commit``, imported from a temporary file."""
    sha = short_sha(commit)
    path = Path(tempfile.mkdtemp(prefix="rv_reference_")) / f"_rv_reference_{sha}.py"
    path.write_bytes(git("show", f"{sha}:training/rollout_values.py"))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def code(which: str, reference: str):
    """The rollout_values module of ``which`` code: new (today's) or old (the reference commit's)."""
    if which == "new":
        from wizard_env.training import rollout_values

        return rollout_values
    return reference_module(reference)


def peak_kib(key: str = "VmHWM") -> int:
    """This process's peak (or current, VmRSS) resident memory in KiB."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(key + ":"))


def child(args: argparse.Namespace) -> None:
    """Load ``--decisions`` decisions with one code and fit a few minibatches on them; print the peaks."""
    import torch

    torch.set_num_threads(1)
    rv = code(args.child, args.reference)
    n_chunk = len(rv.read_chunk(args.chunk).advice)
    copies = -(-args.decisions // n_chunk)
    torch.manual_seed(0)
    net = rv.value_network(rv.input_width(True), [512, 256])
    # a fit on the one chunk first: what compiles and what torch keeps is counted apart from the decisions
    rv.fit(net, rv.load_samples([args.chunk])[0], np.arange(min(n_chunk, 1024)), 1, 1e-3, 512, seed=0, features=True)
    warm = peak_kib()
    samples, _ = rv.load_samples([args.chunk] * copies)
    train = np.arange(min(args.decisions, args.steps * 512))
    rv.fit(net, samples, train, epochs=1, lr=1e-3, batch_size=512, seed=0, features=True)
    print(f"{copies * n_chunk} {warm} {peak_kib()}")


def measure(which: str, chunk: Path, args: argparse.Namespace) -> tuple[int, float, float]:
    """(decisions, peak MiB after a fit on one chunk, peak MiB) of a child fitting with ``which`` code."""
    out = subprocess.run([sys.executable, __file__, "--child", which, "--chunk", str(chunk), "--decisions", str(args.decisions),
                          "--steps", str(args.steps), "--reference", args.reference], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"the {which} code's fit failed:\n{out.stderr[-3000:]}")
    decisions, warm, peak = map(int, out.stdout.split()[-3:])
    return decisions, warm / 1024, peak / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", default=FIRST_FORMAT, help="git revision of the code to compare with")
    parser.add_argument("--games", type=int, default=8, help="games per player count collected for the chunks")
    parser.add_argument("--decisions", type=int, default=300_000, help="decisions loaded for the fit whose memory is measured")
    parser.add_argument("--steps", type=int, default=20, help="minibatches of that fit")
    parser.add_argument("--only", choices=("new", "old"), help="measure the memory of one code only")
    parser.add_argument("--child", choices=("new", "old"), help=argparse.SUPPRESS)
    parser.add_argument("--chunk", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)

    from wizard_env.agents.ppo_agent import LEARNED_PHASES
    from wizard_env.engine.rules import Rules
    from wizard_env.training import rollout_values as rv

    old = reference_module(args.reference)
    parts = [rv.collect_values(Rules.make(n), args.games, seed=n, phases=LEARNED_PHASES["both"], share=0.25) for n in (3, 4, 5, 6)]
    samples = rv.ValueSamples.concatenate(parts)
    with tempfile.TemporaryDirectory(prefix="sample_storage_") as tmp:
        folder = Path(tmp)
        chunks = {"new": folder / "new.npz", "old": folder / "old.npz"}
        rv.write_chunk(chunks["new"], samples)
        advice = samples.advice.astype(np.int64)  # as RuleAgent gives it
        old.write_chunk(chunks["old"], old.ValueSamples.of(samples.observations, samples.masks, samples.values, advice))
        size = {k: p.stat().st_size / len(samples) for k, p in chunks.items()}
        print(f"chunk on disk, {len(samples):,} decisions of 3-6 players: old {size['old']:,.0f} bytes a decision, "
              f"new {size['new']:,.0f} ({size['old'] / size['new']:.1f}x smaller)")
        peaks = {}
        for which in ("old", "new"):
            if args.only in (None, which):
                decisions, warm, peak = peaks[which] = measure(which, chunks[which], args)
                print(f"fit of {decisions:,} decisions with RuleAgent's numbers, {which} code: peak resident {peak:,.0f} MiB "
                      f"({warm:,.0f} MiB after a fit on one chunk; {(peak - warm) * 2**20 / decisions:,.0f} bytes a decision more)")
    if len(peaks) == 2:
        print(f"memory of the fit: old / new = {peaks['old'][2] / peaks['new'][2]:.1f}x")


if __name__ == "__main__":
    main()
