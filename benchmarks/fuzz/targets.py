"""The fuzz targets: each feeds one input, as bytes, to a parser of outside input, as the command that reads it does.

An input starting with byte 0x01 is structured: the bytes after it are choices (``draw.Draw``) that mutate a valid
document (``seeds``); any other input is the raw file, text or body itself. The contract of every target: the call
returns, or raises its ``errors`` (the clear error the CLI or the server turns into one line); any other exception
is a bug (``broken`` returns it).
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator
from unittest import mock

import numpy as np

from wizard_env.agents import ppo_agent, registry
from wizard_env.agents.ppo_agent import NetAgent, load_checkpoint
from wizard_env.agents.zoo import PRETRAINED_DIR
from wizard_env.engine.game import WizardGame
from wizard_env.engine.observation import observe
from wizard_env.engine.replay import ReplayError, file_lines, parse_line, replay_game
from wizard_env.engine.rules import Rules
from wizard_env.render.replay_text import format_game
from wizard_env.training.recipes import recipe
from wizard_env.web.limits import RequestError

from . import seeds
from .draw import PALETTE, Draw, mutate, toml

#: The first byte of a structured input.
STRUCTURED = 1


def _structured(data: bytes) -> Draw | None:
    return Draw(data[1:]) if data[:1] == bytes([STRUCTURED]) else None


# -- replay JSONL: what `wizard replay --check` reads, checks, re-plays and prints --------------------------------


def replay(data: bytes) -> None:
    """Every line of a replay file parsed, re-played and printed, as ``wizard replay FILE --check`` does."""
    draw = _structured(data)
    if draw is not None:
        lines = [mutate(json.loads(draw.choice(seeds.replay_records())), draw) for _ in range(1 + draw.byte() % 2)]
        data = b"".join(json.dumps(line).encode("utf-8", "surrogatepass") + b"\n" for line in lines) + draw.chunk(16)
    for lineno, raw in file_lines(io.BytesIO(data), "fuzz.jsonl"):
        record = parse_line("fuzz.jsonl", lineno, raw)
        replay_game(record)
        format_game(record)


# -- checkpoint .npz: the loader behind net:PATH, and the agent built from what it read --------------------------


def _npy(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.lib.format.write_array(out, array, allow_pickle=False)
    return out.getvalue()


def _changed(array: np.ndarray, draw: Draw) -> np.ndarray:
    op = draw.byte() % 5
    if op == 0:
        return array.astype(draw.choice((np.float64, np.float16, np.int32, np.uint8, np.bool_, np.complex64)))
    if op == 1:
        return draw.choice((array.reshape(-1), array.T, array[None], array[..., : draw.byte() % 4], np.zeros((0,), np.float32)))
    if op == 2 and array.size and array.dtype.kind == "f":
        array = array.copy()
        array.flat[draw.below(array.size)] = draw.choice((np.nan, np.inf, -np.inf, 1e38))
        return array
    if op == 3:
        return np.asfortranarray(array)
    return array


@functools.cache
def _members(index: int) -> dict[str, bytes]:
    return {name: _npy(array) for name, array in seeds.network(index)[1].items()}


def _archive(draw: Draw) -> bytes:
    """A zip of ``.npy`` members: a valid checkpoint's, with its config and members changed by ``draw``."""
    index = draw.byte() % len(seeds.NETWORKS)
    config, weights = seeds.network(index)
    config = mutate(json.loads(json.dumps(config)), draw) if draw.byte() % 2 else config
    text = json.dumps(config).encode("utf-8", "surrogatepass")
    members = dict(_members(index))
    members["config"] = _npy(np.frombuffer(text, np.uint8))
    for _ in range(draw.byte() % 4):
        name, op = draw.choice(sorted(members)), draw.byte() % 6
        if op == 0:
            del members[name]
        elif op == 1:
            members[draw.choice([*members, *weights, "config", "x", str(draw.choice(PALETTE))])] = members.pop(name)
        elif op == 2 and name in weights:
            members[name] = _npy(_changed(weights[name], draw))
        elif op == 3:  # a byte changed, or the member cut short
            blob = bytearray(members[name])
            at = draw.below(len(blob))
            members[name] = bytes(blob[:at]) if draw.byte() % 2 else bytes(blob[:at] + bytes([draw.byte()]) + blob[at + 1:])
        elif op == 4:
            members[name] = draw.chunk(64)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED if draw.byte() % 8 == 0 else zipfile.ZIP_STORED, compresslevel=1) as archive:
        for name, blob in members.items():
            member = (name + ("" if draw.byte() % 16 == 0 else ".npy")).split("\0")[0]  # zipfile cuts a name at a NUL
            archive.writestr(member or "-", blob)  # and cannot write an empty one
    return out.getvalue()


