"""Reading a checkpoint file safely, and checking its entries against its config (no pickle, no torch).

``read_archive`` opens the ``.npz`` (a zip of ``.npy`` members) itself: it reads the small ``config``
member first, refuses a member it does not expect for that config, and reads each member's ``.npy``
header before its data, so an absurd declared size (a zip bomb, a header claiming terabytes) is
refused before anything is decompressed. ``check_checkpoint`` checks the config's entries and that
the weights are the network the config describes (names, shapes, dtype, finite values), naming the
entry at fault. Both raise ValueError; the caller names the file.
"""

from __future__ import annotations

import json
import math
import os
import tokenize
import zipfile
from pathlib import Path, PurePath
from typing import Mapping

import numpy as np

from wizard_env.util.checks import short_repr
from wizard_env.engine.game import NUM_ACTIONS
from wizard_env.engine.rules import MAX_PLAYERS, MIN_PLAYERS, Rules

from .zoo import BY_FILE

#: The most bytes one member may declare (a 4096-wide layer on the observation is about 27 MB).
MAX_MEMBER_BYTES = 256 * 2**20
#: The most bytes the config member may declare, and all members together.
MAX_CONFIG_BYTES, MAX_TOTAL_BYTES = 2**20, 2**30
#: The most hidden layers, and the widest one, a config may describe.
MAX_LAYERS, MAX_WIDTH = 16, 8192
_POLICY, _VALUE = "mlp_extractor.policy_net", "mlp_extractor.value_net"


def weight_names(hidden: list[int]) -> tuple[list[str], list[str]]:
    """(required, optional) weight names of MaskablePPO's MlpPolicy with these hidden layers: actor, critic."""
    layers = [f"{2 * i}" for i in range(len(hidden))]
    actor = [f"{_POLICY}.{i}.{p}" for i in layers for p in ("weight", "bias")] + ["action_net.weight", "action_net.bias"]
    critic = [f"{_VALUE}.{i}.{p}" for i in layers for p in ("weight", "bias")] + ["value_net.weight", "value_net.bias"]
    return actor, critic


#: The bytes of a ``.npy`` header before an entry's data (numpy pads the header of the arrays written here to 128).
NPY_HEADER_BYTES = 128


def check_sizes(entries: list[tuple[str, int]], whole: str = "its entries") -> None:
    """ValueError unless entries of these unpacked sizes (each named as a message names it) fit in a checkpoint:
    the limits the loader applies to a file's entries, and the trainers to the network they will save."""
    for what, size in entries:
        if size > MAX_MEMBER_BYTES:
            raise ValueError(f"{what} would unpack to {size:,} bytes, more than the {MAX_MEMBER_BYTES:,} a checkpoint entry may hold")
    total = sum(size for _, size in entries)
    if total > MAX_TOTAL_BYTES:
        raise ValueError(f"{whole} would unpack to {total:,} bytes, more than the {MAX_TOTAL_BYTES:,} a checkpoint may hold")


def check_hidden(hidden: object, inputs: int | None = None, critic: bool = False, name: str = "config entry 'hidden'") -> list[int]:
    """``hidden`` as a list of positive ints, or ValueError naming it as ``name`` unless a checkpoint may hold the network.

    Without ``inputs`` (the width of the network's input) the weights every such network has are checked: those
    between hidden layers and the action layer. With it, every weight of the policy, and with ``critic`` of the
    value net too (as ``wizard train`` saves it), so a trainer refuses before any work a network it could not save.
    """
    if not isinstance(hidden, list) or len(hidden) > MAX_LAYERS or not all(
        type(h) is int and 1 <= h <= MAX_WIDTH for h in hidden
    ):
        raise ValueError(f"{name} must be a list of at most {MAX_LAYERS} layer widths "
                         f"(integers 1 to {MAX_WIDTH}), not {short_repr(hidden)}")
    nets = [[*hidden, NUM_ACTIONS]] if inputs is None else [[inputs, *hidden, NUM_ACTIONS]] + [[inputs, *hidden, 1]] * critic
    entries = []
    for widths in nets:
        for a, b in zip(widths, widths[1:]):
            entries += [(f"a {b}x{a} weight", 4 * a * b + NPY_HEADER_BYTES), (f"a bias of {b}", 4 * b + NPY_HEADER_BYTES)]
    try:
        check_sizes(entries, "the network's weights")
    except ValueError as e:
        raise ValueError(f"{name} {short_repr(hidden)}: {e}") from None
    return hidden


