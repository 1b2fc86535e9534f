"""``wizard recipe`` checks every key of every step before anything is written: one generated test over the recipe
schema (every key of every kind of step, given values below and above its range, of another kind, huge, not finite
and of another shape), the cases that once failed only after steps had run, and paths that are not regular files."""

from __future__ import annotations

import json
import math
import os
import threading
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: tomli, the package tomllib came from (a dependency there)
    import tomli as tomllib
from pathlib import Path

import pytest

from wizard_env.cli.main import main
from wizard_env.training.recipes import recipe as recipes
from wizard_env.training.recipes.recipe_keys import KEYS, Key
from wizard_env.training.values.values_config import RESUME_MAY_CHANGE
from wizard_env.util import files

from test_recipe import TINY

#: The step of TINY of each kind of step.
STEP_OF_KIND = {kind: next(i for i, t in enumerate(tomllib.loads(TINY)["step"]) if t["kind"] == kind) for kind in KEYS}


def toml_value(value) -> str:
    """``value`` as a TOML value (inline tables for dicts)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else "inf" if value > 0 else "-inf"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(map(toml_value, value)) + "]"
    return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + "}"


def toml_text(raw: dict) -> str:
    """A parsed recipe written back as TOML: its keys, then each ``[[step]]`` with its ``[[step.stage]]`` tables."""
    lines = [f"{k} = {toml_value(v)}" for k, v in raw.items() if k != "step"]
    for step in raw["step"]:
        stages = step.get("stage") if isinstance(step.get("stage"), list) and all(isinstance(s, dict) for s in step["stage"]) else None
        lines += ["", "[[step]]"] + [f"{k} = {toml_value(v)}" for k, v in step.items() if not (k == "stage" and stages is not None)]
        for stage in stages or []:
            lines += ["[[step.stage]]"] + [f"{k} = {toml_value(v)}" for k, v in stage.items()]
    return "\n".join(lines) + "\n"


def bad_values(key: Key) -> list[tuple[str, object]]:
    """Values ``key`` refuses, by what is wrong with them: of another kind, another shape, out of its range (below,
    above, huge) and not finite."""
    scalar = key.kind in ("int", "float", "bool", "str", "step")
    cases: list[tuple[str, object]] = [("another shape: a table", {"a": 1})]
    cases.append(("another shape: a list", [1]) if scalar else ("another shape: a number", 1.5))
    if key.kind in ("int", "float", "rounds"):
        cases.append(("another kind", True if key.kind == "rounds" else "x"))
    if key.kind == "int":
        cases.append(("another kind: a fraction", 1.5))
    if key.kind in ("str", "step", "bool"):
        cases.append(("another kind", 5))
    if key.kind in ("ints", "strs", "steps", "grid", "stages"):
        cases.append(("another kind of element", [[1]] if key.kind != "grid" else [1, 2]))
    if key.range is not None:
        low, high = key.range
        fraction = key.kind == "float" or key.kind == "grid"
        below = low if key.above else low - (0.5 if fraction else 1)
        above = high + (0.5 if fraction else 1)
        huge = 1e300 if fraction else 2**63
        wrap = (lambda v: [[v, 0]]) if key.kind == "grid" else (lambda v: [v]) if key.kind == "ints" else (lambda v: v)
        cases += [("below its range", wrap(below)), ("above its range", wrap(above)), ("huge", wrap(huge))]
        if fraction:
            cases += [("not finite", wrap(math.inf)), ("not a number", wrap(math.nan))]
    return cases


CASES = [(kind, name, why, value) for kind, keys in KEYS.items() for name, key in keys.items()
         for why, value in bad_values(key)]
#: A stage's keys, each with a value of another kind and one out of range.
STAGE_CASES = [(name, why, value) for name in RESUME_MAY_CHANGE for why, value in bad_values(KEYS["train-values"][name])
               if why in ("another shape: a table", "below its range", "above its range", "not finite")]


def refused(tmp_path: Path, raw: dict, capsys) -> str:
    """The one line ``wizard recipe`` prints for the recipe ``raw``, after asserting exit status 2 and that nothing
    was written in --out."""
    path = tmp_path / "bad.toml"
    path.write_text(toml_text(raw))
    out = tmp_path / "run"
    assert main(["recipe", str(path), "--out", str(out)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"wizard: error: recipe {path}: ")
    assert not out.exists()
    return lines[0]


def test_the_tiny_recipe_written_back_loads_so_each_refusal_below_is_its_bad_value(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(toml_text(tomllib.loads(TINY)))
    assert recipes.load(path).raw == tomllib.loads(TINY)


def test_every_numeric_key_of_every_kind_of_step_has_a_range():
    numeric = [(kind, name) for kind, keys in KEYS.items() for name, key in keys.items()
               if key.kind in ("int", "float", "ints", "grid", "rounds") and key.range is None]
    assert numeric == []


@pytest.mark.parametrize("kind, name, why, value", CASES, ids=[f"{k}-{n}-{w}" for k, n, w, _ in CASES])
def test_every_key_refuses_a_bad_value_naming_file_step_and_key_before_any_file(tmp_path, capsys, kind, name, why, value):
    raw = tomllib.loads(TINY)
    index = STEP_OF_KIND[kind]
    raw["step"][index][name] = value
    line = refused(tmp_path, raw, capsys)
    assert f"step {index + 1} {raw['step'][index]['name']!r}, key {name!r}: " in line


@pytest.mark.parametrize("name, why, value", STAGE_CASES, ids=[f"{n}-{w}" for n, w, _ in STAGE_CASES])
def test_every_key_of_a_stage_refuses_a_bad_value_naming_the_stage_and_key(tmp_path, capsys, name, why, value):
    raw = tomllib.loads(TINY)
    raw["step"][0]["stage"][1][name] = value
    line = refused(tmp_path, raw, capsys)
    assert "step 1 'data', key 'stage': stage 2: " in line and repr(name) in line


@pytest.mark.parametrize("old, new, where", [
    ("references = []", 'references = ["ppo:/etc/passwd"]', "step 4 'battery', key 'references'"),
    ("eval_deals = 2\n", "eval_deals = 2\nseed = 9223372036854775808\n", "step 1 'data', key 'seed'"),
    ("eval_deals = 2\n", "eval_deals = 2\nseed = -1\n", "step 1 'data', key 'seed'"),
    ("mix = [4]", "mix = [2]", "step 1 'data', key 'mix'"),
    ("epochs = 1\nbatch_size", "epochs = 1000000000000000000\nbatch_size", "step 2 'fit', key 'epochs'"),
    ("grid = [[0, 0], [1.5, 3]]", "grid = [[0, 0], [1.5, inf]]", "step 3 'margins', key 'grid'"),
    ("deals = 2\nrounds = 2", "deals = 2\nrounds = 2\nplayers = 5", "step 3 'margins', key 'players'"),
])
def test_what_once_failed_after_steps_had_run_is_refused_before_any_file(tmp_path, capsys, old, new, where):
    assert old in TINY
    assert f": {where}: " in refused(tmp_path, tomllib.loads(TINY.replace(old, new, 1)), capsys)


def test_a_battery_of_a_checkpoint_that_plays_no_4_player_table_is_refused_before_any_file(tmp_path, capsys):
    three = TINY.replace("mix = [4]", "mix = [3]\nplayers = 3").replace("deals = 2\nrounds = 2", "deals = 2\nrounds = 2\nplayers = 3")
    line = refused(tmp_path, tomllib.loads(three), capsys)
    assert line.endswith("step 4 'battery', key 'checkpoint': the checkpoint of step 'margins' plays 3 players, and the "
                         "battery's rows but 'players' have 4 (skip rule, reference, play and self-play to measure the "
                         "players rows alone)")
    alone = three.replace("players = []", 'players = [3]\nskip = ["rule", "reference", "play", "self-play"]')
    assert len(recipes.load(write(tmp_path, alone)).steps) == 5


def write(folder: Path, text: str) -> Path:
    path = folder / "recipe.toml"
    path.write_text(text)
    return path


def test_the_messages_name_the_key_and_say_what_is_wrong_in_its_words(tmp_path, capsys):
    line = refused(tmp_path, tomllib.loads(TINY.replace("mix = [4]", "mix = []")), capsys)
    assert line.endswith("step 1 'data', key 'mix': must be distinct player counts, at least one, not []")
    line = refused(tmp_path, tomllib.loads(TINY.replace("games = 4", "games = 1000000000000000")), capsys)
    assert line.endswith("step 1 'data', key 'games': must be at least 1 and at most 1000000, not 1000000000000000")
    line = refused(tmp_path, tomllib.loads(TINY.replace("eval_deals = 2\n", "eval_deals = 2\nseed = -1\n")), capsys)
    assert line.endswith("key 'seed': must be at least 0 and at most 9223372036854765807, not -1")
    line = refused(tmp_path, tomllib.loads(TINY.replace("grid = [[0, 0], [1.5, 3]]", "grid = [[0, 0], [1.5, inf]]")), capsys)
    assert line.endswith("key 'grid': expected finite numbers, not inf")


@pytest.mark.parametrize("make", ["fifo", "folder", "device"])
def test_a_recipe_that_is_not_a_regular_file_is_refused_by_name_without_waiting(tmp_path, capsys, make):
    path = {"fifo": tmp_path / "recipe.toml", "folder": tmp_path, "device": Path(os.devnull)}[make]
    if make == "fifo":
        os.mkfifo(path)  # nobody writes to it: a read would wait forever
    status: list[int] = []
    thread = threading.Thread(target=lambda: status.append(main(["recipe", str(path), "--out", str(tmp_path / "run")])),
                              daemon=True)
    thread.start()
    thread.join(60)
    assert status == [2]
    kind = {"fifo": "a FIFO (named pipe)", "folder": "a folder", "device": "a character device"}[make]
    assert capsys.readouterr().err == f"wizard: error: recipe {path}: is {kind}, not a regular file\n"
    assert not (tmp_path / "run").exists()


def test_a_recipe_it_extends_that_is_a_fifo_is_refused_by_name(tmp_path):
    os.mkfifo(tmp_path / "base.toml")
    (tmp_path / "mine.toml").write_text('name = "mine"\nextends = "base.toml"\n')
    with pytest.raises(ValueError, match="^recipe .*base.toml: is a FIFO"):
        recipes.load(tmp_path / "mine.toml")


def test_a_recipe_read_out_of_memory_is_named_by_its_file(tmp_path, monkeypatch, capsys):
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)

    def no_memory(text):
        raise MemoryError

    monkeypatch.setattr(tomllib, "loads", no_memory)
    assert main(["recipe", str(path), "--out", str(tmp_path / "run")]) == 2
    assert capsys.readouterr().err.startswith(f"wizard: error: recipe {path}: out of memory reading it")


@pytest.mark.parametrize("make", ["fifo", "folder", "device"])
def test_regular_file_names_what_a_path_is_when_it_is_not_a_regular_file(tmp_path, make):
    path = {"fifo": tmp_path / "pipe", "folder": tmp_path, "device": Path(os.devnull)}[make]
    if make == "fifo":
        os.mkfifo(path)
    kind = {"fifo": "a FIFO (named pipe)", "folder": "a folder", "device": "a character device"}[make]
    with pytest.raises(ValueError) as error:
        files.regular_file(path, "checkpoint")
    assert str(error.value) == f"checkpoint {path}: is {kind}, not a regular file"
    (tmp_path / "file").write_text("x")
    assert files.regular_file(tmp_path / "file", "checkpoint") == tmp_path / "file"


def test_a_step_that_reads_the_data_of_a_step_stored_otherwise_is_refused_before_any_file(tmp_path, capsys):
    second = ('\n[[step]]\nname = "more"\nkind = "train-values"\nrounds = 2\nmix = [4]\nsamples = 100\ngames = 4\n'
              'hidden = [16]\nadvice = false\nmargin = 0\ndata_from = ["data"]\n')
    text = TINY.replace('\n[[step]]\nname = "fit"', second + '\n[[step]]\nname = "fit"')
    line = refused(tmp_path, tomllib.loads(text), capsys)
    assert line.endswith("step 2 'more', key 'data_from': step 'data' stores its decisions with RuleAgent's choice, "
                         "this step with the action played (advice false)")
