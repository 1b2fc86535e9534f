"""Bad input for every ``wizard`` subcommand: exit status 2, one ``wizard: error:`` line that names the
option or path at fault, no traceback, and nothing written (the checks come before any work).

The corpus is a table: (subcommand, arguments, words the error line must hold). ``{files}`` in an
argument is the folder of prepared bad files (``bad_files``); ``{out}`` a path under the test's
folder that must not exist afterwards. Most cases run ``main(argv)`` in-process; a few run the
installed command in a subprocess, as a user would.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from wizard_env.agents.ppo_agent import PRETRAINED, load_checkpoint
from wizard_env.agents.rule_agent import RuleAgent
from wizard_env.cli.main import main
from wizard_env.engine.replay import game_record
from wizard_env.engine.rules import Rules
from wizard_env.engine.simulate import play_game

BIG = str(10**12)
DIGITS_5000 = "9" * 5000
LONG = "x" * 100_000
NOT_BATCH_SIZE = "batch_size"  # a word the message of a train option once leaked instead of the option


def bad_files(folder: Path) -> None:
    """The files and folders the corpus points at."""
    folder.mkdir()
    (folder / "deep.jsonl").write_text('{"a":' * 100_000 + "1" + "}" * 100_000 + "\n")
    (folder / "text.jsonl").write_text("hello\n")
    (folder / "a_folder").mkdir()
    config, weights = load_checkpoint(PRETRAINED)
    for name, change in {"hidden_ab": {"hidden": "ab"}, "hidden_one": {"hidden": [256]},
                         "mix_bad": {"train": config["train"] | {"mix": [2, 9]}}}.items():
        arrays = {k: v for k, v in weights.items()} | {"config": np.frombuffer(json.dumps(config | change).encode(), np.uint8)}
        np.savez(folder / f"{name}.npz", **arrays)
    arrays = dict(weights) | {"action_net.bias": np.full(79, np.nan, np.float32)}
    np.savez(folder / "nan.npz", config=np.frombuffer(json.dumps(config).encode(), np.uint8), **arrays)
    (folder / "deep_config.npz").write_bytes(b"")
    np.savez(folder / "deep_config.npz", config=np.frombuffer(('{"a":' * 100_000 + "1" + "}" * 100_000).encode(), np.uint8))
    record = game_record(play_game(Rules.make(3, 2), [RuleAgent(seed=0)] * 3, 5, record=True).game, ["rule"] * 3)
    (folder / "seed_2_63.jsonl").write_text(json.dumps(record | {"seed": 2**63}) + "\n")
    run = folder / "damaged_run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "checkpoints" / "latest.npz").write_bytes(b"x")
    (run / "config.json").write_text('{"train":' * 100_000 + "1" + "}" * 100_000)
    odd = folder / "odd_run"
    (odd / "checkpoints").mkdir(parents=True)
    (odd / "checkpoints" / "latest.npz").write_bytes(b"x")
    (odd / "config.json").write_text(json.dumps({"train": {"hidden": "ab", "activation": "relu"}}))


#: The shipped agent's recipe: valid, so its cases reach the checks of --out, --resume and --until.
RECIPE = str(Path(__file__).resolve().parents[1] / "training" / "recipes" / "wizard-v1.toml")
#: A model card's text: valid, so its cases reach the checks of --suite and --check.
CARD = str(Path(__file__).resolve().parents[1] / "docs" / "cards" / "net.toml")

CASES: dict[str, list[tuple[list[str], list[str]]]] = {
    "simulate": [
        (["--games", "0"], ["argument --games: must be at least 1"]),
        (["--games", "-5"], ["--games"]),
        (["--games", "abc"], ["argument --games", "expected an integer"]),
        (["--games", BIG], ["--games 1,000,000,000,000 would need about", "GiB of memory"]),
        (["--games", DIGITS_5000], ["argument --games", "at most 30 digits, not one of 5,000 digits"]),
        (["--seed", "-1"], ["argument --seed", "0 to 2**63 - 1"]),
        (["--seed", str(2**63)], ["argument --seed", "0 to 2**63 - 1"]),
        (["--seed", DIGITS_5000], ["argument --seed", "5,000 characters"]),
        (["--seed", "1.5"], ["argument --seed"]),
        (["--replay", ""], ["argument --replay", "empty"]),
        (["--players", "7"], ["argument --players: must be at least 3 and at most 6, not 7"]),
        (["--players", "x"], ["argument --players"]),
        (["--players", "1" * 40], ["argument --players"]),
        (["--rounds", "0"], ["rounds"]),
        (["--rounds", "1,x"], ["--rounds '1,x'"]),
        (["--rounds", "1," * 1001], ["at most 1000 rounds"]),
        (["--agents", "nobody"], ["--agents", "unknown agent 'nobody'"]),
        (["--agents", "rule,,rule,rule"], ["--agents", "unknown agent ''"]),
        (["--agents", "ppo:{files}/a,b.npz"], ["--agents", "',' separates agents", "a,b.npz"]),
        (["--agents", "ppo:{files}/missing.npz"], ["{files}/missing.npz", "no such file"]),
        (["--agents", "ppo:{files}/a_folder"], ["{files}/a_folder"]),
        (["--agents", "ppo:{files}/hidden_ab.npz"], ["{files}/hidden_ab.npz", "config entry 'hidden'"]),
        (["--agents", "ppo:{files}/hidden_one.npz"], ["{files}/hidden_one.npz", "mlp_extractor.policy_net.2.weight"]),
        (["--agents", "ppo:{files}/mix_bad.npz"], ["{files}/mix_bad.npz", "train.mix"]),
        (["--agents", "ppo:{files}/nan.npz"], ["{files}/nan.npz", "'action_net.bias'", "not finite"]),
        (["--agents", "ppo:{files}/deep_config.npz"], ["{files}/deep_config.npz", "nests too deeply"]),
        (["--agents", "ppo:{files}/text.jsonl"], ["{files}/text.jsonl", "not a wizard checkpoint"]),
        (["--agents", "ppo-bid", "--players", "3", "--games", "1"], ["wizard-4p.npz", "trained for 4 players, not the 3"]),
        (["--agents", "rule,random"], ["--agents names 2 agents for 4 seats"]),
        (["--with-legal"], ["--with-legal needs --replay"]),
        (["--bidding", "hidden", "--bid-total-rule"], ["needs open bidding"]),
        (["--bidding", "loud"], ["argument --bidding"]),
        (["--bidding", LONG], ["argument --bidding", "characters cut"]),
        (["--agents", LONG], ["argument --agents: expected at most 10,000 characters, not 100,000"]),
        (["--rounds", LONG], ["argument --rounds: expected at most 10,000 characters"]),
    ],
    "replay": [
        ([""], ["argument FILE", "empty"]),
        (["{files}/missing.jsonl"], ["{files}/missing.jsonl"]),
        (["{files}/a_folder"], ["{files}/a_folder"]),
        (["{files}/deep.jsonl"], ["{files}/deep.jsonl, line 1", "nested too deeply"]),
        (["{files}/text.jsonl"], ["{files}/text.jsonl, line 1", "not valid JSON"]),
        (["{files}/text.jsonl", "--game", "0"], ["--game"]),
        (["{files}/text.jsonl", "--game", "x"], ["argument --game"]),
        (["{files}/text.jsonl", "--game", "1" * 40], ["argument --game"]),
        ([], ["FILE"]),
        (["{files}/seed_2_63.jsonl"], ["{files}/seed_2_63.jsonl, line 1", "seed must be an integer from 0 to 2**63 - 1"]),
        (["{files}/seed_2_63.jsonl", "--check"], ["{files}/seed_2_63.jsonl, line 1", "2**63 - 1"]),
    ],
    "play": [
        (["--seed", "-1"], ["argument --seed", "0 to 2**63 - 1"]),
        (["--seed", str(2**63)], ["argument --seed"]),
        (["--seed", str(2**64 + 5)], ["argument --seed"]),
        (["--seed", DIGITS_5000], ["argument --seed", "5,000 characters"]),
        (["--seat", "9"], ["--seat"]),
        (["--seat", "x"], ["argument --seat"]),
        (["--opponents", "ghost"], ["--opponents", "unknown agent 'ghost'"]),
        (["--opponents", "ppo:{files}/a,b.npz"], ["--opponents", "',' separates agents"]),
        (["--opponents", "ppo:{files}/hidden_ab.npz"], ["{files}/hidden_ab.npz", "config entry 'hidden'"]),
        (["--players", "2"], ["argument --players: must be at least 3 and at most 6, not 2"]),
        (["--rounds", "1," * 1001], ["at most 1000 rounds"]),
        (["--replay", ""], ["argument --replay", "empty"]),
        (["--replay", "{files}/a_folder"], ["{files}/a_folder"]),
    ],
    "serve": [
        (["--port", "-1"], ["argument --port: must be at least 0 and at most 65535, not -1"]),
        (["--port", "70000"], ["argument --port: must be at least 0 and at most 65535"]),
        (["--port", "x"], ["argument --port", "expected an integer"]),
        (["--port", DIGITS_5000], ["argument --port", "at most 30 digits, not one of 5,000 digits"]),
        (["--host", "no.such.host.invalid"], ["--host 'no.such.host.invalid'", "not an address of this machine"]),
        (["--replays", ""], ["argument --replays", "empty"]),
        (["--replays", "{files}/text.jsonl"], ["not a folder", "{files}/text.jsonl"]),
        (["--players", "7"], ["argument --players: must be at least 3 and at most 6, not 7"]),
        (["--rounds", "0"], ["rounds"]),
        (["--bidding", "loud"], ["argument --bidding"]),
        (["--bidding", "hidden", "--bid-total-rule"], ["needs open bidding"]),
    ],
    "eval": [
        ([], ["--agents"]),
        (["--agents", "rule", "--out", "{out}"], ["--agents names 1 agents for 4 seats"]),
        (["--agents", "rule,rule,rule,rule", "--out", ""], ["argument --out", "empty"]),
        (["--agents", "rule,rule,rule,rule", "--games", "0", "--out", "{out}"], ["argument --games: must be at least 1"]),
        (["--agents", "rule,rule,rule,rule", "--games", BIG, "--out", "{out}"], ["--games 1,000,000,000,000", "GiB of memory"]),
        (["--agents", "rule,rule,rule,rule", "--games", "x"], ["argument --games"]),
        (["--agents", "rule,rule,rule,rule", "--seed", "-1"], ["argument --seed"]),
        (["--agents", "rule,rule,rule,rule", "--seed", DIGITS_5000], ["argument --seed", "5,000 characters"]),
        (["--agents", "rule,ppo:{files}/a,b.npz,rule", "--out", "{out}"], ["--agents", "',' separates agents"]),
        (["--agents", "rule,bogus,rule,rule", "--out", "{out}"], ["--agents", "unknown agent 'bogus'"]),
        (["--agents", "rule,rule,rule,rule", "--reference", "ghost", "--out", "{out}"], ["--reference 'ghost'"]),
        (["--agents", "rule,ppo:{files}/hidden_one.npz,rule,rule", "--out", "{out}"], ["{files}/hidden_one.npz"]),
        (["--agents", "ppo-bid,rule,rule", "--players", "3", "--games", "1", "--out", "{out}"], ["trained for 4 players, not the 3"]),
        (["--setting", "wizard-9p", "--agents", "rule", "--out", "{out}"], ["argument --setting", "'wizard-9p'", "wizard-3p-5r"]),
        (["--setting", "wizard-3p-5r", "--agents", "rule,rule,rule", "--out", "{out}"], ["--agents names 3 agents beside --setting"]),
        (["--setting", "wizard-3p-5r", "--agents", "rule", "--players", "3", "--out", "{out}"], ["--players cannot be given"]),
        (["--setting", "wizard-3p-5r", "--agents", "ppo-bid", "--games", "1", "--out", "{out}"], ["trained for 4 players, not the 3"]),
        (["--setting", "wizard-4p", "--agents", "rule", "--games", BIG, "--out", "{out}"], ["--games 1,000,000,000,000", "GiB of memory"]),
    ],
    "bench": [
        (["--seconds", "nan"], ["argument --seconds", "finite"]),
        (["--seconds", "inf"], ["argument --seconds", "finite"]),
        (["--seconds", "0"], ["argument --seconds: must be more than 0"]),
        (["--seconds", "-1"], ["--seconds"]),
        (["--seconds", "abc"], ["argument --seconds"]),
        (["--seed", "-1"], ["argument --seed", "0 to 2**63 - 1"]),
        (["--seed", DIGITS_5000], ["argument --seed", "5,000 characters"]),
        (["--sizes", "1000000000"], ["--sizes 1,000,000,000 would need about", "GiB of memory"]),
        (["--sizes", "0"], ["--sizes must be positive"]),
        (["--sizes", "1,x"], ["--sizes must be comma-separated integers"]),
        (["--sizes", "1" * 40], ["--sizes"]),
        (["--vec-envs", "-1"], ["--vec-envs"]),
        (["--vec-envs", "1000000000"], ["--vec-envs 1,000,000,000 would need about"]),
        (["--json", ""], ["argument --json", "empty"]),
        (["--rounds", "5"], ["standard rules"]),
        (["--players", "9"], ["9"]),
    ],
    "train": [
        (["--out", ""], ["argument --out", "empty"]),
        (["--snapshot-every", "0"], ["argument --snapshot-every: must be at least 1 and at most 1000000000000, not 0"]),
        (["--snapshot-every", "-1"], ["argument --snapshot-every: must be at least 1"]),
        (["--snapshots", "-1"], ["argument --snapshots: must be at least 0"]),
        (["--bc-epochs", "-1"], ["argument --bc-epochs: must be at least 0"]),
        (["--bc-games", "-1"], ["argument --bc-games: must be at least 0"]),
        (["--bc-games", BIG], ["--bc-games", "GiB of memory"]),
        (["--max-minutes", "-1"], ["argument --max-minutes: must be at least 0"]),
        (["--max-minutes", "nan"], ["argument --max-minutes", "finite"]),
        (["--torch-threads", "0"], ["argument --torch-threads: must be at least 1"]),
        (["--torch-threads", "100000"], ["--torch-threads", "at most 256"]),
        (["--pool", "rule=1,rule=2"], ["--pool", "'rule' is given twice"]),
        (["--pool", "rule=nan"], ["--pool", "finite"]),
        (["--pool", "rule=inf,self=1"], ["--pool", "finite"]),
        (["--pool", "ghost=1"], ["--pool"]),
        (["--pool", "rule=1,self"], ["--pool"]),
        (["--pool", LONG], ["argument --pool: expected at most 10,000 characters"]),
        (["--learning-rate", "inf"], ["argument --learning-rate", "finite"]),
        (["--learning-rate", "0"], ["argument --learning-rate: must be more than 0"]),
        (["--gae-lambda", "2"], ["--gae-lambda", "at most 1"]),
        (["--bc-smoothing", "-0.5"], ["--bc-smoothing"]),
        (["--clip-range", "0"], ["argument --clip-range: must be more than 0"]),
        (["--reward-scale", "-1"], ["--reward-scale"]),
        (["--num-envs", "0"], ["argument --num-envs: must be at least 1"]),
        (["--num-envs", "1000000000"], ["--num-envs 1,000,000,000 would need about", "GiB of memory"]),
        (["--eval-deals", BIG], ["--eval-deals", "GiB of memory"]),
        (["--timesteps", "0"], ["argument --timesteps: must be at least 1"]),
        (["--n-steps", "x"], ["argument --n-steps"]),
        (["--seed", "-1"], ["argument --seed"]),
        (["--seed", str(2**63)], ["argument --seed"]),
        (["--mix", "2,3"], ["--mix '2,3'"]),
        (["--mix", "x"], ["--mix 'x'"]),
        (["--learn", "nothing"], ["argument --learn"]),
        (["--init-from", "{files}/hidden_ab.npz"], ["{files}/hidden_ab.npz", "config entry 'hidden'"]),
        (["--init-from", "{files}/missing.npz"], ["{files}/missing.npz"]),
        (["--resume", "--out", "{files}/damaged_run"], ["{files}/damaged_run/checkpoints/latest.npz", "not a wizard checkpoint"]),
        (["--resume", "--out", "{files}/odd_run"], ["{files}/odd_run/checkpoints/latest.npz", "not a wizard checkpoint"]),
    ],
    "train-values": [
        (["--out", ""], ["argument --out", "empty"]),
        (["--seed", "-1"], ["argument --seed"]),
        (["--samples", BIG], ["argument --samples: must be at least 1 and at most 1000000000"]),
        (["--games", "0"], ["argument --games: must be at least 1"]),
        (["--share", "2"], ["--share"]),
        (["--share", "nan"], ["argument --share", "finite"]),
        (["--margin", "-1"], ["--margin"]),
        (["--hidden", "x"], ["--hidden 'x'"]),
        (["--hidden", "0"], ["--hidden"]),
        (["--torch-threads", "0"], ["argument --torch-threads: must be at least 1"]),
        (["--workers", "0"], ["--workers"]),
        (["--mix", "2"], ["--mix '2'"]),
        (["--data", "some"], ["argument --data", "invalid choice"]),
        (["--workers", "100000"], ["argument --workers: must be at least 1 and at most 256"]),
        (["--resume", "--out", "{files}/nowhere"], ["--resume", "{files}/nowhere"]),
        (["--no-advice", "--features"], ["--features and --no-advice", "RuleAgent's numbers"]),
        (["--no-advice", "--margin", "2"], ["--margin and --no-advice", "plain argmax"]),
        (["--no-advice", "--learn", "bid"], ["--learn bid and --no-advice", "RuleAgent"]),
        (["--no-advice", "--start", str(PRETRAINED), "--hidden", "512,256"], ["--start", "reads RuleAgent's advice"]),
    ],
    "eval-suite": [
        (["nobody"], ["AGENT: unknown agent 'nobody'"]),
        (["ppo:{files}/missing.npz"], ["{files}/missing.npz", "no such file"]),
        (["rule", "--games", "1"], ["argument --games: must be at least 2"]),
        (["rule", "--games", "abc"], ["argument --games", "expected an integer"]),
        (["rule", "--games", BIG], ["--games must be at least 2 and at most 10000000, not 1000000000000"]),
        (["rule", "--seed", "-1"], ["argument --seed", "0 to 2**63 - 1"]),
        (["rule", "--reference", "nobody"], ["--reference: unknown agent 'nobody'"]),
        (["rule", "--reference-games", "0"], ["argument --reference-games: must be at least 2"]),
        (["rule", "--players-battery", "7"], ["--players-battery 7"]),
        (["rule", "--players-battery", "x"], ["--players-battery 'x'"]),
        (["rule", "--skip", "nothing"], ["--skip 'nothing'", "the rows are"]),
        (["rule", "--out", ""], ["argument --out", "empty"]),
    ],
    "card": [
        ([], ["the following arguments are required: CARD"]),
        ([""], ["argument CARD", "empty"]),
        (["{files}/nowhere.toml"], ["{files}/nowhere.toml no such file"]),
        (["{files}/text.jsonl"], ["{files}/text.jsonl: a card is NAME.toml"]),
        ([RECIPE], ["wizard-v1.toml: 'title' must be Markdown text"]),
        ([CARD, "--suite", "{files}/text.jsonl"], ["{files}/text.jsonl is not valid JSON"]),
        ([CARD, "--suite", "{files}/deep.jsonl"], ["{files}/deep.jsonl is not valid JSON"]),
        ([CARD, "--suite", "{files}/odd_run/config.json"], ["odd_run/config.json: not the JSON of `wizard eval-suite`"]),
        ([CARD, "--suite", "{files}/a_folder"], ["{files}/a_folder is a folder"]),
        ([CARD, "--check", "--suite", "{files}/text.jsonl"], ["--suite gives one card its battery"]),
    ],
    "compare-arrays": [
        ([], ["the following arguments are required: FIRST, SECOND"]),
        (["", "{files}/nan.npz"], ["argument FIRST", "empty"]),
        (["{files}/nowhere", "{files}/nan.npz"], ["{files}/nowhere: no such file or folder"]),
        (["{files}/text.jsonl", "{files}/nan.npz"], ["{files}/text.jsonl: is not a .npz file"]),
        (["{files}/nan.npz", "{files}/text.jsonl"], ["{files}/text.jsonl: is not a .npz file"]),
        (["{files}/damaged_run/checkpoints/latest.npz", "{files}/nan.npz"], ["latest.npz: is not a .npz file"]),
        (["{files}/a_folder", "{files}/nan.npz"], ["{files}/a_folder is a folder and {files}/nan.npz is not"]),
        (["{files}/a_folder", "{files}/a_folder"], ["{files}/a_folder: no .npz file under it"]),
        (["{files}/nan.npz", "{files}/a_folder"], ["{files}/a_folder: is a folder, not a regular file"]),
        (["{files}/nan.npz", "{files}/nan.npz", "--except"], ["argument --except: expected one argument"]),
    ],
    "compare-evals": [
        ([], ["the following arguments are required: FIRST, SECOND"]),
        (["", "{files}/text.jsonl"], ["argument FIRST", "empty"]),
        (["{files}/nowhere.json", "{files}/text.jsonl"], ["{files}/nowhere.json no such file"]),
        (["{files}/text.jsonl", "{files}/text.jsonl"], ["{files}/text.jsonl is not valid JSON"]),
        (["{files}/deep.jsonl", "{files}/text.jsonl"], ["{files}/deep.jsonl is not valid JSON"]),
        (["{files}/a_folder", "{files}/text.jsonl"], ["{files}/a_folder is a folder"]),
        (["{files}/nan.npz", "{files}/text.jsonl"], ["{files}/nan.npz is not valid JSON"]),
        (["{files}/odd_run/config.json", "{files}/odd_run/config.json"], ["config.json is not the eval.json of wizard eval"]),
        (["{files}/odd_run/config.json", "{files}/odd_run/config.json", "--first"], ["argument --first: expected one argument"]),
    ],
    "eval-iterations": [
        ([], ["give a wizard train-values run folder (RUN) or --checkpoints"]),
        (["{files}/nowhere"], ["RUN {files}/nowhere: no such folder"]),
        (["{files}/text.jsonl"], ["RUN {files}/text.jsonl: not a folder"]),
        (["{files}/damaged_run"], ["RUN {files}/damaged_run: no checkpoints/iter-K.npz in it"]),
        (["{files}/damaged_run", "--checkpoints", "a.npz"], ["--checkpoints: not allowed with argument RUN"]),
        (["--checkpoints", "{files}/nan.npz"], ["{files}/nan.npz"]),
        (["--checkpoints", "{files}/hidden_ab.npz"], ["{files}/hidden_ab.npz", "config entry 'hidden'"]),
        (["--checkpoints", "a.npz,,b.npz"], ["--checkpoints: an empty name"]),
        (["--checkpoints", "a.npz,a.npz"], ["--checkpoints names a.npz twice"]),
        (["--checkpoints", str(PRETRAINED), "--games", "1"], ["argument --games: must be at least 2 and at most 1000000000000, not 1"]),
        (["--checkpoints", str(PRETRAINED), "--games", BIG], ["--games 1,000,000,000,000 would need about"]),
        (["--checkpoints", str(PRETRAINED), "--pimc-games", "1"], ["--pimc-games must be 0 (not played) or at least 2"]),
        (["--checkpoints", str(PRETRAINED), "--pimc-games", "2", "--pimc", "nobody"], ["--pimc: unknown agent 'nobody'"]),
        (["--checkpoints", str(PRETRAINED), "--pimc", "pimc:samples=4"], ["--pimc applies with --pimc-games M only"]),
        (["--checkpoints", str(PRETRAINED), "--players", "7"], ["argument --players: must be at least 3 and at most 6, not 7"]),
        (["--checkpoints", str(PRETRAINED), "--seed", "-1"], ["argument --seed"]),
        (["--checkpoints", str(PRETRAINED), "--out", ""], ["argument --out", "empty"]),
    ],
    "league": [
        ([], ["a league needs at least 2 agents, not 0"]),
        (["rule", "nobody"], ["AGENT 'nobody': unknown agent 'nobody'"]),
        (["rule", "rule"], ["AGENT 'rule' is named twice"]),
        (["ppo:{files}/missing.npz", "rule"], ["AGENT 'ppo:", "{files}/missing.npz", "no such file"]),
        (["rule", "random", "--deals", "1"], ["argument --deals: must be at least 2"]),
        (["rule", "random", "--deals", BIG], ["--deals 1,000,000,000,000 would need about"]),
        (["rule", "random", "--seed", "-1"], ["argument --seed"]),
        (["rule", "random", "--players", "7"], ["argument --players: must be at least 3 and at most 6, not 7"]),
        (["rule", "random", "--out", ""], ["argument --out", "empty"]),
        (["rule", "random", "--workers", "0"], ["argument --workers: must be at least 1"]),
        (["rule", "random", "--out", "{files}/text.jsonl"], ["{files}/text.jsonl", "not a folder"]),
        (["rule", "--from", "{files}/text.jsonl"], ["--from {files}/text.jsonl is not valid JSON"]),
        (["rule", "--from", "{files}/a_folder"], ["--from {files}/a_folder is a folder"]),
        (["rule", "--from", "{files}/odd_run/config.json"], ["config.json: not the JSON of a `wizard league`"]),
    ],
    "recipe": [
        ([RECIPE], ["--out"]),
        ([RECIPE, "--out", ""], ["argument --out", "empty"]),
        (["{files}/missing.toml", "--out", "{out}"], ["recipe {files}/missing.toml", "no such file"]),
        (["{files}/a_folder", "--out", "{out}"], ["recipe {files}/a_folder", "is a folder, not a regular file"]),
        (["{files}/text.jsonl", "--out", "{out}"], ["recipe {files}/text.jsonl", "not valid TOML"]),
        (["{files}/deep.jsonl", "--out", "{out}"], ["recipe {files}/deep.jsonl", "not valid TOML"]),
        (["{files}/nan.npz", "--out", "{out}"], ["recipe {files}/nan.npz", "not a UTF-8 text file"]),
        ([RECIPE, "--out", "{files}/damaged_run"], ["{files}/damaged_run is not an empty folder"]),
        ([RECIPE, "--out", "{files}/nowhere", "--resume"], ["--resume: no recipe run in {files}/nowhere"]),
        ([RECIPE, "--out", "{out}", "--until", "nope"], ["--until 'nope': the recipe has no such step"]),
    ],
    "baseline": [
        ([], ["required: ALGO, --setting, --out"]),
        (["nope", "--setting", "wizard-3p-5r", "--out", "{out}"], ["argument ALGO: invalid choice: 'nope'"]),
        (["dmc", "--setting", "nope", "--out", "{out}"], ["argument --setting: invalid choice: 'nope'"]),
        (["dmc", "--setting", "wizard-3p-5r", "--out", ""], ["argument --out", "empty"]),
        (["dmc", "--setting", "wizard-3p-5r", "--out", "{out}", "--minutes", "-1"], ["argument --minutes: must be at least 0"]),
        (["dqn", "--setting", "wizard-3p-5r", "--out", "{out}", "--steps", "0"], ["argument --steps: must be at least 1 and at most 1000000000000, not 0"]),
        (["dmc", "--setting", "wizard-3p-5r", "--out", "{out}", "--num-envs", "0"], ["argument --num-envs: must be at least 1"]),
        (["nfsp", "--setting", "wizard-3p-5r", "--out", "{out}", "--eval-deals", "0"], ["argument --eval-deals: must be at least 1"]),
        (["dmc", "--setting", "wizard-3p-5r", "--out", "{out}", "--set", "queue=0"], ["--set queue must be at least 1"]),
        (["dmc", "--setting", "wizard-3p-5r", "--out", "{files}/nowhere", "--resume"], ["--resume: no run in {files}/nowhere"]),
        (["values", "--setting", "wizard-3p-5r", "--out", "{out}", "--eval-every", "5"], ["--eval-every does not apply to values"]),
        (["values", "--setting", "wizard-3p-5r", "--out", "{out}", "--checkpoint-every", "5"],
         ["--checkpoint-every does not apply to values"]),
        (["values", "--setting", "wizard-3p-5r", "--out", "{out}", "--set", "reward_scale=1"],
         ["--set reward_scale does not apply to values"]),
        (["values", "--setting", "wizard-3p-5r", "--out", "{out}", "--set", "samples=0"], ["--set samples must be at least 1"]),
        (["values", "--setting", "wizard-3p-5r", "--out", "{out}", "--set", "share=2"], ["--set share", "at most 1"]),
        (["values", "--setting", "wizard-3p-5r", "--out", "{out}", "--set", "targets=nope"],
         ["--set targets must be one of rollout, search, not 'nope'"]),
        (["values", "--setting", "wizard-3p-5r", "--out", "{out}", "--set", "workers=0"], ["--set workers must be at least 1"]),
        (["values", "--setting", "wizard-3p-5r", "--out", "{files}/nowhere", "--resume"], ["--resume: no run in {files}/nowhere"]),
        (["nfsp-self", "--setting", "wizard-3p-5r", "--out", "{out}", "--set", "eta=2"], ["--set eta must be at least 0 and at most 1"]),
        (["nfsp-self", "--setting", "wizard-3p-5r", "--out", "{out}", "--set", "reservoir_size=0"],
         ["--set reservoir_size must be at least 1"]),
        (["nfsp-self", "--setting", "wizard-3p-5r", "--out", "{files}/nowhere", "--resume"], ["--resume: no run in {files}/nowhere"]),
    ],
}

FLAT = [(command, args, needles) for command, cases in CASES.items() for args, needles in cases]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hostile") / "files"
    bad_files(folder)
    return folder


def snapshot(folder: Path) -> dict[str, int]:
    """Every path under ``folder`` with its size: what a refused command must leave as it was."""
    return {str(p): p.stat().st_size if p.is_file() else -1 for p in folder.rglob("*")}


def expand(words: list[str], files: Path, out: Path) -> list[str]:
    return [w.replace("{files}", str(files)).replace("{out}", str(out)) for w in words]


def check_one_line(stderr: str, needles: list[str]) -> str:
    """The single error line, after checking it holds every needle and no traceback."""
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr[:2000]
    line = lines[0]
    assert line.startswith("wizard: error: ") and "Traceback" not in stderr
    assert len(line) < 600, line[:600]  # a huge value is described, not echoed
    assert "set_int_max_str_digits" not in line and "internal error" not in line
    for needle in needles:
        assert needle in line, line
    return line


def skip_without_torch(stderr: str, command: str) -> None:
    """Skip, naming torch, where this Python has no torch (nox's 3.10 and 3.13) and the command said it needs it:
    a training command names a missing torch before it reads its other options."""
    if importlib.util.find_spec("torch") is None and "needs torch" in stderr:
        pytest.skip(f"wizard {command} needs torch (the train extra), which is not installed; its options come after")


@pytest.mark.parametrize("command, args, needles", FLAT, ids=[f"{c}-{i}" for i, (c, *_rest) in enumerate(FLAT)])
def test_bad_input_gives_one_line_naming_it_and_changes_nothing(command, args, needles, files, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a default output folder (runs/...) would appear here
    out = tmp_path / "out"
    train_out = ["--out", str(out)] if command.startswith("train") and "--out" not in args else []
    before = snapshot(files.parent)
    status = main([command, *expand(args, files, out), *train_out])
    captured = capsys.readouterr()
    assert status == 2, captured.err
    skip_without_torch(captured.err, command)
    line = check_one_line(captured.err, expand(needles, files, out))
    assert captured.out == "", captured.out
    assert NOT_BATCH_SIZE not in line or "--batch-size" in line
    assert list(tmp_path.iterdir()) == [], f"{line}: left {list(tmp_path.iterdir())}"
    assert snapshot(files.parent) == before


@pytest.mark.parametrize(
    "args, needles",
    [
        (["simulate", "--seed", str(2**63)], ["argument --seed"]),
        (["play", "--seed", DIGITS_5000], ["argument --seed", "5,000 characters"]),
        (["replay", "{files}/deep.jsonl"], ["nested too deeply"]),
        (["bench", "--seconds", "nan"], ["argument --seconds"]),
        (["eval", "--agents", "rule,rule,rule,rule", "--out", ""], ["argument --out"]),
        (["train", "--torch-threads", "0", "--out", "{out}"], ["--torch-threads"]),
    ],
)
def test_bad_input_through_the_installed_command(args, needles, files, tmp_path):
    wizard = Path(sys.executable).with_name("wizard")
    command = [str(wizard)] if wizard.exists() else [sys.executable, "-m", "wizard_env"]
    run = subprocess.run([*command, *expand(args, files, tmp_path / "out")], capture_output=True, text=True,
                         cwd=tmp_path, stdin=subprocess.DEVNULL, env=os.environ | {"PYTHONWARNINGS": "ignore"})
    assert run.returncode == 2, run.stderr
    skip_without_torch(run.stderr, args[0])
    check_one_line(run.stderr, needles)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("error", [IndexError("list index out of range\nsecond line"), MemoryError(), ZeroDivisionError("x")])
def test_an_unexpected_exception_is_still_one_line(error, monkeypatch, capsys):
    import wizard_env.cli.simulate as cli

    def broken(args):
        raise error

    monkeypatch.setattr(cli, "run", broken)
    assert main(["simulate"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("wizard: error: ") and "Traceback" not in err
    assert type(error).__name__ in err or "out of memory" in err


def test_every_subcommand_has_its_cases():
    from wizard_env.cli.main import build_parser

    subcommands = next(a for a in build_parser()._actions if a.dest == "command").choices
    assert set(CASES) == set(subcommands)
    assert all(len(cases) >= 8 for cases in CASES.values())


@pytest.mark.parametrize(
    "setting, value, needle",
    [("learning_rate", float("nan"), "--learning-rate must be a finite number"), ("snapshot_every", 0, "--snapshot-every"),
     ("torch_threads", 0, "--torch-threads"), ("pool", {"rule": float("inf")}, "--pool"), ("hidden", "ab", "'hidden'"),
     ("hidden", [128, 0], "'hidden'"), ("num_envs", 10**12, "--num-envs 1,000,000,000,000 would need"),
     ("seed", -1, "--seed must be an integer from 0 to 2**63 - 1")],
)
def test_run_training_checks_its_config_before_it_makes_the_run_folder(setting, value, needle, tmp_path):
    import dataclasses

    from wizard_env.training.ppo.train import TrainConfig, run_training

    cfg = dataclasses.replace(TrainConfig(), **{setting: value})
    with pytest.raises(ValueError, match=re.escape(needle)):
        run_training(cfg, Rules.make(4), tmp_path / "run")
    assert list(tmp_path.iterdir()) == []


@given(st.one_of(st.text(max_size=60), st.integers().map(str), st.floats().map(str),
                 st.from_regex(r"\s*[-+]{0,2}[0-9]{1,40}\s*", fullmatch=True)))
def test_an_option_value_parses_or_is_refused_in_one_short_line(text):
    import argparse

    from wizard_env.util import options

    for parse in (options.int_type, options.float_type, options.seed_type, options.path_type):
        try:
            value = parse(text)
        except argparse.ArgumentTypeError as err:
            assert "\n" not in str(err) and len(str(err)) < 120
        else:
            assert parse is not options.seed_type or 0 <= value < 2**63
            assert parse is not options.float_type or math.isfinite(value)


@given(st.one_of(st.integers(), st.booleans(), st.floats(), st.text(max_size=5), st.none()))
def test_check_seed_takes_exactly_the_ints_of_int64_range(seed):
    from wizard_env.util.checks import check_seed

    ok = type(seed) is int and 0 <= seed < 2**63
    try:
        assert check_seed(seed) == seed and ok
    except ValueError as err:
        assert not ok and "2**63 - 1" in str(err) and len(str(err)) < 120


# -- issue 24, items 11 and 14: duplicated options, limits, file kinds, pimc where it cannot play, bad types


@pytest.mark.parametrize("spec, option", [("pimc:samples=2:samples=3", "samples"), ("ppo:play=rule:play=net", "play"),
                                          ("pimc:rollout=rule:samples=2:rollout=ppo", "rollout")])
def test_an_agent_spec_that_gives_an_option_twice_is_refused_naming_it(spec, option, capsys):
    from wizard_env.agents.registry import parse_spec

    with pytest.raises(ValueError, match=f"gives the option '{option}' twice"):
        parse_spec(spec)
    assert main(["simulate", "--agents", spec, "--games", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wizard: error: --agents") and f"'{option}' twice" in err and err.count("\n") == 1


def test_an_openspiel_game_string_that_gives_a_parameter_twice_is_refused_naming_it():
    pyspiel = pytest.importorskip("pyspiel")
    import wizard_env.integrations.openspiel_game  # noqa: F401  (registers the game and checks its strings)

    for text in ("python_wizard(players=3,players=4)", "python_wizard(players=3, rounds=2 ,players=4)",
                 "turn_based_simultaneous_game(game=python_wizard(rounds=1,rounds=2))"):
        with pytest.raises(ValueError, match="parameter '(players|rounds)' twice"):
            pyspiel.load_game(text)
    with pytest.raises(ValueError, match="parameter 'players' twice"):
        pyspiel.load_game_as_turn_based("python_wizard(players=3,players=4)")
    assert pyspiel.load_game("python_wizard(players=3,rounds=2)").num_players() == 3  # one of each still loads


@pytest.mark.parametrize("params, needle", [({"schedule": "foo"}, "schedule='foo': expected 'standard' or 'amigo'"),
                                            ({"players": 7}, "players=7: Wizard is played by 3 to 6 players")])
def test_an_impossible_openspiel_parameter_is_named_as_given(params, needle):
    pyspiel = pytest.importorskip("pyspiel")
    import wizard_env.integrations.openspiel_game  # noqa: F401

    with pytest.raises(ValueError, match="^" + re.escape(needle)):
        pyspiel.load_game("python_wizard", params)


def test_an_integer_option_past_its_digits_says_the_limit(capsys):
    assert main(["simulate", "--games", "1" + "0" * 30]) == 2
    err = capsys.readouterr().err
    assert "argument --games: expected an integer of at most 30 digits, not one of 31 digits" in err
    assert main(["simulate", "--games", "1" + "0" * 29]) == 2  # within the digits: past the range declared
    assert "argument --games: must be at least 1 and at most 1000000000000, not" in capsys.readouterr().err
    assert main(["simulate", "--games", "1" + "0" * 12]) == 2  # within the range: the memory limit, with the count it allows
    err = capsys.readouterr().err
    assert "--games 1,000,000,000,000 would need" in err and re.search(r"enough for at most about [0-9,]+\n", err)


def test_a_fifo_or_a_link_to_a_device_given_as_a_checkpoint_or_replay_is_named(tmp_path, capsys):
    fifo, zero = tmp_path / "fifo.npz", tmp_path / "zero.npz"
    os.mkfifo(fifo)  # nobody writes to it: a read would wait forever
    zero.symlink_to("/dev/zero")  # a read would never end
    (tmp_path / "broken.npz").symlink_to(tmp_path / "missing")
    for path, kind in ((fifo, "is a FIFO (named pipe), not a regular file"), (zero, "is a character device, not a regular file"),
                       (tmp_path / "broken.npz", "is a link to a missing file")):
        assert main(["simulate", "--agents", f"ppo:{path}", "--games", "1"]) == 2
        assert capsys.readouterr().err == f"wizard: error: checkpoint {path}: {kind}\n"
    assert main(["replay", str(zero)]) == 2
    assert capsys.readouterr().err == f"wizard: error: {zero}: is a character device, not a replay file\n"


def test_pimc_is_refused_as_an_env_opponent_when_the_env_is_made():
    pytest.importorskip("stable_baselines3", reason="the VecEnvs are stable-baselines3's (the train extra)")
    from wizard_env.agents.registry import make_agent
    from wizard_env.envs.mixed_vec_env import MixedVecEnv
    from wizard_env.envs.single_agent import WizardSingleAgentEnv
    from wizard_env.envs.vec_env import WizardVecEnv

    search = "searches the game itself"
    with pytest.raises(ValueError, match=rf"opponents\[0\]: 'pimc' {search}"):
        WizardVecEnv(2, opponents="pimc")
    with pytest.raises(ValueError, match=rf"opponents\[1\]: agent 'pimc' {search}"):
        WizardVecEnv(2, opponents=["rule", make_agent("pimc:samples=2", seed=0)])
    with pytest.raises(ValueError, match=rf"opponents\[1\]: 'pimc:samples=2' {search}"):
        WizardSingleAgentEnv(num_players=3, opponents=["rule", "pimc:samples=2"])
    with pytest.raises(ValueError, match=search):
        MixedVecEnv(4, players=(3, 4), opponents="pimc")
    env = WizardVecEnv(2, seed=0, num_players=3)
    pool = env.opponent_pool
    with pytest.raises(ValueError, match=search):
        env.set_opponent_pool(["rule", "pimc"])
    assert env.opponent_pool == pool
    single = WizardSingleAgentEnv(num_players=3, opponent_sampler=lambda rng: "pimc")
    with pytest.raises(ValueError, match=rf"opponent_sampler result\[0\]: 'pimc' {search}"):
        single.reset(seed=0)


def test_simulate_refuses_pimc_with_the_reason_and_play_plays_against_it(capsys, monkeypatch):
    import io

    assert main(["simulate", "--agents", "rule,pimc:samples=2,rule,rule", "--games", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wizard: error: --agents 'pimc:samples=2': a search agent") and "wizard eval" in err
    assert main(["simulate", "--help"]) == 0
    # without spaces: argparse may wrap the list after the hyphen of a name
    assert "known:random,rule,net,net-v1..net-v13,net-bid,baseline,py:MODULE:NAME," in "".join(capsys.readouterr().out.split())
    monkeypatch.setattr(sys, "stdin", io.StringIO("0\n\n"))  # bid 0, then Enter plays the one card
    assert main(["play", "--opponents", "pimc:samples=2", "--rounds", "1", "--seed", "1"]) == 0
    assert "Game over" in capsys.readouterr().out


@pytest.mark.parametrize("rules", [None, "standard", 4, {"num_players": 4}])
def test_wizard_batch_names_rules_that_are_not_rules(rules):
    from wizard_env.engine.batch import WizardBatch

    with pytest.raises(ValueError, match=re.escape("rules must be a Rules, such as Rules.make(4)")):
        WizardBatch(rules, 2)


@pytest.mark.parametrize("make, needle", [
    (lambda V, M: V(2, learn=["both"]), "learn must be one of both, bid, play, not ['both']"),
    (lambda V, M: V(2, episode=["game"]), "episode must be one of game, round"),
    (lambda V, M: V(2, opponent_weights="1"), "opponent weights must be a flat list of numbers"),
    (lambda V, M: V(2, opponent_weights=[[1]]), "opponent weights must be a flat list of numbers"),
    (lambda V, M: V(10**12), "num_envs 1,000,000,000,000 would need about"),
    (lambda V, M: M(4, learn=["both"]), "learn must be one of both, bid, play"),
    (lambda V, M: M(4, players="34"), "players must be a list of distinct player counts"),
    (lambda V, M: M(4, players=[3.5, 4]), "players must be a list of distinct player counts"),
    (lambda V, M: M(4, num_players=4), "MixedVecEnv takes no argument 'num_players' (the player counts are players=...)"),
])
def test_vec_env_arguments_of_the_wrong_type_are_named(make, needle):
    pytest.importorskip("stable_baselines3", reason="the VecEnvs are stable-baselines3's (the train extra)")
    from wizard_env.envs.mixed_vec_env import MixedVecEnv
    from wizard_env.envs.vec_env import WizardVecEnv

    with pytest.raises(ValueError, match=re.escape(needle)):
        make(WizardVecEnv, MixedVecEnv)
