"""One target under atheris (libFuzzer), as ``python -m benchmarks.fuzz`` starts it: ``worker TARGET OUT [libFuzzer args]``.

The target's modules are instrumented for coverage. An input that breaks the contract does not stop the run: the
exception is counted by its kind (type and the innermost frame of the project), the first input of each kind is
kept in ``OUT`` as ``crash-KIND.bin``, and ``OUT/found.json`` is rewritten at each new kind. libFuzzer still stops
on a hang (``-timeout``) or on running out of memory (``-rss_limit_mb``), and says so.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import sys
import traceback
import types
from pathlib import Path


def kind(err: BaseException) -> str:
    """An exception's kind: its type and the innermost frame in the project's code (file:line)."""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if "/benchmarks/fuzz/" not in f.filename]
    inner = next((f for f in reversed(frames) if "site-packages" not in f.filename or "/wizard_env/" in f.filename), None)
    where = f"{Path(inner.filename).name}:{inner.lineno}" if inner else "?"
    return f"{type(err).__name__}@{where}"


def main() -> None:
    import atheris  # the fuzz extra; kind() is used without it

    name, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    from benchmarks.fuzz import targets

    for module in targets.TARGETS[name].modules:  # by function: atheris instruments whole packages or nothing
        _instrument(module)
    found: dict[str, dict] = {}

    def one(data: bytes) -> None:
        err = targets.broken(name, data)
        if err is None:
            return
        key = kind(err)
        entry = found.setdefault(key, {"count": 0, "message": f"{type(err).__name__}: {str(err)[:300]}"})
        entry["count"] += 1
        if entry["count"] == 1:
            entry["input"] = f"crash-{hashlib.sha1(key.encode()).hexdigest()[:12]}.bin"
            (out / entry["input"]).write_bytes(data)
            entry["traceback"] = "".join(traceback.format_exception(err))[-3000:]
            print(f"\nUNCAUGHT {key}: {entry['message']}", file=sys.stderr, flush=True)
        (out / "found.json").write_text(json.dumps(found, indent=1))  # each time: the process ends without warning

    (out / "found.json").write_text("{}")
    atheris.Setup([sys.argv[0], *sys.argv[3:]], one)
    atheris.Fuzz()


def _instrument(module_name: str) -> None:
    """Instrument every function and method of an imported module for coverage, in place (not the numba kernels of
    other modules, which compile from the plain bytecode)."""
    import atheris

    module = importlib.import_module(module_name)
    for attr, value in vars(module).items():
        if isinstance(value, types.FunctionType) and value.__module__ == module_name:
            atheris.instrument_func(value)
        elif isinstance(value, type) and value.__module__ == module_name:
            for method_name, method in vars(value).items():
                function = method.__func__ if isinstance(method, (classmethod, staticmethod)) else method
                if isinstance(function, types.FunctionType):
                    atheris.instrument_func(function)


if __name__ == "__main__":
    main()