@functools.cache
def _decision() -> tuple[np.ndarray, np.ndarray]:
    game = WizardGame(Rules.make(4, 3), 0)
    return observe(game, game.current)[None], game.legal_mask()[None]


def checkpoint(data: bytes) -> None:
    """A checkpoint file loaded (``load_checkpoint``), its agent built and asked for one decision."""
    draw = _structured(data)
    if draw is not None:
        data = _archive(draw)
    path = seeds.workdir() / "fuzz.npz"
    path.write_bytes(data)
    config, weights = _read(path)
    NetAgent(config, weights, seed=0, source=str(path)).act_batch(*_decision())


# -- recipe TOML: `wizard recipe`'s load and checks, before any step runs ---------------------------------------


def recipe_file(data: bytes) -> None:
    """A recipe file read and checked (``recipe.load``), beside the small recipe it may extend."""
    draw = _structured(data)
    if draw is not None:
        data = toml(mutate(json.loads(draw.choice(seeds.recipes())), draw)).encode("utf-8", "surrogatepass")
    path = seeds.workdir() / seeds.RECIPE_FOLDER / "fuzz.toml"
    path.write_bytes(data)
    with _shipped_networks_cached():
        recipe.load(path)


# -- agent specs: `--agents`, parsed and built --------------------------------------------------------------------


SPEC_PATHS = ("net.npz", "run", "baseline.npz", "missing.npz", "training", "zoo", "/dev/null", ".", "", "run/checkpoints")
SPEC_KEYS = ("play", "margin", "play-margin", "samples", "bid_samples", "rollout", "infer", "model", "over", "temp",
             "resample", "top", "x", "")
SPEC_VALUES = ("0", "1", "-1", "2", "32", "1e309", "nan", "inf", "-0", "0.5", "\u00b2", "\u0661", " 3", "1_0", "0x1",
               "9" * 30, "net", "rule", "random", "ppo", "net-v3", "net-v7", "net-bid", "net:net.npz", "bids",
               "systematic", "multinomial", "net.npz", "")


def _spec(draw: Draw) -> str:
    parts = []
    for _ in range(draw.byte() % 4):
        kind = draw.byte() % 4
        if kind == 0:
            path = draw.choice(SPEC_PATHS)
            parts.append(str(seeds.workdir() / path) if path and not path.startswith("/") else path)
        else:
            value = draw.text(12) if kind == 1 else draw.choice(SPEC_VALUES)
            parts.append(f"{draw.choice(SPEC_KEYS)}={value}")
    name = draw.choice((*registry.AGENT_NAMES, "", "nett", "PIMC", " rule"))
    return ":".join([name, *parts])


@contextlib.contextmanager
def _shipped_networks_cached() -> Iterator[None]:
    """The shipped and zoo networks read once, not at each input (a network of 4 MB is not what is fuzzed here): every
    module's ``load_checkpoint`` reads them from a cache while the block runs."""
    trusted = (PRETRAINED_DIR.resolve(), Path(__file__).resolve().parents[2] / "zoo")

    def load(path: Any) -> tuple[dict, dict]:
        resolved = Path(path).resolve()
        return _shipped(resolved) if resolved.parent in trusted else _read(path)

    with contextlib.ExitStack() as stack:
        for module in _loaders():
            stack.enter_context(mock.patch.object(module, "load_checkpoint", load))
        yield