def read_archive(path: str | os.PathLike) -> tuple[object, dict[str, np.ndarray]]:
    """The parsed config and the arrays of a checkpoint file; ValueError (or zipfile/OS errors) if it is not one."""
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
        names = [info.filename.removesuffix(".npy") for info in infos]
        if len(set(names)) != len(names):
            raise ValueError("the archive holds two entries of one name")
        members = dict(zip(names, infos))
        # sizes as the zip declares them, before anything is decompressed
        if "config" in members and members["config"].file_size > MAX_CONFIG_BYTES:
            raise ValueError(f"entry 'config' would unpack to {members['config'].file_size:,} bytes, more than the "
                             f"{MAX_CONFIG_BYTES:,} a checkpoint's config may hold")
        check_sizes([(f"entry {name!r}", info.file_size) for name, info in members.items()])
        if "config" not in members:
            raise ValueError("no 'config' entry")
        try:
            config = json.loads(read_member(archive, members["config"], np.uint8).tobytes().decode())
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ValueError(f"its config is not valid JSON ({e})") from None
        except RecursionError:
            raise ValueError("its config nests too deeply to be a checkpoint config") from None
        expected = None
        if isinstance(config, dict) and "hidden" in config:
            actor, critic = weight_names(check_hidden(config["hidden"]))
            expected = {"config", *actor, *critic}
        for name in members:
            if expected is not None and name not in expected:
                raise ValueError(f"unexpected entry {name!r} (not a weight of the network its config describes)")
        arrays = {name: read_member(archive, info, np.float32) for name, info in members.items() if name != "config"}
    return config, arrays


def read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, dtype: type | tuple[type, ...]) -> np.ndarray:
    """One ``.npy`` member of ``dtype`` (or of one of several), never unpickled; its header's size is checked against
    the member's before the data is read. ValueError naming the entry, or the zip's errors for a damaged archive."""
    name = info.filename.removesuffix(".npy")
    dtypes = [np.dtype(d) for d in (dtype if isinstance(dtype, tuple) else (dtype,))]
    if not info.filename.endswith(".npy"):
        raise ValueError(f"entry {info.filename!r} is not a .npy array")
    with archive.open(info) as f:
        version = np.lib.format.read_magic(f)
        read_header = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}.get(version)
        if read_header is None:
            raise ValueError(f"entry {name!r} is a .npy of unknown version {version}")
        try:
            shape, fortran, found = read_header(f)
        except (ValueError, SyntaxError, TypeError, tokenize.TokenError) as e:  # numpy parses the header as Python
            raise ValueError(f"entry {name!r} has a damaged .npy header ({type(e).__name__}: {str(e)[:80]})") from None
        if found not in dtypes:
            raise ValueError(f"entry {name!r} holds {found}, expected {' or '.join(map(str, dtypes))}")
        nbytes = math.prod(shape) * found.itemsize
        if nbytes > info.file_size:
            raise ValueError(f"entry {name!r} declares {nbytes:,} bytes of data in a member of {info.file_size:,}")
        data = f.read(info.file_size)
    if len(data) != nbytes:
        raise ValueError(f"entry {name!r} holds {len(data):,} bytes of data, its header says {nbytes:,}")
    return np.frombuffer(bytearray(data), dtype=found).reshape(shape, order="F" if fortran else "C")  # writable, as torch wants


def check_checkpoint(config: Mapping, weights: Mapping[str, np.ndarray]) -> None:
    """ValueError naming the first config entry or weight that is not what the config describes."""
    hidden = check_hidden(config.get("hidden", []))
    for key in ("advice", "features"):
        if key in config and not isinstance(config[key], bool):
            raise ValueError(f"config entry {key!r} must be true or false, not {short_repr(config[key])}")
    for key in ("num_timesteps", "obs_size"):
        if key in config and (type(config[key]) is not int or config[key] < 0):
            raise ValueError(f"config entry {key!r} must be a non-negative integer, not {short_repr(config[key])}")
    if "num_actions" in config and config["num_actions"] != NUM_ACTIONS:
        raise ValueError(f"config entry 'num_actions' is {short_repr(config['num_actions'])}, this code has {NUM_ACTIONS} actions")
    trained_players(config)
    _check_weights(hidden, weights)


