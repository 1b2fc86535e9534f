"""``wizard compare-arrays``: whether a rerun wrote the same arrays as the run before it, two ``.npz`` files or two
folders, array for array.

    wizard compare-arrays RERUN/steps/data/data RUN/steps/data/data         # every data chunk of a step
    wizard compare-arrays RERUN/steps/lift/checkpoints/iter-3.npz zoo/wizard-v13.npz --except config

Given two folders, every ``.npz`` file under the first (by its path relative to it) is compared with the file at the
same path under the second; a file the second lacks counts as different. Two arrays are the same when their names,
shapes, dtypes and values are: NaN equals NaN (a search-valued data chunk leaves the actions it did not value NaN).
``--except NAME`` leaves an array out, as ``config``, where a checkpoint records the paths its run read.

Prints each file that differs (which arrays, and the largest difference) and ``N of M files equal array for array``;
exit status 0 when every file is equal, 1 when one is not, 2 on bad input (one line naming it).
"""

from __future__ import annotations

import argparse
import zipfile
from pathlib import Path

import numpy as np

from wizard_env.util import options
from wizard_env.util.files import DAMAGED_ARCHIVE, damaged, not_a_file

VARIANT_OPTIONS = False
HELP = "whether a rerun wrote the same arrays: two .npz files, or two folders file for file, array for array"
DESCRIPTION = (
    "Compare two .npz files, or every .npz file under a folder with the file at the same path under another, array "
    "for array (names, shapes, dtypes, values; NaN equals NaN). Exit 0 when all are equal, 1 when one is not."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``wizard compare-arrays``."""
    parser.add_argument("first", type=options.path_type, metavar="FIRST", help="a .npz file, or a folder of them (the rerun)")
    parser.add_argument("second", type=options.path_type, metavar="SECOND", help="the same for the run it should equal")
    parser.add_argument("--except", type=options.text_type, dest="leave_out", action="append", default=[], metavar="NAME",
                        help="an array left out of the comparison (repeatable), as config")


def arrays(path: Path, leave_out: set[str]) -> dict[str, np.ndarray]:
    """The arrays of the ``.npz`` file ``path`` but those left out; ValueError naming it if it is not one or is damaged."""
    problem = not_a_file(path)
    if problem is None and not zipfile.is_zipfile(path):
        problem = "is not a .npz file (numpy's zip of arrays)"
    if problem is not None:
        raise ValueError(f"{path}: {problem}")
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files if name not in leave_out}
    except DAMAGED_ARCHIVE as err:
        raise damaged(str(path), err) from None


def differences(first: Path, second: Path, leave_out: set[str]) -> list[str]:
    """What differs between the arrays of two ``.npz`` files, one line each; empty when they are the same. A missing
    ``second`` is a difference; a file that is not a ``.npz``, or a damaged one, is bad input (ValueError, naming it)."""
    if not second.exists() and not second.is_symlink():
        return [f"{second}: no such file"]
    a, b = arrays(first, leave_out), arrays(second, leave_out)
    found = [f"{name}: only in {first}" for name in sorted(a.keys() - b.keys())]
    found += [f"{name}: only in {second}" for name in sorted(b.keys() - a.keys())]
    for name in sorted(a.keys() & b.keys()):
        x, y = a[name], b[name]
        if x.shape != y.shape or x.dtype != y.dtype:
            found.append(f"{name}: {x.dtype}{list(x.shape)} against {y.dtype}{list(y.shape)}")
            continue
        floats = x.dtype.kind in "fc"
        unequal = (x != y) & ~(np.isnan(x) & np.isnan(y)) if floats else x != y
        if unequal.any():
            largest = f", largest difference {np.abs(x - y)[unequal].max():.3g}" if floats else ""
            found.append(f"{name}: {int(unequal.sum())} of {x.size} values differ{largest}")
    return found


def pairs(first: Path, second: Path) -> list[tuple[Path, Path]]:
    """The files to compare: the two given, or each ``.npz`` under the folder ``first`` and its place under ``second``."""
    if not first.exists():
        raise ValueError(f"{first}: no such file or folder")
    if not first.is_dir():
        return [(first, second)]
    if not second.is_dir():
        raise ValueError(f"{first} is a folder and {second} is not: give two files or two folders")
    found = sorted(first.rglob("*.npz"))
    if not found:
        raise ValueError(f"{first}: no .npz file under it")
    return [(path, second / path.relative_to(first)) for path in found]


def run(args: argparse.Namespace) -> int:
    """Compare and print; the exit status says whether every file was the same (bad input: ValueError, exit 2)."""
    compared, leave_out = pairs(Path(args.first), Path(args.second)), set(args.leave_out)
    lines, same = [], 0
    for first, second in compared:  # every file read before anything is printed: bad input prints one line alone
        found = differences(first, second, leave_out)
        same += not found
        lines += [f"DIFFERENT {first.name}: {line}" for line in found]
    for line in lines:
        print(line)
    print(f"{same} of {len(compared)} files equal array for array")
    return 0 if same == len(compared) else 1
