"""The web API fuzzed from its own contract: schemathesis against a live ``wizard serve`` on 127.0.0.1.

Usage::

    python benchmarks/schemathesis_web.py --examples 200 --seed 0
    python benchmarks/schemathesis_web.py --examples 200 --workers 4                  # 4 requests at once
    python benchmarks/schemathesis_web.py --url http://127.0.0.1:8000 --examples 50   # a server already running

Starts ``wizard serve --port 0 --opponents rule,random`` over a temporary replay folder, plays one game to its end
(the agents' compiled code is loaded, and the viewer's routes have a file to open), then runs
schemathesis' CLI on ``URL/openapi.json``: every phase (the schema's examples, coverage, fuzzing, and stateful
sequences that follow the schema's links from a new table to its moves), ``--max-examples`` per operation, and
every check but ``positive_data_acceptance``. That one is left out because the schema cannot state every rule
of a valid request: a seat below the player count, rounds that fit the deck, an uploaded file that is a replay;
such requests are refused with a 4xx that the other checks hold to the schema. Prints the counts of
schemathesis' JSON report (operations, test cases, failures, server errors, errors) and the command it ran;
exits 1 on any failure or error. With ``--url`` the warm-up game is played, and saved, on that server.
tests/test_web_contract.py runs ``campaign`` on a few examples.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

#: The checks: all of schemathesis' but positive_data_acceptance (see the module docstring).
CHECKS = ["--checks", "all", "--exclude-checks", "positive_data_acceptance"]
#: Seconds a request may take: the first of a server compiles the agents' code (seconds on a busy machine).
REQUEST_SECONDS = 60


@dataclass
class Counts:
    """What one schemathesis run found."""

    operations: int
    test_cases: int
    failures: int
    server_errors: int
    errors: int
    seconds: float
    report: dict

    def line(self) -> str:
        return (f"operations {self.operations}, test cases {self.test_cases:,}, failures {self.failures}, "
                f"server errors {self.server_errors}, errors {self.errors} ({self.seconds:.0f} s)")


def schemathesis_command(url: str, examples: int, seed: int, report: Path, workers: int = 1) -> list[str]:
    """The schemathesis CLI line of a campaign on the server at ``url`` (``workers`` requests at once)."""
    return [sys.executable, "-m", "schemathesis.cli", "run", f"{url}/openapi.json", *CHECKS, "--max-examples", str(examples),
            "--seed", str(seed), "--request-timeout", str(REQUEST_SECONDS), "--workers", str(workers), "--no-color",
            "--report", "json", "--report-json-path", str(report)]


def campaign(url: str, examples: int, seed: int, folder: Path, workers: int = 1) -> tuple[Counts, str]:
    """Run schemathesis on the server at ``url`` (its own working folder ``folder``); its counts and its output."""
    report = folder / "schemathesis.json"
    command = schemathesis_command(url, examples, seed, report, workers)
    start = time.monotonic()
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True)
    if not report.is_file():
        raise RuntimeError(f"schemathesis wrote no report (status {done.returncode}):\n{done.stdout}{done.stderr}")
    data = json.loads(report.read_text())
    failures = sum(group["count"] for group in data["failures"])
    server = sum(group["count"] for group in data["failures"] if group["type"] == "ServerError")
    counts = Counts(data["operations"]["tested"], data["test_cases"]["generated"], failures, server,
                    sum(group["count"] for group in data["errors"]), time.monotonic() - start, data)
    return counts, done.stdout + done.stderr


def warm_up(url: str) -> None:
    """A game of 3 players and 1 round played to its end: the agents' compiled code is loaded before schemathesis
    times a request, and the replay folder holds the game for the viewer's routes to open."""
    import urllib.request

    def post(path: str, body: dict) -> dict:
        request = urllib.request.Request(url + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=300) as answer:
            return json.load(answer)["table"]

    view = post("/api/tables", {"players": 3, "rounds": "1", "opponents": ["rule", "random"], "seed": 0})
    while not view["over"]:
        view = post(f"/api/tables/{view['id']}/move", {"seat": view["seat"], "move": view["move"],
                                                       "action": view["legal"][0]["action"]})


def serve(folder: Path) -> tuple[subprocess.Popen, str]:
    """``wizard serve`` on a free loopback port over ``folder``: the process and its URL."""
    server = subprocess.Popen([sys.executable, "-m", "wizard_env", "serve", "--port", "0", "--replays", str(folder),
                               "--opponents", "rule,random"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = server.stdout.readline()
    if not line.startswith("Wizard table: "):
        server.kill()
        raise RuntimeError(f"wizard serve did not start: {line!r}")
    return server, line.split()[2].rstrip("/")


def main() -> int:
    """Run the campaign and print its counts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=100, help="schemathesis' --max-examples per operation (default 100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1, help="requests at once (default 1)")
    parser.add_argument("--url", help="a server already running (default: start one on a free port)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="schemathesis-web-") as tmp:
        folder = Path(tmp)
        server = None
        url = args.url
        if url is None:
            server, url = serve(folder / "replays")
        try:
            warm_up(url)
            print(" ".join(schemathesis_command(url, args.examples, args.seed, Path("REPORT.json"), args.workers)[1:]), flush=True)
            counts, output = campaign(url, args.examples, args.seed, folder, args.workers)
        finally:
            if server is not None:  # its stderr is uvicorn's lines about malformed requests, answered 400
                server.terminate()
                server.wait(timeout=30)
    print(output)
    print(counts.line())
    return 1 if counts.failures or counts.errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
