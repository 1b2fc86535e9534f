"""The fuzz targets' seed corpus (benchmarks/fuzz/corpus), fed through each target: every input keeps the contract
(the target returns or raises its clear error), and the valid documents among them are read without an error, so
a target does the work it claims. The long coverage-guided runs are ``python -m benchmarks.fuzz`` (docs/performance.md).
"""

from __future__ import annotations

import importlib
import json
import random
import re
from importlib.util import find_spec
from pathlib import Path

import pytest

from benchmarks.fuzz.draw import Draw, mutate, toml
from benchmarks.fuzz.targets import STRUCTURED, TARGETS, broken

CORPUS = Path(__file__).resolve().parent.parent / "benchmarks" / "fuzz" / "corpus"
#: The seeds that are whole valid documents, by their suffix; the others (``.bin``) are structured inputs or inputs
#: that once broke a target.
VALID = (".jsonl", ".npz", ".toml", ".txt", ".json")


def seeds(target: str) -> list[Path]:
    return sorted((CORPUS / target).iterdir())


def needs(target: str) -> list:
    return [pytest.mark.skipif(find_spec("starlette") is None, reason="the web extra is not installed")] if target == "web" else []


CASES = [pytest.param(target, path, id=f"{target}/{path.name}", marks=needs(target)) for target in TARGETS for path in seeds(target)]


def test_every_target_has_a_seed_corpus_with_a_valid_document_and_a_structured_input():
    for target in TARGETS:
        names = [p.name for p in seeds(target)]
        assert any(n.endswith(VALID) for n in names) and any(n.endswith(".bin") for n in names), (target, names)


@pytest.mark.parametrize("target, path", CASES)
def test_each_seed_keeps_the_contract(target, path):
    err = broken(target, path.read_bytes())
    assert err is None, f"{type(err).__name__}: {err}"


@pytest.mark.parametrize("target, path", [c for c in CASES if c.values[1].name.endswith(VALID) and c.values[1].name != "move.json"])
def test_each_valid_seed_is_read_without_an_error(target, path):
    TARGETS[target].run(path.read_bytes())  # raises on a document its parser refuses


@pytest.mark.parametrize("target", [pytest.param(t, marks=needs(t)) for t in TARGETS])
def test_structured_inputs_from_a_seeded_generator_keep_the_contract(target):
    rng = random.Random(f"fuzz-{target}")
    for _ in range(60):
        data = bytes([STRUCTURED]) + rng.randbytes(rng.randrange(120))
        err = broken(target, data)
        assert err is None, f"{type(err).__name__}: {err} on {data!r}"


def test_the_same_bytes_make_the_same_mutation_and_others_differ():
    doc = {"a": [1, 2, {"b": "x"}], "c": True}
    made = [json.dumps(mutate(json.loads(json.dumps(doc)), Draw(bytes(range(k, k + 40))))) for k in range(20)]
    again = [json.dumps(mutate(json.loads(json.dumps(doc)), Draw(bytes(range(k, k + 40))))) for k in range(20)]
    assert made == again and len(set(made)) > 10 and sum(m != json.dumps(doc) for m in made) > 15


def test_the_toml_writer_reads_back_as_the_document():
    doc = {"name": "x \"q\" \\ é", "n": -3, "f": 0.25, "flag": False, "step": [{"kind": "margins", "grid": [[1, 2], []]}],
           "table": {"key with space": "v"}}
    reader = importlib.import_module("tomllib" if find_spec("tomllib") else "tomli")  # tomli on Python 3.10
    assert reader.loads(toml(doc)) == doc


def test_an_exception_is_counted_by_its_type_and_the_innermost_frame_of_the_project():
    from benchmarks.fuzz.worker import kind
    from wizard_env.engine.cards import parse_card

    with pytest.raises(TypeError) as raised:
        parse_card(None)
    assert re.fullmatch(r"TypeError@cards\.py:\d+", kind(raised.value)), kind(raised.value)


def test_the_runner_reads_inputs_coverage_and_an_early_stop_from_libfuzzers_output():
    from benchmarks.fuzz.__main__ import parse_log

    log = ("#2\tINITED cov: 40 ft: 41 corp: 1/1b exec/s: 0 rss: 40Mb\n#512\tpulse  cov: 312 ft: 900 corp: 20/2Kb exec/s: 256\n"
           "#700\tNEW    cov: 315 ft: 912 corp: 21/2Kb lim: 8 exec/s: 250 rss: 210Mb L: 5/8 MS: 1 ChangeBit-\n"
           "Done 1000 runs in 4 second(s)\nstat::number_of_executed_units: 1000\n")
    assert parse_log(log) == {"inputs": 1000, "edges": 315, "features": 912, "stopped": []}
    hung = "#64\tpulse  cov: 10 ft: 11 corp: 2/2b exec/s: 32\n==12== ERROR: libFuzzer: timeout after 31 seconds\n"
    assert parse_log(hung) == {"inputs": 64, "edges": 10, "features": 11, "stopped": ["==12== ERROR: libFuzzer: timeout after 31 seconds"]}