@functools.cache
def _loaders() -> tuple[Any, ...]:
    return tuple(m for m in list(sys.modules.values()) if getattr(m, "load_checkpoint", None) is _read)


#: The loader itself, which the cache calls (this module's own ``load_checkpoint`` is patched with the others).
_read = load_checkpoint


@functools.cache
def _shipped(path: Path) -> tuple[dict, dict]:
    return _read(path)


def spec(data: bytes) -> None:
    """An agent spec parsed and its agent built (``make_agent``); a structured one names the checkpoints of the work folder."""
    draw = _structured(data)
    text = _spec(draw) if draw is not None else data.decode("utf-8", "surrogateescape")  # as argv decodes it
    with _shipped_networks_cached():
        registry.searches_games(text)
        registry.make_agent(text, seed=0)


# -- the web API's JSON bodies, at the handlers ------------------------------------------------------------------


def web(data: bytes) -> None:
    """Request bodies at the web API's handlers (``web.web``; it needs starlette, the web extra)."""
    from .web import web as run

    run(data)


@dataclass(frozen=True)
class Target:
    """One parser under fuzzing: its call on bytes, the errors its contract allows, the modules whose coverage counts."""

    run: Callable[[bytes], None]
    errors: tuple[type[BaseException], ...]
    modules: tuple[str, ...]
    what: str


#: The modules of the project each target instruments for coverage (none of them compiled by numba).
_REPLAY = ("wizard_env.engine.replay", "wizard_env.engine.cards", "wizard_env.engine.rules", "wizard_env.util.checks")
_CHECKPOINT = ("wizard_env.agents.checkpoint", "wizard_env.agents.ppo_agent", "wizard_env.util.files")

TARGETS: dict[str, Target] = {
    "replay": Target(replay, (ReplayError,), (*_REPLAY, "wizard_env.render.replay_text"),
                     "replay JSONL: `wizard replay FILE --check` (parse, re-play, print)"),
    "checkpoint": Target(checkpoint, (ValueError,), (*_CHECKPOINT, "wizard_env.engine.rules"),
                         "checkpoint .npz: `load_checkpoint`, then the NetAgent built on it and one decision"),
    "recipe": Target(recipe_file, (ValueError,), ("wizard_env.training.recipes.recipe", "wizard_env.training.values.values_config",
                                                  "wizard_env.training.values.fit_values", "wizard_env.training.values.margins",
                                                  "wizard_env.training.values.opponent_pool",
                                                  "wizard_env.training.evaluation.eval_suite", "wizard_env.util.files"),
                     "recipe TOML: `recipe.load` (every check `wizard recipe` makes before its first step)"),
    "spec": Target(spec, (ValueError,), ("wizard_env.agents.registry", "wizard_env.agents.pimc_agent", "wizard_env.agents.zoo",
                                         *_CHECKPOINT),
                   "agent specs: `make_agent` (parse_spec, then the agent built)"),
    "web": Target(web, (RequestError,), ("wizard_env.web.app", "wizard_env.web.tables", "wizard_env.web.library",
                                         "wizard_env.web.limits", *_REPLAY),
                  "web API JSON bodies: POST /api/tables, /api/tables/ID/move and /api/upload at their handlers"),
}


def broken(name: str, data: bytes) -> BaseException | None:
    """None when target ``name`` keeps its contract on ``data``, else the exception it broke it with."""
    target = TARGETS[name]
    try:
        target.run(data)
    except target.errors:
        return None
    except Exception as err:  # noqa: BLE001  (what the fuzzer looks for)
        return err
    return None