def _check_weights(hidden: list[int], weights: Mapping[str, np.ndarray]) -> None:
    actor, critic = weight_names(hidden)
    for name in weights:
        if name not in actor and name not in critic:
            raise ValueError(f"unexpected entry {short_repr(name)} (not a weight of the network its config describes)")
    present = [n for n in critic if n in weights]
    if present and len(present) != len(critic):
        raise ValueError(f"entry {sorted(set(critic) - set(present))[0]!r} is missing (the value net is incomplete)")
    for names in (actor, present):
        width = None  # the input width: checked against the observation by PPOAgent
        for i in range(0, len(names), 2):
            w, b = weights.get(names[i]), weights.get(names[i + 1])
            if w is None or b is None:
                raise ValueError(f"entry {names[i] if w is None else names[i + 1]!r} is missing")
            for name, value in ((names[i], w), (names[i + 1], b)):
                value = np.asarray(value)
                if value.dtype.kind not in "fiu":
                    raise ValueError(f"entry {name!r} holds {value.dtype}, expected real numbers")
                if not np.isfinite(value).all():
                    raise ValueError(f"entry {name!r} holds values that are not finite (NaN or infinity)")
            rows = hidden[i // 2] if i // 2 < len(hidden) else (NUM_ACTIONS if names is actor else 1)
            expected = (rows, width if width is not None else (np.shape(w) + (0, 0))[1])
            if np.shape(w) != expected or np.shape(b) != (rows,):
                raise ValueError(f"entry {names[i]!r} has shape {np.shape(w)} and its bias {np.shape(b)}, "
                                 f"expected {expected} and ({rows},) for hidden {hidden}")
            width = rows


def trained_players(config: Mapping) -> tuple[int, ...] | None:
    """Player counts a checkpoint was trained or evaluated on (train ``mix`` and ``rules``); None if it does not say."""
    counts: set[int] = set()
    rules = config.get("rules")
    if rules is not None:
        try:
            counts.add(Rules.make(**rules).num_players)
        except (TypeError, ValueError) as e:
            raise ValueError(f"config entry 'rules' is not a valid rule set ({str(e)[:120]})") from None
    train = config.get("train")
    if train is not None and not isinstance(train, dict):
        raise ValueError(f"config entry 'train' must be an object, not {short_repr(train)}")
    mix = (train or {}).get("mix")
    if mix is not None:
        if not isinstance(mix, list) or not mix or not all(type(n) is int and MIN_PLAYERS <= n <= MAX_PLAYERS for n in mix):
            raise ValueError(f"config entry 'train.mix' must be a list of player counts {MIN_PLAYERS} to {MAX_PLAYERS}, "
                             f"not {short_repr(mix)}")
        counts.update(mix)
    return tuple(sorted(counts)) or None


#: The folders a network of the zoo is found in, by name (``agents/pretrained``, a clone's ``zoo``).
_ZOO_FOLDERS = ("pretrained", "zoo")


def zoo_name(source: str) -> str | None:
    """The agent name (``net-v9``) of a network of the zoo that ``source`` is (a file of the manifest in a
    ``pretrained`` or ``zoo`` folder), else None."""
    path = PurePath(source)
    return BY_FILE[path.name] if path.name in BY_FILE and path.parent.name in _ZOO_FOLDERS else None


def portable_path(source: str, run: str | os.PathLike) -> str:
    """A file or folder a run read (``source``, as given), as its checkpoints record it, so that they hold nothing of
    the machine: the agent name of a network of the zoo, else the path relative to the run folder ``run``."""
    if not source:
        return source
    name = zoo_name(source)
    if name is not None:
        return name
    try:
        return Path(os.path.relpath(os.path.abspath(source), os.path.abspath(run))).as_posix()
    except ValueError:  # another drive (Windows): no relative path; its name alone
        return PurePath(source).name


def portable_sources(config: Mapping, run: str | os.PathLike | None = None) -> dict:
    """``config`` with the sources its ``train`` entry records (``start``, ``data_from``, and the checkpoint paths of
    ``pool``) written so that they name nothing of the machine it was trained on: a network of the zoo (a file of
    the manifest in a ``pretrained`` or ``zoo`` folder) by its agent name (``net-v9``), another path relative to the
    run folder ``run`` (default: the folder above ``steps/`` in an absolute source, where a recipe keeps its steps;
    without ``run`` a relative source is kept).
    ``zoo_tool portable`` and ``save_checkpoint(..., run=out)`` rewrite a file's config with it (the trainers write
    portable sources in the first place, through ``portable_path``); ValueError for an absolute source with no run
    folder to write it relative to."""
    train = config.get("train")
    if not isinstance(train, dict):
        return dict(config)
    given = run is not None
    sources = [s for s in [train.get("start"), *(train.get("data_from") or [])] if isinstance(s, str)]
    if run is None:
        run = next((PurePath(*p.parts[:p.parts.index("steps")]) for p in map(PurePath, sources)
                    if p.is_absolute() and "steps" in p.parts), None)

    def portable(source: str) -> str:
        name = zoo_name(source)
        if name is not None:
            return name
        if not PurePath(source).is_absolute() and not given:
            return source  # relative already (to where the command ran)
        if run is None:
            raise ValueError(f"source {source} is an absolute path and no run folder was given to write it relative to")
        return portable_path(source, run)

    new = dict(train)
    if isinstance(train.get("start"), str) and train["start"]:
        new["start"] = portable(train["start"])
    if isinstance(train.get("data_from"), list):
        new["data_from"] = [portable(s) if isinstance(s, str) else s for s in train["data_from"]]
    if isinstance(train.get("pool"), list):
        new["pool"] = [portable(s) if isinstance(s, str) and (s.endswith(".npz") or PurePath(s).is_absolute()) else s
                       for s in train["pool"]]
    return {**config, "train": new}
