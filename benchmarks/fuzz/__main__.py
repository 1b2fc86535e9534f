"""Fuzz the parsers of outside input with atheris (coverage-guided, libFuzzer), one target after another.

Usage::

    python -m benchmarks.fuzz replay checkpoint recipe spec web --inputs 1000000 --json fuzz.json
    python -m benchmarks.fuzz spec --seconds 600        # as many inputs as fit in 10 minutes

Each target runs in a process of its own (``worker``) from its seed corpus (``corpus/TARGET``, copied: the
corpus in the repository does not grow), for ``--inputs`` inputs or ``--seconds``, whichever ends first. The
report gives, per target, the inputs run, the coverage reached (libFuzzer's edges of the instrumented modules and
its features) and every uncaught exception by kind with its count and the file holding its first input; a hang
or running out of memory ends the target's run and is reported too. Needs the fuzz extra
(``pip install -c constraints.txt -e ".[fuzz]"``).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from importlib.util import find_spec
from pathlib import Path

CORPUS = Path(__file__).parent / "corpus"
TARGET_NAMES = ("replay", "checkpoint", "recipe", "spec", "web")
#: The longest input libFuzzer makes (bytes): a checkpoint of the seed corpus is about 25 kB, the rest far less.
MAX_LEN = {"checkpoint": 65536}
#: A status line of libFuzzer: ``#1024 pulse cov: 812 ft: 1534 corp: 61/9Kb exec/s: 341 rss: 212Mb``.
STATUS = re.compile(r"^#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+)")


def run_target(name: str, inputs: int, seconds: int, out: Path, timeout: int, rss_mb: int) -> dict:
    """Run one target under libFuzzer; what it ran, reached and found."""
    corpus = out / "corpus"
    corpus.mkdir(parents=True)
    command = [sys.executable, "-m", "benchmarks.fuzz.worker", name, str(out / "found"), f"-runs={inputs}",
               f"-max_total_time={seconds}", f"-timeout={timeout}", f"-rss_limit_mb={rss_mb}", "-print_final_stats=1",
               f"-artifact_prefix={out}/", f"-max_len={MAX_LEN.get(name, 8192)}", str(corpus), str(CORPUS / name)]
    start = time.monotonic()
    log = out / "libfuzzer.log"
    with open(log, "w") as sink:
        code = subprocess.run(command, stdout=sink, stderr=subprocess.STDOUT, cwd=Path(__file__).parents[2]).returncode
    found_file = out / "found" / "found.json"
    found = json.loads(found_file.read_text()) if found_file.is_file() else {}
    for entry in found.values():
        entry["input"] = str(out / "found" / entry["input"])
    return {"target": name, **parse_log(log.read_text(errors="replace")), "seconds": round(time.monotonic() - start, 1),
            "uncaught": {k: {key: v[key] for key in ("count", "message", "input")} for k, v in found.items()},
            "exit": code, "log": str(log)}


def parse_log(text: str) -> dict:
    """From libFuzzer's output: the inputs run, the last edges and features it reported, and why it stopped early."""
    runs = re.findall(r"stat::number_of_executed_units: (\d+)", text)
    status = [m.groups() for m in map(STATUS.match, text.splitlines()) if m]
    return {
        "inputs": int(runs[-1]) if runs else int(status[-1][0]) if status else 0,
        "edges": int(status[-1][1]) if status else None,
        "features": int(status[-1][2]) if status else None,
        "stopped": [line for line in text.splitlines() if re.search(r"ERROR: libFuzzer|Timeout|out-of-memory", line)][:3],
    }


def report(result: dict) -> str:
    """A target's result in a few lines."""
    rate = result["inputs"] / result["seconds"] if result["seconds"] else 0.0
    lines = [f"{result['target']}: {result['inputs']:,} inputs in {result['seconds']:,.0f} s ({rate:,.0f}/s), coverage "
             f"{result['edges']} edges, {result['features']} features; "
             f"{sum(v['count'] for v in result['uncaught'].values())} uncaught exceptions"]
    lines += [f"  {kind}: {v['count']} x {v['message'][:160]} (first input: {v['input']})" for kind, v in result["uncaught"].items()]
    lines += [f"  stopped: {line}" for line in result["stopped"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="+", choices=TARGET_NAMES, metavar="TARGET", help=f"of {', '.join(TARGET_NAMES)}")
    parser.add_argument("--inputs", type=int, default=1_000_000, help="inputs per target (default 1,000,000)")
    parser.add_argument("--seconds", type=int, default=24 * 3600, help="the most seconds per target (default a day)")
    parser.add_argument("--timeout", type=int, default=30, help="seconds one input may take before it counts as a hang")
    parser.add_argument("--rss-mb", type=int, default=3000, help="memory in MB past which the run stops as out of memory")
    parser.add_argument("--out", type=Path, help="where the logs, the grown corpora and the failing inputs go "
                        "(default: a new temporary folder, kept)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    if find_spec("atheris") is None:
        parser.error("atheris is not installed: pip install -c constraints.txt -e '.[fuzz]'")
    out = args.out or Path(tempfile.mkdtemp(prefix="wizard-fuzz-run-"))
    results = []
    for name in args.targets:
        if (out / name).exists():
            shutil.rmtree(out / name)
        print(f"fuzzing {name} ({args.inputs:,} inputs, at most {args.seconds:,} s; log {out / name / 'libfuzzer.log'})",
              flush=True)
        results.append(run_target(name, args.inputs, args.seconds, out / name, args.timeout, args.rss_mb))
        print(report(results[-1]), flush=True)
        if args.json:
            args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0 if all(not r["uncaught"] and not r["stopped"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
